//! Notifications (docs/rules/api.md#notifications-and-live-screens): each event's outbox row is written with its
//! change, and delivered at least once to a
//! webhook — a local receiver (an axum server inside the test) that fails the first deliveries still gets every event,
//! once after de-duplication by event id, in order per counter, each signed with the webhook's secret. A delivery that
//! fails for good is listed and delivered after a replay; only super admins manage webhooks; a change rolled back
//! leaves no outbox row.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode as AxumStatus};
use docnum::contract::Role;
use docnum::server::notifications::{sign, Notifier, NotifyConfig};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

use crate::common::*;

const SECRET: &str = "receiver-secret-0123456789";
/// However slow the machine, every event arrives well within this.
const DEADLINE: Duration = Duration::from_secs(90);

/// One request the receiver got: what it answered, the event id and signature headers, the body.
#[derive(Clone, Debug)]
struct Received {
    answered: u16,
    event_id: String,
    signature: String,
    body: Bytes,
}

#[derive(Default)]
struct Receiver {
    got: Mutex<Vec<Received>>,
    /// Requests answered 500 before it answers 200: the first `fail_first`, then (with `fail_all` > 0) every one.
    fail_first: AtomicUsize,
    fail_all: AtomicUsize,
    seen: AtomicUsize,
}

impl Receiver {
    fn received(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    /// The deliveries it accepted, in the order it accepted them.
    fn accepted(&self) -> Vec<Received> {
        self.received().into_iter().filter(|r| r.answered == 200).collect()
    }
}

async fn receive(State(r): State<Arc<Receiver>>, headers: HeaderMap, body: Bytes) -> AxumStatus {
    let n = r.seen.fetch_add(1, Ordering::SeqCst);
    let fail = n < r.fail_first.load(Ordering::SeqCst) || r.fail_all.load(Ordering::SeqCst) > 0;
    let answered = if fail { AxumStatus::INTERNAL_SERVER_ERROR } else { AxumStatus::OK };
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    r.got.lock().unwrap().push(Received {
        answered: answered.as_u16(),
        event_id: header("x-docnum-event-id"),
        signature: header("x-docnum-signature"),
        body,
    });
    answered
}

/// A receiver on 127.0.0.1:<free port>; its URL.
async fn start_receiver(receiver: Arc<Receiver>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = axum::Router::new().route("/hook", axum::routing::post(receive)).with_state(receiver);
    tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    });
    format!("http://{addr}/hook")
}

/// This test's delivery worker: quick polls and backoffs, so the test waits little.
fn start_worker(app: &TestApp, max_attempts: u32) -> Arc<Notifier> {
    // the receiver listens on loopback: an internal target, allowed here (`webhook_targets` tests the refusals)
    let config = NotifyConfig {
        poll: Duration::from_millis(20),
        max_attempts,
        backoff_base: Duration::from_millis(10),
        timeout: Duration::from_secs(10),
        allow_private_targets: true,
        ..NotifyConfig::default()
    };
    let n = Arc::new(Notifier::new(app.state.db.clone(), app.clock.clone(), config, "test").unwrap());
    n.spawn();
    n
}

async fn send(app: &TestApp, client: &Client, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
    let url = app.url(path);
    let req = match method {
        "GET" => client.get(url),
        "PATCH" => client.patch(url).json(&body.unwrap_or(json!({}))),
        "DELETE" => client.delete(url),
        _ => client.post(url).json(&body.unwrap_or(json!({}))),
    };
    let r = req.send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn create_webhook(app: &TestApp, admin: &Client, url: &str) -> i64 {
    let (s, created) = send(app, admin, "POST", "/api/v1/notifications/webhooks", Some(json!({ "url": url, "secret": SECRET }))).await;
    assert_eq!(s, StatusCode::OK, "{created}");
    assert_eq!(created["secret"], SECRET);
    assert_eq!(created["webhook"]["active"], true);
    assert!(created["webhook"].get("secret").is_none(), "a listed webhook never shows its secret");
    created["webhook"]["id"].as_i64().unwrap()
}

/// Reserves a letter to `recipient` and confirms it for `document_id`; its number.
async fn reserve_and_confirm(app: &TestApp, recipient: &str, document_id: &str) -> String {
    let (s, r) = app.reserve(&letter_to(recipient)).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let (s, c) = app.post_json("/api/v1/document-numbering/confirm", &json!({ "token": r["token"], "documentId": document_id })).await;
    assert_eq!(s, StatusCode::OK, "{c}");
    r["documentNumber"].as_str().unwrap().to_string()
}

/// The outbox: (event id, kind, counter id) in the order written.
async fn outbox(app: &TestApp) -> Vec<(String, String, Option<i64>)> {
    sqlx::query_as("SELECT event_id, kind, counter_id FROM notification_outbox ORDER BY id").fetch_all(&app.state.db.pool).await.unwrap()
}

async fn counter_of(app: &TestApp, number: &str) -> i64 {
    sqlx::query_scalar("SELECT counter_id FROM document_numbers WHERE number = ?").bind(number).fetch_one(&app.state.db.pool).await.unwrap()
}

#[tokio::test]
async fn a_receiver_that_fails_its_first_three_deliveries_still_gets_every_event_once_in_order() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let admin2 = app.user_client("admin2", Role::SuperAdmin, &[]).await;
    let receiver = Arc::new(Receiver::default());
    receiver.fail_first.store(3, Ordering::SeqCst);
    let url = start_receiver(receiver.clone()).await;
    create_webhook(&app, &admin, &url).await;
    let _worker = start_worker(&app, 20);

    // two counters: three numbers confirmed on each (the worker delivers while they are written)
    let mut numbers = Vec::new();
    for i in 0..3 {
        numbers.push(reserve_and_confirm(&app, "สคฉ.3", &format!("DOC-A{i}")).await);
        numbers.push(reserve_and_confirm(&app, "กทท.", &format!("DOC-B{i}")).await);
    }
    let (first, second) = (counter_of(&app, &numbers[0]).await, counter_of(&app, &numbers[1]).await);
    assert_ne!(first, second);
    // a reservation left over on the first counter, which the reset releases
    let (s, r) = app.reserve(&letter_to("สคฉ.3")).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    // a reset requested by one super admin, approved by the other
    let (s, req) = send(
        &app,
        &admin,
        "POST",
        &format!("/api/v1/document-numbering/counters/{first}/reset-requests"),
        Some(json!({ "newValue": 3, "reason": "ปล่อยเลขที่จองค้างไว้คืน" })),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{req}");
    let id = req["workflow"]["instancePublicId"].as_str().unwrap().to_string();
    let (s, done) = send(&app, &admin2, "POST", &format!("/api/v1/workflow/{id}/actions/APPROVE"), Some(json!({}))).await;
    assert_eq!(s, StatusCode::OK, "{done}");
    // a number voided on the second counter
    let (s, v) = send(
        &app,
        &admin,
        "POST",
        "/api/v1/document-numbering/void",
        Some(json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "documentNumber": numbers[3], "reason": "ออกซ้ำ" })),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");

    // every event has its outbox row, written with its change
    let written = outbox(&app).await;
    let kinds: Vec<&str> = written.iter().map(|(_, k, _)| k.as_str()).collect();
    let count = |k: &str| kinds.iter().filter(|x| **x == k).count();
    assert_eq!(count("NUMBER_CONFIRMED"), 6, "{kinds:?}");
    assert_eq!((count("RESET_REQUESTED"), count("RESET_APPROVED"), count("RESET_EXECUTED"), count("NUMBER_VOIDED")), (1, 1, 1, 1), "{kinds:?}");
    assert_eq!(written.len(), 10, "nothing else: reserves and the release emit nothing ({kinds:?})");

    let expected: HashSet<&str> = written.iter().map(|(e, _, _)| e.as_str()).collect();
    eventually("every event accepted by the receiver", DEADLINE, || {
        let accepted: HashSet<String> = receiver.accepted().into_iter().map(|r| r.event_id).collect();
        let all = expected.iter().all(|e| accepted.contains(*e));
        async move { all }
    })
    .await;

    let received = receiver.received();
    assert!(received[..3].iter().all(|r| r.answered == 500), "the first three were refused");
    assert!(received.len() >= written.len() + 3, "each refused one was sent again");
    // de-duplicated by event id, each event once; nothing the outbox does not hold
    let accepted = receiver.accepted();
    let mut once: Vec<&Received> = Vec::new();
    for r in &accepted {
        if !once.iter().any(|o| o.event_id == r.event_id) {
            once.push(r);
        }
    }
    assert_eq!(once.len(), written.len());
    // each body signed with the secret, and naming its own event
    for r in &received {
        assert_eq!(r.signature, format!("sha256={}", sign(SECRET, &r.body)), "signature of {}", r.event_id);
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(body["eventId"], r.event_id.as_str());
        assert!(body["occurredAt"].as_str().unwrap().ends_with('Z'), "{body}");
        assert!(body["kind"].is_string() && body["data"].is_object(), "{body}");
    }
    // per counter, in the order written
    let order_of = |events: Vec<&str>| -> HashMap<i64, Vec<String>> {
        let mut by_counter: HashMap<i64, Vec<String>> = HashMap::new();
        for e in events {
            let (_, _, counter) = written.iter().find(|(id, _, _)| id == e).unwrap();
            by_counter.entry(counter.unwrap()).or_default().push(e.to_string());
        }
        by_counter
    };
    let written_order = order_of(written.iter().map(|(e, _, _)| e.as_str()).collect());
    let received_order = order_of(once.iter().map(|r| r.event_id.as_str()).collect());
    assert_eq!(received_order, written_order);
    assert_eq!(written_order[&first].len(), 6, "3 confirms, requested, approved, executed");
    assert_eq!(written_order[&second].len(), 4, "3 confirms, voided");

    // what the receiver read about the reset and the void
    let body_of = |kind: &str| -> Value {
        let (id, _, _) = written.iter().find(|(_, k, _)| k == kind).unwrap();
        serde_json::from_slice(&once.iter().find(|r| &r.event_id == id).unwrap().body).unwrap()
    };
    let requested = body_of("RESET_REQUESTED");
    assert_eq!(requested["counterId"], first);
    assert_eq!(requested["data"]["newValue"], 3);
    assert_eq!(requested["data"]["instancePublicId"], id.as_str());
    assert_eq!(requested["data"]["by"], "admin");
    assert_eq!(body_of("RESET_APPROVED")["data"]["by"], "admin2");
    let voided = body_of("NUMBER_VOIDED");
    assert_eq!(voided["data"]["documentNumber"], numbers[3].as_str());
    assert_eq!(voided["data"]["reason"], "ออกซ้ำ");
    assert!(voided["projectId"].as_i64().is_some(), "{voided}");

    // the deliveries' own record (written once each answer is read: the last may come a moment after its receipt)
    eventually("every delivery recorded DELIVERED", DEADLINE, || async {
        let (s, delivered) = send(&app, &admin, "GET", "/api/v1/notifications/deliveries?state=DELIVERED", None).await;
        assert_eq!(s, StatusCode::OK, "{delivered}");
        delivered.as_array().unwrap().len() == written.len()
    })
    .await;
    let (s, pending) = send(&app, &admin, "GET", "/api/v1/notifications/deliveries?state=pending", None).await;
    assert_eq!((s, pending), (StatusCode::OK, json!([])));
}

#[tokio::test]
async fn a_delivery_that_failed_for_good_is_listed_and_delivered_after_a_replay() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let receiver = Arc::new(Receiver::default());
    receiver.fail_all.store(1, Ordering::SeqCst);
    let url = start_receiver(receiver.clone()).await;
    let hook = create_webhook(&app, &admin, &url).await;
    let _worker = start_worker(&app, 2);

    let (s, g) = app.post_json("/api/v1/documents/DOC-F1/generate-number", &letter()).await;
    assert_eq!(s, StatusCode::OK, "{g}");
    let written = outbox(&app).await;
    assert_eq!(written.len(), 1, "the outbox row exists whatever becomes of its delivery");
    assert_eq!(written[0].1, "NUMBER_CONFIRMED");

    let failed = || async {
        let (s, list) = send(&app, &admin, "GET", "/api/v1/notifications/deliveries?state=FAILED", None).await;
        assert_eq!(s, StatusCode::OK, "{list}");
        list
    };
    eventually("the delivery marked FAILED after its two attempts", DEADLINE, || async { failed().await.as_array().is_some_and(|l| l.len() == 1) })
        .await;
    let list = failed().await;
    let d = &list[0];
    assert_eq!(d["eventId"], written[0].0.as_str());
    assert_eq!(d["webhookId"], hook);
    assert_eq!(d["attempts"], 2);
    assert_eq!(d["lastStatus"], 500);
    assert!(d["lastError"].as_str().unwrap().contains("500"), "{d}");
    assert_eq!(receiver.received().len(), 2, "no third attempt");
    let (s, hooks) = send(&app, &admin, "GET", "/api/v1/notifications/webhooks", None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(hooks[0]["failed"], 1);

    // the receiver is back; a super admin replays the delivery
    receiver.fail_all.store(0, Ordering::SeqCst);
    let delivery = d["id"].as_i64().unwrap();
    let (s, r) = send(&app, &admin, "POST", &format!("/api/v1/notifications/deliveries/{delivery}/replay"), None).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["replayed"], 1);
    eventually("the replayed delivery accepted", DEADLINE, || async { !receiver.accepted().is_empty() }).await;
    assert_eq!(receiver.accepted()[0].event_id, written[0].0);
    eventually("the delivery recorded DELIVERED", DEADLINE, || async {
        let (_, l) = send(&app, &admin, "GET", "/api/v1/notifications/deliveries?state=DELIVERED", None).await;
        l.as_array().is_some_and(|l| l.len() == 1)
    })
    .await;
    // only a failed delivery is replayed; the replay is audited
    let (s, e) = send(&app, &admin, "POST", &format!("/api/v1/notifications/deliveries/{delivery}/replay"), None).await;
    assert_error(s, &e, 409, "WF_INVALID_TRANSITION");
    let (s, e) = send(&app, &admin, "POST", "/api/v1/notifications/deliveries/999999/replay", None).await;
    assert_error(s, &e, 404, "NOT_FOUND");
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'NOTIFICATION_REPLAYED'").await, 1);

    // all failed of a webhook at once: none left
    let (s, r) = send(&app, &admin, "POST", &format!("/api/v1/notifications/webhooks/{hook}/replay"), None).await;
    assert_eq!((s, r["replayed"].as_i64()), (StatusCode::OK, Some(0)));
}

#[tokio::test]
async fn webhooks_are_managed_by_super_admins_only_with_their_input_checked() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let lcbp3 = app.project_id("LCBP3").await;
    let staff = app.user_client("staff1", Role::Staff, &[]).await;
    let padmin = app.user_client("padmin1", Role::ProjectAdmin, &[lcbp3]).await;
    let hook = json!({ "url": "http://127.0.0.1:9/hook" });
    for client in [&staff, &padmin] {
        for (method, path, body) in [
            ("GET", "/api/v1/notifications/webhooks", None),
            ("POST", "/api/v1/notifications/webhooks", Some(hook.clone())),
            ("GET", "/api/v1/notifications/deliveries", None),
            ("POST", "/api/v1/notifications/deliveries/1/replay", None),
            ("PATCH", "/api/v1/notifications/webhooks/1", Some(json!({ "active": false }))),
            ("DELETE", "/api/v1/notifications/webhooks/1", None),
        ] {
            let (s, e) = send(&app, client, method, path, body).await;
            assert_error(s, &e, 403, "FORBIDDEN");
        }
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM notification_webhooks").await, 0);

    // input: http(s) only, a secret of 16+ visible characters, known kinds
    for bad in [
        json!({ "url": "ftp://example.com/hook" }),
        json!({ "url": "javascript:alert(1)" }),
        json!({ "url": format!("https://example.com/{}", "a".repeat(2000)) }),
        json!({ "url": "https://example.com/hook", "secret": "short" }),
    ] {
        let (s, e) = send(&app, &admin, "POST", "/api/v1/notifications/webhooks", Some(bad.clone())).await;
        assert_error(s, &e, 400, "VALIDATION_ERROR");
    }
    let (s, e) = send(&app, &admin, "POST", "/api/v1/notifications/webhooks", Some(json!({ "url": "https://e.com/h", "kinds": ["NO_SUCH"] }))).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");

    // a generated secret, shown once; kinds kept; enable/disable/delete, each audited
    let (s, c) =
        send(&app, &admin, "POST", "/api/v1/notifications/webhooks", Some(json!({ "url": "https://e.com/h", "kinds": ["RESET_REQUESTED"] }))).await;
    assert_eq!(s, StatusCode::OK, "{c}");
    assert_eq!(c["secret"].as_str().unwrap().len(), 64);
    assert_eq!(c["webhook"]["kinds"], json!(["RESET_REQUESTED"]));
    let id = c["webhook"]["id"].as_i64().unwrap();
    let (s, w) = send(&app, &admin, "PATCH", &format!("/api/v1/notifications/webhooks/{id}"), Some(json!({ "active": false }))).await;
    assert_eq!((s, &w["active"]), (StatusCode::OK, &json!(false)), "{w}");
    let (s, e) = send(&app, &admin, "PATCH", "/api/v1/notifications/webhooks/999999", Some(json!({ "active": true }))).await;
    assert_error(s, &e, 404, "NOT_FOUND");
    let (s, e) = send(&app, &admin, "GET", "/api/v1/notifications/deliveries?state=LOST", None).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    let (s, d) = send(&app, &admin, "DELETE", &format!("/api/v1/notifications/webhooks/{id}"), None).await;
    assert_eq!((s, &d["deleted"]), (StatusCode::OK, &json!(id)));
    let (s, e) = send(&app, &admin, "DELETE", &format!("/api/v1/notifications/webhooks/{id}"), None).await;
    assert_error(s, &e, 404, "NOT_FOUND");
    let audited: Vec<String> = sqlx::query_scalar("SELECT operation FROM audit_log WHERE operation LIKE 'WEBHOOK_%' ORDER BY id")
        .fetch_all(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(audited, ["WEBHOOK_CREATED", "WEBHOOK_UPDATED", "WEBHOOK_DELETED"]);
    assert!(docnum::server::audit::verify(&app.state.db).await.unwrap().ok);
}

#[tokio::test]
async fn what_waits_for_a_super_admin_is_the_reset_requests_of_others() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let admin2 = app.user_client("admin2", Role::SuperAdmin, &[]).await;
    let lcbp3 = app.project_id("LCBP3").await;
    let padmin = app.user_client("padmin1", Role::ProjectAdmin, &[lcbp3]).await;
    let number = reserve_and_confirm(&app, "สคฉ.3", "DOC-W1").await;
    let counter = counter_of(&app, &number).await;
    let waiting = |client: Client| {
        let app = &app;
        async move {
            let (s, w) = send(app, &client, "GET", "/api/v1/notifications/waiting", None).await;
            assert_eq!(s, StatusCode::OK, "{w}");
            w["resetRequests"].as_i64().unwrap()
        }
    };
    assert_eq!(waiting(admin2.clone()).await, 0);
    let (s, req) = send(
        &app,
        &admin,
        "POST",
        &format!("/api/v1/document-numbering/counters/{counter}/reset-requests"),
        Some(json!({ "newValue": 1, "reason": "ขอรีเซ็ตตัวนับปีใหม่" })),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{req}");
    assert_eq!(waiting(admin2.clone()).await, 1, "the other super admin may approve it");
    assert_eq!(waiting(admin.clone()).await, 0, "not one's own request: a reset needs a second person");
    assert_eq!(waiting(padmin.clone()).await, 0, "nothing waits for a project admin");
    let id = req["workflow"]["instancePublicId"].as_str().unwrap();
    let (s, _) = send(&app, &admin2, "POST", &format!("/api/v1/workflow/{id}/actions/REJECT"), Some(json!({ "comment": "ยังไม่ถึงเวลา" }))).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(waiting(admin2).await, 0);
    let kinds: Vec<String> = outbox(&app).await.into_iter().map(|(_, k, _)| k).collect();
    assert_eq!(kinds, ["NUMBER_CONFIRMED", "RESET_REQUESTED", "RESET_REJECTED"]);
}

#[tokio::test]
async fn a_refused_change_leaves_no_outbox_row() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let first = reserve_and_confirm(&app, "สคฉ.3", "DOC-R1").await;
    reserve_and_confirm(&app, "สคฉ.3", "DOC-R2").await;
    let counter = counter_of(&app, &first).await;
    let before = outbox(&app).await.len();
    assert_eq!(before, 2);
    let path = format!("/api/v1/document-numbering/counters/{counter}/reset-requests");
    // below the highest confirmed number: refused inside the transaction, rolled back
    let (s, e) = send(&app, &admin, "POST", &path, Some(json!({ "newValue": 1, "reason": "ขอรีเซ็ตตัวนับปีใหม่" }))).await;
    assert!(s.is_client_error(), "{s} {e}");
    assert_eq!(outbox(&app).await.len(), before);
    // a reason too short: refused before anything is written
    let (s, e) = send(&app, &admin, "POST", &path, Some(json!({ "newValue": 2, "reason": "สั้น" }))).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    // one pending request; a second one refused in its transaction
    let (s, r) = send(&app, &admin, "POST", &path, Some(json!({ "newValue": 2, "reason": "ขอรีเซ็ตตัวนับปีใหม่" }))).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let (s, e) = send(&app, &admin, "POST", &path, Some(json!({ "newValue": 2, "reason": "ขอรีเซ็ตตัวนับปีใหม่" }))).await;
    assert!(s.is_client_error(), "{s} {e}");
    // the requester may not approve their own request: refused, nothing written
    let id = r["workflow"]["instancePublicId"].as_str().unwrap();
    let (s, e) = send(&app, &admin, "POST", &format!("/api/v1/workflow/{id}/actions/APPROVE"), Some(json!({}))).await;
    assert_error(s, &e, 403, "FORBIDDEN");
    let kinds: Vec<String> = outbox(&app).await.into_iter().map(|(_, k, _)| k).collect();
    assert_eq!(kinds, ["NUMBER_CONFIRMED", "NUMBER_CONFIRMED", "RESET_REQUESTED"]);
    // a void of a number that is not confirmed: refused
    let (s, r) = app.reserve(&letter_to("สคฉ.3")).await;
    assert_eq!(s, StatusCode::OK);
    let (s, e) = send(
        &app,
        &admin,
        "POST",
        "/api/v1/document-numbering/void",
        Some(json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "documentNumber": r["documentNumber"], "reason": "ผิด" })),
    )
    .await;
    assert!(s.is_client_error(), "{s} {e}");
    assert_eq!(outbox(&app).await.len(), 3);
}

#[tokio::test]
async fn delivered_notifications_age_out_after_thirty_days_and_the_rest_stays() {
    use docnum::server::retention::{self, RetentionConfig};
    const DAY_MS: i64 = 86_400_000;
    let app = TestApp::spawn().await;
    let db = &app.state.db;
    let now = app.clock.now_ms();
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let (s, c) = send(&app, &admin, "POST", "/api/v1/notifications/webhooks", Some(json!({ "url": "http://127.0.0.1:9/hook" }))).await;
    assert_eq!(s, StatusCode::OK, "{c}");
    let hook = c["webhook"]["id"].as_i64().unwrap();
    // (event age in days, its delivery's state, delivered how many days ago)
    let rows = [(31, "DELIVERED", Some(31)), (40, "DELIVERED", Some(29)), (45, "FAILED", None), (2, "DELIVERED", Some(1)), (50, "PENDING", None)];
    for (i, (age, state, delivered)) in rows.iter().enumerate() {
        let at = now - age * DAY_MS;
        let outbox_id: i64 = sqlx::query_scalar(
            "INSERT INTO notification_outbox (event_id, kind, counter_id, project_id, payload, created_at, fanned_out) \
             VALUES (?, 'NUMBER_CONFIRMED', 1, 1, '{}', ?, 1) RETURNING id",
        )
        .bind(format!("00000000-0000-4000-8000-00000000000{i}"))
        .bind(at)
        .fetch_one(&db.writer)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO notification_deliveries (webhook_id, outbox_id, counter_id, state, attempts, next_attempt_at, lease_until, delivered_at, created_at) \
             VALUES (?, ?, 1, ?, 1, ?, 0, ?, ?)",
        )
        .bind(hook)
        .bind(outbox_id)
        .bind(*state)
        .bind(at)
        .bind(delivered.map(|d| now - d * DAY_MS))
        .bind(at)
        .execute(&db.writer)
        .await
        .unwrap();
    }
    let config = RetentionConfig::default();
    assert_eq!(config.notifications_days, 30);
    let dry = retention::count(db, now, &config).await.unwrap();
    assert_eq!((dry.counts.delivered_notifications, dry.counts.notification_events), (1, 0), "a dry run counts the events still delivered");
    let done = retention::prune(db, now, &config, "cli").await.unwrap();
    assert_eq!((done.counts.delivered_notifications, done.counts.notification_events), (1, 1));
    // the event delivered 29 days ago, the failed and pending ones, and the recent one stay
    let left: Vec<String> = sqlx::query_scalar("SELECT event_id FROM notification_outbox ORDER BY id").fetch_all(&db.pool).await.unwrap();
    assert_eq!(left.len(), 4);
    assert!(!left.iter().any(|e| e.ends_with("0000")), "{left:?}");
    assert_eq!(app.count("SELECT COUNT(*) FROM notification_deliveries").await, 4);
    let audited: String = sqlx::query_scalar("SELECT new_value FROM audit_log WHERE operation = 'PRUNE'").fetch_one(&db.pool).await.unwrap();
    let audited: Value = serde_json::from_str(&audited).unwrap();
    assert_eq!((&audited["deliveredNotifications"], &audited["notificationEvents"]), (&json!(1), &json!(1)), "{audited}");
}
