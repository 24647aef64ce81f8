//! The live screens' event stream (`GET /api/v1/events`, server-sent events): a reserve reaches the streams that may
//! see its counter with the counter's last number, and not a project admin of another project; a reset request reaches
//! a super admin's stream and not staff's; a template change arrives; a client that hangs up frees its subscription;
//! the streams per caller are bounded; across two instances through a real Redis, a reserve on one arrives on the
//! other's stream; a stop ends the streams (the process exits within its grace time, cleanly).

use docnum::contract::UserId;
use std::time::Duration;

use crate::common::*;
use crate::support::*;
use docnum::contract::Role;
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

const EVENTS: &str = "/api/v1/events";
/// Longer than any event takes to arrive (they are sent within a fifth of a second); a test that waits this long for
/// an event that should come fails.
const PATIENCE: Duration = Duration::from_secs(10);
/// How long a stream is watched for an event that must not come: several coalescing rounds.
const QUIET: Duration = Duration::from_millis(1200);

/// One open event stream, read as text: blocks separated by a blank line.
struct Stream {
    response: reqwest::Response,
    buffer: String,
}

impl Stream {
    async fn open(client: &Client, base: &str, bearer: Option<&str>) -> Stream {
        let mut request = client.get(format!("{base}{EVENTS}"));
        if let Some(token) = bearer {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "the stream opens");
        assert!(response.headers()[reqwest::header::CONTENT_TYPE].to_str().unwrap().starts_with("text/event-stream"));
        let mut stream = Stream { response, buffer: String::new() };
        // the first block says how long a browser waits before reconnecting
        let first = stream.block(PATIENCE).await.expect("the first block");
        assert!(first.lines().any(|l| l.starts_with("retry:")), "retry first: {first}");
        stream
    }

    /// The next block of the stream, or None when none came within `within` or the stream ended.
    async fn block(&mut self, within: Duration) -> Option<String> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(at) = self.buffer.find("\n\n") {
                let block = self.buffer[..at].to_string();
                self.buffer.drain(..at + 2);
                return Some(block);
            }
            match tokio::time::timeout_at(deadline, self.response.chunk()).await {
                Ok(Ok(Some(bytes))) => self.buffer.push_str(&String::from_utf8_lossy(&bytes)),
                _ => return None,
            }
        }
    }

    /// The next event of `kind` whose data satisfies `matches`, skipping the others, within `within`.
    async fn event(&mut self, kind: &str, within: Duration, matches: impl Fn(&Value) -> bool) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let block = self.block(deadline.saturating_duration_since(tokio::time::Instant::now())).await?;
            let named = block.lines().any(|l| l.strip_prefix("event:").map(str::trim) == Some(kind));
            let data: String = block.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).collect();
            if !named || data.is_empty() {
                continue;
            }
            assert!(block.lines().any(|l| l.starts_with("id:")), "every event has an id: {block}");
            let value: Value = serde_json::from_str(&data).unwrap();
            assert_eq!(value["kind"], kind);
            if matches(&value) {
                return Some(value);
            }
        }
    }

    /// Whether the stream has ended (the server closed it) within `within`.
    async fn ended(&mut self, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            match tokio::time::timeout_at(deadline, self.response.chunk()).await {
                Ok(Ok(Some(_))) => continue,
                Ok(Ok(None) | Err(_)) => return true,
                Err(_) => return false,
            }
        }
    }
}

#[tokio::test]
async fn a_reserve_reaches_the_streams_that_may_see_its_counter_with_its_last_number() {
    let app = TestApp::spawn().await;
    let lcbp3 = app.project_id("LCBP3").await;
    let other = app.project_id("LCBP3-C1").await;
    let padmin_here = app.user_client("admin-here", Role::ProjectAdmin, &[lcbp3]).await;
    let padmin_elsewhere = app.user_client("admin-elsewhere", Role::ProjectAdmin, &[other]).await;
    let staff = app.user_client("staff", Role::Staff, &[]).await;
    let mut superadmin = Stream::open(&app.client, &app.base, Some(&app.token)).await;
    let mut here = Stream::open(&padmin_here, &app.base, None).await;
    let mut elsewhere = Stream::open(&padmin_elsewhere, &app.base, None).await;
    let mut staff_stream = Stream::open(&staff, &app.base, None).await;
    assert_eq!(app.state.events.streams(), 4);

    let mut last = Value::Null;
    for _ in 0..3 {
        let (status, body) = app.reserve(&letter()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        last = body;
    }
    assert_eq!(last["sequence"], 3);
    let at_three = |e: &Value| e["lastNumber"] == 3;
    let seen = superadmin.event("counter", PATIENCE, at_three).await.expect("the super admin sees the counter at 3");
    assert_eq!(seen["projectId"], lcbp3);
    assert!(seen["counterId"].as_i64().unwrap() > 0);
    assert_eq!(seen["period"], "YEAR_2025");
    assert!(here.event("counter", PATIENCE, at_three).await.is_some(), "the project's admin sees it");
    assert!(staff_stream.event("counter", PATIENCE, at_three).await.is_some(), "staff see it (their form previews it)");
    assert!(elsewhere.event("counter", QUIET, |_| true).await.is_none(), "another project's admin does not");
}

#[tokio::test]
async fn a_reset_request_reaches_the_super_admins_stream_and_not_staffs() {
    let app = TestApp::spawn().await;
    let (status, body) = app.reserve(&letter()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let counter_id = app.count("SELECT MAX(id) FROM counters").await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let staff = app.user_client("staff", Role::Staff, &[]).await;
    let mut superadmin = Stream::open(&admin, &app.base, None).await;
    let mut staff_stream = Stream::open(&staff, &app.base, None).await;

    let r = admin
        .post(app.url(&format!("/api/v1/document-numbering/counters/{counter_id}/reset-requests")))
        .json(&json!({ "newValue": 0, "reason": "ทดสอบการรีเซ็ตตัวนับผ่านหน้าจอสด" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let envelope: Value = r.json().await.unwrap();
    let seen = superadmin.event("reset", PATIENCE, |_| true).await.expect("the reset request arrives");
    assert_eq!(seen["counterId"], counter_id);
    assert_eq!(seen["requestId"], envelope["workflow"]["instancePublicId"]);
    assert_eq!(seen["state"], "PENDING");
    assert!(staff_stream.event("reset", QUIET, |_| true).await.is_none(), "staff do not see the reset queue");
}

#[tokio::test]
async fn a_template_change_arrives() {
    let app = TestApp::spawn().await;
    let project = app.project_id("LCBP3").await;
    let staff = app.user_client("staff", Role::Staff, &[]).await;
    let mut stream = Stream::open(&staff, &app.base, None).await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let save = json!({ "projectId": project, "correspondenceTypeId": null, "template": "{ORIGINATOR}-{RECIPIENT}-{SEQ:5}-{YEAR:B.E.}",
        "resetScope": "YEARLY", "reason": "ทดสอบ", "acknowledgeKeyChange": true });
    let r = admin.post(app.url("/api/v1/document-numbering/configs")).json(&save).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let seen = stream.event("template", PATIENCE, |_| true).await.expect("the template change arrives");
    assert_eq!(seen, json!({ "kind": "template", "projectId": project, "correspondenceTypeId": null }));
}

#[tokio::test]
async fn a_client_that_hangs_up_frees_its_subscription_and_streams_are_not_requests_in_flight() {
    let app = TestApp::spawn().await;
    let mut streams = Vec::new();
    for _ in 0..3 {
        streams.push(Stream::open(&app.client, &app.base, Some(&app.token)).await);
    }
    assert_eq!(app.state.events.streams(), 3);
    // the watchdog's gauge counts requests that should end; a stream lasts as long as its tab
    assert!(app.state.inflight.snapshot().iter().all(|(route, _)| !route.contains("events")), "{:?}", app.state.inflight.snapshot());
    drop(streams);
    // the server sees the connection closed (hyper reads its end), or at the latest fails its next writes: events are writes
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while app.state.events.streams() > 0 {
        assert!(tokio::time::Instant::now() < deadline, "{} subscription(s) still held", app.state.events.streams());
        let (status, _) = app.reserve(&letter()).await;
        assert_eq!(status, StatusCode::OK);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn streams_are_bounded_per_caller() {
    let app = TestApp::spawn().await;
    let mut open = Vec::new();
    for _ in 0..docnum::server::events::MAX_STREAMS_PER_CALLER {
        open.push(Stream::open(&app.client, &app.base, Some(&app.token)).await);
    }
    let r = app.client.get(app.url(EVENTS)).bearer_auth(&app.token).send().await.unwrap();
    let status = r.status();
    assert_error(status, &r.json().await.unwrap(), 429, "RATE_LIMITED");
    // another caller still gets one
    let staff = app.user_client("staff", Role::Staff, &[]).await;
    Stream::open(&staff, &app.base, None).await;
    let r = app.client.get(app.url(EVENTS)).send().await.unwrap();
    let status = r.status();
    assert_error(status, &r.json().await.unwrap(), 401, "UNAUTHENTICATED");
}

#[tokio::test]
async fn across_two_instances_a_reserve_on_one_arrives_on_the_others_stream() {
    let redis = RedisServer::start().await;
    let a = TestApp::spawn_with(Options { redis_urls: vec![redis.url()], ..Options::default() }).await;
    let b = TestApp::spawn_with(Options { redis_urls: vec![redis.url()], database_url: Some(a.database_url.clone()), ..Options::default() }).await;
    let mut on_b = Stream::open(&b.client, &b.base, Some(&b.token)).await;
    let mut on_a = Stream::open(&a.client, &a.base, Some(&a.token)).await;
    // the subscriber connects in the background: a first reserve may go out before it listens
    let mut n = 0;
    let seen = loop {
        let (status, body) = a.reserve(&letter()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        n += 1;
        if let Some(seen) = on_b.event("counter", Duration::from_millis(800), move |e| e["lastNumber"] == n).await {
            break seen;
        }
        assert!(n < 10, "no event from instance A reached instance B");
    };
    assert_eq!(seen["projectId"], a.project_id("LCBP3").await);
    // once each: an instance does not receive its own events back from Redis
    assert!(on_a.event("counter", PATIENCE, move |e| e["lastNumber"] == n).await.is_some());
    assert!(on_a.event("counter", QUIET, move |e| e["lastNumber"] == n).await.is_none(), "no echo from Redis");
    // and the other way
    let (status, body) = b.reserve(&letter()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(on_a.event("counter", PATIENCE, move |e| e["lastNumber"] == n + 1).await.is_some());
}

#[tokio::test]
async fn a_stop_ends_the_event_streams() {
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite://{}", dir.path().join("live.db").display());
    let mut server = DocnumServer::start(&db_url, &[("SHUTDOWN_GRACE_SECS", "10".into())]);
    let client = Client::new();
    server.wait_healthy(&client).await;
    let db = docnum::server::db::Db::connect(&db_url).await.unwrap();
    let (_, token) = docnum::server::auth::system::create_token(&db, "t", &[], UserId(1), 0).await.unwrap();
    let mut stream = Stream::open(&client, &server.base, Some(&token)).await;
    let (status, elapsed) = server.terminate_within(Duration::from_secs(9)).await;
    assert!(status.success(), "stopped cleanly within its grace time, not at its deadline: {status:?} after {elapsed:?}");
    assert!(stream.ended(PATIENCE).await, "the stream ended with the server");
}
