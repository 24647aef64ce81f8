//! The numbers' transparency log (docs/operations/transparency-log.md): every numbering event, in the order it was
//! committed, as an RFC 6962 tree that anyone can check with the signed checkpoints, the tiles and the receipts.
//!
//! Storage level like `outbox`: the counter transaction stages its events here (`stage`, one row per transaction,
//! nothing more on the hot path); the sequencer (`Log::integrate`, one task per instance, one at a time across
//! instances by the `log_state` row's lock) moves staged events into the tree in batches, deleting them in the same
//! transaction, so an event is in the log exactly once when its transaction committed and never otherwise.

pub mod cosign;
pub mod http;
pub mod paper;
pub(crate) mod store;
pub mod witness;

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};
use sha2::{Digest, Sha256};
use signed_note::{Note, StandardSigner};
use tlog_tiles::{
    prove_record, prove_tree, record_hash, stored_hash_index, stored_hashes_for_record_hash, tree_hash, Checkpoint, Hash, HashReader, Tile,
};

use crate::contract::messages::LogDetail;
use crate::numbering::CounterId;
use crate::receipt::{self, Entry, Receipt};
use crate::server::audit::AuditEntry;
use crate::server::clock::Clock;
use crate::server::config::LogConfig;
use crate::server::db::{Conn, Db};
use crate::server::error::AppError;

/// Staged rows the sequencer takes in one transaction (each holds one committed transaction's events).
const STAGED_ROWS: i64 = 200;

static ENABLED: AtomicBool = AtomicBool::new(true);

/// Whether the counter transaction stages its events (`LOG_ENABLED`, process-wide: the bench's A/B).
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// The log's name for what an audit row of a counter's chain records; None for what is no numbering event (a reset's
/// request, approval or rejection).
pub(crate) fn event_of(e: &AuditEntry) -> Option<&'static str> {
    let meta = e.metadata.as_deref().unwrap_or("");
    Some(match e.operation.as_str() {
        "RESERVE" => "reserved",
        "GENERATE" if meta.contains("\"revisedFrom\":") => "revised",
        "GENERATE" if meta.contains("\"replaces\":") => "replaced",
        "GENERATE" | "CONFIRM" => "confirmed",
        "CANCEL" if meta == r#"{"reason":"expired"}"# => "expired",
        "CANCEL" => "cancelled",
        "VOID" => "voided",
        // a legacy number registered (the bulk import's rows, or one by hand)
        "MANUAL_OVERRIDE" if e.document_number.is_some() => "imported",
        "MANUAL_OVERRIDE" => "overridden",
        "RESET_EXECUTE" => "counter-reset",
        _ => return None,
    })
}

/// Stages the log's events among a counter's audit rows, inside the transaction that writes them. Each counter comes
/// with its chain's length before these rows: the rows take the positions after it.
pub(crate) async fn stage<'a>(tx: &mut Conn, counters: impl IntoIterator<Item = (CounterId, i64, &'a [AuditEntry])>) -> Result<(), sqlx::Error> {
    if !ENABLED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let events: Vec<store::Staged<'_>> = counters
        .into_iter()
        .flat_map(|(counter, chain_length, entries)| {
            entries.iter().enumerate().filter_map(move |(i, e)| {
                Some(store::Staged {
                    event: event_of(e)?.into(),
                    number: e.document_number.as_deref().unwrap_or("-").into(),
                    counter,
                    sequence: e.sequence,
                    document: e.document_id.as_deref().map(Into::into),
                    at: e.created_at,
                    chain: Some(chain_length + 1 + i as i64),
                })
            })
        })
        .collect();
    if events.is_empty() {
        return Ok(());
    }
    store::stage(tx, &events).await
}

/// What identifies an event among its counter's: its sequence, its name, its number (as the entry writes it).
type EventKey = (Option<i64>, String, String);

fn staged_key(e: &store::Staged<'_>) -> EventKey {
    (e.sequence, e.event.to_string(), receipt::one_line(&e.number))
}

fn audit_key(a: &store::AuditEvent) -> Option<(CounterId, i64, EventKey)> {
    let counter = a.chain_key.strip_prefix("counter:").and_then(|id| id.parse::<i64>().ok())?;
    let entry = AuditEntry {
        operation: a.operation.clone(),
        document_number: a.document_number.clone(),
        metadata: a.metadata.clone(),
        ..AuditEntry::default()
    };
    let event = event_of(&entry)?;
    Some((CounterId(counter), a.chain_seq, (a.sequence, event.to_string(), receipt::one_line(a.document_number.as_deref().unwrap_or("-")))))
}

/// Gives their chain positions to events that have none (staged, or kept in `log_entries`, by a version before the
/// runs): each takes the first position of its counter's chain that is no other event's in the log or in `events`
/// and whose audit row is the same event. An event no audit row explains keeps none (`docnum check` counts it).
async fn assign_chains(conn: &mut Conn, events: &mut [(CounterId, Option<i64>, EventKey)]) -> Result<(), AppError> {
    let counters: BTreeSet<CounterId> = events.iter().filter(|e| e.1.is_none()).map(|e| e.0).collect();
    for counter in counters {
        let mut taken: std::collections::HashSet<i64> = events.iter().filter(|e| e.0 == counter).filter_map(|e| e.1).collect();
        for (_, _, ranges) in store::runs(conn, Some(counter)).await.map_err(sql)? {
            taken.extend(store::decode_ranges(&ranges).unwrap_or_default());
        }
        let mut free: Vec<Option<(i64, EventKey)>> = store::chain_events(conn, counter)
            .await
            .map_err(sql)?
            .iter()
            .filter_map(audit_key)
            .filter(|(_, chain, _)| !taken.contains(chain))
            .map(|(_, chain, key)| Some((chain, key)))
            .collect();
        // the events come in their chain's order, so the match is nearly always the first position still free: the
        // search starts there, and a position used is emptied, not removed (a whole chain moved over stays linear)
        let mut first_free = 0;
        for e in events.iter_mut().filter(|e| e.0 == counter && e.1.is_none()) {
            while free.get(first_free).is_some_and(Option::is_none) {
                first_free += 1;
            }
            if let Some(slot) = free[first_free..].iter_mut().find(|slot| slot.as_ref().is_some_and(|(_, key)| *key == e.2)) {
                e.1 = slot.take().map(|(chain, _)| chain);
            }
        }
    }
    Ok(())
}

/// The runs of leaves `first_idx..`: each stretch of one counter's events that have chain positions.
fn runs_from(first_idx: i64, events: &[(CounterId, Option<i64>)]) -> Vec<store::Run> {
    let mut runs: Vec<store::Run> = Vec::new();
    let mut open = false;
    for (k, (counter, chain)) in events.iter().enumerate() {
        let Some(chain) = chain else {
            open = false;
            continue;
        };
        match runs.last_mut() {
            Some(run) if open && run.counter == *counter => run.chain.push(*chain),
            _ => runs.push(store::Run { counter: *counter, first_idx: first_idx + k as i64, chain: vec![*chain] }),
        }
        open = true;
    }
    runs
}

fn sql(e: sqlx::Error) -> AppError {
    AppError::internal_from("transparency log", e)
}

fn tlog_err(e: tlog_tiles::Error) -> AppError {
    AppError::internal(format!("transparency log: {e}"))
}

/// Hex SHA-256 of a document id: the log names a document without telling its id.
pub fn document_sha256(id: &str) -> String {
    hex::encode(Sha256::digest(id.as_bytes()))
}

fn rfc3339(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default().to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Hashes read from the database, and those a computation adds; an index found in neither is noted as missing
/// (and read as zeros), so a computation runs once to learn what it needs and again with it. Which hashes the
/// tlog algorithms read depends only on the tree sizes, never on hash values.
#[derive(Default)]
struct Known {
    fetched: HashMap<u64, Hash>,
    added: RefCell<HashMap<u64, Hash>>,
    missing: RefCell<BTreeSet<u64>>,
}

impl HashReader for Known {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, tlog_tiles::Error> {
        let added = self.added.borrow();
        Ok(indexes
            .iter()
            .map(|i| {
                added.get(i).or_else(|| self.fetched.get(i)).copied().unwrap_or_else(|| {
                    self.missing.borrow_mut().insert(*i);
                    Hash([0; 32])
                })
            })
            .collect())
    }
}

/// Runs `f` with every hash it reads; None when one is not stored (a tile or proof past the tree).
async fn with_hashes<T>(conn: &mut Conn, known: &mut Known, f: impl Fn(&Known) -> Result<T, tlog_tiles::Error>) -> Result<Option<T>, AppError> {
    for _ in 0..3 {
        known.added.borrow_mut().clear();
        known.missing.borrow_mut().clear();
        let out = f(known);
        let missing: Vec<i64> = known.missing.borrow().iter().map(|&i| i as i64).collect();
        if missing.is_empty() {
            return out.map(Some).map_err(tlog_err);
        }
        if !fetch(conn, known, &missing).await? {
            return Ok(None);
        }
    }
    Err(AppError::internal("transparency log: hashes still missing after reading them"))
}

/// [`with_hashes`] for work too long for a worker thread (a batch's new hashes: some thousands of SHA-256 a pass),
/// each pass on the blocking pool.
async fn with_hashes_off_thread<T: Send + 'static>(
    conn: &mut Conn,
    f: impl Fn(&Known) -> Result<T, tlog_tiles::Error> + Send + Sync + 'static,
) -> Result<Option<T>, AppError> {
    let f = Arc::new(f);
    let mut known = Known::default();
    for _ in 0..3 {
        let pass = f.clone();
        let (back, out, missing) = off_thread(move || {
            known.added.borrow_mut().clear();
            known.missing.borrow_mut().clear();
            let out = pass(&known);
            let missing: Vec<i64> = known.missing.borrow().iter().map(|&i| i as i64).collect();
            (known, out, missing)
        })
        .await?;
        known = back;
        if missing.is_empty() {
            return out.map(Some).map_err(tlog_err);
        }
        if !fetch(conn, &mut known, &missing).await? {
            return Ok(None);
        }
    }
    Err(AppError::internal("transparency log: hashes still missing after reading them"))
}

/// Reads the stored hashes `missing` into `known`; false when one is not stored.
async fn fetch(conn: &mut Conn, known: &mut Known, missing: &[i64]) -> Result<bool, AppError> {
    let rows = store::read_hashes(conn, missing).await.map_err(sql)?;
    if rows.len() < missing.len() {
        return Ok(false);
    }
    for (id, h) in rows {
        let h: [u8; 32] = h.try_into().map_err(|_| AppError::internal("transparency log: a stored hash is not 32 bytes"))?;
        known.fetched.insert(id as u64, Hash(h));
    }
    Ok(true)
}

/// Runs CPU work of a batch on the blocking pool, so that no worker thread is held by it.
async fn off_thread<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, AppError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| AppError::internal(format!("transparency log: {e}")))
}

/// Stored hashes by their index in the tree.
type IndexedHashes = Vec<(i64, [u8; 32])>;

/// The hashes records `size..size + leaves.len()` add, and the new root.
fn grow(known: &Known, size: u64, leaves: &[Hash]) -> Result<(IndexedHashes, Hash), tlog_tiles::Error> {
    let mut new = Vec::with_capacity(leaves.len() * 2);
    for (i, leaf) in leaves.iter().enumerate() {
        let n = size + i as u64;
        let hashes = stored_hashes_for_record_hash(n, *leaf, known)?;
        let base = stored_hash_index(0, n);
        let mut added = known.added.borrow_mut();
        for (k, h) in hashes.into_iter().enumerate() {
            added.insert(base + k as u64, h);
            new.push(((base + k as u64) as i64, h.0));
        }
    }
    let root = tree_hash(size + leaves.len() as u64, known)?;
    Ok((new, root))
}

/// A batch's events in log order (each counter's together, in the order they were made; events no audit row explains
/// last, in no run).
struct Batch {
    /// Each event's counter and chain position.
    placed: Vec<(CounterId, Option<i64>)>,
    /// Each event's text as a bundle holds it.
    bundled: Vec<Vec<u8>>,
    leaves: Vec<Hash>,
}

/// Orders a batch's events and makes their texts and leaf hashes: CPU work, run off the worker threads.
fn entries_of(mut events: Vec<store::Staged<'static>>, codes: &HashMap<CounterId, (String, String)>) -> Result<Batch, AppError> {
    events.sort_by_key(|e| (e.chain.is_none(), e.counter));
    let mut placed = Vec::with_capacity(events.len());
    let mut bundled = Vec::with_capacity(events.len());
    let mut leaves = Vec::with_capacity(events.len());
    for p in &events {
        let (project_code, type_code) = codes
            .get(&p.counter)
            .ok_or_else(|| AppError::internal(format!("transparency log: staged event of counter {} that is not there", p.counter.0)))?;
        let entry = Entry {
            number: receipt::one_line(&p.number),
            project: receipt::one_line(project_code),
            type_code: receipt::one_line(type_code),
            event: p.event.to_string(),
            at: rfc3339(p.at),
            sequence: p.sequence,
            document_sha256: p.document.as_deref().map(document_sha256),
        };
        let body = entry.to_text().into_bytes();
        leaves.push(record_hash(&body));
        bundled.push(store::bundled(&body).map_err(sql)?);
        placed.push((p.counter, p.chain));
    }
    Ok(Batch { placed, bundled, leaves })
}

/// The log's handle: the database, the signer, the settings.
pub struct Log {
    db: Db,
    clock: Arc<Clock>,
    config: LogConfig,
    signer: StandardSigner,
    vkey: String,
    /// One integration at a time in this process (the row lock orders the instances).
    busy: tokio::sync::Mutex<()>,
    /// Told each time a checkpoint is signed here (the witnesses' collector waits on it).
    signed: tokio::sync::Notify,
}

/// A signer key's text for `origin`, and its verifier key.
pub fn generate_key(origin: &str) -> (String, String) {
    signed_note::generate_key(&mut rand::rngs::OsRng, origin)
}

impl Log {
    pub fn new(db: Db, clock: Arc<Clock>, config: LogConfig) -> Result<Log, AppError> {
        if !signed_note::is_key_name_valid(&config.origin) {
            return Err(AppError::internal(format!("LOG_ORIGIN {:?} is not a valid log name (no spaces, no '+')", config.origin)));
        }
        let skey = match &config.signing_key {
            Some(k) => k.trim().to_string(),
            None => {
                tracing::warn!("LOG_SIGNING_KEY_FILE is not set: the log signs with a key made for this process only");
                generate_key(&config.origin).0
            }
        };
        let signer = StandardSigner::new(&skey).map_err(|e| AppError::internal(format!("LOG_SIGNING_KEY_FILE: {e}")))?;
        if signed_note::Signer::name(&signer) != config.origin {
            return Err(AppError::internal(format!(
                "the log's signing key is named {:?}, not LOG_ORIGIN {:?}",
                signed_note::Signer::name(&signer),
                config.origin
            )));
        }
        let vkey = vkey_of(&skey)?;
        Ok(Log { db, clock, config, signer, vkey, busy: tokio::sync::Mutex::new(()), signed: tokio::sync::Notify::new() })
    }

    /// The verifier key (C2SP vkey: `<origin>+<key hash>+<base64 of 0x01 ‖ key>`).
    pub fn vkey(&self) -> &str {
        &self.vkey
    }

    pub fn origin(&self) -> &str {
        &self.config.origin
    }

    /// The verifier keys of the witnesses asked to cosign (`LOG_WITNESSES`): public, like the log's.
    pub fn witness_vkeys(&self) -> Vec<String> {
        self.config.witnesses.iter().map(|w| w.vkey.clone()).collect()
    }

    /// Moves hashes an earlier version stored one per row into pages (a no-op once done).
    pub async fn page_loose_hashes(&self) -> Result<(), AppError> {
        let moved = store::page_loose_hashes(&self.db).await.map_err(sql)?;
        if moved > 0 {
            tracing::info!(moved, "transparency log: stored hashes moved into pages");
        }
        Ok(())
    }

    /// Moves the events of up to `rows` staged rows into the tree; answers how many events.
    pub async fn integrate(&self, rows: i64) -> Result<usize, AppError> {
        Ok(self.take(rows).await?.1)
    }

    /// [`Log::integrate`], answering also how many staged rows it took.
    async fn take(&self, rows: i64) -> Result<(usize, usize), AppError> {
        let _one = self.busy.lock().await;
        let mut tx = self.db.begin_write().await.map_err(sql)?;
        let (size, _) = store::lock_state(&mut tx, self.db.dialect).await.map_err(sql)?;
        let staged = store::staged_rows(&mut tx, 0, rows).await.map_err(sql)?;
        if staged.is_empty() {
            return Ok((0, 0));
        }
        let ids: Vec<i64> = staged.iter().map(|(id, _)| *id).collect();
        let mut events = off_thread(move || -> Result<Vec<store::Staged<'static>>, sqlx::Error> {
            let mut events = Vec::new();
            for (id, json) in staged {
                events.extend(store::decode(id, &json)?);
            }
            Ok(events)
        })
        .await?
        .map_err(sql)?;
        if events.iter().any(|e| e.chain.is_none()) {
            let mut keyed: Vec<_> = events.iter().map(|e| (e.counter, e.chain, staged_key(e))).collect();
            assign_chains(&mut tx, &mut keyed).await?;
            for (e, (_, chain, _)) in events.iter_mut().zip(keyed) {
                e.chain = chain;
            }
        }
        let counters: Vec<CounterId> = events.iter().map(|e| e.counter).collect::<BTreeSet<_>>().into_iter().collect();
        let codes = store::counter_codes(&mut tx, &counters).await.map_err(sql)?;
        let Batch { placed, bundled, leaves } = off_thread(move || entries_of(events, &codes)).await??;
        let unexplained = placed.iter().filter(|(_, chain)| chain.is_none()).count();
        if unexplained > 0 {
            tracing::warn!(unexplained, "transparency log: staged events that no audit row explains are logged in no run");
        }
        let runs = runs_from(size, &placed);
        let size = size as u64;
        let added = leaves.len() as u64;
        let (hashes, root) = with_hashes_off_thread(&mut tx, move |k| grow(k, size, &leaves))
            .await?
            .ok_or_else(|| AppError::internal("transparency log: the tree's stored hashes are incomplete"))?;
        let now = self.clock.now_ms();
        store::append(&mut tx, store::Paged::Entries, size as i64, &bundled).await.map_err(sql)?;
        store::insert_runs(&mut tx, &runs).await.map_err(sql)?;
        let from = tlog_tiles::stored_hash_count(size) as i64;
        if hashes.iter().enumerate().any(|(k, (index, _))| *index != from + k as i64) {
            return Err(AppError::internal("transparency log: new hashes are not the next stored indexes"));
        }
        store::append_hashes(&mut tx, from, &hashes.iter().map(|(_, h)| *h).collect::<Vec<_>>()).await.map_err(sql)?;
        store::delete_staged(&mut tx, &ids).await.map_err(sql)?;
        store::set_state(&mut tx, (size + added) as i64, &root.0, now).await.map_err(sql)?;
        tx.commit().await.map_err(sql)?;
        Ok((ids.len(), added as usize))
    }

    /// Moves entries an earlier version kept one per row (`log_entries`) into bundles and runs, as they are (a no-op
    /// once done).
    pub async fn bundle_loose_entries(&self) -> Result<(), AppError> {
        let mut tx = self.db.begin_write().await.map_err(sql)?;
        let (size, _) = store::lock_state(&mut tx, self.db.dialect).await.map_err(sql)?;
        let mut loose = Vec::new();
        loop {
            let after = loose.last().map_or(0, |e: &store::LegacyEntry| e.0 + 1);
            let page = store::legacy_entries(&mut tx, after, 10_000).await.map_err(sql)?;
            if page.is_empty() {
                break;
            }
            loose.extend(page);
        }
        if loose.is_empty() {
            return Ok(());
        }
        // the loose entries are the tree's last ones: all of them, or those an older instance wrote beside this version
        let first = size - loose.len() as i64;
        let mut keyed: Vec<(CounterId, Option<i64>, EventKey)> = Vec::with_capacity(loose.len());
        let mut bundled = Vec::with_capacity(loose.len());
        for (k, (idx, counter, sequence, event, number, body)) in loose.into_iter().enumerate() {
            if idx != first + k as i64 {
                return Err(AppError::internal(format!("transparency log: entry {} is missing from log_entries", first + k as i64)));
            }
            keyed.push((counter, None, (sequence, event, receipt::one_line(&number))));
            bundled.push(store::bundled(&body).map_err(sql)?);
        }
        assign_chains(&mut tx, &mut keyed).await?;
        let runs = runs_from(first, &keyed.iter().map(|(counter, chain, _)| (*counter, *chain)).collect::<Vec<_>>());
        store::append(&mut tx, store::Paged::Entries, first, &bundled).await.map_err(sql)?;
        store::insert_runs(&mut tx, &runs).await.map_err(sql)?;
        store::delete_legacy_entries(&mut tx).await.map_err(sql)?;
        tx.commit().await.map_err(sql)?;
        let unexplained = keyed.iter().filter(|e| e.1.is_none()).count();
        tracing::info!(moved = keyed.len(), unexplained, "transparency log: entries moved into bundles and runs");
        Ok(())
    }

    /// Signs a checkpoint of the tree as it is, unless the newest one is of this size already or is too recent
    /// (`force`: sign whenever the tree grew). Answers the newest checkpoint's size.
    pub async fn sign_if_due(&self, force: bool) -> Result<u64, AppError> {
        let (size, root) = store::state(&self.db).await.map_err(sql)?;
        let latest = store::latest_checkpoint(&self.db).await.map_err(sql)?;
        let now = self.clock.now_ms();
        if let Some((signed, _, at)) = &latest {
            let grown = size - signed;
            let waited = now - at >= self.config.checkpoint_interval.as_millis() as i64;
            if grown <= 0 || !(force || waited || grown as u64 >= self.config.checkpoint_entries) {
                return Ok(*signed as u64);
            }
        }
        let root: [u8; 32] = root.try_into().map_err(|_| AppError::internal("transparency log: the root is not 32 bytes"))?;
        let note = self.sign(size as u64, Hash(root))?;
        store::insert_checkpoint(&self.db, size, &note, now).await.map_err(sql)?;
        self.signed.notify_one();
        Ok(size as u64)
    }

    /// A signed note of the checkpoint `(origin, size, root)`.
    pub fn sign(&self, size: u64, root: Hash) -> Result<String, AppError> {
        let cp = Checkpoint::new(&self.config.origin, size, root, "").map_err(|e| AppError::internal(format!("checkpoint: {e}")))?;
        let mut note = Note::new(&cp.to_bytes(), &[]).map_err(|e| AppError::internal(format!("checkpoint note: {e}")))?;
        note.add_sigs(&[&self.signer]).map_err(|e| AppError::internal(format!("checkpoint signature: {e}")))?;
        String::from_utf8(note.to_bytes()).map_err(|_| AppError::internal("checkpoint note is not UTF-8"))
    }

    /// Integrates everything staged so far and signs a checkpoint of it.
    pub async fn catch_up(&self) -> Result<u64, AppError> {
        while self.integrate(STAGED_ROWS).await? > 0 {}
        self.sign_if_due(true).await
    }

    /// The sequencer: integrates staged events every `sequence_interval`, signs checkpoints when due.
    pub fn spawn(self: &Arc<Self>) {
        let log = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(log.config.sequence_interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let step = async {
                    while log.take(STAGED_ROWS).await?.0 == STAGED_ROWS as usize {}
                    log.sign_if_due(false).await
                };
                if let Err(e) = step.await {
                    tracing::warn!(error = %e.report(), "transparency log: sequencing failed");
                }
            }
        });
    }

    /// The newest signed checkpoint.
    pub async fn checkpoint(&self) -> Result<Option<String>, AppError> {
        Ok(store::latest_checkpoint(&self.db).await.map_err(sql)?.map(|(_, note, _)| note))
    }

    /// A hash tile (`level`, `n`, width `w`; 256 = full), None past the tree.
    pub async fn tile(&self, level: u8, n: u64, w: u32) -> Result<Option<Vec<u8>>, AppError> {
        let tile = Tile::new(8, level, n, w, false);
        let mut conn = self.db.pool.acquire().await.map_err(sql)?;
        let mut known = Known::default();
        with_hashes(&mut conn, &mut known, |k| tile.read_data(k)).await
    }

    /// An entry bundle: entries `n·256 ..` (`w` of them), each a big-endian u16 length and its text.
    pub async fn entries(&self, n: u64, w: u32) -> Result<Option<Vec<u8>>, AppError> {
        let mut conn = self.db.pool.acquire().await.map_err(sql)?;
        let Some(mut bundle) = store::page(&mut conn, store::Paged::Entries, n as i64).await.map_err(sql)? else { return Ok(None) };
        let entries = store::split_bundle(&bundle).ok_or_else(|| AppError::internal(format!("transparency log: bundle {n} does not read")))?;
        if entries.len() < w as usize {
            return Ok(None);
        }
        let len: usize = entries[..w as usize].iter().map(|e| 2 + e.len()).sum();
        bundle.truncate(len);
        Ok(Some(bundle))
    }

    /// The receipt of a number as a link or a query names it, with the number's coordinates trimmed: each value
    /// holds something not blank and at most 64 characters (the number 255), as the OpenAPI document states, and the
    /// event is one of the log's; a 4xx when they are not, or when the number has no such entry.
    pub(crate) async fn named_receipt<'a>(
        &self,
        project: &'a str,
        type_code: &'a str,
        number: &'a str,
        event: Option<&str>,
    ) -> Result<(String, [&'a str; 3]), AppError> {
        if let Some(e) = event {
            if !receipt::EVENTS.contains(&e) {
                return Err(AppError::validation(LogDetail::EventUnknown { events: &receipt::EVENTS.join(", ") }));
            }
        }
        for (name, value, max) in [("projectCode", project, 64), ("correspondenceTypeCode", type_code, 64), ("documentNumber", number, 255)] {
            if value.trim().is_empty() || value.chars().count() > max {
                return Err(AppError::validation(LogDetail::CoordinateLength { name: &name, max: &max }));
            }
        }
        let (project, type_code, number) = (project.trim(), type_code.trim(), number.trim());
        let found = self
            .receipt(project, type_code, number, event)
            .await?
            .ok_or_else(|| AppError::not_found(LogDetail::NoEntry { number: &number, project: &project, type_code: &type_code }))?;
        Ok((found, [project, type_code, number]))
    }

    /// A receipt for the newest entry of a number (of `event`, if named), in the newest checkpoint that holds it;
    /// one is signed at once if none does yet. None: the number has no such entry.
    pub async fn receipt(&self, project: &str, type_code: &str, number: &str, event: Option<&str>) -> Result<Option<String>, AppError> {
        let mut found = self.find_entry(project, type_code, number, event).await?;
        if found.1 && store::any_staged(&self.db).await.map_err(sql)? {
            self.catch_up().await?;
            found = self.find_entry(project, type_code, number, event).await?;
        }
        let Some((idx, body)) = found.0 else { return Ok(None) };
        let mut latest = store::latest_checkpoint(&self.db).await.map_err(sql)?;
        if latest.as_ref().is_none_or(|(size, _, _)| *size <= idx) {
            self.catch_up().await?;
            latest = store::latest_checkpoint(&self.db).await.map_err(sql)?;
        }
        let Some((size, note, _)) = latest else { return Err(AppError::internal("transparency log: no checkpoint after signing one")) };
        let mut conn = self.db.pool.acquire().await.map_err(sql)?;
        let mut known = Known::default();
        let proof = with_hashes(&mut conn, &mut known, |k| prove_record(size as u64, idx as u64, k))
            .await?
            .ok_or_else(|| AppError::internal("transparency log: the proof's hashes are not stored"))?;
        Ok(Some(Receipt { entry: body, index: idx as u64, proof, checkpoint: note }.to_text()))
    }

    /// The newest entry in the log of a number (of one event, if named): its leaf index and text; and whether an
    /// event of it is not in the log yet.
    async fn find_entry(
        &self,
        project: &str,
        type_code: &str,
        number: &str,
        event: Option<&str>,
    ) -> Result<(Option<(i64, Vec<u8>)>, bool), AppError> {
        let mut conn = self.db.pool.acquire().await.map_err(sql)?;
        let mut candidates: Vec<(CounterId, i64)> = store::number_events(&mut conn, number)
            .await
            .map_err(sql)?
            .iter()
            .filter(|a| a.document_number.as_deref() == Some(number))
            .filter_map(audit_key)
            .filter(|(_, _, (_, e, _))| event.is_none_or(|want| want == e))
            .map(|(counter, chain, _)| (counter, chain))
            .collect();
        let counters: Vec<CounterId> = candidates.iter().map(|(c, _)| *c).collect::<BTreeSet<_>>().into_iter().collect();
        let codes = store::counter_codes(&mut conn, &counters).await.map_err(sql)?;
        candidates.retain(|(c, _)| codes.get(c).is_some_and(|(p, t)| p == project && t == type_code));
        let mut newest = None;
        let mut not_yet = false;
        for (counter, chain) in candidates {
            match store::leaf_of(&mut conn, counter, chain).await.map_err(sql)? {
                Some(idx) => newest = newest.max(Some(idx)),
                None => not_yet = true,
            }
        }
        let Some(idx) = newest else { return Ok((None, not_yet)) };
        let bundle = store::page(&mut conn, store::Paged::Entries, idx / store::PER_PAGE)
            .await
            .map_err(sql)?
            .ok_or_else(|| AppError::internal(format!("transparency log: the bundle of entry {idx} is not stored")))?;
        let body = store::split_bundle(&bundle)
            .and_then(|entries| entries.get((idx % store::PER_PAGE) as usize).map(|e| e.to_vec()))
            .ok_or_else(|| AppError::internal(format!("transparency log: entry {idx} is not in its bundle")))?;
        Ok((Some((idx, body)), not_yet))
    }

    /// The inclusion proof of entry `index` in the tree of `size` entries.
    pub async fn inclusion(&self, size: u64, index: u64) -> Result<Option<Vec<Hash>>, AppError> {
        let mut conn = self.db.pool.acquire().await.map_err(sql)?;
        let mut known = Known::default();
        with_hashes(&mut conn, &mut known, |k| prove_record(size, index, k)).await
    }

    /// The proof that the tree of `new` entries extends that of `old`.
    pub async fn consistency(&self, new: u64, old: u64) -> Result<Option<Vec<Hash>>, AppError> {
        let mut conn = self.db.pool.acquire().await.map_err(sql)?;
        let mut known = Known::default();
        with_hashes(&mut conn, &mut known, |k| prove_tree(new, old, k)).await
    }

    /// The root of the tree of the first `size` entries, from the stored hashes.
    pub async fn root_at(&self, size: u64) -> Result<Option<Hash>, AppError> {
        let mut conn = self.db.pool.acquire().await.map_err(sql)?;
        let mut known = Known::default();
        with_hashes(&mut conn, &mut known, |k| tree_hash(size, k)).await
    }

    /// Every stored checkpoint (size, note), smallest first.
    pub async fn checkpoints(&self) -> Result<Vec<(u64, String)>, AppError> {
        Ok(store::checkpoints(&self.db).await.map_err(sql)?.into_iter().map(|(s, n)| (s as u64, n)).collect())
    }
}

/// What `docnum check` finds of the log: its entries against the counters' audit rows (each numbering event once,
/// nothing else), and its tree against its entries and its checkpoints.
#[derive(Debug, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogCheck {
    pub entries: u64,
    /// Committed events not yet in the tree (the sequencer's next batch).
    pub pending: u64,
    /// Numbering events of the audit log that the log lacks.
    pub missing: u64,
    /// Log entries no audit row explains.
    pub extra: u64,
    pub checkpoints: u64,
    /// Every checkpoint is a root of a prefix of the entries, each consistent with the one before.
    pub checkpoints_consistent: bool,
    pub problems: Vec<String>,
}

/// Checks the log inside the caller's snapshot: the events against the audit rows, the tree recomputed from the
/// entries' texts (not from the stored hashes) against the stored root, hashes and checkpoints.
pub(crate) async fn check_in(conn: &mut Conn) -> Result<LogCheck, AppError> {
    let mut report = LogCheck { checkpoints_consistent: true, ..LogCheck::default() };
    // events: audit rows +1, log entries and staged events −1
    let mut balance: HashMap<(CounterId, EventKey), i64> = HashMap::new();
    let mut by_chain: HashMap<(CounterId, i64), EventKey> = HashMap::new();
    for (counter, chain, key) in store::audit_events(conn).await.map_err(sql)?.iter().filter_map(audit_key) {
        *balance.entry((counter, key.clone())).or_default() += 1;
        by_chain.insert((counter, chain), key);
    }
    let staged = store::all_staged(conn).await.map_err(sql)?;
    report.pending = staged.len() as u64;
    for e in staged {
        *balance.entry((e.counter, staged_key(&e))).or_default() -= 1;
    }
    // the runs: which counter's event, at which chain position, each leaf is
    let mut placed: HashMap<i64, (CounterId, i64)> = HashMap::new();
    for (counter, first_idx, ranges) in store::runs(conn, None).await.map_err(sql)? {
        let Some(chain) = store::decode_ranges(&ranges) else {
            report.problems.push(format!("transparency log: a run of counter {} from entry {first_idx} does not read", counter.0));
            continue;
        };
        for (k, c) in chain.into_iter().enumerate() {
            if placed.insert(first_idx + k as i64, (counter, c)).is_some() {
                report.problems.push(format!("transparency log: entry {} is in two runs", first_idx + k as i64));
            }
        }
    }
    // the checkpoints to compare with the tree recomputed from the entries' texts
    let (size, root) = store::state_in(conn).await.map_err(sql)?;
    let checkpoints = store::checkpoints_in(conn).await.map_err(sql)?;
    report.checkpoints = checkpoints.len() as u64;
    let mut wanted: Vec<(u64, Hash)> = Vec::new();
    for (cp_size, note) in &checkpoints {
        let parsed = Note::from_bytes(note.as_bytes()).ok().and_then(|n| Checkpoint::from_bytes(n.text()).ok());
        match parsed {
            Some(cp) if cp.size() == *cp_size as u64 => wanted.push((cp.size(), *cp.hash())),
            _ => report.problems.push(format!("transparency log: the checkpoint of size {cp_size} does not read as one")),
        }
    }
    let known = Known::default();
    let mut roots: HashMap<u64, Hash> = HashMap::new();
    let mut next = 0i64;
    'bundles: loop {
        let bundles = store::pages(conn, store::Paged::Entries, next / store::PER_PAGE, 100).await.map_err(sql)?;
        if bundles.is_empty() {
            break;
        }
        for (number, bytes) in bundles {
            let entries = store::split_bundle(&bytes);
            if number * store::PER_PAGE != next || entries.as_ref().is_none_or(|e| e.len() > store::PER_PAGE as usize) {
                report.problems.push(format!("transparency log: bundle {number} is out of place or does not read"));
                break 'bundles;
            }
            let entries = entries.unwrap_or_default();
            let full = entries.len() == store::PER_PAGE as usize;
            for body in entries {
                let idx = next;
                let key = std::str::from_utf8(body).ok().and_then(|text| Entry::parse(text).ok()).map(|e| (e.sequence, e.event, e.number));
                match (placed.get(&idx), key) {
                    (Some((counter, chain)), Some(key)) => {
                        if by_chain.get(&(*counter, *chain)) != Some(&key) && report.problems.len() < 10 {
                            report.problems.push(format!("transparency log: entry {idx} is not the event at {chain} of counter {}", counter.0));
                        }
                        *balance.entry((*counter, key)).or_default() -= 1;
                    }
                    (None, Some(_)) => {
                        report.extra += 1;
                        if report.problems.len() < 10 {
                            report.problems.push(format!("transparency log: entry {idx} is in no run"));
                        }
                    }
                    (_, None) => {
                        report.extra += 1;
                        if report.problems.len() < 10 {
                            report.problems.push(format!("transparency log: entry {idx} does not read as an entry"));
                        }
                    }
                }
                let hashes = stored_hashes_for_record_hash(idx as u64, record_hash(body), &known).map_err(tlog_err)?;
                let base = stored_hash_index(0, idx as u64);
                known.added.borrow_mut().extend(hashes.into_iter().enumerate().map(|(k, h)| (base + k as u64, h)));
                next += 1;
                if wanted.iter().any(|(s, _)| *s == next as u64) {
                    roots.insert(next as u64, tree_hash(next as u64, &known).map_err(tlog_err)?);
                }
            }
            if !full {
                break 'bundles;
            }
        }
    }
    if placed.keys().any(|idx| *idx >= next) {
        report.problems.push("transparency log: a run names entries that are not there".into());
    }
    for ((counter, (sequence, event, number)), n) in &balance {
        if *n > 0 {
            report.missing += *n as u64;
        } else if *n < 0 {
            report.extra += n.unsigned_abs();
        }
        if *n != 0 && report.problems.len() < 10 {
            let what = if *n > 0 { "missing from" } else { "extra in" };
            report.problems.push(format!("transparency log: {event} of {number} (counter {}, sequence {sequence:?}) {what} the log", counter.0));
        }
    }
    report.entries = next as u64;
    if next != size {
        report.problems.push(format!("transparency log: {next} entries, but the tree's size is {size}"));
    }
    if tree_hash(next as u64, &known).map_err(tlog_err)?.0.as_slice() != root.as_slice() {
        report.problems.push("transparency log: the stored root is not the root of the entries".into());
    }
    let expected = tlog_tiles::stored_hash_count(next as u64) as i64;
    let (mut page_number, mut stored) = (0i64, 0i64);
    'pages: loop {
        let pages = store::pages(conn, store::Paged::Hashes, page_number, 1000).await.map_err(sql)?;
        if pages.is_empty() {
            break;
        }
        for (number, bytes) in pages {
            let full = bytes.len() as i64 == store::PER_PAGE * 32;
            if number != page_number || bytes.len() % 32 != 0 || (!full && number != expected / store::PER_PAGE) {
                report.problems.push(format!("transparency log: hash page {number} is out of place or of the wrong size"));
                break 'pages;
            }
            let recomputed = known.added.borrow();
            let first = number * store::PER_PAGE;
            let differs = bytes.chunks(32).enumerate().any(|(k, h)| recomputed.get(&((first + k as i64) as u64)).is_none_or(|r| r.0 != h));
            if differs {
                report.problems.push(format!("transparency log: hash page {number} differs from the hashes of the entries"));
            }
            stored += bytes.len() as i64 / 32;
            page_number += 1;
        }
    }
    if stored != expected {
        report.problems.push(format!("transparency log: {stored} stored hashes, {expected} expected"));
    }
    let mut consistent = true;
    let mut previous: Option<(u64, Hash)> = None;
    for (cp_size, cp_root) in &wanted {
        if roots.get(cp_size) != Some(cp_root) && *cp_size > 0 {
            consistent = false;
            report.problems.push(format!("transparency log: the checkpoint of size {cp_size} is not the root of the first {cp_size} entries"));
        }
        if let Some((old_size, old_root)) = previous.filter(|(s, _)| *s > 0) {
            let proof = prove_tree(*cp_size, old_size, &known).map_err(tlog_err)?;
            if receipt::check_consistency(&proof, *cp_size, *cp_root, old_size, old_root).is_err() {
                consistent = false;
                report.problems.push(format!("transparency log: checkpoints {old_size} and {cp_size} are not consistent"));
            }
        }
        previous = Some((*cp_size, *cp_root));
    }
    Ok(report.finish(consistent))
}

impl LogCheck {
    fn finish(mut self, consistent: bool) -> LogCheck {
        self.checkpoints_consistent = consistent && self.checkpoints_consistent;
        self
    }
}

/// The verifier key of a signer key's text.
fn vkey_of(skey: &str) -> Result<String, AppError> {
    use base64::prelude::{Engine as _, BASE64_STANDARD};
    let bad = || AppError::internal("LOG_SIGNING_KEY_FILE: not a signer key (PRIVATE+KEY+<name>+<id>+<key>)");
    let mut parts = skey.splitn(5, '+');
    let (_, _, name, _, key) = (parts.next(), parts.next(), parts.next().ok_or_else(bad)?, parts.next(), parts.next().ok_or_else(bad)?);
    let key = BASE64_STANDARD.decode(key).map_err(|_| bad())?;
    let seed: [u8; 32] = key.get(1..).and_then(|k| k.try_into().ok()).ok_or_else(bad)?;
    let signing = ed25519_dalek::SigningKey::from_bytes(&seed);
    Ok(signed_note::new_ed25519_verifier_key(name, &signing.verifying_key()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn audit(op: &str, number: Option<&str>, meta: Option<&str>) -> AuditEntry {
        AuditEntry { operation: op.into(), document_number: number.map(str::to_string), metadata: meta.map(str::to_string), ..AuditEntry::default() }
    }

    #[test]
    fn a_batch_is_one_run_per_stretch_of_a_counters_events() {
        let (a, b) = (CounterId(1), CounterId(2));
        let runs = runs_from(10, &[(a, Some(4)), (a, Some(5)), (a, Some(7)), (b, Some(1)), (b, None), (b, Some(2))]);
        assert_eq!(
            runs,
            vec![
                store::Run { counter: a, first_idx: 10, chain: vec![4, 5, 7] },
                store::Run { counter: b, first_idx: 13, chain: vec![1] },
                store::Run { counter: b, first_idx: 15, chain: vec![2] },
            ]
        );
    }

    #[test]
    fn a_runs_chain_positions_read_back_as_written() {
        for chain in [vec![1], vec![4, 5, 7], (1..=6000).collect::<Vec<i64>>(), vec![9, 3, 4]] {
            assert_eq!(store::decode_ranges(&store::encode_ranges(&chain)), Some(chain));
        }
        assert_eq!(store::encode_ranges(&[4, 5, 6, 9]).len(), 32, "two ranges");
        assert_eq!(store::decode_ranges(&[0; 15]), None);
        assert_eq!(store::decode_ranges(&[0; 16]), None, "a range of no positions");
    }

    #[test]
    fn each_numbering_event_has_its_name() {
        let n = Some("A-0001");
        assert_eq!(event_of(&audit("RESERVE", n, None)), Some("reserved"));
        assert_eq!(event_of(&audit("GENERATE", n, None)), Some("confirmed"));
        assert_eq!(event_of(&audit("CONFIRM", n, None)), Some("confirmed"));
        assert_eq!(event_of(&audit("GENERATE", n, Some(r#"{"revisedFrom":"A-0001","revision":"A"}"#))), Some("revised"));
        assert_eq!(event_of(&audit("GENERATE", n, Some(r#"{"reason":"typo","replaces":"A-0001"}"#))), Some("replaced"));
        assert_eq!(event_of(&audit("CANCEL", n, Some(r#"{"reason":"expired"}"#))), Some("expired"));
        assert_eq!(event_of(&audit("CANCEL", n, Some(r#"{"reason":"not needed"}"#))), Some("cancelled"));
        assert_eq!(event_of(&audit("VOID", n, None)), Some("voided"));
        assert_eq!(event_of(&audit("MANUAL_OVERRIDE", n, None)), Some("imported"));
        assert_eq!(event_of(&audit("MANUAL_OVERRIDE", None, None)), Some("overridden"));
        assert_eq!(event_of(&audit("RESET_EXECUTE", None, None)), Some("counter-reset"));
        assert_eq!(event_of(&audit("RESET_REQUEST", None, None)), None);
        assert_eq!(event_of(&audit("RESET_APPROVE", None, None)), None);
        for e in ["reserved", "confirmed", "revised", "replaced", "expired", "cancelled", "voided", "imported", "overridden", "counter-reset"] {
            assert!(receipt::EVENTS.contains(&e), "{e}");
        }
    }
}
