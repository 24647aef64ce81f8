//! Counter reset through the workflow engine, revise, void-and-replace and manual override, end to end over
//! HTTP on a real database (SQLite, or MariaDB with DOCNUM_TEST_DB=mysql). Every test ends with the whole-
//! database check: audit chains intact, no number twice, no unexplained gap.

use crate::common::*;
use docnum::contract::{ProjectId, Role, UserId};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

async fn send(app: &TestApp, client: &Client, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
    let url = app.url(path);
    let req = match method {
        "GET" => client.get(url),
        _ => client.post(url).json(&body.unwrap_or(json!({}))),
    };
    let r = req.send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn post(app: &TestApp, client: &Client, path: &str, body: Value) -> (StatusCode, Value) {
    send(app, client, "POST", path, Some(body)).await
}

async fn get(app: &TestApp, client: &Client, path: &str) -> (StatusCode, Value) {
    send(app, client, "GET", path, None).await
}

/// The bootstrap super admin and a second one.
async fn two_super_admins(app: &TestApp) -> (Client, Client) {
    let a = app.login("admin", ADMIN_PASSWORD).await;
    let b = app.user_client("admin2", Role::SuperAdmin, &[]).await;
    (a, b)
}

/// Reserves `n` letters; returns their tokens.
async fn reserve_letters(app: &TestApp, n: usize) -> Vec<String> {
    let mut tokens = Vec::new();
    for _ in 0..n {
        let (s, r) = app.reserve(&letter()).await;
        assert_eq!(s, StatusCode::OK, "{r}");
        tokens.push(r["token"].as_str().unwrap().to_string());
    }
    tokens
}

async fn confirm(app: &TestApp, token: &str, document_id: &str) {
    let (s, b) = app.post_json("/api/v1/document-numbering/confirm", &json!({ "token": token, "documentId": document_id })).await;
    assert_eq!(s, StatusCode::OK, "{b}");
}

async fn letter_counter(app: &TestApp) -> i64 {
    app.count("SELECT id FROM counters WHERE period = 'YEAR_2025' AND originator_id <> 0 ORDER BY id LIMIT 1").await
}

async fn last_number(app: &TestApp, counter: i64) -> i64 {
    app.count(&format!("SELECT last_number FROM counters WHERE id = {counter}")).await
}

/// The promises of docs/rules/numbering.md#what-is-never-done-twice hold: intact audit chains, no duplicate, no unexplained gap.
async fn assert_all_accounted_for(app: &TestApp) {
    assert!(docnum::server::audit::verify(&app.state.db).await.unwrap().ok, "audit chains verify");
    let report = docnum::server::numbering::check::check(&app.state.db, &[]).await.unwrap();
    assert!(report.ok, "{:?}", report.problems);
}

/// 20 Thai characters (60 bytes in UTF-8).
const REASON: &str = "ขอรีเซ็ตตัวนับปีใหม่";

fn thai(n: usize) -> String {
    "รีเซ็ตตัวนับตามมติที่ประชุมคณะกรรมการโครงการ".chars().cycle().take(n).collect()
}

#[tokio::test]
async fn two_super_admins_reset_a_counter_and_the_numbers_restart() {
    let app = TestApp::spawn().await;
    let (a, b) = two_super_admins(&app).await;
    let tokens = reserve_letters(&app, 4).await;
    confirm(&app, &tokens[0], "DOC-1").await;
    let (s, _) = app.post_json("/api/v1/document-numbering/cancel", &json!({ "token": tokens[2] })).await;
    assert_eq!(s, StatusCode::OK);
    let counter = letter_counter(&app).await;
    assert_eq!(REASON.chars().count(), 20);

    let (s, req) =
        post(&app, &a, &format!("/api/v1/document-numbering/counters/{counter}/reset-requests"), json!({ "newValue": 1, "reason": REASON })).await;
    assert_eq!(s, StatusCode::OK, "{req}");
    assert_eq!(req["data"]["newValue"], 1);
    assert_eq!(req["data"]["previousValue"], 4);
    assert_eq!(req["workflow"]["currentState"], "PENDING");
    assert_eq!(req["workflow"]["availableActions"], json!([]), "the requester may not decide");
    assert_eq!(req["workflow"]["canEdit"], true);
    assert!(req["workflow"]["lastTransitionAt"].as_str().unwrap().ends_with('Z'));
    let id = req["workflow"]["instancePublicId"].as_str().unwrap().to_string();
    assert_eq!(last_number(&app, counter).await, 4, "nothing changes before approval");

    // the other admin sees the buttons, from the server
    let (s, list) = get(&app, &b, "/api/v1/workflow/reset-requests?state=PENDING").await;
    assert_eq!(s, StatusCode::OK, "{list}");
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["workflow"]["availableActions"], json!(["APPROVE", "REJECT"]));

    let (s, done) = post(&app, &b, &format!("/api/v1/workflow/{id}/actions/APPROVE"), json!({ "comment": "ตรวจสอบแล้ว" })).await;
    assert_eq!(s, StatusCode::OK, "{done}");
    assert_eq!(done["workflow"]["currentState"], "APPROVED");
    assert_eq!(done["workflow"]["availableActions"], json!([]));
    assert_eq!(done["workflow"]["canEdit"], false);
    let history: Vec<&str> = done["data"]["history"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(history, ["REQUEST", "APPROVE"]);

    // the counter restarts after the confirmed number; the never-confirmed ones were released for reuse
    assert_eq!(last_number(&app, counter).await, 1);
    let (s, next) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK, "{next}");
    assert_eq!(next["documentNumber"], "คคง.-สคฉ.3-0002-2568");
    assert_eq!(app.count("SELECT COUNT(*) FROM released_numbers").await, 3);
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'RESET_EXECUTE' AND status = 'RELEASED'").await, 3);
    assert_eq!(
        app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'RESET_EXECUTE' AND status = 'SUCCESS' AND old_value = '4' AND new_value = '1'")
            .await,
        1,
        "the previous value is recorded"
    );
    for op in ["RESET_REQUEST", "RESET_APPROVE"] {
        assert_eq!(app.count(&format!("SELECT COUNT(*) FROM audit_log WHERE operation = '{op}' AND counter_id = {counter}")).await, 1, "{op}");
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM workflow_events").await, 2);
    // a released reservation is gone: its token no longer confirms
    let (s, b2) = app.post_json("/api/v1/document-numbering/confirm", &json!({ "token": tokens[1], "documentId": "DOC-2" })).await;
    assert_error(s, &b2, 404, "NOT_FOUND");

    // decided once: a second decision is refused by the state, not by the client
    let (s, again) = post(&app, &b, &format!("/api/v1/workflow/{id}/actions/REJECT"), json!({})).await;
    assert_error(s, &again, 409, "WF_INVALID_TRANSITION");

    // the counter browser shows it
    let project = app.project_id("LCBP3").await;
    let (s, counters) = get(&app, &a, &format!("/api/v1/document-numbering/counters?projectId={project}&year=2568")).await;
    assert_eq!(s, StatusCode::OK, "{counters}");
    let c = counters.as_array().unwrap().iter().find(|c| c["id"] == counter).expect("listed");
    assert_eq!(c["lastNumber"], 2);
    assert_eq!(c["maxNumber"], 9999);
    assert_eq!(c["originatorCode"], "คคง.");
    assert!((c["utilization"].as_f64().unwrap() - 2.0 / 9999.0).abs() < 1e-9);
    let (s, numbers) = get(&app, &a, &format!("/api/v1/document-numbering/counters/{counter}/numbers")).await;
    assert_eq!(s, StatusCode::OK, "{numbers}");
    let statuses: Vec<&str> = numbers["numbers"].as_array().unwrap().iter().map(|n| n["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["CONFIRMED", "RESERVED"]);
    // each with what this super admin may do to it here, from the lifecycle's table: a confirmed number is revised
    // or voided; a held one offers nothing without its token
    let actions: Vec<&Value> = numbers["numbers"].as_array().unwrap().iter().map(|n| &n["availableActions"]).collect();
    assert_eq!(actions, [&json!(["REVISE", "VOID"]), &json!([])]);
    assert_eq!(numbers["gaps"], json!([]));
    assert_eq!(numbers["released"].as_array().unwrap().len(), 3);
    assert_all_accounted_for(&app).await;
}

#[tokio::test]
async fn the_requester_cannot_approve_their_own_request() {
    let app = TestApp::spawn().await;
    let (a, b) = two_super_admins(&app).await;
    reserve_letters(&app, 2).await;
    let counter = letter_counter(&app).await;
    let (s, req) = post(&app, &a, &format!("/api/v1/document-numbering/counters/{counter}/reset-requests"), json!({ "reason": REASON })).await;
    assert_eq!(s, StatusCode::OK, "{req}");
    assert_eq!(req["data"]["newValue"], 0, "default value");
    let id = req["workflow"]["instancePublicId"].as_str().unwrap().to_string();

    for action in ["APPROVE", "REJECT", "approve"] {
        let (s, e) = post(&app, &a, &format!("/api/v1/workflow/{id}/actions/{action}"), json!({})).await;
        assert_error(s, &e, 403, "FORBIDDEN");
    }
    let (_, one) = get(&app, &a, &format!("/api/v1/workflow/{id}")).await;
    assert_eq!(one["workflow"]["currentState"], "PENDING");
    assert_eq!(last_number(&app, counter).await, 2);

    // a second request for the same counter waits for the first
    let (s, e) = post(&app, &b, &format!("/api/v1/document-numbering/counters/{counter}/reset-requests"), json!({ "reason": REASON })).await;
    assert_error(s, &e, 409, "RESET_ALREADY_PENDING");
    // an action the workflow does not have
    let (s, e) = post(&app, &b, &format!("/api/v1/workflow/{id}/actions/EXPLODE"), json!({})).await;
    assert_error(s, &e, 409, "WF_INVALID_TRANSITION");

    let (s, rejected) = post(&app, &b, &format!("/api/v1/workflow/{id}/actions/REJECT"), json!({ "comment": "ไม่อนุมัติ" })).await;
    assert_eq!(s, StatusCode::OK, "{rejected}");
    assert_eq!(rejected["workflow"]["currentState"], "REJECTED");
    assert_eq!(last_number(&app, counter).await, 2, "a rejected reset changes nothing");
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'RESET_REJECT'").await, 1);
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation IN ('RESET_APPROVE', 'RESET_EXECUTE')").await, 0);

    let (s, e) = post(&app, &b, "/api/v1/workflow/7f1c1f5e-3b7a-4c43-9a53-2f1e1d9c0a11/actions/APPROVE", json!({})).await;
    assert_error(s, &e, 404, "NOT_FOUND");
    // the workflow table refuses to rewrite history
    assert!(sqlx::query("UPDATE workflow_events SET action = 'APPROVE'").execute(&app.state.db.writer).await.is_err());
    assert!(sqlx::query("DELETE FROM workflow_events").execute(&app.state.db.writer).await.is_err());
    assert_all_accounted_for(&app).await;
}

#[tokio::test]
async fn a_reset_reason_counts_unicode_characters_not_bytes() {
    let app = TestApp::spawn().await;
    let (a, _) = two_super_admins(&app).await;
    reserve_letters(&app, 1).await;
    let counter = letter_counter(&app).await;
    let path = format!("/api/v1/document-numbering/counters/{counter}/reset-requests");

    let short = thai(19);
    assert!(short.len() > 20, "19 Thai characters are {} bytes", short.len());
    let (s, e) = post(&app, &a, &path, json!({ "reason": short })).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    assert!(e["message"].as_str().unwrap().contains("20"), "{e}");
    let (s, e) = post(&app, &a, &path, json!({ "reason": format!("   {short}   ") })).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    assert_eq!(app.count("SELECT COUNT(*) FROM workflow_instances").await, 0);

    let (s, ok) = post(&app, &a, &path, json!({ "reason": thai(20) })).await;
    assert_eq!(s, StatusCode::OK, "{ok}");
    assert_eq!(ok["data"]["reason"], thai(20));

    // other bad input: negative value, above the counter, unknown counter, wrong types
    let (s, e) = post(&app, &a, "/api/v1/document-numbering/counters/999999/reset-requests", json!({ "reason": REASON })).await;
    assert_error(s, &e, 404, "NOT_FOUND");
    let (s, e) = post(&app, &a, &path, json!({ "newValue": -1, "reason": REASON })).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    let (s, e) = post(&app, &a, &path, json!({ "newValue": "zero", "reason": REASON })).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    assert_all_accounted_for(&app).await;
}

#[tokio::test]
async fn a_value_below_the_highest_confirmed_number_is_refused() {
    let app = TestApp::spawn().await;
    let (a, b) = two_super_admins(&app).await;
    let tokens = reserve_letters(&app, 3).await;
    confirm(&app, &tokens[1], "DOC-2").await;
    let counter = letter_counter(&app).await;
    let path = format!("/api/v1/document-numbering/counters/{counter}/reset-requests");

    let (s, e) = post(&app, &a, &path, json!({ "newValue": 1, "reason": REASON })).await;
    assert_error(s, &e, 409, "RESET_BELOW_CONFIRMED");
    // above the last number: raising a counter is an override, not a reset
    let (s, e) = post(&app, &a, &path, json!({ "newValue": 5, "reason": REASON })).await;
    assert_error(s, &e, 409, "RESET_ABOVE_LAST");

    let (s, req) = post(&app, &a, &path, json!({ "newValue": 2, "reason": REASON })).await;
    assert_eq!(s, StatusCode::OK, "{req}");
    let id = req["workflow"]["instancePublicId"].as_str().unwrap().to_string();
    // number 3 is confirmed while the request waits: approving now would issue it twice
    confirm(&app, &tokens[2], "DOC-3").await;
    let (s, e) = post(&app, &b, &format!("/api/v1/workflow/{id}/actions/APPROVE"), json!({})).await;
    assert_error(s, &e, 409, "RESET_BELOW_CONFIRMED");
    let (_, one) = get(&app, &b, &format!("/api/v1/workflow/{id}")).await;
    assert_eq!(one["workflow"]["currentState"], "PENDING", "the failed approval rolled back with its effects");
    assert_eq!(one["workflow"]["availableActions"], json!(["APPROVE", "REJECT"]));
    assert_eq!(last_number(&app, counter).await, 3);
    assert_eq!(app.count("SELECT COUNT(*) FROM workflow_events").await, 1);
    assert_all_accounted_for(&app).await;
}

#[tokio::test]
async fn a_reset_during_heavy_reserving_never_issues_a_number_twice() {
    let app = TestApp::spawn().await;
    let (a, b) = two_super_admins(&app).await;
    let tokens = reserve_letters(&app, 5).await;
    for t in &tokens[..2] {
        confirm(&app, t, &format!("DOC-{t}")).await;
    }
    let counter = letter_counter(&app).await;
    let (_, req) =
        post(&app, &a, &format!("/api/v1/document-numbering/counters/{counter}/reset-requests"), json!({ "newValue": 2, "reason": REASON })).await;
    let id = req["workflow"]["instancePublicId"].as_str().unwrap().to_string();
    let body = letter();
    let reserves = (0..60).map(|_| app.reserve(&body));
    let action = format!("/api/v1/workflow/{id}/actions/APPROVE");
    let approve = post(&app, &b, &action, json!({}));
    let (results, (s, done)) = tokio::join!(futures::future::join_all(reserves), approve);
    assert_eq!(s, StatusCode::OK, "{done}");
    assert!(results.iter().all(|(s, _)| *s == StatusCode::OK));
    assert_all_accounted_for(&app).await;
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers WHERE status = 'CONFIRMED'").await, 2);
}

#[tokio::test]
async fn staff_get_403_from_every_admin_endpoint_and_nothing_changes() {
    let app = TestApp::spawn().await;
    let (a, _) = two_super_admins(&app).await;
    let staff = app.user_client("somchai", Role::Staff, &[]).await;
    let tokens = reserve_letters(&app, 2).await;
    confirm(&app, &tokens[0], "DOC-1").await;
    let counter = letter_counter(&app).await;
    let (_, req) =
        post(&app, &a, &format!("/api/v1/document-numbering/counters/{counter}/reset-requests"), json!({ "reason": REASON, "newValue": 1 })).await;
    let id = req["workflow"]["instancePublicId"].as_str().unwrap().to_string();
    // created before the counts: creating a user and granting a right are audit rows of their own
    let project = app.project_id("LCBP3").await;
    let padmin = app.user_client("padmin", Role::ProjectAdmin, &[project]).await;
    let tables = ["document_numbers", "audit_log", "workflow_instances", "workflow_events", "counter_reset_requests", "released_numbers"];
    let mut before = Vec::new();
    for t in tables {
        before.push(app.count(&format!("SELECT COUNT(*) FROM {t}")).await);
    }
    let number =
        json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "documentNumber": "คคง.-สคฉ.3-0001-2568", "reason": "ยกเลิกเพราะพิมพ์ผิด" });

    let calls: Vec<(&str, String, Option<Value>, &str)> = vec![
        ("GET", "/api/v1/document-numbering/counters".into(), None, "FORBIDDEN"),
        ("GET", format!("/api/v1/document-numbering/counters/{counter}/numbers"), None, "FORBIDDEN"),
        ("POST", format!("/api/v1/document-numbering/counters/{counter}/reset-requests"), Some(json!({ "reason": REASON })), "FORBIDDEN"),
        ("GET", "/api/v1/workflow/reset-requests".into(), None, "FORBIDDEN"),
        ("GET", format!("/api/v1/workflow/{id}"), None, "FORBIDDEN"),
        ("POST", format!("/api/v1/workflow/{id}/actions/APPROVE"), Some(json!({})), "FORBIDDEN"),
        ("POST", format!("/api/v1/workflow/{id}/actions/REJECT"), Some(json!({})), "FORBIDDEN"),
        ("POST", "/api/v1/document-numbering/void-and-replace".into(), Some(number.clone()), "FORBIDDEN"),
        ("POST", "/api/v1/document-numbering/manual-override".into(), Some(json!({ "counterId": counter, "value": 50, "reason": "x" })), "NB007"),
        (
            "POST",
            "/api/v1/document-numbering/manual-override".into(),
            Some(json!({ "counterId": counter, "documentNumber": "คคง.-สคฉ.3-0009-2568", "reason": "x" })),
            "NB007",
        ),
    ];
    for (method, path, body, code) in &calls {
        let (s, e) = send(&app, &staff, method, path, body.clone()).await;
        assert_error(s, &e, 403, code);
    }
    // a machine client is not a super admin either
    let r = app
        .client
        .post(app.url("/api/v1/document-numbering/manual-override"))
        .bearer_auth(&app.token)
        .json(&json!({ "counterId": counter, "value": 50, "reason": "x" }))
        .send()
        .await
        .unwrap();
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 403, "NB007");
    // a project admin is not one either, but may browse their project's counters
    let (s, e) = post(&app, &padmin, "/api/v1/document-numbering/manual-override", json!({ "counterId": counter, "value": 50, "reason": "x" })).await;
    assert_error(s, &e, 403, "NB007");
    let (s, e) = post(&app, &padmin, &format!("/api/v1/workflow/{id}/actions/APPROVE"), json!({})).await;
    assert_error(s, &e, 403, "FORBIDDEN");
    let (s, list) = get(&app, &padmin, "/api/v1/document-numbering/counters").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(list.as_array().unwrap().len(), 1);
    let other = app.project_id("LCBP3-C1").await;
    let (s, e) = get(&app, &padmin, &format!("/api/v1/document-numbering/counters?projectId={other}")).await;
    assert_error(s, &e, 403, "FORBIDDEN");

    for (t, n) in tables.iter().zip(before) {
        assert_eq!(app.count(&format!("SELECT COUNT(*) FROM {t}")).await, n, "{t} unchanged");
    }
    assert_eq!(last_number(&app, counter).await, 2);
    let (_, one) = get(&app, &a, &format!("/api/v1/workflow/{id}")).await;
    assert_eq!(one["workflow"]["currentState"], "PENDING");
    assert_all_accounted_for(&app).await;
}

fn rfa() -> Value {
    json!({ "projectCode": "LCBP3-C2", "correspondenceTypeCode": "RFA", "originatorCode": "ผรม.1", "disciplineCode": "TER", "rfaTypeCode": "RPT" })
}

fn rfa_number(number: &str) -> Value {
    json!({ "projectCode": "LCBP3-C2", "correspondenceTypeCode": "RFA", "documentNumber": number })
}

#[tokio::test]
async fn revise_issues_the_next_revision_on_the_same_sequence() {
    let app = TestApp::spawn().await;
    let staff = app.user_client("somchai", Role::Staff, &[]).await;
    let (s, g) = app.post_json("/api/v1/documents/RFA-1/generate-number", &rfa()).await;
    assert_eq!(s, StatusCode::OK, "{g}");
    assert_eq!(g["documentNumber"], "LCBP3-C2-RFA-TER-RPT-0001-A");

    // a document controller revises, like generate
    let (s, b) = post(&app, &staff, "/api/v1/document-numbering/revise", rfa_number("LCBP3-C2-RFA-TER-RPT-0001-A")).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["documentNumber"], "LCBP3-C2-RFA-TER-RPT-0001-B");
    assert_eq!(b["revisedFrom"], "LCBP3-C2-RFA-TER-RPT-0001-A");
    assert_eq!((b["sequence"].clone(), b["revision"].clone(), b["documentId"].clone()), (json!(1), json!("B"), json!("RFA-1")));
    // revising an older revision continues after the newest one
    let (s, c) = app.post_json("/api/v1/document-numbering/revise", &rfa_number("LCBP3-C2-RFA-TER-RPT-0001-A")).await;
    assert_eq!(s, StatusCode::OK, "{c}");
    assert_eq!(c["documentNumber"], "LCBP3-C2-RFA-TER-RPT-0001-C");
    assert_eq!(app.count("SELECT last_number FROM counters WHERE rfa_type_id <> 0").await, 1, "no counter consumed");
    assert_eq!(
        app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'GENERATE' AND metadata LIKE '%revisedFrom%LCBP3-C2-RFA-TER-RPT-0001-A%'").await,
        2
    );
    // the next new RFA continues the sequence
    let (_, next) = app.post_json("/api/v1/documents/RFA-2/generate-number", &rfa()).await;
    assert_eq!(next["documentNumber"], "LCBP3-C2-RFA-TER-RPT-0002-A");

    // errors: a template without {REV}, an unconfirmed number, an unknown number, another project's token
    let (s, g) = app.post_json("/api/v1/documents/L-1/generate-number", &letter()).await;
    assert_eq!(s, StatusCode::OK);
    let letter_number = json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "documentNumber": g["documentNumber"] });
    let (s, e) = app.post_json("/api/v1/document-numbering/revise", &letter_number).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    let (_, reserved) = app.reserve(&rfa()).await;
    let (s, e) = app.post_json("/api/v1/document-numbering/revise", &rfa_number(reserved["documentNumber"].as_str().unwrap())).await;
    assert_error(s, &e, 409, "NOT_CONFIRMED");
    let (s, e) = app.post_json("/api/v1/document-numbering/revise", &rfa_number("LCBP3-C2-RFA-TER-RPT-0099-A")).await;
    assert_error(s, &e, 404, "NOT_FOUND");
    let c1 = app.project_id("LCBP3-C1").await;
    let (_, scoped) = docnum::server::auth::system::create_token(&app.state.db, "c1 only", &[ProjectId(c1)], UserId(1), 0).await.unwrap();
    let r = app
        .client
        .post(app.url("/api/v1/document-numbering/revise"))
        .bearer_auth(&scoped)
        .json(&rfa_number("LCBP3-C2-RFA-TER-RPT-0001-A"))
        .send()
        .await
        .unwrap();
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 403, "FORBIDDEN");
    assert_all_accounted_for(&app).await;
}

#[tokio::test]
async fn void_and_replace_voids_a_confirmed_number_and_links_its_replacement() {
    let app = TestApp::spawn().await;
    let (a, _) = two_super_admins(&app).await;
    let (_, g) = app.post_json("/api/v1/documents/DOC-9/generate-number", &letter()).await;
    assert_eq!(g["documentNumber"], "คคง.-สคฉ.3-0001-2568");
    reserve_letters(&app, 1).await; // 0002 held by someone else
    let voided = json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "documentNumber": "คคง.-สคฉ.3-0001-2568", "reason": "ออกเลขผิดประเภทเอกสาร" });

    let mut no_reason = voided.clone();
    no_reason.as_object_mut().unwrap().remove("reason");
    let (s, e) = post(&app, &a, "/api/v1/document-numbering/void-and-replace", no_reason).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");

    let (s, r) = post(&app, &a, "/api/v1/document-numbering/void-and-replace", voided.clone()).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["voided"], "คคง.-สคฉ.3-0001-2568");
    assert_eq!(r["status"], "VOID");
    assert_eq!(r["replacement"]["documentNumber"], "คคง.-สคฉ.3-0003-2568");
    assert_eq!(r["replacement"]["replaces"], "คคง.-สคฉ.3-0001-2568");
    assert_eq!(r["replacement"]["documentId"], "DOC-9");
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers WHERE status = 'VOID' AND cancel_reason = 'ออกเลขผิดประเภทเอกสาร'").await, 1);
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'VOID' AND metadata LIKE '%replacedBy%0003%'").await, 1);
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'GENERATE' AND metadata LIKE '%replaces%0001%'").await, 1);
    // the document's number is now the replacement
    let (_, again) = app.post_json("/api/v1/documents/DOC-9/generate-number", &letter()).await;
    assert_eq!(again["documentNumber"], "คคง.-สคฉ.3-0003-2568");

    // a void number cannot be voided again; a reservation is cancelled, not voided
    let (s, e) = post(&app, &a, "/api/v1/document-numbering/void-and-replace", voided).await;
    assert_error(s, &e, 409, "NOT_CONFIRMED");
    let reserved = json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "documentNumber": "คคง.-สคฉ.3-0002-2568", "reason": "ทดสอบ" });
    let (s, e) = post(&app, &a, "/api/v1/document-numbering/void-and-replace", reserved).await;
    assert_error(s, &e, 409, "NOT_CONFIRMED");
    // a void number keeps its place: a reset may not go below it
    let counter = letter_counter(&app).await;
    let (s, e) =
        post(&app, &a, &format!("/api/v1/document-numbering/counters/{counter}/reset-requests"), json!({ "newValue": 0, "reason": REASON })).await;
    assert_error(s, &e, 409, "RESET_BELOW_CONFIRMED");
    assert_all_accounted_for(&app).await;
}

#[tokio::test]
async fn manual_override_registers_legacy_numbers_and_moves_a_counter_forward() {
    let app = TestApp::spawn().await;
    let (a, _) = two_super_admins(&app).await;
    reserve_letters(&app, 1).await;
    let counter = letter_counter(&app).await;
    let path = "/api/v1/document-numbering/manual-override";
    let legacy = |n: &str| json!({ "counterId": counter, "documentNumber": n, "documentId": "OLD-1", "reason": "เลขที่ออกด้วยมือก่อนใช้ระบบ" });

    let (s, r) = post(&app, &a, path, legacy("คคง.-สคฉ.3-0005-2568")).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["registered"]["sequence"], 5);
    assert_eq!((r["previousLastNumber"].clone(), r["lastNumber"].clone(), r["skipped"].clone()), (json!(1), json!(5), json!(3)));
    // below the counter, in a sequence nobody holds
    let (s, r) = post(&app, &a, path, legacy("คคง.-สคฉ.3-0003-2568")).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["lastNumber"], 5);

    let (s, e) = post(&app, &a, path, legacy("คคง.-สคฉ.3-0005-2568")).await;
    assert_error(s, &e, 409, "NB005");
    let (s, e) = post(&app, &a, path, legacy("คคง.-สคฉ.3-0001-2568")).await;
    assert_error(s, &e, 409, "NB005");
    for bad in ["not a number", "คคง.-สคฉ.3-00x5-2568", "คคง.-สคฉ.3-0000-2568", "คคง.-กทท.-0007-2568", "คคง.-สคฉ.3-0007-2567"]
    {
        let (s, e) = post(&app, &a, path, legacy(bad)).await;
        assert_error(s, &e, 400, "NB006");
    }
    let (s, e) = post(&app, &a, path, json!({ "counterId": counter, "documentNumber": "คคง.-สคฉ.3-0008-2568", "value": 3, "reason": "x" })).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");

    // set the counter forward; never backward (that is a reset)
    let (s, r) = post(&app, &a, path, json!({ "counterId": counter, "value": 10, "reason": "ต่อจากเลขในสมุดทะเบียน" })).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!((r["lastNumber"].clone(), r["skipped"].clone()), (json!(10), json!(5)));
    let (s, e) = post(&app, &a, path, json!({ "counterId": counter, "value": 4, "reason": "ลดค่า" })).await;
    assert_error(s, &e, 409, "OVERRIDE_BELOW_ISSUED");
    // beyond what the counter's template can number ({SEQ:4}: 9999)
    let (s, e) = post(&app, &a, path, json!({ "counterId": counter, "value": 10_000, "reason": "เกิน" })).await;
    assert_error(s, &e, 409, "NB002");
    let (s, next) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(next["documentNumber"], "คคง.-สคฉ.3-0011-2568");

    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'MANUAL_OVERRIDE' AND status = 'CONFIRMED'").await, 2);
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'MANUAL_OVERRIDE' AND status = 'SKIPPED'").await, 8);
    assert_eq!(
        app.count(
            "SELECT COUNT(*) FROM audit_log WHERE operation = 'MANUAL_OVERRIDE' AND status = 'SUCCESS' AND old_value = '5' AND new_value = '10'"
        )
        .await,
        1
    );
    // every missing sequence is explained in the counter browser
    let (_, numbers) = get(&app, &a, &format!("/api/v1/document-numbering/counters/{counter}/numbers?limit=100")).await;
    let gaps = numbers["gaps"].as_array().unwrap();
    assert_eq!(gaps.iter().map(|g| g["sequence"].as_i64().unwrap()).collect::<Vec<_>>(), [2, 4, 6, 7, 8, 9, 10]);
    assert!(gaps.iter().all(|g| g["explanation"]["operation"] == "MANUAL_OVERRIDE"), "{gaps:?}");
    assert_all_accounted_for(&app).await;
}

#[tokio::test]
async fn two_approvers_at_once_decide_exactly_once() {
    let app = TestApp::spawn().await;
    let (a, b) = two_super_admins(&app).await;
    let c = app.user_client("admin3", Role::SuperAdmin, &[]).await;
    let tokens = reserve_letters(&app, 3).await;
    let (s, _) = app.post_json("/api/v1/document-numbering/cancel", &json!({ "token": tokens[2] })).await;
    assert_eq!(s, StatusCode::OK);
    let counter = letter_counter(&app).await;
    let (_, req) =
        post(&app, &a, &format!("/api/v1/document-numbering/counters/{counter}/reset-requests"), json!({ "newValue": 0, "reason": REASON })).await;
    let id = req["workflow"]["instancePublicId"].as_str().unwrap().to_string();
    let (approve, reject) = (format!("/api/v1/workflow/{id}/actions/APPROVE"), format!("/api/v1/workflow/{id}/actions/REJECT"));
    let ((s1, r1), (s2, r2)) = tokio::join!(post(&app, &b, &approve, json!({})), post(&app, &c, &reject, json!({})));
    let winners = [s1, s2].iter().filter(|s| **s == StatusCode::OK).count();
    assert_eq!(winners, 1, "{r1} {r2}");
    let loser = if s1 == StatusCode::OK { (s2, r2) } else { (s1, r1) };
    assert_eq!(loser.0, StatusCode::CONFLICT, "{}", loser.1);
    assert!(["WF_VERSION_CONFLICT", "WF_INVALID_TRANSITION"].contains(&loser.1["code"].as_str().unwrap()), "{}", loser.1);
    assert_eq!(app.count("SELECT COUNT(*) FROM workflow_events").await, 2);
    let decided = app.count("SELECT COUNT(*) FROM audit_log WHERE operation IN ('RESET_APPROVE', 'RESET_REJECT')").await;
    assert_eq!(decided, 1);
    let expected_last = if s1 == StatusCode::OK { 0 } else { 3 };
    assert_eq!(last_number(&app, counter).await, expected_last);
    assert_all_accounted_for(&app).await;
}

/// docs/rules/numbering.md#audit-and-retention: failed administrative operations are in the error log with who and what.
#[tokio::test]
async fn failed_admin_operations_are_in_the_error_log_with_who_and_what() {
    let app = TestApp::spawn().await;
    let (admin, _) = two_super_admins(&app).await;
    let (s, g) = app.post_json("/api/v1/documents/L-1/generate-number", &letter()).await;
    assert_eq!(s, StatusCode::OK, "{g}");
    let number = g["documentNumber"].as_str().unwrap().to_string();
    let letter_number = json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "documentNumber": number });
    // revise: a LETTER template shows no {REV}
    let (s, e) = app.post_json("/api/v1/document-numbering/revise", &letter_number).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    // void-and-replace without a reason
    let mut void = letter_number.clone();
    void["reason"] = json!("   ");
    let (s, e) = post(&app, &admin, "/api/v1/document-numbering/void-and-replace", void).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");

    let mut rows = Vec::new();
    for _ in 0..50 {
        use sqlx::Row;
        // MariaDB hands its MEDIUMTEXT over as bytes
        let text =
            |row: &sqlx::any::AnyRow, i: usize| row.try_get::<String, _>(i).unwrap_or_else(|_| String::from_utf8(row.get::<Vec<u8>, _>(i)).unwrap());
        let read = sqlx::query("SELECT error_type, context FROM error_log ORDER BY id").fetch_all(&app.state.db.pool).await.unwrap();
        rows = read.iter().map(|r| (text(r, 0), text(r, 1))).collect::<Vec<(String, String)>>();
        if rows.len() >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(rows.len(), 2, "{rows:?}");
    // each error is written by a task of its own: the two rows may land in either order
    assert!(rows.iter().all(|(error_type, _)| error_type == "VALIDATION_ERROR"), "{rows:?}");
    let contexts: Vec<Value> = rows.iter().map(|(_, c)| serde_json::from_str(c).unwrap()).collect();
    let of = |operation: &str| contexts.iter().find(|c| c["context"]["operation"] == json!(operation)).cloned();
    let revise = of("REVISE").unwrap_or_else(|| panic!("no REVISE row: {rows:?}"));
    let void = of("VOID_REPLACE").unwrap_or_else(|| panic!("no VOID_REPLACE row: {rows:?}"));
    assert_eq!(revise["caller"], json!("token:tests"), "{revise}");
    assert_eq!(revise["context"]["request"]["number"]["documentNumber"], json!(number));
    assert_eq!(void["caller"], json!("admin"), "the super admin who tried: {void}");
}

#[tokio::test]
async fn a_super_admin_voids_a_confirmed_number_without_a_replacement() {
    let app = TestApp::spawn().await;
    let (admin, _) = two_super_admins(&app).await;
    let staff = app.user_client("somchai", Role::Staff, &[]).await;
    let (s, g) = app.post_json("/api/v1/documents/RFA-7/generate-number", &rfa()).await;
    assert_eq!(s, StatusCode::OK, "{g}");
    let number = g["documentNumber"].as_str().unwrap().to_string();
    let void = |reason: Option<&str>| {
        let mut body = rfa_number(&number);
        if let Some(r) = reason {
            body["reason"] = json!(r);
        }
        body
    };
    let numbers_before = app.count("SELECT COUNT(*) FROM document_numbers").await;

    let (s, e) = post(&app, &staff, "/api/v1/document-numbering/void", void(Some("พิมพ์ผิด"))).await;
    assert_error(s, &e, 403, "FORBIDDEN");
    let (s, e) = post(&app, &admin, "/api/v1/document-numbering/void", void(None)).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    let mut unknown = rfa_number("LCBP3-C2-RFA-TER-RPT-0999-A");
    unknown["reason"] = json!("ไม่มีเลขนี้");
    let (s, e) = post(&app, &admin, "/api/v1/document-numbering/void", unknown).await;
    assert_error(s, &e, 404, "NOT_FOUND");

    let (s, v) = post(&app, &admin, "/api/v1/document-numbering/void", void(Some("เอกสารถูกยกเลิก"))).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!((&v["documentNumber"], &v["status"], &v["workflow"]["currentState"]), (&json!(number), &json!("VOID"), &json!("VOID")));
    // on record, voided, with its reason; nothing issued in its place
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, numbers_before);
    assert_eq!(app.count(&format!("SELECT COUNT(*) FROM document_numbers WHERE number = '{number}' AND status = 'VOID'")).await, 1);
    assert_eq!(app.count(&format!("SELECT COUNT(*) FROM audit_log WHERE operation = 'VOID' AND document_number = '{number}'")).await, 1);
    // a voided number is voided once; a reserved one is not confirmed, so it cannot be voided
    let (s, e) = post(&app, &admin, "/api/v1/document-numbering/void", void(Some("อีกครั้ง"))).await;
    assert_eq!((s, &e["code"]), (StatusCode::CONFLICT, &json!("NOT_CONFIRMED")), "{e}");
    let (_, r) = app.reserve(&rfa()).await;
    let (s, e) = post(&app, &admin, "/api/v1/document-numbering/void", rfa_number(r["documentNumber"].as_str().unwrap())).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "no reason: {e}");
    let mut reserved = rfa_number(r["documentNumber"].as_str().unwrap());
    reserved["reason"] = json!("ยังไม่ยืนยัน");
    let (s, e) = post(&app, &admin, "/api/v1/document-numbering/void", reserved).await;
    assert_eq!(s, StatusCode::CONFLICT, "{e}");
    // its sequence is never issued again
    assert_eq!(r["sequence"], 2, "{r}");
    assert_all_accounted_for(&app).await;
}
