//! Every number's lifecycle is rows of `workflow_transitions` (docs/rules/numbering.md#the-lifecycle-of-a-number,
//! the `NUMBER` workflow), loaded once at start
//! and asked by the plans: a transition the table does not allow is refused — in the number's own words where docs/rules/api.md#errors
//! has them (ALREADY_CONFIRMED, …), else as the workflow engine refuses (409 WF_INVALID_TRANSITION) — and nothing
//! changes.

use docnum::contract::UserId;
use reqwest::StatusCode;
use serde_json::{json, Value};
use sqlx::Row;

use crate::common::*;
use crate::support::DocnumServer;

#[tokio::test]
async fn a_transition_the_table_does_not_allow_is_refused_with_its_code_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite://{}", dir.path().join("lifecycle.db").display());
    let db = docnum::server::db::Db::connect(&db_url).await.unwrap();
    db.migrate().await.unwrap();
    // an operator takes "cancel a reservation" out of the lifecycle
    let removed = sqlx::query("DELETE FROM workflow_transitions WHERE workflow_code = 'NUMBER' AND from_state = 'RESERVED' AND action = 'CANCEL'")
        .execute(&db.pool)
        .await
        .unwrap();
    assert_eq!(removed.rows_affected(), 1, "the lifecycle's rows are in the table");
    let server = DocnumServer::start(&db_url, &[]);
    let client = reqwest::Client::new();
    server.wait_healthy(&client).await;
    let (_, token) = docnum::server::auth::system::create_token(&db, "lifecycle", &[], UserId(1), 0).await.unwrap();
    let post =
        |path: &str, body: Value| client.post(format!("{}/api/v1/document-numbering/{path}", server.base)).bearer_auth(&token).json(&body).send();

    let reserved: Value = post("reserve", letter()).await.unwrap().json().await.unwrap();
    let reservation = reserved["token"].as_str().expect("a reservation token").to_string();
    let r = post("cancel", json!({ "token": reservation })).await.unwrap();
    let status = r.status();
    let body: Value = r.json().await.unwrap();
    assert_error(status, &body, 409, "WF_INVALID_TRANSITION");
    let row = sqlx::query("SELECT status FROM document_numbers WHERE token = ?").bind(&reservation).fetch_one(&db.pool).await.unwrap();
    assert_eq!(row.get::<String, _>(0), "RESERVED", "the refused cancel changed nothing");
    let cancels: i64 = sqlx::query("SELECT COUNT(*) FROM audit_log WHERE operation = 'CANCEL'").fetch_one(&db.pool).await.unwrap().get(0);
    assert_eq!(cancels, 0);

    // what the table still allows goes on; what it never allowed is refused in the number's own words
    let r = post("confirm", json!({ "token": reservation, "documentId": "DOC-LIFECYCLE-1" })).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = post("cancel", json!({ "token": reservation })).await.unwrap();
    let status = r.status();
    let body: Value = r.json().await.unwrap();
    assert_error(status, &body, 409, "ALREADY_CONFIRMED");
    let r = post("confirm", json!({ "token": reservation, "documentId": "DOC-LIFECYCLE-2" })).await.unwrap();
    let status = r.status();
    let body: Value = r.json().await.unwrap();
    assert_error(status, &body, 409, "ALREADY_CONFIRMED");
}

/// The workflow envelope (docs/rules/api.md#the-workflow-envelope) on every answer about a number, beside the fields
/// it always had: where the number is
/// in its lifecycle and what the caller may do next, from the table — never the service's own actions (expiry, the
/// release of a reset).
#[tokio::test]
async fn answers_about_a_number_carry_its_workflow_context() {
    let app = TestApp::spawn().await;
    // in any order
    let actions = |v: &Value| -> Vec<String> {
        let mut a: Vec<String> =
            v["workflow"]["availableActions"].as_array().expect("availableActions").iter().map(|a| a.as_str().unwrap().to_string()).collect();
        a.sort();
        a
    };
    // a staff member reserves: the reservation token names the instance; confirm or cancel are offered
    let staff = app.user_client("envelope-staff", docnum::contract::Role::Staff, &[]).await;
    let r = staff.post(app.url("/api/v1/document-numbering/reserve")).json(&letter()).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let reserved: Value = r.json().await.unwrap();
    assert_eq!(reserved["documentNumber"], "คคง.-สคฉ.3-0001-2568", "today's fields stay");
    assert_eq!(reserved["workflow"]["instancePublicId"], reserved["token"]);
    assert_eq!(reserved["workflow"]["currentState"], "RESERVED");
    assert_eq!(actions(&reserved), ["CANCEL", "CONFIRM"]);
    assert_eq!(reserved["workflow"]["canEdit"], true);
    assert_eq!(reserved["workflow"]["lastTransitionAt"].as_str().unwrap()[..10], be2568().to_rfc3339()[..10]);

    // confirmed by staff: revising is theirs, voiding is not
    let token = reserved["token"].as_str().unwrap();
    let r =
        staff.post(app.url("/api/v1/document-numbering/confirm")).json(&json!({ "token": token, "documentId": "DOC-ENV-1" })).send().await.unwrap();
    let confirmed: Value = r.json().await.unwrap();
    assert_eq!(confirmed["status"], "CONFIRMED");
    assert_eq!(confirmed["workflow"]["currentState"], "CONFIRMED");
    assert_eq!(confirmed["workflow"]["instancePublicId"], token);
    assert_eq!(actions(&confirmed), ["REVISE"]);
    // the same confirm again: the same answer, the same context
    let r =
        staff.post(app.url("/api/v1/document-numbering/confirm")).json(&json!({ "token": token, "documentId": "DOC-ENV-1" })).send().await.unwrap();
    let again: Value = r.json().await.unwrap();
    assert_eq!(again["workflow"], confirmed["workflow"]);

    // cancelled: nothing left to do
    let (_, second) = app.reserve(&letter()).await;
    let (s, cancelled) = app.post_json("/api/v1/document-numbering/cancel", &json!({ "token": second["token"] })).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(cancelled["workflow"]["currentState"], "CANCELLED");
    assert_eq!(actions(&cancelled), Vec::<String>::new());
    assert_eq!(cancelled["workflow"]["canEdit"], false);

    // generated for a document (no reservation: the number names the instance); a super admin may also void it
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let r = admin.post(app.url("/api/v1/documents/DOC-ENV-2/generate-number")).json(&letter()).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let generated: Value = r.json().await.unwrap();
    assert_eq!(generated["workflow"]["instancePublicId"], generated["documentNumber"]);
    assert_eq!(generated["workflow"]["currentState"], "CONFIRMED");
    assert_eq!(actions(&generated), ["REVISE", "VOID"]);

    // voided and replaced: the voided number's context, and the replacement's
    let void = json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "documentNumber": generated["documentNumber"],
        "reason": "ออกเลขผิดประเภทเอกสาร ต้องออกเลขใหม่" });
    let r = admin.post(app.url("/api/v1/document-numbering/void-and-replace")).json(&void).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let voided: Value = r.json().await.unwrap();
    assert_eq!(voided["workflow"]["currentState"], "VOID");
    assert_eq!(actions(&voided), Vec::<String>::new());
    assert_eq!(voided["replacement"]["workflow"]["currentState"], "CONFIRMED");
    assert_eq!(voided["replacement"]["workflow"]["instancePublicId"], voided["replacement"]["documentNumber"]);
}
