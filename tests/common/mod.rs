//! `TestApp`: the real service on a real SQLite file in a temp directory, served on a loopback port,
//! with a clock the test can move. No mocks.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use docnum::app::types::Role;
use docnum::server::auth::rate_limit::RateLimits;
use docnum::server::clock::Clock;
use docnum::server::config::Config;
use docnum::server::{auth, run, AppState};
use reqwest::{Client, Response, StatusCode};
use serde_json::{json, Value};

pub const ADMIN_PASSWORD: &str = "admin-password-1";
pub const STAFF_PASSWORD: &str = "staff-password-1";

pub struct TestApp {
    pub base: String,
    pub client: Client,
    pub state: AppState,
    pub clock: Arc<Clock>,
    /// An API token of the super admin (all projects).
    pub token: String,
    pub dir: tempfile::TempDir,
}

/// 2025-06-15 10:00 in Bangkok: B.E. 2568, as in the seeds' examples.
pub fn be2568() -> DateTime<Utc> {
    "2025-06-15T03:00:00Z".parse().unwrap()
}

pub struct Options {
    pub start: DateTime<Utc>,
    pub limits: RateLimits,
    pub ttl: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            start: be2568(),
            limits: RateLimits { per_user_per_min: 0, per_ip_per_min: 0, global_per_min: 0, per_token_per_min: 0 },
            ttl: Duration::from_secs(300),
        }
    }
}

impl TestApp {
    pub async fn spawn() -> TestApp {
        TestApp::spawn_with(Options::default()).await
    }

    pub async fn spawn_with(options: Options) -> TestApp {
        let dir = tempfile::tempdir().unwrap();
        let database_url = format!("sqlite://{}", dir.path().join("docnum.db").display());
        let clock = Arc::new(Clock::starting_at(options.start));
        let config = Config {
            database_url,
            demo_data: true,
            bootstrap_admin_password: Some(ADMIN_PASSWORD.into()),
            reservation_ttl: options.ttl,
            sweep_interval: Duration::from_secs(3600),
            rate_limits: options.limits,
            secure_cookies: false,
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut leptos_options = run::leptos_options();
        leptos_options.site_addr = listener.local_addr().unwrap();
        let state = AppState::start(config, leptos_options, clock.clone()).await.expect("state");
        let router = run::app(&state).await.expect("router");
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>()).await.unwrap();
        });
        let admin_id = auth::store::credentials_by_username(&state.db, "admin").await.unwrap().unwrap().0;
        let (_, token) = auth::store::create_token(&state.db, "tests", &[], admin_id, 0).await.unwrap();
        TestApp {
            base: format!("http://{addr}"),
            client: Client::builder().pool_max_idle_per_host(256).build().unwrap(),
            state,
            clock,
            token,
            dir,
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
        let id = auth::store::create_user(&self.state.db, username, username, STAFF_PASSWORD, role).await.unwrap();
        for p in admin_of {
            auth::store::add_project_admin(&self.state.db, id, *p).await.unwrap();
        }
        self.login(username, STAFF_PASSWORD).await
    }

    pub async fn login(&self, username: &str, password: &str) -> Client {
        let client = Client::builder().cookie_store(true).build().unwrap();
        let r = client
            .post(self.url("/api/v1/auth/login"))
            .json(&json!({ "username": username, "password": password }))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK, "login as {username}");
        client
    }

    pub async fn count(&self, sql: &str) -> i64 {
        use sqlx::Row;
        sqlx::query(sql).fetch_one(&self.state.db.pool).await.unwrap().get::<i64, _>(0)
    }

    pub async fn project_id(&self, code: &str) -> i64 {
        self.state.reference.get().await.unwrap().project(None, Some(code)).unwrap().id
    }
}

pub fn letter() -> Value {
    json!({ "projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "originatorCode": "คคง.", "recipientCode": "สคฉ.3" })
}

/// Asserts the error body of SPEC §6 and returns it.
pub fn assert_error(status: StatusCode, body: &Value, expected_status: u16, expected_code: &str) {
    assert_eq!(status.as_u16(), expected_status, "status; body: {body}");
    assert_eq!(body["statusCode"], expected_status, "statusCode in body: {body}");
    assert_eq!(body["code"], expected_code, "code in body: {body}");
    let message = body["message"].as_str().expect("message");
    assert!(message.chars().any(|c| ('\u{0E00}'..='\u{0E7F}').contains(&c)), "message is Thai: {message}");
    assert!(body["error"].is_string(), "error name: {body}");
}
