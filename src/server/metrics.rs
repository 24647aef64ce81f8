//! docs/operations/README.md#metrics-and-alerts observability: the Prometheus metrics of the service and the `/metrics` endpoint.
//!
//! Two kinds of series:
//! - **recorded** as things happen, through the plain functions below ([`lock_acquired`], [`lock_failed`],
//!   [`batch`], [`generation`], [`issued`]). They need no state: the registry is process-wide and created on
//!   first use, so any code (the queue, the lock, a handler) can call them.
//! - **computed when `/metrics` is scraped**, from a [`Snapshot`] of plain values the edge gathers
//!   (`http::scrape_metrics`): Redis reachability, the database pools, the requests in flight, the runtime's tasks
//!   and sequence utilization (one bounded query of the engine's). This module knows no feature.
//!
//! Names follow Prometheus conventions (`_seconds`, `_total`, `_ratio`), and every label has a bounded set of
//! values: lock kinds, failure reasons and statuses are fixed lists; correspondence type codes come from the
//! reference data (callers must pass a resolved code, or [`UNKNOWN`]). No number, user, token or counter-key
//! labels.
//!
//! `/metrics` needs no login and is outside the numbering rate limits; it is meant for the monitoring
//! network only (see deploy/README.md). With `METRICS_TOKEN` set it requires `Authorization: Bearer <token>`
//! ([`bearer_matches`]).

use std::sync::LazyLock;
use std::time::Duration;

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use prometheus::core::Collector;
use prometheus::{
    Encoder, GaugeVec, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry, TextEncoder,
};

use crate::server::db::{Db, Dialect};
use crate::server::error::AppError;

// ---- names (alerts and the dashboard in deploy/ use exactly these) ----

pub const LOCK_WAIT: &str = "docnum_lock_wait_seconds";
pub const LOCK_ATTEMPTS: &str = "docnum_lock_attempts_total";
pub const LOCK_FAILURES: &str = "docnum_lock_failures_total";
pub const RETRIES: &str = "docnum_retries";
pub const BATCH_SIZE: &str = "docnum_batch_size";
pub const COMMIT_GROUP: &str = "docnum_commit_group_batches";
pub const GROUP_PHASE: &str = "docnum_commit_group_phase_seconds";
pub const GENERATION: &str = "docnum_generation_duration_seconds";
pub const ISSUED: &str = "docnum_numbers_issued_total";
pub const REDIS_UP: &str = "docnum_redis_up";
pub const LOCK_FALLBACK_ACTIVE: &str = "docnum_lock_fallback_active";
pub const DB_POOL_CONNECTIONS: &str = "docnum_db_pool_connections";
pub const DB_POOL_MAX: &str = "docnum_db_pool_max_connections";
pub const SEQUENCE_UTILIZATION: &str = "docnum_sequence_utilization_ratio";
pub(crate) const ERRORS: &str = "docnum_errors_total";
pub(crate) const FORWARDED: &str = "docnum_forwarded_jobs_total";
pub(crate) const LOGIN_THROTTLED: &str = "docnum_login_throttled_total";
pub(crate) const BEHIND_WITNESS: &str = "docnum_counter_behind_witness_total";
pub(crate) const REQUESTS_IN_FLIGHT: &str = "docnum_requests_in_flight";
pub(crate) const EVENT_STREAMS: &str = "docnum_event_streams";
pub(crate) const OLDEST_REQUEST_AGE: &str = "docnum_oldest_request_age_seconds";
pub(crate) const RUNTIME_TASKS: &str = "docnum_runtime_alive_tasks";
pub const DB_WRITABLE: &str = "docnum_database_writable";
pub const DB_PRIMARY_SWITCHES: &str = "docnum_database_primary_switches_total";
pub const TLS_CERT_EXPIRY: &str = "docnum_tls_cert_expiry_seconds";
pub const LOG_WITNESS_REFUSALS: &str = "docnum_log_witness_refusals_total";
pub const LOG_WITNESS_UNANSWERED: &str = "docnum_log_witness_unanswered_offers";

/// Every metric family the service exports (the scrape-time ones only when they apply: the Redis gauges
/// need `REDIS_URLS`, the database's primary needs MariaDB, utilization needs a counter in the current period).
pub const FAMILIES: &[&str] = &[
    LOCK_WAIT,
    LOCK_ATTEMPTS,
    LOCK_FAILURES,
    RETRIES,
    BATCH_SIZE,
    COMMIT_GROUP,
    GROUP_PHASE,
    GENERATION,
    ISSUED,
    REDIS_UP,
    LOCK_FALLBACK_ACTIVE,
    DB_POOL_CONNECTIONS,
    DB_POOL_MAX,
    SEQUENCE_UTILIZATION,
    ERRORS,
    FORWARDED,
    LOGIN_THROTTLED,
    BEHIND_WITNESS,
    REQUESTS_IN_FLIGHT,
    OLDEST_REQUEST_AGE,
    RUNTIME_TASKS,
    DB_WRITABLE,
    DB_PRIMARY_SWITCHES,
    TLS_CERT_EXPIRY,
    LOG_WITNESS_REFUSALS,
    LOG_WITNESS_UNANSWERED,
];

/// The `type` label of [`ERRORS`]: the error-log types of docs/rules/numbering.md#audit-and-retention.
pub(crate) const ERROR_TYPES: &[&str] = &[
    "DB_ERROR",
    "LOCK_TIMEOUT",
    "VERSION_CONFLICT",
    "VALIDATION_ERROR",
    "SEQUENCE_EXHAUSTED",
    "RESERVATION_EXPIRED",
    "DUPLICATE_NUMBER",
    "REDIS_ERROR",
    "COUNTER_BEHIND_WITNESS",
];

/// The type label for a request whose correspondence type could not be resolved.
pub(crate) const UNKNOWN: &str = "unknown";
/// The status label of a successful generation.
pub(crate) const SUCCESS: &str = "success";

/// Which lock a counter batch ran under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockKind {
    /// The in-process queue alone (no Redis configured).
    Local,
    /// A Redlock over `REDIS_URLS`.
    Redis,
    /// Redis unreachable: the database lock (`FOR UPDATE` / `BEGIN IMMEDIATE`).
    DbFallback,
}

impl LockKind {
    pub(crate) fn label(self) -> &'static str {
        match self {
            LockKind::Local => "local",
            LockKind::Redis => "redis",
            LockKind::DbFallback => "db_fallback",
        }
    }
}

/// The `outcome` label of [`FORWARDED`]: jobs this instance sent to a counter's lock holder and got answered, could
/// not deliver (then served here), or sent without an answer (the callers got 503); and jobs it received as holder.
pub(crate) const FORWARD_OUTCOMES: &[&str] = &["answered", "not_delivered", "unanswered", "received"];

/// The reasons [`lock_failed`] records; anything else is recorded as `other`.
pub(crate) const LOCK_FAILURE_REASONS: &[&str] = &["timeout", "redis_down", "error"];

// ---- the recorded series ----

struct Recorded {
    registry: Registry,
    lock_wait: HistogramVec,
    lock_attempts: IntCounter,
    lock_failures: IntCounterVec,
    retries: Histogram,
    batch_size: Histogram,
    commit_group: Histogram,
    group_phase: HistogramVec,
    generation: HistogramVec,
    issued: IntCounterVec,
    errors: IntCounterVec,
    forwarded: IntCounterVec,
    login_throttled: IntCounter,
    behind_witness: IntCounter,
    log_witness_refusals: IntCounterVec,
    log_witness_unanswered: IntGaugeVec,
}

fn register<C: Collector + Clone + 'static>(registry: &Registry, c: C) -> C {
    registry.register(Box::new(c.clone())).expect("metric names are unique");
    c
}

static RECORDED: LazyLock<Recorded> = LazyLock::new(|| {
    let r = Registry::new();
    let seconds = vec![0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0];
    let m = Recorded {
        lock_wait: register(
            &r,
            HistogramVec::new(
                HistogramOpts::new(LOCK_WAIT, "Time a counter batch waited for its lock, by lock kind.").buckets(seconds.clone()),
                &["kind"],
            )
            .unwrap(),
        ),
        lock_attempts: register(&r, IntCounter::new(LOCK_ATTEMPTS, "Lock acquisitions attempted (acquired + failed).").unwrap()),
        lock_failures: register(&r, IntCounterVec::new(Opts::new(LOCK_FAILURES, "Lock acquisitions that failed, by reason."), &["reason"]).unwrap()),
        retries: register(
            &r,
            Histogram::with_opts(
                HistogramOpts::new(RETRIES, "Version-conflict retries per counter batch.").buckets(vec![0.0, 1.0, 2.0, 3.0, 5.0, 10.0]),
            )
            .unwrap(),
        ),
        batch_size: register(
            &r,
            Histogram::with_opts(
                HistogramOpts::new(BATCH_SIZE, "Requests served by one counter batch.")
                    .buckets(vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0]),
            )
            .unwrap(),
        ),
        commit_group: register(
            &r,
            Histogram::with_opts(
                HistogramOpts::new(COMMIT_GROUP, "Counter batches committed by one transaction (commits shared across counters).")
                    .buckets(vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]),
            )
            .unwrap(),
        ),
        group_phase: register(
            &r,
            HistogramVec::new(
                HistogramOpts::new(
                    GROUP_PHASE,
                    "Time of one phase of a commit group's transaction: read, plan and write of a group served together; commit of any group.",
                )
                .buckets(vec![0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0]),
                &["phase"],
            )
            .unwrap(),
        ),
        generation: register(
            &r,
            HistogramVec::new(
                HistogramOpts::new(GENERATION, "Latency of a number request (reserve / generate), by correspondence type and status.")
                    .buckets(seconds),
                &["type", "status"],
            )
            .unwrap(),
        ),
        issued: register(&r, IntCounterVec::new(Opts::new(ISSUED, "Document numbers issued, by correspondence type."), &["type"]).unwrap()),
        errors: register(
            &r,
            IntCounterVec::new(Opts::new(ERRORS, "Failures of the kinds the error log keeps, repeats included, by type."), &["type"])
                .unwrap(),
        ),
        forwarded: register(
            &r,
            IntCounterVec::new(
                Opts::new(FORWARDED, "Counter jobs forwarded to the counter's lock holder, by outcome; and jobs received as the holder."),
                &["outcome"],
            )
            .unwrap(),
        ),
        login_throttled: register(
            &r,
            IntCounter::new(LOGIN_THROTTLED, "Logins refused during a throttle wait (429), whether or not the login record kept a row for them.")
                .unwrap(),
        ),
        behind_witness: register(
            &r,
            IntCounter::new(
                BEHIND_WITNESS,
                "Counter batches refused because the database's head of the counter is behind its witness (a restored backup, a failover that lost commits).",
            )
            .unwrap(),
        ),
        log_witness_refusals: register(
            &r,
            IntCounterVec::new(
                Opts::new(LOG_WITNESS_REFUSALS, "Checkpoints of the transparency log that a witness of LOG_WITNESSES refused to cosign, by witness."),
                &["witness"],
            )
            .unwrap(),
        ),
        log_witness_unanswered: register(
            &r,
            IntGaugeVec::new(
                Opts::new(
                    LOG_WITNESS_UNANSWERED,
                    "Offers of a checkpoint in a row that a witness of LOG_WITNESSES did not answer (no connection, a timeout, a 5xx); 0 once it answers.",
                ),
                &["witness"],
            )
            .unwrap(),
        ),
        registry: r,
    };
    // Known label sets start at zero, so rates and ratios exist before the first event.
    for kind in [LockKind::Local, LockKind::Redis, LockKind::DbFallback] {
        m.lock_wait.with_label_values(&[kind.label()]);
    }
    for reason in LOCK_FAILURE_REASONS {
        m.lock_failures.with_label_values(&[reason]);
    }
    for t in ERROR_TYPES {
        m.errors.with_label_values(&[t]);
    }
    for phase in GroupPhase::ALL {
        m.group_phase.with_label_values(&[phase.label()]);
    }
    for outcome in FORWARD_OUTCOMES {
        m.forwarded.with_label_values(&[outcome]);
    }
    m
});

/// A failure of an error-log type happened (counted whether or not the log writes a row for it); a type outside
/// [`ERROR_TYPES`] is counted as `other`.
pub(crate) fn error_seen(error_type: &str) {
    let label = if ERROR_TYPES.contains(&error_type) { error_type } else { "other" };
    RECORDED.errors.with_label_values(&[label]).inc();
}

/// A counter batch got its lock after waiting `wait`.
pub fn lock_acquired(kind: LockKind, wait: Duration) {
    let m = &*RECORDED;
    m.lock_attempts.inc();
    m.lock_wait.with_label_values(&[kind.label()]).observe(wait.as_secs_f64());
}

/// A lock acquisition failed: `timeout` (bounded wait exhausted → NB003), `redis_down` (Redis unreachable;
/// the batch then falls back to the database lock), `error`; anything else is recorded as `other`.
pub fn lock_failed(reason: &str) {
    let m = &*RECORDED;
    let reason = LOCK_FAILURE_REASONS.iter().find(|r| **r == reason).copied().unwrap_or("other");
    m.lock_attempts.inc();
    m.lock_failures.with_label_values(&[reason]).inc();
}

/// `jobs` counter jobs forwarded (or received) with this outcome, one of [`FORWARD_OUTCOMES`].
pub(crate) fn forwarded(outcome: &'static str, jobs: usize) {
    RECORDED.forwarded.with_label_values(&[outcome]).inc_by(jobs as u64);
}

/// A counter batch was refused: the database is behind the counter's witness.
pub(crate) fn behind_witness() {
    RECORDED.behind_witness.inc();
}

/// A witness of the log refused a checkpoint (`witness`: its name, from LOG_WITNESSES: a bounded set).
pub(crate) fn log_witness_refused(witness: &str) {
    RECORDED.log_witness_refusals.with_label_values(&[witness]).inc();
}

/// The witnesses' series start at zero, so an alert on their increase sees the first refusal.
pub(crate) fn log_witness_known(witness: &str) {
    RECORDED.log_witness_refusals.with_label_values(&[witness]);
    RECORDED.log_witness_unanswered.with_label_values(&[witness]).set(0);
}

/// How many offers in a row `witness` has left unanswered (0: it answered the last one).
pub(crate) fn log_witness_unanswered(witness: &str, offers: u32) {
    RECORDED.log_witness_unanswered.with_label_values(&[witness]).set(i64::from(offers));
}

/// A login was refused during a throttle wait.
pub(crate) fn login_throttled() {
    RECORDED.login_throttled.inc();
}

/// One transaction committed the batches of `batches` counters.
pub(crate) fn commit_group(batches: usize) {
    RECORDED.commit_group.observe(batches as f64);
}

/// A phase of a commit group's transaction, timed by [`group_phase`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupPhase {
    /// The counters, chain heads and number rows read (one statement per kind for a group served together).
    Read,
    /// The batches planned (no I/O: sequences, renderings, audit rows and their hashes).
    Plan,
    /// Counters, chain heads, numbers and audit rows written.
    Write,
    /// The COMMIT (the durable write).
    Commit,
}

impl GroupPhase {
    pub(crate) const ALL: [GroupPhase; 4] = [GroupPhase::Read, GroupPhase::Plan, GroupPhase::Write, GroupPhase::Commit];

    pub(crate) fn label(self) -> &'static str {
        match self {
            GroupPhase::Read => "read",
            GroupPhase::Plan => "plan",
            GroupPhase::Write => "write",
            GroupPhase::Commit => "commit",
        }
    }
}

/// One phase of a commit group's transaction took `took`.
pub fn group_phase(phase: GroupPhase, took: Duration) {
    RECORDED.group_phase.with_label_values(&[phase.label()]).observe(took.as_secs_f64());
}

/// One counter batch served `size` requests after `retries` version-conflict retries.
pub fn batch(size: usize, retries: u32) {
    let m = &*RECORDED;
    m.batch_size.observe(size as f64);
    m.retries.observe(f64::from(retries));
}

/// One number request finished. `type_code` must be a correspondence type code from the reference data
/// (or [`UNKNOWN`]); `status` is [`SUCCESS`] or an error name ([`status_of`]).
pub(crate) fn generation(type_code: &str, status: &str, latency: Duration) {
    RECORDED.generation.with_label_values(&[type_code, status]).observe(latency.as_secs_f64());
}

/// `n` numbers of correspondence type `type_code` were issued (committed).
pub(crate) fn issued(type_code: &str, n: u64) {
    RECORDED.issued.with_label_values(&[type_code]).inc_by(n);
}

/// The status label of a result: [`SUCCESS`], or the error's name (`VALIDATION_ERROR`, `LOCK_TIMEOUT`, …: a
/// fixed set, see `AppError::kind`).
pub(crate) fn status_of<T>(result: &Result<T, AppError>) -> &'static str {
    match result {
        Ok(_) => SUCCESS,
        Err(e) => e.code().name(),
    }
}

// ---- the scrape ----

/// What a scrape reports of the running service beyond the recorded series, as plain values gathered by the edge
/// (`http::scrape_metrics`) from the parts that know them.
pub(crate) struct Snapshot<'a> {
    /// With `REDIS_URLS`: whether a quorum answers PING now ([`redis_quorum_answers`]), and whether numbering
    /// currently runs on the database-lock fallback.
    pub(crate) redis: Option<(bool, bool)>,
    pub(crate) db: &'a Db,
    /// Per route: the age of its oldest request in flight and how many there are.
    pub(crate) in_flight: Vec<(std::sync::Arc<str>, Duration, usize)>,
    /// Per correspondence type, the fullest counter of the current period (None: the query failed or took too long).
    pub(crate) utilization: Option<Vec<(String, f64)>>,
    /// The live screens' event streams open now (not requests in flight: they last as long as their tabs).
    pub(crate) event_streams: usize,
    /// The certificate files the instance was given (`tls::cert_files`) and the earliest expiry in each (Unix
    /// seconds; None: unreadable).
    pub(crate) cert_expiry: Vec<(String, Option<i64>)>,
}

/// `/metrics`' answer: the recorded series and the snapshot's gauges, in the text format.
pub(crate) fn scrape(snapshot: Snapshot<'_>) -> Response {
    let encoder = TextEncoder::new();
    let mut families = RECORDED.registry.gather();
    families.extend(scrape_time(snapshot).gather());
    families.sort_by(|a, b| a.name().cmp(b.name()));
    let mut body = Vec::with_capacity(8 * 1024);
    if let Err(e) = encoder.encode(&families, &mut body) {
        tracing::warn!(error = %e, "metrics encoding failed");
        return (StatusCode::INTERNAL_SERVER_ERROR, "metrics encoding failed\n").into_response();
    }
    let mut r = body.into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"));
    r
}

/// Whether the request carries `Authorization: Bearer <expected>` (`METRICS_TOKEN`), compared in constant time.
pub(crate) fn bearer_matches(headers: &HeaderMap, expected: &str) -> bool {
    let Some(given) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
    else {
        return false;
    };
    let (a, b) = (given.trim().as_bytes(), expected.as_bytes());
    // constant time in the token's content
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The answer to a scrape without the token `METRICS_TOKEN` asks for.
pub(crate) fn unauthorized() -> Response {
    let mut r = (StatusCode::UNAUTHORIZED, "metrics: Authorization: Bearer <METRICS_TOKEN> required\n").into_response();
    r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    r
}

/// The gauges of a snapshot, in a registry of their own made for this scrape (so a type that no longer has a
/// counter in the current period leaves no stale series).
fn scrape_time(snapshot: Snapshot<'_>) -> Registry {
    let r = Registry::new();

    // Redis: reachability now (PING quorum), and whether numbering currently runs on the fallback.
    if let Some((quorum, on_fallback)) = snapshot.redis {
        let up = register(&r, IntGauge::new(REDIS_UP, "1 when a quorum of the REDIS_URLS servers answers PING at scrape time.").unwrap());
        up.set(i64::from(quorum));
        let fallback =
            register(&r, IntGauge::new(LOCK_FALLBACK_ACTIVE, "1 while counter batches use the database-lock fallback instead of Redis.").unwrap());
        fallback.set(i64::from(on_fallback));
    }

    // Database pools: on SQLite a read pool and a one-connection writer (the counters' too); on MariaDB the main
    // pool and the counter workers' pool.
    let connections = register(
        &r,
        IntGaugeVec::new(Opts::new(DB_POOL_CONNECTIONS, "Open database connections by pool and state (idle / in_use)."), &["pool", "state"]).unwrap(),
    );
    let max = register(&r, IntGaugeVec::new(Opts::new(DB_POOL_MAX, "Largest number of connections of the pool."), &["pool"]).unwrap());
    let db = snapshot.db;
    let mut pools = vec![("main", &db.pool)];
    match db.dialect {
        Dialect::Sqlite => pools.push(("writer", &db.writer)),
        Dialect::MySql => pools.push(("counters", &db.counters)),
    }
    for (name, pool) in pools {
        let size = i64::from(pool.size());
        let idle = pool.num_idle() as i64;
        connections.with_label_values(&[name, "idle"]).set(idle);
        connections.with_label_values(&[name, "in_use"]).set((size - idle).max(0));
        max.with_label_values(&[name]).set(i64::from(pool.options().get_max_connections()));
    }

    // MariaDB: whether the server taking the writes was writable at the last probe, and the failovers followed
    // (`db::primary`; docs/operations/README.md#failover).
    if db.dialect == Dialect::MySql {
        let writable = register(
            &r,
            IntGauge::new(DB_WRITABLE, "1 when the database server taking the writes was writable (not read-only, reachable) at the last probe.")
                .unwrap(),
        );
        writable.set(i64::from(db.primary.writable()));
        let switches = register(
            &r,
            IntCounter::new(DB_PRIMARY_SWITCHES, "Times this instance moved its writes to another server of DATABASE_SERVERS (a failover followed).")
                .unwrap(),
        );
        switches.inc_by(db.primary.switches());
    }

    // The watchdog: requests in flight, and per route the age of the oldest (a request that never ends shows here,
    // and alerts past a minute). The scrape itself is one of them.
    let in_flight = register(&r, IntGauge::new(REQUESTS_IN_FLIGHT, "Requests routed and not yet answered in full (or dropped).").unwrap());
    let oldest =
        register(&r, GaugeVec::new(Opts::new(OLDEST_REQUEST_AGE, "Age of the oldest request in flight, by route pattern."), &["route"]).unwrap());
    let mut total = 0;
    for (route, age, n) in snapshot.in_flight {
        oldest.with_label_values(&[&*route]).set(age.as_secs_f64());
        total += n;
    }
    in_flight.set(total as i64);
    let streams = register(&r, IntGauge::new(EVENT_STREAMS, "Live event streams open (GET /api/v1/events), one per browser tab.").unwrap());
    streams.set(snapshot.event_streams as i64);

    // Tasks alive in the runtime: flat under any load once warm. A task left waiting forever by a request that
    // ended (the page renders of clients that hung up did, before page_owner.rs) shows here as steady growth.
    let tasks =
        register(&r, IntGauge::new(RUNTIME_TASKS, "Tasks alive in the async runtime (server-side renders, background jobs, connections).").unwrap());
    tasks.set(tokio::runtime::Handle::current().metrics().num_alive_tasks() as i64);

    // TLS: when each certificate file named in the settings expires (the alert warns 14 days ahead); an unreadable
    // file shows as 0, which alerts at once.
    let expiry = register(
        &r,
        GaugeVec::new(
            Opts::new(
                TLS_CERT_EXPIRY,
                "Expiry (Unix time) of the earliest certificate in each CA / client certificate file of the settings; 0 when unreadable.",
            ),
            &["file"],
        )
        .unwrap(),
    );
    for (file, at) in &snapshot.cert_expiry {
        expiry.with_label_values(&[file.as_str()]).set(at.unwrap_or(0) as f64);
    }

    // Sequence utilization: per type, the fullest counter of the current period.
    let utilization = register(
        &r,
        GaugeVec::new(
            Opts::new(SEQUENCE_UTILIZATION, "Highest last_number / max_number over the counters of the current period, by correspondence type."),
            &["type"],
        )
        .unwrap(),
    );
    for (type_code, ratio) in snapshot.utilization.unwrap_or_default() {
        utilization.with_label_values(&[&type_code]).set(ratio);
    }
    r
}

/// Whether a quorum of `urls` answers PING within 250 ms (fresh connections: this runs once per scrape).
pub(crate) async fn redis_quorum_answers(urls: &[String]) -> bool {
    let pings = urls.iter().map(|url| async move {
        let ping = async {
            let client = crate::server::tls::redis_client(url)
                .map_err(|e| redis::RedisError::from((redis::ErrorKind::InvalidClientConfig, "REDIS_URLS", e)))?;
            let mut con = client.get_multiplexed_async_connection().await?;
            redis::cmd("PING").query_async::<String>(&mut con).await
        };
        matches!(tokio::time::timeout(Duration::from_millis(250), ping).await, Ok(Ok(_)))
    });
    let answered = futures::future::join_all(pings).await.into_iter().filter(|ok| *ok).count();
    answered > urls.len() / 2
}
