//! Every number's lifecycle is rows of `workflow_transitions` (SPEC §9, the `NUMBER` workflow), loaded once at start
//! and asked by the plans: a transition the table does not allow is refused — in the number's own words where SPEC §6
//! has them (ALREADY_CONFIRMED, …), else as the workflow engine refuses (409 WF_INVALID_TRANSITION) — and nothing
//! changes.

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
    let (_, token) = docnum::server::auth::system::create_token(&db, "lifecycle", &[], 1, 0).await.unwrap();
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
