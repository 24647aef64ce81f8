//! Secrets: every secret setting read from `NAME_FILE` by the server binary; the webhooks' signing secrets stored
//! sealed with `SECRETS_KEY` (and ones stored plain before sealed at the next start with a key); no
//! secret in the log or in an error answer (both are searched for each secret's text).

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::*;
use crate::support::*;
use docnum::server::config::NotifyConfig;
use docnum::server::secrets::{self, SecretsKey};
use reqwest::StatusCode;
use serde_json::{json, Value};

const ADMIN_SECRET: &str = "file-admin-password-4711";
const METRICS_SECRET: &str = "file-metrics-token-0815";
const REDIS_SECRET: &str = "file-redis-password-1234";
const KEY_HEX: &str = "4f1c9a0b7d3e2f6a8b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a";
const WEBHOOK_SECRET: &str = "file-webhook-secret-98765";

#[tokio::test]
async fn every_secret_setting_comes_from_its_file_and_none_reaches_the_log_or_an_error_answer() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db_file = d.join("docnum.db");
    let files = [
        ("DATABASE_URL", format!("sqlite://{}\n", db_file.display())),
        ("BOOTSTRAP_ADMIN_PASSWORD", format!("{ADMIN_SECRET}\n")),
        ("METRICS_TOKEN", format!("{METRICS_SECRET}\n")),
        // a Redis that is not there, with a password: its failures are logged, the password never
        ("REDIS_URLS", format!("rediss://:{REDIS_SECRET}@127.0.0.1:{}/\n", free_port())),
        ("SECRETS_KEY", format!("{KEY_HEX}\n")),
    ];
    let port = free_port();
    let log_path = d.join("docnum.log");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_docnum"));
    cmd.args(["serve", "--addr", &format!("127.0.0.1:{port}")])
        .env("RUST_LOG", "debug,sqlx=warn,hyper=info,reqwest=info,h2=info,rustls=info")
        .env("RATE_LIMIT_TOKEN_PER_MIN", "0")
        .env("DEMO_DATA", "true")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log_path).unwrap());
    for name in docnum::server::config::SECRET_SETTINGS {
        cmd.env_remove(name);
    }
    for (name, value) in &files {
        let path = d.join(name.to_lowercase());
        std::fs::write(&path, value).unwrap();
        cmd.env(format!("{name}_FILE"), &path);
    }
    let mut child = cmd.spawn().expect("start docnum");
    let base = format!("http://127.0.0.1:{port}");
    let mut origin = reqwest::header::HeaderMap::new();
    origin.insert(reqwest::header::ORIGIN, base.parse().unwrap());
    let client = reqwest::Client::builder().cookie_store(true).default_headers(origin).build().unwrap();
    let mut up = false;
    for _ in 0..300 {
        if client.get(format!("{base}/health/live")).send().await.is_ok_and(|r| r.status().is_success()) {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(up, "docnum did not start: {}", std::fs::read_to_string(&log_path).unwrap_or_default());

    let mut answers: Vec<String> = Vec::new();
    // DATABASE_URL_FILE: the database is the file's
    assert!(db_file.exists(), "the SQLite file named in DATABASE_URL_FILE");
    // METRICS_TOKEN_FILE: the token is required, and the file's is taken
    let r = client.get(format!("{base}/metrics")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    answers.push(r.text().await.unwrap());
    let r = client.get(format!("{base}/metrics")).bearer_auth("wrong-token").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    answers.push(r.text().await.unwrap());
    let r = client.get(format!("{base}/metrics")).bearer_auth(METRICS_SECRET).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    // BOOTSTRAP_ADMIN_PASSWORD_FILE: admin logs in with the file's password (and a wrong one is refused)
    let login = |password: &str| client.post(format!("{base}/api/v1/auth/login")).json(&json!({ "username": "admin", "password": password })).send();
    let r = login("not-the-password").await.unwrap();
    assert!(r.status().is_client_error());
    answers.push(r.text().await.unwrap());
    let r = login(ADMIN_SECRET).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK, "{}", r.text().await.unwrap());
    // REDIS_URLS_FILE: the instance knows Redis is configured (and down): its readiness says so
    let r = client.get(format!("{base}/health/ready")).send().await.unwrap();
    let ready: Value = r.json().await.unwrap();
    assert!(ready.to_string().contains("redis"), "{ready}");
    answers.push(ready.to_string());
    // SECRETS_KEY_FILE: a webhook's secret is stored sealed (shown once, in the answer that creates it)
    let r = client
        .post(format!("{base}/api/v1/notifications/webhooks"))
        .json(&json!({ "url": "https://93.184.215.14/hook", "secret": WEBHOOK_SECRET }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let created: Value = r.json().await.unwrap();
    assert_eq!(created["secret"], WEBHOOK_SECRET);
    let r = client.get(format!("{base}/api/v1/notifications/webhooks")).send().await.unwrap();
    answers.push(r.text().await.unwrap());
    // error answers that involve the secrets' settings
    for body in [json!({ "url": "http://127.0.0.1/hook", "secret": WEBHOOK_SECRET }), json!({ "url": "ftp://x", "secret": WEBHOOK_SECRET })] {
        let r = client.post(format!("{base}/api/v1/notifications/webhooks")).json(&body).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        answers.push(r.text().await.unwrap());
    }
    let r = client.post(format!("{base}/api/v1/document-numbering/reserve")).json(&json!({})).send().await.unwrap();
    answers.push(r.text().await.unwrap());
    // the reserve goes through (Redis down: the database lock), so the lock's outage is in the log
    let r = client.post(format!("{base}/api/v1/document-numbering/reserve")).json(&letter()).send().await.unwrap();
    answers.push(r.text().await.unwrap());

    // stop, then read what was stored and what was logged
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let _ = child.wait();
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db_file.display())).await.unwrap();
    let stored: String = sqlx::query_scalar("SELECT secret FROM notification_webhooks").fetch_one(&pool).await.unwrap();
    assert!(secrets::is_sealed(&stored) && !stored.contains(WEBHOOK_SECRET), "{stored}");
    let key = SecretsKey::parse(KEY_HEX).unwrap();
    assert_eq!(secrets::open(Some(&key), &stored).unwrap(), WEBHOOK_SECRET);
    pool.close().await;

    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.contains("127.0.0.1"), "the log names the Redis server it could not reach:\n{log}");
    for secret in [ADMIN_SECRET, METRICS_SECRET, REDIS_SECRET, KEY_HEX, WEBHOOK_SECRET] {
        assert!(!log.contains(secret), "the log shows {secret}:\n{log}");
        for answer in &answers {
            assert!(!answer.contains(secret), "an answer shows {secret}: {answer}");
        }
    }
}

#[tokio::test]
async fn a_setting_given_both_ways_stops_the_start_without_showing_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("token");
    std::fs::write(&path, METRICS_SECRET).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_docnum"))
        .args(["serve", "--addr", &format!("127.0.0.1:{}", free_port())])
        .env("METRICS_TOKEN", METRICS_SECRET)
        .env("METRICS_TOKEN_FILE", &path)
        .env("DATABASE_URL", format!("sqlite://{}", dir.path().join("d.db").display()))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("METRICS_TOKEN and METRICS_TOKEN_FILE are both set"), "{stderr}");
    assert!(!stderr.contains(METRICS_SECRET), "{stderr}");
}

#[tokio::test]
async fn a_secret_stored_plain_before_the_key_is_sealed_at_the_next_start_and_opens_to_itself() {
    // a webhook saved without a key: its secret stored as given
    let first = TestApp::spawn().await;
    let admin = first.login("admin", ADMIN_PASSWORD).await;
    let r = admin
        .post(first.url("/api/v1/notifications/webhooks"))
        .json(&json!({ "url": "http://127.0.0.1:9/hook", "secret": WEBHOOK_SECRET }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let stored =
        || async { sqlx::query_scalar::<_, String>("SELECT secret FROM notification_webhooks").fetch_one(&first.state.db.pool).await.unwrap() };
    assert_eq!(stored().await, WEBHOOK_SECRET);
    // another instance of the same database, started with a key, seals it; the value opens to the same secret
    let key = SecretsKey::parse(KEY_HEX).unwrap();
    let notify = NotifyConfig { allow_private_targets: true, secrets_key: Some(key.clone()), ..NotifyConfig::default() };
    let _second = TestApp::spawn_with(Options { database_url: Some(first.database_url.clone()), notify, ..Options::default() }).await;
    let sealed = stored().await;
    assert!(secrets::is_sealed(&sealed), "{sealed}");
    assert_eq!(secrets::open(Some(&key), &sealed).unwrap(), WEBHOOK_SECRET);
}
