//! Configuration from the environment (and the command line, see `main.rs`).

use std::time::Duration;

/// `SHUTDOWN_GRACE_SECS` when unset: longer than any request of the service takes, shorter than a service manager's
/// patience (systemd waits 90 s before its SIGKILL).
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(20);

#[derive(Clone, Debug)]
pub struct Config {
    /// `sqlite://docnum.db` (embedded default) or `mysql://user:pass@host/db`.
    pub database_url: String,
    /// `DATABASE_SERVERS`: MariaDB's replication set (`host:port`); writes go to its writable server (`db::primary`).
    /// Empty: the URL's server alone.
    pub database_servers: Vec<String>,
    /// Load the demo data set on a first run (empty database).
    pub demo_data: bool,
    /// Password of the first super admin `admin`; generated and printed once when absent.
    pub bootstrap_admin_password: Option<String>,
    /// `METRICS_TOKEN`: with it, `/metrics` requires `Authorization: Bearer <token>`.
    pub metrics_token: Option<String>,
    pub reservation_ttl: Duration,
    pub sweep_interval: Duration,
    pub rate_limits: RateLimits,
    /// Mark the session cookie Secure (set when served over HTTPS).
    pub secure_cookies: bool,
    /// Proxies (CIDRs) whose `X-Forwarded-For` / `-Proto` / `-Host` are believed (`server::edge`); empty = none.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Redis servers for the distributed lock (one, or three or more for a Redlock quorum); empty = in-process lock.
    pub redis_urls: Vec<String>,
    /// `CLUSTER_SECRET`: with `REDIS_URLS`, instances forward a counter's batches to the instance holding its lock,
    /// authenticated by this secret (`numbering::forward`); None = each instance takes the lock in turn.
    pub cluster_secret: Option<String>,
    /// `ADVERTISE_URL`: where the other instances reach this one (default: `http://` + the listening address).
    pub advertise_url: Option<String>,
    pub lock: LockConfig,
    /// Most requests one counter's batch serves.
    pub max_batch: usize,
    /// MariaDB committers: each serves the batches of many counters (sharded by counter key) per transaction.
    pub committers: usize,
    /// Run the counter workers and the committers on threads of their own (`numbering::queue::CounterThreads`). The server
    /// binary turns it on; tests that start many services in one process leave it off.
    pub counter_thread: bool,
    /// Login throttling: failures per username and per client address before waits begin (`auth::throttle`).
    pub login_throttle: LoginThrottleConfig,
    /// Argon2 computations at once (`ARGON2_CONCURRENCY`); 0 = the machine's available parallelism.
    pub argon2_concurrency: usize,
    /// What ages out and when (`RETENTION_*`), and how often the daily prune runs (`retention`).
    pub retention: RetentionConfig,
    /// After SIGTERM / Ctrl-C, how long the requests in flight get (`SHUTDOWN_GRACE_SECS`); then the process logs
    /// what is left, lets its counter locks go and exits non-zero (docs/operations/README.md#deployment-modes: a stop ends).
    pub shutdown_grace: Duration,
    /// `WITNESS_FILE`: where the counters' heads are witnessed outside the database
    /// (docs/rules/numbering.md#what-is-never-done-twice). None: beside a SQLite
    /// database file (`<file>.witness`), none for MariaDB; `off`: none.
    pub witness_file: Option<String>,
    /// `WITNESS_REDIS`: with `REDIS_URLS`, whether the heads are also witnessed in those servers, shared by the
    /// instances (default true).
    pub witness_redis: bool,
    /// The webhooks' delivery (`NOTIFY_*`, `notifications`).
    pub notify: NotifyConfig,
    /// The numbers' transparency log (`LOG_*`, `tlog`).
    pub log: LogConfig,
    /// `INSTANCE_NAME`: who claims a job's run in `job_runs` and delivers webhooks, for an operator reading them
    /// (default: the host's name and the process id, [`host_instance_name`]).
    pub instance_name: String,
    /// `LEPTOS_WATCH` (set by `cargo leptos watch`): the pages' policy lets the live-reload socket connect.
    pub live_reload: bool,
}

/// `INSTANCE_NAME` as given (blank: [`host_instance_name`]), at most 200 characters (`job_runs.claimed_by`).
pub fn instance_name(given: Option<&str>) -> String {
    match given.map(str::trim).filter(|n| !n.is_empty()) {
        Some(name) => name.chars().take(200).collect(),
        None => host_instance_name(),
    }
}

/// The host's name (`HOSTNAME`, else `/etc/hostname`) and the process id.
pub fn host_instance_name() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown-host".into());
    format!("{host}:{}", std::process::id()).chars().take(200).collect()
}

/// Leptos settings from `Leptos.toml` when present (its `LEPTOS_*` environment variables override it), else the same
/// defaults with those variables.
pub fn leptos_options() -> leptos::config::LeptosOptions {
    use std::net::SocketAddr;
    match leptos::config::get_configuration(Some("Leptos.toml")) {
        Ok(conf) => conf.leptos_options,
        Err(_) => leptos::config::LeptosOptions::builder()
            .output_name("docnum")
            .site_root(std::env::var("LEPTOS_SITE_ROOT").unwrap_or_else(|_| "target/site".into()))
            .site_pkg_dir("pkg")
            .site_addr(std::env::var("LEPTOS_SITE_ADDR").ok().and_then(|a| a.parse().ok()).unwrap_or(SocketAddr::from(([127, 0, 0, 1], 3000))))
            // as Leptos.toml: the hashed names when the build wrote hash.txt (server::bundle turns it off otherwise)
            .hash_files(!std::env::var("LEPTOS_HASH_FILES").is_ok_and(|v| v == "false"))
            .build(),
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            database_url: "sqlite://docnum.db".into(),
            database_servers: Vec::new(),
            demo_data: true,
            bootstrap_admin_password: None,
            metrics_token: None,
            reservation_ttl: Duration::from_secs(300),
            sweep_interval: Duration::from_secs(1),
            rate_limits: RateLimits::default(),
            secure_cookies: false,
            trusted_proxies: Vec::new(),
            redis_urls: Vec::new(),
            cluster_secret: None,
            advertise_url: None,
            lock: LockConfig::default(),
            max_batch: 256,
            committers: DEFAULT_COMMITTERS,
            counter_thread: false,
            login_throttle: LoginThrottleConfig::default(),
            argon2_concurrency: 0,
            retention: RetentionConfig::default(),
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            witness_file: None,
            witness_redis: true,
            notify: NotifyConfig::default(),
            log: LogConfig::default(),
            instance_name: host_instance_name(),
            live_reload: false,
        }
    }
}

/// The numbers' transparency log (`tlog`).
#[derive(Clone, Debug)]
pub struct LogConfig {
    /// `LOG_ENABLED`: stage every numbering event for the log (default true; off only to measure what it costs).
    pub enabled: bool,
    /// `LOG_ORIGIN`: the log's name in its checkpoints and its key (`numbers.example/log`).
    pub origin: String,
    /// The signer key's text (`PRIVATE+KEY+<origin>+<id>+<key>`), read from `LOG_SIGNING_KEY_FILE`. None: a key made
    /// at start, good for that process only (receipts then verify against that run's `/log/key`).
    pub signing_key: Option<String>,
    /// `LOG_CHECKPOINT_MS`: a new checkpoint at most this long after the tree grew.
    pub checkpoint_interval: Duration,
    /// `LOG_CHECKPOINT_ENTRIES`: or as soon as this many entries were added since the last one.
    pub checkpoint_entries: u64,
    /// `LOG_SEQUENCE_MS`: how often the sequencer looks for staged events.
    pub sequence_interval: Duration,
    /// `LOG_WITNESSES`: the witnesses asked to cosign each new checkpoint (`tlog::cosign`).
    pub witnesses: Vec<LogWitness>,
    /// `LOG_WITNESS_TIMEOUT_MS`: how long a witness gets to answer.
    pub witness_timeout: Duration,
}

/// A witness of the log: its verifier key and its URL (`POST <url>/add-checkpoint`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogWitness {
    pub vkey: String,
    pub url: String,
}

/// One `LOG_WITNESSES` entry: `<witness vkey> <url>`.
pub fn parse_log_witness(entry: &str) -> Result<LogWitness, String> {
    let mut parts = entry.split_whitespace();
    let (Some(vkey), Some(url), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(format!("LOG_WITNESSES: {entry:?} is not `<witness vkey> <url>`"));
    };
    crate::receipt::cosignature::CosignatureVerifier::new(vkey)
        .map_err(|_| format!("LOG_WITNESSES: {vkey:?} is not a witness key (cosignature/v1)"))?;
    let parsed = url::Url::parse(url).map_err(|e| format!("LOG_WITNESSES: {url:?}: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("LOG_WITNESSES: {url:?} is not an http(s) URL"));
    }
    // the checkpoints and cosignatures are public, but a witness's answer is trusted: only TLS proves who gave it
    if parsed.scheme() == "http" && crate::server::tls::on_loopback(&parsed) != Some(true) {
        return Err(format!("LOG_WITNESSES: {url:?}: a witness on another host is reached over https only"));
    }
    Ok(LogWitness { vkey: vkey.to_string(), url: url.trim_end_matches('/').to_string() })
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            enabled: true,
            origin: "numbers.docnum.local/log".into(),
            signing_key: None,
            checkpoint_interval: Duration::from_secs(1),
            checkpoint_entries: 10_000,
            sequence_interval: Duration::from_secs(1),
            witnesses: Vec::new(),
            witness_timeout: Duration::from_secs(10),
        }
    }
}

// ---- each feature's settings: plain values, read here, used there ----

/// The counter lock's timings (`numbering::lock`).
#[derive(Clone, Debug)]
pub struct LockConfig {
    pub ttl: Duration,
    pub max_wait: Duration,
    pub retry_base: Duration,
    /// How long a PING may take before that server counts as unreachable.
    pub probe_timeout: Duration,
}

impl Default for LockConfig {
    fn default() -> Self {
        LockConfig {
            ttl: Duration::from_secs(5),
            max_wait: Duration::from_secs(5),
            // a holder keeps a batch's lock for a few milliseconds: poll at that pace, not at Redlock's 200 ms
            retry_base: Duration::from_millis(2),
            probe_timeout: Duration::from_millis(250),
        }
    }
}

/// MariaDB committers when the configuration does not say (`COMMITTERS`). One on a 2-core machine beside its
/// database: each halving of the committers doubled the groups and halved the commits and fsyncs. Four to two took a
/// fifth off the database's CPU per number (docs/benchmarks/mariadb.md). Two to one took another quarter, and gave
/// 12–25 % more on the spread row; rows of one counter use one committer anyway (the same heading). A larger database
/// server may want more.
pub const DEFAULT_COMMITTERS: usize = 1;

/// The numbering rate limits (`auth::rate_limit`), per minute; 0 = off.
#[derive(Clone, Debug)]
pub struct RateLimits {
    pub per_user_per_min: u32,
    pub per_ip_per_min: u32,
    pub global_per_min: u32,
    pub per_token_per_min: u32,
    /// The limits of preview, confirm and cancel are these limits times this factor (0 = no limit on them).
    pub light_factor: u32,
}

pub const DEFAULT_LIGHT_FACTOR: u32 = 10;

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits { per_user_per_min: 10, per_ip_per_min: 50, global_per_min: 5000, per_token_per_min: 6000, light_factor: DEFAULT_LIGHT_FACTOR }
    }
}

impl RateLimits {
    /// Every limit off (tests, benchmarks).
    pub fn off() -> RateLimits {
        RateLimits { per_user_per_min: 0, per_ip_per_min: 0, global_per_min: 0, per_token_per_min: 0, light_factor: DEFAULT_LIGHT_FACTOR }
    }

    /// The limits of the requests that take no new number (preview, confirm, cancel): each number limit times
    /// `light_factor`, saturating; 0 stays 0 (off).
    pub(crate) fn light(&self) -> RateLimits {
        let times = |limit: u32| limit.saturating_mul(self.light_factor);
        RateLimits {
            per_user_per_min: times(self.per_user_per_min),
            per_ip_per_min: times(self.per_ip_per_min),
            global_per_min: times(self.global_per_min),
            per_token_per_min: times(self.per_token_per_min),
            light_factor: self.light_factor,
        }
    }
}

/// Login throttling (`auth::throttle`): failures before the waits begin, and the waits.
#[derive(Clone, Debug, PartialEq)]
pub struct LoginThrottleConfig {
    /// Consecutive failures of one username before its waits begin (`LOGIN_FAILURES_PER_USER`; 0 = off).
    pub per_user_failures: u32,
    /// Failures from one client address, whatever the usernames, before its waits begin
    /// (`LOGIN_FAILURES_PER_ADDRESS`; 0 = off). Higher than the per-user one: an office behind one NAT shares it.
    pub per_address_failures: u32,
    /// The wait after the threshold-th failure; it doubles with each further one.
    pub first_wait: Duration,
    /// The longest wait (`LOGIN_MAX_WAIT_SECS`); failures are also forgotten this long after their wait ended.
    pub max_wait: Duration,
}

impl Default for LoginThrottleConfig {
    fn default() -> Self {
        LoginThrottleConfig {
            per_user_failures: 5,
            per_address_failures: 20,
            first_wait: Duration::from_secs(1),
            max_wait: Duration::from_secs(15 * 60),
        }
    }
}

/// The limits, plain values: `RETENTION_*` of `docnum serve` and `docnum prune`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetentionConfig {
    /// `RETENTION_LOGIN_ATTEMPTS_DAYS`: login attempts older than this go.
    pub login_attempts_days: u32,
    /// `RETENTION_RESOLVED_ERRORS_DAYS`: error-log rows resolved longer ago than this go.
    pub resolved_errors_days: u32,
    /// `RETENTION_IDEMPOTENCY_KEYS_HOURS`: idempotency keys older than this go (docs/rules/api.md#idempotency-keys promises them 24 h).
    pub idempotency_keys_hours: u32,
    /// `RETENTION_INTERVAL_SECS`: how often the job runs, across all instances sharing the database.
    pub interval: Duration,
    /// `RETENTION_NOTIFICATIONS_DAYS`: delivered notifications older than this go (docs/operations/README.md#retention says 30).
    pub notifications_days: u32,
}

impl Default for RetentionConfig {
    fn default() -> Self {
        RetentionConfig {
            login_attempts_days: 180,
            resolved_errors_days: 365,
            idempotency_keys_hours: 24,
            interval: Duration::from_secs(86_400),
            notifications_days: 30,
        }
    }
}

/// How webhooks are delivered (`notifications`): plain values, `NOTIFY_*`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotifyConfig {
    /// `NOTIFY_POLL_MS`: how often an instance looks for due deliveries (and new events to fan out).
    pub poll: Duration,
    /// `NOTIFY_MAX_ATTEMPTS`: attempts of one delivery before it is FAILED (a super admin may replay it).
    pub max_attempts: u32,
    /// `NOTIFY_BACKOFF_BASE_MS`: the wait after the first failed attempt; doubled after each (with jitter), at most
    /// an hour.
    pub backoff_base: Duration,
    /// `NOTIFY_TIMEOUT_MS`: how long a receiver gets to answer one delivery.
    pub timeout: Duration,
    /// `NOTIFY_CA_FILE`: CA certificates (PEM) trusted for https receivers beside the system store (and
    /// `SSL_CERT_FILE`): a receiver with a certificate of a private CA.
    pub ca_file: Option<std::path::PathBuf>,
    /// `WEBHOOK_ALLOW_PRIVATE_TARGETS`: webhooks may point at loopback, link-local, private and unique-local
    /// addresses (`notifications::targets`); off by default.
    pub allow_private_targets: bool,
    /// `SECRETS_KEY`: the webhooks' signing secrets are stored sealed with it (`secrets`); None: stored as given.
    pub secrets_key: Option<crate::server::secrets::SecretsKey>,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            poll: Duration::from_secs(1),
            max_attempts: 10,
            backoff_base: Duration::from_secs(5),
            timeout: Duration::from_secs(10),
            ca_file: None,
            allow_private_targets: false,
            secrets_key: None,
        }
    }
}

/// The settings that hold secrets (a password inside a URL counts): each may also be given as a file, `NAME_FILE`
/// (the containers' convention: Docker and Kubernetes secrets, systemd's `LoadCredential=`), which keeps it out of
/// `/proc/<pid>/environ` and out of the service manager's dumps.
pub const SECRET_SETTINGS: &[&str] =
    &["DATABASE_URL", "REDIS_URLS", "METRICS_TOKEN", "BOOTSTRAP_ADMIN_PASSWORD", "SECRETS_KEY", "CLUSTER_SECRET", "NEW_USER_PASSWORD"];

/// The values of the [`SECRET_SETTINGS`] given as `NAME_FILE`: (NAME, the file's text without its final line break).
/// Both NAME and NAME_FILE set is an error (which one is meant?), as is a file that cannot be read. Errors name the
/// setting and the file, never the value.
pub fn secrets_from_files(
    var: impl Fn(&str) -> Option<String>,
    read: impl Fn(&str) -> std::io::Result<String>,
) -> Result<Vec<(&'static str, String)>, String> {
    let mut found = Vec::new();
    for &name in SECRET_SETTINGS {
        let Some(path) = var(&format!("{name}_FILE")).filter(|p| !p.trim().is_empty()) else { continue };
        if var(name).is_some() {
            return Err(format!("{name} and {name}_FILE are both set: set one"));
        }
        let text = read(&path).map_err(|e| format!("{name}_FILE {path}: {e}"))?;
        let value = text.strip_suffix('\n').map(|t| t.strip_suffix('\r').unwrap_or(t)).unwrap_or(&text);
        found.push((name, value.to_string()));
    }
    Ok(found)
}

/// Puts the secrets of `NAME_FILE`s into the environment as `NAME`, where the rest of the configuration reads them.
/// Called by `main` before the runtime and its threads start (the environment is not safe to change beside other
/// threads). The process's own `/proc/<pid>/environ` still shows what it was started with only.
pub fn load_secret_files() -> Result<(), String> {
    for (name, value) in secrets_from_files(|n| std::env::var(n).ok(), |path: &str| std::fs::read_to_string(path))? {
        std::env::set_var(name, value);
        std::env::remove_var(format!("{name}_FILE"));
    }
    Ok(())
}

/// One entry of `TRUSTED_PROXIES`: a CIDR (`10.0.0.0/8`, `fd00::/8`) or a single address (`192.0.2.7`).
pub fn parse_trusted_proxy(entry: &str) -> Result<ipnet::IpNet, String> {
    let entry = entry.trim();
    entry
        .parse::<ipnet::IpNet>()
        .map(|net| net.trunc())
        .or_else(|_| entry.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("TRUSTED_PROXIES: {entry:?} is neither a CIDR (10.0.0.0/8) nor an IP address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instance_name_is_bounded_to_its_column_and_defaults_to_the_host() {
        assert_eq!(instance_name(Some(" web-1 ")), "web-1");
        assert_eq!(instance_name(Some(&"ก".repeat(300))).chars().count(), 200);
        let host = instance_name(Some("  "));
        assert!(host.ends_with(&format!(":{}", std::process::id())), "{host}");
        assert_eq!(instance_name(None), host);
    }

    #[test]
    fn a_log_witness_is_a_cosignature_key_and_an_https_url_or_one_on_loopback() {
        let (_, vkey) = crate::receipt::cosignature::CosignatureSigner::generate("witness.example/w1", [5; 32]).unwrap();
        assert_eq!(
            parse_log_witness(&format!(" {vkey}  https://w.example/witness/ ")),
            Ok(LogWitness { vkey: vkey.clone(), url: "https://w.example/witness".into() })
        );
        for bad in [
            vkey.clone(),
            format!("{vkey} ftp://w.example"),
            format!("{vkey} https://w.example extra"),
            "numbers.example/log+00000000+AQ== http://w".into(),
            format!("{vkey} http://w.example/witness"),
            format!("{vkey} http://10.0.0.7:7380"),
        ] {
            assert!(parse_log_witness(&bad).is_err(), "{bad}");
        }
        for local in ["http://127.0.0.1:7380", "http://localhost:7380/w", "http://[::1]:7380"] {
            assert_eq!(parse_log_witness(&format!("{vkey} {local}")).map(|w| w.url), Ok(local.to_string()), "{local}");
        }
        let (_, log_vkey) = signed_note::generate_key(&mut rand::rngs::OsRng, "numbers.example/log");
        assert!(parse_log_witness(&format!("{log_vkey} https://w.example")).is_err(), "a log's key is not a witness's");
    }

    #[test]
    fn trusted_proxies_are_cidrs_or_addresses() {
        assert_eq!(parse_trusted_proxy(" 10.1.2.3/8 ").unwrap().to_string(), "10.0.0.0/8");
        assert_eq!(parse_trusted_proxy("192.0.2.7").unwrap().to_string(), "192.0.2.7/32");
        assert_eq!(parse_trusted_proxy("::1").unwrap().to_string(), "::1/128");
        assert!(parse_trusted_proxy("10.0.0.0/33").is_err());
        assert!(parse_trusted_proxy("proxy.local").is_err());
    }

    #[test]
    fn secrets_come_from_files_without_their_final_line_break() {
        let env: std::collections::HashMap<&str, &str> =
            [("DATABASE_URL_FILE", "/run/secrets/db"), ("METRICS_TOKEN_FILE", "/run/secrets/metrics"), ("LISTEN_ADDR_FILE", "/x")].into();
        let read = |path: &str| match path {
            "/run/secrets/db" => Ok("mysql://docnum:pw@db/docnum\n".to_string()),
            "/run/secrets/metrics" => Ok("token-1\r\n".to_string()),
            _ => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
        };
        let found = secrets_from_files(|n| env.get(n).map(|v| v.to_string()), read).unwrap();
        assert_eq!(found, vec![("DATABASE_URL", "mysql://docnum:pw@db/docnum".to_string()), ("METRICS_TOKEN", "token-1".to_string())]);
    }

    #[test]
    fn a_secret_given_twice_or_unreadable_is_an_error_that_does_not_show_it() {
        let both: std::collections::HashMap<&str, &str> = [("SECRETS_KEY", "k3y-value"), ("SECRETS_KEY_FILE", "/run/secrets/key")].into();
        let err = secrets_from_files(|n| both.get(n).map(|v| v.to_string()), |_| Ok("k3y-value".into())).unwrap_err();
        assert!(err.contains("SECRETS_KEY_FILE") && !err.contains("k3y-value"), "{err}");
        let missing: std::collections::HashMap<&str, &str> = [("REDIS_URLS_FILE", "/nonexistent/redis")].into();
        let err = secrets_from_files(|n| missing.get(n).map(|v| v.to_string()), |p| std::fs::read_to_string(p)).unwrap_err();
        assert!(err.starts_with("REDIS_URLS_FILE /nonexistent/redis"), "{err}");
    }
}
