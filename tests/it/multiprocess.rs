//! Several server processes on one SQLite file hammer one counter, with cancellations in between; then
//! every number is checked: none twice, sequences exactly 1..N, every gap explained in the audit log,
//! and the audit chains intact. Without Redis the processes meet at SQLite's write lock and the counter's
//! version check; with Redis they take turns on the Redlock first; with Redis and a cluster secret the one
//! holding the lock serves the other's batches too (forwarding).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use crate::support::{DocnumServer, RedisServer};
use docnum::server::db::Db;
use serde_json::{json, Value};
use sqlx::Row;

/// A reserve on `base` with `token`, its answer as JSON.
async fn reserve(client: &reqwest::Client, base: &str, token: &str, body: &Value) -> Result<Value, reqwest::Error> {
    client.post(format!("{base}/api/v1/document-numbering/reserve")).bearer_auth(token).json(body).send().await?.json().await
}

async fn hammer(extra_env: &[(&str, String)]) -> (tempfile::TempDir, Db, [DocnumServer; 2]) {
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite://{}", dir.path().join("shared.db").display());
    let client = reqwest::Client::new();
    // the first process creates and seeds the database; the second joins it
    let a = DocnumServer::start(&db_url, extra_env);
    a.wait_healthy(&client).await;
    let b = DocnumServer::start(&db_url, extra_env);
    b.wait_healthy(&client).await;

    let db = Db::connect(&db_url).await.unwrap();
    let admin = docnum::server::auth::store::credentials_by_username(&db, "admin").await.unwrap().unwrap().0;
    let (_, token) = docnum::server::auth::system::create_token(&db, "hammer", &[], admin, 0).await.unwrap();
    let body = json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "originatorCode": "คคง.", "recipientCode": "สคฉ.3" });

    let per_process = 300;
    let tasks = (0..per_process * 2).map(|i| {
        let base = if i % 2 == 0 { a.base.clone() } else { b.base.clone() };
        let (client, token, body) = (client.clone(), token.clone(), body.clone());
        tokio::spawn(async move {
            let r = reserve(&client, &base, &token, &body).await.unwrap();
            if i % 10 == 0 {
                let c = client
                    .post(format!("{base}/api/v1/document-numbering/cancel"))
                    .bearer_auth(&token)
                    .json(&json!({ "token": r["token"] }))
                    .send()
                    .await
                    .unwrap();
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
    let cancelled: i64 = sqlx::query("SELECT COUNT(*) FROM audit_log WHERE operation = 'CANCEL'").fetch_one(&db.pool).await.unwrap().get(0);
    assert_eq!(cancelled, (per_process * 2 / 10) as i64);
    (dir, db, [a, b])
}

#[tokio::test]
async fn two_processes_on_one_sqlite_file_never_issue_a_number_twice() {
    let (_dir, _db, _servers) = hammer(&[]).await;
}

#[tokio::test]
async fn two_processes_taking_turns_through_redis_never_issue_a_number_twice() {
    let redis = RedisServer::start().await;
    let (_dir, db, _servers) = hammer(&[("REDIS_URLS", redis.url()), ("LOCK_RETRY_BASE_MS", "5".into())]).await;
    let fallback: i64 = sqlx::query("SELECT COUNT(*) FROM audit_log WHERE fallback_used = 'DB_LOCK'").fetch_one(&db.pool).await.unwrap().get(0);
    assert_eq!(fallback, 0, "contention between instances waited for the lock; it never fell back");
}

/// `docnum_forwarded_jobs_total{outcome=…}` summed over the processes.
async fn forwarded(servers: &[DocnumServer], outcome: &str) -> f64 {
    let mut total = 0.0;
    for s in servers {
        total += s.forwarded_jobs(outcome).await;
    }
    total
}

#[tokio::test]
async fn two_processes_forwarding_to_the_lock_holder_never_issue_a_number_twice() {
    let redis = RedisServer::start().await;
    let (_dir, db, servers) = hammer(&[("REDIS_URLS", redis.url()), ("CLUSTER_SECRET", "a-test-cluster-secret".into())]).await;
    let answered = forwarded(&servers, "answered").await;
    assert!(answered > 0.0, "one process sent batches to the other");
    assert_eq!(forwarded(&servers, "received").await, answered, "every job sent was received and answered");
    assert_eq!(forwarded(&servers, "unanswered").await, 0.0);
    let fallback: i64 = sqlx::query("SELECT COUNT(*) FROM audit_log WHERE fallback_used = 'DB_LOCK'").fetch_one(&db.pool).await.unwrap().get(0);
    assert_eq!(fallback, 0);
}

/// SQLite's commits are durable through the service's own VFS (`db::wal_writes`, which holds a commit's WAL frames
/// and writes them in a few calls): a server killed with `kill -9` in the middle of load has on record every number
/// it answered, the audit chains intact and no gap unexplained, and a new process serves on from the same file.
#[tokio::test]
async fn a_sqlite_server_killed_under_load_has_every_number_it_answered_on_record() {
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite://{}", dir.path().join("killed.db").display());
    let client = reqwest::Client::builder().timeout(crate::common::REQUEST_TIMEOUT).build().unwrap();
    let mut server = DocnumServer::start(&db_url, &[]);
    server.wait_healthy(&client).await;
    let db = Db::connect(&db_url).await.unwrap();
    let admin = docnum::server::auth::store::credentials_by_username(&db, "admin").await.unwrap().unwrap().0;
    let (_, token) = docnum::server::auth::system::create_token(&db, "killed", &[], admin, 0).await.unwrap();

    // 16 callers on four counters, until the server is gone
    let answered = Arc::new(Mutex::new(Vec::<String>::new()));
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let (client, token, base, answered) = (client.clone(), token.clone(), server.base.clone(), answered.clone());
            let body = crate::common::letter_to(crate::common::RECIPIENTS[i % 4]);
            tokio::spawn(async move {
                loop {
                    let Ok(r) = reserve(&client, &base, &token, &body).await else { return };
                    let Some(number) = r["documentNumber"].as_str() else { return };
                    answered.lock().unwrap().push(number.to_string());
                }
            })
        })
        .collect();
    while answered.lock().unwrap().len() < 400 {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    server.kill();
    for task in tasks {
        task.await.unwrap();
    }

    let answered = answered.lock().unwrap().clone();
    assert!(answered.len() >= 400);
    let mut missing = Vec::new();
    for number in &answered {
        let found: i64 = sqlx::query("SELECT COUNT(*) FROM document_numbers WHERE number = ?").bind(number).fetch_one(&db.pool).await.unwrap().get(0);
        if found != 1 {
            missing.push(number.clone());
        }
    }
    assert!(missing.is_empty(), "{} of {} answered numbers not on record: {missing:?}", missing.len(), answered.len());
    assert!(docnum::server::audit::unexplained_gaps(&db).await.unwrap().is_empty());
    let report = docnum::server::audit::verify(&db).await.unwrap();
    assert!(report.ok, "{:?}", report.problems);

    let again = DocnumServer::start(&db_url, &[]);
    again.wait_healthy(&client).await;
    let r = reserve(&client, &again.base, &token, &crate::common::letter_to(crate::common::RECIPIENTS[0])).await.unwrap();
    let number = r["documentNumber"].as_str().expect("a number from the restarted server");
    assert!(!answered.iter().any(|a| a == number), "{number} was answered before the kill");
}
