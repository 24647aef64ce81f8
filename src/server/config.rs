//! Configuration from the environment (and the command line, see `main.rs`).

use std::time::Duration;

use crate::server::auth::rate_limit::RateLimits;
use crate::server::auth::throttle::LoginThrottleConfig;
use crate::server::numbering::lock::LockConfig;
use crate::server::retention::RetentionConfig;

/// `SHUTDOWN_GRACE_SECS` when unset: longer than any request of the service takes, shorter than a service manager's
/// patience (systemd waits 90 s before its SIGKILL).
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(20);

#[derive(Clone, Debug)]
pub struct Config {
    /// `sqlite://docnum.db` (embedded default) or `mysql://user:pass@host/db`.
    pub database_url: String,
    /// Load the demo data set on a first run (empty database).
    pub demo_data: bool,
    /// Password of the first super admin `admin`; generated and printed once when absent.
    pub bootstrap_admin_password: Option<String>,
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
    /// what is left, lets its counter locks go and exits non-zero (SPEC §11: a stop ends).
    pub shutdown_grace: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            database_url: "sqlite://docnum.db".into(),
            demo_data: true,
            bootstrap_admin_password: None,
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
            committers: crate::server::numbering::committer::DEFAULT_COMMITTERS,
            counter_thread: false,
            login_throttle: LoginThrottleConfig::default(),
            argon2_concurrency: 0,
            retention: RetentionConfig::default(),
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
        }
    }
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
    fn trusted_proxies_are_cidrs_or_addresses() {
        assert_eq!(parse_trusted_proxy(" 10.1.2.3/8 ").unwrap().to_string(), "10.0.0.0/8");
        assert_eq!(parse_trusted_proxy("192.0.2.7").unwrap().to_string(), "192.0.2.7/32");
        assert_eq!(parse_trusted_proxy("::1").unwrap().to_string(), "::1/128");
        assert!(parse_trusted_proxy("10.0.0.0/33").is_err());
        assert!(parse_trusted_proxy("proxy.local").is_err());
    }
}
