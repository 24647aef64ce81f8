//! Forwarding a hot counter's batches to the instance that holds its lock (`numbering::forward`): the route is
//! closed without the cluster secret; a forwarded job is issued by the holder, for the caller it names; a holder
//! that cannot be reached, or refuses, sends the batch back to taking the lock. (Two processes forwarding under
//! load, every number checked: `multiprocess.rs`.)

use crate::common::*;
use crate::support::*;
use docnum::contract::{ApiTokenId, NumberRequest, UserId};
use docnum::server::auth::{Caller, Principal};
use docnum::server::numbering::forward::{self, PATH, SECRET_HEADER};
use docnum::server::numbering::queue::JobKind;
use reqwest::StatusCode;
use serde_json::{json, Value};

const SECRET: &str = "a-test-cluster-secret";

/// The LETTER คคง.→สคฉ.3 request of the demo data, resolved as the engine resolves it.
async fn resolved_letter(app: &TestApp) -> docnum::server::numbering::Resolved {
    let req: NumberRequest = serde_json::from_value(letter()).unwrap();
    let snapshot = app.state.reference().get().await.unwrap();
    docnum::server::numbering::resolve(&snapshot, &req, app.clock.now()).unwrap()
}

fn staff() -> Caller {
    Caller {
        principal: Principal::Token { id: ApiTokenId(77), name: "forwarded-from-another-instance".into(), project_ids: vec![] },
        ip: Some("192.0.2.9".into()),
        user_agent: Some("a forwarding instance".into()),
    }
}

async fn forward(app: &TestApp, secret: Option<&str>, body: String) -> (StatusCode, Value) {
    let mut r = app.client.post(app.url(PATH)).header(reqwest::header::CONTENT_TYPE, "application/json").body(body);
    if let Some(s) = secret {
        r = r.header(SECRET_HEADER, s);
    }
    let r = r.send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn the_forward_route_is_closed_without_the_cluster_secret_and_refuses_what_is_not_a_batch() {
    // forwarding off: there is no such route
    let app = TestApp::spawn().await;
    let (status, body) = forward(&app, Some(SECRET), "{}".into()).await;
    assert_error(status, &body, 404, "NOT_FOUND");

    let redis = RedisServer::start().await;
    let app = TestApp::spawn_with(Options { redis_urls: vec![redis.url()], cluster_secret: Some(SECRET.into()), ..Options::default() }).await;
    let r = resolved_letter(&app).await;
    let issue = JobKind::Issue { req: std::sync::Arc::new(r.clone()), ttl_ms: 60_000, document_id: None };
    let batch = serde_json::to_string(&json!({ "key": r.key, "jobs": [{ "kind": issue, "caller": staff() }] })).unwrap();
    for secret in [None, Some("a-wrong-cluster-secret"), Some("")] {
        let (status, body) = forward(&app, secret, batch.clone()).await;
        assert_error(status, &body, 401, "UNAUTHENTICATED");
    }
    let (status, body) = forward(&app, Some(SECRET), "{\"key\": ".into()).await;
    assert_error(status, &body, 400, "VALIDATION_ERROR");
    // a body past the bound: refused in Thai, and read only for a caller with the secret
    let huge = " ".repeat(forward::MAX_BATCH_BYTES + 1);
    let (status, body) = forward(&app, Some(SECRET), huge.clone()).await;
    assert_error(status, &body, 413, "PAYLOAD_TOO_LARGE");
    let (status, body) = forward(&app, None, huge).await;
    assert_error(status, &body, 401, "UNAUTHENTICATED");
    // an issue for another counter than its batch's
    let mut other = r.key.clone();
    other.period = docnum::numbering::PeriodKey::Year(2024);
    let (status, body) =
        forward(&app, Some(SECRET), serde_json::to_string(&json!({ "key": other, "jobs": [{ "kind": issue, "caller": staff() }] })).unwrap()).await;
    assert_error(status, &body, 400, "VALIDATION_ERROR");
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 0, "nothing refused was issued");

    // the batch itself: issued by this instance, in order, audited for the caller it names
    let two = serde_json::to_string(&json!({ "key": r.key, "jobs": [{ "kind": issue, "caller": staff() }, { "kind": issue, "caller": staff() }] }))
        .unwrap();
    let (status, body) = forward(&app, Some(SECRET), two).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["Ok"]["Issued"]["number"], "คคง.-สคฉ.3-0001-2568");
    assert_eq!(results[1]["Ok"]["Issued"]["number"], "คคง.-สคฉ.3-0002-2568");
    assert_eq!(results[1]["Ok"]["Issued"]["sequence"], 2);
    assert_eq!(
        app.count(
            "SELECT COUNT(*) FROM audit_log WHERE operation = 'RESERVE' AND username = 'token:forwarded-from-another-instance' AND ip_address = '192.0.2.9'"
        )
        .await,
        2
    );
    // an error crosses as the holder's own: confirming an unknown token
    let confirm = serde_json::to_string(
        &json!({ "key": r.key, "jobs": [{ "kind": { "Confirm": { "token": "f".repeat(32), "document_id": "DOC-1" } }, "caller": staff() }] }),
    )
    .unwrap();
    let (status, body) = forward(&app, Some(SECRET), confirm).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["results"][0]["Err"]["code"], "NOT_FOUND", "{body}");
}

#[tokio::test]
async fn a_holder_that_cannot_be_reached_or_refuses_sends_the_batch_back_to_the_lock() {
    let redis = RedisServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite://{}", dir.path().join("forward.db").display());
    let client = reqwest::Client::new();
    let a = DocnumServer::start(&db_url, &[("REDIS_URLS", redis.url()), ("CLUSTER_SECRET", SECRET.into())]);
    a.wait_healthy(&client).await;
    // another instance, of another cluster (another secret): it refuses A's batches
    let b = DocnumServer::start(&db_url, &[("REDIS_URLS", redis.url()), ("CLUSTER_SECRET", "another-clusters-secret".into())]);
    b.wait_healthy(&client).await;
    let db = docnum::server::db::Db::connect(&db_url).await.unwrap();
    let (_, token) = docnum::server::auth::system::create_token(&db, "t", &[], UserId(1), 0).await.unwrap();
    let snapshot = docnum::server::reference::load_snapshot(&db).await.unwrap();
    let req: NumberRequest = serde_json::from_value(letter()).unwrap();
    let key = docnum::server::numbering::resolve(&snapshot, &req, "2025-06-15T03:00:00Z".parse().unwrap()).unwrap().key;
    let holder = format!("{}:holder", key.lock_name());
    let mut con = redis.connection().await;

    let reserve = || async {
        let r = client.post(format!("{}/api/v1/document-numbering/reserve", a.base)).bearer_auth(&token).json(&letter()).send().await.unwrap();
        let status = r.status();
        (status, r.json::<Value>().await.unwrap())
    };
    // nobody listens where the holder is said to be
    let dead = format!("http://127.0.0.1:{}", free_port());
    let _: () = redis::cmd("SET").arg(&holder).arg(&dead).arg("PX").arg(60_000).query_async(&mut con).await.unwrap();
    let (status, body) = reserve().await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["sequence"], 1);
    assert_eq!(a.forwarded_jobs("not_delivered").await, 1.0);

    // the one said to hold it refuses A's secret (once A has let its own lock go: it lingers for the next batch)
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let _: () = redis::cmd("SET").arg(&holder).arg(&b.base).arg("PX").arg(60_000).query_async(&mut con).await.unwrap();
    let (status, body) = reserve().await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["sequence"], 2);
    assert_eq!(a.forwarded_jobs("not_delivered").await, 2.0);
    assert_eq!(b.forwarded_jobs("received").await, 0.0);
    assert_eq!(a.forwarded_jobs("unanswered").await, 0.0);

    // one that takes the batch and never answers: it may have issued the number, so A does not issue it again; the
    // caller is told to retry
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_at = format!("http://{}", silent.local_addr().unwrap());
    tokio::spawn(async move {
        use tokio::io::AsyncReadExt;
        while let Ok((mut conn, _)) = silent.accept().await {
            let mut request = vec![0u8; 64 * 1024];
            let _ = conn.read(&mut request).await;
        }
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let _: () = redis::cmd("SET").arg(&holder).arg(&silent_at).arg("PX").arg(60_000).query_async(&mut con).await.unwrap();
    let (status, body) = reserve().await;
    assert_error(status, &body, 503, "NB003");
    assert_eq!(a.forwarded_jobs("unanswered").await, 1.0);
    use sqlx::Row;
    let issued: i64 = sqlx::query("SELECT COUNT(*) FROM document_numbers").fetch_one(&db.pool).await.unwrap().get(0);
    assert_eq!(issued, 2, "the batch sent without an answer was not served here too");
}
