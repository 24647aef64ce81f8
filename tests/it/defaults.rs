//! Per-type system defaults (docs/rules/numbering.md#which-template-numbers-a-request): a project created on an
//! empty database (`DEMO_DATA=false`, the production
//! path) numbers every type in its own format from its first request, and a project default that breaks a type's
//! rules is passed over for that type.

use chrono::Duration;
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

use crate::common::{Options, TestApp, ADMIN_PASSWORD};

async fn post(app: &TestApp, client: &Client, path: &str, body: Value) -> Value {
    let r = client.post(app.url(path)).json(&body).send().await.unwrap();
    let status = r.status();
    let body: Value = r.json().await.unwrap_or(Value::Null);
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    body
}

/// An empty service, then through the REST API as a super admin would: organizations, the types TRANSMITTAL
/// (with sub-type 21), RFA and LETTER, an RFA type, a discipline, and project `NP1` with its members. No template.
async fn new_project_on_an_empty_database() -> (TestApp, Client) {
    let app = TestApp::spawn_with(Options { demo_data: false, ..Options::default() }).await;
    assert_eq!(app.count("SELECT COUNT(*) FROM projects").await, 0, "DEMO_DATA=false starts empty");
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    for (code, role) in [("กทท.", "OWNER"), ("ผรม.1", "CONTRACTOR")] {
        post(&app, &admin, "/api/v1/reference/organizations", json!({ "code": code, "name": code, "role": role })).await;
    }
    for code in ["LETTER", "TRANSMITTAL", "RFA"] {
        post(&app, &admin, "/api/v1/reference/correspondence-types", json!({ "code": code, "name": code })).await;
    }
    post(
        &app,
        &admin,
        "/api/v1/reference/sub-types",
        json!({ "correspondenceTypeCode": "TRANSMITTAL", "subTypeNumber": "21", "code": "GEN", "name": "ทั่วไป" }),
    )
    .await;
    post(&app, &admin, "/api/v1/reference/rfa-types", json!({ "code": "RPT", "name": "Report" })).await;
    post(&app, &admin, "/api/v1/reference/disciplines", json!({ "code": "TER", "name": "งานท่าเทียบเรือ" })).await;
    post(&app, &admin, "/api/v1/reference/projects", json!({ "code": "NP1", "name": "โครงการใหม่", "members": ["กทท.", "ผรม.1"] })).await;
    assert_eq!(app.count("SELECT COUNT(*) FROM numbering_templates").await, 0, "no template was created for the project");
    (app, admin)
}

fn transmittal() -> Value {
    json!({ "projectCode": "NP1", "correspondenceTypeCode": "TRANSMITTAL", "originatorCode": "ผรม.1", "recipientCode": "กทท.", "subTypeNumber": "21" })
}

fn rfa() -> Value {
    json!({ "projectCode": "NP1", "correspondenceTypeCode": "RFA", "rfaTypeCode": "RPT", "disciplineCode": "TER" })
}

fn letter() -> Value {
    json!({ "projectCode": "NP1", "correspondenceTypeCode": "LETTER", "originatorCode": "ผรม.1", "recipientCode": "กทท." })
}

async fn reserve(app: &TestApp, body: &Value) -> String {
    let (status, r) = app.reserve(body).await;
    assert_eq!(status, StatusCode::OK, "{r}");
    r["documentNumber"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_project_created_through_the_api_numbers_each_type_in_its_own_format_from_the_first_request() {
    let (app, _admin) = new_project_on_an_empty_database().await;
    assert_eq!(reserve(&app, &transmittal()).await, "ผรม.1-กทท.-21-0001-2568");
    assert_eq!(reserve(&app, &rfa()).await, "NP1-RFA-TER-RPT-0001-A");
    assert_eq!(reserve(&app, &letter()).await, "ผรม.1-กทท.-0001-2568");
    assert_eq!(reserve(&app, &transmittal()).await, "ผรม.1-กทท.-21-0002-2568");
    assert_eq!(reserve(&app, &rfa()).await, "NP1-RFA-TER-RPT-0002-A");

    // a year later: TRANSMITTAL and LETTER start again in B.E. 2569, RFA (reset NONE) goes on
    app.clock.advance(Duration::days(366));
    assert_eq!(reserve(&app, &transmittal()).await, "ผรม.1-กทท.-21-0001-2569");
    assert_eq!(reserve(&app, &letter()).await, "ผรม.1-กทท.-0001-2569");
    assert_eq!(reserve(&app, &rfa()).await, "NP1-RFA-TER-RPT-0003-A");
}

/// What the template editor asks: the template a (project, type) uses today, and from which step.
async fn resolved(app: &TestApp, admin: &Client, type_code: &str) -> Value {
    let project = app.project_id("NP1").await;
    let correspondence_type = app.state.reference().get().await.unwrap().correspondence_type(None, Some(type_code)).unwrap().id;
    post(app, admin, "/sfn/resolve_template", json!({ "project_id": project, "correspondence_type_id": correspondence_type })).await
}

#[tokio::test]
async fn a_project_default_that_breaks_a_type_rules_is_skipped_for_that_type_only() {
    let (app, admin) = new_project_on_an_empty_database().await;
    let project = app.project_id("NP1").await;
    // a project default without {SUB_TYPE}, {PROJECT} or {DISCIPLINE}: fine for LETTER, not for TRANSMITTAL or RFA
    post(
        &app,
        &admin,
        "/api/v1/document-numbering/configs",
        json!({ "projectId": project, "template": "{ORIGINATOR}/{RECIPIENT}/{SEQ:5}/{YEAR:A.D.}", "resetScope": "YEARLY", "reason": "project default" }),
    )
    .await;
    assert_eq!(reserve(&app, &letter()).await, "ผรม.1/กทท./00001/2025");
    assert_eq!(reserve(&app, &transmittal()).await, "ผรม.1-กทท.-21-0001-2568");
    assert_eq!(reserve(&app, &rfa()).await, "NP1-RFA-TER-RPT-0001-A");
    let r = resolved(&app, &admin, "LETTER").await;
    assert_eq!((r["source"].as_str(), r["projectDefaultSkipped"].as_bool()), (Some("PROJECT_DEFAULT"), Some(false)), "{r}");
    let r = resolved(&app, &admin, "RFA").await;
    assert_eq!((r["source"].as_str(), r["projectDefaultSkipped"].as_bool()), (Some("SYSTEM_DEFAULT"), Some(true)), "{r}");
}

/// docs/rules/api.md#the-request-body-and-its-leniency: number fields take a JSON number or a numeric string; codes are trimmed and NFC-normalised.
#[tokio::test]
async fn sub_type_numbers_and_ids_as_numbers_or_strings_share_one_sequence() {
    let (app, _admin) = new_project_on_an_empty_database().await;
    let project = app.project_id("NP1").await;
    let with = |sub: Value| {
        let mut r = transmittal();
        r["subTypeNumber"] = sub;
        r
    };
    assert_eq!(reserve(&app, &with(json!(21))).await, "ผรม.1-กทท.-21-0001-2568");
    assert_eq!(reserve(&app, &with(json!("21"))).await, "ผรม.1-กทท.-21-0002-2568");
    assert_eq!(reserve(&app, &with(json!(" 21 "))).await, "ผรม.1-กทท.-21-0003-2568");
    let mut by_id = with(json!(21));
    by_id.as_object_mut().unwrap().remove("projectCode");
    by_id["projectId"] = json!(project.to_string());
    by_id["originatorCode"] = json!("  ผรม.1 ");
    assert_eq!(reserve(&app, &by_id).await, "ผรม.1-กทท.-21-0004-2568");
    // what is neither is a 400 naming the field, and takes no number
    for (field, bad) in [("subTypeNumber", json!(21.5)), ("projectId", json!("NP1")), ("subTypeNumber", json!(true))] {
        let mut r = with(json!(21));
        r[field] = bad;
        let (status, body) = app.reserve(&r).await;
        crate::common::assert_error(status, &body, 400, "VALIDATION_ERROR");
    }
    assert_eq!(reserve(&app, &with(json!("21"))).await, "ผรม.1-กทท.-21-0005-2568");
}
