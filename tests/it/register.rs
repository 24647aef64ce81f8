//! The register (`GET /document-numbering/register`): one row per sequence of a counter, every number not confirmed
//! with its reason in words — read back from the XLSX with a spreadsheet reader, and as CSV.

use calamine::{Data, Reader, Xlsx};
use chrono::Duration;
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

use crate::common::{assert_error, letter, TestApp, ADMIN_PASSWORD};

async fn post(app: &TestApp, client: &Client, path: &str, body: Value) -> Value {
    let r = client.post(app.url(path)).json(&body).send().await.unwrap();
    let status = r.status();
    let body: Value = r.json().await.unwrap_or(Value::Null);
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    body
}

/// LCBP3's letters from คคง. to สคฉ.3 with every kind of sequence: confirmed, cancelled, expired, a block's hold
/// ended, voided and replaced, skipped by a manual override, a legacy number registered, one still reserved.
async fn every_kind(app: &TestApp, admin: &Client) {
    let base = "/api/v1/document-numbering";
    let r1 = post(app, admin, &format!("{base}/reserve"), letter()).await;
    post(app, admin, &format!("{base}/confirm"), json!({ "token": r1["token"], "documentId": "DOC-1" })).await;
    let r2 = post(app, admin, &format!("{base}/reserve"), letter()).await;
    post(app, admin, &format!("{base}/cancel"), json!({ "token": r2["token"], "reason": "พิมพ์ผิดผู้รับ" })).await;
    post(app, admin, &format!("{base}/reserve"), letter()).await; // 3: expires
    let mut block = letter();
    block["count"] = json!(2);
    block["holder"] = json!("ผรม.1");
    post(app, admin, &format!("{base}/reserve-block"), block).await; // 4, 5: the block's hold ends
    app.clock.advance(Duration::seconds(301));
    assert_eq!(app.state.engine().expire_due().await.unwrap(), 3);
    post(app, admin, "/api/v1/documents/DOC-6/generate-number", letter()).await; // 6
    let void =
        json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "documentNumber": "คคง.-สคฉ.3-0006-2568", "reason": "ออกซ้ำกับฉบับเดิม" });
    post(app, admin, &format!("{base}/void-and-replace"), void).await; // 6 void, 7 its replacement
    let counter: i64 = sqlx::query_scalar("SELECT id FROM counters").fetch_one(&app.state.db.pool).await.unwrap();
    post(app, admin, &format!("{base}/manual-override"), json!({ "counterId": counter, "value": 9, "reason": "เลขที่ออกด้วยมือระหว่างระบบล่ม" })).await; // 8, 9
    post(
        app,
        admin,
        &format!("{base}/manual-override"),
        json!({ "counterId": counter, "documentNumber": "คคง.-สคฉ.3-0010-2568", "documentId": "OLD-10", "reason": "นำเข้าจากทะเบียนกระดาษ" }),
    )
    .await; // 10
    post(app, admin, &format!("{base}/reserve"), letter()).await; // 11: still reserved
}

fn cell(c: &Data) -> String {
    match c {
        Data::String(s) => s.clone(),
        Data::Float(f) => format!("{f}"),
        Data::Int(i) => i.to_string(),
        Data::Empty => String::new(),
        other => other.to_string(),
    }
}

#[tokio::test]
async fn the_register_explains_every_sequence_in_xlsx_and_csv() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    every_kind(&app, &admin).await;

    let url = app.url("/api/v1/document-numbering/register?projectCode=LCBP3&correspondenceTypeCode=LETTER&period=YEAR_2025&format=xlsx");
    let r = admin.get(url).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.headers()["content-type"].to_str().unwrap().contains("spreadsheetml"));
    let bytes = r.bytes().await.unwrap().to_vec();
    let mut book: Xlsx<_> = calamine::open_workbook_from_rs(std::io::Cursor::new(bytes)).unwrap();
    let sheet = book.worksheet_range("ทะเบียนเลขที่").unwrap();
    let rows: Vec<Vec<String>> = sheet.rows().map(|r| r.iter().map(cell).collect()).collect();
    assert_eq!(rows[0][..4], ["ช่วงเวลา (period)", "ลำดับ", "เลขที่เอกสาร", "สถานะ"]);
    let body = &rows[1..];
    assert_eq!(body.len(), 11, "one row per sequence 1..11: {body:?}");
    let seq_status: Vec<(String, String)> = body.iter().map(|r| (r[1].clone(), r[3].clone())).collect();
    let want = ["CONFIRMED", "CANCELLED", "EXPIRED", "EXPIRED", "EXPIRED", "VOID", "CONFIRMED", "SKIPPED", "SKIPPED", "CONFIRMED", "RESERVED"];
    assert_eq!(seq_status, want.iter().enumerate().map(|(i, s)| ((i + 1).to_string(), s.to_string())).collect::<Vec<_>>());
    let reason = |seq: usize| body[seq - 1][7].clone();
    assert_eq!(reason(1), "");
    assert_eq!(body[0][4], "DOC-1");
    assert_eq!(body[0][2], "คคง.-สคฉ.3-0001-2568");
    assert_eq!(reason(2), "ยกเลิกโดย admin: พิมพ์ผิดผู้รับ");
    assert_eq!(reason(3), "หมดเวลาจองโดยไม่ได้ยืนยัน (expired)");
    assert_eq!(reason(4), "ชุดเลขที่หมดเวลาถือโดยไม่ได้ยืนยัน (block expired) (ชุดเลขที่ของ ผรม.1)");
    assert_eq!(reason(6), "ยกเลิกเลขที่ (void) โดย admin: ออกซ้ำกับฉบับเดิม แทนด้วยเลขที่ คคง.-สคฉ.3-0007-2568");
    assert_eq!(reason(8), "ข้ามโดยการกำหนดค่าตัวนับด้วยตนเอง (manual override) โดย admin: เลขที่ออกด้วยมือระหว่างระบบล่ม");
    assert_eq!(reason(10), "นำเข้าเลขที่เดิม (legacy/import) โดย admin: นำเข้าจากทะเบียนกระดาษ");
    assert_eq!((body[9][4].as_str(), reason(11).as_str()), ("OLD-10", "จองไว้ ยังไม่ยืนยัน"));
    // who did the last thing to each: the expiry sweep is the service itself
    let who: Vec<&str> = body.iter().map(|r| r[5].as_str()).collect();
    assert_eq!(who, ["admin", "admin", "token:system", "token:system", "token:system", "admin", "admin", "admin", "admin", "admin", "admin"]);
    assert!(body[0][6].starts_with("2025-06-15 10:00:") && body[2][6].starts_with("2025-06-15 10:05:"), "when, Bangkok time: {body:?}");

    // the same rows as CSV
    let url = app.url("/api/v1/document-numbering/register?projectCode=LCBP3&correspondenceTypeCode=LETTER");
    let r = admin.get(url).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let text = r.text().await.unwrap();
    let mut csv = csv::Reader::from_reader(text.as_bytes());
    let csv_rows: Vec<Vec<String>> = csv.records().map(|r| r.unwrap().iter().map(str::to_string).collect()).collect();
    assert_eq!(csv_rows.len(), 11);
    assert_eq!(csv_rows.iter().map(|r| r[..8].to_vec()).collect::<Vec<_>>(), body.iter().map(|r| r[..8].to_vec()).collect::<Vec<_>>());

    // in English to a caller that asks for it: the headings and the reasons; the codes and the people's own words stay
    for format in ["csv", "xlsx"] {
        let url = app.url(&format!("/api/v1/document-numbering/register?projectCode=LCBP3&correspondenceTypeCode=LETTER&format={format}"));
        let r = admin.get(url).header("accept-language", "en-GB,en;q=0.9").send().await.unwrap();
        assert_eq!((r.status(), r.headers()["content-language"].to_str().unwrap()), (StatusCode::OK, "en"), "{format}");
        let rows: Vec<Vec<String>> = if format == "csv" {
            let text = r.text().await.unwrap();
            csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(text.as_bytes())
                .records()
                .map(|r| r.unwrap().iter().map(str::to_string).collect())
                .collect()
        } else {
            let mut book: Xlsx<_> = calamine::open_workbook_from_rs(std::io::Cursor::new(r.bytes().await.unwrap().to_vec())).unwrap();
            book.worksheet_range("number register").unwrap().rows().map(|r| r.iter().map(cell).collect()).collect()
        };
        assert_eq!(rows[0][..4], ["period", "sequence", "document number", "status"], "{format}");
        assert_eq!(rows[2][7], "cancelled by admin: พิมพ์ผิดผู้รับ", "{format}");
        assert_eq!(rows[3][7], "the reservation ran out unconfirmed (expired)", "{format}");
        assert_eq!(rows.len(), 12, "{format}");
    }

    // refusals: staff, an unknown format or period
    let staff = app.user_client("somchai", docnum::contract::Role::Staff, &[]).await;
    let r = staff.get(app.url("/api/v1/document-numbering/register?projectCode=LCBP3&correspondenceTypeCode=LETTER")).send().await.unwrap();
    let s = r.status();
    let text = r.text().await.unwrap();
    assert_error(s, &serde_json::from_str(&text).unwrap_or_else(|_| panic!("{s} {text}")), 403, "FORBIDDEN");
    for q in ["format=pdf", "period=YEAR_x"] {
        let r = admin
            .get(app.url(&format!("/api/v1/document-numbering/register?projectCode=LCBP3&correspondenceTypeCode=LETTER&{q}")))
            .send()
            .await
            .unwrap();
        let s = r.status();
        let text = r.text().await.unwrap();
        assert_error(s, &serde_json::from_str(&text).unwrap_or_else(|_| panic!("{q}: {s} {text}")), 400, "VALIDATION_ERROR");
    }
}

/// The register of a counter of 100,000 numbers, as CSV and as XLSX: the figures of docs/benchmarks/register.md.
/// `cargo test --features ssr --test it -- register::bench --ignored --nocapture` (add `DOCNUM_TEST_DB=mysql`).
#[tokio::test]
#[ignore]
async fn bench_a_register_of_100000_numbers() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let project = app.project_id("LCBP3").await;
    let letter_type = app.state.reference().get().await.unwrap().correspondence_type(None, Some("LETTER")).unwrap().id;
    let template = json!({ "projectId": project, "correspondenceTypeId": letter_type, "template": "{ORIGINATOR}-{RECIPIENT}-{SEQ:6}-{YEAR:B.E.}",
        "resetScope": "YEARLY", "reason": "room for 100,000", "acknowledgeKeyChange": true });
    post(&app, &admin, "/api/v1/document-numbering/configs", template).await;
    let started = std::time::Instant::now();
    let mut block = letter();
    block["count"] = json!(500);
    for _ in 0..200 {
        let (s, body) = app.post_json("/api/v1/document-numbering/reserve-block", &block).await;
        assert_eq!(s, StatusCode::OK, "{body}");
    }
    println!("100,000 numbers in 200 blocks: {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(app.count("SELECT MAX(last_number) FROM counters").await, 100_000);
    for format in ["csv", "xlsx"] {
        let started = std::time::Instant::now();
        let url = format!("/api/v1/document-numbering/register?projectCode=LCBP3&correspondenceTypeCode=LETTER&format={format}");
        let r = admin.get(app.url(&url)).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        let first_byte = started.elapsed();
        let bytes = r.bytes().await.unwrap();
        let total = started.elapsed();
        println!("register {format}: {} bytes, first byte {:.2} s, whole {:.2} s", bytes.len(), first_byte.as_secs_f64(), total.as_secs_f64());
        if format == "csv" {
            assert_eq!(bytes.iter().filter(|b| **b == b'\n').count(), 100_001, "a header and a row per sequence");
        }
    }
}
