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
    let admin = docnum::server::auth::system::user_id(&db, "admin").await.unwrap().unwrap();
    let (_, token) = docnum::server::auth::system::create_token(&db, "hammer", &[], admin, 0).await.unwrap();
    let body = json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "originatorCode": "คคง.", "recipientCode": "สคฉ.3" });

    let per_process = 300;
    let tasks = (0..per_process * 2).map(|i| {
        let (base, other) = if i % 2 == 0 { (a.base.clone(), b.base.clone()) } else { (b.base.clone(), a.base.clone()) };
        let (client, token, body) = (client.clone(), token.clone(), body.clone());
        tokio::spawn(async move {
            let r = if i % 10 == 5 {
                // a keyed request, retried on the other process: the same number, not a second one
                let key = format!("hammer-{i}");
                let first = keyed_reserve(&client, &base, &token, &key, &body).await.expect("an answer");
                let again = keyed_reserve(&client, &other, &token, &key, &body).await.expect("an answer");
                assert_eq!(again, first, "{key} on the other process");
                let r = client.post(format!("{other}/api/v1/document-numbering/reserve")).bearer_auth(&token).header("Idempotency-Key", &key);
                r.json(&body).send().await.unwrap().json().await.unwrap()
            } else {
                reserve(&client, &base, &token, &body).await.unwrap()
            };
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
    let admin = docnum::server::auth::system::user_id(&db, "admin").await.unwrap().unwrap();
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

/// A keyed reserve on `base`: the number it answered, or None when no answer came (the server went away).
async fn keyed_reserve(client: &reqwest::Client, base: &str, token: &str, key: &str, body: &Value) -> Option<String> {
    let r = client
        .post(format!("{base}/api/v1/document-numbering/reserve"))
        .bearer_auth(token)
        .header("Idempotency-Key", key)
        .json(body)
        .send()
        .await
        .ok()?;
    assert!(r.status().is_success() || r.status().is_server_error(), "{}", r.status());
    let answer: Value = r.json().await.ok()?;
    answer["documentNumber"].as_str().map(str::to_string)
}

/// Retries across a crash: 1,000 requests, each with its own `Idempotency-Key`, sent to a server that is killed with
/// `kill -9` part-way, then all sent again to a new process on the same file. Every key ends with exactly one
/// number (the one it was first answered, for those answered before the kill), and the database holds exactly
/// 1,000 numbers: the requests whose answer never arrived although they had committed — in flight at the kill, or
/// given up by an impatient caller (every fifth waits 3 ms only) — are answered from their stored keys, not given a
/// second number.
#[tokio::test]
async fn a_thousand_keyed_requests_retried_through_a_kill_take_one_number_each() {
    use futures::StreamExt;
    const KEYS: usize = 1_000;
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite://{}", dir.path().join("keyed.db").display());
    let client = reqwest::Client::builder().timeout(crate::common::REQUEST_TIMEOUT).build().unwrap();
    let mut server = DocnumServer::start(&db_url, &[]);
    server.wait_healthy(&client).await;
    let db = Db::connect(&db_url).await.unwrap();
    let admin = docnum::server::auth::system::user_id(&db, "admin").await.unwrap().unwrap();
    let (_, token) = docnum::server::auth::system::create_token(&db, "keyed", &[], admin, 0).await.unwrap();
    let body = |i: usize| crate::common::letter_to(crate::common::RECIPIENTS[i % 4]);

    // the first pass: 32 callers until the server is gone
    let impatient = reqwest::Client::builder().timeout(std::time::Duration::from_millis(3)).build().unwrap();
    let first: Arc<Mutex<std::collections::HashMap<usize, String>>> = Default::default();
    let pass = {
        let (client, token, base, first) = (client.clone(), token.clone(), server.base.clone(), first.clone());
        tokio::spawn(async move {
            futures::stream::iter(0..KEYS)
                .for_each_concurrent(32, |i| {
                    let client = if i % 5 == 0 { impatient.clone() } else { client.clone() };
                    let (token, base, first) = (token.clone(), base.clone(), first.clone());
                    async move {
                        if let Some(number) = keyed_reserve(&client, &base, &token, &format!("key-{i}"), &body(i)).await {
                            first.lock().unwrap().insert(i, number);
                        }
                    }
                })
                .await
        })
    };
    while first.lock().unwrap().len() < 300 {
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    server.kill();
    pass.await.unwrap();
    let first = first.lock().unwrap().clone();
    let on_record_at_kill: i64 = sqlx::query("SELECT COUNT(*) FROM document_numbers").fetch_one(&db.pool).await.unwrap().get(0);
    assert!(first.len() < KEYS, "the kill came part-way ({} answered)", first.len());
    // how many committed without their answer arriving is up to timing (2–14 in runs here), so it is reported, not asserted

    // every request again, with its key, to a new process on the same file
    let again = DocnumServer::start(&db_url, &[]);
    again.wait_healthy(&client).await;
    let retried: Vec<(usize, Option<String>)> = futures::stream::iter(0..KEYS)
        .map(|i| {
            let (client, token, base) = (client.clone(), token.clone(), again.base.clone());
            async move { (i, keyed_reserve(&client, &base, &token, &format!("key-{i}"), &body(i)).await) }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let mut per_key = std::collections::HashMap::new();
    for (i, number) in retried {
        let number = number.unwrap_or_else(|| panic!("key-{i} unanswered after the restart"));
        if let Some(before) = first.get(&i) {
            assert_eq!(&number, before, "key-{i} was answered {before} before the kill");
        }
        per_key.insert(i, number);
    }
    let distinct: HashSet<&String> = per_key.values().collect();
    assert_eq!((per_key.len(), distinct.len()), (KEYS, KEYS), "one number per key, none shared");
    let on_record: i64 = sqlx::query("SELECT COUNT(*) FROM document_numbers").fetch_one(&db.pool).await.unwrap().get(0);
    assert_eq!(on_record, KEYS as i64, "0 extra numbers ({on_record_at_kill} on record at the kill, {} of them answered)", first.len());
    let keys: i64 = sqlx::query("SELECT COUNT(*) FROM idempotency_keys").fetch_one(&db.pool).await.unwrap().get(0);
    assert_eq!(keys, KEYS as i64);
    assert!(docnum::server::audit::unexplained_gaps(&db).await.unwrap().is_empty());
    let report = docnum::server::audit::verify(&db).await.unwrap();
    assert!(report.ok, "{:?}", report.problems);
    eprintln!(
        "keyed through kill -9: {} answered before the kill, {} on record at the kill ({} committed but never answered), {KEYS} after the retries",
        first.len(),
        on_record_at_kill,
        on_record_at_kill - first.len() as i64
    );
}
