//! Counter transactions: the one path through which a counter moves and a number is written — the engine's
//! batch (reserve, generate, confirm, cancel, expiry), revise, void-and-replace, manual override, the bulk
//! import's rows and a reset. One fence: the counter's `UPDATE … WHERE id = ? AND version = ?` (the batch moves
//! its audit chain's head, kept in the same row, in the same statement, fenced by its length). One retry
//! policy: a transaction that lost a race — the fence refused, or the database aborted it for another
//! transaction — runs again, at most [`MAX_CONFLICT_RETRIES`] times (docs/rules/numbering.md#concurrency-the-double-lock).
//!
//! The batch is planned without I/O ([`plan`]) and then applied ([`apply_batch`]); `queue` reads, plans,
//! applies and commits. The administrative writes the same way: planned by [`admin`], written by [`apply`].

pub mod admin;
pub(crate) mod lifecycle;
pub(crate) mod plan;
pub mod store;

use std::collections::HashMap;
use std::future::Future;

use crate::numbering::CounterKey;
use crate::server::audit::{self, counter_chain, AuditEntry, ChainHead};
use crate::server::db::{classify, suspect_connections, Conn, DbFailure, Dialect};
use crate::server::error::lost_race_as_conflict as sql;
use crate::server::error::{AppError, Pause, Retry};
use crate::server::numbering::idempotency;
use crate::server::outbox;
use crate::server::tlog;

use crate::numbering::CounterId;
pub use admin::{Locked, Write};
pub(crate) use lifecycle::{Lifecycle, State};
pub use plan::{JobKind, Outcome};
pub(crate) use plan::{Plan, PlanJob, Rows};
pub(crate) use store::{Counter, CounterRow, NewNumber, StoredNumber};

// ---- the retry policy ----

/// Lost races are retried at once, at most twice (docs/rules/numbering.md#concurrency-the-double-lock); a lost race is a microsecond event.
pub(crate) const MAX_CONFLICT_RETRIES: u32 = 2;

/// Why a counter transaction failed, as far as retrying it goes.
#[derive(Debug)]
pub(crate) enum TxError {
    /// The counter (or its audit chain) moved under us, or the database aborted the transaction for
    /// another one (deadlock, lock wait timeout): another holder got there first.
    Conflict,
    /// A number collided with one inserted meanwhile outside this transaction.
    Unique,
    Db(sqlx::Error),
    App(AppError),
}

impl From<sqlx::Error> for TxError {
    fn from(e: sqlx::Error) -> Self {
        match classify(&e) {
            DbFailure::RetryableConflict => TxError::Conflict,
            DbFailure::UniqueViolation => TxError::Unique,
            DbFailure::Connection => {
                // a restart kills every pooled connection: have the pool ping them before the retry draws one
                suspect_connections();
                TxError::Db(e)
            }
            DbFailure::Other => TxError::Db(e),
        }
    }
}

impl From<AppError> for TxError {
    fn from(e: AppError) -> Self {
        match e {
            AppError::VersionConflict(_) => TxError::Conflict,
            // A database error that came through a function answering `AppError` (the audit chain's) keeps its
            // class: a lost connection is retried like one, not answered as an internal error (a 500 in the
            // million-number run's MariaDB restart, 2026-11-25 at `0fb4bce`).
            AppError::Database { source, .. } => match std::sync::Arc::try_unwrap(source) {
                Ok(e) => TxError::from(e),
                Err(shared) => TxError::like(&shared),
            },
            other => TxError::App(other),
        }
    }
}

impl TxError {
    /// The class of a database error that cannot be moved (shared, or answered for several batches): an
    /// equivalent owned error, retried as the original would be.
    pub(crate) fn like(e: &sqlx::Error) -> TxError {
        match classify(e) {
            DbFailure::RetryableConflict => TxError::Conflict,
            DbFailure::UniqueViolation => TxError::Unique,
            DbFailure::Connection => TxError::Db(sqlx::Error::Io(std::io::Error::new(std::io::ErrorKind::ConnectionAborted, e.to_string()))),
            DbFailure::Other => TxError::Db(sqlx::Error::Protocol(e.to_string())),
        }
    }

    /// A lost race: the whole transaction may run again.
    pub(crate) fn lost_race(&self) -> bool {
        matches!(self, TxError::Conflict | TxError::Unique)
    }
}

/// The retry policy of a counter transaction that lost a race (docs/rules/numbering.md#concurrency-the-double-lock):
/// at most [`MAX_CONFLICT_RETRIES`] more
/// times, at once.
pub(crate) const LOST_RACE: Retry = Retry { times: MAX_CONFLICT_RETRIES, pause: Pause::None };

pub(crate) use crate::server::error::is_lost_race;

/// Runs a transactional operation again when it lost a race ([`LOST_RACE`], the policy of the committers' batch loop too).
pub(crate) async fn retrying<T, F, Fut>(op: F) -> Result<T, AppError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, AppError>>,
{
    LOST_RACE.run(is_lost_race, op).await
}

// ---- the administrative writes: read under the lock, plan ([`admin`]), apply ----

/// The counter by id, locked the way the batch holds it, with its audit chain's head.
pub async fn lock_counter(tx: &mut Conn, dialect: Dialect, id: CounterId) -> Result<Option<Locked>, AppError> {
    Ok(store::lock_counter(tx, dialect, id).await.map_err(sql)?.map(|(counter, head)| Locked { counter, head }))
}

/// The counter of `key`, locked, created at 0 on first use, with its audit chain's head.
pub(crate) async fn load_or_create_counter(tx: &mut Conn, dialect: Dialect, key: &CounterKey, max_number: i64, now: i64) -> Result<Locked, AppError> {
    let (row, head) = store::load_or_create_counter(tx, dialect, key, max_number, now).await.map_err(sql)?;
    Ok(Locked { counter: Counter { row, key: key.clone(), max_number, updated_at: now }, head })
}

/// The numbers of a counter above `above` (what a reset releases), oldest first.
pub(crate) async fn numbers_above(tx: &mut Conn, counter_id: CounterId, above: i64) -> Result<Vec<StoredNumber>, AppError> {
    store::numbers_above(tx, counter_id, above).await.map_err(sql)
}

/// Writes a planned administrative write the way a batch is written: every counter it touches moved with its
/// audit chain's head in one UPDATE, fenced by each one's version and chain length (`VersionConflict`: another
/// holder moved one since it was read); its new numbers (NB005 for one that exists already), status changes and
/// release; then its audit rows. Nothing is committed here.
pub async fn apply(tx: &mut Conn, write: &Write, now: i64) -> Result<(), AppError> {
    for n in &write.new_numbers {
        if !store::existing_numbers(tx, n.project_id, n.correspondence_type_id, std::slice::from_ref(&n.number)).await.map_err(sql)?.is_empty() {
            return Err(AppError::DuplicateNumber(n.number.clone()));
        }
    }
    let chain_keys: Vec<String> = write.counters.iter().map(|c| counter_chain(c.counter.id)).collect();
    let placed: Vec<audit::Placed<'_>> = write.counters.iter().zip(&chain_keys).map(|(c, key)| audit::place(key, &c.chain, &c.audits)).collect();
    let moves: Vec<store::CounterMove<'_>> = write
        .counters
        .iter()
        .zip(&placed)
        .map(|(c, chain)| store::CounterMove { counter: &c.counter, last_number: c.last_number, max_number: c.max_number, chain })
        .collect();
    if !store::advance_counters_and_chains(tx, &moves, now).await.map_err(sql)? {
        let ids: Vec<String> = write.counters.iter().map(|c| c.counter.id.to_string()).collect();
        return Err(AppError::VersionConflict(format!("counter {}", ids.join(", "))));
    }
    store::insert_numbers(tx, &write.new_numbers).await.map_err(sql)?;
    store::apply_status_changes(tx, &write.changes).await.map_err(sql)?;
    if let Some(r) = &write.release {
        let released = store::release_above(tx, r.counter_id, r.above, r.reset_request_id, now).await.map_err(sql)?;
        if released != r.expected as u64 {
            return Err(AppError::VersionConflict(format!("counter {}", r.counter_id)));
        }
    }
    let written: Vec<&audit::Placed<'_>> = placed.iter().filter(|p| !p.is_empty()).collect();
    audit::insert_placed_many(tx, &written).await?;
    tlog::stage(tx, write.counters.iter().zip(&placed).map(|(c, p)| (c.counter.id, p.start.length, c.audits.as_slice()))).await.map_err(sql)
}

// ---- the batch: read, (plan), apply ----

/// What a worker remembers of its counter between batches served under one continuous hold, so the next
/// batch skips reading the counter row and its chain head. The counter's version check and the chain's
/// length check still refuse a stale memory, and the batch then reads afresh.
#[derive(Clone, Debug)]
pub struct Known {
    pub(crate) counter: CounterRow,
    pub(crate) chain: ChainHead,
}

/// What a batch plans from: its counter and audit chain head (read, or remembered), and the rows its jobs name.
pub(crate) struct Start {
    pub(crate) counter: CounterRow,
    pub(crate) chain: ChainHead,
    pub(crate) rows: Rows,
}

/// The batch's reads: the counter (locked, created at first use) and its chain head unless remembered, the
/// numbers its tokens name, and the numbers already confirmed for its document ids.
pub(crate) async fn read_batch(
    tx: &mut Conn,
    dialect: Dialect,
    key: &CounterKey,
    jobs: &[&JobKind],
    known: Option<&Known>,
    now: i64,
) -> Result<Start, TxError> {
    let (counter, chain) = match known {
        Some(k) => (k.counter.clone(), k.chain.clone()),
        None => store::load_or_create_counter(tx, dialect, key, plan::max_number(jobs), now).await?,
    };
    let rows = read_rows(tx, key, counter.id, jobs).await?;
    Ok(Start { counter, chain, rows })
}

/// The number rows a batch's jobs name: by reservation token, and confirmed ones by document id.
async fn read_rows(tx: &mut Conn, key: &CounterKey, counter_id: CounterId, jobs: &[&JobKind]) -> Result<Rows, TxError> {
    let tokens = plan::tokens(jobs);
    let by_token = if tokens.is_empty() { Default::default() } else { store::numbers_by_token(tx, counter_id, &tokens).await? };
    let document_ids = plan::document_ids(jobs);
    let by_document = if document_ids.is_empty() {
        Default::default()
    } else {
        store::confirmed_for_documents(tx, key.project_id, key.correspondence_type_id, &document_ids).await?
    };
    Ok(Rows { by_token, by_document })
}

/// The numbers of `plan` that exist already (the retry's pre-check after a unique violation).
pub(crate) async fn taken_numbers(tx: &mut Conn, key: &CounterKey, plan: &Plan) -> Result<Vec<String>, TxError> {
    if plan.new_numbers.is_empty() {
        return Ok(Vec::new());
    }
    Ok(store::existing_numbers(tx, key.project_id, key.correspondence_type_id, &plan.rendered()).await?)
}

/// What an applied batch leaves: each job's outcome, the memory for the next batch, and how many numbers
/// it inserted.
pub(crate) struct Applied {
    pub(crate) results: Vec<Result<Outcome, AppError>>,
    pub(crate) next: Known,
    pub(crate) inserted: usize,
}

/// Writes a planned batch: the counter moved (with its chain head) behind the fence, the new numbers in one
/// INSERT, the status changes, the audit rows. Nothing is committed here.
pub(crate) async fn apply_batch(tx: &mut Conn, start: &Start, mut plan: Plan, max_number: i64, now: i64) -> Result<Applied, TxError> {
    let keys = plan.settle_keys(now);
    let Plan { last_number, new_numbers, changes, audits, results, events, .. } = plan;
    let chain_key = counter_chain(start.counter.id);
    let entries: Vec<AuditEntry> = audits.into_iter().map(|(_, a)| a).collect();
    let placed = audit::place(&chain_key, &start.chain, &entries);
    let max_number = (max_number > 0).then_some(max_number);
    let moved = store::CounterMove { counter: &start.counter, last_number, max_number, chain: &placed };
    if !store::advance_counters_and_chains(tx, std::slice::from_ref(&moved), now).await? {
        return Err(TxError::Conflict);
    }
    let rows: Vec<NewNumber> = new_numbers.into_iter().map(|(_, n)| n).collect();
    store::insert_numbers(tx, &rows).await?;
    store::apply_status_changes(tx, &changes).await?;
    idempotency::insert(tx, &keys).await?;
    audit::insert_placed(tx, &placed).await?;
    tlog::stage(tx, [(start.counter.id, placed.start.length, entries.as_slice())]).await?;
    let events: Vec<outbox::Event> = events.into_iter().map(|(_, e)| e).collect();
    outbox::append(tx, &events, now).await?;
    let counter = CounterRow { id: start.counter.id, last_number, version: start.counter.version + 1 };
    Ok(Applied { results, next: Known { counter, chain: placed.head.clone() }, inserted: rows.len() })
}

// ---- a group of batches: read together, applied together ----

/// One batch of a group, as [`read_group`] needs it.
pub(crate) struct GroupBatch<'a> {
    pub(crate) key: &'a CounterKey,
    pub(crate) jobs: &'a [&'a JobKind],
    pub(crate) known: Option<&'a Known>,
    /// The counter's id when this process has served it before (ids never change), so it is read by id.
    pub(crate) id: Option<CounterId>,
}

/// The reads of several counters' batches in one transaction: their counter rows with their chain heads in
/// one statement (locked as `read_batch` locks them); a counter seen for the first time is read, or created,
/// by its key. A batch whose memory disagrees with what is stored fails alone with `Conflict`:
/// another holder moved its counter, and the retry policy reads afresh (as the fence would have refused it).
pub(crate) async fn read_group(
    tx: &mut Conn,
    dialect: Dialect,
    batches: &[GroupBatch<'_>],
    now: i64,
) -> Result<Vec<Result<Start, TxError>>, TxError> {
    let ids: Vec<CounterId> = batches.iter().filter_map(|b| b.id).collect();
    let mut read = store::lock_counters_and_heads(tx, dialect, &ids).await?;
    // a remembered id is trusted only for the key it was remembered for (a database restored under a running
    // server may give it to another counter)
    let mut by_id: Vec<Option<(Counter, audit::ChainHead)>> =
        batches.iter().map(|b| b.id.and_then(|id| read.remove(&id)).filter(|(c, _)| c.key == *b.key)).collect();
    // the others (first seen by this process, a new key, a new year): found or created together
    let unknown: Vec<(&CounterKey, i64)> =
        batches.iter().zip(&by_id).filter(|(_, found)| found.is_none()).map(|(b, _)| (b.key, plan::max_number(b.jobs))).collect();
    let mut by_key = if unknown.is_empty() { HashMap::new() } else { store::lock_or_create_counters(tx, dialect, &unknown, now).await? };
    let mut starts = Vec::with_capacity(batches.len());
    for (b, found) in batches.iter().zip(by_id.iter_mut()) {
        let start = match found.take().or_else(|| by_key.remove(b.key)) {
            Some((c, chain)) => Start { rows: read_rows(tx, b.key, c.row.id, b.jobs).await?, counter: c.row, chain },
            None => read_batch(tx, dialect, b.key, b.jobs, None, now).await?,
        };
        let stale = b.known.is_some_and(|k| k.counter != start.counter || k.chain != start.chain);
        starts.push(if stale { Err(TxError::Conflict) } else { Ok(start) });
    }
    Ok(starts)
}

/// A batch of a group, planned and ready to be written.
pub(crate) struct Planned {
    pub(crate) start: Start,
    pub(crate) plan: Plan,
    /// The largest number the batch's template can hold (0: none issued).
    pub(crate) max_number: i64,
}

/// Writes the planned batches of a group with one statement per kind for all of them: the counters moved with
/// their chain heads, each row behind its own version and chain length; every new number in one INSERT; every
/// audit row in one. A fence that refuses fails the whole group (`Conflict`), which the caller then serves
/// batch by batch. Nothing is committed here.
pub(crate) async fn apply_group(tx: &mut Conn, planned: Vec<Planned>, now: i64) -> Result<Vec<Applied>, TxError> {
    if planned.is_empty() {
        return Ok(Vec::new());
    }
    let mut counters = Vec::with_capacity(planned.len());
    let mut chains = Vec::with_capacity(planned.len());
    let mut entries: Vec<Vec<AuditEntry>> = Vec::with_capacity(planned.len());
    let mut numbers = Vec::new();
    let mut changes = Vec::new();
    let mut outcomes = Vec::with_capacity(planned.len());
    let mut keys = Vec::new();
    let mut events = Vec::new();
    for Planned { start, mut plan, max_number } in planned {
        keys.extend(plan.settle_keys(now));
        let Plan { last_number, new_numbers, changes: status_changes, audits, results, events: emitted, .. } = plan;
        events.extend(emitted.into_iter().map(|(_, e)| e));
        counters.push((start.counter, last_number, (max_number > 0).then_some(max_number)));
        chains.push(start.chain);
        entries.push(audits.into_iter().map(|(_, a)| a).collect());
        outcomes.push((results, new_numbers.len()));
        numbers.extend(new_numbers.into_iter().map(|(_, n)| n));
        changes.extend(status_changes);
    }
    let chain_keys: Vec<String> = counters.iter().map(|(c, _, _)| counter_chain(c.id)).collect();
    let placed: Vec<audit::Placed<'_>> =
        chain_keys.iter().zip(&chains).zip(&entries).map(|((key, start), entries)| audit::place(key, start, entries)).collect();
    let moves: Vec<store::CounterMove<'_>> = counters
        .iter()
        .zip(&placed)
        .map(|((counter, last_number, max_number), chain)| store::CounterMove { counter, last_number: *last_number, max_number: *max_number, chain })
        .collect();
    if !store::advance_counters_and_chains(tx, &moves, now).await? {
        return Err(TxError::Conflict);
    }
    let moved: Vec<&audit::Placed<'_>> = placed.iter().filter(|p| !p.is_empty()).collect();
    store::insert_numbers(tx, &numbers).await?;
    store::apply_status_changes(tx, &changes).await?;
    idempotency::insert(tx, &keys).await?;
    audit::insert_placed_many(tx, &moved).await?;
    tlog::stage(tx, counters.iter().zip(&entries).zip(&placed).map(|(((c, _, _), e), p)| (c.id, p.start.length, e.as_slice()))).await?;
    // the group's notifications in one statement, and none at all for a group without any (reserves)
    outbox::append(tx, &events, now).await?;
    Ok(counters
        .iter()
        .zip(&placed)
        .zip(outcomes)
        .map(|(((counter, last_number, _), placed), (results, inserted))| Applied {
            results,
            next: Known {
                counter: CounterRow { id: counter.id, last_number: *last_number, version: counter.version + 1 },
                chain: placed.head.clone(),
            },
            inserted,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_connection_inside_an_app_error_is_retried_as_a_lost_connection() {
        let lost = sqlx::Error::Io(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "expected to read 4 bytes, got 0 bytes at EOF"));
        let e = TxError::from(AppError::database(std::sync::Arc::new(lost)));
        assert!(matches!(&e, TxError::Db(db) if crate::server::db::is_connection_error(db)), "{e:?}");
        // shared with another holder: the same class
        let shared = std::sync::Arc::new(sqlx::Error::PoolTimedOut);
        let e = TxError::from(AppError::database(shared.clone()));
        assert!(matches!(&e, TxError::Db(db) if crate::server::db::is_connection_error(db)), "{e:?}");
        assert!(matches!(TxError::from(AppError::VersionConflict("c".into())), TxError::Conflict));
        assert!(matches!(TxError::from(AppError::ReservationExpired), TxError::App(AppError::ReservationExpired)));
    }
}
