//! `TestApp`: the real service on a real database, served on a loopback port, with a clock the test can
//! move. No mocks. The database is a SQLite file in a temp directory, or — with `DOCNUM_TEST_DB=mysql` — a
//! fresh MariaDB database `docnum_t_…` on `DOCNUM_TEST_MYSQL_URL` (default `mysql://root@127.0.0.1:3306`),
//! dropped when the `TestApp` is dropped.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use docnum::contract::{ProjectId, Role};
use docnum::server::auth::rate_limit::RateLimits;
use docnum::server::auth::throttle::LoginThrottleConfig;
use docnum::server::clock::Clock;
use docnum::server::config::{Config, LogConfig, NotifyConfig};
use docnum::server::{auth, run, AppState};
use reqwest::{Client, Response, StatusCode};
use serde_json::{json, Value};

pub const ADMIN_PASSWORD: &str = "admin-password-1";
/// No request of a test takes this long on any machine: a request that does fails its test, naming its URL, instead of
/// holding the suite until CI's limit.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
pub const STAFF_PASSWORD: &str = "staff-password-1";

pub struct TestApp {
    pub base: String,
    pub client: Client,
    pub state: AppState,
    pub clock: Arc<Clock>,
    /// An API token of the super admin (all projects).
    pub token: String,
    /// Where its database is (another instance of the same service: `Options::database_url`).
    pub database_url: String,
    /// The SQLite file's directory, removed with the app.
    _dir: tempfile::TempDir,
    /// The MariaDB database of this app (`DOCNUM_TEST_DB=mysql`), dropped with the app.
    _mysql: Option<MySqlTestDb>,
}

/// 2025-06-15 10:00 in Bangkok: B.E. 2568, as in the requirements' examples.
pub fn be2568() -> DateTime<Utc> {
    "2025-06-15T03:00:00Z".parse().unwrap()
}

pub struct Options {
    pub start: DateTime<Utc>,
    pub limits: RateLimits,
    pub ttl: Duration,
    /// Redis servers for the distributed lock; empty = in-process lock.
    pub redis_urls: Vec<String>,
    /// `SECURE_COOKIES`.
    pub secure_cookies: bool,
    /// `TRUSTED_PROXIES`.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// `DEMO_DATA`: false starts with no reference data at all (the production path).
    pub demo_data: bool,
    /// `LOGIN_FAILURES_PER_USER` / `_PER_ADDRESS` and the waits.
    pub login_throttle: LoginThrottleConfig,
    /// `CLUSTER_SECRET` (forwarding to a counter's lock holder; advertised at the app's own address).
    pub cluster_secret: Option<String>,
    /// Another app's database (`TestApp::database_url`): a second instance of the same service. None: a fresh one.
    pub database_url: Option<String>,
    /// The webhooks' settings. The tests' receivers listen on loopback, so internal targets are allowed unless a
    /// test says otherwise (`webhook_targets`).
    pub notify: NotifyConfig,
    /// The transparency log's settings (its witnesses, when checkpoints are signed).
    pub log: LogConfig,
    /// `METRICS_TOKEN`.
    pub metrics_token: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            start: be2568(),
            limits: RateLimits::off(),
            ttl: Duration::from_secs(300),
            redis_urls: Vec::new(),
            secure_cookies: false,
            trusted_proxies: Vec::new(),
            demo_data: true,
            login_throttle: LoginThrottleConfig::default(),
            cluster_secret: None,
            database_url: None,
            notify: NotifyConfig { allow_private_targets: true, ..NotifyConfig::default() },
            log: LogConfig::default(),
            metrics_token: None,
        }
    }
}

impl TestApp {
    pub async fn spawn() -> TestApp {
        TestApp::spawn_with(Options::default()).await
    }

    pub async fn spawn_with(options: Options) -> TestApp {
        let dir = tempfile::tempdir().unwrap();
        let shared = options.database_url.clone();
        let mysql = if use_mysql() && shared.is_none() { Some(MySqlTestDb::create().await) } else { None };
        let database_url = match (&shared, &mysql) {
            (Some(url), _) => url.clone(),
            (None, Some(db)) => db.url.clone(),
            (None, None) => format!("sqlite://{}", dir.path().join("docnum.db").display()),
        };
        let clock = Arc::new(Clock::starting_at(options.start));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let config = Config {
            database_url: database_url.clone(),
            demo_data: options.demo_data,
            bootstrap_admin_password: Some(ADMIN_PASSWORD.into()),
            reservation_ttl: options.ttl,
            // tests sweep when they mean to
            sweep_interval: Duration::from_secs(3600),
            rate_limits: options.limits,
            secure_cookies: options.secure_cookies,
            trusted_proxies: options.trusted_proxies.clone(),
            redis_urls: options.redis_urls.clone(),
            cluster_secret: options.cluster_secret.clone(),
            metrics_token: options.metrics_token.clone(),
            advertise_url: Some(format!("http://{}", listener.local_addr().unwrap())),
            login_throttle: options.login_throttle.clone(),
            notify: options.notify.clone(),
            log: options.log.clone(),
            // the server binary runs workers on a thread of their own (`counter_thread: true`); the multi-process tests,
            // the browser tests and the cluster harness cover that path, and a test process starting dozens of
            // services keeps them here: the default
            ..Config::default()
        };
        let mut leptos_options = docnum::server::config::leptos_options();
        leptos_options.site_addr = listener.local_addr().unwrap();
        let state = AppState::start(config, leptos_options, clock.clone()).await.expect("state");
        let router = run::app(&state).await.expect("router");
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>()).await.unwrap();
        });
        let admin_id = auth::system::user_id(&state.db, "admin").await.unwrap().unwrap();
        // a second instance of one database makes a token of its own
        let token_name = if shared.is_some() { format!("tests-{}", addr.port()) } else { "tests".to_string() };
        let (_, token) = auth::system::create_token(&state.db, &token_name, &[], admin_id, 0).await.unwrap();
        TestApp {
            base: format!("http://{addr}"),
            client: Client::builder().pool_max_idle_per_host(256).timeout(REQUEST_TIMEOUT).build().unwrap(),
            state,
            clock,
            token,
            database_url,
            _dir: dir,
            _mysql: mysql,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub async fn post(&self, path: &str, body: &Value) -> Response {
        self.client.post(self.url(path)).bearer_auth(&self.token).json(body).send().await.unwrap()
    }

    pub async fn post_json(&self, path: &str, body: &Value) -> (StatusCode, Value) {
        let r = self.post(path, body).await;
        let status = r.status();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    pub async fn reserve(&self, body: &Value) -> (StatusCode, Value) {
        self.post_json("/api/v1/document-numbering/reserve", body).await
    }

    /// A user with a role, and a cookie-holding client logged in as that user.
    pub async fn user_client(&self, username: &str, role: Role, admin_of: &[i64]) -> Client {
        let id = auth::system::create_user(&self.state.db, username, username, STAFF_PASSWORD, role).await.unwrap();
        for p in admin_of {
            auth::system::add_project_admin(&self.state.db, id, ProjectId(*p)).await.unwrap();
        }
        self.login(username, STAFF_PASSWORD).await
    }

    /// A client like a browser on the service's own pages: it keeps the session cookie and sends the page's
    /// `Origin` (the edge refuses cookie-authenticated changes without it).
    pub fn browser(&self) -> Client {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::ORIGIN, self.base.parse().unwrap());
        Client::builder().cookie_store(true).default_headers(headers).timeout(REQUEST_TIMEOUT).build().unwrap()
    }

    pub async fn login(&self, username: &str, password: &str) -> Client {
        let client = self.browser();
        let r = client.post(self.url("/api/v1/auth/login")).json(&json!({ "username": username, "password": password })).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK, "login as {username}");
        client
    }

    pub async fn count(&self, sql: &str) -> i64 {
        use sqlx::Row;
        sqlx::query(sql).fetch_one(&self.state.db.pool).await.unwrap().get::<i64, _>(0)
    }

    /// A project's id, as the API's JSON carries it.
    pub async fn project_id(&self, code: &str) -> i64 {
        self.state.reference().get().await.unwrap().project(None, Some(code)).unwrap().id.0
    }

    /// A counter row written straight into the database (type 1), for what the database itself accepts or refuses.
    pub async fn insert_bare_counter(&self, project: i64, originator: i64, period: &str) -> Result<(), sqlx::Error> {
        sqlx::query(
            "INSERT INTO counters (project_id, correspondence_type_id, originator_id, period, last_number, max_number, version, created_at, updated_at) \
             VALUES (?, 1, ?, ?, 0, 9999, 0, 0, 0)",
        )
        .bind(project)
        .bind(originator)
        .bind(period)
        .execute(&self.state.db.pool)
        .await
        .map(|_| ())
    }
}

/// Whether the tests run against MariaDB (`DOCNUM_TEST_DB=mysql`) instead of a SQLite file.
pub fn use_mysql() -> bool {
    matches!(std::env::var("DOCNUM_TEST_DB").as_deref(), Ok("mysql" | "mariadb"))
}

/// The server to create test databases on: a URL without a database.
fn mysql_server_url() -> String {
    std::env::var("DOCNUM_TEST_MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306".into())
}

/// `base` (optionally ending in `/` or with `?options`) with `database` as its path.
fn with_database(base: &str, database: &str) -> String {
    let (server, query) = match base.split_once('?') {
        Some((s, q)) => (s, Some(q)),
        None => (base, None),
    };
    let server = server.trim_end_matches('/');
    // a database already in the URL is replaced
    let server = match server.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('/') {
            Some((authority, _)) => format!("{scheme}://{authority}"),
            None => server.to_string(),
        },
        None => server.to_string(),
    };
    match query {
        Some(q) => format!("{server}/{database}?{q}"),
        None => format!("{server}/{database}"),
    }
}

const MYSQL_TEST_PREFIX: &str = "docnum_t_";
/// Leftover test databases older than this are dropped at the start of a run (see `MySqlTestDb::create`).
const MYSQL_LEFTOVER_AGE_SECS: u64 = 3600;

fn unix_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

/// A fresh MariaDB database for one `TestApp`: `docnum_t_<8 hex digits: creation time in Unix seconds><12 random hex digits>`.
pub struct MySqlTestDb {
    pub name: String,
    pub url: String,
    server: String,
}

impl MySqlTestDb {
    pub async fn create() -> MySqlTestDb {
        use sqlx::Connection;
        let server = mysql_server_url();
        let mut conn = sqlx::mysql::MySqlConnection::connect(&server)
            .await
            .unwrap_or_else(|e| panic!("DOCNUM_TEST_DB=mysql but MariaDB at {server} does not answer: {e}"));
        drop_leftovers(&mut conn).await;
        let random = uuid::Uuid::new_v4().simple().to_string();
        let name = format!("{MYSQL_TEST_PREFIX}{:08x}{}", unix_secs(), &random[..12]);
        sqlx::query(&format!("CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")).execute(&mut conn).await.unwrap();
        let _ = conn.close().await;
        MySqlTestDb { url: with_database(&server, &name), name, server }
    }
}

/// Once per test process: drops `docnum_t_…` databases that earlier runs left behind (a test process can end
/// before the drop of its last apps completes). Only those created more than an hour ago, by the time in their
/// name, so databases of a run going on at the same time (another checkout, CI) are never touched.
async fn drop_leftovers(conn: &mut sqlx::MySqlConnection) {
    use sqlx::Row;
    static DONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if DONE.swap(true, std::sync::atomic::Ordering::SeqCst) {
        return;
    }
    let names: Vec<String> = sqlx::query("SELECT CAST(SCHEMA_NAME AS CHAR) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'docnum\\_t\\_%'")
        .fetch_all(&mut *conn)
        .await
        .map(|rows| rows.iter().map(|r| r.get::<String, _>(0)).collect())
        .unwrap_or_default();
    let cutoff = unix_secs().saturating_sub(MYSQL_LEFTOVER_AGE_SECS);
    for name in names {
        let created = name
            .strip_prefix(MYSQL_TEST_PREFIX)
            .filter(|rest| rest.len() == 20 && rest.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|rest| u64::from_str_radix(&rest[..8], 16).ok());
        if created.is_some_and(|t| t < cutoff) {
            let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS `{name}`")).execute(&mut *conn).await;
        }
    }
}

impl Drop for MySqlTestDb {
    /// Drops the database from a thread of its own, so the test's runtime is never blocked: the app's pools
    /// live on that runtime and must be able to finish (or be closed with it) before MariaDB lets the DROP
    /// take its metadata locks. The thread is not joined; if the test process ends first, the next run's
    /// `drop_leftovers` removes the database.
    fn drop(&mut self) {
        let name = self.name.clone();
        let server = self.server.clone();
        let _ = std::thread::Builder::new().name(format!("drop {name}")).spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
            rt.block_on(async move {
                use sqlx::Connection;
                let Ok(mut conn) = sqlx::mysql::MySqlConnection::connect(&server).await else { return };
                let _ = sqlx::query("SET SESSION lock_wait_timeout = 60").execute(&mut conn).await;
                let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS `{name}`")).execute(&mut conn).await;
                let _ = conn.close().await;
            });
        });
    }
}

pub fn letter() -> Value {
    letter_to("สคฉ.3")
}

/// The recipients of the demo data a letter from คคง. can go to: each is a counter of its own.
pub const RECIPIENTS: [&str; 4] = ["สคฉ.3", "กทท.", "ผรม.1", "ผรม.2"];

/// A letter of LCBP3 from คคง. to `recipient`. Tests that load for a while, not for a count, spread their load over
/// [`RECIPIENTS`]: a fast machine fills one counter's 9,999 numbers in a few seconds.
pub fn letter_to(recipient: &str) -> Value {
    json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "originatorCode": "คคง.", "recipientCode": recipient })
}

/// Asserts the error body (docs/rules/api.md#errors) and returns it.
pub fn assert_error(status: StatusCode, body: &Value, expected_status: u16, expected_code: &str) {
    assert_eq!(status.as_u16(), expected_status, "status; body: {body}");
    assert_eq!(body["statusCode"], expected_status, "statusCode in body: {body}");
    assert_eq!(body["code"], expected_code, "code in body: {body}");
    let message = body["message"].as_str().expect("message");
    assert!(message.chars().any(|c| ('\u{0E00}'..='\u{0E7F}').contains(&c)), "message is Thai: {message}");
    assert!(body["error"].is_string(), "error name: {body}");
}

/// Polls `done` every 25 ms until it holds, or fails once `deadline` has passed, saying what was awaited.
pub async fn eventually<F, Fut>(what: &str, deadline: Duration, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = std::time::Instant::now();
    while !done().await {
        assert!(start.elapsed() < deadline, "gave up waiting: {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
