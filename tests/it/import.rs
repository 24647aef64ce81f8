//! Bulk import of counters and legacy numbers, and the reference-data admin with its JSON import, end to end
//! over HTTP on a real database (SQLite, or MariaDB with DOCNUM_TEST_DB=mysql). Refused input changes nothing;
//! applied imports write the manual override's audit rows and leave every number accounted for.

use crate::common::*;
use docnum::contract::Role;
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

const IMPORT: &str = "/api/v1/document-numbering/import";

async fn post_json(app: &TestApp, client: &Client, path: &str, body: &Value) -> (StatusCode, Value) {
    let r = client.post(app.url(path)).json(body).send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn post_text(app: &TestApp, client: &Client, path: &str, content_type: &str, body: String) -> (StatusCode, Value) {
    let r = client.post(app.url(path)).header("content-type", content_type).body(body).send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn put_json(app: &TestApp, client: &Client, path: &str, body: &Value) -> (StatusCode, Value) {
    let r = client.put(app.url(path)).json(body).send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn get(app: &TestApp, client: &Client, path: &str) -> (StatusCode, Value) {
    let r = client.get(app.url(path)).send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

const TABLES: &[&str] =
    &["document_numbers", "counters", "audit_log", "projects", "organizations", "project_organizations", "sub_types", "disciplines"];

async fn counts(app: &TestApp) -> Vec<i64> {
    let mut v = Vec::new();
    for t in TABLES {
        v.push(app.count(&format!("SELECT COUNT(*) FROM {t}")).await);
    }
    v
}

/// The promises of docs/rules/numbering.md#what-is-never-done-twice hold: intact audit chains, no duplicate, no unexplained gap.
async fn assert_all_accounted_for(app: &TestApp) {
    assert!(docnum::server::audit::verify(&app.state.db).await.unwrap().ok, "audit chains verify");
    let report = docnum::server::numbering::check::check(&app.state.db, &[]).await.unwrap();
    assert!(report.ok, "{:?}", report.problems);
}

fn legacy(number: &str, document_id: &str) -> Value {
    json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "documentNumber": number, "documentId": document_id })
}

fn memo_counter(value: i64) -> Value {
    json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "MEMO", "originatorCode": "คคง.", "recipientCode": "สคฉ.3", "year": 2568, "value": value })
}

fn memo() -> Value {
    json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "MEMO", "originatorCode": "คคง.", "recipientCode": "สคฉ.3" })
}

fn is_thai(s: &str) -> bool {
    s.chars().any(|c| ('\u{0E00}'..='\u{0E7F}').contains(&c))
}

#[tokio::test]
async fn a_dry_run_reports_every_row_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let before = counts(&app).await;
    let rows = json!({ "reason": "ย้ายข้อมูลจากสมุดทะเบียน", "rows": [legacy("คคง.-สคฉ.3-0005-2568", "OLD-5"), memo_counter(20), legacy("คคง.-สคฉ.3-00x7-2568", "OLD-7")] });
    let (s, r) = post_json(&app, &admin, &format!("{IMPORT}?dryRun=true"), &rows).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!((r["dryRun"].clone(), r["applied"].clone()), (json!(true), json!(false)));
    assert_eq!((r["total"].clone(), r["okRows"].clone(), r["errorRows"].clone()), (json!(3), json!(2), json!(1)));
    assert_eq!(r["rows"][0]["ok"], true);
    assert_eq!(r["rows"][0]["kind"], "NUMBER");
    assert_eq!(r["rows"][0]["lastNumber"], 5);
    assert_eq!(r["rows"][1]["kind"], "COUNTER");
    assert_eq!(r["rows"][1]["key"], "LCBP3 MEMO คคง. สคฉ.3 2568");
    assert_eq!(r["rows"][1]["lastNumber"], 20);
    assert_eq!(r["rows"][2]["ok"], false);
    assert_eq!(r["rows"][2]["code"], "NB006");
    assert!(is_thai(r["rows"][2]["message"].as_str().unwrap()), "{r}");
    assert_eq!(counts(&app).await, before, "a dry run writes nothing");
    // and the next number is still the first
    let (s, next) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK, "{next}");
    assert_eq!(next["documentNumber"], "คคง.-สคฉ.3-0001-2568");
}

#[tokio::test]
async fn one_bad_row_refuses_the_whole_import_and_names_the_row() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let before = counts(&app).await;
    let bad_project = json!({ "projectCode": "NOPE", "correspondenceTypeCode": "LETTER", "documentNumber": "คคง.-สคฉ.3-0009-2568" });
    let rows = json!([legacy("คคง.-สคฉ.3-0005-2568", "OLD-5"), bad_project, memo_counter(20)]);
    let (s, r) = post_json(&app, &admin, IMPORT, &rows).await;
    assert_error(s, &r, 400, "IMPORT_REJECTED");
    let report = &r["report"];
    assert_eq!((report["applied"].clone(), report["errorRows"].clone()), (json!(false), json!(1)));
    assert_eq!(report["rows"][1]["row"], 2);
    assert_eq!(report["rows"][1]["ok"], false);
    assert!(report["rows"][1]["message"].as_str().unwrap().contains("NOPE"), "{report}");
    assert_eq!(report["rows"][0]["ok"], true);
    assert_eq!(counts(&app).await, before, "nothing is written");

    // rows that collide inside the file, a counter below what is issued, a row that is neither kind
    let (s, _) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK);
    let before = counts(&app).await;
    let below = json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "originatorCode": "คคง.", "recipientCode": "สคฉ.3", "value": 1 });
    let neither = json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER" });
    let wrong_type = json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "value": [1] });
    let rows = json!([legacy("คคง.-สคฉ.3-0005-2568", "A"), legacy("คคง.-สคฉ.3-0005-2568", "B"), below, neither, legacy("คคง.-สคฉ.3-0002-2568", "C")]);
    let (s, r) = post_json(&app, &admin, IMPORT, &rows).await;
    assert_error(s, &r, 400, "IMPORT_REJECTED");
    let codes: Vec<Value> = r["report"]["rows"].as_array().unwrap().iter().map(|x| x["code"].clone()).collect();
    assert_eq!(codes, [json!(null), json!("NB005"), json!("OVERRIDE_BELOW_ISSUED"), json!("VALIDATION_ERROR"), json!("NB005")]);
    assert_eq!(counts(&app).await, before);
    // a row that is not a row by the OpenAPI document (a list where a value goes) refuses the whole text, naming it
    let mut with_wrong_type = rows.as_array().unwrap().clone();
    with_wrong_type.push(wrong_type);
    let (s, r) = post_json(&app, &admin, IMPORT, &json!(with_wrong_type)).await;
    assert_error(s, &r, 400, "VALIDATION_ERROR");
    assert!(r["message"].as_str().unwrap().contains("แถวที่ 6"), "{r}");
    assert_eq!(counts(&app).await, before);
    assert_all_accounted_for(&app).await;
}

#[tokio::test]
async fn a_good_import_is_applied_with_audit_rows_and_reserve_continues_after_it() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let last_year = json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "documentNumber": "คคง.-สคฉ.3-0042-2567" });
    let rows = json!({ "reason": "ย้ายข้อมูลจากสมุดทะเบียน", "rows": [legacy("คคง.-สคฉ.3-0005-2568", "OLD-5"), legacy("คคง.-สคฉ.3-0003-2568", "OLD-3"), memo_counter(20), last_year] });
    let (s, r) = post_json(&app, &admin, IMPORT, &rows).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!((r["applied"].clone(), r["okRows"].clone()), (json!(true), json!(4)));

    // the numbers are on record, confirmed, with their documents
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers WHERE status = 'CONFIRMED' AND number IN ('คคง.-สคฉ.3-0005-2568', 'คคง.-สคฉ.3-0003-2568', 'คคง.-สคฉ.3-0042-2567')").await, 3);
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers WHERE document_id = 'OLD-5' AND sequence = 5").await, 1);
    // the same audit rows as the manual override: one per number, one per sequence passed over, one per counter value
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'MANUAL_OVERRIDE' AND status = 'CONFIRMED'").await, 3);
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'MANUAL_OVERRIDE' AND status = 'SKIPPED'").await, 4 + 20 + 41);
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'MANUAL_OVERRIDE' AND status = 'SUCCESS' AND new_value = '20'").await, 1);
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'MANUAL_OVERRIDE' AND status = 'BULK_IMPORT'").await, 1);
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE document_number = 'คคง.-สคฉ.3-0005-2568' AND username = 'admin'").await, 1);

    // reserve continues after the imported values: imported numbers are never issued again
    let (s, next) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK, "{next}");
    assert_eq!(next["documentNumber"], "คคง.-สคฉ.3-0006-2568");
    // also when the counter's worker has just served it (it may remember the counter between batches)
    let (s, r) = post_json(&app, &admin, IMPORT, &json!([legacy("คคง.-สคฉ.3-0008-2568", "OLD-8")])).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let (s, next) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK, "{next}");
    assert_eq!(next["documentNumber"], "คคง.-สคฉ.3-0009-2568");
    let (s, next) = app.reserve(&memo()).await;
    assert_eq!(s, StatusCode::OK, "{next}");
    assert_eq!(next["documentNumber"], "คคง.-สคฉ.3-0021-2568");
    // a second import of the same numbers is refused row by row
    let (s, r) = post_json(&app, &admin, IMPORT, &json!([legacy("คคง.-สคฉ.3-0005-2568", "OLD-5")])).await;
    assert_error(s, &r, 400, "IMPORT_REJECTED");
    assert_eq!(r["report"]["rows"][0]["code"], "NB005");
    assert_all_accounted_for(&app).await;
}

#[tokio::test]
async fn csv_imports_the_same_rows() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let csv = "projectCode,correspondenceTypeCode,documentNumber,documentId,originatorCode,recipientCode,year,value\n\
               LCBP3,LETTER,คคง.-สคฉ.3-0007-2568,OLD-7,,,,\n\
               LCBP3,MEMO,,,คคง.,สคฉ.3,2568,12\n";
    let (s, r) = post_text(&app, &admin, &format!("{IMPORT}?dryRun=true"), "text/csv; charset=utf-8", csv.to_string()).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!((r["okRows"].clone(), r["applied"].clone()), (json!(2), json!(false)));
    let (s, r) = post_text(&app, &admin, &format!("{IMPORT}?reason=นำเข้าจากไฟล์"), "text/csv", csv.to_string()).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["applied"], true);
    let (_, next) = app.reserve(&letter()).await;
    assert_eq!(next["documentNumber"], "คคง.-สคฉ.3-0008-2568");
    let (_, next) = app.reserve(&memo()).await;
    assert_eq!(next["documentNumber"], "คคง.-สคฉ.3-0013-2568");
    assert_all_accounted_for(&app).await;
}

#[tokio::test]
async fn malformed_input_is_a_4xx_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let before = counts(&app).await;
    let cases: Vec<(&str, String, u16, &str)> = vec![
        ("application/json", "{\"rows\": [".into(), 400, "VALIDATION_ERROR"),
        ("application/json", "{\"rows\": 3}".into(), 400, "VALIDATION_ERROR"),
        ("application/json", "{\"rows\": [], \"extra\": 1}".into(), 400, "VALIDATION_ERROR"),
        ("application/json", "[]".into(), 400, "VALIDATION_ERROR"),
        ("text/csv", "".into(), 400, "VALIDATION_ERROR"),
        ("text/csv", "projectCode,colour\nLCBP3,red\n".into(), 400, "VALIDATION_ERROR"),
        ("text/csv", "projectCode\n".into(), 400, "VALIDATION_ERROR"),
        ("application/json", format!("[{}]", vec!["{}"; 10_001].join(",")), 400, "VALIDATION_ERROR"),
        ("application/json", format!("[\"{}\"]", "ก".repeat(800_000)), 413, "PAYLOAD_TOO_LARGE"),
        ("application/json", "xxx".into(), 400, "VALIDATION_ERROR"),
    ];
    for (ct, body, status, code) in cases {
        let (s, e) = post_text(&app, &admin, IMPORT, ct, body.clone()).await;
        assert_error(s, &e, status, code);
    }
    let r = admin.post(app.url(IMPORT)).header("content-type", "application/json").body(vec![0xff, 0xfe, 0x00]).send().await.unwrap();
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 400, "VALIDATION_ERROR");
    let (s, e) = post_text(&app, &admin, &format!("{IMPORT}?dryRun=maybe"), "application/json", "[]".into()).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    assert_eq!(counts(&app).await, before);
}

#[tokio::test]
async fn only_super_admins_import_or_edit_reference_data() {
    let app = TestApp::spawn().await;
    let project = app.project_id("LCBP3").await;
    let staff = app.user_client("somchai", Role::Staff, &[]).await;
    let padmin = app.user_client("padmin", Role::ProjectAdmin, &[project]).await;
    let before = counts(&app).await;
    let rows = json!([legacy("คคง.-สคฉ.3-0005-2568", "OLD-5")]);
    for client in [&staff, &padmin] {
        for path in [IMPORT.to_string(), format!("{IMPORT}?dryRun=true")] {
            let (s, e) = post_json(&app, client, &path, &rows).await;
            assert_error(s, &e, 403, "NB007");
        }
        let (s, e) = post_json(&app, client, "/api/v1/reference/organizations", &json!({ "code": "ผรม.9", "name": "x", "role": "CONTRACTOR" })).await;
        assert_error(s, &e, 403, "FORBIDDEN");
        let (s, e) =
            put_json(&app, client, &format!("/api/v1/reference/projects/{project}"), &json!({ "code": "LCBP3", "name": "x", "active": false })).await;
        assert_error(s, &e, 403, "FORBIDDEN");
        let (s, e) =
            post_json(&app, client, "/api/v1/reference/import?dryRun=true", &json!({ "disciplines": [{ "code": "MEP", "name": "x" }] })).await;
        assert_error(s, &e, 403, "FORBIDDEN");
    }
    // a machine client is not a super admin either
    let (s, e) = app.post_json(IMPORT, &rows).await;
    assert_error(s, &e, 403, "NB007");
    let r = app
        .client
        .post(app.url("/api/v1/reference/disciplines"))
        .bearer_auth(&app.token)
        .json(&json!({ "code": "MEP", "name": "x" }))
        .send()
        .await
        .unwrap();
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 403, "FORBIDDEN");
    assert_eq!(counts(&app).await, before);
    // the endpoints are documented
    let (s, doc) = get(&app, &staff, "/api/v1/openapi.json").await;
    assert_eq!(s, StatusCode::OK);
    for path in [IMPORT, "/api/v1/reference/import"] {
        assert!(doc["paths"][path].is_object(), "{path} in the OpenAPI document");
    }
    // each kind on its own path, with the shape of its items
    for kind in ["projects", "organizations", "correspondence-types", "sub-types", "rfa-types", "disciplines"] {
        assert!(doc["paths"][format!("/api/v1/reference/{kind}")]["post"]["requestBody"].is_object(), "{kind}");
        assert!(doc["paths"][format!("/api/v1/reference/{kind}/{{id}}")]["put"].is_object(), "{kind}");
    }
    // anyone logged in still reads the lists
    let (s, list) = get(&app, &staff, "/api/v1/reference/projects").await;
    assert_eq!(s, StatusCode::OK);
    assert!(list.as_array().unwrap().iter().any(|p| p["code"] == "LCBP3"));
}

#[tokio::test]
async fn reference_items_are_created_edited_and_deactivated() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let before = app.count("SELECT COUNT(*) FROM audit_log WHERE chain_key = 'admin'").await;

    let (s, r) =
        post_json(&app, &admin, "/api/v1/reference/organizations", &json!({ "code": " ผรม.3 ", "name": "ผู้รับเหมา 3", "role": "contractor" })).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["action"], "CREATE");
    let org = r["id"].as_i64().unwrap();
    // codes follow the pure rules of numbering::codes
    for (code, kind) in [("ผรม-4", "organizations"), ("A B", "disciplines"), ("", "rfa-types"), ("{X}", "correspondence-types")] {
        let body = if kind == "organizations" { json!({ "code": code, "name": "x", "role": "OTHER" }) } else { json!({ "code": code, "name": "x" }) };
        let (s, e) = post_json(&app, &admin, &format!("/api/v1/reference/{kind}"), &body).await;
        assert_error(s, &e, 400, "VALIDATION_ERROR");
    }
    let (s, e) = post_json(&app, &admin, "/api/v1/reference/organizations", &json!({ "code": "ผรม.3", "name": "again", "role": "OTHER" })).await;
    assert_error(s, &e, 409, "ALREADY_EXISTS");
    let (s, e) = post_json(&app, &admin, "/api/v1/reference/organizations", &json!({ "code": "ผรม.5", "name": "x", "role": "BOSS" })).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    let (s, e) =
        post_json(&app, &admin, "/api/v1/reference/organizations", &json!({ "code": "ผรม.5", "name": "x", "role": "OTHER", "colour": 1 })).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    let (s, e) = post_json(&app, &admin, "/api/v1/reference/planets", &json!({ "code": "X", "name": "x" })).await;
    assert_error(s, &e, 404, "NOT_FOUND");

    // the new organization joins LCBP3 and can take numbers at once
    let project = app.project_id("LCBP3").await;
    let (_, projects) = get(&app, &admin, "/api/v1/reference/projects").await;
    let lcbp3 = projects.as_array().unwrap().iter().find(|p| p["code"] == "LCBP3").unwrap().clone();
    let mut members: Vec<String> = vec!["กทท.".into(), "สคฉ.3".into(), "คคง.".into(), "ผรม.1".into(), "ผรม.2".into()];
    members.push("ผรม.3".into());
    let (s, r) = put_json(
        &app,
        &admin,
        &format!("/api/v1/reference/projects/{project}"),
        &json!({ "code": "LCBP3", "name": lcbp3["name"], "members": members }),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["action"], "UPDATE");
    let request = json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "originatorCode": "ผรม.3", "recipientCode": "คคง." });
    let (s, next) = app.reserve(&request).await;
    assert_eq!(s, StatusCode::OK, "{next}");
    assert_eq!(next["documentNumber"], "ผรม.3-คคง.-0001-2568");

    // rename: the code is the identity and stays
    let (s, r) = put_json(
        &app,
        &admin,
        &format!("/api/v1/reference/organizations/{org}"),
        &json!({ "code": "ผรม.3", "name": "บริษัท ผู้รับเหมา 3 จำกัด", "role": "CONTRACTOR" }),
    )
    .await;
    assert_eq!((s, r["action"].clone()), (StatusCode::OK, json!("UPDATE")));
    let (s, e) =
        put_json(&app, &admin, &format!("/api/v1/reference/organizations/{org}"), &json!({ "code": "ผรม.33", "name": "x", "role": "CONTRACTOR" }))
            .await;
    assert_error(s, &e, 409, "CODE_IMMUTABLE");
    let (s, e) = put_json(&app, &admin, "/api/v1/reference/organizations/999999", &json!({ "code": "X", "name": "x", "role": "OTHER" })).await;
    assert_error(s, &e, 404, "NOT_FOUND");
    let (_, orgs) = get(&app, &admin, "/api/v1/reference/organizations").await;
    assert!(orgs.as_array().unwrap().iter().any(|o| o["code"] == "ผรม.3" && o["name"] == "บริษัท ผู้รับเหมา 3 จำกัด"), "{orgs}");

    // deactivate: no new numbers; the issued one stays
    let (s, _) =
        put_json(&app, &admin, &format!("/api/v1/reference/projects/{project}"), &json!({ "code": "LCBP3", "name": lcbp3["name"], "active": false }))
            .await;
    assert_eq!(s, StatusCode::OK);
    let (s, e) = app.reserve(&request).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers WHERE number = 'ผรม.3-คคง.-0001-2568'").await, 1);
    let (s, _) =
        put_json(&app, &admin, &format!("/api/v1/reference/projects/{project}"), &json!({ "code": "LCBP3", "name": lcbp3["name"], "active": true }))
            .await;
    assert_eq!(s, StatusCode::OK);
    let (s, next) = app.reserve(&request).await;
    assert_eq!(s, StatusCode::OK, "{next}");
    assert_eq!(next["documentNumber"], "ผรม.3-คคง.-0002-2568");

    // every change is in the admin audit chain
    let after = app.count("SELECT COUNT(*) FROM audit_log WHERE chain_key = 'admin'").await;
    assert_eq!(after - before, 5, "create org, members, rename, deactivate, reactivate");
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'REFERENCE_CREATE'").await, 1);
    assert_all_accounted_for(&app).await;
}

#[tokio::test]
async fn a_reference_document_is_imported_all_or_nothing() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let doc = json!({
        "organizations": [{ "code": "ผรม.7", "name": "ผู้รับเหมา 7", "role": "CONTRACTOR" }, { "code": "คคง.", "name": "ที่ปรึกษา (แก้ชื่อ)", "role": "CONSULTANT" }],
        "correspondenceTypes": [{ "code": "NCR", "name": "Non-conformance report" }],
        "subTypes": [{ "correspondenceTypeCode": "TRANSMITTAL", "subTypeNumber": "31", "code": "SPC", "name": "Specification" }],
        "rfaTypes": [{ "code": "CAL", "name": "Calculation" }],
        "disciplines": [{ "code": "MEP", "name": "Mechanical, electrical, plumbing" }],
        "projects": [{ "code": "LCBP3-C5", "name": "สัญญา 5", "members": ["ผรม.7", "คคง.", "กทท."] }]
    });
    let mut bad = doc.clone();
    bad["disciplines"] = json!([{ "code": "MEP", "name": "ok" }, { "code": "M-E", "name": "separator" }, { "code": "MEP", "name": "twice" }]);
    bad["projects"][0]["members"] = json!(["ผรม.7", "ไม่มี"]);
    let before = counts(&app).await;
    let (s, r) = post_json(&app, &admin, "/api/v1/reference/import", &bad).await;
    assert_error(s, &r, 400, "IMPORT_REJECTED");
    let refused: Vec<(String, u64)> = r["report"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["ok"] == false)
        .map(|x| (x["kind"].as_str().unwrap().to_string(), x["row"].as_u64().unwrap()))
        .collect();
    assert_eq!(refused, [("disciplines".to_string(), 2), ("disciplines".to_string(), 3), ("projects".to_string(), 1)], "{r}");
    assert_eq!(counts(&app).await, before);

    let (s, r) = post_json(&app, &admin, "/api/v1/reference/import?dryRun=true", &doc).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!((r["okRows"].clone(), r["applied"].clone()), (json!(7), json!(false)));
    let actions: Vec<&str> = r["rows"].as_array().unwrap().iter().map(|x| x["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["CREATE", "UPDATE", "CREATE", "CREATE", "CREATE", "CREATE", "CREATE"]);
    assert_eq!(counts(&app).await, before);

    let (s, r) = post_json(&app, &admin, "/api/v1/reference/import", &doc).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["applied"], true);
    // the next request sees it at once: a number in the new project, from the new organization
    let (s, next) =
        app.reserve(&json!({ "projectCode": "LCBP3-C5", "correspondenceTypeCode": "NCR", "originatorCode": "ผรม.7", "recipientCode": "คคง." })).await;
    assert_eq!(s, StatusCode::OK, "{next}");
    assert_eq!(next["documentNumber"], "ผรม.7-คคง.-0001-2568");
    let (_, subs) = get(&app, &admin, "/api/v1/reference/sub-types").await;
    assert!(subs.as_array().unwrap().iter().any(|x| x["subTypeNumber"] == "31" && x["code"] == "SPC"), "{subs}");
    // importing the same document again changes nothing
    let (s, r) = post_json(&app, &admin, "/api/v1/reference/import", &doc).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert!(r["rows"].as_array().unwrap().iter().all(|x| x["action"] == "UNCHANGED"), "{r}");
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation IN ('REFERENCE_CREATE', 'REFERENCE_UPDATE')").await, 7);

    for body in ["{", "{\"planets\": []}", "{}", "[]"] {
        let (s, e) = post_text(&app, &admin, "/api/v1/reference/import", "application/json", body.into()).await;
        assert_error(s, &e, 400, "VALIDATION_ERROR");
    }
    let (s, e) = post_text(&app, &admin, "/api/v1/reference/import", "application/json", format!("\"{}\"", "x".repeat(1_100_000))).await;
    assert_error(s, &e, 413, "PAYLOAD_TOO_LARGE");
    assert_all_accounted_for(&app).await;
}

/// The largest import (10,000 rows) in one transaction; `--ignored` to run (it measures, it does not gate).
#[tokio::test]
#[ignore]
async fn ten_thousand_rows_in_one_import() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let mut rows = Vec::new();
    for (o, r) in [("คคง.", "สคฉ.3"), ("สคฉ.3", "คคง.")] {
        for q in 1..=5000 {
            rows.push(json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "documentNumber": format!("{o}-{r}-{q:04}-2568"), "documentId": format!("D-{q}") }));
        }
    }
    let started = std::time::Instant::now();
    let (s, r) = post_json(&app, &admin, &format!("{IMPORT}?dryRun=true"), &json!(rows)).await;
    assert_eq!(s, StatusCode::OK, "{}", r["errorRows"]);
    eprintln!("dry run of 10,000 rows: {:?}", started.elapsed());
    let started = std::time::Instant::now();
    let (s, r) = post_json(&app, &admin, IMPORT, &json!(rows)).await;
    assert_eq!(s, StatusCode::OK, "{}", r["errorRows"]);
    eprintln!("import of 10,000 rows: {:?}", started.elapsed());
    let (_, next) = app.reserve(&letter()).await;
    assert_eq!(next["documentNumber"], "คคง.-สคฉ.3-5001-2568");
    assert_all_accounted_for(&app).await;
}

/// Every request in flight finds an aged reference snapshot at once: one of them reloads it, the others wait for that
/// reload and answer from its snapshot.
#[tokio::test]
async fn an_aged_reference_snapshot_is_reloaded_once_for_all_who_find_it_aged() {
    use docnum::server::reference::ReferenceCache;
    let app = TestApp::spawn().await;
    let cache = std::sync::Arc::new(ReferenceCache::load(app.state.db.clone(), std::time::Duration::from_secs(1)).await.unwrap());
    let first = cache.get().await.unwrap();
    assert_eq!(cache.reloads(), 0, "a fresh snapshot is served as it is");
    tokio::time::sleep(std::time::Duration::from_millis(1050)).await;
    let gets: Vec<_> = (0..32)
        .map(|_| {
            tokio::spawn({
                let cache = cache.clone();
                async move { cache.get().await.unwrap() }
            })
        })
        .collect();
    let mut snapshots = Vec::new();
    for g in gets {
        snapshots.push(g.await.unwrap());
    }
    assert_eq!(cache.reloads(), 1, "32 callers on an aged snapshot, one reload");
    assert!(snapshots.iter().all(|s| std::sync::Arc::ptr_eq(s, &snapshots[0])), "all answer from the reloaded snapshot");
    assert!(!std::sync::Arc::ptr_eq(&snapshots[0], &first), "the aged one is not served");
}
