//! `Idempotency-Key` (docs/rules/api.md#idempotency-keys): a retried call gets its first answer and never a second number; the same key with
//! another request is 422; keys are their sender's own; they live 24 hours. The kill -9 and restart case is in
//! `multiprocess`.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::common::{assert_error, letter, letter_to, TestApp, ADMIN_PASSWORD, RECIPIENTS};
use docnum::contract::Role;

const RESERVE: &str = "/api/v1/document-numbering/reserve";

async fn keyed(app: &TestApp, path: &str, key: &str, body: &Value) -> (StatusCode, Value) {
    answer(app.client.post(app.url(path)).bearer_auth(&app.token).header("Idempotency-Key", key).json(body)).await
}

async fn answer(request: reqwest::RequestBuilder) -> (StatusCode, Value) {
    let r = request.send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn numbers(app: &TestApp) -> i64 {
    app.count("SELECT COUNT(*) FROM document_numbers").await
}

#[tokio::test]
async fn a_reserve_sent_again_with_its_key_gets_the_same_number_and_takes_no_other() {
    let app = TestApp::spawn().await;
    let (s, first) = keyed(&app, RESERVE, "reserve-1", &letter()).await;
    assert_eq!(s, StatusCode::OK, "{first}");
    // the same request written another way (the requirements' shape is tested in seed_paths) is the same request
    let mut reordered = serde_json::Map::new();
    for (k, v) in letter().as_object().unwrap().iter().rev() {
        reordered.insert(k.clone(), v.clone());
    }
    for body in [letter(), Value::Object(reordered)] {
        let (s, again) = keyed(&app, RESERVE, "\"reserve-1\"", &body).await;
        assert_eq!(s, StatusCode::OK, "{again}");
        assert_eq!((&again["documentNumber"], &again["token"], &again["sequence"]), (&first["documentNumber"], &first["token"], &first["sequence"]));
        assert_eq!(again["expiresAt"], first["expiresAt"]);
    }
    assert_eq!(numbers(&app).await, 1, "one number for one key");
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'RESERVE'").await, 1);
    // the next request without a key takes the next number
    let (_, next) = app.reserve(&letter()).await;
    assert_eq!(next["sequence"], 2, "{next}");
    assert_eq!(app.count("SELECT COUNT(*) FROM idempotency_keys").await, 1);
}

#[tokio::test]
async fn the_same_key_with_another_request_is_422_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let (s, _) = keyed(&app, RESERVE, "k-422", &letter_to(RECIPIENTS[0])).await;
    assert_eq!(s, StatusCode::OK);
    let before = numbers(&app).await;
    let (s, e) = keyed(&app, RESERVE, "k-422", &letter_to(RECIPIENTS[1])).await;
    assert_error(s, &e, 422, "IDEMPOTENCY_KEY_REUSED");
    // another operation with the key is another request too
    let (s, e) = keyed(&app, "/api/v1/documents/DOC-1/generate-number", "k-422", &letter_to(RECIPIENTS[0])).await;
    assert_error(s, &e, 422, "IDEMPOTENCY_KEY_REUSED");
    assert_eq!(numbers(&app).await, before);
}

#[tokio::test]
async fn keys_are_their_senders_own() {
    let app = TestApp::spawn().await;
    let staff = app.user_client("somchai", Role::Staff, &[]).await;
    let (s, mine) = keyed(&app, RESERVE, "shared-key", &letter()).await;
    assert_eq!(s, StatusCode::OK);
    let r = staff.post(app.url(RESERVE)).header("Idempotency-Key", "shared-key").json(&letter()).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let theirs: Value = r.json().await.unwrap();
    assert_ne!(theirs["documentNumber"], mine["documentNumber"], "another caller's key does not answer with my number");
    assert_eq!(numbers(&app).await, 2);
}

#[tokio::test]
async fn requests_racing_with_one_key_take_one_number() {
    let app = TestApp::spawn().await;
    let body = letter();
    let tries = (0..24).map(|_| keyed(&app, RESERVE, "raced", &body));
    let answers = futures::future::join_all(tries).await;
    let mut numbers_seen = std::collections::HashSet::new();
    for (s, b) in &answers {
        match s.as_u16() {
            200 => drop(numbers_seen.insert(b["documentNumber"].as_str().unwrap().to_string())),
            409 => assert_eq!(b["code"], "IDEMPOTENCY_IN_PROGRESS", "{b}"),
            other => panic!("{other}: {b}"),
        }
    }
    assert_eq!(numbers_seen.len(), 1, "{answers:?}");
    assert_eq!(numbers(&app).await, 1);
    // once the first is answered, every retry is answered with it
    let (s, b) = keyed(&app, RESERVE, "raced", &letter()).await;
    assert_eq!(s, StatusCode::OK);
    assert!(numbers_seen.contains(b["documentNumber"].as_str().unwrap()));
}

#[tokio::test]
async fn generate_confirm_cancel_revise_and_void_answer_a_retry_as_the_first_time() {
    let app = TestApp::spawn().await;
    let rfa = json!({ "projectCode": "LCBP3-C2", "correspondenceTypeCode": "RFA", "originatorCode": "ผรม.1", "disciplineCode": "TER", "rfaTypeCode": "RPT" });
    let generate = "/api/v1/documents/RFA-9/generate-number";
    let (s, g) = keyed(&app, generate, "gen-1", &rfa).await;
    assert_eq!(s, StatusCode::OK, "{g}");
    let (_, g2) = keyed(&app, generate, "gen-1", &rfa).await;
    assert_eq!((&g2["documentNumber"], &g2["generatedAt"]), (&g["documentNumber"], &g["generatedAt"]));

    // confirm and cancel: the second answer says what the first did
    let (_, r) = app.reserve(&letter()).await;
    let confirm = json!({ "token": r["token"], "documentId": "DOC-7" });
    let (s, c) = keyed(&app, "/api/v1/document-numbering/confirm", "confirm-1", &confirm).await;
    assert_eq!((s, &c["status"]), (StatusCode::OK, &json!("CONFIRMED")), "{c}");
    let (s, c2) = keyed(&app, "/api/v1/document-numbering/confirm", "confirm-1", &confirm).await;
    assert_eq!((s, &c2), (StatusCode::OK, &c));
    let (_, r) = app.reserve(&letter()).await;
    let cancel = json!({ "token": r["token"], "reason": "ไม่ใช้แล้ว" });
    let (s, c) = keyed(&app, "/api/v1/document-numbering/cancel", "cancel-1", &cancel).await;
    assert_eq!((s, &c["status"]), (StatusCode::OK, &json!("CANCELLED")), "{c}");
    let (_, c2) = keyed(&app, "/api/v1/document-numbering/cancel", "cancel-1", &cancel).await;
    assert_eq!(c2, c);

    // revise: one revision for one key
    let number = json!({ "projectCode": "LCBP3-C2", "correspondenceTypeCode": "RFA", "documentNumber": g["documentNumber"] });
    let (s, v) = keyed(&app, "/api/v1/document-numbering/revise", "revise-1", &number).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["documentNumber"], "LCBP3-C2-RFA-TER-RPT-0001-B");
    let (s, v2) = keyed(&app, "/api/v1/document-numbering/revise", "revise-1", &number).await;
    assert_eq!((s, &v2["documentNumber"]), (StatusCode::OK, &v["documentNumber"]), "{v2}");
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers WHERE number LIKE 'LCBP3-C2-RFA-TER-RPT-0001-%'").await, 2);

    // void-and-replace (a super admin's): one replacement for one key
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let void_path = app.url("/api/v1/document-numbering/void-and-replace");
    let void_with = |key: &'static str, body: &Value| answer(admin.post(&void_path).header("Idempotency-Key", key).json(body));
    let void = json!({ "projectCode": "LCBP3-C2", "correspondenceTypeCode": "RFA", "documentNumber": v["documentNumber"], "reason": "พิมพ์ผิด" });
    let (s, x) = void_with("void-1", &void).await;
    assert_eq!(s, StatusCode::OK, "{x}");
    let before = numbers(&app).await;
    let (s, x2) = void_with("void-1", &void).await;
    assert_eq!(s, StatusCode::OK, "{x2}");
    assert_eq!(x2["replacement"]["documentNumber"], x["replacement"]["documentNumber"]);
    assert_eq!(numbers(&app).await, before, "no second replacement");
    // the key is the voiding's: with another reason it is another request
    let mut other_reason = void.clone();
    other_reason["reason"] = json!("อีกเหตุผลหนึ่ง");
    let (s, e) = void_with("void-1", &other_reason).await;
    assert_error(s, &e, 422, "IDEMPOTENCY_KEY_REUSED");
}

#[tokio::test]
async fn a_malformed_key_is_400_and_takes_nothing() {
    let app = TestApp::spawn().await;
    for bad in ["has space", "ไทย", &"k".repeat(256), "\"\""] {
        let r =
            app.client.post(app.url(RESERVE)).bearer_auth(&app.token).header("Idempotency-Key", bad.as_bytes()).json(&letter()).send().await.unwrap();
        let s = r.status();
        let e: Value = r.json().await.unwrap();
        assert_error(s, &e, 400, "VALIDATION_ERROR");
        assert!(e["message"].as_str().unwrap().contains("Idempotency-Key"), "{e}");
    }
    assert_eq!(numbers(&app).await, 0);
}

#[tokio::test]
async fn a_key_answers_for_24_hours_then_starts_again() {
    let app = TestApp::spawn().await;
    let (_, first) = keyed(&app, RESERVE, "daily", &letter()).await;
    app.clock.advance(chrono::Duration::hours(23));
    let (_, same) = keyed(&app, RESERVE, "daily", &letter()).await;
    assert_eq!(same["documentNumber"], first["documentNumber"]);
    app.clock.advance(chrono::Duration::hours(2));
    let (s, fresh) = keyed(&app, RESERVE, "daily", &letter_to(RECIPIENTS[1])).await;
    assert_eq!(s, StatusCode::OK, "an expired key is free again, whatever it was used for: {fresh}");
    assert_ne!(fresh["documentNumber"], first["documentNumber"]);
    assert_eq!(app.count("SELECT COUNT(*) FROM idempotency_keys").await, 1);
}

#[tokio::test]
async fn the_document_offers_the_header_on_the_seven_operations_and_an_alias() {
    let app = TestApp::spawn().await;
    let doc: Value = app.client.get(app.url("/api/v1/openapi.json")).send().await.unwrap().json().await.unwrap();
    let keyed_ops: Vec<String> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, ops)| ops.as_object().unwrap().iter().map(move |(method, op)| (format!("{method} {path}"), op)))
        .filter(|(_, op)| op["parameters"].as_array().is_some_and(|ps| ps.iter().any(|p| p["name"] == "Idempotency-Key" && p["in"] == "header")))
        .map(|(name, _)| name)
        .collect();
    let mut keyed_ops = keyed_ops;
    keyed_ops.sort();
    assert_eq!(
        keyed_ops,
        [
            "post /api/v1/admin/document-numbering/void-and-replace",
            "post /api/v1/document-numbering/cancel",
            "post /api/v1/document-numbering/confirm",
            "post /api/v1/document-numbering/reserve",
            "post /api/v1/document-numbering/reserve-block",
            "post /api/v1/document-numbering/revise",
            "post /api/v1/document-numbering/void-and-replace",
            "post /api/v1/documents/{documentId}/generate-number",
        ]
    );
    let reserve = &doc["paths"]["/api/v1/document-numbering/reserve"]["post"];
    assert!(reserve["responses"]["422"].is_object() && reserve["responses"]["409"].is_object(), "{reserve}");
}
