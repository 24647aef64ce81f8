//! Step 1 of the double lock (docs/rules/numbering.md#concurrency-the-double-lock): the lock on a counter key around each batch.
//!
//! - Embedded default (no Redis configured): the per-key queue already guarantees one batch per key in
//!   this process; SQLite's `BEGIN IMMEDIATE` and the version check cover other processes.
//! - `REDIS_URLS`: a Redlock (rslock) over one or several independent Redis servers, TTL 5 s. A lock
//!   held elsewhere is waited for (exponential backoff with jitter, bounded → NB003); only Redis being
//!   unreachable — checked by PING with a short timeout, not by rslock's own answer, which cannot tell
//!   "held" from "down" — selects the database-lock fallback. While Redis is down the fallback is taken at
//!   once, and a probe every second switches back when a quorum answers again.
//!
//! A server that stops answering without going away (stalled, not refused) costs each command redis-rs's 500 ms
//! response timeout, and rslock waits for every server. While the others' own majority is still a majority
//! of all (three servers or more, an odd number), that one is left out, and asked again each second.
//!
//! Either way the counter's version check is the fence: a holder whose lock expired mid-batch loses.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;

pub use crate::server::config::LockConfig;
use crate::server::error::AppError;
use crate::server::errors_log::ErrorLog;
use crate::server::kept_redis::KeptRedis;

/// What a batch holds while it runs; `fallback` is recorded in its audit rows.
pub enum Held {
    Local,
    Redis {
        lock: rslock::Lock,
        acquired: Instant,
        /// When the holder last asked whether another instance wants the lock.
        checked: Instant,
    },
    DbFallback,
}

impl Held {
    pub(crate) fn fallback(&self) -> &'static str {
        match self {
            Held::DbFallback => "DB_LOCK",
            _ => "NONE",
        }
    }

    /// Whether to keep it between batches: only a Redis lock costs round trips to take again.
    pub(crate) fn lingers(&self) -> bool {
        matches!(self, Held::Redis { .. })
    }
}

/// What a worker that needs a counter's lock ends up with: the lock, or (forwarding on) the address of the instance
/// that holds it, to send the batch there (`forward`).
pub enum Acquired {
    Lock(Held),
    HeldBy(String),
}

/// A kept Redis lock is reconsidered this often: handed over if another instance wants it, extended before
/// half its TTL has passed.
pub(crate) const HOLD_SLICE: Duration = Duration::from_millis(10);
const PROBE_EVERY: Duration = Duration::from_millis(100);
/// How long a marker server whose command failed is passed over before it is tried again.
const MARKER_PAUSE: Duration = Duration::from_secs(1);

pub enum CounterLock {
    InProcess,
    Redis(Arc<RedisLock>),
}

impl CounterLock {
    pub async fn acquire(&self, name: &str) -> Result<Held, AppError> {
        match self.acquire_or_find(name, false).await? {
            Acquired::Lock(h) => Ok(h),
            Acquired::HeldBy(_) => Err(AppError::internal("a lock asked for without forwarding named its holder")),
        }
    }

    /// The lock, or, when `may_forward` and this instance forwards (`RedisLock::forwarding_as`), the address of the
    /// instance that holds it and says so: a batch sent there joins the holder's batches instead of taking the lock
    /// from it.
    pub async fn acquire_or_find(&self, name: &str, may_forward: bool) -> Result<Acquired, AppError> {
        match self {
            CounterLock::InProcess => Ok(Acquired::Lock(Held::Local)),
            CounterLock::Redis(r) => r.acquire(name, may_forward).await,
        }
    }

    /// Best effort: a failed release only leaves the key to expire; the version check already protects the row.
    /// A lock is released (and extended) through the servers it was taken on.
    pub async fn release(&self, held: Held) {
        if let (CounterLock::Redis(r), Held::Redis { lock, .. }) = (self, held) {
            r.held.lock().unwrap().remove(&lock.val);
            r.withdraw(&String::from_utf8_lossy(&lock.resource)).await;
            lock.lock_manager.unlock(&lock).await;
        }
    }

    /// At the stop's deadline: lets go of every Redis lock this instance holds, those under a batch that is still
    /// running (stuck) included, so that the other instances need not wait out the TTL. Safe even if that batch
    /// goes on: its commit is fenced by the counter's version, and the process is about to end.
    pub(crate) async fn release_all(&self) {
        let CounterLock::Redis(r) = self else { return };
        let held: Vec<_> = r.held.lock().unwrap().drain().collect();
        let releases = held.into_iter().map(|(val, (resource, lock_manager))| async move {
            r.withdraw(&String::from_utf8_lossy(&resource)).await;
            let lock = rslock::Lock { resource, val, validity_time: 0, lock_manager };
            lock.lock_manager.unlock(&lock).await;
        });
        futures::future::join_all(releases).await;
    }

    /// Before serving another batch under a lock kept from the previous one: true to go on holding it.
    /// Every `HOLD_SLICE` a Redis holder looks for another instance's wait marker (then it lets go, so a hot
    /// counter changes hands in slices instead of starving the others) and extends the lock past half its TTL.
    pub(crate) async fn keep(&self, name: &str, held: &mut Held) -> bool {
        let (CounterLock::Redis(r), Held::Redis { lock, acquired, checked }) = (self, held) else { return true };
        if checked.elapsed() < HOLD_SLICE {
            return true;
        }
        *checked = Instant::now();
        // Someone waits, or Redis does not answer (then the next acquisition finds out whether to fall back).
        if r.wanted(name).await != Some(false) {
            return false;
        }
        if acquired.elapsed() > r.config.ttl / 2 {
            match tokio::time::timeout(r.config.probe_timeout * 4, lock.lock_manager.extend(lock, r.config.ttl)).await {
                Ok(Ok(extended)) => {
                    *lock = extended;
                    *acquired = Instant::now();
                    r.advertise(name).await;
                }
                _ => return false,
            }
        }
        true
    }

    /// The longest a batch waits for the lock before NB003.
    pub(crate) fn max_wait(&self) -> Duration {
        match self {
            CounterLock::InProcess => Duration::ZERO,
            CounterLock::Redis(r) => r.config.max_wait,
        }
    }

    /// Asks the servers now (readiness): None when no Redis is configured.
    pub(crate) async fn redis_reachable(&self) -> Option<bool> {
        match self {
            CounterLock::InProcess => None,
            CounterLock::Redis(r) => Some(r.reachable().await),
        }
    }

    /// None when no Redis is configured.
    pub(crate) fn redis_up(&self) -> Option<bool> {
        match self {
            CounterLock::InProcess => None,
            CounterLock::Redis(r) => Some(r.up.load(Ordering::Relaxed)),
        }
    }
}

/// Locks held, by value: (resource, the manager the lock was taken on).
type HeldLocks = HashMap<Vec<u8>, (Vec<u8>, rslock::LockManager)>;

pub struct RedisLock {
    manager: rslock::LockManager,
    /// For each server, a lock manager over the others, where their majority is still a majority of all.
    without: Vec<Option<rslock::LockManager>>,
    /// The server left out while it does not answer, and when it was last found so.
    skipped: std::sync::Mutex<Option<(usize, Instant)>>,
    probes: Vec<redis::Client>,
    quorum: usize,
    config: LockConfig,
    up: AtomicBool,
    /// Milliseconds since `started` at which the last "down" verdict was reached.
    down_since_ms: AtomicU64,
    started: Instant,
    pub(crate) fallbacks: AtomicU64,
    /// For the advisory markers (a lock's holder, its wait markers): a connection to each server. They go to the
    /// first server that has not failed in the last second, so one dead server does not stop forwarding; instances
    /// that see the same failure move to the same next server.
    markers: Vec<KeptRedis>,
    /// Where an outage is recorded (once per outage, docs/rules/numbering.md#audit-and-retention).
    errors: Option<ErrorLog>,
    /// This instance's address for forwarded batches, advertised beside each lock it holds (`forward`).
    advertise_as: Option<String>,
    /// When a marker command last failed on each server: that server is passed over for a second after it (it
    /// stalled or went away), so that batches do not each wait out the probe timeout.
    markers_failed: std::sync::Mutex<Vec<Option<Instant>>>,
    /// Every lock held now, by its value: (resource, the manager it was taken on). A batch that never ends keeps
    /// its `Held`; the stop's deadline finds its lock here (`CounterLock::release_all`).
    held: std::sync::Mutex<HeldLocks>,
}

impl RedisLock {
    pub fn new(urls: &[String], config: LockConfig) -> Result<RedisLock, AppError> {
        let probes = urls.iter().map(|u| crate::server::tls::redis_client(u)).collect::<Result<Vec<_>, _>>().map_err(AppError::internal)?;
        if probes.is_empty() {
            return Err(AppError::internal("REDIS_URLS names no server"));
        }
        // rslock gets the clients made here (TLS parameters read: `tls::redis_client`), not the URLs
        let manager = |clients: Vec<redis::Client>| {
            let mut manager = rslock::LockManager::from_clients(clients);
            manager.set_retry(1, Duration::from_millis(1)); // one attempt per call: waiting is ours to pace
            manager
        };
        let quorum = urls.len() / 2 + 1;
        // rslock's quorum over the others is (n - 1) / 2 + 1: equal to all's only for an odd n ≥ 3
        let without = (0..urls.len())
            .map(|i| {
                let rest: Vec<redis::Client> = probes.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, c)| c.clone()).collect();
                (urls.len() >= 3 && rest.len() / 2 + 1 == quorum).then(|| manager(rest))
            })
            .collect();
        let markers = probes.iter().cloned().map(KeptRedis::new).collect();
        Ok(RedisLock {
            manager: manager(probes.clone()),
            markers,
            without,
            skipped: std::sync::Mutex::new(None),
            quorum,
            probes,
            config,
            up: AtomicBool::new(true),
            down_since_ms: AtomicU64::new(0),
            started: Instant::now(),
            fallbacks: AtomicU64::new(0),
            errors: None,
            advertise_as: None,
            markers_failed: std::sync::Mutex::new(vec![None; urls.len()]),
            held: std::sync::Mutex::new(HashMap::new()),
        })
    }

    /// Forwarding on: this instance says where it serves each counter whose lock it holds (`{lock}:holder`, the
    /// lock's TTL), and a worker that finds another instance's address there sends its batch to it.
    pub fn forwarding_as(mut self, address: String) -> Self {
        self.advertise_as = Some(address);
        self
    }

    fn holder_name(name: &str) -> String {
        format!("{name}:holder")
    }

    /// Says that this instance holds `name` and where to send its batches; renewed with the lock's extension.
    async fn advertise(&self, name: &str) {
        if let Some(me) = &self.advertise_as {
            let cmd = redis::cmd("SET").arg(Self::holder_name(name)).arg(me).arg("PX").arg(self.config.ttl.as_millis() as u64).to_owned();
            let _ = self.marker_command::<redis::Value>(cmd).await;
        }
    }

    /// Takes this instance's address down before the lock goes (only if it is still ours).
    async fn withdraw(&self, name: &str) {
        if let Some(me) = &self.advertise_as {
            const IF_OURS: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";
            let cmd = redis::cmd("EVAL").arg(IF_OURS).arg(1).arg(Self::holder_name(name)).arg(me).to_owned();
            let _ = self.marker_command::<redis::Value>(cmd).await;
        }
    }

    /// The address another instance advertises for `name`; None if none does, if it is ours, or while no marker
    /// server answers.
    async fn holder(&self, name: &str) -> Option<String> {
        let me = self.advertise_as.as_deref()?;
        let at = self.marker_command::<Option<String>>(redis::cmd("GET").arg(Self::holder_name(name)).to_owned()).await??;
        (at != me).then_some(at)
    }

    /// Records each outage (and its end) in this error log.
    pub(crate) fn recording_outages_in(mut self, errors: ErrorLog) -> Self {
        self.errors = Some(errors);
        self
    }

    /// Whether a quorum of the servers answers PING within the probe timeout.
    /// Answers as soon as a quorum has (or can no longer): a stalled server does not hold every waiter's probe
    /// for the whole probe timeout.
    pub async fn reachable(&self) -> bool {
        use futures::StreamExt;
        let mut pings: futures::stream::FuturesUnordered<_> = (0..self.probes.len()).map(|i| self.answers(i)).collect();
        let (mut answered, mut silent) = (0, 0);
        while let Some(ok) = pings.next().await {
            if ok {
                answered += 1;
            } else {
                silent += 1;
            }
            if answered >= self.quorum {
                return true;
            }
            if silent > self.probes.len() - self.quorum {
                return false;
            }
        }
        false
    }

    /// Runs one command for the markers on the first server not passed over, and on the next one if it fails
    /// (a server that went away fails at once). Markers are advice, not safety: a lost or stale one costs a lock
    /// attempt, never a number. An error drops that server's connection so its next use reconnects.
    async fn marker_command<T: redis::FromRedisValue>(&self, cmd: redis::Cmd) -> Option<T> {
        while let Some(i) = self.marker_server() {
            let run = async { cmd.query_async::<T>(&mut self.markers[i].get().await?).await };
            match tokio::time::timeout(self.config.probe_timeout, run).await {
                Ok(Ok(v)) => return Some(v),
                _ => {
                    self.markers_failed.lock().unwrap()[i] = Some(Instant::now());
                    self.markers[i].reset().await;
                }
            }
        }
        None
    }

    /// The server the markers go to now: the first one whose last failure is a second old or more.
    fn marker_server(&self) -> Option<usize> {
        self.markers_failed.lock().unwrap().iter().position(|failed| failed.is_none_or(|t| t.elapsed() >= MARKER_PAUSE))
    }

    fn marker_name(name: &str) -> String {
        format!("{name}:wanted")
    }

    /// Whether another instance recently failed to take this lock; None when no marker server answers.
    async fn wanted(&self, name: &str) -> Option<bool> {
        self.marker_command::<i64>(redis::cmd("EXISTS").arg(Self::marker_name(name)).to_owned()).await.map(|n| n > 0)
    }

    async fn want(&self, name: &str, on: bool) {
        let cmd = if on {
            redis::cmd("SET").arg(Self::marker_name(name)).arg(1).arg("PX").arg(50).to_owned()
        } else {
            redis::cmd("DEL").arg(Self::marker_name(name)).to_owned()
        };
        let _ = self.marker_command::<redis::Value>(cmd).await;
    }

    fn mark_down(&self) {
        if self.up.swap(false, Ordering::Relaxed) {
            tracing::warn!("Redis unreachable (no quorum): numbering falls back to the database lock");
            if let Some(errors) = &self.errors {
                errors.redis_outage_began(&format!("{} of {} servers needed", self.quorum, self.probes.len()));
            }
        }
        self.down_since_ms.store(self.started.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    fn mark_up(&self) {
        if !self.up.swap(true, Ordering::Relaxed) {
            tracing::info!("Redis reachable again: numbering uses the distributed lock");
            if let Some(errors) = &self.errors {
                errors.redis_outage_ended();
            }
        }
    }

    /// The servers to take locks on now: all, or all but the one left out. A left-out server is asked again once a
    /// second (by the caller that finds it due: one PING, at most the probe timeout).
    async fn manager_now(&self) -> &rslock::LockManager {
        let due = {
            let mut skipped = self.skipped.lock().unwrap();
            match *skipped {
                None => return &self.manager,
                Some((i, since)) if since.elapsed() >= Duration::from_secs(1) => {
                    *skipped = Some((i, Instant::now())); // one asker at a time
                    Some(i)
                }
                Some(_) => None,
            }
        };
        if let Some(i) = due {
            if self.answers(i).await {
                tracing::info!(server = i, "Redis server answers again: locks are taken on all servers");
                *self.skipped.lock().unwrap() = None;
                return &self.manager;
            }
        }
        match *self.skipped.lock().unwrap() {
            Some((i, _)) => self.without[i].as_ref().expect("only servers with a manager without them are left out"),
            None => &self.manager,
        }
    }

    /// After a slow lock attempt: if exactly one server does not answer PING and the others' majority is a
    /// majority of all, take locks without it.
    async fn leave_out_a_stalled_server(&self) {
        let answers = futures::future::join_all((0..self.probes.len()).map(|i| self.answers(i))).await;
        let silent: Vec<usize> = answers.iter().enumerate().filter(|(_, ok)| !**ok).map(|(i, _)| i).collect();
        if let [i] = silent[..] {
            if self.without[i].is_some() {
                let mut skipped = self.skipped.lock().unwrap();
                if skipped.is_none() {
                    tracing::warn!(server = i, "Redis server does not answer: locks are taken on the others (still a majority of all)");
                }
                *skipped = Some((i, Instant::now()));
            }
        }
    }

    /// Whether server `i` answers PING within the probe timeout.
    async fn answers(&self, i: usize) -> bool {
        let ping = async {
            let mut con = self.probes[i].get_multiplexed_async_connection().await?;
            redis::cmd("PING").query_async::<String>(&mut con).await
        };
        matches!(tokio::time::timeout(self.config.probe_timeout, ping).await, Ok(Ok(_)))
    }

    /// The server left out of locking while it does not answer, if any.
    pub fn left_out(&self) -> Option<usize> {
        self.skipped.lock().unwrap().map(|(i, _)| i)
    }

    async fn acquire(&self, name: &str, may_forward: bool) -> Result<Acquired, AppError> {
        let may_forward = may_forward && self.advertise_as.is_some();
        // While Redis is known to be down, do not pay a failed attempt per batch: probe once a second.
        if !self.up.load(Ordering::Relaxed) {
            // `down_since_ms` is the last failed probe: requests in between fall back without touching it, so a
            // steady load cannot keep postponing the next probe.
            let since = self.down_since_ms.load(Ordering::Relaxed);
            let probe_due = (self.started.elapsed().as_millis() as u64).saturating_sub(since) >= 1000;
            if !probe_due || !self.reachable().await {
                if probe_due {
                    self.mark_down();
                }
                self.fallbacks.fetch_add(1, Ordering::Relaxed);
                return Ok(Acquired::Lock(Held::DbFallback));
            }
            self.mark_up();
        }
        if may_forward {
            if let Some(holder) = self.holder(name).await {
                return Ok(Acquired::HeldBy(holder));
            }
        }
        let deadline = Instant::now() + self.config.max_wait;
        let mut attempt = 0u32;
        let mut last_probe: Option<Instant> = None;
        loop {
            let manager = self.manager_now().await;
            let started = Instant::now();
            let tried = tokio::time::timeout(self.config.probe_timeout * 4, manager.lock(name.as_bytes(), self.config.ttl)).await;
            if started.elapsed() >= self.config.probe_timeout {
                self.leave_out_a_stalled_server().await;
            }
            if let Ok(Ok(lock)) = tried {
                if attempt > 0 {
                    self.want(name, false).await;
                }
                self.held.lock().unwrap().insert(lock.val.clone(), (lock.resource.clone(), lock.lock_manager.clone()));
                self.advertise(name).await;
                let now = Instant::now();
                return Ok(Acquired::Lock(Held::Redis { lock, acquired: now, checked: now }));
            }
            // rslock cannot tell "held" from "down": PING on the first failure, then at most every 100 ms of waiting
            // (each probe opens connections; a waiter fails many attempts while a hot counter changes hands).
            if last_probe.is_none_or(|t: Instant| t.elapsed() >= PROBE_EVERY) {
                last_probe = Some(Instant::now());
                if !self.reachable().await {
                    self.mark_down();
                    self.fallbacks.fetch_add(1, Ordering::Relaxed);
                    return Ok(Acquired::Lock(Held::DbFallback));
                }
            }
            // Held by an instance that says where: send the batch there rather than take the lock from it (and take
            // back a wait marker left before it said so, which would make it hand the lock over).
            if may_forward {
                if let Some(holder) = self.holder(name).await {
                    if attempt > 0 {
                        self.want(name, false).await;
                    }
                    return Ok(Acquired::HeldBy(holder));
                }
            }
            // Held by another instance: say so (its holder hands over within a slice) and wait our turn.
            let now = Instant::now();
            if now >= deadline {
                return Err(AppError::LockTimeout { key: name.to_string(), retry_after_secs: 1 });
            }
            self.want(name, true).await;
            let ceiling = self.config.retry_base.saturating_mul(1 << attempt.min(2));
            let pause = Duration::from_millis(rand::thread_rng().gen_range(1..=ceiling.as_millis().max(1) as u64));
            tokio::time::sleep(pause.min(deadline - now)).await;
            attempt += 1;
        }
    }
}
