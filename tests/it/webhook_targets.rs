//! Where a webhook may point: loopback, link-local, private, unique-local, unspecified and IPv4-mapped internal
//! addresses are refused when the webhook is saved (400 with a Thai message), whether written as an address or
//! reached through a name; and again when a delivery goes out (a webhook saved while they were allowed, or a name
//! that resolves elsewhere since), recorded as the delivery's failure with nothing sent. Redirects are not followed.
//! `WEBHOOK_ALLOW_PRIVATE_TARGETS=true` (the setting `NotifyConfig::allow_private_targets`) lets them through.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use docnum::server::config::NotifyConfig;
use docnum::server::notifications::Notifier;
use reqwest::StatusCode;
use serde_json::{json, Value};

fn refusing() -> Options {
    Options { notify: NotifyConfig::default(), ..Options::default() }
}

async fn save(app: &TestApp, admin: &reqwest::Client, url: &str) -> (StatusCode, Value) {
    let r = admin.post(app.url("/api/v1/notifications/webhooks")).json(&json!({ "url": url })).send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn internal_targets_are_refused_when_a_webhook_is_saved() {
    let app = TestApp::spawn_with(refusing()).await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    for (url, kind) in [
        ("http://127.0.0.1/hook", "loopback"),
        ("http://127.10.0.1:8080/hook", "loopback"),
        ("http://[::1]:9000/hook", "loopback"),
        ("http://localhost:9000/hook", "loopback"), // a name, resolved
        ("http://10.1.2.3/hook", "private"),
        ("https://172.16.0.9/hook", "private"),
        ("http://192.168.0.10/hook", "private"),
        ("http://169.254.169.254/latest/meta-data", "link-local"),
        ("http://[fe80::1]/hook", "link-local"),
        ("http://[fd00::7]/hook", "unique-local"),
        ("http://[fc00::1]/hook", "unique-local"),
        ("http://0.0.0.0:3000/hook", "unspecified"),
        ("http://[::]/hook", "unspecified"),
        ("http://[::ffff:127.0.0.1]/hook", "IPv4-mapped"),
        ("http://[::ffff:10.0.0.1]/hook", "IPv4-mapped"),
        ("http://[::ffff:169.254.169.254]/hook", "IPv4-mapped"),
    ] {
        let (s, body) = save(&app, &admin, url).await;
        assert_error(s, &body, 400, "VALIDATION_ERROR");
        let message = body["message"].as_str().unwrap();
        assert!(message.contains("ที่อยู่สาธารณะ") && message.contains(kind), "{url}: {message}");
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM notification_webhooks").await, 0, "none saved");
    // a public address is taken (nothing is sent to it here)
    let (s, body) = save(&app, &admin, "https://93.184.215.14/hook").await;
    assert_eq!(s, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn internal_targets_are_taken_when_allowed() {
    let app = TestApp::spawn().await; // the tests' default: allowed
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    for url in ["http://127.0.0.1/hook", "http://[fd00::7]/hook", "http://localhost:9000/hook"] {
        let (s, body) = save(&app, &admin, url).await;
        assert_eq!(s, StatusCode::OK, "{url}: {body}");
    }
}

/// A receiver on loopback: counts what reaches it; answers `status` with `Location: location` when one is given.
async fn receiver(hits: Arc<AtomicUsize>, status: StatusCode, location: Option<String>) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let hits = hits.clone();
            let location = location.clone();
            async move {
                hits.fetch_add(1, Ordering::SeqCst);
                let mut r = axum::response::IntoResponse::into_response(status);
                if let Some(to) = location {
                    r.headers_mut().insert("location", to.parse().unwrap());
                }
                r
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    addr
}

fn worker(app: &TestApp, allow_private_targets: bool) -> Arc<Notifier> {
    let config = NotifyConfig {
        poll: Duration::from_millis(20),
        backoff_base: Duration::from_millis(10),
        max_attempts: 1,
        allow_private_targets,
        ..NotifyConfig::default()
    };
    let n = Arc::new(Notifier::new(app.state.db.clone(), app.clock.clone(), config, "targets-test").unwrap());
    n.spawn();
    n
}

/// Every delivery's (webhook URL, state, last error), once none is pending.
async fn settled(app: &TestApp, expected: usize) -> Vec<(String, String, Option<String>)> {
    let start = Instant::now();
    loop {
        let rows: Vec<(String, String, Option<String>)> = sqlx::query_as(
            "SELECT w.url, d.state, d.last_error FROM notification_deliveries d JOIN notification_webhooks w ON w.id = d.webhook_id \
             WHERE d.state <> 'PENDING' ORDER BY d.id",
        )
        .fetch_all(&app.state.db.pool)
        .await
        .unwrap();
        if rows.len() >= expected {
            return rows;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "deliveries not settled: {rows:?}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

async fn confirm_one(app: &TestApp) {
    let (s, r) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let (s, c) = app.post_json("/api/v1/document-numbering/confirm", &json!({ "token": r["token"], "documentId": "DOC-T-1" })).await;
    assert_eq!(s, StatusCode::OK, "{c}");
}

#[tokio::test]
async fn a_delivery_to_an_internal_target_is_refused_when_it_goes_out() {
    // saved while allowed (or pointing at a name that resolved elsewhere then); delivered by a worker that refuses
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let hits = Arc::new(AtomicUsize::new(0));
    let addr = receiver(hits.clone(), StatusCode::OK, None).await;
    let by_address = format!("http://127.0.0.1:{}/hook", addr.port());
    let by_name = format!("http://localhost:{}/hook", addr.port());
    for url in [&by_address, &by_name] {
        let r =
            admin.post(app.url("/api/v1/notifications/webhooks")).json(&json!({ "url": url, "kinds": ["NUMBER_CONFIRMED"] })).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
    }
    let _worker = worker(&app, false);
    confirm_one(&app).await;
    let rows = settled(&app, 2).await;
    for (url, state, error) in &rows {
        assert_eq!(state, "FAILED", "{url}");
        let error = error.as_deref().unwrap_or_default();
        assert!(error.contains("refused") && error.contains("WEBHOOK_ALLOW_PRIVATE_TARGETS"), "{url}: {error}");
    }
    assert!(rows.iter().any(|(u, _, e)| u == &by_name && e.as_deref().unwrap_or_default().contains("localhost")), "{rows:?}");
    assert_eq!(hits.load(Ordering::SeqCst), 0, "nothing was sent");
}

#[tokio::test]
async fn a_redirect_is_not_followed() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let inner_hits = Arc::new(AtomicUsize::new(0));
    let inner = receiver(inner_hits.clone(), StatusCode::OK, None).await;
    let outer_hits = Arc::new(AtomicUsize::new(0));
    let outer = receiver(outer_hits.clone(), StatusCode::TEMPORARY_REDIRECT, Some(format!("http://{inner}/hook"))).await;
    let r = admin
        .post(app.url("/api/v1/notifications/webhooks"))
        .json(&json!({ "url": format!("http://{outer}/hook"), "kinds": ["NUMBER_CONFIRMED"] }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let _worker = worker(&app, true);
    confirm_one(&app).await;
    let rows = settled(&app, 1).await;
    assert_eq!(rows[0].1, "FAILED");
    assert!(rows[0].2.as_deref().unwrap_or_default().contains("307"), "{rows:?}");
    assert_eq!((outer_hits.load(Ordering::SeqCst), inner_hits.load(Ordering::SeqCst)), (1, 0), "the redirect's target got nothing");
}
