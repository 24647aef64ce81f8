//! The numbering service end to end over HTTP, on a real SQLite file.

use std::collections::HashSet;

use crate::common::*;
use chrono::Duration;
use docnum::contract::{CounterId, ProjectId, Role, UserId};
use reqwest::StatusCode;
use serde_json::{json, Value};

#[tokio::test]
async fn the_seeds_examples_come_out_exactly() {
    let app = TestApp::spawn().await;
    let (s, letter) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK, "{letter}");
    assert_eq!(letter["documentNumber"], "คคง.-สคฉ.3-0001-2568");
    assert_eq!(letter["sequence"], 1);

    let (s, transmittal) = app
        .reserve(&json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "TRANSMITTAL", "originatorCode": "คคง.", "recipientCode": "สคฉ.3", "subTypeNumber": "21" }))
        .await;
    assert_eq!(s, StatusCode::OK, "{transmittal}");
    assert_eq!(transmittal["documentNumber"], "คคง.-สคฉ.3-21-0001-2568");

    let (s, rfa) = app
        .reserve(&json!({ "projectCode": "LCBP3-C2", "correspondenceTypeCode": "RFA", "originatorCode": "ผรม.1", "disciplineCode": "TER", "rfaTypeCode": "RPT" }))
        .await;
    assert_eq!(s, StatusCode::OK, "{rfa}");
    assert_eq!(rfa["documentNumber"], "LCBP3-C2-RFA-TER-RPT-0001-A");
}

#[tokio::test]
async fn preview_shows_the_next_number_without_consuming_it() {
    let app = TestApp::spawn().await;
    for _ in 0..2 {
        let (s, p) = app.post_json("/api/v1/document-numbering/preview", &letter()).await;
        assert_eq!(s, StatusCode::OK);
        assert_eq!(p["documentNumber"], "คคง.-สคฉ.3-0001-2568");
        assert_eq!(p["reserved"], false);
        assert_eq!(p["template"], "{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}");
    }
    app.reserve(&letter()).await;
    let (_, p) = app.post_json("/api/v1/document-numbering/preview", &letter()).await;
    assert_eq!(p["sequence"], 2);
}

#[tokio::test]
async fn letter_and_memo_have_separate_counters() {
    let app = TestApp::spawn().await;
    let (s1, a) = app.reserve(&letter()).await;
    let mut memo = letter();
    memo["correspondenceTypeCode"] = json!("MEMO");
    let (s2, b) = app.reserve(&memo).await;
    assert_eq!((s1, s2), (StatusCode::OK, StatusCode::OK), "{a} {b}");
    assert_eq!(a["documentNumber"], "คคง.-สคฉ.3-0001-2568");
    assert_eq!(b["documentNumber"], "คคง.-สคฉ.3-0001-2568");
}

#[tokio::test]
async fn rfas_of_two_contractors_never_share_a_number() {
    let app = TestApp::spawn().await;
    let mut numbers = Vec::new();
    for originator in ["ผรม.1", "ผรม.2", "ผรม.1", "ผรม.2"] {
        let (s, r) = app
            .reserve(&json!({ "projectCode": "LCBP3-C2", "correspondenceTypeCode": "RFA", "originatorCode": originator, "disciplineCode": "TER", "rfaTypeCode": "RPT" }))
            .await;
        assert_eq!(s, StatusCode::OK, "{r}");
        numbers.push(r["documentNumber"].as_str().unwrap().to_string());
    }
    assert_eq!(numbers, ["LCBP3-C2-RFA-TER-RPT-0001-A", "LCBP3-C2-RFA-TER-RPT-0002-A", "LCBP3-C2-RFA-TER-RPT-0003-A", "LCBP3-C2-RFA-TER-RPT-0004-A"]);
}

#[tokio::test]
async fn a_thousand_concurrent_reserves_get_exactly_one_to_a_thousand() {
    let app = TestApp::spawn().await;
    let requests = (0..1000).map(|_| {
        let client = app.client.clone();
        let url = app.url("/api/v1/document-numbering/reserve");
        let token = app.token.clone();
        tokio::spawn(async move {
            let r = client.post(url).bearer_auth(token).json(&letter()).send().await.unwrap();
            assert_eq!(r.status(), StatusCode::OK);
            r.json::<Value>().await.unwrap()
        })
    });
    let results: Vec<Value> = futures::future::join_all(requests).await.into_iter().map(|r| r.unwrap()).collect();
    let numbers: HashSet<String> = results.iter().map(|r| r["documentNumber"].as_str().unwrap().to_string()).collect();
    let mut sequences: Vec<i64> = results.iter().map(|r| r["sequence"].as_i64().unwrap()).collect();
    sequences.sort();
    assert_eq!(numbers.len(), 1000, "distinct numbers");
    assert_eq!(sequences, (1..=1000).collect::<Vec<_>>());
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 1000);
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'RESERVE'").await, 1000);
    assert_eq!(app.count("SELECT last_number FROM counters").await, 1000);
    let report = docnum::server::audit::verify(&app.state.db).await.unwrap();
    assert!(report.ok, "{:?}", report.problems);
    assert!(report.rows >= 1000);
    assert!(docnum::server::audit::unexplained_gaps(&app.state.db).await.unwrap().is_empty());
}

#[tokio::test]
async fn confirm_and_cancel_follow_the_reservation_lifecycle() {
    let app = TestApp::spawn().await;
    let (_, r) = app.reserve(&letter()).await;
    let token = r["token"].as_str().unwrap();
    assert!(r["ttlSeconds"].as_i64().unwrap() > 290);

    let (s, c) = app.post_json("/api/v1/document-numbering/confirm", &json!({ "token": token, "documentId": "DOC-1" })).await;
    assert_eq!(s, StatusCode::OK, "{c}");
    assert_eq!((c["documentNumber"].clone(), c["status"].clone()), (json!("คคง.-สคฉ.3-0001-2568"), json!("CONFIRMED")));
    // the same confirmation again is harmless; another document may not take the number
    let (s, _) = app.post_json("/api/v1/document-numbering/confirm", &json!({ "token": token, "documentId": "DOC-1" })).await;
    assert_eq!(s, StatusCode::OK);
    let (s, b) = app.post_json("/api/v1/document-numbering/confirm", &json!({ "token": token, "documentId": "DOC-2" })).await;
    assert_error(s, &b, 409, "ALREADY_CONFIRMED");
    let (s, b) = app.post_json("/api/v1/document-numbering/cancel", &json!({ "token": token })).await;
    assert_error(s, &b, 409, "ALREADY_CONFIRMED");
}

#[tokio::test]
async fn a_cancelled_number_is_never_issued_again() {
    let app = TestApp::spawn().await;
    let (_, first) = app.reserve(&letter()).await;
    let (s, c) = app.post_json("/api/v1/document-numbering/cancel", &json!({ "token": first["token"], "reason": "ไม่ใช้แล้ว" })).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(c["status"], "CANCELLED");
    let mut seen = HashSet::from([first["documentNumber"].as_str().unwrap().to_string()]);
    for expected in 2..=5 {
        let (_, r) = app.reserve(&letter()).await;
        assert_eq!(r["sequence"], expected);
        assert!(seen.insert(r["documentNumber"].as_str().unwrap().to_string()), "reissued {}", r["documentNumber"]);
    }
    // confirming a cancelled reservation is refused
    let (s, b) = app.post_json("/api/v1/document-numbering/confirm", &json!({ "token": first["token"], "documentId": "D" })).await;
    assert_error(s, &b, 409, "RESERVATION_CANCELLED");
    // the gap at sequence 1 is explained in the audit log
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'CANCEL' AND sequence = 1").await, 1);
    assert!(docnum::server::audit::unexplained_gaps(&app.state.db).await.unwrap().is_empty());
}

#[tokio::test]
async fn confirming_an_expired_reservation_answers_410_nb004() {
    let app = TestApp::spawn().await;
    let (_, r) = app.reserve(&letter()).await;
    app.clock.advance(Duration::seconds(301));
    let (s, b) = app.post_json("/api/v1/document-numbering/confirm", &json!({ "token": r["token"], "documentId": "DOC-9" })).await;
    assert_error(s, &b, 410, "NB004");
    assert_eq!(b["message"], "การจองเลขที่หมดอายุแล้ว กรุณาจองใหม่");
    // the expiry is recorded and the number stays taken
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers WHERE status = 'CANCELLED' AND cancel_reason = 'expired'").await, 1);
    let (_, next) = app.reserve(&letter()).await;
    assert_eq!(next["sequence"], 2);
}

#[tokio::test]
async fn the_expiry_sweep_cancels_overdue_reservations() {
    let app = TestApp::spawn().await;
    for _ in 0..3 {
        app.reserve(&letter()).await;
    }
    assert_eq!(app.state.engine().expire_due().await.unwrap(), 0);
    app.clock.advance(Duration::seconds(301));
    assert_eq!(app.state.engine().expire_due().await.unwrap(), 3);
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'CANCEL'").await, 3);
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers WHERE status = 'RESERVED'").await, 0);
}

/// A backlog larger than a chunk, and than the 1,000 a sweep once took at most, goes in one sweep (the old sweep fell behind a sustained load:
/// 160 expiries a second in the soak), a chunk at a time.
#[tokio::test]
async fn one_sweep_cancels_a_backlog_larger_than_a_chunk() {
    let app = TestApp::spawn().await;
    let body = letter();
    let reserves = (0..1_100).map(|_| app.reserve(&body));
    for (s, _) in futures::future::join_all(reserves).await {
        assert_eq!(s, 200);
    }
    app.clock.advance(Duration::seconds(301));
    assert_eq!(app.state.engine().expire_due().await.unwrap(), 1_100);
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers WHERE status = 'RESERVED'").await, 0);
    assert_eq!(app.state.engine().expire_due().await.unwrap(), 0);
}

#[tokio::test]
async fn a_request_at_new_year_utc_is_numbered_in_the_bangkok_year() {
    let app = TestApp::spawn_with(Options { start: "2025-12-31T17:30:00Z".parse().unwrap(), ..Options::default() }).await;
    let (s, r) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["documentNumber"], "คคง.-สคฉ.3-0001-2569");
    assert_eq!(app.count("SELECT COUNT(*) FROM counters WHERE period = 'YEAR_2026'").await, 1);
}

#[tokio::test]
async fn generate_confirms_at_once_and_is_idempotent_per_document() {
    let app = TestApp::spawn().await;
    let (s, a) = app.post_json("/api/v1/documents/DMS-42/generate-number", &letter()).await;
    assert_eq!(s, StatusCode::OK, "{a}");
    assert_eq!(a["documentNumber"], "คคง.-สคฉ.3-0001-2568");
    assert!(a["generatedAt"].is_string());
    let (_, again) = app.post_json("/api/v1/documents/DMS-42/generate-number", &letter()).await;
    assert_eq!(again["documentNumber"], "คคง.-สคฉ.3-0001-2568");
    let (_, other) = app.post_json("/api/v1/documents/DMS-43/generate-number", &letter()).await;
    assert_eq!(other["documentNumber"], "คคง.-สคฉ.3-0002-2568");
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'GENERATE'").await, 2);
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers WHERE status = 'CONFIRMED'").await, 2);
}

#[tokio::test]
async fn parts_by_id_work_like_parts_by_code() {
    let app = TestApp::spawn().await;
    let snapshot = app.state.reference().get().await.unwrap();
    let p = snapshot.project(None, Some("LCBP3")).unwrap().id;
    let t = snapshot.correspondence_type(None, Some("LETTER")).unwrap().id;
    let o = snapshot.org(None, Some("คคง."), docnum::server::reference::Part::Originator).unwrap().id;
    let r = snapshot.org(None, Some("สคฉ.3"), docnum::server::reference::Part::Recipient).unwrap().id;
    let (s, b) = app.reserve(&json!({ "projectId": p, "correspondenceTypeId": t, "originatorOrgId": o, "recipientOrgId": r })).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["documentNumber"], "คคง.-สคฉ.3-0001-2568");
}

#[tokio::test]
async fn bad_input_gets_a_clear_4xx_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let reserve = "/api/v1/document-numbering/reserve";

    let r = app
        .client
        .post(app.url(reserve))
        .bearer_auth(&app.token)
        .header("content-type", "application/json")
        .body("{\"projectCode\": ")
        .send()
        .await
        .unwrap();
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 400, "VALIDATION_ERROR");

    let (s, b) = app.reserve(&json!({ "projectCode": 42 })).await;
    assert_error(s, &b, 400, "VALIDATION_ERROR");
    let (s, b) = app
        .reserve(
            &json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "originatorCode": "คคง.", "recipientCode": "สคฉ.3", "surprise": 1 }),
        )
        .await;
    assert_error(s, &b, 400, "VALIDATION_ERROR");

    let mut unknown = letter();
    unknown["projectCode"] = json!("NOPE");
    let (s, b) = app.reserve(&unknown).await;
    assert_error(s, &b, 404, "NOT_FOUND");
    assert!(b["message"].as_str().unwrap().contains("NOPE"));

    let mut unknown_id = letter();
    unknown_id["originatorOrgId"] = json!(99999);
    let (s, b) = app.reserve(&unknown_id).await;
    assert_error(s, &b, 404, "NOT_FOUND");

    let mut missing = letter();
    missing.as_object_mut().unwrap().remove("recipientCode");
    let (s, b) = app.reserve(&missing).await;
    assert_error(s, &b, 400, "VALIDATION_ERROR");
    assert!(b["message"].as_str().unwrap().contains("ผู้รับ"), "names the missing part: {b}");
    assert!(b["detail"].as_str().unwrap().contains("recipient"));

    let mut huge = letter();
    huge["originatorCode"] = json!("ก".repeat(5000));
    let (s, b) = app.reserve(&huge).await;
    assert_error(s, &b, 404, "NOT_FOUND");
    assert!(b["message"].as_str().unwrap().chars().count() < 200, "oversize input is not echoed back");

    let mut too_big = letter();
    too_big["revision"] = json!("A".repeat(100_000));
    let (s, b) = app.reserve(&too_big).await;
    assert_error(s, &b, 413, "PAYLOAD_TOO_LARGE");

    let mut backdated = letter();
    backdated["year"] = json!(2567);
    let (s, b) = app.reserve(&backdated).await;
    assert_error(s, &b, 400, "VALIDATION_ERROR");

    let (s, b) = app.post_json("/api/v1/document-numbering/confirm", &json!({ "token": "not-a-token", "documentId": "X" })).await;
    assert_error(s, &b, 400, "VALIDATION_ERROR");
    let (s, b) =
        app.post_json("/api/v1/document-numbering/confirm", &json!({ "token": "7f1c1f5e-3b7a-4c43-9a53-2f1e1d9c0a11", "documentId": "X" })).await;
    assert_error(s, &b, 404, "NOT_FOUND");

    let r = app.client.post(app.url(reserve)).json(&letter()).send().await.unwrap();
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 401, "UNAUTHENTICATED");
    let r = app.client.post(app.url(reserve)).bearer_auth("dnt_wrong").json(&letter()).send().await.unwrap();
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 401, "UNAUTHENTICATED");

    let (s, b) = app.post_json("/api/v1/no-such-thing", &json!({})).await;
    assert_error(s, &b, 404, "NOT_FOUND");
    let r = app.client.get(app.url("/api/v1/document-numbering/configs/abc")).bearer_auth(&app.token).send().await.unwrap();
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 400, "VALIDATION_ERROR");
    // ids typed in the path (a counter's, a token's) are refused the same way when they are not numbers
    let r = app.client.get(app.url("/api/v1/document-numbering/counters/abc/numbers")).bearer_auth(&app.token).send().await.unwrap();
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 400, "VALIDATION_ERROR");
    let r = app.client.delete(app.url("/api/v1/admin/api-tokens/1x")).bearer_auth(&app.token).send().await.unwrap();
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 400, "VALIDATION_ERROR");

    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 0, "nothing was issued");
    assert_eq!(app.count("SELECT COUNT(*) FROM counters").await, 0, "no counter was touched");
}

#[tokio::test]
async fn roles_are_checked_on_the_server() {
    let app = TestApp::spawn().await;
    let staff = app.user_client("somchai", Role::Staff, &[]).await;
    let project = app.project_id("LCBP3").await;
    let save = json!({ "projectId": project, "correspondenceTypeId": null, "template": "{ORIGINATOR}-{RECIPIENT}-{SEQ:5}-{YEAR:B.E.}", "resetScope": "YEARLY", "reason": "ทดสอบ" });
    let r = staff.post(app.url("/api/v1/document-numbering/configs")).json(&save).send().await.unwrap();
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 403, "FORBIDDEN");
    let r = staff.post(app.url("/api/v1/admin/api-tokens")).json(&json!({ "name": "x" })).send().await.unwrap();
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 403, "FORBIDDEN");
    let r = staff
        .post(app.url("/api/v1/admin/users"))
        .json(&json!({ "username": "x", "password": "12345678", "role": "SUPER_ADMIN" }))
        .send()
        .await
        .unwrap();
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 403, "FORBIDDEN");
    assert_eq!(app.count("SELECT COUNT(*) FROM numbering_template_versions").await, 55, "only the demo versions");
    assert_eq!(app.count("SELECT COUNT(*) FROM users").await, 2);

    // a staff member can take numbers
    let r = staff.post(app.url("/api/v1/document-numbering/reserve")).json(&letter()).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);

    // a project admin may edit their project only
    let padmin = app.user_client("project-admin", Role::ProjectAdmin, &[project]).await;
    let r = padmin.post(app.url("/api/v1/document-numbering/configs")).json(&save).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let other = app.project_id("LCBP3-C1").await;
    let mut elsewhere = save.clone();
    elsewhere["projectId"] = json!(other);
    let r = padmin.post(app.url("/api/v1/document-numbering/configs")).json(&elsewhere).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_template_change_applies_to_new_numbers_only() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let (_, first) = app.reserve(&letter()).await;
    let project = app.project_id("LCBP3").await;
    let letter_type = app.state.reference().get().await.unwrap().correspondence_type(None, Some("LETTER")).unwrap().id;
    let r = admin
        .post(app.url("/api/v1/document-numbering/configs"))
        .json(&json!({ "projectId": project, "correspondenceTypeId": letter_type, "template": "{ORIGINATOR}/{RECIPIENT}/{SEQ:5}/{YEAR:A.D.}", "resetScope": "YEARLY", "reason": "รูปแบบใหม่ตามมติที่ประชุม" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let saved: Value = r.json().await.unwrap();
    assert_eq!(saved["version"], 2);
    let (_, second) = app.reserve(&letter()).await;
    assert_eq!(second["documentNumber"], "คคง./สคฉ.3/00002/2025", "same key parts: the counter continues");
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers WHERE number = 'คคง.-สคฉ.3-0001-2568'").await, 1);
    assert_eq!(first["documentNumber"], "คคง.-สคฉ.3-0001-2568");

    // an invalid template is refused with the validator's reasons, and nothing is stored
    let r = admin
        .post(app.url("/api/v1/document-numbering/configs"))
        .json(&json!({ "projectId": project, "correspondenceTypeId": letter_type, "template": "{ORIGINATOR}-{SEQ:4}", "resetScope": "YEARLY", "reason": "ลืมปี" }))
        .send()
        .await
        .unwrap();
    let s = r.status();
    let b: Value = r.json().await.unwrap();
    assert_error(s, &b, 400, "NB006");
    assert_eq!(app.count("SELECT COUNT(*) FROM numbering_template_versions").await, 56);
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'TEMPLATE_UPDATE'").await, 1);
}

#[tokio::test]
async fn past_the_seq_maximum_answers_nb002_instead_of_widening() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let project = app.project_id("LCBP3").await;
    let r = admin
        .post(app.url("/api/v1/document-numbering/configs"))
        .json(&json!({ "projectId": project, "correspondenceTypeId": null, "template": "{ORIGINATOR}-{SEQ:1}-{YEAR:B.E.}", "resetScope": "YEARLY", "reason": "ทดสอบเลขเต็ม", "acknowledgeKeyChange": true }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    // a new type without its own template uses the project default
    let r = admin
        .post(app.url("/api/v1/reference/correspondence-types"))
        .json(&json!({ "code": "SITEREPORT", "name": "รายงานหน้างาน" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let t = r.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    let body = json!({ "projectCode": "LCBP3", "correspondenceTypeId": t, "originatorCode": "คคง." });
    for i in 1..=9 {
        let (s, r) = app.reserve(&body).await;
        assert_eq!(s, StatusCode::OK, "{r}");
        assert_eq!(r["documentNumber"], format!("คคง.-{i}-2568"));
    }
    let (s, b) = app.reserve(&body).await;
    assert_error(s, &b, 409, "NB002");
    assert_eq!(b["message"], "เลขลำดับเต็มแล้ว กรุณาติดต่อผู้ดูแลระบบ");
}

#[tokio::test]
async fn the_database_refuses_to_change_or_delete_audit_rows() {
    let app = TestApp::spawn().await;
    app.reserve(&letter()).await;
    let update = sqlx::query("UPDATE audit_log SET document_number = 'X'").execute(&app.state.db.writer).await;
    assert!(update.is_err(), "UPDATE must be refused");
    assert!(update.unwrap_err().to_string().contains("append-only"));
    let delete = sqlx::query("DELETE FROM audit_log").execute(&app.state.db.writer).await;
    assert!(delete.is_err(), "DELETE must be refused");
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'RESERVE'").await, 1);
}

#[tokio::test]
async fn verify_notices_a_row_altered_behind_the_triggers() {
    let app = TestApp::spawn().await;
    for _ in 0..3 {
        app.reserve(&letter()).await;
    }
    assert!(docnum::server::audit::verify(&app.state.db).await.unwrap().ok);
    // someone with file access drops the trigger and edits history
    sqlx::query("DROP TRIGGER audit_log_no_update").execute(&app.state.db.writer).await.unwrap();
    sqlx::query("UPDATE audit_log SET document_number = 'คคง.-สคฉ.3-9999-2568' WHERE sequence = 2").execute(&app.state.db.writer).await.unwrap();
    let report = docnum::server::audit::verify(&app.state.db).await.unwrap();
    assert!(!report.ok);
    assert!(report.problems.iter().any(|p| p.contains("does not match its hash")), "{:?}", report.problems);
}

#[tokio::test]
async fn verify_notices_a_counters_row_outside_the_counters_chain() {
    use docnum::server::audit::{self, AuditEntry, ADMIN_CHAIN};
    let app = TestApp::spawn().await;
    app.reserve(&letter()).await;
    assert!(audit::verify(&app.state.db).await.unwrap().ok);
    // the gap check and a counter's history read only the counter's own chain, so a row about the counter
    // written anywhere else would be invisible to them
    let counter_id = app.count("SELECT MAX(id) FROM counters").await;
    let mut tx = app.state.db.begin_write().await.unwrap();
    let stray = AuditEntry {
        operation: "RESERVE".into(),
        status: "RESERVED".into(),
        counter_id: Some(CounterId(counter_id)),
        sequence: Some(2),
        ..Default::default()
    };
    audit::append(&mut tx, app.state.db.dialect, ADMIN_CHAIN, &[stray]).await.unwrap();
    tx.commit().await.unwrap();
    let report = audit::verify(&app.state.db).await.unwrap();
    assert!(!report.ok);
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert!(report.problems[0].starts_with("admin#"), "{:?}", report.problems);
    assert!(report.problems[0].ends_with(&format!(": names counter {counter_id} but is not on its chain")), "{:?}", report.problems);
}

#[tokio::test]
async fn per_user_limits_answer_429_with_retry_after() {
    let limits = docnum::server::auth::rate_limit::RateLimits { per_user_per_min: 3, ..docnum::server::auth::rate_limit::RateLimits::off() };
    let app = TestApp::spawn_with(Options { limits, ..Options::default() }).await;
    let staff = app.user_client("somsri", Role::Staff, &[]).await;
    for _ in 0..3 {
        let r = staff.post(app.url("/api/v1/document-numbering/reserve")).json(&letter()).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
    }
    let r = staff.post(app.url("/api/v1/document-numbering/reserve")).json(&letter()).send().await.unwrap();
    let retry_after: u64 = r.headers().get("retry-after").unwrap().to_str().unwrap().parse().unwrap();
    assert!(retry_after >= 1);
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 429, "RATE_LIMITED");
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 3);
}

#[tokio::test]
async fn reference_data_and_openapi_are_served() {
    let app = TestApp::spawn().await;
    let r: Value = app.client.get(app.url("/api/v1/reference/organizations")).bearer_auth(&app.token).send().await.unwrap().json().await.unwrap();
    let codes: Vec<&str> = r.as_array().unwrap().iter().map(|o| o["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["กทท.", "สคฉ.3", "คคง.", "ผรม.1", "ผรม.2"]);
    let r: Value = app.client.get(app.url("/api/v1/reference/sub-types")).bearer_auth(&app.token).send().await.unwrap().json().await.unwrap();
    assert_eq!(r.as_array().unwrap().len(), 5);
    let doc: Value = app.client.get(app.url("/api/v1/openapi.json")).send().await.unwrap().json().await.unwrap();
    for path in ["/api/v1/document-numbering/reserve", "/api/v1/documents/{documentId}/generate-number", "/api/v1/document-numbering/confirm"] {
        assert!(doc["paths"][path].is_object(), "openapi documents {path}");
    }
    let health = app.client.get(app.url("/health")).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_token_scoped_to_one_project_cannot_number_another() {
    let app = TestApp::spawn().await;
    let p = app.project_id("LCBP3-C1").await;
    let (_, token) = docnum::server::auth::system::create_token(&app.state.db, "c1 only", &[ProjectId(p)], UserId(1), 0).await.unwrap();
    let r = app.client.post(app.url("/api/v1/document-numbering/reserve")).bearer_auth(&token).json(&letter()).send().await.unwrap();
    let s = r.status();
    assert_error(s, &r.json().await.unwrap(), 403, "FORBIDDEN");
    let mut c1 = letter();
    c1["projectCode"] = json!("LCBP3-C1");
    let r = app.client.post(app.url("/api/v1/document-numbering/reserve")).bearer_auth(&token).json(&c1).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test]
async fn concurrent_template_saves_all_land_as_versions_on_one_audit_chain() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let project = app.project_id("LCBP3").await;
    let saves = (0..12).map(|i| {
        let (admin, url) = (admin.clone(), app.url("/api/v1/document-numbering/configs"));
        async move {
            admin
                .post(url)
                .json(&json!({ "projectId": project, "correspondenceTypeId": null, "template": format!("{{ORIGINATOR}}-{{SEQ:{}}}-{{YEAR:B.E.}}", 3 + i % 5), "resetScope": "YEARLY", "reason": format!("บันทึกพร้อมกันครั้งที่ {i}"), "acknowledgeKeyChange": true }))
                .send()
                .await
                .unwrap()
                .status()
        }
    });
    let statuses = futures::future::join_all(saves).await;
    assert!(statuses.iter().all(|s| *s == StatusCode::OK), "{statuses:?}");
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'TEMPLATE_UPDATE'").await, 12);
    assert_eq!(app.count("SELECT MAX(version) FROM numbering_templates WHERE correspondence_type_id = 0").await, 12);
    assert!(docnum::server::audit::verify(&app.state.db).await.unwrap().ok);
}

async fn letter_type(app: &TestApp) -> i64 {
    app.state.reference().get().await.unwrap().correspondence_type(None, Some("LETTER")).unwrap().id.0
}

/// A new version of LCBP3's LETTER template, saved by `admin` (`POST /configs`); the configuration answered.
async fn save_letter_template(app: &TestApp, admin: &reqwest::Client, template: &str) -> Value {
    let (project, t) = (app.project_id("LCBP3").await, letter_type(app).await);
    let r = admin
        .post(app.url("/api/v1/document-numbering/configs"))
        .json(&json!({ "projectId": project, "correspondenceTypeId": t, "template": template, "resetScope": "YEARLY", "reason": "ปรับรูปแบบ" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    r.json().await.unwrap()
}

#[tokio::test]
async fn a_template_is_saved_in_place_and_a_body_naming_another_project_or_type_is_refused() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let project = app.project_id("LCBP3").await;
    let t = letter_type(&app).await;
    let created = save_letter_template(&app, &admin, "{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}").await;
    let id = created["id"].as_i64().expect("a configuration id");
    let url = app.url(&format!("/api/v1/document-numbering/configs/{id}"));
    let body = json!({ "template": "{ORIGINATOR}/{RECIPIENT}/{SEQ:4}/{YEAR:B.E.}", "resetScope": "YEARLY", "reason": "ปรับรูปแบบ" });
    // the project and type are the configuration's: a body that names them (even the same) would move nothing, and says so
    for extra in [json!({ "projectId": project + 1 }), json!({ "correspondenceTypeId": t }), json!({ "projectId": project })] {
        let mut named = body.clone();
        named.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let r = admin.put(&url).json(&named).send().await.unwrap();
        let status = r.status();
        let e: Value = r.json().await.unwrap();
        assert_error(status, &e, 400, "VALIDATION_ERROR");
        let field = extra.as_object().unwrap().keys().next().unwrap().clone();
        assert!(e.to_string().contains(&field), "the answer names {field}: {e}");
    }
    let unchanged: Value = admin.get(&url).send().await.unwrap().json().await.unwrap();
    assert_eq!(unchanged["template"], "{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}");
    let r = admin.put(&url).json(&body).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let saved: Value = r.json().await.unwrap();
    assert_eq!((saved["projectId"].as_i64(), saved["correspondenceTypeId"].as_i64()), (Some(project), Some(t)));
    let (_, n) = app.reserve(&letter()).await;
    assert_eq!(n["documentNumber"], "คคง./สคฉ.3/0001/2568");
}

#[tokio::test]
async fn rollback_restores_an_older_template_and_issued_numbers_stay_as_they_were() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let (_, n1) = app.reserve(&letter()).await;
    let v2 = save_letter_template(&app, &admin, "{ORIGINATOR}/{RECIPIENT}/{SEQ:4}/{YEAR:B.E.}").await;
    let (_, n2) = app.reserve(&letter()).await;
    assert_eq!(n2["documentNumber"], "คคง./สคฉ.3/0002/2568");
    let id = v2["id"].as_i64().unwrap();

    let versions: Value =
        admin.get(app.url(&format!("/api/v1/document-numbering/configs/{id}/versions"))).send().await.unwrap().json().await.unwrap();
    let list: Vec<i64> = versions.as_array().unwrap().iter().map(|v| v["version"].as_i64().unwrap()).collect();
    assert_eq!(list, [2, 1]);
    assert_eq!(versions[0]["previousTemplate"], "{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}");

    let r = admin
        .post(app.url(&format!("/api/v1/document-numbering/configs/{id}/rollback")))
        .json(&json!({ "version": 1, "reason": "กลับไปใช้รูปแบบเดิม" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let restored: Value = r.json().await.unwrap();
    assert_eq!(restored["version"], 3);
    assert_eq!(restored["template"], "{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}");
    let (_, n3) = app.reserve(&letter()).await;
    assert_eq!(n3["documentNumber"], "คคง.-สคฉ.3-0003-2568");
    for (n, text) in [(&n1, "คคง.-สคฉ.3-0001-2568"), (&n2, "คคง./สคฉ.3/0002/2568")] {
        assert_eq!(n["documentNumber"], text);
        assert_eq!(app.count(&format!("SELECT COUNT(*) FROM document_numbers WHERE number = '{text}'")).await, 1, "{text} is still on record");
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'TEMPLATE_ROLLBACK'").await, 1);

    let r = admin
        .post(app.url(&format!("/api/v1/document-numbering/configs/{id}/rollback")))
        .json(&json!({ "version": 99, "reason": "x" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_change_of_counter_key_needs_an_explicit_acknowledgment() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let project = app.project_id("LCBP3").await;
    let t = letter_type(&app).await;
    let body = json!({ "projectId": project, "correspondenceTypeId": t, "template": "{ORIGINATOR}-{SEQ:4}-{YEAR:B.E.}", "resetScope": "YEARLY", "reason": "ไม่แยกตามผู้รับ" });
    let r = admin.post(app.url("/api/v1/document-numbering/configs")).json(&body).send().await.unwrap();
    let s = r.status();
    let b: Value = r.json().await.unwrap();
    assert_error(s, &b, 409, "KEY_CHANGE_NOT_ACKNOWLEDGED");
    assert!(b["message"].as_str().unwrap().contains("ผู้รับ"), "{b}");
    assert_eq!(app.count("SELECT COUNT(*) FROM numbering_template_versions").await, 55, "nothing stored");
    let mut acknowledged = body.clone();
    acknowledged["acknowledgeKeyChange"] = json!(true);
    let r = admin.post(app.url("/api/v1/document-numbering/configs")).json(&acknowledged).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    // a reset-period change is a key change too
    let mut none = acknowledged.clone();
    none["resetScope"] = json!("NONE");
    none["acknowledgeKeyChange"] = json!(false);
    let r = admin.post(app.url("/api/v1/document-numbering/configs")).json(&none).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::CONFLICT);
}

#[tokio::test]
async fn the_audit_log_can_be_searched_paged_and_exported() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    for _ in 0..5 {
        app.reserve(&letter()).await;
    }
    let mut memo = letter();
    memo["correspondenceTypeCode"] = json!("MEMO");
    let (_, m) = app.reserve(&memo).await;
    app.post_json("/api/v1/document-numbering/cancel", &json!({ "token": m["token"] })).await;

    let page: Value =
        admin.get(app.url("/api/v1/document-numbering/logs/audit?operation=RESERVE&pageSize=4&page=1")).send().await.unwrap().json().await.unwrap();
    assert_eq!(page["total"], 6);
    assert_eq!(page["rows"].as_array().unwrap().len(), 4);
    assert_eq!(page["rows"][0]["operation"], "RESERVE");
    let page2: Value =
        admin.get(app.url("/api/v1/document-numbering/logs/audit?operation=RESERVE&pageSize=4&page=2")).send().await.unwrap().json().await.unwrap();
    assert_eq!(page2["rows"].as_array().unwrap().len(), 2);

    let cancels: Value = admin.get(app.url("/api/v1/document-numbering/logs/audit?operation=cancel")).send().await.unwrap().json().await.unwrap();
    assert_eq!(cancels["total"], 1);
    assert_eq!(cancels["rows"][0]["user"], "token:tests");
    let by_number: Value = admin
        .get(app.url("/api/v1/document-numbering/logs/audit"))
        .query(&[("number", "คคง.-สคฉ.3-0003")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(by_number["total"], 1, "{by_number}");

    let r = admin.get(app.url("/api/v1/document-numbering/logs/audit?format=csv&operation=RESERVE")).send().await.unwrap();
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/csv"));
    let csv = r.text().await.unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].contains("document_number"));
    assert_eq!(lines.len(), 7, "header + 6 rows");
    assert!(csv.contains("คคง.-สคฉ.3-0005-2568"));

    let staff = app.user_client("somchai", Role::Staff, &[]).await;
    let r = staff.get(app.url("/api/v1/document-numbering/logs/audit")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = admin.get(app.url("/api/v1/document-numbering/logs/audit?page=abc")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn errors_are_logged_and_can_be_marked_resolved() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let mut bad = letter();
    bad["projectCode"] = json!("NOPE");
    app.reserve(&bad).await;
    // the error log is written off the request path
    let mut listed = Value::Null;
    for _ in 0..50 {
        listed = admin.get(app.url("/api/v1/document-numbering/logs/errors?errorType=VALIDATION_ERROR")).send().await.unwrap().json().await.unwrap();
        if listed["total"].as_i64() == Some(1) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(listed["total"], 1, "{listed}");
    let id = listed["rows"][0]["id"].as_i64().unwrap();
    assert!(listed["rows"][0]["message"].as_str().unwrap().contains("NOPE"));
    let r = admin.post(app.url(&format!("/api/v1/document-numbering/logs/errors/{id}/resolve"))).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let open: Value = admin.get(app.url("/api/v1/document-numbering/logs/errors?unresolvedOnly=true")).send().await.unwrap().json().await.unwrap();
    assert_eq!(open["total"], 0);
    let r = admin.post(app.url(&format!("/api/v1/document-numbering/logs/errors/{id}/resolve"))).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn server_function_bodies_are_bounded_and_refusals_are_4xx() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let import = app.url("/sfn/import_bulk");
    let call = |client: &reqwest::Client, text: String| {
        let body = json!({ "text": text, "format": "csv", "reason": null, "dry_run": true });
        client.post(import.clone()).header("content-type", "application/json").body(body.to_string()).send()
    };

    // over the server-function bound: refused before it is read whole, with the error body
    let r = call(&admin, "a".repeat(docnum::server::http::MAX_SERVER_FN_BODY_BYTES)).await.unwrap();
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let b: Value = r.json().await.unwrap();
    assert_eq!(b["code"], "PAYLOAD_TOO_LARGE");
    assert_eq!(b["message"], "ข้อมูลที่ส่งมามีขนาดใหญ่เกินไป");

    // inside the bound but over the import's own limit: the engine's refusal, as a 413 and in Thai
    let r = call(&admin, "a".repeat(3 * 1024 * 1024)).await.unwrap();
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(r.text().await.unwrap().contains("ข้อมูลที่ส่งมามีขนาดใหญ่เกินไป"));

    // a refusal by role is a 403 with the Thai message, not a 500
    let csv = "projectCode,correspondenceTypeCode,documentNumber,documentId,originatorCode,recipientCode,year,value\n\
               LCBP3,LETTER,คคง.-สคฉ.3-0007-2568,OLD-7,,,,\n";
    let staff = app.user_client("somchai", Role::Staff, &[]).await;
    let r = call(&staff, csv.into()).await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(r.text().await.unwrap().contains("ไม่อนุญาตให้กำหนดเลขที่เอง"));

    // the same call by a super admin works: a dry run that reports the row and writes nothing
    let r = call(&admin, csv.into()).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let report: Value = r.json().await.unwrap();
    assert_eq!((report["okRows"].clone(), report["applied"].clone()), (json!(1), json!(false)), "{report}");
    assert_eq!(app.count("SELECT COUNT(*) FROM counters").await, 0, "nothing was imported");
}

/// On MariaDB the counter workers' connections run with autocommit off (no BEGIN round trip per batch), so a
/// batch that never finished must not leave its transaction for the next batch on that connection to commit.
#[tokio::test]
async fn an_abandoned_counter_transaction_is_rolled_back_not_committed_by_the_next_batch() {
    use sqlx::{Executor, Row};
    let app = TestApp::spawn().await;
    if !use_mysql() {
        return; // SQLite batches open their transaction with BEGIN IMMEDIATE
    }
    let (s, first) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK, "{first}");
    let db = &app.state.db;
    let mut conn = db.counters.acquire().await.unwrap();
    let autocommit: i64 = sqlx::query("SELECT @@autocommit").fetch_one(&mut *conn).await.unwrap().get(0);
    assert_eq!(autocommit, 0, "counter connections open their transaction with their first statement");
    // a batch that stopped half-way (a panic): its statement ran, no COMMIT or ROLLBACK followed
    conn.execute("INSERT INTO audit_chains (chain_key, head_hash, length) VALUES ('abandoned', 'x', 0)").await.unwrap();
    drop(conn);
    for _ in 0..100 {
        if db.counters.num_idle() == db.counters.size() as usize {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // the next batches commit on the pool's connections, that one among them
    for _ in 0..3 {
        let (s, body) = app.reserve(&letter()).await;
        assert_eq!(s, StatusCode::OK, "{body}");
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_chains WHERE chain_key = 'abandoned'").await, 0);
    let main: i64 = sqlx::query("SELECT @@autocommit").fetch_one(&db.pool).await.unwrap().get(0);
    assert_eq!(main, 1, "the main pool keeps autocommit on");
}

#[tokio::test]
async fn a_retired_template_stops_numbering_its_history_stays_and_a_new_save_brings_it_back() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let staff = app.user_client("somchai", Role::Staff, &[]).await;
    let project = app.project_id("LCBP3").await;
    let t = letter_type(&app).await;
    let configs = app.url("/api/v1/document-numbering/configs");
    let save = json!({ "projectId": project, "correspondenceTypeId": t, "template": "{ORIGINATOR}/{RECIPIENT}/{SEQ:4}/{YEAR:B.E.}", "resetScope": "YEARLY", "reason": "ปรับรูปแบบ" });
    let r = admin.post(&configs).json(&save).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let saved: Value = r.json().await.unwrap();
    let id = saved["id"].as_i64().unwrap();
    let (_, n1) = app.reserve(&letter()).await;
    assert_eq!(n1["documentNumber"], "คคง./สคฉ.3/0001/2568");

    let retire = app.url(&format!("/api/v1/document-numbering/configs/{id}/retire"));
    let r = staff.post(&retire).json(&json!({ "reason": "เลิกใช้" })).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = admin.post(&retire).json(&json!({ "reason": "  " })).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r = admin.post(&retire).json(&json!({ "reason": "กลับไปใช้รูปแบบมาตรฐาน" })).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let now: Value = r.json().await.unwrap();
    assert_ne!(now["source"], "PROJECT_TYPE", "the next template of the order applies: {now}");
    assert_eq!(now["template"], "{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}");

    // the next number comes from the template that applies now, on the same counter
    let (_, n2) = app.reserve(&letter()).await;
    assert_eq!(n2["documentNumber"], "คคง.-สคฉ.3-0002-2568");
    // no longer listed as in use; its history and its audit row stay
    let listed: Value = admin.get(format!("{configs}?projectId={project}")).send().await.unwrap().json().await.unwrap();
    assert!(!listed.as_array().unwrap().iter().any(|c| c["id"] == id), "{listed}");
    let versions: Value =
        admin.get(app.url(&format!("/api/v1/document-numbering/configs/{id}/versions"))).send().await.unwrap().json().await.unwrap();
    assert_eq!(versions.as_array().unwrap().len(), 2, "{versions}");
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'TEMPLATE_RETIRED'").await, 1);
    let r = admin.post(&retire).json(&json!({ "reason": "อีกครั้ง" })).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::CONFLICT, "retired once");

    // saving it again brings it back, as its next version
    let r = admin.post(&configs).json(&save).send().await.unwrap();
    let back: Value = r.json().await.unwrap();
    assert_eq!((back["id"].as_i64(), &back["version"]), (Some(id), &json!(3)), "{back}");
    let (_, n3) = app.reserve(&letter()).await;
    assert_eq!(n3["documentNumber"], "คคง./สคฉ.3/0003/2568");
}

#[tokio::test]
async fn the_api_answers_in_thai_unless_the_caller_prefers_english() {
    let app = TestApp::spawn().await;
    let mut unknown = letter();
    unknown["projectCode"] = json!("NOPE");
    let ask = |language: Option<&'static str>| {
        let mut request = app.client.post(app.url("/api/v1/document-numbering/reserve")).bearer_auth(&app.token).json(&unknown);
        if let Some(l) = language {
            request = request.header("accept-language", l);
        }
        async move {
            let r = request.send().await.unwrap();
            let language = r.headers().get("content-language").map(|v| v.to_str().unwrap().to_string());
            (r.status(), language, r.json::<Value>().await.unwrap())
        }
    };
    let thai = |s: &str| s.chars().any(|c| ('\u{0E00}'..='\u{0E7F}').contains(&c));

    let (s, language, th) = ask(None).await;
    assert_eq!((s, language.as_deref()), (StatusCode::NOT_FOUND, Some("th")));
    assert!(th["message"].as_str().unwrap().starts_with("ไม่พบข้อมูล: "), "{th}");

    let (s, language, en) = ask(Some("en-US,en;q=0.9")).await;
    assert_eq!((s, language.as_deref()), (StatusCode::NOT_FOUND, Some("en")));
    let message = en["message"].as_str().unwrap();
    assert!(message.starts_with("Not found: ") && message.contains("NOPE") && !thai(message), "{en}");
    // the same error otherwise: code, name, status
    for field in ["code", "error", "statusCode"] {
        assert_eq!(en[field], th[field], "{field}");
    }

    let (_, language, preferred) = ask(Some("en;q=0.5, th;q=0.9")).await;
    assert_eq!(language.as_deref(), Some("th"));
    assert_eq!(preferred["message"], th["message"]);

    // a body that does not read, refused by the extractor before the handler: its detail in English too
    let r = app
        .client
        .post(app.url("/api/v1/document-numbering/reserve"))
        .bearer_auth(&app.token)
        .header("accept-language", "en")
        .header("content-type", "application/json")
        .body("{\"projectCode\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let body: Value = r.json().await.unwrap();
    let message = body["message"].as_str().unwrap();
    assert!(message.starts_with("The data is not valid: ") && !thai(message), "{body}");
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 0, "nothing changed");
}
