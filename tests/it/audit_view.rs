//! The audit search shows everything it stores (docs/rules/numbering.md#audit-and-retention): counter key, template, user agent, retries, lock wait
//! and total time, in the REST answer and in the CSV export.

use reqwest::StatusCode;
use serde_json::Value;

use docnum::server::db::Dialect;

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
    // and named for people by its codes (the audit search once named it by ids)
    assert_eq!(
        row["counter"],
        serde_json::json!({ "project": "LCBP3", "correspondenceType": "LETTER", "originator": "คคง.", "recipient": "สคฉ.3",
            "subType": null, "rfaType": null, "discipline": null, "period": "YEAR_2025" }),
        "{row}"
    );

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

/// The number filter is a prefix match that ignores letter case, on SQLite and on MariaDB alike (it once ignored it
/// on SQLite only), and takes LIKE's wildcards literally.
#[tokio::test]
async fn the_number_filter_matches_a_prefix_in_any_letter_case_on_every_database() {
    let app = TestApp::spawn().await;
    let rfa = serde_json::json!({ "projectCode": "LCBP3-C2", "correspondenceTypeCode": "RFA", "originatorCode": "ผรม.1", "disciplineCode": "TER", "rfaTypeCode": "RPT" });
    let (s, reserved) = app.reserve(&rfa).await;
    assert_eq!(s, StatusCode::OK, "{reserved}");
    let number = reserved["documentNumber"].as_str().unwrap().to_string();
    assert!(number.starts_with("LCBP3-C2-RFA-TER-RPT-"), "{number}");
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let found = |prefix: String| {
        let admin = admin.clone();
        let url = app.url(&format!("/api/v1/document-numbering/logs/audit?operation=RESERVE&number={}", urlencode(&prefix)));
        async move {
            let page: Value = admin.get(url).send().await.unwrap().json().await.unwrap();
            page["rows"]
                .as_array()
                .unwrap_or_else(|| panic!("{page}"))
                .iter()
                .map(|r| r["documentNumber"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(found(number.clone()).await, vec![number.clone()]);
    assert_eq!(found("lcbp3-c2-rfa".into()).await, vec![number.clone()], "lower case");
    assert_eq!(found("Lcbp3-C2-Rfa-Ter".into()).await, vec![number.clone()], "mixed case");
    assert_eq!(found("LCBP3_C2".into()).await, Vec::<String>::new(), "_ is not a wildcard");
    assert_eq!(found("LCBP3%".into()).await, Vec::<String>::new(), "% is not a wildcard");
    assert_eq!(found("LCBP3-C1".into()).await, Vec::<String>::new());

    // and the number's index can serve that match on either database (not a read of the whole log)
    use sqlx::Row;
    let filter = "FROM audit_log WHERE document_number LIKE 'lcbp3-c2%' ESCAPE '!'";
    let plan: String = match app.state.db.dialect {
        Dialect::Sqlite => sqlx::query(&format!("EXPLAIN QUERY PLAN SELECT id {filter}"))
            .fetch_all(&app.state.db.pool)
            .await
            .unwrap()
            .iter()
            .map(|r| r.get::<String, _>("detail"))
            .collect(),
        Dialect::MySql => {
            let row = sqlx::query(&format!("EXPLAIN SELECT id {filter}")).fetch_one(&app.state.db.pool).await.unwrap();
            row.try_get::<Option<String>, _>("possible_keys").unwrap().unwrap_or_default()
        }
    };
    assert!(plan.contains("idx_audit_number"), "{plan}");
}
