//! The requirements' paths (docs/rules/api.md#the-numbering-endpoints): each alias answers like its twin among today's endpoints — same status, same
//! body (or, where the body carries fresh ids and times, the same shape).

use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

use crate::common::{letter, TestApp, ADMIN_PASSWORD};
use docnum::contract::Role;

async fn send(app: &TestApp, client: &Client, method: &str, path: &str, body: Option<&Value>) -> (StatusCode, Value) {
    let url = app.url(path);
    let req = match method {
        "GET" => client.get(url),
        _ => client.post(url).json(body.unwrap_or(&json!({}))),
    };
    let r = req.send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// The keys of a JSON value, recursively (the first element of arrays): its shape, without the values.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Value::Array(items) => Value::Array(items.first().map(shape).into_iter().collect()),
        Value::Null => Value::Null,
        _ => Value::Bool(true),
    }
}

async fn letter_counter(app: &TestApp) -> i64 {
    app.count("SELECT id FROM counters WHERE period = 'YEAR_2025' AND originator_id <> 0 ORDER BY id LIMIT 1").await
}

#[tokio::test]
async fn sequences_and_bulk_import_answer_like_counters_and_import() {
    let app = TestApp::spawn().await;
    for _ in 0..3 {
        assert_eq!(app.reserve(&letter()).await.0, StatusCode::OK);
    }
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let staff = app.user_client("somchai", Role::Staff, &[]).await;

    for query in ["", "?year=2568", "?projectId=abc", "?year=99999999999"] {
        for client in [&admin, &staff] {
            let twin = send(&app, client, "GET", &format!("/api/v1/document-numbering/counters{query}"), None).await;
            let alias = send(&app, client, "GET", &format!("/api/v1/document-numbering/sequences{query}"), None).await;
            assert_eq!(alias, twin, "sequences{query}");
        }
    }
    let (s, counters) = send(&app, &admin, "GET", "/api/v1/document-numbering/sequences", None).await;
    assert_eq!(s, StatusCode::OK);
    assert!(counters.as_array().is_some_and(|c| c.iter().any(|c| c["lastNumber"] == 3)), "{counters}");

    let rows = json!({ "reason": "ย้ายข้อมูลจากสมุดทะเบียน", "rows": [
        { "projectCode": "LCBP3", "correspondenceTypeCode": "MEMO", "originatorCode": "คคง.", "recipientCode": "สคฉ.3", "year": 2568, "value": 20 },
        { "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "documentNumber": "คคง.-สคฉ.3-00x7-2568", "documentId": "OLD-7" }
    ] });
    // a dry run reports the id a new counter would get: on MariaDB the rolled-back insert still uses up its
    // AUTO_INCREMENT value, so that id differs from one dry run to the next — leave it out of the comparison
    let without_new_ids = |(status, mut body): (StatusCode, Value)| {
        for row in body["rows"].as_array_mut().into_iter().flatten() {
            row.as_object_mut().map(|r| r.remove("counterId"));
        }
        (status, body)
    };
    for (client, body) in [(&admin, &rows), (&admin, &json!({ "rows": "not rows" })), (&staff, &rows)] {
        let twin = send(&app, client, "POST", "/api/v1/document-numbering/import?dryRun=true", Some(body)).await;
        let alias = send(&app, client, "POST", "/api/v1/document-numbering/bulk-import?dryRun=true", Some(body)).await;
        assert_eq!(without_new_ids(alias), without_new_ids(twin), "bulk-import {body}");
    }
    // and the alias applies, as its twin does
    let (s, applied) = send(
        &app,
        &admin,
        "POST",
        "/api/v1/document-numbering/bulk-import",
        Some(&json!({ "reason": "ย้ายข้อมูลจากสมุดทะเบียน", "rows": [rows["rows"][0]] })),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{applied}");
    assert_eq!(applied["applied"], true);
    assert_eq!(app.count("SELECT COUNT(*) FROM counters WHERE last_number = 20").await, 1);
}

#[tokio::test]
async fn reset_counter_of_a_config_answers_like_a_reset_request() {
    let app = TestApp::spawn().await;
    for _ in 0..2 {
        assert_eq!(app.reserve(&letter()).await.0, StatusCode::OK);
    }
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let counter = letter_counter(&app).await;
    let lcbp3 = app.project_id("LCBP3").await;
    // the configuration the letter counter is numbered under: LCBP3's LETTER template or its project default
    let config = app
        .count(&format!(
            "SELECT id FROM numbering_templates WHERE project_id = {lcbp3} \
             AND correspondence_type_id IN (0, (SELECT id FROM correspondence_types WHERE code = 'LETTER')) ORDER BY correspondence_type_id DESC LIMIT 1"
        ))
        .await;
    let reason = "ขอรีเซ็ตตัวนับเพื่อทดสอบเส้นทางเดิม";

    // refusals match: a short reason, a negative value (nothing is requested by either)
    for body in [json!({ "newValue": 1, "reason": "สั้น" }), json!({ "reason": reason, "newValue": -5 })] {
        let twin = send(&app, &admin, "POST", &format!("/api/v1/document-numbering/counters/{counter}/reset-requests"), Some(&body)).await;
        let mut with_counter = body.clone();
        with_counter["counterId"] = json!(counter);
        let alias = send(&app, &admin, "POST", &format!("/api/v1/document-numbering/configs/{config}/reset-counter"), Some(&with_counter)).await;
        assert_eq!((alias.0, &alias.1["code"]), (twin.0, &twin.1["code"]), "{body}");
        assert!(alias.0.is_client_error(), "{alias:?}");
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM counter_reset_requests").await, 0);

    // a request through each, for two counters of the same configuration (one open request per counter)
    let mut swapped = letter();
    swapped["originatorCode"] = json!("สคฉ.3");
    swapped["recipientCode"] = json!("คคง.");
    let (s, b) = app.reserve(&swapped).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let other_counter =
        app.count(&format!("SELECT id FROM counters WHERE project_id = {lcbp3} AND id <> {counter} AND last_number = 1 LIMIT 1")).await;
    let (s, twin) = send(
        &app,
        &admin,
        "POST",
        &format!("/api/v1/document-numbering/counters/{counter}/reset-requests"),
        Some(&json!({ "newValue": 1, "reason": reason })),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{twin}");
    let (s, alias) = send(
        &app,
        &admin,
        "POST",
        &format!("/api/v1/document-numbering/configs/{config}/reset-counter"),
        Some(&json!({ "counterId": other_counter, "newValue": 0, "reason": reason })),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{alias}");
    assert_eq!(shape(&alias), shape(&twin));
    assert_eq!((twin["data"]["previousValue"].clone(), alias["data"]["previousValue"].clone()), (json!(2), json!(1)));
    assert_eq!(alias["data"]["newValue"], 0);
    assert_eq!(alias["workflow"]["currentState"], "PENDING");
    // and a second one for the same counter is refused alike
    let again = send(
        &app,
        &admin,
        "POST",
        &format!("/api/v1/document-numbering/configs/{config}/reset-counter"),
        Some(&json!({ "counterId": counter, "reason": reason })),
    )
    .await;
    assert_eq!((again.0, again.1["code"].as_str()), (StatusCode::CONFLICT, Some("RESET_ALREADY_PENDING")), "{:?}", again.1);

    // a counter of another project is not this configuration's: 400, nothing requested
    let other = app.project_id("LCBP3-C1").await;
    let (s, _) =
        app.reserve(&json!({ "projectId": other, "correspondenceTypeCode": "MEMO", "originatorCode": "ผรม.1", "recipientCode": "กทท." })).await;
    assert_eq!(s, StatusCode::OK);
    let foreign = app.count(&format!("SELECT id FROM counters WHERE project_id = {other} LIMIT 1")).await;
    let before = app.count("SELECT COUNT(*) FROM workflow_instances").await;
    let (s, e) = send(
        &app,
        &admin,
        "POST",
        &format!("/api/v1/document-numbering/configs/{config}/reset-counter"),
        Some(&json!({ "counterId": foreign, "reason": reason })),
    )
    .await;
    // no such counter under this configuration
    assert_eq!((s, e["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")), "{e}");
    assert_eq!(app.count("SELECT COUNT(*) FROM workflow_instances").await, before);
    let (s, e) = send(
        &app,
        &admin,
        "POST",
        "/api/v1/document-numbering/configs/999999/reset-counter",
        Some(&json!({ "counterId": counter, "reason": reason })),
    )
    .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{e}");
}

#[tokio::test]
async fn the_metrics_summary_counts_today_for_admins_only() {
    let app = TestApp::spawn().await;
    for _ in 0..3 {
        assert_eq!(app.reserve(&letter()).await.0, StatusCode::OK);
    }
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let (s, m) = send(&app, &admin, "GET", "/api/v1/document-numbering/metrics", None).await;
    assert_eq!(s, StatusCode::OK, "{m}");
    assert_eq!(m["day"], "2025-06-15", "{m}");
    let letters = m["issuedToday"].as_array().unwrap().iter().find(|t| t["correspondenceTypeCode"] == "LETTER").cloned();
    assert_eq!(letters.map(|t| t["count"].clone()), Some(json!(3)), "{m}");
    assert_eq!(m["requestsToday"]["count"], 3, "{m}");
    assert!(m["requestsToday"]["lockWaitAvgMs"].as_f64().is_some(), "{m}");
    assert_eq!(m["redis"], "not configured");
    assert!(m["fullestCounters"].as_array().is_some_and(|c| !c.is_empty()), "{m}");

    // as the counters are: a staff member is refused the same way
    let staff = app.user_client("somchai", Role::Staff, &[]).await;
    let (s, e) = send(&app, &staff, "GET", "/api/v1/document-numbering/metrics", None).await;
    let (ts, te) = send(&app, &staff, "GET", "/api/v1/document-numbering/counters", None).await;
    assert_eq!((s, &e["code"]), (ts, &te["code"]));
    assert_eq!(s, StatusCode::FORBIDDEN);
}

/// The DMS's documents show generate-number with the request wrapped as `{"counterKey": {…}}`, a part that is absent
/// as `0`. Sent as written there (with the demo's ids), it is numbered as the flat request would be; preview and reserve
/// take it too, and the OpenAPI document names both shapes.
#[tokio::test]
async fn the_seeds_counter_key_body_is_numbered_as_written() {
    let app = TestApp::spawn().await;
    let snapshot = app.state.reference().get().await.unwrap();
    let project = snapshot.project(None, Some("LCBP3")).unwrap().id;
    let letter_type = snapshot.correspondence_type(None, Some("LETTER")).unwrap().id;
    let part = docnum::server::reference::Part::Originator;
    let originator = snapshot.org(None, Some("คคง."), part).unwrap().id;
    let recipient = snapshot.org(None, Some("สคฉ.3"), part).unwrap().id;
    let seed_body = json!({
        "counterKey": {
            "projectId": project,
            "originatorOrgId": originator,
            "recipientOrgId": recipient,
            "correspondenceTypeId": letter_type,
            "subTypeId": 0,
            "rfaTypeId": 0,
            "disciplineId": 0,
            "year": 2025
        }
    });
    let (s, preview) = app.post_json("/api/v1/document-numbering/preview", &seed_body).await;
    assert_eq!(s, StatusCode::OK, "{preview}");
    assert_eq!(preview["documentNumber"], "คคง.-สคฉ.3-0001-2568");
    // the seed's own example answer
    let (s, generated) = app.post_json("/api/v1/documents/DOC-SEED-1/generate-number", &seed_body).await;
    assert_eq!(s, StatusCode::OK, "{generated}");
    assert_eq!(generated["documentNumber"], "คคง.-สคฉ.3-0001-2568");
    assert!(generated["generatedAt"].is_string());
    // the same as the flat request: the next number on the same counter
    let (s, flat) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK, "{flat}");
    assert_eq!(flat["documentNumber"], "คคง.-สคฉ.3-0002-2568");
    let (s, wrapped) = app.reserve(&seed_body).await;
    assert_eq!(s, StatusCode::OK, "{wrapped}");
    assert_eq!(wrapped["documentNumber"], "คคง.-สคฉ.3-0003-2568");
    // a retry of the generate for the same document gets the same number
    let (_, again) = app.post_json("/api/v1/documents/DOC-SEED-1/generate-number", &seed_body).await;
    assert_eq!(again["documentNumber"], "คคง.-สคฉ.3-0001-2568");

    // bad input in the wrapped shape: a clear 4xx, nothing issued
    let mut unknown_field = seed_body.clone();
    unknown_field["counterKey"]["colour"] = json!("blue");
    let (s, e) = app.reserve(&unknown_field).await;
    assert_eq!((s, e["code"].as_str()), (StatusCode::BAD_REQUEST, Some("VALIDATION_ERROR")), "{e}");
    assert!(e["message"].as_str().unwrap().contains("colour"), "{e}");
    let mut no_project = seed_body.clone();
    no_project["counterKey"]["projectId"] = json!(0);
    let (s, e) = app.reserve(&no_project).await;
    assert_eq!((s, e["code"].as_str()), (StatusCode::BAD_REQUEST, Some("VALIDATION_ERROR")), "{e}");
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 3);

    // both shapes in the OpenAPI document
    let doc: Value = app.client.get(app.url("/api/v1/openapi.json")).send().await.unwrap().json().await.unwrap();
    let mut body = &doc["paths"]["/api/v1/documents/{documentId}/generate-number"]["post"]["requestBody"]["content"]["application/json"]["schema"];
    if let Some(name) = body["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/schemas/")) {
        body = &doc["components"]["schemas"][name];
    }
    let shapes = body["oneOf"].as_array().expect("two shapes");
    assert_eq!(shapes.len(), 2, "{body}");
    assert!(shapes.iter().any(|s| s["properties"]["counterKey"]["properties"]["originatorOrgId"].is_object()), "{body}");
}

/// The DMS's admin endpoints under `/admin/document-numbering` answer as today's: metrics, manual override,
/// void-and-replace, the admin "cancel" (a void), bulk import; staff are refused there as on the twins.
#[tokio::test]
async fn seed_003_admin_paths_answer_like_their_twins() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let base = "/api/v1/admin/document-numbering";
    let (s, metrics) = send(&app, &admin, "GET", &format!("{base}/metrics"), None).await;
    let (_, twin) = send(&app, &admin, "GET", "/api/v1/document-numbering/metrics", None).await;
    assert_eq!((s, shape(&metrics)), (StatusCode::OK, shape(&twin)));

    for _ in 0..2 {
        let (s, body) = send(&app, &admin, "POST", "/api/v1/documents/DOC-A/generate-number", Some(&letter())).await;
        assert_eq!(s, StatusCode::OK, "{body}");
        let mut other = letter();
        other["recipientCode"] = json!("กทท.");
        send(&app, &admin, "POST", "/api/v1/documents/DOC-B/generate-number", Some(&other)).await;
    }
    let counter = letter_counter(&app).await;
    let (s, body) =
        send(&app, &admin, "POST", &format!("{base}/manual-override"), Some(&json!({ "counterId": counter, "value": 5, "reason": "ทดสอบ" }))).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(app.count(&format!("SELECT last_number FROM counters WHERE id = {counter}")).await, 5);

    let number = |n: &str| json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "documentNumber": n, "reason": "ออกผิด" });
    let (s, body) = send(&app, &admin, "POST", &format!("{base}/void-and-replace"), Some(&number("คคง.-สคฉ.3-0001-2568"))).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(body["replacement"]["documentNumber"], "คคง.-สคฉ.3-0006-2568", "{body}");
    let (s, body) = send(&app, &admin, "POST", &format!("{base}/cancel"), Some(&number("คคง.-กทท.-0001-2568"))).await;
    assert_eq!((s, body["status"].as_str()), (StatusCode::OK, Some("VOID")), "{body}");

    let rows = json!({ "counters": [], "numbers": [] });
    let (s, report) = send(&app, &admin, "POST", &format!("{base}/bulk-import?dryRun=true"), Some(&rows)).await;
    let (twin_s, twin) = send(&app, &admin, "POST", "/api/v1/document-numbering/import?dryRun=true", Some(&rows)).await;
    assert_eq!((s, shape(&report)), (twin_s, shape(&twin)), "{report}");

    let staff = app.user_client("somchai", Role::Staff, &[]).await;
    let (s, _) = send(&app, &staff, "POST", &format!("{base}/cancel"), Some(&number("คคง.-สคฉ.3-0002-2568"))).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
}
