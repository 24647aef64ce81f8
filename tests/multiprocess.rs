//! Several server processes on one SQLite file hammer one counter, with cancellations in between; then
//! every number is checked: none twice, sequences exactly 1..N, every gap explained in the audit log,
//! and the audit chains intact. (Within one process the queue serializes a counter; across processes it
//! is SQLite's write lock and the counter's version check.)

use std::collections::HashSet;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use docnum::server::db::Db;
use serde_json::{json, Value};

struct Server(Child, String);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn start(db_url: &str) -> Server {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_docnum"))
        .args(["serve", "--addr", &format!("127.0.0.1:{port}")])
        .env("DATABASE_URL", db_url)
        .env("BOOTSTRAP_ADMIN_PASSWORD", "multi-process-admin")
        .env("CLOCK_START", "2025-06-15T03:00:00Z")
        .env("RATE_LIMIT_TOKEN_PER_MIN", "0")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .expect("start docnum");
    Server(child, format!("http://127.0.0.1:{port}"))
}

async fn wait_healthy(client: &reqwest::Client, base: &str) {
    for _ in 0..300 {
        if let Ok(r) = client.get(format!("{base}/health")).send().await {
            if r.status().is_success() {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{base} did not become healthy");
}

#[tokio::test]
async fn two_processes_on_one_sqlite_file_never_issue_a_number_twice() {
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite://{}", dir.path().join("shared.db").display());
    let client = reqwest::Client::new();
    // the first process creates and seeds the database; the second joins it
    let a = start(&db_url);
    wait_healthy(&client, &a.1).await;
    let b = start(&db_url);
    wait_healthy(&client, &b.1).await;

    let db = Db::connect(&db_url).await.unwrap();
    let admin = docnum::server::auth::store::credentials_by_username(&db, "admin").await.unwrap().unwrap().0;
    let (_, token) = docnum::server::auth::store::create_token(&db, "hammer", &[], admin, 0).await.unwrap();
    let body = json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "originatorCode": "คคง.", "recipientCode": "สคฉ.3" });

    let per_process = 300;
    let tasks = (0..per_process * 2).map(|i| {
        let base = if i % 2 == 0 { a.1.clone() } else { b.1.clone() };
        let (client, token, body) = (client.clone(), token.clone(), body.clone());
        tokio::spawn(async move {
            let r: Value = client.post(format!("{base}/api/v1/document-numbering/reserve")).bearer_auth(&token).json(&body).send().await.unwrap().json().await.unwrap();
            if i % 10 == 0 {
                let c = client.post(format!("{base}/api/v1/document-numbering/cancel")).bearer_auth(&token).json(&json!({ "token": r["token"] })).send().await.unwrap();
                assert!(c.status().is_success());
            }
            r
        })
    });
    let results: Vec<Value> = futures::future::join_all(tasks).await.into_iter().map(|r| r.unwrap()).collect();
    let numbers: HashSet<&str> = results.iter().map(|r| r["documentNumber"].as_str().expect("a number")).collect();
    let mut seqs: Vec<i64> = results.iter().map(|r| r["sequence"].as_i64().unwrap()).collect();
    seqs.sort();
    assert_eq!(numbers.len(), per_process * 2, "no number twice");
    assert_eq!(seqs, (1..=(per_process as i64 * 2)).collect::<Vec<_>>());

    assert!(docnum::server::audit::unexplained_gaps(&db).await.unwrap().is_empty());
    let report = docnum::server::audit::verify(&db).await.unwrap();
    assert!(report.ok, "{:?}", report.problems);
    use sqlx::Row;
    let cancelled: i64 = sqlx::query("SELECT COUNT(*) FROM audit_log WHERE operation = 'CANCEL'").fetch_one(&db.pool).await.unwrap().get(0);
    assert_eq!(cancelled, (per_process * 2 / 10) as i64);
}
