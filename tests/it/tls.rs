//! TLS to every backend, with certificates `openssl` makes at test time: a MariaDB of the test's own that requires
//! TLS (`require_secure_transport`), verified with `ssl-mode=VERIFY_IDENTITY`; a Redis of its own that speaks TLS only,
//! the Redlock path through `rediss://`; an https webhook receiver. For each, a CA that did not sign the server's
//! certificate is refused, naming the server, and nothing is sent in plain text instead.

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use crate::support::*;
use docnum::server::config::NotifyConfig;
use docnum::server::notifications::Notifier;
use docnum::server::tls;
use reqwest::StatusCode;
use serde_json::json;

/// A test CA, a server certificate it signed (for 127.0.0.1 and localhost), and a second CA that signed nothing here.
pub struct Pki {
    pub dir: tempfile::TempDir,
}

impl Pki {
    pub fn new() -> Pki {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let run = |args: &[&str]| {
            let out = Command::new("openssl").args(args).current_dir(d).output().expect("openssl must be installed");
            assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        let ca = |name: &str, cn: &str| {
            run(&[
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-days",
                "2",
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.pem"),
                "-subj",
                &format!("/CN={cn}"),
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ])
        };
        ca("ca", "docnum test CA");
        ca("wrong-ca", "another CA");
        run(&[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ]);
        std::fs::write(
            d.join("server.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        run(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-out",
            "server.pem",
            "-extfile",
            "server.ext",
        ]);
        Pki { dir }
    }

    pub fn path(&self, file: &str) -> String {
        self.dir.path().join(file).display().to_string()
    }
}

/// Under CI a server that cannot start fails the test; elsewhere the test is skipped, saying so.
fn can_run(binary: &str) -> bool {
    let there = Command::new("sh").args(["-c", &format!("command -v {binary}")]).output().is_ok_and(|o| o.status.success());
    assert!(there || std::env::var_os("CI").is_none(), "{binary} is not installed, and CI is set");
    if !there {
        eprintln!("skipped: no {binary} on this machine");
    }
    there
}

/// A redis-server speaking TLS only (`--port 0`), with the test CA's server certificate; killed when dropped.
struct TlsRedis {
    port: u16,
    child: Child,
}

impl TlsRedis {
    async fn start(pki: &Pki) -> TlsRedis {
        let port = free_port();
        let child = Command::new("redis-server")
            .args(["--port", "0", "--tls-port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--tls-cert-file", &pki.path("server.pem"), "--tls-key-file", &pki.path("server.key"), "--tls-ca-cert-file", &pki.path("ca.pem")])
            .args(["--tls-auth-clients", "no"])
            .stdout(Stdio::null())
            .spawn()
            .expect("start redis-server");
        let server = TlsRedis { port, child };
        let url = server.url(&pki.path("ca.pem"));
        for _ in 0..100 {
            if tls::check_redis(&url, Duration::from_secs(1)).await.is_ok() {
                return server;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("redis-server with TLS on port {port} did not start (is it built with TLS?)");
    }

    fn url(&self, ca: &str) -> String {
        format!("rediss://127.0.0.1:{}/?ssl-ca={ca}", self.port)
    }
}

impl Drop for TlsRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A MariaDB of the test's own that takes TLS connections only, with an empty database `docnum`.
async fn tls_mariadb(dir: &std::path::Path, pki: &Pki) -> MariaDbServer {
    let options = [
        format!("--ssl-cert={}", pki.path("server.pem")),
        format!("--ssl-key={}", pki.path("server.key")),
        format!("--ssl-ca={}", pki.path("ca.pem")),
    ];
    let server = MariaDbServer::create_with(dir, &options.iter().map(String::as_str).collect::<Vec<_>>()).await;
    // a server of a replication set starts read-only; this one stands alone
    server.sql(
        "SET GLOBAL read_only = OFF; SET GLOBAL require_secure_transport = ON; \
         CREATE DATABASE docnum CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
    );
    server
}

fn mariadb_url(server: &MariaDbServer, ca: &str) -> String {
    format!("mysql://root@127.0.0.1:{}/docnum?ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}", server.port)
}

async fn reserve_and_confirm(app: &TestApp) -> String {
    let (s, r) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let (s, c) = app.post_json("/api/v1/document-numbering/confirm", &json!({ "token": r["token"], "documentId": "DOC-TLS-1" })).await;
    assert_eq!(s, StatusCode::OK, "{c}");
    r["documentNumber"].as_str().unwrap().to_string()
}

/// (reserves under Redlock, reserves under the database-lock fallback), from the audit.
async fn lock_paths(app: &TestApp) -> (i64, i64) {
    (
        app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'RESERVE' AND fallback_used = 'NONE'").await,
        app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'RESERVE' AND fallback_used = 'DB_LOCK'").await,
    )
}

#[tokio::test]
async fn a_number_is_reserved_and_confirmed_through_mariadb_over_verified_tls() {
    if !MariaDbServer::available() || !can_run("openssl") {
        return;
    }
    let pki = Pki::new();
    let dir = tempfile::tempdir().unwrap();
    let server = tls_mariadb(dir.path(), &pki).await;
    let app = TestApp::spawn_with(Options { database_url: Some(mariadb_url(&server, &pki.path("ca.pem"))), ..Options::default() }).await;
    let number = reserve_and_confirm(&app).await;
    assert!(!number.is_empty());
    // the app's own connections are encrypted: the server says so of the session that asks
    let version: String =
        sqlx::query_scalar("SELECT CAST(VARIABLE_VALUE AS CHAR) FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_version'")
            .fetch_one(&app.state.db.pool)
            .await
            .unwrap();
    assert!(version.starts_with("TLSv1."), "Ssl_version {version:?}");
    // and the server takes nothing else
    let plain = sqlx::mysql::MySqlPool::connect(&format!("mysql://root@127.0.0.1:{}/docnum?ssl-mode=DISABLED", server.port)).await;
    assert!(plain.is_err(), "require_secure_transport refuses a plain connection");
    // the CA file's expiry is exported (made for 2 days: between 1 and 3 days from now)
    let scrape = app.client.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    let series = format!("docnum_tls_cert_expiry_seconds{{file=\"{}\"}} ", pki.path("ca.pem"));
    let expiry: f64 = scrape.lines().find_map(|l| l.strip_prefix(&series)).unwrap_or_else(|| panic!("{series} in {scrape}")).trim().parse().unwrap();
    let now = chrono::Utc::now().timestamp() as f64;
    assert!(expiry > now + 86_400.0 && expiry < now + 3.0 * 86_400.0, "expiry {expiry}, now {now}");
}

#[tokio::test]
async fn mariadb_with_a_certificate_of_another_ca_is_refused_naming_the_server() {
    if !MariaDbServer::available() || !can_run("openssl") {
        return;
    }
    let pki = Pki::new();
    let dir = tempfile::tempdir().unwrap();
    let server = tls_mariadb(dir.path(), &pki).await;
    let err = docnum::server::db::Db::connect(&mariadb_url(&server, &pki.path("wrong-ca.pem"))).await.err().expect("refused");
    let text = docnum::server::error::report(&err);
    assert!(text.contains(&format!("MariaDB at 127.0.0.1:{}", server.port)), "{text}");
    assert!(text.to_lowercase().contains("certificate"), "{text}");
    // the right CA, but a name the certificate lacks: refused too (VERIFY_IDENTITY checks the name)
    let by_other_name = format!("mysql://root@127.0.0.2:{}/docnum?ssl-mode=VERIFY_IDENTITY&ssl-ca={}", server.port, pki.path("ca.pem"));
    assert!(docnum::server::db::Db::connect(&by_other_name).await.is_err(), "a name the certificate lacks");
}

#[tokio::test]
async fn a_number_is_reserved_and_confirmed_under_redlock_over_verified_tls() {
    if !can_run("redis-server") || !can_run("openssl") {
        return;
    }
    let pki = Pki::new();
    let redis = TlsRedis::start(&pki).await;
    let app = TestApp::spawn_with(Options { redis_urls: vec![redis.url(&pki.path("ca.pem"))], ..Options::default() }).await;
    reserve_and_confirm(&app).await;
    assert_eq!(lock_paths(&app).await, (1, 0), "the number was taken under the Redis lock");
    // the server speaks TLS only: a plain client gets nothing
    let plain = format!("redis://127.0.0.1:{}", redis.port);
    assert!(tls::check_redis(&plain, Duration::from_secs(1)).await.is_err());
}

#[tokio::test]
async fn redis_with_a_certificate_of_another_ca_is_refused_naming_the_server() {
    if !can_run("redis-server") || !can_run("openssl") {
        return;
    }
    let pki = Pki::new();
    let redis = TlsRedis::start(&pki).await;
    let wrong = redis.url(&pki.path("wrong-ca.pem"));
    let why = tls::check_redis(&wrong, Duration::from_secs(2)).await.unwrap_err();
    assert!(why.contains(&format!("Redis at 127.0.0.1:{}", redis.port)), "{why}");
    assert!(why.to_lowercase().contains("certificate"), "{why}");
    // an instance given that URL never uses the server: its numbers come under the database lock
    let app = TestApp::spawn_with(Options { redis_urls: vec![wrong], ..Options::default() }).await;
    reserve_and_confirm(&app).await;
    assert_eq!(lock_paths(&app).await, (0, 1), "no lock taken on a server whose certificate does not verify");
}

// ---- webhooks over https ----

/// An https receiver on 127.0.0.1 with the test CA's server certificate: counts the deliveries it accepts.
async fn https_receiver(pki: &Pki, accepted: Arc<AtomicUsize>) -> String {
    use tokio_rustls::rustls;
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    let certs = rustls::pki_types::CertificateDer::pem_file_iter(pki.path("server.pem")).unwrap().collect::<Result<Vec<_>, _>>().unwrap();
    let key = rustls::pki_types::PrivateKeyDer::from_pem_file(pki.path("server.key")).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let listener =
        TlsListener { tcp: tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(), tls: tokio_rustls::TlsAcceptor::from(Arc::new(config)) };
    let addr = listener.tcp.local_addr().unwrap();
    let router = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let accepted = accepted.clone();
            async move {
                accepted.fetch_add(1, Ordering::SeqCst);
                StatusCode::OK
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("https://{addr}/hook")
}

/// TLS over a TCP listener, for `axum::serve`: a handshake that fails (a client that does not trust the certificate)
/// drops that connection only.
struct TlsListener {
    tcp: tokio::net::TcpListener,
    tls: tokio_rustls::TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, addr)) = self.tcp.accept().await else { continue };
            if let Ok(tls) = self.tls.accept(stream).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

/// A webhook to `url` and a worker that trusts `ca`; the number confirmed makes an event for it.
async fn deliver_one(app: &TestApp, url: &str, ca: &str) -> Arc<Notifier> {
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let r = admin.post(app.url("/api/v1/notifications/webhooks")).json(&json!({ "url": url, "kinds": ["NUMBER_CONFIRMED"] })).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK, "{}", r.text().await.unwrap());
    let config = NotifyConfig {
        poll: Duration::from_millis(20),
        backoff_base: Duration::from_millis(10),
        max_attempts: 1,
        ca_file: Some(ca.into()),
        allow_private_targets: true, // the receiver is on loopback
        ..NotifyConfig::default()
    };
    let worker = Arc::new(Notifier::new(app.state.db.clone(), app.clock.clone(), config, "tls-test").unwrap());
    worker.spawn();
    reserve_and_confirm(app).await;
    worker
}

/// The first delivery's (state, last error), once it has one.
async fn settled_delivery(app: &TestApp) -> (String, Option<String>) {
    let start = Instant::now();
    loop {
        let row: Option<(String, Option<String>)> =
            sqlx::query_as("SELECT state, last_error FROM notification_deliveries WHERE state <> 'PENDING' ORDER BY id LIMIT 1")
                .fetch_optional(&app.state.db.pool)
                .await
                .unwrap();
        if let Some(row) = row {
            return row;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no delivery settled");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// One webhook delivery to an https receiver whose certificate the test CA signed, the service trusting `ca_file`:
/// the receiver's address, the delivery's settled state and error, and how many requests reached the receiver.
async fn deliver_over_https(ca_file: &str) -> (String, String, Option<String>, usize) {
    let pki = Pki::new();
    let accepted = Arc::new(AtomicUsize::new(0));
    let url = https_receiver(&pki, accepted.clone()).await;
    let app = TestApp::spawn().await;
    let _worker = deliver_one(&app, &url, &pki.path(ca_file)).await;
    let (state, error) = settled_delivery(&app).await;
    (url, state, error, accepted.load(Ordering::SeqCst))
}

#[tokio::test]
async fn a_webhook_reaches_an_https_receiver_of_a_private_ca() {
    if !can_run("openssl") {
        return;
    }
    let (_, state, error, accepted) = deliver_over_https("ca.pem").await;
    assert_eq!((state.as_str(), error, accepted), ("DELIVERED", None, 1));
}

#[tokio::test]
async fn a_webhook_receiver_with_a_certificate_of_another_ca_is_refused_naming_it() {
    if !can_run("openssl") {
        return;
    }
    let (url, state, error, accepted) = deliver_over_https("wrong-ca.pem").await;
    assert_eq!(state, "FAILED");
    let error = error.expect("the failure's reason");
    let host = url.trim_start_matches("https://").split('/').next().unwrap();
    assert!(error.contains(host), "{error}");
    assert!(error.to_lowercase().contains("certificate"), "{error}");
    assert_eq!(accepted, 0, "nothing reached the receiver");
}
