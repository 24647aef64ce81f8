//! Per-counter request queues. Each instance runs at most one worker per counter key; the worker takes
//! every request waiting on that key (up to `max_batch`), holds the counter's lock once, and serves them
//! all in one transaction: numbers in arrival order, all committed or none, one audit row each. This is
//! what turns a hot counter from one transaction per number into one per batch (BUILD-NOTES: ~2,000/s
//! → >20,000/s), and it keeps one lock attempt per key per instance.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, Notify};

use super::counter_tx::{self, should_retry, Known, PlanJob, Start, TxError};
use super::lock::{CounterLock, Held};
use crate::numbering::CounterKey;
use crate::server::audit::AuditEntry;
use crate::server::auth::Caller;
use crate::server::clock::Clock;
use crate::server::db::{is_connection_error, Conn, Db, WriteConn};
use crate::server::error::{new_ref_id, AppError};
use crate::server::metrics::{self, LockKind};

pub use super::counter_tx::{JobKind, Outcome};

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

/// Connection errors are retried three times with exponential backoff (SPEC §6).
const MAX_CONNECTION_RETRIES: u32 = 3;
/// How long a worker keeps a Redis lock after its queue ran dry, for the next request: one caller's next
/// request usually follows its answer within a fraction of a millisecond, and taking the lock again costs
/// two round trips to every Redis server.
const LINGER: Duration = Duration::from_millis(2);
/// A worker that lets go of a wanted lock steps back this long, so that a waiting instance gets its turn.
const YIELD: Duration = Duration::from_millis(3);

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
            if let Err(TxError::Db(e)) = &outcome {
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
                Err(TxError::Conflict) if from_memory => {}
                Err(e) if should_retry(e.lost_race(), conflicts) => {
                    conflicts += 1;
                    precheck = true;
                }
                Err(TxError::Conflict | TxError::Unique) => {
                    return jobs.iter().map(|_| Err(AppError::VersionConflict(key.lock_name()))).collect();
                }
                Err(TxError::Db(e)) if is_connection_error(&e) && connection_failures < MAX_CONNECTION_RETRIES => {
                    connection_failures += 1;
                    tracing::warn!(error = %e, attempt = connection_failures, "database unreachable, retrying batch");
                    tokio::time::sleep(Duration::from_millis(50 << connection_failures)).await;
                }
                Err(TxError::Db(e)) => {
                    let ref_id = new_ref_id();
                    tracing::error!(error = %e, %ref_id, counter = %key.lock_name(), "batch failed");
                    let source = std::sync::Arc::new(e);
                    return jobs.iter().map(|_| Err(AppError::Database { ref_id: ref_id.clone(), source: source.clone() })).collect();
                }
                Err(TxError::App(e)) => {
                    tracing::error!(error = %e.report(), counter = %key.lock_name(), "batch failed");
                    let ref_id = e.reference().map(str::to_string).unwrap_or_else(new_ref_id);
                    let source: crate::server::error::Cause = std::sync::Arc::new(e);
                    return jobs
                        .iter()
                        .map(|_| {
                            Err(AppError::Internal { ref_id: ref_id.clone(), message: "counter batch failed".into(), source: Some(source.clone()) })
                        })
                        .collect();
                }
            }
        }
    }

    /// One transaction serving the whole batch. Returns one result per job, in order.
    async fn run_batch(&self, conn: &mut WriteConn, batch: &Batch<'_>) -> Result<(Vec<Result<Outcome, AppError>>, Known), TxError> {
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
                if !matches!(&e, TxError::Db(db) if is_connection_error(db)) {
                    let _ = tx.rollback().await;
                }
                Err(e)
            }
        }
    }

    /// The batch's statements, inside its transaction: read (or remember) → plan → apply.
    async fn batch_in(&self, tx: &mut Conn, batch: &Batch<'_>) -> Result<Served, TxError> {
        let now = self.clock.now_ms();
        let kinds: Vec<&JobKind> = batch.jobs.iter().map(|j| &j.kind).collect();
        let max_number = counter_tx::plan::max_number(&kinds);
        let mut start = counter_tx::read_batch(tx, self.db.dialect, batch.key, &kinds, batch.known, now).await?;
        let mut plan = self.plan(batch, &mut start, now);
        // A rendered number that already exists (a hand-registered legacy number, a template that
        // renders like an older one…) fails with NB005; its sequence stays consumed and the audit row says why.
        if batch.precheck {
            let taken = counter_tx::taken_numbers(tx, batch.key, &plan).await?;
            for number in plan.refuse_taken(taken) {
                tracing::error!(%number, counter = %batch.key.lock_name(), "rendered number already exists");
            }
        }
        let applied = counter_tx::apply_batch(tx, self.db.dialect, &start, plan, max_number, now).await?;
        let issued = counter_tx::plan::type_code(&kinds).filter(|_| applied.inserted > 0).map(|code| (code, applied.inserted as u64));
        Ok(Served { results: applied.results, next: applied.next, issued })
    }

    /// The batch's jobs with their audit rows' common part, planned against what the batch read.
    fn plan(&self, batch: &Batch<'_>, start: &mut Start, now: i64) -> counter_tx::Plan {
        let counter_key = serde_json::to_string(batch.key).ok();
        let jobs: Vec<PlanJob<'_>> = batch
            .jobs
            .iter()
            .map(|job| PlanJob {
                kind: &job.kind,
                caller: &job.caller,
                audit: AuditEntry {
                    counter_id: Some(start.counter.id),
                    counter_key: counter_key.clone(),
                    retry_count: batch.retries as i64,
                    lock_wait_ms: batch.lock_wait_ms,
                    total_ms: job.enqueued.elapsed().as_millis() as i64,
                    fallback_used: batch.fallback.into(),
                    ..job.caller.audit_base(now)
                },
            })
            .collect();
        let rows = std::mem::take(&mut start.rows);
        counter_tx::plan::plan(&start.counter, jobs, rows, now, || uuid::Uuid::new_v4().to_string())
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
