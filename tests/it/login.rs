//! Login throttling, the bound on Argon2, and the record of logins (docs/rules/api.md#callers-and-authentication): failures per
//! username and per client address lead to 429 with `Retry-After` and growing waits (the service clock is moved,
//! nobody sleeps); a success clears the username's count; the server-function login takes the same path; every
//! attempt is a row super admins (only) read, except repeated refusals during one wait (the first is); 200 parallel logins leave a server process's peak memory bounded by
//! the Argon2 permits, not by the number of requests.

use std::time::Duration;

use docnum::contract::Role;
use docnum::server::auth::throttle::LoginThrottleConfig;
use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER, USER_AGENT};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

use crate::common::{assert_error, Options, TestApp, ADMIN_PASSWORD, STAFF_PASSWORD};
use crate::support::{DocnumServer, RedisServer};

const AGENT: &str = "login-test-agent/1.0 (it; login.rs)";
const ATTEMPTS: &str = "/api/v1/admin/login-attempts";

/// A client without cookies that names itself `AGENT` and, behind a trusted proxy, comes from `forwarded_for`.
fn client_from(forwarded_for: Option<&str>) -> Client {
    let mut headers = HeaderMap::new();
    headers.insert(USER_AGENT, HeaderValue::from_static(AGENT));
    if let Some(ip) = forwarded_for {
        headers.insert("x-forwarded-for", ip.parse().unwrap());
    }
    Client::builder().default_headers(headers).build().unwrap()
}

struct Answer {
    status: StatusCode,
    retry_after: Option<u64>,
    body: Value,
}

async fn try_login(app: &TestApp, client: &Client, username: &str, password: &str) -> Answer {
    let r = client.post(app.url("/api/v1/auth/login")).json(&json!({ "username": username, "password": password })).send().await.unwrap();
    let status = r.status();
    let retry_after = r.headers().get(RETRY_AFTER).map(|v| v.to_str().unwrap().parse::<u64>().expect("Retry-After in seconds"));
    Answer { status, retry_after, body: r.json().await.unwrap_or(Value::Null) }
}

/// The 429 of a throttled login: `Retry-After` (seconds) equal to the body's `retryAfter`, the error body, a Thai message.
fn assert_throttled(a: &Answer) -> u64 {
    assert_error(a.status, &a.body, 429, "RATE_LIMITED");
    let secs = a.retry_after.expect("Retry-After header");
    assert!((1..=900).contains(&secs), "{secs}");
    assert_eq!(a.body["retryAfter"].as_u64(), Some(secs), "{}", a.body);
    assert!(a.body["message"].as_str().unwrap().contains("เข้าสู่ระบบไม่สำเร็จหลายครั้งเกินไป"), "{}", a.body);
    secs
}

async fn attempts_of(app: &TestApp, admin: &Client, query: &[(&str, &str)]) -> (StatusCode, Value) {
    let r = admin.get(app.url(ATTEMPTS)).query(query).send().await.unwrap();
    let s = r.status();
    (s, r.json().await.unwrap_or(Value::Null))
}

fn outcomes(page: &Value) -> Vec<String> {
    page["rows"].as_array().unwrap().iter().map(|r| r["outcome"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn forty_wrong_passwords_are_throttled_and_the_right_one_works_after_the_wait() {
    let app = TestApp::spawn().await;
    let somying = docnum::server::auth::system::create_user(&app.state.db, "somying", "สมหญิง", STAFF_PASSWORD, Role::Staff).await.unwrap();
    let client = client_from(None);

    let mut answers = Vec::new();
    for _ in 0..40 {
        answers.push(try_login(&app, &client, "somying", "not-her-password").await);
    }
    let statuses: Vec<u16> = answers.iter().map(|a| a.status.as_u16()).collect();
    assert_eq!(&statuses[..5], &[401; 5], "five failures are answered as failures: {statuses:?}");
    let first_429 = statuses.iter().position(|s| *s == 429).expect("throttled at some point");
    assert!(first_429 < 9, "a 429 before the 10th attempt: {statuses:?}");
    for a in &answers {
        match a.status.as_u16() {
            401 => assert_error(a.status, &a.body, 401, "INVALID_CREDENTIALS"),
            _ => {
                assert_throttled(a);
            }
        }
    }
    let failures = statuses.iter().filter(|s| **s == 401).count();
    let throttled = statuses.iter().filter(|s| **s == 429).count();
    assert!(throttled >= 30, "while the waits last, attempts are refused without being checked: {statuses:?}");

    // while throttled even the right password is refused (and not checked)
    let right = try_login(&app, &client, "somying", STAFF_PASSWORD).await;
    assert_throttled(&right);
    // each failure past the threshold begins a wait; the refusals of one wait are a run of 429s, and the record
    // keeps the first of each run
    let mut all = statuses.clone();
    all.push(right.status.as_u16());
    let waits_refused = (0..all.len()).filter(|&i| all[i] == 429 && (i == 0 || all[i - 1] != 429)).count();
    assert!(waits_refused < throttled / 3, "many refusals per wait: {statuses:?}");

    // the longest possible wait is 15 minutes; the service clock moves past it
    app.clock.advance(chrono::Duration::minutes(16));
    let ok = try_login(&app, &client, "somying", STAFF_PASSWORD).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    assert_eq!(ok.body["username"], "somying");
    // the success cleared the username's count: four more failures are plain failures again
    for _ in 0..4 {
        assert_eq!(try_login(&app, &client, "somying", "not-her-password").await.status, StatusCode::UNAUTHORIZED);
    }

    // the record, as a super admin reads it
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let (s, page) = attempts_of(&app, &admin, &[("username", "somying"), ("pageSize", "500")]).await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert_eq!(page["total"], json!(failures + waits_refused + 1 + 4), "{page}");
    let rows = page["rows"].as_array().unwrap();
    let seen = outcomes(&page);
    assert_eq!(seen.iter().filter(|o| *o == "WRONG_PASSWORD").count(), failures + 4, "{seen:?}");
    assert_eq!(seen.iter().filter(|o| *o == "THROTTLED").count(), waits_refused, "{seen:?}");
    assert_eq!(seen.iter().filter(|o| *o == "OK").count(), 1, "{seen:?}");
    // newest first: the four failures after the success, then the success
    assert_eq!(&seen[..5], &["WRONG_PASSWORD", "WRONG_PASSWORD", "WRONG_PASSWORD", "WRONG_PASSWORD", "OK"]);
    let success = &rows[4];
    assert_eq!(success["userId"], json!(somying), "{success}");
    assert_eq!(success["ipAddress"], "127.0.0.1", "{success}");
    assert_eq!(success["userAgent"], AGENT, "{success}");
    let at: chrono::DateTime<chrono::Utc> = success["at"].as_str().unwrap().parse().unwrap();
    assert!(at >= crate::common::be2568() + chrono::Duration::minutes(16), "the service clock's time: {success}");
    for r in rows {
        assert_eq!(
            (r["ipAddress"].as_str(), r["userAgent"].as_str(), r["userId"].as_i64()),
            (Some("127.0.0.1"), Some(AGENT), Some(somying.0)),
            "{r}"
        );
    }
    // filters: an outcome, and an outcome that does not exist
    let (s, wrong) = attempts_of(&app, &admin, &[("username", "somying"), ("outcome", "THROTTLED")]).await;
    assert_eq!((s, wrong["total"].as_u64()), (StatusCode::OK, Some(waits_refused as u64)), "{wrong}");
    let (s, body) = attempts_of(&app, &admin, &[("outcome", "MAYBE")]).await;
    assert_error(s, &body, 400, "VALIDATION_ERROR");
    // the admin's own login is there too
    let (_, mine) = attempts_of(&app, &admin, &[("username", "admin"), ("outcome", "OK")]).await;
    assert_eq!(mine["total"], 1, "{mine}");
}

#[tokio::test]
async fn only_super_admins_read_the_login_attempts_and_far_pages_answer_without_a_panic() {
    let app = TestApp::spawn().await;
    let lcbp3 = app.project_id("LCBP3").await;
    let staff = app.user_client("staff-reader", Role::Staff, &[]).await;
    let padmin = app.user_client("padmin-reader", Role::ProjectAdmin, &[lcbp3]).await;
    for (who, client) in [("staff", &staff), ("project admin", &padmin)] {
        let (s, body) = attempts_of(&app, client, &[]).await;
        assert_error(s, &body, 403, "FORBIDDEN");
        assert!(body.get("rows").is_none(), "{who}: {body}");
    }
    // an API token is no super admin either, even the super admin's
    let r = app.client.get(app.url(ATTEMPTS)).bearer_auth(&app.token).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    // nobody logged in
    assert_eq!(client_from(None).get(app.url(ATTEMPTS)).send().await.unwrap().status(), StatusCode::UNAUTHORIZED);
    // the server function refuses as well
    let list_fn = <docnum::app::api::ListLoginAttempts as leptos::server_fn::ServerFn>::PATH;
    let r = staff.post(app.url(list_fn)).json(&json!({ "query": {} })).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);

    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let (s, page) = attempts_of(&app, &admin, &[]).await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert_eq!(page["total"], 3, "three logins so far: {page}");
    let r = admin.post(app.url(list_fn)).json(&json!({ "query": { "outcome": "OK" } })).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.json::<Value>().await.unwrap()["total"], 3);
    // pages past the end, up to the last page served: a valid empty page, as the audit search answers; beyond it
    // and numbers that do not fit a page number: 400 with the error body; never a 500
    for (page_no, size) in [("999999", "50"), ("1000000", "500"), ("1000000", "4294967295")] {
        let (s, body) = attempts_of(&app, &admin, &[("page", page_no), ("pageSize", size)]).await;
        assert_eq!(s, StatusCode::OK, "page {page_no}: {body}");
        assert_eq!(body["rows"], json!([]), "{body}");
        assert_eq!(body["total"], 3, "{body}");
    }
    for query in ["page=2147483648", "page=4294967295", "page=4294967296", "page=-1", "pageSize=99999999999999999999", "page=abc"] {
        let r = admin.get(app.url(&format!("{ATTEMPTS}?{query}"))).send().await.unwrap();
        let s = r.status();
        let body: Value = r.json().await.unwrap();
        assert_error(s, &body, 400, "VALIDATION_ERROR");
    }
    let long = "x".repeat(101);
    let (s, body) = attempts_of(&app, &admin, &[("username", long.as_str())]).await;
    assert_error(s, &body, 400, "VALIDATION_ERROR");
}

#[tokio::test]
async fn an_address_is_throttled_across_usernames_and_another_address_is_not() {
    let app = TestApp::spawn_with(Options {
        trusted_proxies: vec!["127.0.0.1/32".parse().unwrap()],
        login_throttle: LoginThrottleConfig { per_address_failures: 3, ..LoginThrottleConfig::default() },
        ..Options::default()
    })
    .await;
    app.user_client("manee", Role::Staff, &[]).await;
    let guesser = client_from(Some("198.51.100.7"));
    let neighbour = client_from(Some("198.51.100.8"));
    // three failures, each against another username (no username reaches its own threshold of 5)
    for name in ["nobody-1", "nobody-2", "manee"] {
        let a = try_login(&app, &guesser, name, "guess-password").await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{}", a.body);
    }
    // the address must wait now, whatever the username, even a right password
    for name in ["nobody-4", "manee"] {
        let a = try_login(&app, &guesser, name, STAFF_PASSWORD).await;
        assert_throttled(&a);
        assert_eq!(a.body["detail"], "rate limited (login-address)", "{}", a.body);
    }
    // another address is not throttled: its wrong password is a failure, its right one a login
    assert_eq!(try_login(&app, &neighbour, "nobody-4", "guess-password").await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(try_login(&app, &neighbour, "manee", STAFF_PASSWORD).await.status, StatusCode::OK);
    // the wait is 1 s after the third failure, 2 s after a fourth
    app.clock.advance(chrono::Duration::milliseconds(1100));
    assert_eq!(try_login(&app, &guesser, "nobody-5", "guess-password").await.status, StatusCode::UNAUTHORIZED);
    let a = try_login(&app, &guesser, "nobody-6", "guess-password").await;
    assert_eq!(assert_throttled(&a), 2);

    // the record names the forwarded client, not the proxy
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let (_, page) = attempts_of(&app, &admin, &[("username", "nobody-4"), ("pageSize", "10")]).await;
    let rows = page["rows"].as_array().unwrap();
    let addresses: Vec<(&str, &str)> = rows.iter().map(|r| (r["ipAddress"].as_str().unwrap(), r["outcome"].as_str().unwrap())).collect();
    assert_eq!(addresses, vec![("198.51.100.8", "UNKNOWN_USER"), ("198.51.100.7", "THROTTLED")]);
    assert!(rows.iter().all(|r| r["userId"].is_null()), "no user of that name: {page}");
}

#[tokio::test]
async fn the_login_form_is_throttled_the_same_way() {
    let app = TestApp::spawn().await;
    app.user_client("chai", Role::Staff, &[]).await;
    let mut headers = HeaderMap::new();
    headers.insert(reqwest::header::ORIGIN, HeaderValue::from_str(&app.base).unwrap());
    let browser = Client::builder().cookie_store(true).default_headers(headers).redirect(reqwest::redirect::Policy::none()).build().unwrap();
    // a post of the login form: where it sends the browser
    let call = |password: &str| browser.post(app.url("/forms/login")).form(&[("username", "chai"), ("password", password)]).send();
    let location = |r: &reqwest::Response| r.headers().get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    for _ in 0..5 {
        let r = call("wrong-password").await.unwrap();
        assert_eq!((r.status(), location(&r)), (StatusCode::SEE_OTHER, "/login".to_string()));
    }
    let r = call(STAFF_PASSWORD).await.unwrap();
    assert_eq!((r.status(), location(&r)), (StatusCode::SEE_OTHER, "/login".to_string()), "the right password waits too");
    // the login page says why, once
    let page = browser.get(app.url("/login")).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("เข้าสู่ระบบไม่สำเร็จหลายครั้งเกินไป"), "the refusal on the login page");
    let page = browser.get(app.url("/login")).send().await.unwrap().text().await.unwrap();
    assert!(!page.contains("เข้าสู่ระบบไม่สำเร็จหลายครั้งเกินไป"), "said once");
    // the REST login shares the count
    assert_throttled(&try_login(&app, &client_from(None), "chai", STAFF_PASSWORD).await);
    app.clock.advance(chrono::Duration::seconds(2));
    let r = call(STAFF_PASSWORD).await.unwrap();
    assert_eq!((r.status(), location(&r)), (StatusCode::SEE_OTHER, "/".to_string()));
    let (n, throttled): (i64, i64) = (
        app.count("SELECT COUNT(*) FROM login_attempts WHERE username = 'chai'").await,
        app.count("SELECT COUNT(*) FROM login_attempts WHERE username = 'chai' AND outcome = 'THROTTLED'").await,
    );
    // user_client's own login, five failures, the first of two refusals in one wait, the login
    assert_eq!((n, throttled), (1 + 5 + 1 + 1, 1));
}

#[tokio::test]
async fn knocking_on_during_a_wait_adds_one_row_to_the_record_and_every_knock_to_the_metric() {
    let app = TestApp::spawn_with(Options {
        login_throttle: LoginThrottleConfig { first_wait: Duration::from_secs(600), ..LoginThrottleConfig::default() },
        ..Options::default()
    })
    .await;
    app.user_client("dao", Role::Staff, &[]).await;
    let client = client_from(None);
    for _ in 0..5 {
        assert_eq!(try_login(&app, &client, "dao", "wrong-password").await.status, StatusCode::UNAUTHORIZED);
    }
    let counted_before = throttled_metric(&app).await;
    for _ in 0..60 {
        let wait = assert_throttled(&try_login(&app, &client, "dao", STAFF_PASSWORD).await);
        assert!(wait > 500, "{wait}");
    }
    // the metric is the process's (other tests run beside this one): at least these 60
    assert!(throttled_metric(&app).await - counted_before >= 60);
    assert_eq!(outcome_rows(&app, "dao").await, (5, 1));
    // past the wait a failure begins a longer one, and its first refusal is a row again
    app.clock.advance(chrono::Duration::seconds(601));
    assert_eq!(try_login(&app, &client, "dao", "wrong-password").await.status, StatusCode::UNAUTHORIZED);
    for _ in 0..3 {
        assert_throttled(&try_login(&app, &client, "dao", STAFF_PASSWORD).await);
    }
    assert_eq!(outcome_rows(&app, "dao").await, (6, 2));
}

/// The username's WRONG_PASSWORD and THROTTLED rows of the login record.
async fn outcome_rows(app: &TestApp, username: &str) -> (i64, i64) {
    let count = |outcome: &str| format!("SELECT COUNT(*) FROM login_attempts WHERE username = '{username}' AND outcome = '{outcome}'");
    (app.count(&count("WRONG_PASSWORD")).await, app.count(&count("THROTTLED")).await)
}

async fn throttled_metric(app: &TestApp) -> u64 {
    let text = app.client.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    let line = text.lines().find(|l| l.starts_with("docnum_login_throttled_total ")).unwrap_or_else(|| panic!("no series: {text}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

#[tokio::test]
async fn two_instances_share_the_counts_through_redis() {
    let redis = RedisServer::start().await;
    let options = || Options { redis_urls: vec![redis.url()], ..Options::default() };
    let (a, b) = (TestApp::spawn_with(options()).await, TestApp::spawn_with(options()).await);
    docnum::server::auth::system::create_user(&b.state.db, "pim", "pim", STAFF_PASSWORD, Role::Staff).await.unwrap();
    let client = client_from(None);
    // five failures on instance a (no such user there) ...
    for _ in 0..5 {
        assert_eq!(try_login(&a, &client, "pim", "wrong-password").await.status, StatusCode::UNAUTHORIZED);
    }
    // ... and instance b makes the next attempt wait (the instances' clocks agree, as system clocks would)
    b.clock.set(a.clock.now());
    assert_eq!(assert_throttled(&try_login(&b, &client, "pim", STAFF_PASSWORD).await), 1);
    let mut con = redis.connection().await;
    let mut keys: Vec<String> = redis::cmd("KEYS").arg("docnum:login:*").query_async(&mut con).await.unwrap();
    keys.sort();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert_eq!(keys[0], "docnum:login:ip:127.0.0.1");
    for key in &keys {
        let ttl: i64 = redis::cmd("PTTL").arg(key).query_async(&mut con).await.unwrap();
        assert!(ttl > 900_000 && ttl <= 902_000, "{key}: the wait plus the forgetting time: {ttl} ms");
        let n: i64 = redis::cmd("HGET").arg(key).arg("n").query_async(&mut con).await.unwrap();
        assert_eq!(n, 5, "{key}");
    }
    // past the wait, b lets the right password in, which clears the username's count (not the address's)
    b.clock.advance(chrono::Duration::seconds(2));
    assert_eq!(try_login(&b, &client, "pim", STAFF_PASSWORD).await.status, StatusCode::OK);
    let left: Vec<String> = redis::cmd("KEYS").arg("docnum:login:*").query_async(&mut con).await.unwrap();
    assert_eq!(left, vec!["docnum:login:ip:127.0.0.1".to_string()]);
    // Redis gone: each instance counts on its own, and logins go on
    drop(con);
    drop(redis);
    for _ in 0..5 {
        assert_eq!(try_login(&b, &client, "pim", "wrong-password").await.status, StatusCode::UNAUTHORIZED);
    }
    assert_throttled(&try_login(&b, &client, "pim", STAFF_PASSWORD).await);
    assert_eq!(try_login(&a, &client, "pim", "wrong-password").await.status, StatusCode::UNAUTHORIZED, "a has counts of its own");
}

/// The peak resident memory (`VmHWM`, kB) of a process.
fn peak_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM in /proc/<pid>/status");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// 200 logins at once, half right and half wrong passwords, for 200 distinct users (so no throttle refuses them:
/// every one runs Argon2), against a real server process. Argon2 takes 19 MiB per computation; unbounded, 200 of them
/// would need ~3.8 GB at once. The server's peak must grow by less than (permits + 4) × 20 MiB.
/// By hand: `ARGON2_CONCURRENCY=1000 cargo test … login::two_hundred` must fail (the child inherits the variable).
#[tokio::test]
async fn two_hundred_parallel_logins_keep_the_server_memory_bounded() {
    const USERS: usize = 200;
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite://{}", dir.path().join("memory.db").display());
    let server = DocnumServer::start(&db_url, &[("LOGIN_FAILURES_PER_ADDRESS", "0".into())]);
    let client = Client::builder().pool_max_idle_per_host(USERS).timeout(Duration::from_secs(300)).build().unwrap();
    server.wait_healthy(&client).await;

    // the users, with one hash made here (200 hashes through the server would be 200 Argon2 runs before the test)
    let db = docnum::server::db::Db::connect(&db_url).await.unwrap();
    let hash = docnum::server::auth::password::hash(STAFF_PASSWORD.to_string()).await;
    for i in 0..USERS {
        sqlx::query("INSERT INTO users (username, display_name, password_hash, role, active, created_at) VALUES (?, ?, ?, 'STAFF', 1, 0)")
            .bind(format!("mem-{i:03}"))
            .bind(format!("mem-{i:03}"))
            .bind(&hash)
            .execute(&db.writer)
            .await
            .unwrap();
    }
    let login = |i: usize| {
        let (client, base) = (client.clone(), server.base.clone());
        let password = if i.is_multiple_of(2) { STAFF_PASSWORD } else { "a-wrong-password" };
        async move {
            client
                .post(format!("{base}/api/v1/auth/login"))
                .json(&json!({ "username": format!("mem-{i:03}"), "password": password }))
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    // warm up: one right and one wrong login, one after the other, then the baseline
    assert_eq!(login(0).await, StatusCode::OK);
    assert_eq!(login(1).await, StatusCode::UNAUTHORIZED);
    let baseline = peak_kb(server.pid());

    let statuses = futures::future::join_all((0..USERS).map(|i| tokio::spawn(login(i)))).await;
    for (i, s) in statuses.into_iter().enumerate() {
        let expected = if i.is_multiple_of(2) { StatusCode::OK } else { StatusCode::UNAUTHORIZED };
        assert_eq!(s.unwrap(), expected, "login {i}: none is throttled, each ran Argon2");
    }
    let peak = peak_kb(server.pid());
    let permits = docnum::server::auth::password::default_concurrency() as u64;
    let growth_mib = peak.saturating_sub(baseline) / 1024;
    let bound_mib = (permits + 4) * 20;
    eprintln!(
        "VmHWM: baseline {} MiB, after {USERS} parallel logins {} MiB: +{growth_mib} MiB (bound {bound_mib} MiB, {permits} permits)",
        baseline / 1024,
        peak / 1024
    );
    assert!(growth_mib < bound_mib, "peak memory grew by {growth_mib} MiB for {USERS} parallel logins; bound {bound_mib} MiB");
    let recorded: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM login_attempts").fetch_one(&db.pool).await.unwrap();
    assert_eq!(recorded, USERS as i64 + 2);
}
