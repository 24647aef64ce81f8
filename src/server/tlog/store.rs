//! The transparency log's SQL.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use sqlx::FromRow;

use crate::numbering::CounterId;
use crate::server::db::{Conn, Db, Dialect};

/// A numbering event, staged by the transaction that makes it: one object of a `log_staged` row's JSON array.
#[derive(Serialize, Deserialize)]
pub(crate) struct Staged<'a> {
    pub(crate) event: Cow<'a, str>,
    pub(crate) number: Cow<'a, str>,
    pub(crate) counter: CounterId,
    pub(crate) sequence: Option<i64>,
    pub(crate) document: Option<Cow<'a, str>>,
    pub(crate) at: i64,
    /// The event's audit row: its position on the counter's chain (`counter:<id>`). Rows staged before the log kept
    /// runs have none; the sequencer finds it (`assign_chains`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) chain: Option<i64>,
}

/// Events a staged row holds at most (about 100 KB of JSON).
const STAGED_PER_ROW: usize = 500;

/// Stages a transaction's events: one row for up to 500 of them.
pub(crate) async fn stage(tx: &mut Conn, events: &[Staged<'_>]) -> Result<(), sqlx::Error> {
    for chunk in events.chunks(STAGED_PER_ROW) {
        let json = serde_json::to_vec(chunk).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
        sqlx::query("INSERT INTO log_staged (events) VALUES (?)").bind(json).execute(&mut *tx).await?;
    }
    Ok(())
}

/// A staged row's events, in the order they were made.
pub(crate) fn decode(id: i64, json: &[u8]) -> Result<Vec<Staged<'static>>, sqlx::Error> {
    serde_json::from_slice(json).map_err(|e| sqlx::Error::Protocol(format!("transparency log: staged row {id} does not read: {e}")))
}

/// Up to `rows` staged rows after id `after`, oldest first, as stored (`decode` reads each).
pub(crate) async fn staged_rows(conn: &mut Conn, after: i64, rows: i64) -> Result<Vec<(i64, Vec<u8>)>, sqlx::Error> {
    sqlx::query_as("SELECT id, events FROM log_staged WHERE id > ? ORDER BY id LIMIT ?").bind(after).bind(rows).fetch_all(&mut *conn).await
}

/// Up to `rows` staged rows after id `after`, oldest first, each with its events in the order they were made.
async fn staged_after(conn: &mut Conn, after: i64, rows: i64) -> Result<Vec<(i64, Vec<Staged<'static>>)>, sqlx::Error> {
    staged_rows(conn, after, rows).await?.into_iter().map(|(id, json)| Ok((id, decode(id, &json)?))).collect()
}

/// Every staged event, oldest first (for the check).
pub(crate) async fn all_staged(conn: &mut Conn) -> Result<Vec<Staged<'static>>, sqlx::Error> {
    let mut events = Vec::new();
    let mut after = 0i64;
    loop {
        let read = staged_after(conn, after, 100).await?;
        let Some((last, _)) = read.last() else { return Ok(events) };
        after = *last;
        events.extend(read.into_iter().flat_map(|(_, staged)| staged));
    }
}

/// The project and type codes of `counters`.
pub(crate) async fn counter_codes(conn: &mut Conn, counters: &[CounterId]) -> Result<HashMap<CounterId, (String, String)>, sqlx::Error> {
    let mut out = HashMap::with_capacity(counters.len());
    for chunk in counters.chunks(500) {
        let sql = format!(
            "SELECT c.id, pr.code, ct.code FROM counters c JOIN projects pr ON pr.id = c.project_id \
             JOIN correspondence_types ct ON ct.id = c.correspondence_type_id WHERE c.id IN ({})",
            placeholders(chunk.len())
        );
        let mut q = sqlx::query_as::<_, (CounterId, String, String)>(&sql);
        for id in chunk {
            q = q.bind(*id);
        }
        out.extend(q.fetch_all(&mut *conn).await?.into_iter().map(|(id, project, type_code)| (id, (project, type_code))));
    }
    Ok(out)
}

pub(crate) async fn delete_staged(tx: &mut Conn, ids: &[i64]) -> Result<(), sqlx::Error> {
    for chunk in ids.chunks(500) {
        let sql = format!("DELETE FROM log_staged WHERE id IN ({})", placeholders(chunk.len()));
        let mut q = sqlx::query(&sql);
        for id in chunk {
            q = q.bind(*id);
        }
        q.execute(&mut *tx).await?;
    }
    Ok(())
}

/// The tree's size and root, locked for the rest of the transaction (one sequencer at a time, any instance).
pub(crate) async fn lock_state(tx: &mut Conn, dialect: Dialect) -> Result<(i64, Vec<u8>), sqlx::Error> {
    sqlx::query_as(&format!("SELECT size, root FROM log_state WHERE id = 1{}", dialect.for_update())).fetch_one(&mut *tx).await
}

pub(crate) async fn state(db: &Db) -> Result<(i64, Vec<u8>), sqlx::Error> {
    sqlx::query_as("SELECT size, root FROM log_state WHERE id = 1").fetch_one(&db.pool).await
}

pub(crate) async fn set_state(tx: &mut Conn, size: i64, root: &[u8], now: i64) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE log_state SET size = ?, root = ?, updated_at = ? WHERE id = 1")
        .bind(size)
        .bind(root.to_vec())
        .bind(now)
        .execute(&mut *tx)
        .await
        .map(|_| ())
}

fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// Items per page of a paged table: stored hashes in `log_hash_pages`, entries in `log_bundles`. Both are dense and
/// only ever appended to, so page `p` holds items `p·256 ..`: a batch of events writes a few rows, not one per item.
pub(crate) const PER_PAGE: i64 = 256;

/// A table of pages of 256 items, appended to only.
#[derive(Clone, Copy)]
pub(crate) enum Paged {
    /// The tree's stored hashes, 32 bytes each.
    Hashes,
    /// The entries' texts, each a big-endian u16 length and the text: a full page is the entries tile.
    Entries,
}

impl Paged {
    fn sql(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Paged::Hashes => ("log_hash_pages", "page", "hashes"),
            Paged::Entries => ("log_bundles", "bundle", "entries"),
        }
    }

    /// How many items a stored page holds; None when its bytes are not whole items.
    fn count(self, bytes: &[u8]) -> Option<usize> {
        match self {
            Paged::Hashes => bytes.len().is_multiple_of(32).then_some(bytes.len() / 32),
            Paged::Entries => split_bundle(bytes).map(|e| e.len()),
        }
    }
}

/// The entries of a bundle (their texts, without the lengths); None when its bytes do not read as entries.
pub(crate) fn split_bundle(mut bytes: &[u8]) -> Option<Vec<&[u8]>> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let len = u16::from_be_bytes(bytes.get(..2)?.try_into().ok()?) as usize;
        out.push(bytes.get(2..2 + len)?);
        bytes = &bytes[2 + len..];
    }
    Some(out)
}

/// An entry's text as a bundle holds it: its length (big-endian u16), then the text.
pub(crate) fn bundled(text: &[u8]) -> Result<Vec<u8>, sqlx::Error> {
    let len = u16::try_from(text.len()).map_err(|_| sqlx::Error::Protocol(format!("transparency log: an entry of {} bytes", text.len())))?;
    let mut out = Vec::with_capacity(2 + text.len());
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(text);
    Ok(out)
}

/// The pages `pages` of a paged table, by number.
async fn read_pages(conn: &mut Conn, paged: Paged, pages: &[i64]) -> Result<HashMap<i64, Vec<u8>>, sqlx::Error> {
    let (table, key, blob) = paged.sql();
    let mut out = HashMap::with_capacity(pages.len());
    for chunk in pages.chunks(500) {
        let sql = format!("SELECT {key}, {blob} FROM {table} WHERE {key} IN ({})", placeholders(chunk.len()));
        let mut q = sqlx::query_as::<_, (i64, Vec<u8>)>(&sql);
        for page in chunk {
            q = q.bind(*page);
        }
        out.extend(q.fetch_all(&mut *conn).await?);
    }
    Ok(out)
}

/// One page of a paged table, if it is stored.
pub(crate) async fn page(conn: &mut Conn, paged: Paged, page: i64) -> Result<Option<Vec<u8>>, sqlx::Error> {
    Ok(read_pages(conn, paged, &[page]).await?.remove(&page))
}

/// The stored hashes of `ids` that are stored (by stored-hash index).
pub(crate) async fn read_hashes(conn: &mut Conn, ids: &[i64]) -> Result<Vec<(i64, Vec<u8>)>, sqlx::Error> {
    let pages: BTreeSet<i64> = ids.iter().map(|id| id / PER_PAGE).collect();
    let pages = read_pages(conn, Paged::Hashes, &pages.into_iter().collect::<Vec<_>>()).await?;
    Ok(ids
        .iter()
        .filter_map(|&id| {
            let at = (id % PER_PAGE) as usize * 32;
            let hash = pages.get(&(id / PER_PAGE))?.get(at..at + 32)?;
            Some((id, hash.to_vec()))
        })
        .collect())
}

/// Appends `hashes` at stored-hash index `from`, the number stored so far.
pub(crate) async fn append_hashes(tx: &mut Conn, from: i64, hashes: &[[u8; 32]]) -> Result<(), sqlx::Error> {
    append(tx, Paged::Hashes, from, hashes).await
}

/// Appends items (already in the page's form) at item `from`, the number stored so far: the last page is written
/// again with them, full pages after it are added.
pub(crate) async fn append<T: AsRef<[u8]> + Sync>(tx: &mut Conn, paged: Paged, from: i64, items: &[T]) -> Result<(), sqlx::Error> {
    let (table, key, blob) = paged.sql();
    if items.is_empty() {
        return Ok(());
    }
    let first = from / PER_PAGE;
    let kept = (from % PER_PAGE) as usize;
    let mut page = Vec::new();
    let mut in_page = kept;
    if kept > 0 {
        let stored = read_pages(tx, paged, &[first]).await?.remove(&first).unwrap_or_default();
        if paged.count(&stored) != Some(kept) {
            return Err(sqlx::Error::Protocol(format!("transparency log: {table} {first} does not hold the {kept} items expected")));
        }
        page = stored;
        sqlx::query(&format!("DELETE FROM {table} WHERE {key} = ?")).bind(first).execute(&mut *tx).await?;
    }
    let mut pages = Vec::new();
    let mut number = first;
    for item in items {
        page.extend_from_slice(item.as_ref());
        in_page += 1;
        if in_page == PER_PAGE as usize {
            pages.push((number, std::mem::take(&mut page)));
            number += 1;
            in_page = 0;
        }
    }
    if in_page > 0 {
        pages.push((number, page));
    }
    for chunk in pages.chunks(64) {
        let sql = format!("INSERT INTO {table} ({key}, {blob}) VALUES {}", Db::row_placeholders(chunk.len(), 2));
        let mut q = sqlx::query(&sql);
        for (number, bytes) in chunk {
            q = q.bind(*number).bind(bytes.clone());
        }
        q.execute(&mut *tx).await?;
    }
    Ok(())
}

/// Every hash page in order (for the check).
pub(crate) async fn pages(conn: &mut Conn, paged: Paged, from: i64, limit: i64) -> Result<Vec<(i64, Vec<u8>)>, sqlx::Error> {
    let (table, key, blob) = paged.sql();
    sqlx::query_as(&format!("SELECT {key}, {blob} FROM {table} WHERE {key} >= ? ORDER BY {key} LIMIT ?"))
        .bind(from)
        .bind(limit)
        .fetch_all(&mut *conn)
        .await
}

/// Hashes left one per row in `log_hashes` by a version that stored them so, moved into pages (once, at start).
/// Answers how many were moved.
pub(crate) async fn page_loose_hashes(db: &Db) -> Result<u64, sqlx::Error> {
    let mut tx = db.begin_write().await?;
    lock_state(&mut tx, db.dialect).await?;
    let loose: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM log_hashes").fetch_one(&mut *tx).await?;
    if loose == 0 {
        return Ok(0);
    }
    let paged: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM log_hash_pages").fetch_one(&mut *tx).await?;
    if paged > 0 {
        return Err(sqlx::Error::Protocol("transparency log: hashes are stored both one per row and in pages".into()));
    }
    let mut next = 0i64;
    loop {
        let rows: Vec<(i64, Vec<u8>)> =
            sqlx::query_as("SELECT id, hash FROM log_hashes WHERE id >= ? ORDER BY id LIMIT 25600").bind(next).fetch_all(&mut *tx).await?;
        if rows.is_empty() {
            break;
        }
        let mut hashes = Vec::with_capacity(rows.len());
        for (id, hash) in rows {
            let hash: [u8; 32] = hash
                .try_into()
                .ok()
                .filter(|_| id == next + hashes.len() as i64)
                .ok_or_else(|| sqlx::Error::Protocol(format!("transparency log: stored hash {id} is out of order or not 32 bytes")))?;
            hashes.push(hash);
        }
        append_hashes(&mut tx, next, &hashes).await?;
        next += hashes.len() as i64;
    }
    sqlx::query("DELETE FROM log_hashes").execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(next as u64)
}

/// A counter's events at consecutive leaves from `first_idx`: the receipts' index. `chain` holds the events' positions
/// on the counter's audit chain, in leaf order, as ranges: a batch of the sequencer writes one run per counter, not a
/// row per event, and a receipt finds the number's audit row, then its leaf in the run.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) counter: CounterId,
    pub(crate) first_idx: i64,
    pub(crate) chain: Vec<i64>,
}

/// Chain positions as ranges, each a big-endian i64 start and length.
pub(crate) fn encode_ranges(chain: &[i64]) -> Vec<u8> {
    let mut ranges: Vec<(i64, i64)> = Vec::new();
    for &c in chain {
        match ranges.last_mut() {
            Some((start, len)) if *start + *len == c => *len += 1,
            _ => ranges.push((c, 1)),
        }
    }
    ranges.iter().flat_map(|(start, len)| start.to_be_bytes().into_iter().chain(len.to_be_bytes())).collect()
}

/// The chain positions of a run's stored ranges; None when they do not read as ranges.
pub(crate) fn decode_ranges(bytes: &[u8]) -> Option<Vec<i64>> {
    if !bytes.len().is_multiple_of(16) {
        return None;
    }
    let mut out = Vec::new();
    for range in bytes.chunks(16) {
        let start = i64::from_be_bytes(range[..8].try_into().ok()?);
        let len = i64::from_be_bytes(range[8..].try_into().ok()?);
        if !(1..=1 << 32).contains(&len) {
            return None;
        }
        out.extend(start..start + len);
    }
    Some(out)
}

pub(crate) async fn insert_runs(tx: &mut Conn, runs: &[Run]) -> Result<(), sqlx::Error> {
    for chunk in runs.chunks(500) {
        let sql =
            format!("INSERT INTO log_runs (counter_id, first_chain, last_chain, first_idx, chain) VALUES {}", Db::row_placeholders(chunk.len(), 5));
        let mut q = sqlx::query(&sql);
        for r in chunk {
            let (first, last) = (r.chain.iter().min().copied().unwrap_or(0), r.chain.iter().max().copied().unwrap_or(0));
            q = q.bind(r.counter).bind(first).bind(last).bind(r.first_idx).bind(encode_ranges(&r.chain));
        }
        q.execute(&mut *tx).await?;
    }
    Ok(())
}

/// The leaf index of the event at position `chain` of `counter`'s audit chain, if it is in the log.
pub(crate) async fn leaf_of(conn: &mut Conn, counter: CounterId, chain: i64) -> Result<Option<i64>, sqlx::Error> {
    // runs of one counter do not overlap, so the newest starting at or before the position is the one; a few more
    // are read for runs of single events made when an older log was moved over
    let runs: Vec<(i64, Vec<u8>)> = sqlx::query_as(
        "SELECT first_idx, chain FROM log_runs WHERE counter_id = ? AND first_chain <= ? AND last_chain >= ? ORDER BY first_chain DESC LIMIT 16",
    )
    .bind(counter)
    .bind(chain)
    .bind(chain)
    .fetch_all(&mut *conn)
    .await?;
    Ok(runs.into_iter().find_map(|(first_idx, ranges)| {
        let at = decode_ranges(&ranges)?.iter().position(|c| *c == chain)?;
        Some(first_idx + at as i64)
    }))
}

/// Every run of `counter` (`None`: of every counter), as stored.
pub(crate) async fn runs(conn: &mut Conn, counter: Option<CounterId>) -> Result<Vec<(CounterId, i64, Vec<u8>)>, sqlx::Error> {
    let sql = format!("SELECT counter_id, first_idx, chain FROM log_runs{}", if counter.is_some() { " WHERE counter_id = ?" } else { "" });
    let mut q = sqlx::query_as(&sql);
    if let Some(c) = counter {
        q = q.bind(c);
    }
    q.fetch_all(&mut *conn).await
}

/// The entries an earlier version kept one per row in `log_entries`, in log order: `(idx, counter, sequence, event,
/// number, body)`.
pub(crate) type LegacyEntry = (i64, CounterId, Option<i64>, String, String, Vec<u8>);

pub(crate) async fn legacy_entries(conn: &mut Conn, from: i64, limit: i64) -> Result<Vec<LegacyEntry>, sqlx::Error> {
    sqlx::query_as("SELECT idx, counter_id, sequence, event, number, body FROM log_entries WHERE idx >= ? ORDER BY idx LIMIT ?")
        .bind(from)
        .bind(limit)
        .fetch_all(&mut *conn)
        .await
}

pub(crate) async fn delete_legacy_entries(tx: &mut Conn) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM log_entries").execute(&mut *tx).await.map(|_| ())
}

pub(crate) async fn insert_checkpoint(db: &Db, size: i64, note: &str, now: i64) -> Result<(), sqlx::Error> {
    sqlx::query(&format!(
        "INSERT INTO log_checkpoints (size, note, created_at) VALUES (?, ?, ?) {}",
        db.dialect.on_duplicate_do_nothing_keyed("size")
    ))
    .bind(size)
    .bind(note)
    .bind(now)
    .execute(&db.pool)
    .await
    .map(|_| ())
}

/// The newest checkpoint: its size, note and when it was made.
pub(crate) async fn latest_checkpoint(db: &Db) -> Result<Option<(i64, String, i64)>, sqlx::Error> {
    sqlx::query_as("SELECT size, note, created_at FROM log_checkpoints ORDER BY size DESC LIMIT 1").fetch_optional(&db.pool).await
}

/// The note of the checkpoint of `size`.
pub(crate) async fn checkpoint_note(db: &Db, size: i64) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar("SELECT note FROM log_checkpoints WHERE size = ?").bind(size).fetch_optional(&db.pool).await
}

/// Replaces a checkpoint's note (the same text with more cosignatures) if it is still `old`; whether it was.
pub(crate) async fn replace_note(db: &Db, size: i64, old: &str, new: &str) -> Result<bool, sqlx::Error> {
    let done =
        sqlx::query("UPDATE log_checkpoints SET note = ? WHERE size = ? AND note = ?").bind(new).bind(size).bind(old).execute(&db.writer).await?;
    Ok(done.rows_affected() == 1)
}

/// Every stored checkpoint, smallest first.
pub(crate) async fn checkpoints(db: &Db) -> Result<Vec<(i64, String)>, sqlx::Error> {
    sqlx::query_as("SELECT size, note FROM log_checkpoints ORDER BY size").fetch_all(&db.pool).await
}

/// Whether anything is staged.
pub(crate) async fn any_staged(db: &Db) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query_scalar::<_, i64>("SELECT id FROM log_staged LIMIT 1").fetch_optional(&db.pool).await?.is_some())
}

#[derive(FromRow)]
pub(crate) struct AuditEvent {
    pub(crate) chain_key: String,
    pub(crate) chain_seq: i64,
    pub(crate) operation: String,
    pub(crate) document_number: Option<String>,
    pub(crate) sequence: Option<i64>,
    pub(crate) metadata: Option<String>,
}

/// The counters' audit rows written since the log began.
pub(crate) async fn audit_events(conn: &mut Conn) -> Result<Vec<AuditEvent>, sqlx::Error> {
    sqlx::query_as(
        "SELECT chain_key, chain_seq, operation, document_number, sequence, metadata FROM audit_log \
         WHERE chain_key LIKE 'counter:%' AND id > (SELECT audit_from FROM log_state WHERE id = 1)",
    )
    .fetch_all(&mut *conn)
    .await
}

/// The audit rows of one counter's chain written since the log began, in chain order.
pub(crate) async fn chain_events(conn: &mut Conn, counter: CounterId) -> Result<Vec<AuditEvent>, sqlx::Error> {
    sqlx::query_as(
        "SELECT chain_key, chain_seq, operation, document_number, sequence, metadata FROM audit_log \
         WHERE chain_key = ? AND id > (SELECT audit_from FROM log_state WHERE id = 1) ORDER BY chain_seq",
    )
    .bind(crate::server::audit::counter_chain(counter))
    .fetch_all(&mut *conn)
    .await
}

/// The counters' audit rows of a number (any case: the column's collation) written since the log began.
pub(crate) async fn number_events(conn: &mut Conn, number: &str) -> Result<Vec<AuditEvent>, sqlx::Error> {
    sqlx::query_as(
        "SELECT chain_key, chain_seq, operation, document_number, sequence, metadata FROM audit_log \
         WHERE document_number = ? AND chain_key LIKE 'counter:%' AND id > (SELECT audit_from FROM log_state WHERE id = 1)",
    )
    .bind(number)
    .fetch_all(&mut *conn)
    .await
}

pub(crate) async fn state_in(conn: &mut Conn) -> Result<(i64, Vec<u8>), sqlx::Error> {
    sqlx::query_as("SELECT size, root FROM log_state WHERE id = 1").fetch_one(&mut *conn).await
}

pub(crate) async fn checkpoints_in(conn: &mut Conn) -> Result<Vec<(i64, String)>, sqlx::Error> {
    sqlx::query_as("SELECT size, note FROM log_checkpoints ORDER BY size").fetch_all(&mut *conn).await
}
