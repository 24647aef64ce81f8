//! Per-counter request queues. Each instance runs at most one worker per counter key; the worker takes
//! every request waiting on that key (up to `max_batch`), holds the counter's lock once, and has them all
//! served as one batch: numbers in arrival order, all committed or none, one audit row each. This is
//! what turns a hot counter from one transaction per number into one per batch (measured 2026-11-22 on a 2-core VM: ~2,000/s
//! → >20,000/s), and it keeps one lock attempt per key per instance. The batches of many counters share
//! one transaction and its commit (`committer`).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, Notify};

use super::committer::{Committers, Work};
use super::counter_tx::{Known, Lifecycle};
use super::forward::{Failed, Forwarder};
use super::idempotency::Keyed;
use super::lock::{Acquired, CounterLock, Held};
use super::EngineConfig;
use crate::numbering::CounterKey;
use crate::server::auth::Caller;
use crate::server::clock::Clock;
use crate::server::db::Db;
use crate::server::error::AppError;
use crate::server::metrics::{self, LockKind};

pub use super::counter_tx::{JobKind, Outcome};

struct Job {
    work: Work,
    reply: oneshot::Sender<Result<Outcome, AppError>>,
    /// Served here, never forwarded: it was sent here by another instance (`forward`), or the holder it was sent
    /// to did not take it.
    serve_here: bool,
}

struct KeyQueue {
    jobs: VecDeque<Job>,
    /// Wakes a worker that lingers on a kept lock when a job arrives.
    wake: Arc<Notify>,
}

/// Threads with a runtime of their own: one for the committers, and with a Redis lock one for the counter workers. On
/// the server's shared runtime a worker woken by Redis's answer waited in the run queue behind every HTTP task that was
/// ready (64 callers: dozens); on a thread of its own the kernel runs it as soon as the answer arrives. The committers
/// likewise: on the workers' thread, a committer woken by its next statement's answer waited behind the workers that
/// its previous group's commit had just woken, every group (measured: a spread group took 0.57 ms to read and 1.15 ms
/// to write there, 0.19 and 0.80 ms on a thread of its own; docs/benchmarks/threads.md).
#[derive(Clone)]
pub(crate) struct CounterThreads {
    /// None without a Redis lock: a worker on the in-process lock has no I/O of its own (it hands its batch to a
    /// committer and waits), and a thread of its own would only cost a wake-up of that thread per request
    /// (docs/benchmarks/threads.md).
    workers: Option<tokio::runtime::Handle>,
    committers: tokio::runtime::Handle,
}

impl CounterThreads {
    /// The committers' thread, and the workers' when they take a Redis lock.
    pub(crate) fn start(redis_lock: bool) -> std::io::Result<CounterThreads> {
        let workers = if redis_lock { Some(runtime_thread("counters")?) } else { None };
        Ok(CounterThreads { workers, committers: runtime_thread("committers")? })
    }

    pub(crate) fn workers(&self) -> Option<&tokio::runtime::Handle> {
        self.workers.as_ref()
    }

    /// Where the committers run, and the MariaDB counter pool's connections with them (`Db::counters_on`).
    pub(crate) fn committers(&self) -> &tokio::runtime::Handle {
        &self.committers
    }
}

/// A thread that runs a current-thread runtime for as long as the process lives.
fn runtime_thread(name: &str) -> std::io::Result<tokio::runtime::Handle> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let handle = runtime.handle().clone();
    std::thread::Builder::new().name(name.into()).spawn(move || runtime.block_on(std::future::pending::<()>()))?;
    Ok(handle)
}

pub(crate) struct Queues {
    pub(crate) lock: CounterLock,
    /// Where the workers' batches are committed, many counters per transaction.
    pub(crate) committers: Arc<Committers>,
    max_batch: usize,
    /// Where workers run: the workers' thread (`CounterThreads`), or (None) the runtime of the request that starts them.
    workers_on: Option<tokio::runtime::Handle>,
    /// Keys with a live worker, and the jobs waiting for it.
    waiting: Mutex<HashMap<CounterKey, KeyQueue>>,
    /// Set when the process stops: workers let their locks go instead of lingering.
    closing: std::sync::atomic::AtomicBool,
    /// With forwarding on: sends a batch to the instance that holds its counter's lock.
    forwarder: Option<Forwarder>,
}

/// How long a worker keeps a Redis lock after its queue ran dry, for the next request: one caller's next
/// request usually follows its answer within a fraction of a millisecond, and taking the lock again costs
/// two round trips to every Redis server.
const LINGER: Duration = Duration::from_millis(2);
/// The same with forwarding on: the other instances' batches come back only after their answers have reached their
/// callers and the callers' next requests have arrived. A holder that let go in such a pause would send them
/// to taking the lock, and it would change hands (measured: the holder moved several times a second).
const LINGER_FORWARDING: Duration = Duration::from_millis(25);
/// Batches one worker has on their way to the lock's holder at once: the next batch gathers and leaves while the
/// holder serves the previous one, instead of waiting for its answers.
const FORWARDS_IN_FLIGHT: usize = 4;
/// A worker that lets go of a wanted lock steps back this long, so that a waiting instance gets its turn.
const YIELD: Duration = Duration::from_millis(3);

impl Queues {
    pub(crate) fn new(
        db: Db,
        clock: Arc<Clock>,
        lifecycle: Arc<Lifecycle>,
        config: &EngineConfig,
        lock: CounterLock,
        threads: Option<CounterThreads>,
    ) -> Queues {
        let workers_on = threads.as_ref().and_then(CounterThreads::workers).cloned();
        let (max_batch, committers) = (config.max_batch, config.committers);
        Queues {
            lock,
            committers: Arc::new(
                Committers::new(db, clock, lifecycle, committers, threads.as_ref().map(|t| t.committers().clone()), config.witness.clone())
                    .publishing_to(config.events.clone()),
            ),
            max_batch: max_batch.max(1),
            workers_on,
            waiting: Mutex::new(HashMap::new()),
            closing: std::sync::atomic::AtomicBool::new(false),
            forwarder: None,
        }
    }

    /// Forwarding on: batches whose counter is held by an instance that says where go there (`forward`).
    pub(crate) fn forwarding(mut self, forwarder: Forwarder) -> Self {
        self.forwarder = Some(forwarder);
        self
    }

    pub(crate) fn closing(&self) -> bool {
        self.closing.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// On shutdown, after the HTTP server has drained: wakes every lingering worker to release its lock and
    /// waits (at most `patience`) until all have ended. A process that died holding a Redis lock would make
    /// the other instances wait out its TTL (up to 5 s) for that counter.
    pub(crate) async fn close(&self, patience: Duration) {
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
    pub(crate) async fn submit(self: &Arc<Self>, key: CounterKey, kind: JobKind, caller: Caller, keyed: Option<Keyed>) -> Result<Outcome, AppError> {
        self.queue(key, Work { kind, caller, enqueued: Instant::now(), keyed }, false).await
    }

    /// Queues a job another instance forwarded (`forward`): it is served here, whoever holds the lock by then.
    pub(crate) async fn submit_forwarded(
        self: &Arc<Self>,
        key: CounterKey,
        kind: JobKind,
        caller: Caller,
        keyed: Option<Keyed>,
    ) -> Result<Outcome, AppError> {
        self.queue(key, Work { kind, caller, enqueued: Instant::now(), keyed }, true).await
    }

    async fn queue(self: &Arc<Self>, key: CounterKey, work: Work, serve_here: bool) -> Result<Outcome, AppError> {
        let (reply, outcome) = oneshot::channel();
        self.enqueue(key, vec![Job { work, reply, serve_here }], false);
        outcome.await.map_err(|_| AppError::internal("the counter's worker stopped before answering"))?
    }

    /// Puts jobs on their counter's queue (`first`: ahead of those waiting, as the older ones) and wakes its worker,
    /// or starts one.
    fn enqueue(self: &Arc<Self>, key: CounterKey, jobs: Vec<Job>, first: bool) {
        let (wake, start_worker) = {
            let mut waiting = self.waiting.lock().unwrap();
            match waiting.get_mut(&key) {
                Some(q) if first => {
                    for job in jobs.into_iter().rev() {
                        q.jobs.push_front(job);
                    }
                    (q.wake.clone(), false)
                }
                Some(q) => {
                    q.jobs.extend(jobs);
                    (q.wake.clone(), false)
                }
                None => {
                    let wake = Arc::new(Notify::new());
                    waiting.insert(key.clone(), KeyQueue { jobs: jobs.into(), wake: wake.clone() });
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
        // this worker's batches on their way to the lock's holder
        let in_flight = Arc::new(tokio::sync::Semaphore::new(FORWARDS_IN_FLIGHT));
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
                let h = held.take().expect("checked above");
                let linger = if self.forwarder.is_some() { LINGER_FORWARDING } else { LINGER };
                if !self.closing() && tokio::time::timeout(linger, wake.notified()).await.is_ok() {
                    held = Some(h);
                } else {
                    self.lock.release(h).await;
                }
                continue;
            };

            if let Some(h) = held.as_mut() {
                if !self.lock.keep(&name, h).await {
                    self.lock.release(held.take().expect("just checked")).await;
                    tokio::time::sleep(YIELD).await;
                }
            }
            let lock_wait = Instant::now();
            if held.is_none() {
                // A batch of this instance's own jobs may go to the instance that holds the lock; one that could
                // not be delivered there, or that was forwarded here, takes the lock.
                let may_forward = self.forwarder.is_some() && !self.closing() && batch.iter().all(|j| !j.serve_here);
                let acquired = match self.lock.acquire_or_find(&name, may_forward).await {
                    Ok(Acquired::HeldBy(holder)) => {
                        // sent while the next batch gathers; a batch the holder did not take comes back to be served here
                        let permit = in_flight.clone().acquire_owned().await.expect("the semaphore is never closed");
                        let (queues, key) = (self.clone(), key.clone());
                        tokio::spawn(async move {
                            if let Some(mut back) = queues.forward(&holder, &key, batch).await {
                                back.iter_mut().for_each(|j| j.serve_here = true);
                                queues.enqueue(key, back, true);
                            }
                            drop(permit);
                        });
                        continue;
                    }
                    Ok(Acquired::Lock(h)) => Ok(h),
                    Err(e) => Err(e),
                };
                match acquired {
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
            let (work, replies): (Vec<Work>, Vec<_>) = batch.into_iter().map(|j| (j.work, j.reply)).unzip();
            let lock_wait_ms = lock_wait.elapsed().as_millis() as i64;
            let results = self.committers.serve(&key, work, lock_wait_ms, h.fallback(), &mut known).await;
            for (reply, result) in replies.into_iter().zip(results) {
                let _ = reply.send(result); // a caller that went away still has its number recorded and audited
            }
            tracing::debug!(size, micros = t0.elapsed().as_micros() as u64, "batch served");
            if !h.lingers() {
                if matches!(h, Held::DbFallback) {
                    known = None;
                }
                self.lock.release(held.take().expect("held")).await;
            }
        }
        guard.2 = false;
    }

    /// Sends a batch to the instance that holds its counter's lock and answers its callers; hands the batch back
    /// when the holder did not take it. A batch sent without an answer is not served again here (its jobs may
    /// have been served there): its callers get 503, like a lock not acquired in time.
    async fn forward(&self, holder: &str, key: &CounterKey, batch: Vec<Job>) -> Option<Vec<Job>> {
        let Some(forwarder) = self.forwarder.as_ref() else { return Some(batch) };
        let jobs: Vec<_> = batch.iter().map(|j| (&j.work.kind, &j.work.caller, j.work.keyed.as_ref())).collect();
        let t0 = Instant::now();
        let sent = forwarder.send(holder, key, &jobs).await;
        drop(jobs);
        let n = batch.len();
        tracing::debug!(size = n, micros = t0.elapsed().as_micros() as u64, "batch forwarded");
        match sent {
            Ok(results) => {
                metrics::forwarded("answered", n);
                for (job, result) in batch.into_iter().zip(results) {
                    let _ = job.reply.send(result);
                }
                None
            }
            Err(Failed::NotDelivered(why)) => {
                tracing::info!(holder, why, "forwarded batch not delivered: served here");
                metrics::forwarded("not_delivered", n);
                Some(batch)
            }
            Err(Failed::Unanswered(why)) => {
                tracing::warn!(holder, why, "forwarded batch unanswered: its callers are told to retry");
                metrics::forwarded("unanswered", n);
                for job in batch {
                    let _ = job.reply.send(Err(AppError::LockTimeout { key: key.lock_name(), retry_after_secs: 1 }));
                }
                None
            }
        }
    }
}
