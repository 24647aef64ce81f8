//! docs/operations/README.md#metrics-and-alerts: `GET /metrics` over HTTP on the real service — the series after real requests with their
//! values, the scrape-time gauges (database pools, sequence utilization, Redis), `METRICS_TOKEN`, and that
//! the alert rules and the dashboard in deploy/ use only metric names the service exports.
//!
//! The recorded series live in one process-wide registry, which every test of this binary would feed: each test
//! of this file runs in a process of its own (`rusty_fork`: the test binary started again for that one test),
//! so the values it asserts are its own. The lock and batch series, which the queue also feeds, are checked as
//! differences between two scrapes.

use std::collections::HashMap;
use std::time::Duration;

use crate::common::*;
use crate::support::RedisServer;
use docnum::server::metrics::{self, LockKind};
use reqwest::StatusCode;
use rusty_fork::rusty_fork_test;
use serde_json::json;

/// The samples of a text exposition: (name, sorted labels) → value.
struct Scrape {
    text: String,
    samples: HashMap<(String, Vec<(String, String)>), f64>,
}

impl Scrape {
    fn parse(text: String) -> Scrape {
        let mut samples = HashMap::new();
        for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
            let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("sample line: {line}"));
            let value: f64 = value.parse().unwrap_or_else(|_| panic!("value of {line}"));
            let (name, labels) = match series.split_once('{') {
                None => (series.to_string(), Vec::new()),
                Some((name, rest)) => {
                    let rest = rest.strip_suffix('}').unwrap_or_else(|| panic!("labels of {line}"));
                    let mut labels: Vec<(String, String)> = split_labels(rest)
                        .into_iter()
                        .map(|pair| {
                            let (k, v) = pair.split_once('=').unwrap_or_else(|| panic!("label {pair} in {line}"));
                            (k.to_string(), v.trim_matches('"').to_string())
                        })
                        .collect();
                    labels.sort();
                    (name.to_string(), labels)
                }
            };
            samples.insert((name, labels), value);
        }
        Scrape { text, samples }
    }

    fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let mut key: Vec<(String, String)> = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        key.sort();
        self.samples.get(&(name.to_string(), key)).copied()
    }

    /// The value of a sample that must be there.
    fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.get(name, labels).unwrap_or_else(|| panic!("no sample {name}{labels:?} in:\n{}", self.text))
    }

    /// A sample that may not exist yet counts as 0 (a difference between two scrapes).
    fn or_zero(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.get(name, labels).unwrap_or(0.0)
    }

    fn has_family(&self, name: &str) -> bool {
        self.text.lines().any(|l| l.strip_prefix("# TYPE ").is_some_and(|rest| rest.split(' ').next() == Some(name)))
    }
}

/// `a="x",b="y, z"` → [`a="x"`, `b="y, z"`] (commas inside quotes kept).
fn split_labels(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut escaped) = (Vec::new(), String::new(), false, false);
    for c in s.chars() {
        match c {
            '\\' if quoted && !escaped => escaped = true,
            '"' if !escaped => quoted = !quoted,
            ',' if !quoted => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => escaped = false,
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

async fn scrape(app: &TestApp) -> Scrape {
    let r = app.client.get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let content_type = r.headers()[reqwest::header::CONTENT_TYPE].to_str().unwrap().to_string();
    assert!(content_type.starts_with("text/plain; version=0.0.4"), "content type {content_type}");
    Scrape::parse(r.text().await.unwrap())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

async fn requests_and_lock_events_show_up_with_their_values_body() {
    let app = TestApp::spawn().await;

    // 3 LETTER reserves succeed; one LETTER reserve fails validation (back-dated year); one names a type
    // that does not exist; a document's number is generated, then asked for again (same number, not new).
    for _ in 0..3 {
        let (s, b) = app.reserve(&letter()).await;
        assert_eq!(s, StatusCode::OK, "{b}");
    }
    let mut backdated = letter();
    backdated["year"] = json!(1999);
    let (s, b) = app.reserve(&backdated).await;
    assert_error(s, &b, 400, "VALIDATION_ERROR");
    let mut unknown_type = letter();
    unknown_type["correspondenceTypeCode"] = json!("NO-SUCH-TYPE-1234");
    let (s, unknown_body) = app.reserve(&unknown_type).await;
    assert!(s.is_client_error(), "{unknown_body}");
    let (s, first) = app.post_json("/api/v1/documents/DOC-1/generate-number", &letter()).await;
    assert_eq!(s, StatusCode::OK, "{first}");
    let (s, again) = app.post_json("/api/v1/documents/DOC-1/generate-number", &letter()).await;
    assert_eq!(s, StatusCode::OK, "{again}");
    assert_eq!(first["documentNumber"], again["documentNumber"]);
    // a MEMO counter, then made nearly full by hand; and an RFA counter of a past year, full
    let mut memo = letter();
    memo["correspondenceTypeCode"] = json!("MEMO");
    let (s, b) = app.reserve(&memo).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let memo_type = app.count("SELECT id FROM correspondence_types WHERE code = 'MEMO'").await;
    let rfa_type = app.count("SELECT id FROM correspondence_types WHERE code = 'RFA'").await;
    let project = app.project_id("LCBP3").await;
    sqlx::query("UPDATE counters SET last_number = max_number - 400 WHERE correspondence_type_id = ?")
        .bind(memo_type)
        .execute(&app.state.db.pool)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO counters (project_id, correspondence_type_id, period, last_number, max_number, version, created_at, updated_at) \
         VALUES (?, ?, 'YEAR_2020', 9999, 9999, 0, 0, 0)",
    )
    .bind(project)
    .bind(rfa_type)
    .execute(&app.state.db.pool)
    .await
    .unwrap();

    let m = scrape(&app).await;
    let issued = metrics::ISSUED;
    assert_eq!(m.value(issued, &[("type", "LETTER")]), 4.0, "3 reserves + 1 generate; asking again issues nothing");
    assert_eq!(m.value(issued, &[("type", "MEMO")]), 1.0);
    assert_eq!(m.get(issued, &[("type", "unknown")]), None, "failed requests issue nothing");
    let count = format!("{}_count", metrics::GENERATION);
    assert_eq!(m.value(&count, &[("type", "LETTER"), ("status", "success")]), 5.0, "3 reserves + 2 generates");
    assert_eq!(m.value(&count, &[("type", "LETTER"), ("status", "VALIDATION_ERROR")]), 1.0);
    let unknown_status = unknown_body["error"].as_str().unwrap();
    assert_eq!(m.value(&count, &[("type", "unknown"), ("status", unknown_status)]), 1.0, "an unknown type code is never a label");
    assert!(!m.text.contains("NO-SUCH-TYPE-1234"));
    let bucket = format!("{}_bucket", metrics::GENERATION);
    assert_eq!(m.value(&bucket, &[("type", "LETTER"), ("status", "success"), ("le", "+Inf")]), 5.0);
    assert!(m.value(&format!("{}_sum", metrics::GENERATION), &[("type", "LETTER"), ("status", "success")]) > 0.0);

    // the database pools (SQLite: an 8-connection read pool and the one-connection writer; MariaDB: a pool of 32
    // and the counter workers' 16)
    let conns = metrics::DB_POOL_CONNECTIONS;
    if use_mysql() {
        assert_eq!(m.value(metrics::DB_POOL_MAX, &[("pool", "main")]), 32.0);
        assert_eq!(m.get(metrics::DB_POOL_MAX, &[("pool", "writer")]), None);
        assert_eq!(m.value(metrics::DB_POOL_MAX, &[("pool", "counters")]), 16.0);
    } else {
        assert_eq!(m.value(metrics::DB_POOL_MAX, &[("pool", "main")]), 8.0);
        assert_eq!(m.value(metrics::DB_POOL_MAX, &[("pool", "writer")]), 1.0);
        assert_eq!(m.value(conns, &[("pool", "writer"), ("state", "idle")]) + m.value(conns, &[("pool", "writer"), ("state", "in_use")]), 1.0);
    }
    let main_open = m.value(conns, &[("pool", "main"), ("state", "idle")]) + m.value(conns, &[("pool", "main"), ("state", "in_use")]);
    assert!(main_open >= 1.0 && main_open <= m.value(metrics::DB_POOL_MAX, &[("pool", "main")]), "open connections {main_open}");

    // sequence utilization: the fullest counter of the current period per type; past periods do not count
    let util = metrics::SEQUENCE_UTILIZATION;
    assert!(close(m.value(util, &[("type", "LETTER")]), 4.0 / 9999.0), "{}", m.value(util, &[("type", "LETTER")]));
    let memo_max = app.count(&format!("SELECT max_number FROM counters WHERE correspondence_type_id = {memo_type}")).await as f64;
    assert!(close(m.value(util, &[("type", "MEMO")]), (memo_max - 400.0) / memo_max), "{}", m.value(util, &[("type", "MEMO")]));
    assert_eq!(m.get(util, &[("type", "RFA")]), None, "a counter of 2020 is not in the current period");

    // no Redis configured: no Redis series
    assert!(!m.has_family(metrics::REDIS_UP) && !m.has_family(metrics::LOCK_FALLBACK_ACTIVE));
    // the database's primary is MariaDB's (on MariaDB: tests/it/failover.rs)
    let mariadb_only = [metrics::DB_WRITABLE, metrics::DB_PRIMARY_SWITCHES];
    if app.state.db.dialect == docnum::server::db::Dialect::Sqlite {
        assert!(mariadb_only.iter().all(|f| !m.has_family(f)));
    }
    // the log's witnesses: only with LOG_WITNESSES (tests/it/witness.rs)
    let conditional = [
        metrics::REDIS_UP,
        metrics::LOCK_FALLBACK_ACTIVE,
        metrics::DB_WRITABLE,
        metrics::DB_PRIMARY_SWITCHES,
        metrics::TLS_CERT_EXPIRY,
        metrics::LOG_WITNESS_REFUSALS,
        metrics::LOG_WITNESS_UNANSWERED,
    ];
    for family in metrics::FAMILIES.iter().filter(|f| !conditional.contains(f)) {
        assert!(m.has_family(family), "{family} is exported");
    }

    // the lock and batch series, through the functions the queue and the lock call
    let before = scrape(&app).await;
    metrics::lock_acquired(LockKind::Local, Duration::from_millis(2));
    metrics::lock_acquired(LockKind::Redis, Duration::from_millis(1500));
    metrics::lock_acquired(LockKind::DbFallback, Duration::from_millis(30));
    metrics::lock_failed("timeout");
    metrics::lock_failed("something new");
    metrics::batch(3, 1);
    metrics::batch(1, 0);
    metrics::group_phase(metrics::GroupPhase::Write, Duration::from_micros(700));
    metrics::group_phase(metrics::GroupPhase::Commit, Duration::from_millis(3));
    let after = scrape(&app).await;
    let delta = |name: &str, labels: &[(&str, &str)]| after.or_zero(name, labels) - before.or_zero(name, labels);
    assert_eq!(delta(metrics::LOCK_ATTEMPTS, &[]), 5.0);
    assert_eq!(delta(metrics::LOCK_FAILURES, &[("reason", "timeout")]), 1.0);
    assert_eq!(delta(metrics::LOCK_FAILURES, &[("reason", "other")]), 1.0, "unknown reasons are not labels");
    assert_eq!(after.get(metrics::LOCK_FAILURES, &[("reason", "something new")]), None);
    assert_eq!(before.value(metrics::LOCK_FAILURES, &[("reason", "redis_down")]), after.value(metrics::LOCK_FAILURES, &[("reason", "redis_down")]));
    let wait_bucket = format!("{}_bucket", metrics::LOCK_WAIT);
    assert_eq!(delta(&wait_bucket, &[("kind", "redis"), ("le", "1")]), 0.0);
    assert_eq!(delta(&wait_bucket, &[("kind", "redis"), ("le", "2")]), 1.0);
    assert_eq!(delta(&wait_bucket, &[("kind", "local"), ("le", "0.0025")]), 1.0);
    assert_eq!(delta(&wait_bucket, &[("kind", "db_fallback"), ("le", "0.05")]), 1.0);
    assert!(close(delta(&format!("{}_sum", metrics::LOCK_WAIT), &[("kind", "redis")]), 1.5));
    let phase_bucket = format!("{}_bucket", metrics::GROUP_PHASE);
    assert_eq!(delta(&phase_bucket, &[("phase", "write"), ("le", "0.0005")]), 0.0);
    assert_eq!(delta(&phase_bucket, &[("phase", "write"), ("le", "0.001")]), 1.0);
    assert_eq!(delta(&phase_bucket, &[("phase", "commit"), ("le", "0.0025")]), 0.0);
    assert_eq!(delta(&phase_bucket, &[("phase", "commit"), ("le", "0.005")]), 1.0);
    assert_eq!(delta(&format!("{}_count", metrics::GROUP_PHASE), &[("phase", "read")]), 0.0);
    assert_eq!(delta(&format!("{}_count", metrics::RETRIES), &[]), 2.0);
    assert_eq!(delta(&format!("{}_sum", metrics::RETRIES), &[]), 1.0);
    assert_eq!(delta(&format!("{}_bucket", metrics::RETRIES), &[("le", "0")]), 1.0);
    assert_eq!(delta(&format!("{}_sum", metrics::BATCH_SIZE), &[]), 4.0);
    assert_eq!(delta(&format!("{}_bucket", metrics::BATCH_SIZE), &[("le", "2")]), 1.0);
    assert_eq!(delta(&format!("{}_bucket", metrics::BATCH_SIZE), &[("le", "4")]), 2.0);
}

/// A reserve from the form (the `reserve_number` server function, called the way the browser calls it: JSON with
/// the session cookie) is counted in the generation histogram like a REST reserve.
async fn a_reserve_from_the_form_is_counted_in_the_generation_histogram_body() {
    let app = TestApp::spawn().await;
    let browser = app.login("admin", ADMIN_PASSWORD).await;
    let count = format!("{}_count", metrics::GENERATION);
    let labels = [("type", "NOTICE"), ("status", "success")];
    let mut notice = letter();
    notice["correspondenceTypeCode"] = json!("NOTICE");

    let before = scrape(&app).await;
    let r = browser.post(app.url("/sfn/reserve_number")).json(&json!({ "request": notice })).send().await.unwrap();
    let status = r.status();
    let body: serde_json::Value = r.json().await.unwrap_or_default();
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["documentNumber"].as_str().is_some_and(|n| !n.is_empty()), "{body}");
    let after = scrape(&app).await;
    assert_eq!(after.or_zero(&count, &labels) - before.or_zero(&count, &labels), 1.0, "one reserve from the form, counted once");
    assert_eq!(after.or_zero(metrics::ISSUED, &[("type", "NOTICE")]) - before.or_zero(metrics::ISSUED, &[("type", "NOTICE")]), 1.0);
}

async fn the_redis_gauges_follow_the_servers_body() {
    let mut redis = RedisServer::start().await;
    let app = TestApp::spawn_with(Options { redis_urls: vec![redis.url()], ..Options::default() }).await;
    let m = scrape(&app).await;
    assert_eq!(m.value(metrics::REDIS_UP, &[]), 1.0);
    assert_eq!(m.value(metrics::LOCK_FALLBACK_ACTIVE, &[]), 0.0);
    redis.kill();
    let m = scrape(&app).await;
    assert_eq!(m.value(metrics::REDIS_UP, &[]), 0.0, "probed at scrape time, not only when a number is requested");
}

async fn metrics_token_when_set_is_required_body() {
    let app = TestApp::spawn_with(Options { metrics_token: Some("scrape-secret-1".into()), ..Options::default() }).await;

    let r = app.client.get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(r.headers()[reqwest::header::WWW_AUTHENTICATE], "Bearer");
    assert!(!r.text().await.unwrap().contains("docnum_"), "nothing leaks without the token");
    let r = app.client.get(app.url("/metrics")).bearer_auth("scrape-secret-2").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "a wrong token");
    let r = app.client.get(app.url("/metrics")).bearer_auth(&app.token).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "an API token is not the metrics token");
    let r = app.client.get(app.url("/metrics")).bearer_auth("scrape-secret-1").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let m = Scrape::parse(r.text().await.unwrap());
    assert!(m.has_family(metrics::LOCK_ATTEMPTS));
    assert_eq!(app.client.get(app.url("/health")).send().await.unwrap().status(), StatusCode::OK, "/health stays open");

    // without the setting, no token is needed
    let open = TestApp::spawn().await;
    assert_eq!(open.client.get(open.url("/metrics")).send().await.unwrap().status(), StatusCode::OK);
}

/// Every `docnum_…` name in the alert rules, their unit tests and the dashboard is a family the service
/// exports (histograms through their `_bucket` / `_sum` / `_count` series). `scripts/check-monitoring.sh`
/// checks the same files with promtool.
#[test]
fn alerts_and_dashboard_use_only_exported_metric_names() {
    let root = env!("CARGO_MANIFEST_DIR");
    let histograms = [metrics::LOCK_WAIT, metrics::RETRIES, metrics::BATCH_SIZE, metrics::COMMIT_GROUP, metrics::GROUP_PHASE, metrics::GENERATION];
    let mut used = std::collections::BTreeSet::new();
    for file in ["deploy/prometheus/alerts.yml", "deploy/prometheus/alerts.test.yml", "deploy/grafana/docnum-dashboard.json"] {
        let text = std::fs::read_to_string(format!("{root}/{file}")).unwrap();
        if file.ends_with(".json") {
            let dashboard: serde_json::Value = serde_json::from_str(&text).expect("dashboard is JSON");
            assert!(dashboard["panels"].as_array().is_some_and(|p| p.len() >= 8), "dashboard panels");
        }
        let mut rest = text.as_str();
        while let Some(at) = rest.find("docnum_") {
            let name: String = rest[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            rest = &rest[at + name.len()..];
            let known = metrics::FAMILIES.contains(&name.as_str())
                || ["_bucket", "_sum", "_count"].iter().any(|s| name.strip_suffix(s).is_some_and(|base| histograms.contains(&base)));
            assert!(known, "{file} uses {name}, which the service does not export");
            used.insert(name);
        }
    }
    // the rules cover every alert of docs/operations/README.md#metrics-and-alerts
    let alerts = std::fs::read_to_string(format!("{root}/deploy/prometheus/alerts.yml")).unwrap();
    for family in [metrics::REDIS_UP, metrics::LOCK_FAILURES, metrics::LOCK_ATTEMPTS, metrics::SEQUENCE_UTILIZATION] {
        assert!(alerts.contains(family), "alerts.yml uses {family}");
    }
    for series in ["docnum_lock_wait_seconds_bucket", "docnum_retries_sum", "docnum_generation_duration_seconds_bucket"] {
        assert!(alerts.contains(series), "alerts.yml uses {series}");
    }
    assert!(used.len() >= 10, "{used:?}");
}

fn in_own_runtime(test: impl std::future::Future<Output = ()>) {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(test)
}

rusty_fork_test! {
    #[test]
    fn a_reserve_from_the_form_is_counted_in_the_generation_histogram() {
        in_own_runtime(a_reserve_from_the_form_is_counted_in_the_generation_histogram_body())
    }

    #[test]
    fn requests_and_lock_events_show_up_with_their_values() {
        in_own_runtime(requests_and_lock_events_show_up_with_their_values_body())
    }

    #[test]
    fn the_redis_gauges_follow_the_servers() {
        in_own_runtime(the_redis_gauges_follow_the_servers_body())
    }

    #[test]
    fn metrics_token_when_set_is_required() {
        in_own_runtime(metrics_token_when_set_is_required_body())
    }
}
