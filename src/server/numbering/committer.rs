//! Commits shared across counters. A counter's worker (`queue`) holds its lock and hands its batch here; a
//! committer takes every batch waiting on its shard — of any counters — and serves them in ONE transaction,
//! so spread load pays one durable commit per group instead of one per counter. SQLite has one committer
//! (one writer); MariaDB a small fixed set, sharded by counter key, each on a connection of its own.
//!
//! Inside a group each counter is still fenced by its own version check and the unique constraint, behind a
//! savepoint of its own: a counter that fails is rolled back to its savepoint and answered alone (its worker
//! retries it by the one retry policy), while the others commit. If the database lost the whole transaction
//! (a deadlock victim, a dropped connection: its savepoint is gone), the failing batch is answered with its
//! error and the rest run again in a new transaction. Numbers reach callers only after their group commits.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sqlx::Executor;
use tokio::sync::oneshot;

use super::counter_tx::{self, GroupBatch, Known, Lifecycle, PlanJob, Planned, Start, TxError};
use super::idempotency::{self, Keyed};
use super::witness::{Head, Witness};
use crate::contract::ErrorCode;
use crate::numbering::CounterId;
use crate::numbering::CounterKey;
use crate::server::audit::AuditEntry;
use crate::server::auth::Caller;
use crate::server::clock::Clock;
use crate::server::db::{is_connection_error, BatchTx, Conn, Db, Dialect, WriteConn};
use crate::server::error::{new_ref_id, AppError, Pause, Retry};
use crate::server::events::Events;
use crate::server::metrics::{self, GroupPhase};
use crate::server::outbox::{self, EventKind};

pub(crate) use super::counter_tx::{JobKind, Outcome};

/// Connection errors are retried three times with exponential backoff (docs/rules/api.md#errors): 100, 200, 400 ms.
const LOST_CONNECTION: Retry = Retry { times: 3, pause: Pause::Doubling(100) };
/// Most counters' batches one transaction serves: past a few dozen the savepoints and the longer hold of the
/// rows cost more than the shared commit saves.
const MAX_GROUP: usize = 64;
pub use crate::server::config::DEFAULT_COMMITTERS;

/// One request of a counter batch: what it asks, who asks, since when.
pub struct Work {
    pub kind: JobKind,
    pub caller: Caller,
    pub enqueued: Instant,
    /// The request's `Idempotency-Key`, stored with its outcome in the batch's transaction.
    pub keyed: Option<Keyed>,
}

/// One try at serving a counter's batch, handed to its shard's committer and handed back with the outcome.
pub(crate) struct Attempt {
    pub(crate) key: CounterKey,
    pub(crate) work: Vec<Work>,
    pub(crate) lock_wait_ms: i64,
    /// Retries so far (recorded in the audit rows).
    pub(crate) retries: u32,
    /// The lock fallback in use (`NONE` / `DB_LOCK`), for the audit rows.
    pub(crate) fallback: &'static str,
    /// The counter and chain head as this worker's previous batch left them, when it may trust that.
    pub(crate) known: Option<Known>,
    /// Look for numbers that exist already first (the retry after a unique violation).
    pub(crate) precheck: bool,
}

/// Each job's outcome and the memory for the counter's next batch, once committed.
pub(crate) type Committed = (Vec<Result<Outcome, AppError>>, Known);

/// A group's transaction: each batch's result, or the batch whose failure lost the whole transaction.
type GroupOutcome = Result<Vec<Result<Committed, TxError>>, (usize, TxError)>;

struct Pending {
    attempt: Attempt,
    done: oneshot::Sender<(Attempt, Result<Committed, TxError>)>,
}

#[derive(Default)]
struct ShardQueue {
    waiting: Vec<Pending>,
    running: bool,
    /// The connection of the committer that ran last, parked for the next one (see `run`), and since when.
    parked: Option<(WriteConn, Instant)>,
}

/// A parked connection older than this goes back to the pool, which pings it before its next use.
const PARK_AT_MOST: Duration = Duration::from_secs(1);
/// How long a SQLite committer keeps the single writer connection over consecutive groups (`may_keep`); then
/// the other writes (template saves, the expiry sweep, admin actions) get their turn.
const HOLD_WRITER_AT_MOST: Duration = Duration::from_millis(20);

/// What the committers did since start: for tests and the benchmark's reading of group sizes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommitStats {
    /// Counter batches taken into a transaction (committed or not).
    pub taken: u64,
    /// Transactions that ended in a commit.
    pub groups: u64,
    /// Counter batches inside those transactions.
    pub batches: u64,
    /// Counter batches that failed inside a shared transaction and were rolled back to their savepoint alone.
    pub isolated_failures: u64,
    /// Transactions the database lost as a whole, whose other batches then ran again.
    pub regrouped: u64,
    /// Transactions committed with their batches served together, one statement per kind (`try_group_together`).
    pub together: u64,
}

pub struct Committers {
    db: Db,
    clock: Arc<Clock>,
    /// Every number's lifecycle (the `NUMBER` workflow), asked by the plans.
    lifecycle: Arc<Lifecycle>,
    shards: Vec<Mutex<ShardQueue>>,
    /// Where committers run: the committers' thread (`CounterThreads`), or (None) the runtime of the worker that starts one.
    runs_on: Option<tokio::runtime::Handle>,
    taken: AtomicU64,
    groups: AtomicU64,
    batches: AtomicU64,
    isolated_failures: AtomicU64,
    regrouped: AtomicU64,
    together: AtomicU64,
    /// Counter ids by key, of the counters served since start (ids never change): a group reads its counters
    /// by id, in one statement.
    ids: Mutex<HashMap<CounterKey, CounterId>>,
    /// The counters' heads recorded outside the database (docs/rules/numbering.md#audit-and-retention), when one is kept.
    witness: Option<Arc<Witness>>,
    /// Where a committed batch's counter is announced to the live screens (`events`): never waited for.
    events: Option<Arc<Events>>,
}

/// Ids remembered at most; past it the memory starts again (a counter not remembered is read by its key).
const MAX_IDS: usize = 100_000;

impl Committers {
    /// `shards` committers on MariaDB (at least one); always one on SQLite, which has one writer.
    pub fn new(
        db: Db,
        clock: Arc<Clock>,
        lifecycle: Arc<Lifecycle>,
        shards: usize,
        runs_on: Option<tokio::runtime::Handle>,
        witness: Option<Arc<Witness>>,
    ) -> Committers {
        let shards = if db.dialect == Dialect::Sqlite { 1 } else { shards.max(1) };
        Committers {
            db,
            clock,
            lifecycle,
            shards: (0..shards).map(|_| Mutex::new(ShardQueue::default())).collect(),
            runs_on,
            taken: AtomicU64::new(0),
            groups: AtomicU64::new(0),
            batches: AtomicU64::new(0),
            isolated_failures: AtomicU64::new(0),
            regrouped: AtomicU64::new(0),
            together: AtomicU64::new(0),
            ids: Mutex::new(HashMap::new()),
            witness,
            events: None,
        }
    }

    /// Announces each committed batch's counter (its latest last number) to the live screens.
    pub(crate) fn publishing_to(mut self, events: Option<Arc<Events>>) -> Committers {
        self.events = events;
        self
    }

    pub fn stats(&self) -> CommitStats {
        CommitStats {
            taken: self.taken.load(Ordering::Relaxed),
            groups: self.groups.load(Ordering::Relaxed),
            batches: self.batches.load(Ordering::Relaxed),
            isolated_failures: self.isolated_failures.load(Ordering::Relaxed),
            regrouped: self.regrouped.load(Ordering::Relaxed),
            together: self.together.load(Ordering::Relaxed),
        }
    }

    /// Batches handed over and not yet taken into a transaction, over all shards.
    pub fn waiting(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap().waiting.len()).sum()
    }

    /// Serves one counter's batch (its worker holds the counter's lock) and returns one result per request,
    /// in order. The one retry policy of docs/rules/numbering.md#concurrency-the-double-lock: a stale memory is read
    /// afresh, a lost race runs again at
    /// most twice, a connection error three times with backoff.
    pub async fn serve(
        self: &Arc<Self>,
        key: &CounterKey,
        work: Vec<Work>,
        lock_wait_ms: i64,
        fallback: &'static str,
        known: &mut Option<Known>,
    ) -> Vec<Result<Outcome, AppError>> {
        let jobs = work.len();
        let failed = |e: AppError| (0..jobs).map(|_| Err(e.clone())).collect();
        let mut conflicts = 0;
        let mut connection_failures = 0;
        // The pre-check for numbers that exist already costs a query per batch; the unique constraint catches
        // them anyway, so it only runs on the retry after a unique violation (to name the culprit: NB005).
        let mut precheck = false;
        let mut attempt = Attempt { key: key.clone(), work, lock_wait_ms, retries: 0, fallback, known: None, precheck };
        // A witness shared by several instances: the head the others recorded, for a counter this worker does not
        // remember (it remembers only what this process wrote last). Fetched here, by each counter's worker, rather
        // than by the committer, whose groups would each wait for it.
        if let Some(w) = self.witness.as_ref().filter(|w| w.is_shared() && known.is_none()) {
            w.refresh(&[key]).await;
        }
        loop {
            attempt.retries = conflicts + connection_failures;
            attempt.known = known.take();
            attempt.precheck = precheck;
            let from_memory = attempt.known.is_some();
            let Some((back, outcome)) = self.commit(attempt).await else {
                return failed(AppError::internal("the committer stopped before answering"));
            };
            attempt = back;
            match outcome {
                Ok((results, next)) => {
                    metrics::batch(jobs, attempt.retries);
                    // recorded before anyone is answered: every number a caller holds is witnessed
                    if let Some(w) = &self.witness {
                        w.record(key, Head::of(next.counter.last_number, &next.chain)).await;
                    }
                    self.remember_id(key, next.counter.id);
                    if let Some(events) = &self.events {
                        // a map insert: the hub coalesces a hot counter to a few events a second
                        events.publish(counter_event(key, next.counter.id, next.counter.last_number));
                    }
                    *known = Some(next);
                    return results;
                }
                // A stale memory (another process moved the counter) is not a lost race: read afresh.
                Err(TxError::Conflict) if from_memory => {}
                Err(e) if e.lost_race() && counter_tx::LOST_RACE.pause_before(conflicts).is_some() => {
                    conflicts += 1;
                    precheck = true;
                }
                Err(TxError::Conflict | TxError::Unique) => return failed(AppError::VersionConflict(key.lock_name())),
                Err(TxError::Db(e)) if is_connection_error(&e) && LOST_CONNECTION.pause_before(connection_failures).is_some() => {
                    let pause = LOST_CONNECTION.pause_before(connection_failures).unwrap_or_default();
                    connection_failures += 1;
                    tracing::warn!(error = %e, attempt = connection_failures, "database unreachable, retrying batch");
                    tokio::time::sleep(pause).await;
                }
                Err(TxError::Db(e)) => {
                    let ref_id = new_ref_id();
                    tracing::error!(error = %e, %ref_id, counter = %key.lock_name(), "batch failed");
                    return failed(AppError::Database { ref_id, source: Arc::new(e) });
                }
                Err(TxError::App(e)) if e.code() == ErrorCode::CounterBehindWitness => {
                    tracing::error!(error = %e, "counter behind its witness: nothing issued");
                    metrics::behind_witness();
                    self.tell_behind_witness(key, &e).await;
                    return failed(e);
                }
                Err(TxError::App(e)) => {
                    tracing::error!(error = %e.report(), counter = %key.lock_name(), "batch failed");
                    let ref_id = e.reference().map(str::to_string).unwrap_or_else(new_ref_id);
                    let source: crate::server::error::Cause = Arc::new(e);
                    return failed(AppError::Internal { ref_id, message: "counter batch failed".into(), source: Some(source) });
                }
            }
        }
    }

    /// Notifies (docs/rules/api.md#notifications-and-live-screens) that a counter is behind its witness, once per
    /// episode (`outbox::append_once`): in a
    /// transaction of its own, as the refused batch wrote nothing.
    async fn tell_behind_witness(&self, key: &CounterKey, e: &AppError) {
        let AppError::BehindWitness { counter_id, stored, witnessed, witnessed_last, .. } = e else { return };
        let data = serde_json::json!({ "counterId": counter_id, "counterKey": key, "chainLength": stored, "witnessedChainLength": witnessed,
                                       "witnessedLastNumber": witnessed_last });
        let event = outbox::Event::about_counter(EventKind::CounterBehindWitness, *counter_id, data).in_project(key.project_id);
        if let Err(e) = outbox::append_once(&self.db, &event, self.clock.now_ms()).await {
            tracing::warn!(error = %e, counter = %key.lock_name(), "could not record the behind-witness notification");
        }
    }

    /// Hands one try to its shard's committer and waits until its group has committed (or it failed). None
    /// only if the committer panicked.
    async fn commit(self: &Arc<Self>, attempt: Attempt) -> Option<(Attempt, Result<Committed, TxError>)> {
        let shard = self.shard_of(&attempt.key);
        let (done, answer) = oneshot::channel();
        let start = {
            let mut q = self.shards[shard].lock().unwrap();
            q.waiting.push(Pending { attempt, done });
            !std::mem::replace(&mut q.running, true)
        };
        if start {
            let committers = self.clone();
            let run = async move { committers.run(shard).await };
            match &self.runs_on {
                Some(handle) => drop(handle.spawn(run)),
                None => drop(tokio::spawn(run)),
            }
        }
        answer.await.ok()
    }

    fn remember_id(&self, key: &CounterKey, id: CounterId) {
        let mut ids = self.ids.lock().unwrap();
        if ids.len() >= MAX_IDS && !ids.contains_key(key) {
            ids.clear();
        }
        ids.insert(key.clone(), id);
    }

    fn shard_of(&self, key: &CounterKey) -> usize {
        use std::hash::{Hash, Hasher};
        if self.shards.len() == 1 {
            return 0;
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut h);
        (h.finish() % self.shards.len() as u64) as usize
    }

    /// A shard's committer: serves groups until nothing waits (a later batch starts it again).
    async fn run(self: Arc<Self>, shard: usize) {
        // If serving a group panics, fail what waits (its workers answer their callers) instead of hanging.
        struct Abandon<'a>(&'a Mutex<ShardQueue>, bool);
        impl Drop for Abandon<'_> {
            fn drop(&mut self) {
                if self.1 {
                    let mut q = self.0.lock().unwrap_or_else(|p| p.into_inner());
                    q.waiting.clear();
                    q.running = false;
                }
            }
        }
        let mut guard = Abandon(&self.shards[shard], true);
        // A committer ends when nothing waits, which under light load is after every group: its connection is
        // parked for the next one rather than given back (a MariaDB connection given back is rolled back by
        // the pool — a round trip — and the next one is drawn, and may prepare its statements again).
        let parked = self.shards[shard].lock().unwrap().parked.take();
        // not one parked before the database's primary changed: it may lead to the old primary (`db::primary`)
        let changes = self.db.primary.changes();
        let mut conn: Option<WriteConn> = parked.filter(|(_, at)| at.elapsed() < PARK_AT_MOST && !changes.changed_since(*at)).map(|(c, _)| c);
        let mut held_since = Instant::now();
        loop {
            let group: Vec<Pending> = {
                let mut q = self.shards[shard].lock().unwrap();
                if q.waiting.is_empty() {
                    q.running = false;
                    if self.may_park() {
                        q.parked = conn.take().map(|c| (c, Instant::now()));
                    }
                    break;
                }
                let n = q.waiting.len().min(MAX_GROUP);
                q.waiting.drain(..n).collect()
            };
            self.taken.fetch_add(group.len() as u64, Ordering::Relaxed);
            if conn.is_none() {
                held_since = Instant::now(); // taken by serve_group
            }
            self.serve_group(group, &mut conn).await;
            if !self.may_keep(held_since) || changes.changed_since(held_since) {
                conn = None;
            }
        }
        guard.1 = false;
    }

    /// Whether a committer that found nothing more to do parks its connection for the next committer: on
    /// MariaDB, while the pool has idle ones, so no one else waits for it. Never SQLite's single writer.
    fn may_park(&self) -> bool {
        self.db.dialect == Dialect::MySql && self.db.counters.num_idle() > 0
    }

    /// Whether a committer keeps its connection for its next group. MariaDB: only while the pool has idle ones
    /// (each connection prepares each statement once, and the batch INSERTs differ by batch size). SQLite:
    /// the single writer is kept while groups follow each other, for at most `HOLD_WRITER_AT_MOST`, rather than
    /// given back to the pool and drawn again between two groups (docs/benchmarks/spread-load.md).
    fn may_keep(&self, held_since: Instant) -> bool {
        match self.db.dialect {
            Dialect::MySql => self.db.counters.num_idle() > 0,
            Dialect::Sqlite => held_since.elapsed() < HOLD_WRITER_AT_MOST,
        }
    }

    /// Commits a group, answering each batch; a batch whose failure cost the whole transaction is answered
    /// with it, and the others run again.
    async fn serve_group(&self, mut group: Vec<Pending>, conn: &mut Option<WriteConn>) {
        // one order of counters for every committer of every instance: their row locks cannot deadlock
        group.sort_by(|a, b| a.attempt.key.cmp(&b.attempt.key));
        loop {
            let outcome = match self.try_group_together(&group, conn).await {
                Some(outcome) => outcome,
                None => self.try_group(&group, conn).await,
            };
            let connection_lost = match &outcome {
                Ok(results) => results.iter().any(|r| r.as_ref().is_err_and(connection_lost)),
                Err((_, e)) => connection_lost(e),
            };
            if connection_lost {
                discard(conn);
            }
            match outcome {
                Ok(results) => {
                    for (pending, result) in group.into_iter().zip(results) {
                        let _ = pending.done.send((pending.attempt, result));
                    }
                    return;
                }
                Err((culprit, error)) => {
                    let pending = group.remove(culprit);
                    let _ = pending.done.send((pending.attempt, Err(error)));
                    if group.is_empty() {
                        return;
                    }
                    self.regrouped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// One transaction for the group: Ok with each batch's result (failures rolled back to their savepoints
    /// alone), or Err with the batch whose failure lost the whole transaction.
    async fn try_group(&self, group: &[Pending], conn: &mut Option<WriteConn>) -> GroupOutcome {
        if conn.is_none() {
            *conn = Some(self.db.counters.acquire().await.map_err(|e| (0, TxError::from(e)))?);
        }
        let c = conn.as_mut().expect("acquired above");
        let mut tx = self.db.begin_batch(c).await.map_err(|e| (0, TxError::from(e)))?;
        let shared = group.len() > 1;
        let mut served = Vec::with_capacity(group.len());
        for (i, pending) in group.iter().enumerate() {
            if shared {
                if let Err(e) = tx.conn().execute("SAVEPOINT counter_batch").await {
                    // undone before the others run again: they must not find their first try's writes
                    let e = TxError::from(e);
                    if !connection_lost(&e) && tx.rollback().await.is_err() {
                        discard(conn);
                    }
                    return Err((i, e));
                }
            }
            match self.batch_in(tx.conn(), &pending.attempt).await {
                Ok(s) => served.push(Ok(s)),
                Err(e) => {
                    let lost = connection_lost(&e);
                    if !shared || lost {
                        if !lost && tx.rollback().await.is_err() {
                            discard(conn);
                        }
                        return if shared { Err((i, e)) } else { Ok(vec![Err(e)]) };
                    }
                    // MariaDB forgets the savepoints of a transaction it rolled back itself (a deadlock victim)
                    if tx.conn().execute("ROLLBACK TO SAVEPOINT counter_batch").await.is_err() {
                        if tx.rollback().await.is_err() {
                            discard(conn);
                        }
                        return Err((i, e));
                    }
                    self.isolated_failures.fetch_add(1, Ordering::Relaxed);
                    served.push(Err(e));
                }
            }
        }
        let (results, broken) = self.finish(tx, served).await;
        if broken {
            discard(conn);
        }
        Ok(results)
    }

    /// Ends a group's transaction: commits what its batches wrote (rolls back when none succeeded) and
    /// gives each batch its result. `true` when the connection must be discarded (a failed COMMIT or ROLLBACK).
    async fn finish(&self, tx: BatchTx<'_>, served: Vec<Result<Served, TxError>>) -> (Vec<Result<Committed, TxError>>, bool) {
        if served.iter().all(Result::is_err) {
            let broken = tx.rollback().await.is_err();
            return (served.into_iter().filter_map(Result::err).map(Err).collect(), broken);
        }
        let commit = Instant::now();
        let committed = tx.commit().await;
        metrics::group_phase(GroupPhase::Commit, commit.elapsed());
        if let Err(e) = committed {
            // whatever the COMMIT left open must not be committed by the next group on this connection
            return (served.into_iter().map(|s| s.and(Err(TxError::like(&e)))).collect(), true);
        }
        let committed = served.iter().filter(|s| s.is_ok()).count();
        self.groups.fetch_add(1, Ordering::Relaxed);
        self.batches.fetch_add(committed as u64, Ordering::Relaxed);
        metrics::commit_group(committed);
        let results = served
            .into_iter()
            .map(|s| {
                s.map(|Served { results, next, issued }| {
                    if let Some((code, n)) = issued {
                        metrics::issued(&code, n);
                    }
                    (results, next)
                })
            })
            .collect();
        (results, false)
    }

    /// The group served together: every counter read, moved and written with one statement per kind for all of
    /// them, instead of some seven per counter behind savepoints (docs/benchmarks/spread-load.md). A batch whose
    /// memory is stale fails alone, as its fence would have refused it. None — nothing written, the
    /// transaction rolled back — where the group must be served batch by batch (`try_group`), which finds
    /// the failing batch behind savepoints: a group of one, a retry's pre-check, or any statement failing
    /// (a unique violation, a fence, a lost connection). A connection that cannot be had, or a transaction
    /// that cannot begin, is answered as `try_group` answers it (the first batch gets the error, the others
    /// run again), not waited for a second time by `try_group`.
    async fn try_group_together(&self, group: &[Pending], conn: &mut Option<WriteConn>) -> Option<GroupOutcome> {
        if group.len() < 2 || group.iter().any(|p| p.attempt.precheck) {
            return None;
        }
        if group.iter().map(|p| &p.attempt.key).collect::<HashSet<_>>().len() != group.len() {
            return None;
        }
        if conn.is_none() {
            match self.db.counters.acquire().await {
                Ok(c) => *conn = Some(c),
                Err(e) => return Some(Err((0, TxError::from(e)))),
            }
        }
        let c = conn.as_mut().expect("acquired above");
        let mut tx = match self.db.begin_batch(c).await {
            Ok(tx) => tx,
            Err(e) => return Some(Err((0, TxError::from(e)))),
        };
        match self.group_in(tx.conn(), group).await {
            Ok(served) => {
                let failed = served.iter().filter(|s| s.is_err()).count();
                self.isolated_failures.fetch_add(failed as u64, Ordering::Relaxed);
                let (results, broken) = self.finish(tx, served).await;
                if broken {
                    discard(conn);
                }
                if results.iter().any(Result::is_ok) {
                    self.together.fetch_add(1, Ordering::Relaxed);
                }
                Some(Ok(results))
            }
            Err(e) => {
                let broken = if connection_lost(&e) {
                    drop(tx);
                    true
                } else {
                    tx.rollback().await.is_err()
                };
                if broken {
                    discard(conn);
                }
                tracing::debug!(error = ?e, batches = group.len(), "group served batch by batch");
                None
            }
        }
    }

    /// The group's batches, inside its transaction: read together → plan each → apply together.
    async fn group_in(&self, tx: &mut Conn, group: &[Pending]) -> Result<Vec<Result<Served, TxError>>, TxError> {
        let now = self.clock.now_ms();
        let kinds: Vec<Vec<&JobKind>> = group.iter().map(|p| p.attempt.work.iter().map(|w| &w.kind).collect()).collect();
        let reads: Vec<GroupBatch<'_>> = {
            let ids = self.ids.lock().unwrap();
            group
                .iter()
                .zip(&kinds)
                .map(|(p, kinds)| {
                    let known = p.attempt.known.as_ref();
                    let id = known.map(|k| k.counter.id).or_else(|| ids.get(&p.attempt.key).copied());
                    GroupBatch { key: &p.attempt.key, jobs: kinds, known, id }
                })
                .collect()
        };
        let read = Instant::now();
        let starts = counter_tx::read_group(tx, self.db.dialect, &reads, now).await?;
        metrics::group_phase(GroupPhase::Read, read.elapsed());
        let planning = Instant::now();
        let mut served: Vec<Option<Result<Served, TxError>>> = Vec::with_capacity(group.len());
        let mut planned = Vec::with_capacity(group.len());
        let mut planned_at = Vec::with_capacity(group.len());
        for (i, start) in starts.into_iter().enumerate() {
            match start.and_then(|start| self.behind_witness(&group[i].attempt.key, &start).map(|()| start)) {
                Ok(mut start) => {
                    let plan = plan(&group[i].attempt, &mut start, &self.lifecycle, now, Vec::new());
                    planned.push(Planned { start, plan, max_number: counter_tx::plan::max_number(&kinds[i]) });
                    planned_at.push(i);
                    served.push(None);
                }
                Err(e) => served.push(Some(Err(e))),
            }
        }
        metrics::group_phase(GroupPhase::Plan, planning.elapsed());
        let write = Instant::now();
        let applied = counter_tx::apply_group(tx, planned, now).await?;
        metrics::group_phase(GroupPhase::Write, write.elapsed());
        for (i, applied) in planned_at.into_iter().zip(applied) {
            served[i] = Some(Ok(Served::of(applied, &kinds[i])));
        }
        Ok(served.into_iter().map(|s| s.expect("every batch failed or was applied")).collect())
    }

    /// Refuses a batch whose counter, as read, is behind its witness
    /// (docs/rules/numbering.md#what-is-never-done-twice): it issues nothing until a super admin
    /// resumes it past the witnessed head.
    fn behind_witness(&self, key: &CounterKey, start: &Start) -> Result<(), TxError> {
        let Some(w) = &self.witness else { return Ok(()) };
        w.check(key, &start.chain).map_err(|b| {
            TxError::App(AppError::BehindWitness {
                key: key.lock_name(),
                counter_id: start.counter.id,
                stored: b.stored_length,
                witnessed: b.witnessed.length,
                witnessed_last: b.witnessed.last_number,
            })
        })
    }

    /// One counter's batch, inside the group's transaction: read (or remember) → plan → apply.
    async fn batch_in(&self, tx: &mut Conn, attempt: &Attempt) -> Result<Served, TxError> {
        let now = self.clock.now_ms();
        let kinds: Vec<&JobKind> = attempt.work.iter().map(|w| &w.kind).collect();
        let max_number = counter_tx::plan::max_number(&kinds);
        let mut start = counter_tx::read_batch(tx, self.db.dialect, &attempt.key, &kinds, attempt.known.as_ref(), now).await?;
        self.behind_witness(&attempt.key, &start)?;
        // the retry after a unique violation: a key another instance stored meanwhile answers its job from there
        let answered = if attempt.precheck { stored_answers(tx, &attempt.work, now).await? } else { Vec::new() };
        let mut plan = plan(attempt, &mut start, &self.lifecycle, now, answered);
        // A rendered number that already exists (a hand-registered legacy number, a template that
        // renders like an older one…) fails with NB005; its sequence stays consumed and the audit row says why.
        if attempt.precheck {
            let taken = counter_tx::taken_numbers(tx, &attempt.key, &plan).await?;
            for number in plan.refuse_taken(taken) {
                tracing::error!(%number, counter = %attempt.key.lock_name(), "rendered number already exists");
            }
        }
        let applied = counter_tx::apply_batch(tx, &start, plan, max_number, now).await?;
        Ok(Served::of(applied, &kinds))
    }
}

/// The answers of the keyed jobs whose keys are stored already (by index; empty when none is keyed): the stored
/// outcome for the same request, 422 for another.
async fn stored_answers(tx: &mut Conn, work: &[Work], now: i64) -> Result<Vec<Option<Result<Outcome, AppError>>>, TxError> {
    let mut answers = Vec::new();
    for (i, w) in work.iter().enumerate() {
        let Some(keyed) = &w.keyed else { continue };
        let Some(stored) = idempotency::stored_in(tx, keyed, now).await? else { continue };
        answers.resize_with(work.len(), || None);
        answers[i] = Some(idempotency::read_answer(keyed, stored));
    }
    Ok(answers)
}

/// The batch's jobs with their audit rows' common part, planned against what the batch read; `answered` (by index,
/// or empty) gives the jobs already answered.
fn plan(
    attempt: &Attempt,
    start: &mut Start,
    lifecycle: &Lifecycle,
    now: i64,
    mut answered: Vec<Option<Result<Outcome, AppError>>>,
) -> counter_tx::Plan {
    let counter_key = serde_json::to_string(&attempt.key).ok();
    answered.resize_with(attempt.work.len(), || None);
    let jobs: Vec<PlanJob<'_>> = attempt
        .work
        .iter()
        .zip(answered)
        .map(|(w, answered)| PlanJob {
            keyed: w.keyed.as_ref(),
            answered,
            kind: &w.kind,
            caller: &w.caller,
            audit: AuditEntry {
                counter_id: Some(start.counter.id),
                counter_key: counter_key.clone(),
                retry_count: attempt.retries as i64,
                lock_wait_ms: attempt.lock_wait_ms,
                total_ms: w.enqueued.elapsed().as_millis() as i64,
                fallback_used: attempt.fallback.into(),
                ..w.caller.audit_base(now)
            },
        })
        .collect();
    let rows = std::mem::take(&mut start.rows);
    let mut planned = counter_tx::plan::plan(&start.counter, jobs, rows, lifecycle, now, || reservation_token(now));
    for (_, e) in &mut planned.events {
        e.project_id = Some(attempt.key.project_id);
    }
    planned
}

/// A reservation token: a UUID whose first 48 bits are the time in ms (the UUIDv7 layout) and whose other 74
/// bits are random (`rand`'s thread generator, a CSPRNG), as unguessable as a capability needs to be. Time-ordered
/// tokens go in at the end of the token index instead of at a random page: a spread group's commit writes about a
/// quarter fewer pages. (The uuid crate's own `now_v7` spends 42 of the 74 bits on a counter: guessable.)
/// A counter's change as the live screens see it.
pub(crate) fn counter_event(key: &CounterKey, counter_id: CounterId, last_number: i64) -> crate::contract::live::LiveEvent {
    crate::contract::live::LiveEvent::Counter {
        project_id: key.project_id,
        counter_id,
        correspondence_type_id: key.correspondence_type_id,
        originator_id: key.originator_id,
        recipient_id: key.recipient_id,
        sub_type_id: key.sub_type_id,
        rfa_type_id: key.rfa_type_id,
        discipline_id: key.discipline_id,
        period: key.period.to_string(),
        last_number,
    }
}

fn reservation_token(now_ms: i64) -> String {
    let mut random = [0u8; 10];
    rand::RngCore::fill_bytes(&mut rand::thread_rng(), &mut random);
    uuid::Builder::from_unix_timestamp_millis(now_ms.max(0) as u64, &random).into_uuid().to_string()
}

/// Closes the committer's connection instead of reusing it or giving it back: after a failed COMMIT or ROLLBACK
/// its state is unknown, and on MariaDB's autocommit-off connections a transaction left open would be
/// committed by the next group's COMMIT.
fn discard(conn: &mut Option<WriteConn>) {
    if let Some(c) = conn.take() {
        drop(c.detach());
    }
}

/// What a batch's statements produced, for after the group's commit.
struct Served {
    results: Vec<Result<Outcome, AppError>>,
    next: Known,
    /// Numbers issued and their correspondence type code, for the metrics.
    issued: Option<(String, u64)>,
}

impl Served {
    /// An applied batch of these jobs: its outcomes, its memory, and the numbers it issued by type.
    fn of(applied: counter_tx::Applied, kinds: &[&JobKind]) -> Served {
        let issued = counter_tx::plan::type_code(kinds).filter(|_| applied.inserted > 0).map(|code| (code, applied.inserted as u64));
        Served { results: applied.results, next: applied.next, issued }
    }
}

/// Whether the connection itself failed (it is then closed, and its transaction is gone with it).
fn connection_lost(e: &TxError) -> bool {
    matches!(e, TxError::Db(db) if is_connection_error(db))
}

#[cfg(test)]
mod tests {
    use super::reservation_token;

    #[test]
    fn reservation_tokens_sort_by_time_and_are_random_within_a_millisecond() {
        let (a, b, later) = (reservation_token(1_764_000_000_000), reservation_token(1_764_000_000_000), reservation_token(1_764_000_000_001));
        assert_ne!(a, b);
        assert!(a < later && b < later, "{a} {b} {later}");
        let (ua, ub) = (uuid::Uuid::parse_str(&a).unwrap(), uuid::Uuid::parse_str(&b).unwrap());
        assert_eq!((ua.get_version_num(), ua.get_variant()), (7, uuid::Variant::RFC4122));
        assert_eq!(ua.as_bytes()[..6], ub.as_bytes()[..6], "the time part");
        // the 74 bits after the time are random: of 64 tokens in one millisecond, no two share their last 8 bytes
        let tails: std::collections::HashSet<[u8; 8]> =
            (0..64).map(|_| uuid::Uuid::parse_str(&reservation_token(1)).unwrap().as_bytes()[8..].try_into().unwrap()).collect();
        assert_eq!(tails.len(), 64);
    }
}
