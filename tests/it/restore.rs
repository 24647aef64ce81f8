//! The restore drill (issue 36, SPEC §7): a backup taken while the service serves, numbers issued after it, the
//! database put back from the backup. The counter refuses to issue (503 `COUNTER_BEHIND_WITNESS`, an error-log row,
//! the metric) until a super admin resumes it past the witnessed head; then it goes on after the last number issued
//! before the restore — none issued twice — and `docnum check` finds the passed-over range explained.

use std::process::Command;

use reqwest::StatusCode;
use serde_json::{json, Value};
use sqlx::Row;

use crate::support::DocnumServer;
use docnum::server::db::Db;

fn docnum(url: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_docnum")).args(args).env("DATABASE_URL", url).env("RUST_LOG", "warn").output().expect("run docnum")
}

async fn reserve(client: &reqwest::Client, base: &str, token: &str) -> (StatusCode, Value) {
    let body = crate::common::letter();
    let r = client.post(format!("{base}/api/v1/document-numbering/reserve")).bearer_auth(token).json(&body).send().await.unwrap();
    (r.status(), r.json().await.unwrap())
}

#[tokio::test]
async fn a_restored_sqlite_database_issues_nothing_twice() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("restored.db");
    let url = format!("sqlite://{}", file.display());
    let client = reqwest::Client::builder().timeout(crate::common::REQUEST_TIMEOUT).cookie_store(true).build().unwrap();
    let mut server = DocnumServer::start(&url, &[]);
    server.wait_healthy(&client).await;
    let db = Db::connect(&url).await.unwrap();
    let admin = docnum::server::auth::store::credentials_by_username(&db, "admin").await.unwrap().unwrap().0;
    let (_, token) = docnum::server::auth::system::create_token(&db, "drill", &[], admin, 0).await.unwrap();

    let mut issued = Vec::new();
    for _ in 0..3 {
        let (s, r) = reserve(&client, &server.base, &token).await;
        assert_eq!(s, StatusCode::OK, "{r}");
        issued.push(r["documentNumber"].as_str().unwrap().to_string());
    }
    // the backup, taken while the server serves
    let backup = dir.path().join("backup.db");
    let out = docnum(&url, &["backup", backup.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let again = docnum(&url, &["backup", backup.to_str().unwrap()]);
    assert!(!again.status.success(), "a backup never overwrites a file");
    for _ in 0..5 {
        let (_, r) = reserve(&client, &server.base, &token).await;
        issued.push(r["documentNumber"].as_str().unwrap().to_string());
    }
    assert_eq!(issued.len(), 8);

    // the disaster: the database file put back from the backup (its witness stays where it was)
    server.kill();
    drop(db);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
    std::fs::copy(&backup, &file).unwrap();
    let mut server = DocnumServer::start(&url, &[]);
    server.wait_healthy(&client).await;
    let db = Db::connect(&url).await.unwrap();

    let (s, e) = reserve(&client, &server.base, &token).await;
    crate::common::assert_error(s, &e, 503, "COUNTER_BEHIND_WITNESS");
    let (s, e) = reserve(&client, &server.base, &token).await;
    assert_eq!((s, &e["code"]), (StatusCode::SERVICE_UNAVAILABLE, &json!("COUNTER_BEHIND_WITNESS")), "still refused: {e}");
    let on_record: i64 = sqlx::query("SELECT COUNT(*) FROM document_numbers").fetch_one(&db.pool).await.unwrap().get(0);
    assert_eq!(on_record, 3, "nothing issued from the restored counter");
    let logged: i64 =
        sqlx::query("SELECT COUNT(*) FROM error_log WHERE error_type = 'COUNTER_BEHIND_WITNESS'").fetch_one(&db.pool).await.unwrap().get(0);
    assert!(logged >= 1, "an error-log row");
    let metrics = client.get(format!("{}/metrics", server.base)).send().await.unwrap().text().await.unwrap();
    let refusals: f64 =
        metrics.lines().find_map(|l| l.strip_prefix("docnum_counter_behind_witness_total ")).and_then(|v| v.trim().parse().ok()).expect("the metric");
    assert!(refusals >= 2.0, "{refusals}");

    // a super admin resumes it (an API token, or a staff member, may not)
    let counter_id: i64 = sqlx::query("SELECT id FROM counters").fetch_one(&db.pool).await.unwrap().get(0);
    let resume = format!("{}/api/v1/document-numbering/counters/{counter_id}/resume-past-witness", server.base);
    let body = json!({ "reason": "restored from the backup of this morning" });
    let r = client.post(&resume).bearer_auth(&token).json(&body).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let login = json!({ "username": "admin", "password": "test-admin-password" });
    let r = client.post(format!("{}/api/v1/auth/login", server.base)).json(&login).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = client.post(&resume).header("Origin", &server.base).json(&body).send().await.unwrap();
    let status = r.status();
    let resumed: Value = r.json().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{resumed}");
    assert_eq!((&resumed["previousLastNumber"], &resumed["lastNumber"], &resumed["skipped"]), (&json!(3), &json!(8), &json!(5)));
    let r = client.post(&resume).header("Origin", &server.base).json(&body).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::CONFLICT, "a counter no longer behind is not resumed again");

    // it goes on after the last number issued before the restore: none of the five is issued again
    let (s, r) = reserve(&client, &server.base, &token).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["sequence"], 9);
    assert!(!issued.contains(&r["documentNumber"].as_str().unwrap().to_string()));
    let state: String =
        sqlx::query("SELECT state FROM workflow_instances WHERE workflow_code = 'WITNESS_RESUME'").fetch_one(&db.pool).await.unwrap().get(0);
    assert_eq!(state, "RESUMED");

    // and the whole database checks out: the passed-over range is explained
    let out = docnum(&url, &["check"]);
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    server.terminate().await;
    // a restart keeps the resumed head: the counter issues on
    let server = DocnumServer::start(&url, &[]);
    server.wait_healthy(&client).await;
    let (s, r) = reserve(&client, &server.base, &token).await;
    assert_eq!((s, &r["sequence"]), (StatusCode::OK, &json!(10)), "{r}");
}
