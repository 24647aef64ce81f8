//! Isolation and bounds: a project admin reads only their projects' audit and error rows (search, CSV,
//! resolve), a project-scoped token only its projects' templates; client numbers far out of range answer
//! without a panic; preview / confirm / cancel are rate-limited; repeated errors are written once; the audit
//! CSV carries no live formula.

use std::collections::HashSet;
use std::time::Duration;

use crate::common::*;
use docnum::contract::Role;
use docnum::server::auth::rate_limit::RateLimits;
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

const REST: &str = "/api/v1/document-numbering";

fn letter_in(project: &str) -> Value {
    json!({ "projectCode": project, "correspondenceTypeCode": "LETTER", "originatorCode": "คคง.", "recipientCode": "สคฉ.3" })
}

async fn get(client: &Client, url: String) -> (StatusCode, Value) {
    let r = client.get(url).send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn get_text(client: &Client, url: String) -> (StatusCode, String) {
    let r = client.get(url).send().await.unwrap();
    (r.status(), r.text().await.unwrap())
}

/// Reserves `n` numbers of the project over the super admin's token; their numbers.
async fn reserve_in(app: &TestApp, project: &str, n: usize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for _ in 0..n {
        let (s, r) = app.reserve(&letter_in(project)).await;
        assert_eq!(s, StatusCode::OK, "{r}");
        out.push((r["documentNumber"].as_str().unwrap().to_string(), r["token"].as_str().unwrap().to_string()));
    }
    out
}

async fn counter_ids_of(app: &TestApp, project_id: i64) -> HashSet<i64> {
    use sqlx::Row;
    sqlx::query("SELECT id FROM counters WHERE project_id = ?")
        .bind(project_id)
        .fetch_all(&app.state.db.pool)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get::<i64, _>(0))
        .collect()
}

/// Waits until the error log (written off the request path) holds `n` rows, then a little longer to see no more come.
async fn error_rows_settle_at(app: &TestApp, n: i64) {
    for _ in 0..200 {
        if app.count("SELECT COUNT(*) FROM error_log").await >= n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(app.count("SELECT COUNT(*) FROM error_log").await, n, "error-log rows");
}

#[tokio::test]
async fn a_project_admin_gets_none_of_another_projects_audit_rows_in_search_or_csv() {
    let app = TestApp::spawn().await;
    let (lcbp3, c1) = (app.project_id("LCBP3").await, app.project_id("LCBP3-C1").await);
    let own = reserve_in(&app, "LCBP3", 2).await;
    let other = reserve_in(&app, "LCBP3-C1", 3).await;
    let (s, r) = app.post_json(&format!("{REST}/confirm"), &json!({ "token": other[0].1, "documentId": "C1-DOC-1" })).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    // an admin-chain row about LCBP3 (a template saved): no counter, so super admins only
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let r = admin
        .post(app.url(&format!("{REST}/configs")))
        .json(&json!({ "projectId": lcbp3, "correspondenceTypeId": null, "template": "{PROJECT}-{SEQ:4}-{YEAR:B.E.}", "resetScope": "YEARLY", "reason": "project default for the isolation test", "acknowledgeKeyChange": true }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK, "{}", r.text().await.unwrap());

    let padmin = app.user_client("padmin-lcbp3", Role::ProjectAdmin, &[lcbp3]).await;
    let own_counters = counter_ids_of(&app, lcbp3).await;
    let (s, page) = get(&padmin, app.url(&format!("{REST}/logs/audit?pageSize=500"))).await;
    assert_eq!(s, StatusCode::OK, "{page}");
    let rows = page["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "the two reservations of LCBP3 and nothing else: {page}");
    assert_eq!(page["total"], 2);
    for row in rows {
        assert!(own_counters.contains(&row["counterId"].as_i64().unwrap()), "{row}");
    }
    let numbers: HashSet<&str> = rows.iter().filter_map(|r| r["documentNumber"].as_str()).collect();
    assert_eq!(numbers, own.iter().map(|(n, _)| n.as_str()).collect());

    // a filter on their own project: the same; on another project: 403, over the page and the CSV
    let (s, page) = get(&padmin, app.url(&format!("{REST}/logs/audit?projectId={lcbp3}"))).await;
    assert_eq!((s, page["total"].as_i64()), (StatusCode::OK, Some(2)));
    let (s, body) = get(&padmin, app.url(&format!("{REST}/logs/audit?projectId={c1}"))).await;
    assert_error(s, &body, 403, "FORBIDDEN");
    let (s, body) = get(&padmin, app.url(&format!("{REST}/logs/audit?projectId={c1}&format=csv"))).await;
    assert_error(s, &body, 403, "FORBIDDEN");
    // filters that would match C1's rows find nothing (LCBP3 has numbers 1 and 2 of the same rendering, C1 has 3)
    let (s, page) = get(&padmin, app.url(&format!("{REST}/logs/audit?number={}", urlencode(&other[2].0)))).await;
    assert_eq!((s, page["total"].as_i64()), (StatusCode::OK, Some(0)));
    let (s, page) = get(&padmin, app.url(&format!("{REST}/logs/audit?operation=CONFIRM"))).await;
    assert_eq!((s, page["total"].as_i64()), (StatusCode::OK, Some(0)));

    let (s, csv) = get_text(&padmin, app.url(&format!("{REST}/logs/audit?format=csv"))).await;
    assert_eq!(s, StatusCode::OK);
    let lines: Vec<&str> = csv.trim().lines().collect();
    assert_eq!(lines.len(), 3, "a header and the two LCBP3 rows: {csv}");
    for (n, _) in &own {
        assert!(csv.contains(n.as_str()), "{csv}");
    }
    assert!(!csv.contains("LCBP3-C1") && !csv.contains("C1-DOC-1") && !csv.contains("TEMPLATE"), "{csv}");

    // the super admin sees every row: both projects and the admin chain
    let (_, all) = get(&admin, app.url(&format!("{REST}/logs/audit?pageSize=500"))).await;
    let all_rows = all["rows"].as_array().unwrap();
    assert!(all_rows.iter().any(|r| r["documentNumber"] == json!(other[0].0)), "{all}");
    assert!(all_rows.iter().any(|r| r["counterId"].is_null()), "admin-chain rows: {all}");
    let (_, csv) = get_text(&admin, app.url(&format!("{REST}/logs/audit?format=csv&projectId={c1}"))).await;
    assert_eq!(csv.trim().lines().count(), 1 + 4, "C1: three reservations and a confirmation: {csv}");

    // a project admin of no project sees nothing; staff are refused
    let nobody = app.user_client("padmin-none", Role::ProjectAdmin, &[]).await;
    let (s, page) = get(&nobody, app.url(&format!("{REST}/logs/audit"))).await;
    assert_eq!((s, page["total"].as_i64()), (StatusCode::OK, Some(0)));
    let staff = app.user_client("staff-1", Role::Staff, &[]).await;
    let (s, body) = get(&staff, app.url(&format!("{REST}/logs/audit"))).await;
    assert_error(s, &body, 403, "FORBIDDEN");
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn a_project_admin_sees_and_resolves_only_their_projects_error_rows() {
    let app = TestApp::spawn().await;
    let (lcbp3, c1) = (app.project_id("LCBP3").await, app.project_id("LCBP3-C1").await);
    // three validation errors: in LCBP3, in LCBP3-C1 (an originator that is not an organization), and in no project
    for project in ["LCBP3", "LCBP3-C1", "NO-SUCH-PROJECT"] {
        let mut bad = letter_in(project);
        bad["originatorCode"] = json!(format!("ไม่มี-{project}"));
        let (s, body) = app.reserve(&bad).await;
        assert_eq!(s.as_u16() / 100, 4, "{body}");
    }
    // and one in C1 through confirm (the project comes from the reservation)
    let c1_token = reserve_in(&app, "LCBP3-C1", 1).await.remove(0).1;
    let (s, _) = app.post_json(&format!("{REST}/confirm"), &json!({ "token": c1_token, "documentId": "" })).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    error_rows_settle_at(&app, 4).await;

    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let (_, all) = get(&admin, app.url(&format!("{REST}/logs/errors"))).await;
    assert_eq!(all["total"], 4, "{all}");
    let projects: Vec<Option<i64>> = all["rows"].as_array().unwrap().iter().map(|r| r["projectId"].as_i64()).collect();
    assert_eq!(projects.iter().filter(|p| **p == Some(c1)).count(), 2, "{all}");
    assert_eq!(projects.iter().filter(|p| **p == Some(lcbp3)).count(), 1, "{all}");
    assert_eq!(projects.iter().filter(|p| p.is_none()).count(), 1, "{all}");
    let id_of =
        |project: Option<i64>| all["rows"].as_array().unwrap().iter().find(|r| r["projectId"].as_i64() == project).unwrap()["id"].as_i64().unwrap();
    let (own_row, c1_row, no_project_row) = (id_of(Some(lcbp3)), id_of(Some(c1)), id_of(None));

    let padmin = app.user_client("padmin-lcbp3", Role::ProjectAdmin, &[lcbp3]).await;
    let (s, page) = get(&padmin, app.url(&format!("{REST}/logs/errors"))).await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert_eq!(page["total"], 1, "{page}");
    let rows = page["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0]["id"].as_i64(), rows[0]["projectId"].as_i64()), (Some(own_row), Some(lcbp3)));
    assert!(!page.to_string().contains("LCBP3-C1") && !page.to_string().contains("NO-SUCH-PROJECT"), "{page}");

    // resolving another project's row, or a row of no project: 404 (as if it did not exist); their own: done
    for id in [c1_row, no_project_row] {
        let r = padmin.post(app.url(&format!("{REST}/logs/errors/{id}/resolve"))).send().await.unwrap();
        let s = r.status();
        assert_error(s, &r.json().await.unwrap(), 404, "NOT_FOUND");
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM error_log WHERE resolved_at IS NOT NULL").await, 0);
    let r = padmin.post(app.url(&format!("{REST}/logs/errors/{own_row}/resolve"))).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let (_, page) = get(&padmin, app.url(&format!("{REST}/logs/errors?unresolvedOnly=true"))).await;
    assert_eq!(page["total"], 0);
    // the super admin resolves any row
    let r = admin.post(app.url(&format!("{REST}/logs/errors/{no_project_row}/resolve"))).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);

    let staff = app.user_client("staff-1", Role::Staff, &[]).await;
    let (s, body) = get(&staff, app.url(&format!("{REST}/logs/errors"))).await;
    assert_error(s, &body, 403, "FORBIDDEN");
}

/// A token's scope names projects that exist (checked by `auth::store::existing_projects`): an unknown id, however
/// large, is a 400 with the Thai message, and no token is made.
#[tokio::test]
async fn a_token_for_a_project_that_does_not_exist_is_refused_and_not_made() {
    let app = TestApp::spawn().await;
    let lcbp3 = app.project_id("LCBP3").await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let url = app.url("/api/v1/admin/api-tokens");
    let before = admin.get(&url).send().await.unwrap().json::<Vec<Value>>().await.unwrap().len();
    for ids in [json!([999_999]), json!([lcbp3, 999_999]), json!([i64::MAX])] {
        let r = admin.post(&url).json(&json!({ "name": "nowhere", "projectIds": ids })).send().await.unwrap();
        let s = r.status();
        let body: Value = r.json().await.unwrap();
        assert_error(s, &body, 404, "NOT_FOUND");
        assert!(body["message"].as_str().unwrap().contains("ไม่พบข้อมูล: โครงการ"), "{body}");
    }
    let after = admin.get(&url).send().await.unwrap().json::<Vec<Value>>().await.unwrap().len();
    assert_eq!(after, before, "no token was made");
}

#[tokio::test]
async fn a_project_scoped_token_reads_only_its_projects_templates() {
    let app = TestApp::spawn().await;
    let (lcbp3, c1) = (app.project_id("LCBP3").await, app.project_id("LCBP3-C1").await);
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let r = admin.post(app.url("/api/v1/admin/api-tokens")).json(&json!({ "name": "dms-lcbp3", "projectIds": [lcbp3] })).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let scoped = r.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_string();
    let as_scoped = |path: String| app.client.get(app.url(&path)).bearer_auth(&scoped).send();

    let r = as_scoped(format!("{REST}/configs")).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let listed: Vec<Value> = r.json().await.unwrap();
    assert!(!listed.is_empty());
    assert!(listed.iter().all(|t| t["projectId"] == lcbp3), "only LCBP3's templates: {listed:?}");
    let r = as_scoped(format!("{REST}/configs?projectId={lcbp3}")).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = as_scoped(format!("{REST}/configs?projectId={c1}")).await.unwrap();
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 403, "FORBIDDEN");

    // one template of C1, by id and its history: refused; LCBP3's: answered
    let (_, every) = {
        let r = app.client.get(app.url(&format!("{REST}/configs"))).bearer_auth(&app.token).send().await.unwrap();
        (r.status(), r.json::<Vec<Value>>().await.unwrap())
    };
    let c1_config = every.iter().find(|t| t["projectId"] == c1).unwrap()["id"].as_i64().unwrap();
    let own_config = every.iter().find(|t| t["projectId"] == lcbp3).unwrap()["id"].as_i64().unwrap();
    for path in [format!("{REST}/configs/{c1_config}"), format!("{REST}/configs/{c1_config}/versions")] {
        let r = as_scoped(path.clone()).await.unwrap();
        let s = r.status();
        assert_error(s, &r.json().await.unwrap(), 403, "FORBIDDEN");
    }
    for path in [format!("{REST}/configs/{own_config}"), format!("{REST}/configs/{own_config}/versions")] {
        assert_eq!(as_scoped(path.clone()).await.unwrap().status(), StatusCode::OK, "{path}");
    }
    // an unscoped token and a person read every project's templates
    assert!(every.iter().any(|t| t["projectId"] == c1));
    let staff = app.user_client("staff-1", Role::Staff, &[]).await;
    let (s, _) = get(&staff, app.url(&format!("{REST}/configs/{c1_config}"))).await;
    assert_eq!(s, StatusCode::OK);
}

#[tokio::test]
async fn the_counter_browser_keeps_a_project_admin_to_their_projects() {
    let app = TestApp::spawn().await;
    let (lcbp3, c1) = (app.project_id("LCBP3").await, app.project_id("LCBP3-C1").await);
    reserve_in(&app, "LCBP3", 1).await;
    reserve_in(&app, "LCBP3-C1", 1).await;
    let c1_counter = *counter_ids_of(&app, c1).await.iter().next().unwrap();
    let padmin = app.user_client("padmin-lcbp3", Role::ProjectAdmin, &[lcbp3]).await;
    let (s, counters) = get(&padmin, app.url(&format!("{REST}/counters"))).await;
    assert_eq!(s, StatusCode::OK, "{counters}");
    let counters = counters.as_array().unwrap();
    assert_eq!(counters.len(), 1);
    assert_eq!(counters[0]["projectId"], lcbp3);
    let (s, body) = get(&padmin, app.url(&format!("{REST}/counters?projectId={c1}"))).await;
    assert_error(s, &body, 403, "FORBIDDEN");
    let (s, body) = get(&padmin, app.url(&format!("{REST}/counters/{c1_counter}/numbers"))).await;
    assert_error(s, &body, 403, "FORBIDDEN");
}

#[tokio::test]
async fn pages_and_sequences_far_out_of_range_answer_without_a_panic() {
    let app = TestApp::spawn().await;
    reserve_in(&app, "LCBP3", 2).await;
    let counter = *counter_ids_of(&app, app.project_id("LCBP3").await).await.iter().next().unwrap();
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    // pages past the end, up to the last page served: a valid, empty page (the offset is computed in 64 bits)
    for path in ["logs/audit", "logs/errors"] {
        for (page, size) in [("999999", "50"), ("1000000", "500"), ("1000000", "4294967295")] {
            let (s, body) = get(&admin, app.url(&format!("{REST}/{path}?page={page}&pageSize={size}"))).await;
            assert_eq!(s, StatusCode::OK, "{path} page {page}: {body}");
            assert_eq!(body["rows"], json!([]), "{body}");
            assert_eq!(body["page"].as_u64(), Some(page.parse().unwrap()));
        }
        // beyond the last page, and numbers that do not fit: 400, with the error body
        for query in
            ["page=1000001", "page=2147483648", "page=4294967295&pageSize=4294967295", "page=4294967296", "page=-1", "pageSize=99999999999999999999"]
        {
            let (s, body) = get(&admin, app.url(&format!("{REST}/{path}?{query}"))).await;
            assert_error(s, &body, 400, "VALIDATION_ERROR");
        }
    }
    // the CSV export is the whole selection, not a page: it reads no page number
    let (s, body) = get_text(&admin, app.url(&format!("{REST}/logs/audit?format=csv&page=2147483648"))).await;
    assert_eq!(s, StatusCode::OK, "{body}");

    // the counter browser's window: before 0 is a 400; anywhere from 0, and any limit, an answer (past the last
    // number, an empty one)
    for query in ["afterSequence=-9223372036854775808", "afterSequence=-1"] {
        let (s, body) = get(&admin, app.url(&format!("{REST}/counters/{counter}/numbers?{query}"))).await;
        assert_error(s, &body, 400, "VALIDATION_ERROR");
    }
    for query in [
        "afterSequence=9223372036854775807",
        "afterSequence=9223372036854775806&limit=9223372036854775807",
        "afterSequence=10000",
        "afterSequence=9999",
        "afterSequence=9999&limit=9223372036854775807",
        "afterSequence=0",
        "limit=9223372036854775807",
        "limit=-9223372036854775808",
    ] {
        let (s, body) = get(&admin, app.url(&format!("{REST}/counters/{counter}/numbers?{query}"))).await;
        assert_eq!(s, StatusCode::OK, "{query}: {body}");
        let numbers = body["numbers"].as_array().unwrap().len();
        assert!(numbers <= 2, "{query}: {body}");
        if query.starts_with("afterSequence=9") || query.starts_with("afterSequence=1") {
            assert_eq!((numbers, body["gaps"].as_array().unwrap().len()), (0, 0), "{body}");
            assert!(body["nextAfterSequence"].is_null());
        }
    }
    let (s, body) = get(&admin, app.url(&format!("{REST}/counters/{counter}/numbers?afterSequence=9223372036854775808"))).await;
    assert_error(s, &body, 400, "VALIDATION_ERROR");

    // manual override and reset requests with extreme values: 4xx, counter unchanged
    for value in [i64::MAX, i64::MIN, -1] {
        let r = admin
            .post(app.url(&format!("{REST}/manual-override")))
            .json(&json!({ "counterId": counter, "value": value, "reason": "extreme" }))
            .send()
            .await
            .unwrap();
        let s = r.status();
        // negative: malformed; too large: more than the counter's template can number
        let (status, code) = if value < 0 { (400, "VALIDATION_ERROR") } else { (409, "NB002") };
        assert_error(s, &r.json().await.unwrap(), status, code);
        let r = admin
            .post(app.url(&format!("{REST}/counters/{counter}/reset-requests")))
            .json(&json!({ "newValue": value, "reason": "extreme values must not panic" }))
            .send()
            .await
            .unwrap();
        let s = r.status();
        let (status, code) = if value < 0 { (400, "VALIDATION_ERROR") } else { (409, "RESET_ABOVE_LAST") };
        assert_error(s, &r.json().await.unwrap(), status, code);
    }
    // a year far from now, and one that does not fit
    for year in [json!(i32::MAX), json!(i32::MIN)] {
        let mut req = letter();
        req["year"] = year;
        let (s, body) = app.reserve(&req).await;
        assert_error(s, &body, 400, "VALIDATION_ERROR");
    }
    let (s, body) = app.reserve(&json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "year": 99999999999i64 })).await;
    assert_error(s, &body, 400, "VALIDATION_ERROR");
    let (s, body) = get(&admin, app.url(&format!("{REST}/counters?year=2147483647"))).await;
    assert_eq!((s, body), (StatusCode::OK, json!([])));
    // the server is still there, and the counter as it was
    assert_eq!(app.count(&format!("SELECT last_number FROM counters WHERE id = {counter}")).await, 2);
    assert_eq!(app.client.get(app.url("/health")).send().await.unwrap().status(), StatusCode::OK);
}

#[tokio::test]
async fn the_audit_csv_neutralises_formula_cells() {
    let app = TestApp::spawn().await;
    let reserved = reserve_in(&app, "LCBP3", 3).await;
    for ((_, token), document_id) in reserved.iter().zip(["=1+1", "@SUM(A1)", "=HYPERLINK(\"http://evil\",\"x\")"]) {
        let (s, r) = app.post_json(&format!("{REST}/confirm"), &json!({ "token": token, "documentId": document_id })).await;
        assert_eq!(s, StatusCode::OK, "{r}");
    }
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let (s, csv) = get_text(&admin, app.url(&format!("{REST}/logs/audit?format=csv&operation=CONFIRM"))).await;
    assert_eq!(s, StatusCode::OK);
    let mut reader = csv::Reader::from_reader(csv.trim_start_matches('\u{feff}').as_bytes());
    let headers = reader.headers().unwrap().clone();
    let column = headers.iter().position(|h| h == "document_id").unwrap();
    let ids: Vec<String> = reader.records().map(|r| r.unwrap()[column].to_string()).collect();
    assert_eq!(ids, ["'=1+1", "'@SUM(A1)", "'=HYPERLINK(\"http://evil\",\"x\")"]);
    assert!(csv.contains("'=1+1"), "{csv}");
    // the JSON search shows the values as they are
    let (_, page) = get(&admin, app.url(&format!("{REST}/logs/audit?operation=CONFIRM"))).await;
    assert!(page["rows"].as_array().unwrap().iter().any(|r| r["documentId"] == "=1+1"), "{page}");
}

#[tokio::test]
async fn preview_confirm_and_cancel_answer_429_past_their_own_limit() {
    // numbers: 1 per user and 2 per token a minute; preview / confirm / cancel: twice that (factor 2)
    let limits = RateLimits { per_user_per_min: 1, per_token_per_min: 2, light_factor: 2, ..RateLimits::off() };
    let app = TestApp::spawn_with(Options { limits, ..Options::default() }).await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let new_token = |name: &'static str| {
        let admin = admin.clone();
        let url = app.url("/api/v1/admin/api-tokens");
        async move {
            let r = admin.post(url).json(&json!({ "name": name })).send().await.unwrap();
            assert_eq!(r.status(), StatusCode::OK);
            r.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_string()
        }
    };
    let unknown = "7d2b4c1e-0000-4000-8000-000000000000";
    let calls: [(&str, Value); 3] =
        [("preview", letter()), ("confirm", json!({ "token": unknown, "documentId": "DOC-1" })), ("cancel", json!({ "token": unknown }))];
    for (operation, body) in calls {
        let token = new_token(Box::leak(format!("limits-{operation}").into_boxed_str())).await;
        for _ in 0..4 {
            let r = app.client.post(app.url(&format!("{REST}/{operation}"))).bearer_auth(&token).json(&body).send().await.unwrap();
            assert_ne!(r.status(), StatusCode::TOO_MANY_REQUESTS, "{operation}");
        }
        let r = app.client.post(app.url(&format!("{REST}/{operation}"))).bearer_auth(&token).json(&body).send().await.unwrap();
        let retry_after: u64 = r.headers().get("retry-after").expect("Retry-After").to_str().unwrap().parse().unwrap();
        assert!(retry_after >= 1);
        let s = r.status();
        assert_error(s, &r.json().await.unwrap(), 429, "RATE_LIMITED");
        // a bucket of their own: the token still gets its numbers
        let r = app.client.post(app.url(&format!("{REST}/reserve"))).bearer_auth(&token).json(&letter()).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{operation}: reserve after the light bucket is spent");
    }

    // the form's server functions count in the same bucket: a person previews twice, then 429
    let staff = app.user_client("staff-1", Role::Staff, &[]).await;
    for expected in [200, 200, 429] {
        let r = staff.post(app.url("/sfn/preview_number")).json(&json!({ "request": letter() })).send().await.unwrap();
        assert_eq!(r.status().as_u16(), expected);
    }
    let r = staff.post(app.url(&format!("{REST}/preview"))).json(&letter()).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn a_validation_error_repeated_twenty_times_writes_one_row() {
    let app = TestApp::spawn().await;
    let mut bad = letter();
    bad["originatorCode"] = json!("ไม่มีหน่วยงานนี้");
    for _ in 0..20 {
        let (s, body) = app.reserve(&bad).await;
        assert_error(s, &body, 404, "NOT_FOUND");
    }
    error_rows_settle_at(&app, 1).await;
    // another caller with the same error: its own row
    let staff = app.user_client("staff-1", Role::Staff, &[]).await;
    for _ in 0..5 {
        assert_eq!(staff.post(app.url(&format!("{REST}/reserve"))).json(&bad).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    }
    error_rows_settle_at(&app, 2).await;
    // past the window the error is written again, saying how many repeats were skipped
    app.clock.advance(chrono::Duration::seconds(61));
    let (s, _) = app.reserve(&bad).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    error_rows_settle_at(&app, 3).await;
    let context: Value = serde_json::from_str(&last_context(&app).await).unwrap();
    assert_eq!(context["repeatsSkipped"], 19, "{context}");

    // context fields are clipped: a 1,000-character document id is kept to 200 characters
    let long = "ด".repeat(1000);
    let r = app.post(&format!("/api/v1/documents/{}/generate-number", urlencode(&long)), &bad).await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    error_rows_settle_at(&app, 4).await;
    let context = last_context(&app).await;
    assert!(context.chars().count() < 1000, "{} characters", context.chars().count());
    let context: Value = serde_json::from_str(&context).unwrap();
    assert_eq!(context["context"]["documentId"].as_str().unwrap().chars().count(), docnum::server::errors_log::MAX_CONTEXT_TEXT_CHARS + 1);
}

/// The context of the newest error-log row (MariaDB hands its MEDIUMTEXT over as bytes).
async fn last_context(app: &TestApp) -> String {
    use sqlx::Row;
    let row = sqlx::query("SELECT context FROM error_log ORDER BY id DESC LIMIT 1").fetch_one(&app.state.db.pool).await.unwrap();
    row.try_get::<String, _>(0).unwrap_or_else(|_| String::from_utf8(row.get::<Vec<u8>, _>(0)).unwrap())
}
