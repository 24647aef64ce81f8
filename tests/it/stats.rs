//! The numbering statistics: numbers per Bangkok day and type, and each counter's utilization at
//! the end of each day, over REST; who may see which projects; the parameters' refusals.

use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

use crate::common::{assert_error, be2568, letter, TestApp, ADMIN_PASSWORD};
use docnum::contract::Role;

async fn get(app: &TestApp, client: &Client, path: &str) -> (StatusCode, Value) {
    let r = client.get(app.url(path)).send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

fn at(s: &str) -> chrono::DateTime<chrono::Utc> {
    s.parse().unwrap()
}

fn counts<'a>(answer: &'a Value, code: &str) -> Option<&'a Vec<Value>> {
    answer["types"].as_array()?.iter().find(|t| t["correspondenceTypeCode"] == code)?["counts"].as_array()
}

/// Numbers on known days: one on 1 March (before a 90-day window), two LETTERs and a MEMO of LCBP3 on 10 June,
/// one LETTER at 00:30 on 13 June in Bangkok (still 12 June in UTC), and one LETTER of LCBP3-C1 today (15 June).
async fn issue_on_known_days(app: &TestApp) {
    let memo = json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "MEMO", "originatorCode": "คคง.", "recipientCode": "สคฉ.3" });
    let c1 = json!({ "projectCode": "LCBP3-C1", "correspondenceTypeCode": "LETTER", "originatorCode": "คคง.", "recipientCode": "สคฉ.3" });
    for (when, body) in [
        ("2025-03-01T03:00:00Z", letter()),
        ("2025-06-10T03:00:00Z", letter()),
        ("2025-06-10T04:00:00Z", letter()),
        ("2025-06-10T05:00:00Z", memo),
        ("2025-06-12T17:30:00Z", letter()),
    ] {
        app.clock.set(at(when));
        let (s, b) = app.reserve(&body).await;
        assert_eq!(s, StatusCode::OK, "{when}: {b}");
    }
    app.clock.set(be2568());
    let (s, b) = app.reserve(&c1).await;
    assert_eq!(s, StatusCode::OK, "{b}");
}

#[tokio::test]
async fn numbers_are_counted_per_bangkok_day_and_type() {
    let app = TestApp::spawn().await;
    issue_on_known_days(&app).await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;

    let (s, d) = get(&app, &admin, "/api/v1/document-numbering/stats/daily").await;
    assert_eq!(s, StatusCode::OK, "{d}");
    let days = d["days"].as_array().unwrap();
    assert_eq!(days.len(), 90);
    assert_eq!(
        (days[0].as_str(), days[84].as_str(), days[87].as_str(), days[89].as_str()),
        (Some("2025-03-18"), Some("2025-06-10"), Some("2025-06-13"), Some("2025-06-15"))
    );
    let letters = counts(&d, "LETTER").expect("LETTER");
    let expected: Vec<Value> = (0..90)
        .map(|i| {
            json!(match i {
                84 => 2,
                87 => 1,
                89 => 1,
                _ => 0,
            })
        })
        .collect();
    assert_eq!(letters, &expected, "the 1 March number is before the window; 00:30 in Bangkok is its own day");
    let memos = counts(&d, "MEMO").expect("MEMO");
    assert_eq!((memos[84].as_i64(), memos.iter().filter_map(Value::as_i64).sum::<i64>()), (Some(1), 1));
    assert!(counts(&d, "RFI").is_none(), "a type without numbers has no series: {d}");
    let letter_type = d["types"].as_array().unwrap().iter().find(|t| t["correspondenceTypeCode"] == "LETTER").unwrap();
    assert_eq!(letter_type["correspondenceTypeName"], "หนังสือ");

    // one project; a shorter window
    let lcbp3 = app.project_id("LCBP3").await;
    let (s, d) = get(&app, &admin, &format!("/api/v1/document-numbering/stats/daily?days=7&projectId={lcbp3}")).await;
    assert_eq!(s, StatusCode::OK, "{d}");
    assert_eq!(d["days"].as_array().map(Vec::len), Some(7));
    assert_eq!(d["days"][0], "2025-06-09");
    assert_eq!(d["projectId"], lcbp3);
    assert_eq!(counts(&d, "LETTER").unwrap(), &[0, 2, 0, 0, 1, 0, 0].map(|n| json!(n)).to_vec(), "{d}");
}

#[tokio::test]
async fn a_counters_utilization_is_its_highest_sequence_at_each_days_end() {
    let app = TestApp::spawn().await;
    issue_on_known_days(&app).await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let lcbp3 = app.project_id("LCBP3").await;

    let (s, u) = get(&app, &admin, &format!("/api/v1/document-numbering/stats/utilization?projectId={lcbp3}")).await;
    assert_eq!(s, StatusCode::OK, "{u}");
    assert_eq!(u["days"].as_array().map(Vec::len), Some(90));
    let counters = u["counters"].as_array().unwrap();
    assert_eq!(counters.len(), 2, "the LETTER and MEMO counters of LCBP3's current year: {u}");
    // fullest first
    let letter = &counters[0];
    assert_eq!(letter["counter"]["correspondenceTypeCode"], "LETTER");
    assert_eq!(letter["counter"]["lastNumber"], 4);
    let expected: Vec<i64> = (0..90)
        .map(|i| {
            if i < 84 {
                1
            } else if i < 87 {
                3
            } else {
                4
            }
        })
        .collect();
    let sequences: Vec<i64> = letter["lastSequences"].as_array().unwrap().iter().filter_map(Value::as_i64).collect();
    assert_eq!(sequences, expected, "the March number counts from the first day; each day ends at its highest");
    let max = letter["counter"]["maxNumber"].as_f64().unwrap();
    assert!(max > 0.0);
    let ratios: Vec<f64> = letter["utilization"].as_array().unwrap().iter().filter_map(Value::as_f64).collect();
    for (r, q) in ratios.iter().zip(&expected) {
        assert!((r - *q as f64 / max).abs() < 1e-12, "{r} vs {q}/{max}");
    }
    assert_eq!(counters[1]["counter"]["correspondenceTypeCode"], "MEMO");
    assert_eq!(counters[1]["lastSequences"][83], 0);
    assert_eq!(counters[1]["lastSequences"][84], 1);

    // one counter by id; the fullest one of all projects
    let id = letter["counter"]["id"].as_i64().unwrap();
    let (s, one) = get(&app, &admin, &format!("/api/v1/document-numbering/stats/utilization?counterId={id}&days=3")).await;
    assert_eq!(s, StatusCode::OK, "{one}");
    assert_eq!(one["counters"].as_array().map(Vec::len), Some(1));
    assert_eq!(one["counters"][0]["lastSequences"], json!([4, 4, 4]));
    let (s, top) = get(&app, &admin, "/api/v1/document-numbering/stats/utilization?limit=1").await;
    assert_eq!(s, StatusCode::OK, "{top}");
    assert_eq!(top["counters"][0]["counter"]["id"], id);
    assert_eq!(top["counters"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn a_project_admin_sees_their_projects_and_staff_nothing() {
    let app = TestApp::spawn().await;
    issue_on_known_days(&app).await;
    let (lcbp3, c1) = (app.project_id("LCBP3").await, app.project_id("LCBP3-C1").await);
    let padmin = app.user_client("c1admin", Role::ProjectAdmin, &[c1]).await;

    let (s, d) = get(&app, &padmin, "/api/v1/document-numbering/stats/daily").await;
    assert_eq!(s, StatusCode::OK, "{d}");
    let letters = counts(&d, "LETTER").expect("LCBP3-C1's LETTER");
    assert_eq!((letters[89].as_i64(), letters.iter().filter_map(Value::as_i64).sum::<i64>()), (Some(1), 1), "{d}");
    assert!(counts(&d, "MEMO").is_none(), "LCBP3's MEMO is not theirs: {d}");
    let (s, u) = get(&app, &padmin, "/api/v1/document-numbering/stats/utilization").await;
    assert_eq!(s, StatusCode::OK, "{u}");
    assert!(u["counters"].as_array().unwrap().iter().all(|c| c["counter"]["projectId"] == c1), "{u}");

    for path in [
        format!("/api/v1/document-numbering/stats/daily?projectId={lcbp3}"),
        format!("/api/v1/document-numbering/stats/utilization?projectId={lcbp3}"),
    ] {
        let (s, e) = get(&app, &padmin, &path).await;
        assert_error(s, &e, 403, "FORBIDDEN");
    }
    let other = app.count("SELECT id FROM counters WHERE project_id = (SELECT id FROM projects WHERE code = 'LCBP3') ORDER BY id LIMIT 1").await;
    let (s, e) = get(&app, &padmin, &format!("/api/v1/document-numbering/stats/utilization?counterId={other}")).await;
    assert_error(s, &e, 403, "FORBIDDEN");

    let staff = app.user_client("somchai", Role::Staff, &[]).await;
    for path in ["/api/v1/document-numbering/stats/daily", "/api/v1/document-numbering/stats/utilization"] {
        let (s, e) = get(&app, &staff, path).await;
        assert_error(s, &e, 403, "FORBIDDEN");
    }
}

#[tokio::test]
async fn bad_parameters_are_refused_in_thai() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    for query in ["days=0", "days=367", "days=-1", "days=abc", "projectId=x"] {
        for route in ["daily", "utilization"] {
            let (s, e) = get(&app, &admin, &format!("/api/v1/document-numbering/stats/{route}?{query}")).await;
            assert_error(s, &e, 400, "VALIDATION_ERROR");
        }
    }
    for query in ["limit=0", "limit=51"] {
        let (s, e) = get(&app, &admin, &format!("/api/v1/document-numbering/stats/utilization?{query}")).await;
        assert_error(s, &e, 400, "VALIDATION_ERROR");
    }
    let (s, e) = get(&app, &admin, "/api/v1/document-numbering/stats/daily?days=0").await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(e["message"].as_str().unwrap().contains("จำนวนวัน"), "{e}");
    for path in ["daily?projectId=999999", "utilization?projectId=999999", "utilization?counterId=999999"] {
        let (s, e) = get(&app, &admin, &format!("/api/v1/document-numbering/stats/{path}")).await;
        assert_error(s, &e, 404, "NOT_FOUND");
    }
    // the edges of the range are taken
    for query in ["days=1", "days=366"] {
        let (s, d) = get(&app, &admin, &format!("/api/v1/document-numbering/stats/daily?{query}")).await;
        assert_eq!(s, StatusCode::OK, "{query}: {d}");
    }
}
