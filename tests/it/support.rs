//! Real servers a test starts on its own loopback ports and stops by PID: Redis, and the `docnum` binary.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A redis-server child process; killed when dropped.
pub struct RedisServer {
    pub port: u16,
    child: Option<Child>,
}

impl RedisServer {
    pub async fn start() -> RedisServer {
        RedisServer::start_on(free_port()).await
    }

    pub async fn start_on(port: u16) -> RedisServer {
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server must be installed (scripts/services.sh installs it)");
        let server = RedisServer { port, child: Some(child) };
        for _ in 0..100 {
            if server.ping().await {
                return server;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("redis-server on port {port} did not start");
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub async fn ping(&self) -> bool {
        let Ok(client) = redis::Client::open(self.url()) else { return false };
        let Ok(mut con) = client.get_multiplexed_async_connection().await else { return false };
        redis::cmd("PING").query_async::<String>(&mut con).await.is_ok()
    }

    pub async fn connection(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.url()).unwrap().get_multiplexed_async_connection().await.unwrap()
    }

    /// `kill -STOP` / `kill -CONT`: the server stalls (its connections stay open, nothing is answered) and resumes.
    pub fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("running").id();
        let status = Command::new("kill").args([signal, &pid.to_string()]).status().unwrap();
        assert!(status.success(), "kill {signal} {pid}");
    }

    /// `kill -9`: the server vanishes without a goodbye.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A `docnum serve` child process; killed when dropped.
pub struct DocnumServer {
    pub base: String,
    child: Child,
}

impl DocnumServer {
    pub fn start(db_url: &str, extra_env: &[(&str, String)]) -> DocnumServer {
        DocnumServer::start_logging(db_url, extra_env, Stdio::inherit())
    }

    /// As `start`, its log (stderr) going to `log`.
    pub fn start_logging(db_url: &str, extra_env: &[(&str, String)], log: impl Into<Stdio>) -> DocnumServer {
        let port = free_port();
        // DOCNUM_TEST_SERVER_BIN: another build of the server (an older commit's, to see a test fail there)
        let bin = std::env::var("DOCNUM_TEST_SERVER_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_docnum").to_string());
        let mut cmd = Command::new(bin);
        cmd.args(["serve", "--addr", &format!("127.0.0.1:{port}")])
            .env("DATABASE_URL", db_url)
            .env("BOOTSTRAP_ADMIN_PASSWORD", "test-admin-password")
            .env("CLOCK_START", "2025-06-15T03:00:00Z")
            .env("RATE_LIMIT_TOKEN_PER_MIN", "0")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log);
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        DocnumServer { base: format!("http://127.0.0.1:{port}"), child: cmd.spawn().expect("start docnum") }
    }

    /// The process id (to read its `/proc/<pid>/status`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `kill -9`: the process dies mid-work, as in a crash, and is reaped.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends SIGTERM (what a service manager sends) and waits up to 10 s for the process to end.
    pub async fn terminate(&mut self) -> std::process::ExitStatus {
        self.terminate_within(Duration::from_secs(10)).await.0
    }

    /// Sends SIGTERM and waits up to `patience` for the process to end: its exit status, and how long it took.
    pub async fn terminate_within(&mut self, patience: Duration) -> (std::process::ExitStatus, Duration) {
        let pid = self.child.id().to_string();
        let sent = std::time::Instant::now();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        while sent.elapsed() < patience {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (status, sent.elapsed());
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("docnum did not stop within {patience:?} of SIGTERM");
    }

    /// Its `docnum_forwarded_jobs_total{outcome=…}` (jobs sent to a counter's lock holder, or received as one).
    pub async fn forwarded_jobs(&self, outcome: &str) -> f64 {
        let text = reqwest::get(format!("{}/metrics", self.base)).await.unwrap().text().await.unwrap();
        let series = format!("docnum_forwarded_jobs_total{{outcome=\"{outcome}\"}}");
        text.lines().find_map(|l| l.strip_prefix(&series)).map(|v| v.trim().parse().unwrap()).unwrap_or_else(|| panic!("{series} not exported"))
    }

    pub async fn wait_healthy(&self, client: &reqwest::Client) {
        for _ in 0..300 {
            if let Ok(r) = client.get(format!("{}/health", self.base)).send().await {
                if r.status().is_success() {
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{} did not become healthy", self.base);
    }
}

impl Drop for DocnumServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
