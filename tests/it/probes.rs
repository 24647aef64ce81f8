//! `/health/live` and `/health/ready` (docs/operations/README.md#metrics-and-alerts): ready means the database
//! answers, Redis answers when configured,
//! and a preview goes through the engine; 503 names what failed. (The cluster harness, scripts/cluster.sh, also
//! checks readiness while its own MariaDB is stopped and started again.)

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::common::{Options, TestApp};
use crate::support::RedisServer;

async fn probe(app: &TestApp, path: &str) -> (StatusCode, Value) {
    let r = app.client.get(app.url(path)).send().await.unwrap();
    (r.status(), r.json().await.unwrap_or(Value::Null))
}

/// Polls `/health/ready` until it answers `want` (the lock's Redis clients reconnect on their own time).
async fn ready_becomes(app: &TestApp, want: StatusCode) -> Value {
    let mut last = (StatusCode::OK, Value::Null);
    for _ in 0..100 {
        last = probe(app, "/health/ready").await;
        if last.0 == want {
            return last.1;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("/health/ready stayed {} ({}), expected {want}", last.0, last.1);
}

#[tokio::test]
async fn live_and_ready_on_the_embedded_default() {
    let app = TestApp::spawn().await;
    let (status, body) = probe(&app, "/health/live").await;
    assert_eq!((status, body), (StatusCode::OK, json!({ "status": "live" })));
    let (status, body) = probe(&app, "/health/ready").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!((body["database"].clone(), body["redis"].clone(), body["failing"].clone()), (json!(true), json!("not configured"), json!([])));
    // the preview went through the engine: a number of the demo data, nothing taken
    let preview = body["preview"].as_str().unwrap_or_default().to_string();
    assert!(preview.ends_with("-0001-2568"), "{body}");
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 0);
}

#[tokio::test]
async fn ready_turns_503_while_the_configured_redis_is_stopped_and_back_after() {
    let mut redis = RedisServer::start().await;
    let port = redis.port;
    let app = TestApp::spawn_with(Options { redis_urls: vec![redis.url()], ..Options::default() }).await;
    let body = ready_becomes(&app, StatusCode::OK).await;
    assert_eq!(body["redis"], "up");

    redis.kill();
    let body = ready_becomes(&app, StatusCode::SERVICE_UNAVAILABLE).await;
    assert_eq!((body["failing"].clone(), body["redis"].clone(), body["database"].clone()), (json!(["redis"]), json!("down"), json!(true)), "{body}");
    assert_eq!(probe(&app, "/health/live").await.0, StatusCode::OK, "alive all the same");

    let _redis = RedisServer::start_on(port).await;
    let body = ready_becomes(&app, StatusCode::OK).await;
    assert_eq!(body["redis"], "up");
}

#[tokio::test]
async fn ready_turns_503_when_the_database_is_gone() {
    let app = TestApp::spawn().await;
    assert_eq!(probe(&app, "/health/ready").await.0, StatusCode::OK);
    app.state.db.pool.close().await;
    let (status, body) = probe(&app, "/health/ready").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["database"], false, "{body}");
    assert!(body["failing"].as_array().unwrap().contains(&json!("database")), "{body}");
}
