//! Contracts (docs/rules/numbering.md#contracts): reference data under a project, written by its admins; the
//! `{CONTRACT}` token; reset scope `CONTRACT`, one never-resetting counter per contract with the period
//! `CONTRACT_<id>`.

use docnum::contract::Role;
use reqwest::{Client, Method, StatusCode};
use serde_json::{json, Value};

use crate::common::{assert_error, TestApp, ADMIN_PASSWORD};

const CONTRACTS: &str = "/api/v1/reference/contracts";
const CONTRACT_TEMPLATE: &str = "{PROJECT}-{CONTRACT}-{CORR_TYPE}-{SEQ:4}";

async fn send(app: &TestApp, client: &Client, method: Method, path: &str, body: &Value) -> (StatusCode, Value) {
    let mut r = client.request(method, app.url(path));
    if !body.is_null() {
        r = r.json(body);
    }
    let r = r.send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn contracts(app: &TestApp, client: &Client) -> Vec<Value> {
    let (s, list) = send(app, client, Method::GET, CONTRACTS, &Value::Null).await;
    assert_eq!(s, StatusCode::OK, "{list}");
    list.as_array().unwrap().clone()
}

/// The stored contract of the project with this code.
async fn contract(app: &TestApp, project: &str, code: &str) -> (i64, String, bool) {
    let project = app.project_id(project).await;
    let row: (i64, String, i64) = sqlx::query_as("SELECT id, name, active FROM contracts WHERE project_id = ? AND code = ?")
        .bind(project)
        .bind(code)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    (row.0, row.1, row.2 != 0)
}

async fn count_contracts(app: &TestApp) -> i64 {
    app.count("SELECT COUNT(*) FROM contracts").await
}

#[tokio::test]
async fn contracts_are_managed_per_project_by_its_admins() {
    let app = TestApp::spawn().await;
    let lcbp3 = app.project_id("LCBP3").await;
    let other = app.project_id("LCBP3-C1").await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let padmin = app.user_client("padmin", Role::ProjectAdmin, &[lcbp3]).await;
    let elsewhere = app.user_client("elsewhere", Role::ProjectAdmin, &[other]).await;
    let staff = app.user_client("somchai", Role::Staff, &[]).await;

    // the demo data's contracts of LCBP3, read by anyone signed in
    let listed = contracts(&app, &staff).await;
    let codes: Vec<&str> = listed.iter().filter(|c| c["projectId"] == lcbp3).map(|c| c["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["C1", "C2", "C3", "C4"]);
    assert!(listed.iter().all(|c| c["active"] == true));
    assert_eq!(listed[1]["name"], "งานก่อสร้างท่าเทียบเรือ");

    // the project's admin creates one (codes are normalised as every code is)
    let before_audit = app.count("SELECT COUNT(*) FROM audit_log WHERE chain_key = 'admin'").await;
    let (s, r) = send(&app, &padmin, Method::POST, CONTRACTS, &json!({ "projectCode": "LCBP3", "code": " C5 ", "name": "งานถนนเชื่อมต่อ" })).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["action"], "CREATE");
    let c5 = r["id"].as_i64().unwrap();
    assert_eq!(contract(&app, "LCBP3", "C5").await, (c5, "งานถนนเชื่อมต่อ".to_string(), true));
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE chain_key = 'admin'").await, before_audit + 1);
    let listed = contracts(&app, &staff).await;
    assert!(listed.iter().any(|c| c["id"] == c5 && c["code"] == "C5" && c["projectId"] == lcbp3), "{listed:?}");

    let count = count_contracts(&app).await;
    // the same code again in the project: 409; a code of the wrong form: 400; a project that does not exist: 404
    let (s, e) = send(&app, &padmin, Method::POST, CONTRACTS, &json!({ "projectCode": "LCBP3", "code": "C5", "name": "อีกครั้ง" })).await;
    assert_error(s, &e, 409, "ALREADY_EXISTS");
    for code in ["C-6", "", "C 6", "{C6}"] {
        let (s, e) = send(&app, &padmin, Method::POST, CONTRACTS, &json!({ "projectCode": "LCBP3", "code": code, "name": "x" })).await;
        assert_error(s, &e, 400, "VALIDATION_ERROR");
    }
    let (s, e) = send(&app, &padmin, Method::POST, CONTRACTS, &json!({ "projectCode": "LCBP3", "code": "C6", "name": "" })).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    let (s, e) = send(&app, &admin, Method::POST, CONTRACTS, &json!({ "projectCode": "NOPE", "code": "C6", "name": "x" })).await;
    assert_error(s, &e, 404, "NOT_FOUND");
    let (s, e) = send(&app, &padmin, Method::POST, CONTRACTS, &json!({ "projectCode": "LCBP3", "code": "C6", "name": "x", "extra": 1 })).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");

    // the admin of another project may neither create nor edit LCBP3's contracts; staff and tokens write none
    let (s, e) = send(&app, &elsewhere, Method::POST, CONTRACTS, &json!({ "projectCode": "LCBP3", "code": "C6", "name": "x" })).await;
    assert_error(s, &e, 403, "FORBIDDEN");
    let (s, e) = send(
        &app,
        &elsewhere,
        Method::PUT,
        &format!("{CONTRACTS}/{c5}"),
        &json!({ "projectCode": "LCBP3", "code": "C5", "name": "x", "active": false }),
    )
    .await;
    assert_error(s, &e, 403, "FORBIDDEN");
    // … nor move it into their own project
    let (s, e) =
        send(&app, &elsewhere, Method::PUT, &format!("{CONTRACTS}/{c5}"), &json!({ "projectCode": "LCBP3-C1", "code": "C5", "name": "x" })).await;
    assert_error(s, &e, 403, "FORBIDDEN");
    let (s, e) = send(&app, &staff, Method::POST, CONTRACTS, &json!({ "projectCode": "LCBP3", "code": "C6", "name": "x" })).await;
    assert_error(s, &e, 403, "FORBIDDEN");
    let r = app.client.post(app.url(CONTRACTS)).bearer_auth(&app.token).json(&json!({ "projectCode": "LCBP3", "code": "C6", "name": "x" }));
    let r = r.send().await.unwrap();
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 403, "FORBIDDEN");
    assert_eq!(count_contracts(&app).await, count);
    assert_eq!(contract(&app, "LCBP3", "C5").await, (c5, "งานถนนเชื่อมต่อ".to_string(), true));

    // a code is unique within its project only: the other project's admin has a C5 of their own
    let (s, r) = send(&app, &elsewhere, Method::POST, CONTRACTS, &json!({ "projectCode": "LCBP3-C1", "code": "C5", "name": "สัญญาย่อย" })).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_ne!(r["id"].as_i64().unwrap(), c5);

    // renamed, then deactivated; the code and the project are its identity
    let put = |body: Value| {
        let padmin = padmin.clone();
        let app = &app;
        async move { send(app, &padmin, Method::PUT, &format!("{CONTRACTS}/{c5}"), &body).await }
    };
    let (s, r) = put(json!({ "projectCode": "LCBP3", "code": "C5", "name": "งานถนนและสะพาน" })).await;
    assert_eq!((s, r["action"].as_str()), (StatusCode::OK, Some("UPDATE")), "{r}");
    let (s, r) = put(json!({ "projectCode": "LCBP3", "code": "C5", "name": "งานถนนและสะพาน" })).await;
    assert_eq!((s, r["action"].as_str()), (StatusCode::OK, Some("UNCHANGED")), "{r}");
    let (s, r) = put(json!({ "projectCode": "LCBP3", "code": "C5", "name": "งานถนนและสะพาน", "active": false })).await;
    assert_eq!((s, r["action"].as_str()), (StatusCode::OK, Some("UPDATE")), "{r}");
    assert_eq!(contract(&app, "LCBP3", "C5").await, (c5, "งานถนนและสะพาน".to_string(), false));
    let (s, e) = put(json!({ "projectCode": "LCBP3", "code": "C55", "name": "x" })).await;
    assert_error(s, &e, 409, "CODE_IMMUTABLE");
    let (s, e) =
        send(&app, &admin, Method::PUT, &format!("{CONTRACTS}/{c5}"), &json!({ "projectCode": "LCBP3-C1", "code": "C5", "name": "x" })).await;
    assert_error(s, &e, 409, "CODE_IMMUTABLE");
    let (s, e) = send(&app, &admin, Method::PUT, &format!("{CONTRACTS}/999999"), &json!({ "projectCode": "LCBP3", "code": "C5", "name": "x" })).await;
    assert_error(s, &e, 404, "NOT_FOUND");
    // the list shows it inactive; a super admin reactivates it
    assert!(contracts(&app, &staff).await.iter().any(|c| c["id"] == c5 && c["active"] == false));
    let (s, r) = send(
        &app,
        &admin,
        Method::PUT,
        &format!("{CONTRACTS}/{c5}"),
        &json!({ "projectCode": "LCBP3", "code": "C5", "name": "งานถนนและสะพาน", "active": true }),
    )
    .await;
    assert_eq!((s, r["action"].as_str()), (StatusCode::OK, Some("UPDATE")), "{r}");
    assert!(contract(&app, "LCBP3", "C5").await.2);

    // the endpoints are documented, with the shape of their items
    let (s, doc) = send(&app, &staff, Method::GET, "/api/v1/openapi.json", &Value::Null).await;
    assert_eq!(s, StatusCode::OK);
    assert!(doc["paths"][CONTRACTS]["post"]["requestBody"].is_object());
    assert!(doc["paths"][format!("{CONTRACTS}/{{id}}")]["put"].is_object());
    assert!(doc["components"]["schemas"]["ContractItem"].is_object());
}

#[tokio::test]
async fn contracts_are_imported_with_the_reference_document() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let lcbp3 = app.project_id("LCBP3").await;
    let padmin = app.user_client("padmin", Role::ProjectAdmin, &[lcbp3]).await;
    let count = count_contracts(&app).await;
    let doc = json!({ "contracts": [
        { "projectCode": "LCBP3", "code": "C7", "name": "งานขุดลอกร่องน้ำ" },
        { "projectCode": "LCBP3", "code": "C1", "name": "งานถมทะเลและปรับปรุงคุณภาพดิน" },
        { "projectCode": "NOPE", "code": "C8", "name": "x" },
    ] });
    // a row refused: nothing is written, the report names it
    let (s, r) = send(&app, &admin, Method::POST, "/api/v1/reference/import", &doc).await;
    assert_error(s, &r, 400, "IMPORT_REJECTED");
    let rows = r["report"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{r}");
    assert_eq!((rows[0]["kind"].as_str(), rows[0]["ok"].as_bool(), rows[0]["action"].as_str()), (Some("contracts"), Some(true), Some("CREATE")));
    assert_eq!((rows[1]["ok"].as_bool(), rows[1]["action"].as_str()), (Some(true), Some("UNCHANGED")));
    assert_eq!((rows[2]["ok"].as_bool(), rows[2]["key"].as_str()), (Some(false), Some("NOPE/C8")));
    assert!(rows[2]["message"].as_str().unwrap().contains("โครงการ"), "{r}");
    assert_eq!(count_contracts(&app).await, count);

    // a dry run of the good rows reports, and writes nothing
    let good = json!({ "contracts": [
        { "projectCode": "LCBP3", "code": "C7", "name": "งานขุดลอกร่องน้ำ" },
        { "projectCode": "LCBP3", "code": "C2", "name": "งานท่าเทียบเรือ ระยะที่ 1", "active": false },
    ] });
    let (s, r) = send(&app, &admin, Method::POST, "/api/v1/reference/import?dryRun=true", &good).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!((r["applied"].as_bool(), r["okRows"].as_i64()), (Some(false), Some(2)));
    assert_eq!(count_contracts(&app).await, count);

    let (s, r) = send(&app, &admin, Method::POST, "/api/v1/reference/import", &good).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["applied"], true);
    let actions: Vec<&str> = r["rows"].as_array().unwrap().iter().map(|x| x["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["CREATE", "UPDATE"]);
    assert_eq!(count_contracts(&app).await, count + 1);
    assert_eq!(contract(&app, "LCBP3", "C7").await.1, "งานขุดลอกร่องน้ำ");
    assert_eq!(contract(&app, "LCBP3", "C2").await.1, "งานท่าเทียบเรือ ระยะที่ 1");
    assert!(!contract(&app, "LCBP3", "C2").await.2);
    // again: nothing changes
    let (s, r) = send(&app, &admin, Method::POST, "/api/v1/reference/import", &good).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert!(r["rows"].as_array().unwrap().iter().all(|x| x["action"] == "UNCHANGED"), "{r}");
    // the same code twice in one document is refused
    let twice =
        json!({ "contracts": [{ "projectCode": "LCBP3", "code": "C9", "name": "a" }, { "projectCode": " LCBP3", "code": "C9 ", "name": "b" }] });
    let (s, r) = send(&app, &admin, Method::POST, "/api/v1/reference/import?dryRun=true", &twice).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["rows"][1]["ok"], false, "{r}");
    assert!(r["rows"][1]["message"].as_str().unwrap().contains("ซ้ำ"), "{r}");
    // the whole-document import stays a super admin's
    let (s, e) = send(&app, &padmin, Method::POST, "/api/v1/reference/import", &good).await;
    assert_error(s, &e, 403, "FORBIDDEN");
}

/// LCBP3's LETTER template shows the contract and counts per contract.
async fn contract_letters(app: &TestApp, admin: &Client) {
    let project = app.project_id("LCBP3").await;
    let letter_type = app.state.reference().get().await.unwrap().correspondence_type(None, Some("LETTER")).unwrap().id;
    let body = json!({ "projectId": project, "correspondenceTypeId": letter_type, "template": CONTRACT_TEMPLATE, "resetScope": "CONTRACT",
        "reason": "นับเลขแยกตามสัญญา", "acknowledgeKeyChange": true });
    let (s, saved) = send(app, admin, Method::POST, "/api/v1/document-numbering/configs", &body).await;
    assert_eq!(s, StatusCode::OK, "{saved}");
    assert_eq!(saved["resetScope"], "CONTRACT");
}

fn letter_of(contract: Value) -> Value {
    let mut body = json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER" });
    if let Value::Object(c) = contract {
        body.as_object_mut().unwrap().extend(c);
    }
    body
}

async fn number(app: &TestApp, contract: Value) -> String {
    let (s, body) = app.reserve(&letter_of(contract)).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    body["documentNumber"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn each_contract_has_a_sequence_of_its_own() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;

    // a contract reset needs {CONTRACT} in the template: refused, nothing saved
    let project = app.project_id("LCBP3").await;
    let letter_type = app.state.reference().get().await.unwrap().correspondence_type(None, Some("LETTER")).unwrap().id;
    let versions = app.count("SELECT COUNT(*) FROM numbering_template_versions").await;
    let body = json!({ "projectId": project, "correspondenceTypeId": letter_type, "template": "{PROJECT}-{CORR_TYPE}-{SEQ:4}", "resetScope": "CONTRACT",
        "reason": "ลอง", "acknowledgeKeyChange": true });
    let (s, e) = send(&app, &admin, Method::POST, "/api/v1/document-numbering/configs", &body).await;
    assert_eq!(s.as_u16(), 400, "{e}");
    assert!(e["message"].as_str().unwrap().contains("{CONTRACT}"), "{e}");
    assert_eq!(app.count("SELECT COUNT(*) FROM numbering_template_versions").await, versions);

    contract_letters(&app, &admin).await;
    let (c1, c2) = (contract(&app, "LCBP3", "C1").await.0, contract(&app, "LCBP3", "C2").await.0);

    let (s, preview) = app.post_json("/api/v1/document-numbering/preview", &letter_of(json!({ "contractCode": "C1" }))).await;
    assert_eq!((s, preview["documentNumber"].as_str()), (StatusCode::OK, Some("LCBP3-C1-LETTER-0001")), "{preview}");
    assert_eq!(number(&app, json!({ "contractCode": "C1" })).await, "LCBP3-C1-LETTER-0001");
    assert_eq!(number(&app, json!({ "contractCode": " C2 " })).await, "LCBP3-C2-LETTER-0001");
    assert_eq!(number(&app, json!({ "contractId": c1 })).await, "LCBP3-C1-LETTER-0002");
    assert_eq!(number(&app, json!({ "contractId": c2.to_string() })).await, "LCBP3-C2-LETTER-0002");
    // the requirements' shape names the contract by id too
    let (s, body) = app.reserve(&json!({ "counterKey": { "projectId": project, "correspondenceTypeId": letter_type, "contractId": c1 } })).await;
    assert_eq!((s, body["documentNumber"].as_str()), (StatusCode::OK, Some("LCBP3-C1-LETTER-0003")), "{body}");
    // a new year starts nothing again
    app.clock.set("2026-01-05T03:00:00Z".parse().unwrap());
    assert_eq!(number(&app, json!({ "contractCode": "C1" })).await, "LCBP3-C1-LETTER-0004");

    // one counter per contract, its period the contract's id
    let rows: Vec<(String, i64)> =
        sqlx::query_as("SELECT period, last_number FROM counters ORDER BY id").fetch_all(&app.state.db.pool).await.unwrap();
    assert_eq!(rows, [(format!("CONTRACT_{c1}"), 4), (format!("CONTRACT_{c2}"), 2)]);

    let numbers = app.count("SELECT COUNT(*) FROM document_numbers").await;
    // no contract named: a 400 in Thai that says what is missing
    let (s, e) = app.reserve(&letter_of(Value::Null)).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    assert!(e["message"].as_str().unwrap().contains("ต้องระบุสัญญา"), "{e}");
    assert!(e["detail"].as_str().unwrap().contains("contractId or contractCode"), "{e}");
    // an unknown contract: 404, by code or by id
    let (s, e) = app.reserve(&letter_of(json!({ "contractCode": "C99" }))).await;
    assert_error(s, &e, 404, "NOT_FOUND");
    let (s, e) = app.reserve(&letter_of(json!({ "contractId": 987654 }))).await;
    assert_error(s, &e, 404, "NOT_FOUND");
    // another project's contract: by code it is not LCBP3's, by id it belongs elsewhere
    let (s, r) = send(&app, &admin, Method::POST, CONTRACTS, &json!({ "projectCode": "LCBP3-C1", "code": "C8", "name": "สัญญาของอีกโครงการ" })).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let foreign = r["id"].as_i64().unwrap();
    let (s, e) = app.reserve(&letter_of(json!({ "contractCode": "C8" }))).await;
    assert_error(s, &e, 404, "NOT_FOUND");
    let (s, e) = app.reserve(&letter_of(json!({ "contractId": foreign }))).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    assert!(e["message"].as_str().unwrap().contains("ไม่ได้อยู่ในโครงการ LCBP3"), "{e}");
    // an inactive contract issues nothing
    let c3 = contract(&app, "LCBP3", "C3").await.0;
    let (s, r) = send(
        &app,
        &admin,
        Method::PUT,
        &format!("{CONTRACTS}/{c3}"),
        &json!({ "projectCode": "LCBP3", "code": "C3", "name": "งานอาคาร", "active": false }),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let (s, e) = app.reserve(&letter_of(json!({ "contractCode": "C3" }))).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    assert!(e["message"].as_str().unwrap().contains("ปิดใช้งาน"), "{e}");
    // a malformed id is a 400
    let (s, e) = app.reserve(&letter_of(json!({ "contractId": "x1" }))).await;
    assert_error(s, &e, 400, "VALIDATION_ERROR");
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, numbers);
    assert_eq!(app.count("SELECT COUNT(*) FROM counters").await, 2);

    // the counter browser names the contract; the register takes a contract's period
    let (s, list) = send(&app, &admin, Method::GET, &format!("/api/v1/document-numbering/counters?projectId={project}"), &Value::Null).await;
    assert_eq!(s, StatusCode::OK, "{list}");
    let mine: Vec<(&str, &str)> =
        list.as_array().unwrap().iter().map(|c| (c["period"].as_str().unwrap(), c["contractCode"].as_str().unwrap_or("-"))).collect();
    assert!(mine.contains(&(format!("CONTRACT_{c1}").as_str(), "C1")), "{list}");
    assert!(mine.contains(&(format!("CONTRACT_{c2}").as_str(), "C2")), "{list}");
    // a contract's counter never resets: always among the counters in use now
    let (s, u) =
        send(&app, &admin, Method::GET, &format!("/api/v1/document-numbering/stats/utilization?projectId={project}&days=3"), &Value::Null).await;
    assert_eq!(s, StatusCode::OK, "{u}");
    let periods: Vec<&str> = u["counters"].as_array().unwrap().iter().map(|c| c["counter"]["period"].as_str().unwrap()).collect();
    assert_eq!(periods, [format!("CONTRACT_{c1}"), format!("CONTRACT_{c2}")], "fullest first: {u}");
    let url = format!("/api/v1/document-numbering/register?projectCode=LCBP3&correspondenceTypeCode=LETTER&period=CONTRACT_{c2}");
    let r = admin.get(app.url(&url)).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let csv = r.text().await.unwrap();
    assert!(csv.contains("LCBP3-C2-LETTER-0001") && csv.contains("LCBP3-C2-LETTER-0002") && !csv.contains("LCBP3-C1-"), "{csv}");
    let r = admin
        .get(app.url("/api/v1/document-numbering/register?projectCode=LCBP3&correspondenceTypeCode=LETTER&period=CONTRACT_x"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
}

/// The database itself takes a contract's period and still refuses junk (a CHECK on MariaDB, triggers on SQLite).
#[tokio::test]
async fn the_period_check_takes_a_contract_and_refuses_junk() {
    let app = TestApp::spawn().await;
    let project = app.project_id("LCBP3").await;
    let insert = |period: &'static str, originator: i64| app.insert_bare_counter(project, originator, period);
    for (i, good) in ["CONTRACT_12", "CONTRACT_1", "CONTRACT_9223372036854775807", "YEAR_2026", "NONE"].into_iter().enumerate() {
        insert(good, 100 + i as i64).await.unwrap_or_else(|e| panic!("{good}: {e}"));
    }
    for (i, bad) in
        ["CONTRACT_x", "CONTRACT_", "CONTRACT", "CONTRACT_012", "CONTRACT_0", "CONTRACT_1x", "CONTRACT_-1", "contract_12", "CONTRACT_12_1"]
            .into_iter()
            .enumerate()
    {
        let err = insert(bad, 200 + i as i64).await.expect_err(bad).to_string();
        assert!(err.contains("ck_counters_period") || err.to_lowercase().contains("check constraint"), "{bad}: {err}");
    }
    let err =
        sqlx::query("UPDATE counters SET period = 'CONTRACT_1a' WHERE originator_id = 100").execute(&app.state.db.pool).await.expect_err("update");
    assert!(err.to_string().contains("ck_counters_period"), "{err}");
    sqlx::query("UPDATE counters SET period = 'CONTRACT_13' WHERE originator_id = 100").execute(&app.state.db.pool).await.unwrap();
    assert_eq!(app.count("SELECT COUNT(*) FROM counters WHERE originator_id >= 100").await, 5);
    // the templates' reset scope takes CONTRACT too, and still nothing else
    let insert_template = |scope: &'static str, type_id: i64| {
        sqlx::query(
            "INSERT INTO numbering_templates (project_id, correspondence_type_id, template, reset_scope, version, updated_at) VALUES (?, ?, ?, ?, 1, 0)",
        )
        .bind(project)
        .bind(type_id)
        .bind(CONTRACT_TEMPLATE)
        .bind(scope)
        .execute(&app.state.db.pool)
    };
    insert_template("CONTRACT", 9001).await.unwrap();
    insert_template("CONTRACTS", 9002).await.expect_err("CONTRACTS");
}

/// The reserve page asks for the contract when the template shows it, offering the project's active contracts, and
/// a plain form post (no scripts) takes a number of that contract.
#[tokio::test]
async fn the_reserve_page_asks_for_the_contract() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    contract_letters(&app, &admin).await;
    let (project, c2) = (app.project_id("LCBP3").await, contract(&app, "LCBP3", "C2").await.0);
    let c4 = contract(&app, "LCBP3", "C4").await.0;
    let (s, r) = send(
        &app,
        &admin,
        Method::PUT,
        &format!("{CONTRACTS}/{c4}"),
        &json!({ "projectCode": "LCBP3", "code": "C4", "name": "งานระบบ", "active": false }),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let letter_type = app.state.reference().get().await.unwrap().correspondence_type(None, Some("LETTER")).unwrap().id;

    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(reqwest::header::ORIGIN, app.base.parse().unwrap());
    let browser = Client::builder().cookie_store(true).default_headers(headers).redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let r = browser.post(app.url("/forms/login")).form(&[("username", "admin"), ("password", ADMIN_PASSWORD)]).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);

    let step = format!("/?project={project}&type={letter_type}");
    let html = browser.get(app.url(&step)).send().await.unwrap().text().await.unwrap();
    let at = html.find(r#"name="contract""#).expect("the contract is asked for");
    let select = &html[at..at + html[at..].find("</select>").unwrap()];
    assert!(select.contains(&format!(r#"<option value="{c2}""#)), "LCBP3's contracts are offered: {select}");
    assert!(!select.contains(&format!(r#"<option value="{c4}""#)), "an inactive contract is not offered: {select}");
    assert!(!html.contains(r#"name="originator""#), "the template shows no originator");

    let fields = [("project", project.to_string()), ("type", letter_type.to_string()), ("contract", c2.to_string())];
    let r = browser.post(app.url("/forms/reserve")).form(&fields).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let back = r.headers()[reqwest::header::LOCATION].to_str().unwrap().to_string();
    assert_eq!(back, format!("/?project={project}&type={letter_type}&contract={c2}"));
    let number: String = sqlx::query_scalar("SELECT number FROM document_numbers").fetch_one(&app.state.db.pool).await.unwrap();
    assert_eq!(number, "LCBP3-C2-LETTER-0001");
}

/// A legacy number of a contract template is imported onto its contract's counter, which the next number continues;
/// a counter value names the contract by its code.
#[tokio::test]
async fn a_legacy_contract_number_is_imported_onto_its_contracts_counter() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    contract_letters(&app, &admin).await;
    let (c3, c4) = (contract(&app, "LCBP3", "C3").await.0, contract(&app, "LCBP3", "C4").await.0);
    let rows = json!({ "reason": "ย้ายทะเบียนเลขที่ของสัญญา", "rows": [
        { "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "documentNumber": "LCBP3-C3-LETTER-0005", "documentId": "OLD-C3-5" },
        { "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "contractCode": "C4", "value": 12 },
    ] });
    let (s, r) = send(&app, &admin, Method::POST, "/api/v1/document-numbering/import", &rows).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["applied"], true, "{r}");
    let rows: Vec<(String, i64)> =
        sqlx::query_as("SELECT period, last_number FROM counters ORDER BY id").fetch_all(&app.state.db.pool).await.unwrap();
    assert_eq!(rows, [(format!("CONTRACT_{c3}"), 5), (format!("CONTRACT_{c4}"), 12)]);
    assert_eq!(number(&app, json!({ "contractCode": "C3" })).await, "LCBP3-C3-LETTER-0006");
    assert_eq!(number(&app, json!({ "contractCode": "C4" })).await, "LCBP3-C4-LETTER-0013");
    // a number of a contract the project does not have reads, but belongs to no counter
    let bad = json!([{ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "documentNumber": "LCBP3-C99-LETTER-0001" }]);
    let (s, r) = send(&app, &admin, Method::POST, "/api/v1/document-numbering/import?dryRun=true", &bad).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["rows"][0]["ok"], false, "{r}");
}
