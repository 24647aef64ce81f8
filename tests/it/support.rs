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

/// A MariaDB server of its own (`mariadbd` on a free port, a data directory of its own), configured as
/// `deploy/mariadb/replication.cnf` configures a server of a replication set: it starts read-only. Killed when dropped.
pub struct MariaDbServer {
    pub port: u16,
    dir: std::path::PathBuf,
    child: Option<Child>,
}

impl MariaDbServer {
    /// Whether this machine can start one (`.ci/run` installs MariaDB; under CI a missing one fails the test).
    pub fn available() -> bool {
        let there = std::path::Path::new("/usr/sbin/mariadbd").exists();
        assert!(there || std::env::var_os("CI").is_none(), "mariadbd is not installed, and CI is set");
        there
    }

    /// A new server in `dir` (a fresh data directory).
    pub async fn create(dir: &std::path::Path) -> MariaDbServer {
        MariaDbServer::create_with(dir, &[]).await
    }

    /// A new server in `dir`, started with extra `mariadbd` options (its TLS files, say).
    pub async fn create_with(dir: &std::path::Path, extra: &[&str]) -> MariaDbServer {
        let datadir = dir.join("data");
        std::fs::create_dir_all(dir.join("tmp")).expect("the server's temporary directory");
        let out = Command::new("mariadb-install-db")
            .args([
                "--no-defaults",
                &format!("--datadir={}", datadir.display()),
                &format!("--tmpdir={}", dir.join("tmp").display()),
                "--user=root",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ])
            .output()
            .expect("mariadb-install-db");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let mut server = MariaDbServer { port: free_port(), dir: dir.to_path_buf(), child: None };
        server.start(extra).await;
        server
    }

    /// Starts the server on its data directory (again, after a kill), with extra `mariadbd` options.
    pub async fn start(&mut self, extra: &[&str]) {
        let d = &self.dir;
        let child = Command::new("/usr/sbin/mariadbd")
            .arg(format!("--defaults-file={}/deploy/mariadb/replication.cnf", env!("CARGO_MANIFEST_DIR")))
            .args([
                "--user=root".to_string(),
                format!("--datadir={}", d.join("data").display()),
                // A starting mariadbd deletes every `#sql*` file of its tmpdir as a crashed server's leftovers: in a
                // shared /tmp that is the temporary tables of every other server running (the machine's own, another
                // test's), and their statements fail. Each server of a test has its own.
                format!("--tmpdir={}", d.join("tmp").display()),
                format!("--port={}", self.port),
                "--bind-address=127.0.0.1".to_string(),
                format!("--socket={}", d.join("mysql.sock").display()),
                format!("--pid-file={}", d.join("mysql.pid").display()),
                format!("--log-error={}", d.join("mysql.err").display()),
                format!("--server-id={}", self.port),
                "--innodb-buffer-pool-size=64M".to_string(),
            ])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start mariadbd");
        self.child = Some(child);
        for _ in 0..240 {
            if Command::new("mariadb").args(self.client_args()).args(["-e", "SELECT 1"]).output().is_ok_and(|o| o.status.success()) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        panic!("mariadbd on {} did not start: {}", self.port, std::fs::read_to_string(d.join("mysql.err")).unwrap_or_default());
    }

    /// `host:port`, as `DATABASE_SERVERS` names it.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The `mariadb` client's options for its root user.
    pub fn client_args(&self) -> Vec<String> {
        vec!["-uroot".into(), "-h127.0.0.1".into(), format!("-P{}", self.port)]
    }

    /// Runs SQL as root and returns what it printed (tab-separated, no column names).
    pub fn sql(&self, sql: &str) -> String {
        let out = Command::new("mariadb").args(self.client_args()).args(["-N", "-e", sql]).output().expect("run mariadb");
        assert!(out.status.success(), "{sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Runs one of the operator's scripts of `deploy/mariadb` (promote.sh, rejoin.sh) with these arguments.
    pub fn operator(script: &str, args: &[String]) {
        let out = Command::new("bash")
            .arg(format!("{}/deploy/mariadb/{script}", env!("CARGO_MANIFEST_DIR")))
            .args(args)
            .output()
            .expect("run the operator's script");
        assert!(out.status.success(), "{script}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    }

    /// `kill -9`: the server dies with whatever was in flight.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for MariaDbServer {
    fn drop(&mut self) {
        self.kill();
    }
}
