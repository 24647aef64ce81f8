//! Which MariaDB server takes the writes (docs/operations/README.md#failover). MariaDB's own semi-synchronous replication keeps a replica;
//! an operator (or MariaDB's tooling) promotes it when the primary is lost. The service finds the new primary
//! itself, among the servers of `DATABASE_SERVERS`: the one whose `read_only` is off. It never writes to a
//! read-only server:
//! - every new connection asks the server, and a read-only one is refused ([`refuse_read_only`]);
//! - a connection opened before the primary changed (a switch, or the current server found read-only or gone) is
//!   not used again ([`Primary::opened_before_change`], [`Primary::changed_since`]);
//! - a watcher probes the servers every [`CALM_PROBE`] (every [`ALERT_PROBE`] after a connection error) and points
//!   the pools at the one writable server when it changes. With several writable servers it picks none: that is
//!   two primaries, and only a person can tell which one holds the numbers.
//!
//! The counters are not cached between batches (each batch reads its counter `FOR UPDATE`); what is cached (the
//! reference snapshot) compares [`Primary::generation`] and reads again after a switch. A replica that missed commits
//! is caught by the witness (`numbering::witness`), not here.

use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sqlx::mysql::{MySqlConnectOptions, MySqlPool};
use sqlx::{AnyPool, ConnectOptions, Connection};

use super::failure::suspecting_connections;

/// How often the servers are probed while all is well.
const CALM_PROBE: Duration = Duration::from_secs(2);
/// How often after a connection error (`failure::suspect_connections`): a promotion is found within this.
const ALERT_PROBE: Duration = Duration::from_millis(200);
/// A probe's patience with one server (connect and one query).
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);
/// At start, how long the service waits for one writable server among several.
const START_PATIENCE: Duration = Duration::from_secs(30);

/// Asks a server whether it is read-only, as a number on every driver.
const READ_ONLY_QUERY: &str = "SELECT CAST(@@global.read_only AS SIGNED)";

/// The error of a connection to a read-only server: a connection failure (503, retried), not a refused statement.
pub(crate) fn read_only_refusal() -> sqlx::Error {
    sqlx::Error::Io(std::io::Error::new(
        std::io::ErrorKind::ConnectionRefused,
        "the MariaDB server is read-only (a replica): the service writes to the primary only",
    ))
}

/// `Err` (a connection failure) when the server of `conn` is read-only (see [`READ_ONLY_QUERY`]).
pub(crate) async fn refuse_read_only(conn: &mut sqlx::AnyConnection) -> Result<(), sqlx::Error> {
    writable_or_refused(sqlx::query_scalar(READ_ONLY_QUERY).fetch_one(conn).await?)
}

/// [`refuse_read_only`] for a typed MariaDB connection (the session store's). The two drivers' connections share no
/// executor type a pool callback's future can be generic over, hence the twin; the answer is read in one place.
pub(crate) async fn refuse_read_only_mysql(conn: &mut sqlx::MySqlConnection) -> Result<(), sqlx::Error> {
    writable_or_refused(sqlx::query_scalar(READ_ONLY_QUERY).fetch_one(conn).await?)
}

/// What [`READ_ONLY_QUERY`] answered, as the pools take it.
fn writable_or_refused(read_only: i64) -> Result<(), sqlx::Error> {
    if read_only == 0 {
        Ok(())
    } else {
        Err(read_only_refusal())
    }
}

/// What a probe found a server to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    Writable,
    ReadOnly,
    Unreachable,
}

/// What the watcher does after a round of probes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// The current server is the one writable server.
    Stay,
    /// Another server is the one writable server.
    SwitchTo(usize),
    /// No server is writable (the primary is gone and none promoted yet, or the only one is read-only).
    NoPrimary,
    /// More than one is writable: two primaries. Writes stop until a person has made one of them read-only.
    SeveralPrimaries,
}

/// The rule of the watcher, without I/O.
pub(crate) fn decide(current: usize, probes: &[Probe]) -> Decision {
    let writable: Vec<usize> = probes.iter().enumerate().filter(|(_, p)| **p == Probe::Writable).map(|(i, _)| i).collect();
    match writable.as_slice() {
        [] => Decision::NoPrimary,
        [one] if *one == current => Decision::Stay,
        [one] => Decision::SwitchTo(*one),
        _ => Decision::SeveralPrimaries,
    }
}

/// A pool that follows the primary: its connect options are pointed at the new one on a switch.
enum Follower {
    Any(AnyPool, String),
    MySql(MySqlPool),
}

/// When the primary last changed: shared by the `Primary` and its pools' callbacks (which cannot hold the
/// `Primary`: it holds the pools).
pub(crate) struct Changes {
    born: Instant,
    /// When (ns after `born`) the primary last changed; 0: never.
    changed_at_ns: AtomicU64,
}

impl Changes {
    fn new() -> Changes {
        Changes { born: Instant::now(), changed_at_ns: AtomicU64::new(0) }
    }

    /// Changes whenever the primary does: what is cached from the database is read again when this moved.
    pub(crate) fn generation(&self) -> u64 {
        self.changed_at_ns.load(Ordering::SeqCst)
    }

    /// Whether a connection of this `age` was opened before the primary last changed (it may lead to the old one).
    pub(crate) fn opened_before_change(&self, age: Duration) -> bool {
        let changed = self.changed_at_ns.load(Ordering::SeqCst);
        changed != 0 && age.as_nanos() > (self.born.elapsed().as_nanos()).saturating_sub(u128::from(changed))
    }

    /// Whether the primary changed after `since` (a committer's kept connection is given up then).
    pub(crate) fn changed_since(&self, since: Instant) -> bool {
        let changed = self.changed_at_ns.load(Ordering::SeqCst);
        changed != 0 && self.born + Duration::from_nanos(changed) > since
    }

    fn mark(&self) {
        let ns = u64::try_from(self.born.elapsed().as_nanos()).unwrap_or(u64::MAX).max(1);
        self.changed_at_ns.store(ns, Ordering::SeqCst);
    }
}

/// The servers and which of them takes the writes now. One per `Db`; SQLite has a `Primary` of no servers.
pub struct Primary {
    /// `host:port` of each server (`DATABASE_SERVERS`); the URL's own when that is unset.
    servers: Vec<String>,
    /// The URL of the service's connections (user, password, database, parameters), whatever its host.
    base_url: String,
    current: AtomicUsize,
    writable: AtomicBool,
    changes: Arc<Changes>,
    switches: AtomicU64,
    followers: Mutex<Vec<(&'static str, Follower)>>,
}

impl Primary {
    /// For SQLite: no servers, never changes.
    pub(crate) fn none() -> Arc<Primary> {
        Arc::new(Primary::new(Vec::new(), String::new(), 0))
    }

    fn new(servers: Vec<String>, base_url: String, current: usize) -> Primary {
        Primary {
            servers,
            base_url,
            current: AtomicUsize::new(current),
            writable: AtomicBool::new(true),
            changes: Arc::new(Changes::new()),
            switches: AtomicU64::new(0),
            followers: Mutex::new(Vec::new()),
        }
    }

    /// Finds the one writable server among `servers` (`host:port`; empty: the URL's own server, used as it is) and
    /// returns the primary and the URL of that server. Waits up to [`START_PATIENCE`] for a primary to appear;
    /// refuses to start beside two.
    pub(crate) async fn find(url: &str, servers: &[String]) -> Result<(Arc<Primary>, String), sqlx::Error> {
        if servers.is_empty() {
            let own = server_of(url)?;
            return Ok((Arc::new(Primary::new(vec![own], url.to_string(), 0)), url.to_string()));
        }
        for server in servers {
            with_server(url, server)?; // every entry is a host:port, told at start
        }
        let primary = Primary::new(servers.to_vec(), url.to_string(), 0);
        let deadline = Instant::now() + START_PATIENCE;
        loop {
            let probes = primary.probe_all().await;
            match decide(usize::MAX, &probes) {
                Decision::SwitchTo(i) => {
                    primary.current.store(i, Ordering::SeqCst);
                    let url = with_server(url, &primary.servers[i])?;
                    tracing::info!(primary = %primary.servers[i], servers = ?primary.servers, "database primary found");
                    return Ok((Arc::new(primary), url));
                }
                Decision::SeveralPrimaries => {
                    return Err(sqlx::Error::Configuration(
                        format!(
                            "more than one writable server among DATABASE_SERVERS ({}): {probes:?}; make all but the primary read-only",
                            servers.join(", ")
                        )
                        .into(),
                    ))
                }
                Decision::NoPrimary | Decision::Stay if Instant::now() < deadline => {
                    tracing::warn!(servers = ?primary.servers, ?probes, "no writable database server yet");
                    tokio::time::sleep(ALERT_PROBE * 5).await;
                }
                _ => {
                    return Err(sqlx::Error::Configuration(
                        format!(
                            "no writable server among DATABASE_SERVERS ({}) after {} s: {probes:?}",
                            servers.join(", "),
                            START_PATIENCE.as_secs()
                        )
                        .into(),
                    ))
                }
            }
        }
    }

    /// Points `pool` (opened with `url`, any host) at the primary from now on, in place of an earlier pool of that name.
    pub(crate) fn follow(&self, name: &'static str, pool: AnyPool, url: String) {
        self.add_follower(name, Follower::Any(pool, url));
    }

    /// Points a typed MariaDB pool (the session store's) at the primary from now on.
    pub(crate) fn follow_mysql(&self, name: &'static str, pool: MySqlPool) {
        self.add_follower(name, Follower::MySql(pool));
    }

    fn add_follower(&self, name: &'static str, follower: Follower) {
        let mut followers = self.followers.lock().expect("followers");
        followers.retain(|(n, _)| *n != name);
        followers.push((name, follower));
    }

    /// The server now taking the writes (`host:port`).
    pub fn current(&self) -> Option<&str> {
        self.servers.get(self.current.load(Ordering::SeqCst)).map(String::as_str)
    }

    /// The service's URL at the server now taking the writes: for a pool opened after the start (the committers',
    /// the session store's).
    pub(crate) fn url(&self) -> Result<String, sqlx::Error> {
        match self.current() {
            Some(server) => with_server(&self.base_url, server),
            None => Ok(self.base_url.clone()),
        }
    }

    /// Whether the last probe found the current server writable.
    pub(crate) fn writable(&self) -> bool {
        self.writable.load(Ordering::SeqCst)
    }

    /// How many times the service has moved to another server.
    pub(crate) fn switches(&self) -> u64 {
        self.switches.load(Ordering::SeqCst)
    }

    /// When the primary last changed (see [`Changes`]).
    pub(crate) fn changes(&self) -> &Arc<Changes> {
        &self.changes
    }

    /// Probes every server, each with its own patience of [`PROBE_TIMEOUT`].
    async fn probe_all(&self) -> Vec<Probe> {
        futures::future::join_all(self.servers.iter().map(|s| probe(&self.base_url, s))).await
    }

    /// Probes the servers until `pool` is closed, and follows the primary (see the module's comment).
    /// Ends when the `Db` is gone or its pool closed.
    pub(crate) fn watch(self: &Arc<Self>, pool: &AnyPool) {
        if self.servers.is_empty() {
            return;
        }
        let (primary, pool) = (Arc::downgrade(self), pool.clone());
        tokio::spawn(async move {
            loop {
                let pause = match primary.upgrade() {
                    Some(p) if !pool.is_closed() => {
                        if suspecting_connections() || !p.writable() {
                            ALERT_PROBE
                        } else {
                            CALM_PROBE
                        }
                    }
                    _ => return,
                };
                tokio::time::sleep(pause).await;
                let Some(p) = primary.upgrade() else { return };
                let probes = p.probe_all().await;
                p.apply(decide(p.current.load(Ordering::SeqCst), &probes), &probes);
            }
        });
    }

    fn apply(&self, decision: Decision, probes: &[Probe]) {
        match decision {
            Decision::Stay => {
                if !self.writable.swap(true, Ordering::SeqCst) {
                    tracing::warn!(primary = ?self.current(), "the database server is writable again");
                }
            }
            Decision::SwitchTo(i) => {
                let from = self.current().map(str::to_string);
                if let Err(e) = self.point_followers_at(&self.servers[i]) {
                    tracing::error!(error = %e, server = %self.servers[i], "cannot point the pools at the new primary");
                    return;
                }
                self.current.store(i, Ordering::SeqCst);
                self.changes.mark();
                self.switches.fetch_add(1, Ordering::SeqCst);
                self.writable.store(true, Ordering::SeqCst);
                tracing::warn!(?from, to = %self.servers[i], "the database primary moved: writes go to the new primary");
            }
            Decision::NoPrimary | Decision::SeveralPrimaries => {
                if self.writable.swap(false, Ordering::SeqCst) {
                    // connections to the current server are not used again: it may be read-only now, and the
                    // service's user may be one that read_only does not stop
                    self.changes.mark();
                    if decision == Decision::SeveralPrimaries {
                        tracing::error!(servers = ?self.servers, ?probes, "more than one writable database server: writes stop until only one is");
                    } else {
                        tracing::error!(servers = ?self.servers, ?probes, "no writable database server");
                    }
                }
            }
        }
    }

    fn point_followers_at(&self, server: &str) -> Result<(), sqlx::Error> {
        for (_, follower) in self.followers.lock().expect("followers").iter() {
            match follower {
                Follower::Any(pool, url) => pool.set_connect_options(sqlx::any::AnyConnectOptions::from_str(&with_server(url, server)?)?),
                Follower::MySql(pool) => {
                    let (host, port) = split_server(server)?;
                    let options = (*pool.connect_options()).clone().host(&host).port(port);
                    pool.set_connect_options(options);
                }
            }
        }
        Ok(())
    }
}

/// Connects to `server` as `url` says and asks whether it is read-only.
async fn probe(url: &str, server: &str) -> Probe {
    let attempt = async {
        let options = MySqlConnectOptions::from_str(&with_server(url, server)?)?;
        let mut conn = options.connect().await?;
        let read_only: i64 = sqlx::query_scalar(READ_ONLY_QUERY).fetch_one(&mut conn).await?;
        let _ = conn.close().await;
        Ok::<_, sqlx::Error>(read_only)
    };
    match tokio::time::timeout(PROBE_TIMEOUT, attempt).await {
        Ok(Ok(0)) => Probe::Writable,
        Ok(Ok(_)) => Probe::ReadOnly,
        _ => Probe::Unreachable,
    }
}

/// `url` with its host and port replaced by `server` (`host:port`).
pub(crate) fn with_server(url: &str, server: &str) -> Result<String, sqlx::Error> {
    let (host, port) = split_server(server)?;
    let mut parsed = url::Url::parse(url).map_err(|e| sqlx::Error::Configuration(format!("DATABASE_URL: {e}").into()))?;
    parsed.set_host(Some(&host)).map_err(|e| sqlx::Error::Configuration(format!("DATABASE_SERVERS entry {server:?}: {e}").into()))?;
    parsed
        .set_port(Some(port))
        .map_err(|()| sqlx::Error::Configuration(format!("DATABASE_URL cannot take a port: {}", crate::server::tls::redact(url)).into()))?;
    Ok(parsed.to_string())
}

/// The `host:port` of a URL (port 3306 when it names none).
fn server_of(url: &str) -> Result<String, sqlx::Error> {
    let parsed = url::Url::parse(url).map_err(|e| sqlx::Error::Configuration(format!("DATABASE_URL: {e}").into()))?;
    Ok(format!("{}:{}", parsed.host_str().unwrap_or("localhost"), parsed.port().unwrap_or(3306)))
}

fn split_server(server: &str) -> Result<(String, u16), sqlx::Error> {
    let bad = || sqlx::Error::Configuration(format!("DATABASE_SERVERS entries are host:port, not {server:?}").into());
    let (host, port) = server.trim().rsplit_once(':').ok_or_else(bad)?;
    let port = port.parse::<u16>().map_err(|_| bad())?;
    if host.is_empty() || port == 0 {
        return Err(bad());
    }
    Ok((host.trim_start_matches('[').trim_end_matches(']').to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Probe::*;

    #[test]
    fn the_one_writable_server_is_the_primary() {
        assert_eq!(decide(0, &[Writable, ReadOnly]), Decision::Stay);
        assert_eq!(decide(0, &[Unreachable, Writable]), Decision::SwitchTo(1));
        assert_eq!(decide(1, &[Writable, ReadOnly, Unreachable]), Decision::SwitchTo(0));
        // the primary killed and no replica promoted yet
        assert_eq!(decide(0, &[Unreachable, ReadOnly]), Decision::NoPrimary);
        assert_eq!(decide(0, &[ReadOnly]), Decision::NoPrimary);
        // two primaries: none is chosen, not even the current one
        assert_eq!(decide(0, &[Writable, Writable]), Decision::SeveralPrimaries);
    }

    #[test]
    fn a_server_replaces_the_urls_host_and_port_and_keeps_the_rest() {
        let url = "mysql://docnum:s%40cret@db-a:3306/docnum?statement-cache-capacity=400";
        assert_eq!(with_server(url, "10.0.0.7:3307").unwrap(), "mysql://docnum:s%40cret@10.0.0.7:3307/docnum?statement-cache-capacity=400");
        assert_eq!(with_server("mysql://root@127.0.0.1/test", "127.0.0.1:3410").unwrap(), "mysql://root@127.0.0.1:3410/test");
        assert_eq!(server_of("mysql://root@127.0.0.1/test").unwrap(), "127.0.0.1:3306");
        for bad in ["db-a", "db-a:", ":3306", "db-a:0", "db-a:http"] {
            assert!(with_server(url, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn connections_opened_before_a_change_are_not_used_again() {
        let changes = Changes::new();
        assert!(!changes.opened_before_change(Duration::from_secs(3600)), "no change yet");
        assert_eq!(changes.generation(), 0);
        let before = Instant::now();
        std::thread::sleep(Duration::from_millis(5));
        changes.mark();
        assert_ne!(changes.generation(), 0);
        assert!(changes.changed_since(before));
        assert!(!changes.changed_since(Instant::now()));
        assert!(changes.opened_before_change(changes.born.elapsed()), "as old as the clock itself");
        assert!(!changes.opened_before_change(Duration::ZERO), "a connection opened now");
    }
}
