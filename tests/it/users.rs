//! Users, their permissions and API tokens: a project admin sees and revokes only
//! their projects' tokens; a token whose stored scope cannot be read grants nothing; every permission change is a
//! row of the `admin` audit chain, whichever way it was made (REST, CLI); own password change; deactivation locks a
//! user out at once; the published demo password keeps a server on loopback.

use std::process::{Command, Stdio};
use std::time::Duration;

use docnum::contract::{ProjectId, Role, UserId};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

use crate::common::{be2568, TestApp, ADMIN_PASSWORD, STAFF_PASSWORD};
use crate::support::free_port;

fn preview_body(project: &str) -> Value {
    json!({ "projectCode": project, "correspondenceTypeCode": "LETTER", "originatorCode": "คคง.", "recipientCode": "สคฉ.3" })
}

async fn json_of(r: reqwest::Response) -> (StatusCode, Value) {
    let s = r.status();
    (s, r.json().await.unwrap_or(Value::Null))
}

/// A token made by the super admin's session, returning (id, secret).
async fn admin_token(app: &TestApp, admin: &Client, name: &str, project_ids: &[i64]) -> (i64, String) {
    let (s, t) =
        json_of(admin.post(app.url("/api/v1/admin/api-tokens")).json(&json!({ "name": name, "projectIds": project_ids })).send().await.unwrap())
            .await;
    assert_eq!(s, StatusCode::OK, "{t}");
    (t["info"]["id"].as_i64().unwrap(), t["token"].as_str().unwrap().to_string())
}

/// The audit rows of one operation, newest first, as the audit search answers them.
async fn audit_rows(app: &TestApp, admin: &Client, operation: &str) -> Vec<Value> {
    let (s, page) = json_of(
        admin.get(app.url("/api/v1/document-numbering/logs/audit")).query(&[("operation", operation), ("pageSize", "500")]).send().await.unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{page}");
    page["rows"].as_array().unwrap().clone()
}

/// The one row of `operation` about `subject` (a username, token name or project code in its metadata).
async fn audit_row(app: &TestApp, admin: &Client, operation: &str, subject: &str) -> Value {
    let rows = audit_rows(app, admin, operation).await;
    let mine: Vec<&Value> = rows.iter().filter(|r| r["metadata"].as_str().unwrap_or("").contains(&format!("\"{subject}\""))).collect();
    assert_eq!(mine.len(), 1, "one {operation} row about {subject}: {rows:?}");
    mine[0].clone()
}

/// The row says who and when: the acting user, from the loopback address, at the service clock's time.
fn assert_who_and_when(row: &Value, who: &str) {
    assert_eq!(row["user"], who, "{row}");
    assert_eq!(row["status"], "SUCCESS", "{row}");
    let at: chrono::DateTime<chrono::Utc> = row["createdAt"].as_str().unwrap().parse().unwrap();
    assert!(at >= be2568() && at < be2568() + chrono::Duration::hours(1), "{row}");
}

#[tokio::test]
async fn a_project_admin_lists_and_revokes_only_tokens_of_their_projects() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let (lcbp3, c1) = (app.project_id("LCBP3").await, app.project_id("LCBP3-C1").await);
    // the project admin, created through the API
    let (s, u) = json_of(
        admin
            .post(app.url("/api/v1/admin/users"))
            .json(&json!({ "username": "pm-lcbp3", "password": STAFF_PASSWORD, "role": "PROJECT_ADMIN", "adminProjectIds": [lcbp3] }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((s, u["adminProjectIds"].clone()), (StatusCode::OK, json!([lcbp3])), "{u}");
    let (c1_id, c1_secret) = admin_token(&app, &admin, "c1-only", &[c1]).await;
    let (both_id, _) = admin_token(&app, &admin, "lcbp3-and-c1", &[lcbp3, c1]).await;
    let (own_id, _) = admin_token(&app, &admin, "lcbp3-only", &[lcbp3]).await;
    let all_id: i64 = app.count("SELECT id FROM api_tokens WHERE name = 'tests'").await;

    let pm = app.login("pm-lcbp3", STAFF_PASSWORD).await;
    let (s, listed) = json_of(pm.get(app.url("/api/v1/admin/api-tokens")).send().await.unwrap()).await;
    assert_eq!(s, StatusCode::OK);
    let names: Vec<&str> = listed.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["lcbp3-only"], "neither LCBP3-C1's tokens nor all-project tokens");
    // the super admin sees them all
    let (_, all) = json_of(admin.get(app.url("/api/v1/admin/api-tokens")).send().await.unwrap()).await;
    assert_eq!(all.as_array().unwrap().len(), 4);

    for id in [c1_id, both_id, all_id] {
        let (s, body) = json_of(pm.delete(app.url(&format!("/api/v1/admin/api-tokens/{id}"))).send().await.unwrap()).await;
        assert_eq!((s, body["error"].clone()), (StatusCode::FORBIDDEN, json!("FORBIDDEN")), "token {id}: {body}");
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM api_tokens WHERE revoked_at IS NOT NULL").await, 0);
    // the C1 token still works, and so does the super admin's
    let r =
        app.client.post(app.url("/api/v1/document-numbering/preview")).bearer_auth(&c1_secret).json(&preview_body("LCBP3-C1")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let (s, _) = app.post_json("/api/v1/document-numbering/preview", &preview_body("LCBP3")).await;
    assert_eq!(s, StatusCode::OK);
    // nor may they create one for another project, or for all
    for scope in [json!([c1]), json!([])] {
        let (s, _) =
            json_of(pm.post(app.url("/api/v1/admin/api-tokens")).json(&json!({ "name": "x", "projectIds": scope })).send().await.unwrap()).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{scope}");
    }

    // their own project's token they revoke; the audit says who
    let (s, _) = json_of(pm.delete(app.url(&format!("/api/v1/admin/api-tokens/{own_id}"))).send().await.unwrap()).await;
    assert_eq!(s, StatusCode::OK);
    let row = audit_row(&app, &admin, "TOKEN_REVOKED", "lcbp3-only").await;
    assert_who_and_when(&row, "pm-lcbp3");
    assert_eq!((row["oldValue"].clone(), row["newValue"].clone()), (json!("ACTIVE"), json!("REVOKED")));
}

#[tokio::test]
async fn a_token_whose_stored_scope_cannot_be_read_grants_nothing() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let c1 = app.project_id("LCBP3-C1").await;
    let mut secrets = Vec::new();
    for (i, garbage) in ["not json", "{\"projects\":[1]}", "[1,\"x\"]", "null", "\"\""].iter().enumerate() {
        let (_, secret) =
            docnum::server::auth::system::create_token(&app.state.db, &format!("garbled-{i}"), &[ProjectId(c1)], UserId(1), 0).await.unwrap();
        sqlx::query("UPDATE api_tokens SET project_ids = ? WHERE name = ?")
            .bind(*garbage)
            .bind(format!("garbled-{i}"))
            .execute(&app.state.db.writer)
            .await
            .unwrap();
        secrets.push(secret);
    }
    for secret in &secrets {
        for (method, path, body) in [
            ("POST", "/api/v1/document-numbering/preview", Some(preview_body("LCBP3-C1"))),
            ("POST", "/api/v1/document-numbering/reserve", Some(preview_body("LCBP3-C1"))),
            ("POST", "/api/v1/document-numbering/preview", Some(preview_body("LCBP3"))),
            ("GET", "/api/v1/reference/projects", None),
            ("GET", "/api/v1/document-numbering/configs", None),
            ("GET", "/api/v1/auth/me", None),
        ] {
            let mut req = app.client.request(method.parse().unwrap(), app.url(path)).bearer_auth(secret);
            if let Some(b) = body {
                req = req.json(&b);
            }
            let s = req.send().await.unwrap().status();
            assert!(s == StatusCode::UNAUTHORIZED || s == StatusCode::FORBIDDEN, "{method} {path} with a garbled scope: {s}");
        }
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 0);
    // the super admin sees them, marked
    let (_, all) = json_of(admin.get(app.url("/api/v1/admin/api-tokens")).send().await.unwrap()).await;
    let garbled: Vec<&Value> = all.as_array().unwrap().iter().filter(|t| t["name"].as_str().unwrap().starts_with("garbled-")).collect();
    assert_eq!(garbled.len(), 5);
    assert!(garbled.iter().all(|t| t["scopeUnreadable"] == json!(true) && t["projectIds"] == json!([])), "{garbled:?}");
    // a project admin of the project does not
    let pm = app.user_client("pm-c1", Role::ProjectAdmin, &[c1]).await;
    let (_, mine) = json_of(pm.get(app.url("/api/v1/admin/api-tokens")).send().await.unwrap()).await;
    assert_eq!(mine, json!([]));
}

#[tokio::test]
async fn every_permission_change_over_rest_is_its_own_audit_operation_with_who_and_when() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let (lcbp3, c1, c2) = (app.project_id("LCBP3").await, app.project_id("LCBP3-C1").await, app.project_id("LCBP3-C2").await);
    let secret_password = "first-secret-1";
    let (s, u) = json_of(
        admin
            .post(app.url("/api/v1/admin/users"))
            .json(&json!({ "username": "wichai", "displayName": "วิชัย", "password": secret_password, "role": "PROJECT_ADMIN", "adminProjectIds": [lcbp3, c1] }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{u}");
    let id = u["id"].as_i64().unwrap();
    // role and projects: C1 removed, C2 granted, then the role changed
    let (s, u) = json_of(
        admin
            .put(app.url(&format!("/api/v1/admin/users/{id}")))
            .json(&json!({ "role": "PROJECT_ADMIN", "adminProjectIds": [lcbp3, c2] }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((s, u["adminProjectIds"].clone()), (StatusCode::OK, json!([lcbp3, c2])), "{u}");
    let (s, u) = json_of(
        admin
            .put(app.url(&format!("/api/v1/admin/users/{id}")))
            .json(&json!({ "role": "STAFF", "adminProjectIds": [lcbp3, c2] }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((s, u["role"].clone()), (StatusCode::OK, json!("STAFF")), "{u}");
    for action in ["deactivate", "reactivate"] {
        let (s, u) = json_of(admin.post(app.url(&format!("/api/v1/admin/users/{id}/{action}"))).send().await.unwrap()).await;
        assert_eq!((s, u["active"].clone()), (StatusCode::OK, json!(action == "reactivate")), "{u}");
    }
    let set_password = "set-by-admin-2";
    let (s, _) =
        json_of(admin.post(app.url(&format!("/api/v1/admin/users/{id}/password"))).json(&json!({ "password": set_password })).send().await.unwrap())
            .await;
    assert_eq!(s, StatusCode::OK);
    let user = app.login("wichai", set_password).await;
    let own_password = "changed-by-me-3";
    let (s, _) = json_of(
        user.post(app.url("/api/v1/auth/password"))
            .json(&json!({ "currentPassword": set_password, "newPassword": own_password }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let (token_id, token_secret) = admin_token(&app, &admin, "dms-wichai", &[c2]).await;
    let (s, _) = json_of(admin.delete(app.url(&format!("/api/v1/admin/api-tokens/{token_id}"))).send().await.unwrap()).await;
    assert_eq!(s, StatusCode::OK);

    for (op, who, old, new) in [
        ("USER_CREATED", "admin", Value::Null, Value::Null),
        ("ROLE_CHANGED", "admin", json!("PROJECT_ADMIN"), json!("STAFF")),
        ("USER_DEACTIVATED", "admin", json!("ACTIVE"), json!("INACTIVE")),
        ("USER_REACTIVATED", "admin", json!("INACTIVE"), json!("ACTIVE")),
        ("PASSWORD_SET", "admin", Value::Null, Value::Null),
        ("PASSWORD_CHANGED", "wichai", Value::Null, Value::Null),
    ] {
        let row = audit_row(&app, &admin, op, "wichai").await;
        assert_who_and_when(&row, who);
        assert_eq!(row["ipAddress"], "127.0.0.1", "{row}");
        if op != "USER_CREATED" {
            assert_eq!((row["oldValue"].clone(), row["newValue"].clone()), (old, new), "{op}: {row}");
        }
    }
    let created = audit_row(&app, &admin, "USER_CREATED", "wichai").await;
    let value: Value = serde_json::from_str(created["newValue"].as_str().unwrap()).unwrap();
    assert_eq!(value, json!({ "username": "wichai", "displayName": "วิชัย", "role": "PROJECT_ADMIN" }));
    // one row per project right granted or removed
    for (op, code) in [
        ("PROJECT_ADMIN_GRANTED", "LCBP3"),
        ("PROJECT_ADMIN_GRANTED", "LCBP3-C1"),
        ("PROJECT_ADMIN_GRANTED", "LCBP3-C2"),
        ("PROJECT_ADMIN_REMOVED", "LCBP3-C1"),
    ] {
        let row = audit_row(&app, &admin, op, code).await;
        assert_who_and_when(&row, "admin");
        assert!(row["metadata"].as_str().unwrap().contains("\"wichai\""), "{row}");
    }
    assert_eq!(audit_rows(&app, &admin, "PROJECT_ADMIN_REMOVED").await.len(), 1);
    for op in ["TOKEN_CREATED", "TOKEN_REVOKED"] {
        let row = audit_row(&app, &admin, op, "dms-wichai").await;
        assert_who_and_when(&row, "admin");
    }
    // no password, token secret or hash in any row of the admin chain
    let rows: Vec<(Option<String>, Option<String>, Option<String>)> =
        sqlx::query_as("SELECT old_value, new_value, metadata FROM audit_log").fetch_all(&app.state.db.pool).await.unwrap();
    let texts: Vec<String> = rows.into_iter().map(|(a, b, c)| format!("{a:?}{b:?}{c:?}")).collect();
    assert!(texts.len() > 10);
    let (hash,): (String,) =
        sqlx::query_as("SELECT token_hash FROM api_tokens WHERE name = 'dms-wichai'").fetch_one(&app.state.db.pool).await.unwrap();
    for secret in [secret_password, set_password, own_password, &token_secret, &hash, "$argon2"] {
        assert!(texts.iter().all(|t| !t.contains(secret)), "{secret} in the audit");
    }
    let report = docnum::server::audit::verify(&app.state.db).await.unwrap();
    assert!(report.ok, "{report:?}");
}

#[tokio::test]
async fn changing_ones_own_password_needs_the_current_one() {
    let app = TestApp::spawn().await;
    let user = app.user_client("somsri", Role::Staff, &[]).await;
    let change = |current: &str, new: &str| {
        user.post(app.url("/api/v1/auth/password")).json(&json!({ "currentPassword": current, "newPassword": new })).send()
    };
    let (s, body) = json_of(change("wrong-password", "a-new-password").await.unwrap()).await;
    assert_eq!((s, body["error"].clone()), (StatusCode::UNAUTHORIZED, json!("INVALID_CREDENTIALS")), "{body}");
    assert_eq!(body["message"], "รหัสผ่านปัจจุบันไม่ถูกต้อง", "{body}");
    let (s, body) = json_of(change(STAFF_PASSWORD, "short").await.unwrap()).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["message"].as_str().unwrap().contains("อย่างน้อย 8"), "{body}");
    let (s, _) = json_of(change(STAFF_PASSWORD, "a-new-password").await.unwrap()).await;
    assert_eq!(s, StatusCode::OK);

    let login = |password: &str| app.client.post(app.url("/api/v1/auth/login")).json(&json!({ "username": "somsri", "password": password })).send();
    assert_eq!(login(STAFF_PASSWORD).await.unwrap().status(), StatusCode::UNAUTHORIZED, "the old password stops working");
    assert_eq!(login("a-new-password").await.unwrap().status(), StatusCode::OK);
    // an API token has no password to change
    let (s, _) = app.post_json("/api/v1/auth/password", &json!({ "currentPassword": "x", "newPassword": "yyyyyyyy" })).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    // nobody logged in: 401
    let (s, _) = json_of(
        app.client.post(app.url("/api/v1/auth/password")).json(&json!({ "currentPassword": "x", "newPassword": "yyyyyyyy" })).send().await.unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_deactivated_user_is_locked_out_at_once_and_a_reactivated_one_is_back() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let user = app.user_client("somchai", Role::Staff, &[]).await;
    let id: i64 = app.count("SELECT id FROM users WHERE username = 'somchai'").await;
    assert_eq!(user.get(app.url("/api/v1/auth/me")).send().await.unwrap().status(), StatusCode::OK);

    let (s, u) = json_of(admin.post(app.url(&format!("/api/v1/admin/users/{id}/deactivate"))).send().await.unwrap()).await;
    assert_eq!((s, u["active"].clone()), (StatusCode::OK, json!(false)));
    assert_eq!(user.get(app.url("/api/v1/auth/me")).send().await.unwrap().status(), StatusCode::UNAUTHORIZED, "the session stops at once");
    assert_eq!(
        user.post(app.url("/api/v1/document-numbering/reserve")).json(&preview_body("LCBP3")).send().await.unwrap().status(),
        StatusCode::UNAUTHORIZED
    );
    let login = || app.client.post(app.url("/api/v1/auth/login")).json(&json!({ "username": "somchai", "password": STAFF_PASSWORD })).send();
    assert_eq!(login().await.unwrap().status(), StatusCode::UNAUTHORIZED);
    let (_, users) = json_of(admin.get(app.url("/api/v1/admin/users")).send().await.unwrap()).await;
    let listed = users.as_array().unwrap().iter().find(|u| u["username"] == "somchai").unwrap().clone();
    assert_eq!((listed["active"].clone(), listed["role"].clone()), (json!(false), json!("STAFF")));

    let (s, _) = json_of(admin.post(app.url(&format!("/api/v1/admin/users/{id}/reactivate"))).send().await.unwrap()).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(login().await.unwrap().status(), StatusCode::OK);
    assert_eq!(user.get(app.url("/api/v1/auth/me")).send().await.unwrap().status(), StatusCode::OK);

    // a super admin does not lock themself out, nor demote themself
    let admin_id: i64 = app.count("SELECT id FROM users WHERE username = 'admin'").await;
    let (s, body) = json_of(admin.post(app.url(&format!("/api/v1/admin/users/{admin_id}/deactivate"))).send().await.unwrap()).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["message"].as_str().unwrap().contains("ตนเอง"), "{body}");
    let (s, _) =
        json_of(admin.put(app.url(&format!("/api/v1/admin/users/{admin_id}"))).json(&json!({ "role": "STAFF" })).send().await.unwrap()).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    // only super admins administer users
    let staff = app.login("somchai", STAFF_PASSWORD).await;
    for (method, path) in [("GET", "/api/v1/admin/users".to_string()), ("POST", format!("/api/v1/admin/users/{admin_id}/deactivate"))] {
        let s = staff.request(method.parse().unwrap(), app.url(&path)).send().await.unwrap().status();
        assert_eq!(s, StatusCode::FORBIDDEN, "{method} {path}");
    }
    let (s, _) = json_of(admin.post(app.url("/api/v1/admin/users/99999/deactivate")).send().await.unwrap()).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert_eq!(app.count("SELECT COUNT(*) FROM users WHERE active = 1").await, 2);
}

/// Runs the built `docnum` binary with `args` on the test's database; (success, stdout + stderr).
fn docnum(app: &TestApp, args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_docnum"));
    cmd.args(args).env("DATABASE_URL", &app.state.db.url).env("RUST_LOG", "warn");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run docnum");
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[tokio::test]
async fn the_clis_permission_changes_are_audited_as_cli() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let (ok, out) = docnum(&app, args, env);
        assert!(ok, "docnum {args:?}: {out}");
        out
    };
    run(&["create-user", "--username", "cli-pm", "--role", "PROJECT_ADMIN", "--admin-of", "LCBP3"], &[("NEW_USER_PASSWORD", "cli-password-1")]);
    run(&["set-password", "--username", "cli-pm", "--password", "cli-password-2"], &[]);
    run(&["deactivate-user", "--username", "cli-pm"], &[]);
    assert_eq!(
        app.client
            .post(app.url("/api/v1/auth/login"))
            .json(&json!({ "username": "cli-pm", "password": "cli-password-2" }))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::UNAUTHORIZED
    );
    run(&["reactivate-user", "--username", "cli-pm"], &[]);
    app.login("cli-pm", "cli-password-2").await;
    let secret = run(&["create-token", "--name", "cli-token", "--project", "LCBP3"], &[]);
    let r =
        app.client.post(app.url("/api/v1/document-numbering/preview")).bearer_auth(secret.trim()).json(&preview_body("LCBP3")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);

    for op in ["USER_CREATED", "PASSWORD_SET", "USER_DEACTIVATED", "USER_REACTIVATED"] {
        let row = audit_row(&app, &admin, op, "cli-pm").await;
        assert_eq!(row["user"], "cli", "{row}");
        assert!(row["ipAddress"].is_null(), "{row}");
    }
    assert_eq!(audit_row(&app, &admin, "PROJECT_ADMIN_GRANTED", "cli-pm").await["user"], "cli");
    assert_eq!(audit_row(&app, &admin, "TOKEN_CREATED", "cli-token").await["user"], "cli");
    // the first super admin, created at the first start, is audited too
    assert_eq!(audit_row(&app, &admin, "USER_CREATED", "admin").await["user"], "system");

    // the CLI keeps the last active super admin, and says why
    let (ok, out) = docnum(&app, &["deactivate-user", "--username", "admin"], &[]);
    assert!(!ok && out.contains("last active super admin"), "{out}");
    let (ok, out) = docnum(&app, &["set-password", "--username", "nobody", "--password", "whatever-1"], &[]);
    assert!(!ok && out.contains("no user nobody"), "{out}");
    let (ok, out) = docnum(&app, &["set-password", "--username", "cli-pm", "--password", "short"], &[]);
    assert!(!ok && out.contains("at least 8"), "{out}");
    assert_eq!(audit_rows(&app, &admin, "USER_DEACTIVATED").await.len(), 1);
}

/// `docnum serve` on `addr` with the SQLite file `db_url`: Ok(child) once it answers HTTP, Err(its output) if it exits.
async fn serve(db_url: &str, addr: &str, env: &[(&str, &str)]) -> Result<std::process::Child, String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_docnum"));
    cmd.args(["serve", "--addr", addr])
        .env("DATABASE_URL", db_url)
        .env("DEMO_DATA", "false")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("start docnum");
    let port = addr.rsplit(':').next().unwrap();
    let client = Client::new();
    for _ in 0..600 {
        if let Some(_status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            return Err(format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)));
        }
        if client.get(format!("http://127.0.0.1:{port}/health")).send().await.is_ok() {
            return Ok(child);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = child.kill();
    panic!("docnum on {addr} neither answered nor exited");
}

#[tokio::test]
async fn a_server_beyond_loopback_refuses_the_published_demo_password() {
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite://{}", dir.path().join("demo.db").display());
    let demo = [("BOOTSTRAP_ADMIN_PASSWORD", docnum::server::demo::PUBLISHED_DEMO_PASSWORD)];

    let refused = serve(&db_url, &format!("0.0.0.0:{}", free_port()), &demo).await.expect_err("refuses to start on 0.0.0.0");
    assert!(refused.contains("published demo password"), "{refused}");
    assert!(refused.contains("docnum set-password --username admin"), "{refused}");
    assert!(refused.contains("BOOTSTRAP_ADMIN_PASSWORD"), "{refused}");

    // loopback keeps working with it
    let mut child = serve(&db_url, &format!("127.0.0.1:{}", free_port()), &demo).await.expect("starts on 127.0.0.1");
    let _ = child.kill();
    let _ = child.wait();

    // with a password of one's own, 0.0.0.0 is fine
    let out = Command::new(env!("CARGO_BIN_EXE_docnum"))
        .args(["set-password", "--username", "admin", "--password", "my-own-admin-password"])
        .env("DATABASE_URL", &db_url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut child = serve(&db_url, &format!("0.0.0.0:{}", free_port()), &demo).await.expect("starts on 0.0.0.0 with another password");
    let _ = child.kill();
    let _ = child.wait();
}
