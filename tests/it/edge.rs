//! The network edge (docs/rules/api.md#callers-and-authentication, `server::edge`): cookie-authenticated state changes only from the service's own
//! origin (REST, server functions, login), server functions take JSON only, the security headers of every
//! response, and the client address behind trusted proxies (audit rows, per-IP limits).

use docnum::contract::Role;
use docnum::server::auth::rate_limit::RateLimits;
use docnum::server::config::parse_trusted_proxy;
use reqwest::header::{CONTENT_SECURITY_POLICY, ORIGIN, SET_COOKIE};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};
use sqlx::Row;

use crate::common::*;

const FOREIGN: &str = "https://evil.example";

async fn numbers(app: &TestApp) -> i64 {
    app.count("SELECT COUNT(*) FROM document_numbers").await
}

async fn template_versions(app: &TestApp) -> i64 {
    app.count("SELECT COUNT(*) FROM numbering_template_versions").await
}

async fn error_of(r: reqwest::Response) -> (StatusCode, Value) {
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// The `ip_address` of the audit row that issued `number`.
async fn audit_ip(app: &TestApp, number: &str) -> Option<String> {
    sqlx::query("SELECT ip_address FROM audit_log WHERE document_number = ?")
        .bind(number)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap()
        .get::<Option<String>, _>(0)
}

fn save_template(project: i64) -> Value {
    json!({ "projectId": project, "correspondenceTypeId": null, "template": "{ORIGINATOR}-{RECIPIENT}-{SEQ:5}-{YEAR:B.E.}", "resetScope": "YEARLY", "reason": "ทดสอบ" })
}

#[tokio::test]
async fn a_cookie_post_from_a_foreign_origin_is_refused_on_rest_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let project = app.project_id("LCBP3").await;
    let reserve = app.url("/api/v1/document-numbering/reserve");
    let configs = app.url("/api/v1/document-numbering/configs");
    let versions = template_versions(&app).await;

    let (s, b) = error_of(admin.post(&reserve).header(ORIGIN, FOREIGN).json(&letter()).send().await.unwrap()).await;
    assert_error(s, &b, 403, "FORBIDDEN");
    assert_eq!(b["message"], "คำขอนี้ไม่ได้มาจากหน้าเว็บของระบบ จึงถูกปฏิเสธ");
    let (s, b) = error_of(admin.post(&configs).header(ORIGIN, FOREIGN).json(&save_template(project)).send().await.unwrap()).await;
    assert_error(s, &b, 403, "FORBIDDEN");
    // `null` (a sandboxed frame) and a same-site sibling are not the service either
    let r = admin.post(&reserve).header(ORIGIN, "null").json(&letter()).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = admin.post(&reserve).header(ORIGIN, app.base.replace("127.0.0.1", "localhost")).json(&letter()).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_eq!((numbers(&app).await, template_versions(&app).await), (0, versions), "nothing changed");

    // the same requests from the app's own origin work
    let r = admin.post(&reserve).json(&letter()).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = admin.post(&configs).json(&save_template(project)).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!((numbers(&app).await, template_versions(&app).await), (1, versions + 1));
}

#[tokio::test]
async fn a_cookie_post_with_neither_origin_nor_fetch_metadata_is_refused_but_sec_fetch_site_same_origin_passes() {
    let app = TestApp::spawn().await;
    // a cookie client that sends no Origin (not a browser): it may log in (no cookie yet)...
    let bare = Client::builder().cookie_store(true).build().unwrap();
    let r = bare.post(app.url("/api/v1/auth/login")).json(&json!({ "username": "admin", "password": ADMIN_PASSWORD })).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    // ...but not change anything with the cookie it got
    let reserve = app.url("/api/v1/document-numbering/reserve");
    let (s, b) = error_of(bare.post(&reserve).json(&letter()).send().await.unwrap()).await;
    assert_error(s, &b, 403, "FORBIDDEN");
    let r = bare.post(&reserve).header("sec-fetch-site", "cross-site").json(&letter()).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = bare.post(&reserve).header("sec-fetch-site", "same-site").json(&letter()).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_eq!(numbers(&app).await, 0);
    // reads are not state changes
    let r = bare.get(app.url("/api/v1/auth/me")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    // what a browser sends without Origin
    let r = bare.post(&reserve).header("sec-fetch-site", "same-origin").json(&letter()).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(numbers(&app).await, 1);
}

#[tokio::test]
async fn a_bearer_token_post_needs_no_origin() {
    let app = TestApp::spawn().await;
    let (s, b) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    // a token is not a cookie a foreign page can ride on: its Origin does not matter
    let r = app
        .client
        .post(app.url("/api/v1/document-numbering/reserve"))
        .bearer_auth(&app.token)
        .header(ORIGIN, FOREIGN)
        .json(&letter())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(numbers(&app).await, 2);
}

#[tokio::test]
async fn server_functions_refuse_a_foreign_origin_and_bodies_that_are_not_json() {
    let app = TestApp::spawn().await;
    let browser = app.login("admin", ADMIN_PASSWORD).await;
    let url = app.url("/sfn/reserve_number");
    let body = json!({ "request": letter() });

    let (s, b) = error_of(browser.post(&url).header(ORIGIN, FOREIGN).json(&body).send().await.unwrap()).await;
    assert_error(s, &b, 403, "FORBIDDEN");
    // a form post (what a cross-site <form> can send), from the own origin even: 415
    let form = format!("request={}", letter());
    let r = browser.post(&url).header("content-type", "application/x-www-form-urlencoded").body(form).send().await.unwrap();
    let (s, b) = error_of(r).await;
    assert_error(s, &b, 415, "UNSUPPORTED_MEDIA_TYPE");
    let r = browser.post(&url).header("content-type", "text/plain").body(body.to_string()).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(numbers(&app).await, 0, "nothing changed");

    let r = browser.post(&url).json(&body).send().await.unwrap();
    let (s, b) = error_of(r).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert!(b["documentNumber"].as_str().is_some_and(|n| !n.is_empty()), "{b}");
    assert_eq!(numbers(&app).await, 1);
}

#[tokio::test]
async fn a_server_function_answers_in_the_language_of_the_page() {
    let app = TestApp::spawn().await;
    let browser = app.login("admin", ADMIN_PASSWORD).await;
    let mut unknown = letter();
    unknown["projectCode"] = json!("NOPE");
    let thai = |s: &str| s.chars().any(|c| ('\u{0E00}'..='\u{0E7F}').contains(&c));
    let refused = || async {
        let r = browser.post(app.url("/sfn/reserve_number")).json(&json!({ "request": unknown })).send().await.unwrap();
        let (s, b) = error_of(r).await;
        assert_eq!((s, &b["code"]), (StatusCode::NOT_FOUND, &json!("NOT_FOUND")), "{b}");
        b["message"].as_str().unwrap().to_string()
    };

    let th = refused().await;
    assert!(th.starts_with("ไม่พบข้อมูล: ") && th.contains("NOPE"), "{th}");
    // the page's language is the cookie its switch sets
    let r = browser.post(app.url("/forms/lang")).form(&[("lang", "en"), ("back", "/")]).send().await.unwrap();
    assert!(r.status().is_success(), "the switch leads back to the page: {}", r.status());
    let en = refused().await;
    assert!(en.starts_with("Not found: ") && en.contains("NOPE") && !thai(&en), "{en}");
    assert_eq!(numbers(&app).await, 0, "nothing changed");
}

#[tokio::test]
async fn login_from_a_foreign_origin_is_refused_and_sets_no_cookie() {
    let app = TestApp::spawn().await;
    let credentials = [("username", "admin"), ("password", ADMIN_PASSWORD)];
    let no_redirects = || Client::builder().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap();
    for (path, as_form) in [("/api/v1/auth/login", false), ("/forms/login", true)] {
        let victim = no_redirects();
        let request = victim.post(app.url(path)).header(ORIGIN, FOREIGN);
        let request = if as_form { request.form(&credentials) } else { request.json(&json!({ "username": "admin", "password": ADMIN_PASSWORD })) };
        let r = request.send().await.unwrap();
        assert!(r.headers().get(SET_COOKIE).is_none(), "{path}: no session cookie");
        let (s, b) = error_of(r).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        let r = victim.get(app.url("/api/v1/auth/me")).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{path}: not logged in");
    }
    // the login page's own form works
    let browser = no_redirects();
    let r = browser.post(app.url("/forms/login")).header(ORIGIN, app.base.as_str()).form(&credentials).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()[reqwest::header::LOCATION], "/");
    assert_eq!(browser.get(app.url("/api/v1/auth/me")).send().await.unwrap().status(), StatusCode::OK);
}

/// The nonce of a page's policy, checked against the scripts of the page.
fn nonce_of(csp: &str) -> &str {
    let start = csp.find("'nonce-").expect("a nonce in the policy") + "'nonce-".len();
    &csp[start..start + csp[start..].find('\'').unwrap()]
}

#[tokio::test]
async fn every_page_carries_the_csp_with_its_nonce_and_the_frame_sniff_and_referrer_headers() {
    let app = TestApp::spawn().await;
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let mut nonces = Vec::new();
    for path in ["/", "/login", "/audit", "/templates", "/counters", "/errors", "/no-such-page"] {
        for client in [&app.client, &admin] {
            let r = client.get(app.url(path)).send().await.unwrap();
            let h = r.headers().clone();
            let csp = h.get(CONTENT_SECURITY_POLICY).unwrap_or_else(|| panic!("{path}: CSP")).to_str().unwrap().to_string();
            assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
            assert!(csp.contains("default-src 'self'") && csp.contains("object-src 'none'"), "{path}: {csp}");
            assert!(!csp.contains("unsafe-inline") && !csp.contains("'unsafe-eval'"), "{path}: {csp}");
            assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
            assert_eq!(h["x-frame-options"], "DENY", "{path}");
            assert_eq!(h["referrer-policy"], "same-origin", "{path}");
            assert!(h.get("strict-transport-security").is_none(), "{path}: no HSTS over plain HTTP");
            let nonce = nonce_of(&csp).to_string();
            let html = r.text().await.unwrap();
            assert!(html.contains(&format!("nonce=\"{nonce}\"")), "{path}: the hydration script carries the policy's nonce");
            for tag in html.split("<script").skip(1).map(|rest| &rest[..rest.find('>').unwrap_or(rest.len())]) {
                assert!(tag.contains(&format!("nonce=\"{nonce}\"")), "{path}: every inline script carries the nonce: <script{tag}>");
            }
            nonces.push(nonce);
        }
    }
    let distinct: std::collections::HashSet<_> = nonces.iter().collect();
    assert_eq!(distinct.len(), nonces.len(), "a fresh nonce per response");

    // the API: JSON is never a document
    let r = admin.get(app.url("/api/v1/auth/me")).send().await.unwrap();
    assert_eq!(r.headers()[CONTENT_SECURITY_POLICY], docnum::server::edge::API_CSP);
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    // refusals at the edge carry them too
    let r = admin.post(app.url("/api/v1/document-numbering/reserve")).header(ORIGIN, FOREIGN).json(&letter()).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_eq!(r.headers()["x-frame-options"], "DENY");
}

/// The `Set-Cookie` of a login over `client`'s request, and whether the response had HSTS.
async fn login_cookie(app: &TestApp, headers: &[(&str, String)]) -> (String, bool) {
    let mut req = app.client.post(app.url("/api/v1/auth/login")).json(&json!({ "username": "admin", "password": ADMIN_PASSWORD }));
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    let r = req.send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let hsts = r.headers().get("strict-transport-security").map(|v| v.to_str().unwrap().to_string());
    let cookie = r.headers().get(SET_COOKIE).expect("session cookie").to_str().unwrap().to_string();
    assert!(cookie.starts_with("docnum_session="), "{cookie}");
    (cookie, hsts.is_some_and(|v| v.starts_with("max-age=")))
}

fn is_secure(cookie: &str) -> bool {
    cookie.split(';').skip(1).any(|a| a.trim().eq_ignore_ascii_case("secure"))
}

#[tokio::test]
async fn over_https_responses_carry_hsts_and_the_cookie_is_secure() {
    // SECURE_COOKIES: the operator says the service is reached over HTTPS
    let app = TestApp::spawn_with(Options { secure_cookies: true, ..Options::default() }).await;
    let (cookie, hsts) = login_cookie(&app, &[]).await;
    assert!(is_secure(&cookie) && hsts, "{cookie}");
    let r = app.client.get(app.url("/login")).send().await.unwrap();
    assert!(r.headers().get("strict-transport-security").is_some());

    // behind a trusted TLS-terminating proxy: X-Forwarded-Proto decides, per request
    let proxied = TestApp::spawn_with(Options { trusted_proxies: vec![parse_trusted_proxy("127.0.0.0/8").unwrap()], ..Options::default() }).await;
    let https = [("x-forwarded-proto", "https".to_string())];
    let (cookie, hsts) = login_cookie(&proxied, &https).await;
    assert!(is_secure(&cookie) && hsts, "{cookie}");
    let (cookie, hsts) = login_cookie(&proxied, &[]).await;
    assert!(!is_secure(&cookie) && !hsts, "plain HTTP: {cookie}");
    // the browser's origin behind that proxy is https://…; http://… is another origin
    let https_origin = [("x-forwarded-proto", "https".to_string()), ("origin", proxied.base.replace("http://", "https://"))];
    login_cookie(&proxied, &https_origin).await;
    let r = proxied
        .client
        .post(proxied.url("/api/v1/auth/login"))
        .header("x-forwarded-proto", "https")
        .header(ORIGIN, &proxied.base)
        .json(&json!({ "username": "admin", "password": ADMIN_PASSWORD }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);

    // from a peer that is not a trusted proxy the header means nothing
    let plain = TestApp::spawn().await;
    let (cookie, hsts) = login_cookie(&plain, &https).await;
    assert!(!is_secure(&cookie) && !hsts, "{cookie}");
}

async fn reserve_from(app: &TestApp, forwarded_for: Option<&str>) -> String {
    let mut req = app.client.post(app.url("/api/v1/document-numbering/reserve")).bearer_auth(&app.token).json(&letter());
    if let Some(xff) = forwarded_for {
        req = req.header("x-forwarded-for", xff);
    }
    let r = req.send().await.unwrap();
    let (s, b) = error_of(r).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    b["documentNumber"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn x_forwarded_for_is_the_audited_client_only_from_a_trusted_proxy() {
    let trusted = TestApp::spawn_with(Options { trusted_proxies: vec![parse_trusted_proxy("127.0.0.0/8").unwrap()], ..Options::default() }).await;
    let n = reserve_from(&trusted, Some("203.0.113.9")).await;
    assert_eq!(audit_ip(&trusted, &n).await.as_deref(), Some("203.0.113.9"));
    // a client's own X-Forwarded-For in front of the proxy's entry is not believed
    let n = reserve_from(&trusted, Some("1.2.3.4, 198.51.100.20")).await;
    assert_eq!(audit_ip(&trusted, &n).await.as_deref(), Some("198.51.100.20"));
    let n = reserve_from(&trusted, None).await;
    assert_eq!(audit_ip(&trusted, &n).await.as_deref(), Some("127.0.0.1"));

    let untrusted = TestApp::spawn().await;
    let n = reserve_from(&untrusted, Some("203.0.113.9")).await;
    assert_eq!(audit_ip(&untrusted, &n).await.as_deref(), Some("127.0.0.1"), "the header of an untrusted peer is ignored");
}

#[tokio::test]
async fn the_per_ip_limit_counts_each_forwarded_client_on_its_own() {
    let limits = RateLimits { per_ip_per_min: 2, ..RateLimits::off() };
    let app =
        TestApp::spawn_with(Options { limits, trusted_proxies: vec![parse_trusted_proxy("127.0.0.1/32").unwrap()], ..Options::default() }).await;
    let staff = app.user_client("somchai", Role::Staff, &[]).await;
    let reserve = |xff: &'static str| staff.post(app.url("/api/v1/document-numbering/reserve")).header("x-forwarded-for", xff).json(&letter()).send();
    for _ in 0..2 {
        assert_eq!(reserve("203.0.113.9").await.unwrap().status(), StatusCode::OK);
    }
    let (s, b) = error_of(reserve("203.0.113.9").await.unwrap()).await;
    assert_error(s, &b, 429, "RATE_LIMITED");
    // another client behind the same proxy has a bucket of its own
    for _ in 0..2 {
        assert_eq!(reserve("203.0.113.10").await.unwrap().status(), StatusCode::OK);
    }
    assert_eq!(reserve("203.0.113.10").await.unwrap().status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(numbers(&app).await, 4);
}
