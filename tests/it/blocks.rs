//! Blocks of numbers (`POST /document-numbering/reserve-block`): contiguous in one commit of the counter's batch, even
//! while many callers reserve on the same counter; idempotent with `Idempotency-Key`; each number confirmed or
//! released on its own; the unconfirmed ones expire at the hold's end as "block expired", every number accounted for.

use std::sync::Arc;

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::common::{assert_error, letter, TestApp};

const BLOCK: &str = "/api/v1/document-numbering/reserve-block";

fn block_body(count: i64) -> Value {
    let mut body = letter();
    body["count"] = json!(count);
    body
}

async fn post_keyed(app: &TestApp, path: &str, key: Option<&str>, body: &Value) -> (StatusCode, Value) {
    let mut r = app.client.post(app.url(path)).bearer_auth(&app.token).json(body);
    if let Some(k) = key {
        r = r.header("Idempotency-Key", k);
    }
    let r = r.send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

fn sequences(numbers: &[Value]) -> Vec<u64> {
    numbers.iter().map(|n| n["sequence"].as_u64().unwrap()).collect()
}

#[tokio::test]
async fn a_block_of_500_is_contiguous_while_64_callers_reserve_on_the_same_counter() {
    let app = Arc::new(TestApp::spawn().await);
    let mut callers = Vec::new();
    for _ in 0..64 {
        let app = app.clone();
        callers.push(tokio::spawn(async move {
            let mut seqs = Vec::new();
            for _ in 0..15 {
                let (s, body) = app.reserve(&letter()).await;
                assert_eq!(s, StatusCode::OK, "{body}");
                seqs.push(body["sequence"].as_u64().unwrap());
            }
            seqs
        }));
    }
    // let the callers get going, so the block lands among their batches
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let mut body = block_body(500);
    body["holder"] = json!("สำนักงานสนาม ผรม.1");
    let (s, block) = app.post_json(BLOCK, &body).await;
    assert_eq!(s, StatusCode::OK, "{block}");
    let mut others: Vec<u64> = Vec::new();
    for c in callers {
        others.extend(c.await.unwrap());
    }

    let numbers = block["numbers"].as_array().unwrap();
    let seqs = sequences(numbers);
    assert_eq!(seqs.len(), 500);
    let first = seqs[0];
    assert_eq!(seqs, (first..first + 500).collect::<Vec<_>>(), "contiguous");
    assert!(others.iter().all(|s| !(first..first + 500).contains(s)), "no other caller's number inside the block");
    assert_eq!(numbers[0]["documentNumber"], format!("คคง.-สคฉ.3-{first:04}-2568"));
    assert!(numbers.iter().all(|n| n["token"].as_str().is_some_and(|t| t.len() == 36)));
    let block_id = block["blockId"].as_str().unwrap();
    assert_eq!(block["holder"], "สำนักงานสนาม ผรม.1");
    let in_block = app.count(&format!("SELECT COUNT(*) FROM document_numbers WHERE block_id = '{block_id}'")).await;
    assert_eq!(in_block, 500);
    // one commit: the 500 rows were written together, at one instant
    let instants = app.count(&format!("SELECT COUNT(DISTINCT created_at) FROM document_numbers WHERE block_id = '{block_id}'")).await;
    assert_eq!(instants, 1);
    let mut all = others.clone();
    all.extend(&seqs);
    all.sort();
    assert_eq!(all, (1..=(64 * 15 + 500)).collect::<Vec<_>>(), "every sequence once");
}

#[tokio::test]
async fn a_block_is_idempotent_its_numbers_live_alone_and_the_rest_expire_accounted_for() {
    let app = TestApp::spawn().await;
    let hold = app.clock.now() + Duration::days(1);
    let mut body = block_body(5);
    body["holdUntil"] = json!(hold.to_rfc3339());
    body["holder"] = json!("ผรม.1");

    let (s, first) = post_keyed(&app, BLOCK, Some("block-key-1"), &body).await;
    assert_eq!(s, StatusCode::OK, "{first}");
    let numbers = first["numbers"].as_array().unwrap().clone();
    assert_eq!(sequences(&numbers), [1, 2, 3, 4, 5]);
    assert_eq!(numbers[4]["documentNumber"], "คคง.-สคฉ.3-0005-2568");
    assert_eq!(numbers[0]["expiresAt"].as_str().map(|e| e.parse::<chrono::DateTime<chrono::Utc>>().unwrap().timestamp()), Some(hold.timestamp()));
    assert_eq!(numbers[0]["workflow"]["currentState"], "RESERVED");
    // the same key and body: the same block, no second one
    let (s, again) = post_keyed(&app, BLOCK, Some("block-key-1"), &body).await;
    assert_eq!((s, &again), (StatusCode::OK, &first));
    // the same key, another body: refused
    let (s, err) = post_keyed(&app, BLOCK, Some("block-key-1"), &block_body(6)).await;
    assert_error(s, &err, 422, "IDEMPOTENCY_KEY_REUSED");

    // out of bounds: 400, nothing taken
    for (count, until) in [(1, None), (501, None), (5, Some(app.clock.now() + Duration::days(31))), (5, Some(app.clock.now() - Duration::seconds(1)))]
    {
        let mut b = block_body(count);
        if let Some(u) = until {
            b["holdUntil"] = json!(u.to_rfc3339());
        }
        let (s, err) = app.post_json(BLOCK, &b).await;
        assert_error(s, &err, 400, "VALIDATION_ERROR");
    }
    let (s, err) = app.post_json(BLOCK, &letter()).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "count is required: {err}");
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 5);

    // each number on its own: one confirmed, one cancelled
    let token = |i: usize| numbers[i]["token"].as_str().unwrap().to_string();
    let (s, c) = app.post_json("/api/v1/document-numbering/confirm", &json!({ "token": token(0), "documentId": "DOC-BLOCK-1" })).await;
    assert_eq!((s, c["status"].as_str()), (StatusCode::OK, Some("CONFIRMED")), "{c}");
    let (s, c) = app.post_json("/api/v1/document-numbering/cancel", &json!({ "token": token(1), "reason": "ไม่ได้ใช้" })).await;
    assert_eq!((s, c["status"].as_str()), (StatusCode::OK, Some("CANCELLED")), "{c}");

    // the hold ends: the other three expire as "block expired"
    app.clock.advance(Duration::days(1) + Duration::seconds(1));
    assert_eq!(app.state.engine().expire_due().await.unwrap(), 3);
    let reasons: Vec<(i64, String, Option<String>)> =
        sqlx::query_as("SELECT sequence, status, cancel_reason FROM document_numbers ORDER BY sequence").fetch_all(&app.state.db.pool).await.unwrap();
    let expired = |s: i64| (s, "CANCELLED".to_string(), Some("block expired".to_string()));
    assert_eq!(reasons, [(1, "CONFIRMED".into(), None), (2, "CANCELLED".into(), Some("ไม่ได้ใช้".into())), expired(3), expired(4), expired(5)]);
    let (s, err) = app.post_json("/api/v1/document-numbering/confirm", &json!({ "token": token(2), "documentId": "DOC-BLOCK-3" })).await;
    assert_error(s, &err, 410, "NB004");

    // audited per number, with the block; one event for the webhooks
    let audited = app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'RESERVE' AND metadata LIKE '%\"block\"%'").await;
    assert_eq!(audited, 5);
    let events: Vec<String> = sqlx::query_scalar("SELECT payload FROM notification_outbox WHERE kind = 'NUMBER_BLOCK_RESERVED'")
        .fetch_all(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(events.len(), 1);
    let event: Value = serde_json::from_str(&events[0]).unwrap();
    assert_eq!(
        (event["firstSequence"].as_i64(), event["lastSequence"].as_i64(), event["holder"].as_str()),
        (Some(1), Some(5), Some("ผรม.1")),
        "{event}"
    );

    // every number accounted for
    assert!(docnum::server::audit::verify(&app.state.db).await.unwrap().ok);
    let report = docnum::server::numbering::check::check(&app.state.db, &[]).await.unwrap();
    assert!(report.ok, "{:?}", report.problems);
    assert_eq!((report.numbers, report.cancelled, report.unexplained_gaps), (5, 4, 0));
}
