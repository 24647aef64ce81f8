//! Fiscal years (docs/rules/numbering.md#reset-scopes-and-periods): a `{FY:BE}` template resets on the project's
//! first month in Bangkok time, and a super
//! admin with a reason may continue a closed year's series (back-dating); staff may not.

use chrono::{DateTime, Utc};
use docnum::contract::Role;
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

use crate::common::{assert_error, letter, Options, TestApp, ADMIN_PASSWORD};

/// 2026-11-28 10:00 in Bangkok: fiscal year 2570 (1 Oct 2026 – 30 Sep 2027).
fn today() -> DateTime<Utc> {
    "2026-11-28T03:00:00Z".parse().unwrap()
}

fn at(instant: &str) -> DateTime<Utc> {
    instant.parse().unwrap()
}

const FY_TEMPLATE: &str = "{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{FY:BE}";

async fn send(app: &TestApp, client: &Client, method: reqwest::Method, path: &str, body: &Value) -> (StatusCode, Value) {
    let r = client.request(method, app.url(path)).json(body).send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// LCBP3's LETTER template becomes `FY_TEMPLATE`, reset per fiscal year.
async fn fiscal_letters(app: &TestApp, admin: &Client) {
    let project = app.project_id("LCBP3").await;
    let letter_type = app.state.reference().get().await.unwrap().correspondence_type(None, Some("LETTER")).unwrap().id;
    let body = json!({ "projectId": project, "correspondenceTypeId": letter_type, "template": FY_TEMPLATE, "resetScope": "FISCAL_YEAR",
        "reason": "นับตามปีงบประมาณ", "acknowledgeKeyChange": true });
    let (s, saved) = send(app, admin, reqwest::Method::POST, "/api/v1/document-numbering/configs", &body).await;
    assert_eq!(s, StatusCode::OK, "{saved}");
    assert_eq!(saved["resetScope"], "FISCAL_YEAR");
}

async fn number(app: &TestApp) -> String {
    let (s, body) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    body["documentNumber"].as_str().unwrap().to_string()
}

async fn periods(app: &TestApp) -> Vec<String> {
    sqlx::query_scalar("SELECT period FROM counters ORDER BY id").fetch_all(&app.state.db.pool).await.unwrap()
}

#[tokio::test]
async fn a_fiscal_year_template_numbers_today_in_fy_2570_and_turns_on_the_first_month() {
    let app = TestApp::spawn_with(Options { start: today(), ..Options::default() }).await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    fiscal_letters(&app, &admin).await;

    let (s, preview) = app.post_json("/api/v1/document-numbering/preview", &letter()).await;
    assert_eq!((s, preview["documentNumber"].as_str()), (StatusCode::OK, Some("คคง.-สคฉ.3-0001-2570")), "{preview}");
    assert_eq!(number(&app).await, "คคง.-สคฉ.3-0001-2570", "today, 2026-11-28, is in FY 2570");
    assert_eq!(periods(&app).await, ["FY_2570"]);

    // the last second of 30 Sep 2027 in Bangkok is still FY 2570; 1 Oct 00:00 starts FY 2571 at 1 (the service's
    // clock runs on while a request is served, and `Clock::set` keeps whole milliseconds: the exact millisecond
    // boundary is the unit tests' in `numbering::period`)
    app.clock.set(at("2027-09-30T16:59:59Z"));
    assert_eq!(number(&app).await, "คคง.-สคฉ.3-0002-2570");
    app.clock.set(at("2027-09-30T17:00:00.002Z"));
    assert_eq!(number(&app).await, "คคง.-สคฉ.3-0001-2571");

    // a project whose fiscal year starts in April: 1 Oct is no boundary, 1 Apr is
    let project = app.project_id("LCBP3").await;
    let (s, body) = send(
        &app,
        &admin,
        reqwest::Method::PUT,
        &format!("/api/v1/reference/projects/{project}"),
        &json!({ "code": "LCBP3", "name": "โครงการท่าเรือแหลมฉบังระยะที่ 3", "fiscalYearFirstMonth": 4 }),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let (s, projects) = send(&app, &admin, reqwest::Method::GET, "/api/v1/reference/projects", &Value::Null).await;
    assert_eq!(s, StatusCode::OK);
    let lcbp3 = projects.as_array().unwrap().iter().find(|p| p["code"] == "LCBP3").unwrap();
    assert_eq!(lcbp3["fiscalYearFirstMonth"], 4);
    // October 2027 is in the year April 2027 – March 2028, FY 2571: the same counter continues
    assert_eq!(number(&app).await, "คคง.-สคฉ.3-0002-2571");
    app.clock.set(at("2028-03-31T16:59:59Z"));
    assert_eq!(number(&app).await, "คคง.-สคฉ.3-0003-2571");
    app.clock.set(at("2028-03-31T17:00:00.002Z"));
    assert_eq!(number(&app).await, "คคง.-สคฉ.3-0001-2572");
    assert_eq!(periods(&app).await, ["FY_2570", "FY_2571", "FY_2572"]);

    // a month outside 1–12 changes nothing
    let (s, body) = send(
        &app,
        &admin,
        reqwest::Method::PUT,
        &format!("/api/v1/reference/projects/{project}"),
        &json!({ "code": "LCBP3", "name": "x", "fiscalYearFirstMonth": 13 }),
    )
    .await;
    assert_error(s, &body, 400, "VALIDATION_ERROR");
    assert_eq!(app.count("SELECT fiscal_year_first_month FROM projects WHERE code = 'LCBP3'").await, 4);
}

#[tokio::test]
async fn a_super_admin_with_a_reason_continues_a_closed_fiscal_year_and_staff_cannot() {
    // numbers of FY 2569 taken in September 2026, before it closed
    let app = TestApp::spawn_with(Options { start: at("2026-09-20T03:00:00Z"), ..Options::default() }).await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    fiscal_letters(&app, &admin).await;
    assert_eq!(number(&app).await, "คคง.-สคฉ.3-0001-2569");
    assert_eq!(number(&app).await, "คคง.-สคฉ.3-0002-2569");
    app.clock.set(today());
    assert_eq!(number(&app).await, "คคง.-สคฉ.3-0001-2570");

    let backdated = |reason: &str, year: i64| {
        let mut body = letter();
        body["year"] = json!(year);
        body["backdateReason"] = json!(reason);
        body
    };
    let reserve = "/api/v1/document-numbering/reserve";

    // staff: refused, nothing taken
    let staff = app.user_client("somchai", Role::Staff, &[]).await;
    let (s, body) = send(&app, &staff, reqwest::Method::POST, reserve, &backdated("หนังสือลงวันที่ 25 ก.ย. 2569 ที่ตกหล่น", 2569)).await;
    assert_error(s, &body, 403, "FORBIDDEN");
    // an API token is no super admin either
    let (s, body) = app.reserve(&backdated("หนังสือที่ตกหล่น", 2569)).await;
    assert_error(s, &body, 403, "FORBIDDEN");
    // no reason: the year must be the current one
    let mut no_reason = letter();
    no_reason["year"] = json!(2568);
    let (s, body) = send(&app, &admin, reqwest::Method::POST, reserve, &no_reason).await;
    assert_error(s, &body, 400, "VALIDATION_ERROR");
    // the current fiscal year is not closed
    let (s, body) = send(&app, &admin, reqwest::Method::POST, reserve, &backdated("ไม่ใช่ย้อนหลัง", 2570)).await;
    assert_error(s, &body, 400, "VALIDATION_ERROR");
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 3, "no refusal took a number");

    // the super admin: the next number of FY 2569's series, in B.E. or A.D.
    let (s, body) = send(&app, &admin, reqwest::Method::POST, reserve, &backdated("หนังสือลงวันที่ 25 ก.ย. 2569 ที่ตกหล่น", 2569)).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(body["documentNumber"], "คคง.-สคฉ.3-0003-2569");
    let (s, body) = send(&app, &admin, reqwest::Method::POST, reserve, &backdated("อีกฉบับ", 2026)).await;
    assert_eq!((s, body["documentNumber"].as_str()), (StatusCode::OK, Some("คคง.-สคฉ.3-0004-2569")));
    // today's series goes on where it was
    assert_eq!(number(&app).await, "คคง.-สคฉ.3-0002-2570");

    // audited as back-dated, with its period and reason
    let meta: String = sqlx::query_scalar("SELECT metadata FROM audit_log WHERE document_number = 'คคง.-สคฉ.3-0003-2569' AND operation = 'RESERVE'")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    let meta: Value = serde_json::from_str(&meta).unwrap();
    assert_eq!(meta["backdated"], json!({ "period": "FY_2569", "reason": "หนังสือลงวันที่ 25 ก.ย. 2569 ที่ตกหล่น" }));
    let today_meta: String = sqlx::query_scalar("SELECT metadata FROM audit_log WHERE document_number = 'คคง.-สคฉ.3-0002-2570'")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert!(!today_meta.contains("backdated"), "{today_meta}");
    // every number accounted for
    let report = docnum::server::numbering::check::check(&app.state.db, &[]).await.unwrap();
    assert!(report.ok, "{:?}", report.problems);
}
