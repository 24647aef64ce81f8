//! Per-counter request queues. Each instance runs at most one worker per counter key; the worker takes
//! every request waiting on that key (up to `max_batch`), holds the counter's lock once, and serves them
//! all in one transaction: numbers in arrival order, all committed or none, one audit row each. This is
//! what turns a hot counter from one transaction per number into one per batch (BUILD-NOTES: ~2,000/s
//! → >20,000/s), and it keeps one lock attempt per key per instance.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, Notify};

use super::lock::{CounterLock, Held};
use super::store::{self, CounterRow, NewNumber, NumberRow, StatusChange};
use super::Resolved;
use crate::numbering::CounterKey;
use crate::server::audit::{self, counter_chain, AuditEntry, ChainHead};
use crate::server::auth::Caller;
use crate::server::clock::Clock;
use crate::server::db::{is_connection_error, is_retryable_conflict, is_unique_violation, suspect_connections, Conn, Db, WriteConn};
use crate::server::error::{new_ref_id, AppError, ErrorCode};
use crate::server::metrics::{self, LockKind};

pub enum JobKind {
    /// Take the next number; with a document id it is confirmed at once (generate), else reserved for `ttl_ms`.
    Issue { req: Arc<Resolved>, ttl_ms: i64, document_id: Option<String> },
    Confirm { token: String, document_id: String },
    Cancel { token: String, reason: Option<String>, expiry: bool },
}

#[derive(Clone, Debug)]
pub enum Outcome {
    Issued { number: String, sequence: i64, token: Option<String>, expires_at: Option<i64>, created_at: i64 },
    /// `changed` is false when the request found the number already in the asked state (idempotent repeat).
    Status { number: String, status: &'static str, changed: bool },
}

struct Job {
    kind: JobKind,
    caller: Caller,
    enqueued: Instant,
    reply: oneshot::Sender<Result<Outcome, AppError>>,
}

struct KeyQueue {
    jobs: VecDeque<Job>,
    /// Wakes a worker that lingers on a kept lock when a job arrives.
    wake: Arc<Notify>,
}

/// What a worker remembers of its counter between batches served under one continuous hold, so the next
/// batch skips reading the counter row and its chain head. The counter's version check and the chain's
/// length check still refuse a stale memory, and the batch then reads afresh.
#[derive(Clone, Debug)]
struct Known {
    counter: CounterRow,
    chain: ChainHead,
}

/// A thread with a runtime of its own for the counter workers. On the server's shared runtime a worker woken
/// by its database's answer waits in the run queue behind every HTTP task that is ready (64 callers: dozens),
/// once per statement of the batch; on its own thread the kernel runs it as soon as the answer arrives.
/// Measured on one hot counter (BENCHMARKS.md): the batch, and with it every caller's wait, got shorter.
pub struct CounterThread {
    handle: tokio::runtime::Handle,
}

impl CounterThread {
    pub fn start() -> std::io::Result<CounterThread> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let handle = runtime.handle().clone();
        // lives as long as the process: the workers and the counter pool's connections run on it
        std::thread::Builder::new().name("counters".into()).spawn(move || runtime.block_on(std::future::pending::<()>()))?;
        Ok(CounterThread { handle })
    }

    pub fn handle(&self) -> &tokio::runtime::Handle {
        &self.handle
    }
}

pub struct Queues {
    db: Db,
    pub lock: CounterLock,
    clock: Arc<Clock>,
    max_batch: usize,
    /// Where workers run: the counter thread, or (None) the runtime of the request that starts them.
    workers_on: Option<tokio::runtime::Handle>,
    /// Keys with a live worker, and the jobs waiting for it.
    waiting: Mutex<HashMap<CounterKey, KeyQueue>>,
    /// Set when the process stops: workers let their locks go instead of lingering.
    closing: std::sync::atomic::AtomicBool,
}

/// Version conflicts are retried at once, at most twice (SPEC §6); a lost race is a microsecond event.
const MAX_CONFLICT_RETRIES: u32 = 2;
/// Connection errors are retried three times with exponential backoff (SPEC §6).
const MAX_CONNECTION_RETRIES: u32 = 3;
/// How long a worker keeps a Redis lock after its queue ran dry, for the next request: one caller's next
/// request usually follows its answer within a fraction of a millisecond, and taking the lock again costs
/// two round trips to every Redis server.
const LINGER: Duration = Duration::from_millis(2);
/// A worker that lets go of a wanted lock steps back this long, so that a waiting instance gets its turn.
const YIELD: Duration = Duration::from_millis(3);

enum BatchError {
    /// The counter (or its audit chain) moved under us: another holder got there first.
    Conflict,
    /// A rendered number collided with one inserted meanwhile outside this queue; the retry's pre-check names it.
    Unique,
    Db(sqlx::Error),
    App(AppError),
}

impl From<sqlx::Error> for BatchError {
    fn from(e: sqlx::Error) -> Self {
        if is_retryable_conflict(&e) {
            BatchError::Conflict
        } else if is_unique_violation(&e) {
            BatchError::Unique
        } else {
            if is_connection_error(&e) {
                // a restart kills every pooled connection: have the pool ping them before the retry draws one
                suspect_connections();
            }
            BatchError::Db(e)
        }
    }
}

impl From<AppError> for BatchError {
    fn from(e: AppError) -> Self {
        match e {
            AppError::VersionConflict(_) => BatchError::Conflict,
            other => BatchError::App(other),
        }
    }
}

impl Queues {
    pub fn new(db: Db, clock: Arc<Clock>, max_batch: usize, lock: CounterLock, workers_on: Option<tokio::runtime::Handle>) -> Queues {
        Queues {
            db,
            lock,
            clock,
            max_batch: max_batch.max(1),
            workers_on,
            waiting: Mutex::new(HashMap::new()),
            closing: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// On shutdown, after the HTTP server has drained: wakes every lingering worker to release its lock and
    /// waits (at most `patience`) until all have ended. A process that died holding a Redis lock would make
    /// the other instances wait out its TTL (up to 5 s) for that counter.
    pub async fn close(&self, patience: Duration) {
        self.closing.store(true, std::sync::atomic::Ordering::Relaxed);
        let deadline = Instant::now() + patience;
        loop {
            let wakes: Vec<Arc<Notify>> = self.waiting.lock().unwrap().values().map(|q| q.wake.clone()).collect();
            if wakes.is_empty() || Instant::now() >= deadline {
                return;
            }
            for w in wakes {
                w.notify_one();
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Queues a job on its counter and waits for its outcome.
    pub async fn submit(self: &Arc<Self>, key: CounterKey, kind: JobKind, caller: Caller) -> Result<Outcome, AppError> {
        let (reply, outcome) = oneshot::channel();
        let job = Job { kind, caller, enqueued: Instant::now(), reply };
        let (wake, start_worker) = {
            let mut waiting = self.waiting.lock().unwrap();
            match waiting.get_mut(&key) {
                Some(q) => {
                    q.jobs.push_back(job);
                    (q.wake.clone(), false)
                }
                None => {
                    let wake = Arc::new(Notify::new());
                    waiting.insert(key.clone(), KeyQueue { jobs: VecDeque::from([job]), wake: wake.clone() });
                    (wake, true)
                }
            }
        };
        if start_worker {
            let queues = self.clone();
            let work = async move { queues.work(key, wake).await };
            match &self.workers_on {
                Some(handle) => drop(handle.spawn(work)),
                None => drop(tokio::spawn(work)),
            }
        } else {
            wake.notify_one();
        }
        outcome.await.map_err(|_| AppError::internal("the counter's worker stopped before answering"))?
    }

    /// Serves batches for `key` until no job waits; then the key leaves the map (a later job starts a new worker).
    /// A Redis lock is kept from one batch to the next while jobs keep coming (see `CounterLock::keep` for
    /// how it is handed to another instance that wants it); callers are answered as soon as their batch commits.
    async fn work(self: Arc<Self>, key: CounterKey, wake: Arc<Notify>) {
        // If serving a batch panics, drop the key so its waiting jobs fail fast instead of hanging forever.
        struct Abandon<'a>(&'a Queues, &'a CounterKey, bool);
        impl Drop for Abandon<'_> {
            fn drop(&mut self) {
                if self.2 {
                    self.0.waiting.lock().unwrap().remove(self.1);
                }
            }
        }
        let mut guard = Abandon(&self, &key, true);
        let name = key.lock_name();
        let mut held: Option<Held> = None;
        let mut known: Option<Known> = None;
        let mut conn: Option<WriteConn> = None;
        loop {
            let batch: Option<Vec<Job>> = {
                let mut waiting = self.waiting.lock().unwrap();
                let Some(q) = waiting.get_mut(&key) else { break };
                if q.jobs.is_empty() {
                    if held.is_none() {
                        waiting.remove(&key);
                        break;
                    }
                    None
                } else {
                    let n = q.jobs.len().min(self.max_batch);
                    Some(q.jobs.drain(..n).collect())
                }
            };
            let Some(batch) = batch else {
                // Nothing waits, a lock is kept: linger a moment for the next job, else let the lock go.
                conn = None;
                let h = held.take().expect("checked above");
                let closing = self.closing.load(std::sync::atomic::Ordering::Relaxed);
                if !closing && tokio::time::timeout(LINGER, wake.notified()).await.is_ok() {
                    held = Some(h);
                } else {
                    self.lock.release(h).await;
                }
                continue;
            };

            if let Some(h) = held.as_mut() {
                if !self.lock.keep(&name, h).await {
                    conn = None; // not held while another instance has its turn
                    self.lock.release(held.take().expect("just checked")).await;
                    tokio::time::sleep(YIELD).await;
                }
            }
            let lock_wait = Instant::now();
            if held.is_none() {
                match self.lock.acquire(&name).await {
                    Ok(h) => {
                        let kind = match h {
                            Held::Local => LockKind::Local,
                            Held::Redis { .. } => LockKind::Redis,
                            Held::DbFallback => LockKind::DbFallback,
                        };
                        metrics::lock_acquired(kind, lock_wait.elapsed());
                        // Only this process's own queue guarantees nobody wrote since our last batch.
                        if !matches!(h, Held::Local) {
                            known = None;
                        }
                        held = Some(h);
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "counter lock not acquired in time");
                        metrics::lock_failed("timeout");
                        let retry_after_secs = e.retry_after().unwrap_or(1);
                        for job in batch {
                            let _ = job.reply.send(Err(AppError::LockTimeout { key: name.clone(), retry_after_secs }));
                        }
                        continue;
                    }
                }
            }
            let h = held.as_ref().expect("acquired above");
            let size = batch.len();
            let t0 = Instant::now();
            let results = self.serve_locked(&key, &batch, lock_wait.elapsed().as_millis() as i64, h, &mut known, &mut conn).await;
            for (job, result) in batch.into_iter().zip(results) {
                let _ = job.reply.send(result); // a caller that went away still has its number recorded and audited
            }
            tracing::debug!(size, micros = t0.elapsed().as_micros() as u64, "batch served");
            if !self.keep_connection() {
                conn = None;
            }
            if !h.lingers() {
                if matches!(h, Held::DbFallback) {
                    known = None;
                }
                self.lock.release(held.take().expect("held")).await;
            }
        }
        guard.2 = false;
    }

    /// Whether a worker keeps its write connection for its next batch. The pool hands its connections out in
    /// turn, and each connection prepares every statement it runs once: the batch INSERTs differ by batch
    /// size, so a hot counter cycling through 16 connections paid a prepare (a round trip, and the server
    /// parsing hundreds of placeholders) in most batches. Only while the pool has idle connections, so no
    /// other counter waits (SQLite's single writer connection is therefore never kept).
    fn keep_connection(&self) -> bool {
        self.db.counters.num_idle() > 0
    }

    #[allow(clippy::too_many_arguments)]
    async fn serve_locked(
        &self,
        key: &CounterKey,
        jobs: &[Job],
        lock_wait_ms: i64,
        held: &Held,
        known: &mut Option<Known>,
        conn: &mut Option<WriteConn>,
    ) -> Vec<Result<Outcome, AppError>> {
        let mut conflicts = 0;
        let mut connection_failures = 0;
        // The pre-check for numbers that exist already costs a query per batch; the unique constraint catches
        // them anyway, so it only runs on the retry after a unique violation (to name the culprit: NB005).
        let mut precheck = false;
        loop {
            let retries = conflicts + connection_failures;
            let memory = known.take();
            let from_memory = memory.is_some();
            let outcome = async {
                if conn.is_none() {
                    *conn = Some(self.db.counters.acquire().await?);
                }
                let c = conn.as_mut().expect("acquired above");
                let batch = Batch { key, jobs, lock_wait_ms, retries, fallback: held.fallback(), known: memory.as_ref(), precheck };
                self.run_batch(c, &batch).await
            }
            .await;
            if let Err(BatchError::Db(e)) = &outcome {
                if is_connection_error(e) {
                    // a connection that failed is not reused: closed, not returned to the pool
                    if let Some(c) = conn.take() {
                        drop(c.detach());
                    }
                }
            }
            match outcome {
                Ok((results, next)) => {
                    metrics::batch(jobs.len(), retries);
                    *known = Some(next);
                    return results;
                }
                // A stale memory (another process moved the counter) is not a lost race: read afresh.
                Err(BatchError::Conflict) if from_memory => {}
                Err(BatchError::Conflict | BatchError::Unique) if conflicts < MAX_CONFLICT_RETRIES => {
                    conflicts += 1;
                    precheck = true;
                }
                Err(BatchError::Conflict | BatchError::Unique) => {
                    return jobs.iter().map(|_| Err(AppError::VersionConflict(key.lock_name()))).collect();
                }
                Err(BatchError::Db(e)) if is_connection_error(&e) && connection_failures < MAX_CONNECTION_RETRIES => {
                    connection_failures += 1;
                    tracing::warn!(error = %e, attempt = connection_failures, "database unreachable, retrying batch");
                    tokio::time::sleep(Duration::from_millis(50 << connection_failures)).await;
                }
                Err(BatchError::Db(e)) => {
                    let ref_id = new_ref_id();
                    tracing::error!(error = %e, %ref_id, counter = %key.lock_name(), "batch failed");
                    let source = std::sync::Arc::new(e);
                    return jobs.iter().map(|_| Err(AppError::Database { ref_id: ref_id.clone(), source: source.clone() })).collect();
                }
                Err(BatchError::App(e)) => {
                    tracing::error!(error = %e.report(), counter = %key.lock_name(), "batch failed");
                    let ref_id = e.reference().map(str::to_string).unwrap_or_else(new_ref_id);
                    let source: crate::server::error::Cause = std::sync::Arc::new(e);
                    return jobs
                        .iter()
                        .map(|_| Err(AppError::Internal { ref_id: ref_id.clone(), message: "counter batch failed".into(), source: Some(source.clone()) }))
                        .collect();
                }
            }
        }
    }

    /// One transaction serving the whole batch. Returns one result per job, in order.
    async fn run_batch(&self, conn: &mut WriteConn, batch: &Batch<'_>) -> Result<(Vec<Result<Outcome, AppError>>, Known), BatchError> {
        let mut tx = self.db.begin_batch(conn).await?;
        match self.batch_in(tx.conn(), batch).await {
            Ok(Served { results, next, issued }) => {
                tx.commit().await?;
                if let Some((code, n)) = issued {
                    metrics::issued(&code, n);
                }
                Ok((results, next))
            }
            Err(e) => {
                // a connection that failed is closed by the caller; this one only needs its transaction undone
                if !matches!(&e, BatchError::Db(db) if is_connection_error(db)) {
                    let _ = tx.rollback().await;
                }
                Err(e)
            }
        }
    }

    /// The batch's statements, inside its transaction.
    async fn batch_in(&self, tx: &mut Conn, batch: &Batch<'_>) -> Result<Served, BatchError> {
        let &Batch { key, jobs, lock_wait_ms, retries, fallback, known, precheck } = batch;
        let now = self.clock.now_ms();
        let max_number = jobs
            .iter()
            .filter_map(|j| match &j.kind {
                JobKind::Issue { req, .. } => Some(req.template.max_seq() as i64),
                _ => None,
            })
            .max()
            .unwrap_or(0);

        let counter = match known {
            Some(k) => k.counter.clone(),
            None => store::load_or_create_counter(tx, self.db.dialect, key, max_number, now).await?,
        };
        let chain_key = counter_chain(counter.id);
        let chain_start = match known {
            Some(k) => k.chain.clone(),
            None => audit::chain_head(tx, self.db.dialect, &chain_key).await?,
        };
        let tokens: Vec<String> = jobs
            .iter()
            .filter_map(|j| match &j.kind {
                JobKind::Confirm { token, .. } | JobKind::Cancel { token, .. } => Some(token.clone()),
                JobKind::Issue { .. } => None,
            })
            .collect();
        let mut by_token = if tokens.is_empty() { HashMap::new() } else { store::numbers_by_token(tx, counter.id, &tokens).await? };
        let document_ids: Vec<String> = jobs
            .iter()
            .filter_map(|j| match &j.kind {
                JobKind::Issue { document_id: Some(d), .. } => Some(d.clone()),
                _ => None,
            })
            .collect();
        let mut by_document =
            if document_ids.is_empty() { HashMap::new() } else { store::confirmed_for_documents(tx, key.project_id, key.corr_type_id, &document_ids).await? };

        let counter_key_json = serde_json::to_string(key).ok();
        let mut last = counter.last_number;
        let mut results: Vec<Option<Result<Outcome, AppError>>> = Vec::with_capacity(jobs.len());
        let mut new_numbers: Vec<(usize, NewNumber)> = Vec::new();
        let mut changes: Vec<StatusChange> = Vec::new();
        let mut audits: Vec<(usize, AuditEntry)> = Vec::new();

        for (i, job) in jobs.iter().enumerate() {
            let base = AuditEntry {
                counter_id: Some(counter.id),
                counter_key: counter_key_json.clone(),
                retry_count: retries as i64,
                lock_wait_ms,
                total_ms: job.enqueued.elapsed().as_millis() as i64,
                fallback_used: fallback.into(),
                ..job.caller.audit_base(now)
            };
            match &job.kind {
                JobKind::Issue { req, ttl_ms, document_id } => {
                    if let Some(existing) = document_id.as_ref().and_then(|d| by_document.get(d)) {
                        results.push(Some(Ok(Outcome::Issued {
                            number: existing.number.clone(),
                            sequence: existing.sequence,
                            token: None,
                            expires_at: None,
                            created_at: now,
                        })));
                        continue;
                    }
                    let sequence = last + 1;
                    if sequence as u64 > req.template.max_seq() {
                        results.push(Some(Err(AppError::SequenceExhausted { max: req.template.max_seq() })));
                        continue;
                    }
                    last = sequence;
                    let number = req.render(sequence as u64);
                    let generate = document_id.is_some();
                    let token = (!generate).then(|| uuid::Uuid::new_v4().to_string());
                    let expires_at = (!generate).then_some(now + ttl_ms);
                    let row = NewNumber {
                        counter_id: counter.id,
                        project_id: req.project_id,
                        corr_type_id: req.corr_type_id,
                        sequence,
                        revision: req.revision.clone(),
                        number: number.clone(),
                        template: req.template.source().to_string(),
                        status: if generate { "CONFIRMED" } else { "RESERVED" },
                        token: token.clone(),
                        document_id: document_id.clone(),
                        user_id: job.caller.user_id(),
                        api_token_id: job.caller.api_token_id(),
                        created_at: now,
                        expires_at,
                        confirmed_at: generate.then_some(now),
                    };
                    if let Some(d) = document_id {
                        by_document.insert(d.clone(), NumberRow {
                            id: 0,
                            number: number.clone(),
                            sequence,
                            template: row.template.clone(),
                            status: "CONFIRMED".into(),
                            token: None,
                            document_id: Some(d.clone()),
                            expires_at: None,
                            cancel_reason: None,
                        });
                    }
                    audits.push((
                        i,
                        AuditEntry {
                            operation: if generate { "GENERATE" } else { "RESERVE" }.into(),
                            status: row.status.into(),
                            document_number: Some(number.clone()),
                            sequence: Some(sequence),
                            template_used: Some(row.template.clone()),
                            reservation_token: token.clone(),
                            document_id: document_id.clone(),
                            metadata: expires_at.map(|e| serde_json::json!({ "expiresAt": e }).to_string()),
                            ..base
                        },
                    ));
                    new_numbers.push((i, row));
                    results.push(Some(Ok(Outcome::Issued { number, sequence, token, expires_at, created_at: now })));
                }
                JobKind::Confirm { token, document_id } => {
                    let outcome = match by_token.get_mut(token) {
                        None => Err(reservation_not_found(token)),
                        Some(row) => match row.status.as_str() {
                            "RESERVED" if row.expires_at.is_some_and(|e| e <= now) => {
                                expire(row, now, &mut changes, &mut audits, i, &base);
                                Err(AppError::ReservationExpired)
                            }
                            "RESERVED" => {
                                row.status = "CONFIRMED".into();
                                row.document_id = Some(document_id.clone());
                                changes.push(StatusChange {
                                    id: row.id,
                                    status: "CONFIRMED",
                                    document_id: Some(document_id.clone()),
                                    confirmed_at: Some(now),
                                    cancelled_at: None,
                                    cancel_reason: None,
                                });
                                audits.push((i, status_audit("CONFIRM", "CONFIRMED", row, Some(document_id.clone()), None, &base)));
                                Ok(Outcome::Status { number: row.number.clone(), status: "CONFIRMED", changed: true })
                            }
                            "CONFIRMED" if row.document_id.as_deref() == Some(document_id) => {
                                Ok(Outcome::Status { number: row.number.clone(), status: "CONFIRMED", changed: false })
                            }
                            "CONFIRMED" => Err(AppError::Conflict {
                                code: ErrorCode::AlreadyConfirmed,
                                th: format!("เลขที่ {} ได้รับการยืนยันกับเอกสารอื่นแล้ว", row.number),
                                en: format!("{} is already confirmed for another document", row.number),
                            }),
                            "CANCELLED" if row.cancel_reason.as_deref() == Some("expired") => Err(AppError::ReservationExpired),
                            _ => Err(AppError::Conflict {
                                code: ErrorCode::ReservationCancelled,
                                th: format!("การจองเลขที่ {} ถูกยกเลิกแล้ว กรุณาจองใหม่", row.number),
                                en: format!("reservation of {} was cancelled", row.number),
                            }),
                        },
                    };
                    results.push(Some(outcome));
                }
                JobKind::Cancel { token, reason, expiry } => {
                    let outcome = match by_token.get_mut(token) {
                        None => Err(reservation_not_found(token)),
                        Some(row) => match row.status.as_str() {
                            "RESERVED" if *expiry && row.expires_at.is_none_or(|e| e > now) => {
                                Ok(Outcome::Status { number: row.number.clone(), status: "RESERVED", changed: false })
                            }
                            "RESERVED" if *expiry => {
                                expire(row, now, &mut changes, &mut audits, i, &base);
                                Ok(Outcome::Status { number: row.number.clone(), status: "CANCELLED", changed: true })
                            }
                            "RESERVED" => {
                                row.status = "CANCELLED".into();
                                let reason = reason.clone().unwrap_or_else(|| "cancelled".into());
                                row.cancel_reason = Some(reason.clone());
                                changes.push(StatusChange {
                                    id: row.id,
                                    status: "CANCELLED",
                                    document_id: None,
                                    confirmed_at: None,
                                    cancelled_at: Some(now),
                                    cancel_reason: Some(reason.clone()),
                                });
                                audits.push((i, status_audit("CANCEL", "CANCELLED", row, None, Some(reason), &base)));
                                Ok(Outcome::Status { number: row.number.clone(), status: "CANCELLED", changed: true })
                            }
                            "CANCELLED" => Ok(Outcome::Status { number: row.number.clone(), status: "CANCELLED", changed: false }),
                            _ => Err(AppError::Conflict {
                                code: ErrorCode::AlreadyConfirmed,
                                th: format!("เลขที่ {} ได้รับการยืนยันแล้ว ยกเลิกไม่ได้ (ใช้การ void แทน)", row.number),
                                en: format!("{} is confirmed and cannot be cancelled (void it instead)", row.number),
                            }),
                        },
                    };
                    results.push(Some(outcome));
                }
            }
        }

        // A rendered number that already exists (a hand-registered legacy number, a template that
        // renders like an older one…) fails with NB005; its sequence stays consumed and the audit row says why.
        if precheck && !new_numbers.is_empty() {
            let rendered: Vec<String> = new_numbers.iter().map(|(_, n)| n.number.clone()).collect();
            let mut taken: HashSet<String> =
                store::existing_numbers(tx, key.project_id, key.corr_type_id, &rendered).await?.into_iter().collect();
            let mut keep = Vec::with_capacity(new_numbers.len());
            for (i, n) in new_numbers.drain(..) {
                if taken.insert(n.number.clone()) {
                    keep.push((i, n));
                    continue;
                }
                tracing::error!(number = %n.number, counter = %key.lock_name(), "rendered number already exists");
                results[i] = Some(Err(AppError::DuplicateNumber(n.number.clone())));
                if let Some((_, a)) = audits.iter_mut().find(|(j, _)| *j == i) {
                    a.status = "FAILED".into();
                    a.reservation_token = None;
                    a.metadata = Some(serde_json::json!({ "error": "NB005", "reason": "duplicate number" }).to_string());
                }
            }
            new_numbers = keep;
        }

        let entries: Vec<AuditEntry> = audits.into_iter().map(|(_, a)| a).collect();
        let placed = audit::place(&chain_key, &chain_start, &entries);
        let max_number = (max_number > 0).then_some(max_number);
        if !store::advance_counter_and_chain(tx, self.db.dialect, &counter, last, max_number, now, &placed).await? {
            return Err(BatchError::Conflict);
        }
        let rows: Vec<NewNumber> = new_numbers.into_iter().map(|(_, n)| n).collect();
        let type_code = jobs.iter().find_map(|j| match &j.kind {
            JobKind::Issue { req, .. } => Some(req.corr_type_code.clone()),
            _ => None,
        });
        store::insert_numbers(tx, &rows).await?;
        store::apply_status_changes(tx, &changes).await?;
        audit::insert_placed(tx, &placed).await?;
        let next = Known { counter: CounterRow { id: counter.id, last_number: last, version: counter.version + 1 }, chain: placed.head.clone() };
        let issued = type_code.filter(|_| !rows.is_empty()).map(|code| (code, rows.len() as u64));
        let results = results.into_iter().map(|r| r.unwrap_or_else(|| Err(AppError::internal("job left without result")))).collect();
        Ok(Served { results, next, issued })
    }
}

/// One attempt at serving a batch: its jobs and what its audit rows record of the attempt.
struct Batch<'a> {
    key: &'a CounterKey,
    jobs: &'a [Job],
    lock_wait_ms: i64,
    retries: u32,
    fallback: &'static str,
    /// The counter and chain head as the previous batch left them, when this worker may trust that.
    known: Option<&'a Known>,
    /// Look for numbers that exist already (the retry after a unique violation).
    precheck: bool,
}

/// What a batch's transaction produced, for after its commit.
struct Served {
    results: Vec<Result<Outcome, AppError>>,
    next: Known,
    /// Numbers issued and their correspondence type code, for the metrics.
    issued: Option<(String, u64)>,
}


pub(super) fn reservation_not_found(token: &str) -> AppError {
    AppError::not_found(format!("การจองเลขที่ (token {token})"), format!("reservation token {token}"))
}

fn expire(row: &mut NumberRow, now: i64, changes: &mut Vec<StatusChange>, audits: &mut Vec<(usize, AuditEntry)>, i: usize, base: &AuditEntry) {
    row.status = "CANCELLED".into();
    row.cancel_reason = Some("expired".into());
    changes.push(StatusChange {
        id: row.id,
        status: "CANCELLED",
        document_id: None,
        confirmed_at: None,
        cancelled_at: Some(now),
        cancel_reason: Some("expired".into()),
    });
    audits.push((i, status_audit("CANCEL", "CANCELLED", row, None, Some("expired".into()), base)));
}

fn status_audit(operation: &str, status: &str, row: &NumberRow, document_id: Option<String>, reason: Option<String>, base: &AuditEntry) -> AuditEntry {
    AuditEntry {
        operation: operation.into(),
        status: status.into(),
        document_number: Some(row.number.clone()),
        sequence: Some(row.sequence),
        template_used: Some(row.template.clone()),
        reservation_token: row.token.clone(),
        document_id: document_id.or_else(|| row.document_id.clone()),
        metadata: reason.map(|r| serde_json::json!({ "reason": r }).to_string()),
        ..base.clone()
    }
}
