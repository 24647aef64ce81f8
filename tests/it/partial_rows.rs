//! The partial rows of the requirements audit: the global rate limit reached, and an organisation outside the
//! project refused.

use docnum::contract::Role;
use docnum::numbering::ProjectId;
use docnum::server::auth::rate_limit::RateLimits;
use reqwest::StatusCode;
use serde_json::json;

use crate::common::{assert_error, letter, Options, TestApp, ADMIN_PASSWORD};

/// The global limit counts every caller's new numbers together: four from two people fill it, a third person (with
/// a per-user budget of their own left) is refused with 429 and `Retry-After`, and nothing more is taken.
#[tokio::test]
async fn the_global_rate_limit_refuses_everyone_once_reached() {
    let limits = RateLimits { per_user_per_min: 10, global_per_min: 4, ..RateLimits::off() };
    let app = TestApp::spawn_with(Options { limits, ..Options::default() }).await;
    let a = app.user_client("somchai", Role::Staff, &[]).await;
    let b = app.user_client("somsri", Role::Staff, &[]).await;
    let c = app.user_client("somsak", Role::Staff, &[]).await;
    for client in [&a, &a, &b, &b] {
        let r = client.post(app.url("/api/v1/document-numbering/reserve")).json(&letter()).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
    }
    let r = c.post(app.url("/api/v1/document-numbering/reserve")).json(&letter()).send().await.unwrap();
    assert!(r.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok()).is_some_and(|s| s >= 1));
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 429, "RATE_LIMITED");
    // a block is one request against the same limit
    let mut block = letter();
    block["count"] = json!(3);
    let r = c.post(app.url("/api/v1/document-numbering/reserve-block")).json(&block).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 4);
}

/// An organisation that exists but is not a member of the project may neither originate nor receive its numbers.
#[tokio::test]
async fn an_organisation_outside_the_project_is_refused() {
    let app = TestApp::spawn().await;
    organisation_of_no_project(&app).await;
    for field in ["originatorCode", "recipientCode"] {
        let mut body = letter();
        body[field] = json!("ผรม.9");
        let (s, err) = app.reserve(&body).await;
        assert_error(s, &err, 400, "VALIDATION_ERROR");
        assert!(err["message"].as_str().unwrap().contains("ไม่ได้เป็นสมาชิกของโครงการ LCBP3"), "{err}");
        assert!(err["detail"].as_str().unwrap().contains("ผรม.9 is not a member of project LCBP3"), "{err}");
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 0);
    assert_eq!(app.count("SELECT COUNT(*) FROM counters").await, 0);
}

/// The database itself refuses a counter whose period is not in the form the service writes (a CHECK on MariaDB,
/// triggers on SQLite), on insert and on update; the four forms pass.
#[tokio::test]
async fn the_database_refuses_a_period_of_another_form() {
    let app = TestApp::spawn().await;
    let project = app.project_id("LCBP3").await;
    let insert = |period: &'static str, originator: i64| app.insert_bare_counter(project, originator, period);
    for (i, good) in ["YEAR_2026", "MONTH_2026_01", "MONTH_2026_12", "FY_2570", "NONE"].into_iter().enumerate() {
        insert(good, 100 + i as i64).await.unwrap_or_else(|e| panic!("{good}: {e}"));
    }
    for (i, bad) in
        ["YEAR_26", "year_2026", "MONTH_2026_13", "MONTH_2026_00", "MONTH_2026_1", "FY_2570_10", "FY_", "NONE_2026", ""].into_iter().enumerate()
    {
        let err = insert(bad, 200 + i as i64).await.expect_err(bad).to_string();
        assert!(err.contains("ck_counters_period") || err.to_lowercase().contains("check constraint"), "{bad}: {err}");
    }
    let err =
        sqlx::query("UPDATE counters SET period = 'YEAR_2026_X' WHERE originator_id = 100").execute(&app.state.db.pool).await.expect_err("update");
    assert!(err.to_string().contains("ck_counters_period"), "{err}");
    assert_eq!(app.count("SELECT COUNT(*) FROM counters WHERE originator_id >= 100").await, 5);
}

/// A request that names no project takes the one active project its originator belongs to. An originator of no
/// project, or of several, is refused with the choices named; a token scoped to one project chooses among its own.
#[tokio::test]
async fn the_project_is_derived_from_the_originator() {
    let app = TestApp::spawn().await;
    let admin = organisation_of_no_project(&app).await;
    let from = |originator: &str| json!({ "correspondenceTypeCode": "LETTER", "originatorCode": originator, "recipientCode": "สคฉ.3" });

    let (s, err) = app.reserve(&from("ผรม.9")).await;
    assert_error(s, &err, 400, "VALIDATION_ERROR");
    assert!(err["message"].as_str().unwrap().contains("ผรม.9 ไม่ได้เป็นสมาชิกของโครงการใดที่เปิดใช้งาน"), "{err}");
    // the demo's consultant belongs to all five projects
    let (s, err) = app.reserve(&from("คคง.")).await;
    assert_error(s, &err, 400, "VALIDATION_ERROR");
    assert!(err["message"].as_str().unwrap().contains("หลายโครงการ: LCBP3, LCBP3-C1, LCBP3-C2, LCBP3-C3, LCBP3-C4"), "{err}");
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 0);

    // ผรม.9 joins LCBP3-C2 (with the recipient): its letters are LCBP3-C2's
    let c2 = app.project_id("LCBP3-C2").await;
    let r = admin
        .put(app.url(&format!("/api/v1/reference/projects/{c2}")))
        .json(&json!({ "code": "LCBP3-C2", "name": "LCBP3 สัญญาที่ 2", "members": ["กทท.", "สคฉ.3", "คคง.", "ผรม.1", "ผรม.2", "ผรม.9"] }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let (s, number) = app.reserve(&from("ผรม.9")).await;
    assert_eq!(s, StatusCode::OK, "{number}");
    assert!(number["documentNumber"].as_str().unwrap().starts_with("ผรม.9-สคฉ.3-0001-"), "{number}");
    assert_eq!(app.count(&format!("SELECT COUNT(*) FROM counters WHERE project_id = {c2}")).await, 1);

    // a token scoped to LCBP3-C1 alone: the consultant's one project as far as that caller may see
    let c1 = app.project_id("LCBP3-C1").await;
    let admin_id = docnum::server::auth::system::user_id(&app.state.db, "admin").await.unwrap().unwrap();
    let (_, token) = docnum::server::auth::system::create_token(&app.state.db, "c1-only", &[ProjectId(c1)], admin_id, 0).await.unwrap();
    let r = app.browser().post(app.url("/api/v1/document-numbering/reserve")).bearer_auth(&token).json(&from("คคง.")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(app.count(&format!("SELECT COUNT(*) FROM counters WHERE project_id = {c1}")).await, 1);
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 2);
}

/// `recipients` lists a document's addressees as a DMS keeps them: the first TO by sort order is the main recipient
/// that `{RECIPIENT}` shows, a CC never is, and an addressee without a sort order takes its place in the list.
#[tokio::test]
async fn the_first_to_recipient_by_sort_order_is_the_main_one() {
    let app = TestApp::spawn().await;
    let letter_to = |recipients: serde_json::Value| json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "originatorCode": "คคง.", "recipients": recipients });
    let (s, n) = app
        .reserve(&letter_to(json!([
            { "organizationCode": "กทท.", "recipientType": "CC", "sortOrder": 0 },
            { "organizationCode": "ผรม.1", "recipientType": "TO", "sortOrder": 2 },
            { "organizationCode": " สคฉ.3 ", "recipientType": "to", "sortOrder": "1" },
        ])))
        .await;
    assert_eq!(s, StatusCode::OK, "{n}");
    assert!(n["documentNumber"].as_str().unwrap().starts_with("คคง.-สคฉ.3-0001-"), "{n}");
    let (s, n) = app.reserve(&letter_to(json!([{ "organizationCode": "ผรม.2" }, { "organizationCode": "ผรม.1" }]))).await;
    assert_eq!(s, StatusCode::OK, "{n}");
    assert!(n["documentNumber"].as_str().unwrap().starts_with("คคง.-ผรม.2-0001-"), "{n}");

    let many: Vec<_> = (0..101).map(|_| json!({ "organizationCode": "ผรม.1" })).collect();
    let mut both = letter_to(json!([{ "organizationCode": "ผรม.1" }]));
    both["recipientCode"] = json!("ผรม.2");
    for (body, status, code) in [
        (letter_to(json!([{ "organizationCode": "ผรม.1", "recipientType": "CC" }])), 400, "VALIDATION_ERROR"),
        (both, 400, "VALIDATION_ERROR"),
        (letter_to(json!([{ "organizationCode": "ผรม.1", "recipientType": "BCC" }])), 400, "VALIDATION_ERROR"),
        (letter_to(json!([{ "recipientType": "TO" }])), 400, "VALIDATION_ERROR"),
        (letter_to(json!([{ "organizationCode": "ผรม.1", "colour": "red" }])), 400, "VALIDATION_ERROR"),
        (letter_to(json!(many)), 400, "VALIDATION_ERROR"),
        (letter_to(json!([{ "organizationCode": "ไม่มี" }])), 404, "NOT_FOUND"),
    ] {
        let (s, err) = app.reserve(&body).await;
        assert_error(s, &err, status, code);
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 2);
}

/// An admin's client, after it added the contractor ผรม.9, a member of no project.
async fn organisation_of_no_project(app: &TestApp) -> reqwest::Client {
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let r = admin
        .post(app.url("/api/v1/reference/organizations"))
        .json(&json!({ "code": "ผรม.9", "name": "ผู้รับจ้างนอกโครงการ", "role": "CONTRACTOR" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    admin
}
