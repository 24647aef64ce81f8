//! The audit search shows everything it stores (SPEC §7): counter key, template, user agent, retries, lock wait
//! and total time, in the REST answer and in the CSV export.

use reqwest::StatusCode;
use serde_json::Value;

use crate::common::{letter, TestApp, ADMIN_PASSWORD};

#[tokio::test]
async fn the_audit_search_and_its_csv_carry_lock_wait_retries_and_the_rest() {
    let app = TestApp::spawn().await;
    let r = app
        .client
        .post(app.url("/api/v1/document-numbering/reserve"))
        .bearer_auth(&app.token)
        .header("user-agent", "dms-backend/2.1")
        .json(&letter())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let reserved: Value = r.json().await.unwrap();
    let number = reserved["documentNumber"].as_str().unwrap().to_string();

    // the audit search is for administrators: the DMS token that reserved is not one
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let page: Value = admin
        .get(app.url(&format!("/api/v1/document-numbering/logs/audit?number={}&operation=RESERVE", urlencode(&number))))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let row = &page["rows"][0];
    assert_eq!(row["documentNumber"], Value::from(number.clone()), "{page}");
    for field in ["retryCount", "lockWaitMs", "totalMs"] {
        assert!(row[field].as_i64().is_some_and(|v| v >= 0), "{field}: {row}");
    }
    assert_eq!(row["templateUsed"], "{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}", "{row}");
    assert_eq!(row["userAgent"], "dms-backend/2.1", "{row}");
    let key: Value = serde_json::from_str(row["counterKey"].as_str().expect("counterKey")).expect("the counter key is JSON");
    assert!(key.is_object(), "{key}");

    let csv = admin
        .get(app.url(&format!("/api/v1/document-numbering/logs/audit?number={}&operation=RESERVE&format=csv", urlencode(&number))))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let mut reader = csv::Reader::from_reader(csv.trim_start_matches('\u{feff}').as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    let record = reader.records().next().expect("one row").unwrap();
    let cell =
        |name: &str| record.get(header.iter().position(|h| h == name).unwrap_or_else(|| panic!("column {name} in {header:?}"))).unwrap().to_string();
    assert_eq!(cell("document_number"), number);
    assert_eq!(cell("retry_count"), row["retryCount"].to_string());
    assert_eq!(cell("lock_wait_ms"), row["lockWaitMs"].to_string());
    assert_eq!(cell("total_ms"), row["totalMs"].to_string());
    assert_eq!(cell("user_agent"), "dms-backend/2.1");
    assert_eq!(cell("template_used"), "{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}");
}

fn urlencode(text: &str) -> String {
    text.bytes().map(|b| if b.is_ascii_alphanumeric() || b"-._~".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") }).collect()
}
