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

fn decode(id: i64, json: &[u8]) -> Result<Vec<Staged<'static>>, sqlx::Error> {
    serde_json::from_slice(json).map_err(|e| sqlx::Error::Protocol(format!("transparency log: staged row {id} does not read: {e}")))
}

/// Up to `rows` staged rows after id `after`, oldest first, each with its events in the order they were made.
pub(crate) async fn staged_after(conn: &mut Conn, after: i64, rows: i64) -> Result<Vec<(i64, Vec<Staged<'static>>)>, sqlx::Error> {
    let read: Vec<(i64, Vec<u8>)> =
        sqlx::query_as("SELECT id, events FROM log_staged WHERE id > ? ORDER BY id LIMIT ?").bind(after).bind(rows).fetch_all(&mut *conn).await?;
    read.into_iter().map(|(id, json)| Ok((id, decode(id, &json)?))).collect()
}

/// Every staged event, oldest first (for the check).
async fn all_staged(conn: &mut Conn) -> Result<Vec<Staged<'static>>, sqlx::Error> {
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

/// Stored hashes per row of `log_hash_pages`. Stored-hash indexes are dense and only ever appended to, so page `p`
/// holds the hashes of indexes `p·256 ..`, 32 bytes each: a batch of events writes a few rows, not two per event.
pub(crate) const HASHES_PER_PAGE: i64 = 256;

/// The pages `pages`, by number.
async fn read_pages(conn: &mut Conn, pages: &[i64]) -> Result<HashMap<i64, Vec<u8>>, sqlx::Error> {
    let mut out = HashMap::with_capacity(pages.len());
    for chunk in pages.chunks(500) {
        let sql = format!("SELECT page, hashes FROM log_hash_pages WHERE page IN ({})", placeholders(chunk.len()));
        let mut q = sqlx::query_as::<_, (i64, Vec<u8>)>(&sql);
        for page in chunk {
            q = q.bind(*page);
        }
        out.extend(q.fetch_all(&mut *conn).await?);
    }
    Ok(out)
}

/// The stored hashes of `ids` that are stored (by stored-hash index).
pub(crate) async fn read_hashes(conn: &mut Conn, ids: &[i64]) -> Result<Vec<(i64, Vec<u8>)>, sqlx::Error> {
    let pages: BTreeSet<i64> = ids.iter().map(|id| id / HASHES_PER_PAGE).collect();
    let pages = read_pages(conn, &pages.into_iter().collect::<Vec<_>>()).await?;
    Ok(ids
        .iter()
        .filter_map(|&id| {
            let at = (id % HASHES_PER_PAGE) as usize * 32;
            let hash = pages.get(&(id / HASHES_PER_PAGE))?.get(at..at + 32)?;
            Some((id, hash.to_vec()))
        })
        .collect())
}

/// Appends `hashes` at stored-hash index `from`, the number stored so far: the last page is written again with
/// them, full pages after it are added.
pub(crate) async fn append_hashes(tx: &mut Conn, from: i64, hashes: &[[u8; 32]]) -> Result<(), sqlx::Error> {
    if hashes.is_empty() {
        return Ok(());
    }
    let first = from / HASHES_PER_PAGE;
    let kept = (from % HASHES_PER_PAGE) as usize * 32;
    let mut page = Vec::with_capacity(HASHES_PER_PAGE as usize * 32);
    if kept > 0 {
        let stored = read_pages(tx, &[first]).await?.remove(&first).unwrap_or_default();
        if stored.len() != kept {
            return Err(sqlx::Error::Protocol(format!("transparency log: hash page {first} holds {} bytes, {kept} expected", stored.len())));
        }
        page = stored;
        sqlx::query("DELETE FROM log_hash_pages WHERE page = ?").bind(first).execute(&mut *tx).await?;
    }
    let mut pages = Vec::new();
    let mut number = first;
    for hash in hashes {
        page.extend_from_slice(hash);
        if page.len() == HASHES_PER_PAGE as usize * 32 {
            pages.push((number, std::mem::take(&mut page)));
            number += 1;
        }
    }
    if !page.is_empty() {
        pages.push((number, page));
    }
    for chunk in pages.chunks(64) {
        let sql = format!("INSERT INTO log_hash_pages (page, hashes) VALUES {}", Db::row_placeholders(chunk.len(), 2));
        let mut q = sqlx::query(&sql);
        for (number, bytes) in chunk {
            q = q.bind(*number).bind(bytes.clone());
        }
        q.execute(&mut *tx).await?;
    }
    Ok(())
}

/// Every hash page in order (for the check).
pub(crate) async fn hash_pages(conn: &mut Conn, from: i64, limit: i64) -> Result<Vec<(i64, Vec<u8>)>, sqlx::Error> {
    sqlx::query_as("SELECT page, hashes FROM log_hash_pages WHERE page >= ? ORDER BY page LIMIT ?").bind(from).bind(limit).fetch_all(&mut *conn).await
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

pub(crate) struct NewEntry {
    pub(crate) idx: i64,
    pub(crate) project_code: String,
    pub(crate) type_code: String,
    pub(crate) number: String,
    pub(crate) event: String,
    pub(crate) counter_id: CounterId,
    pub(crate) sequence: Option<i64>,
    pub(crate) body: Vec<u8>,
}

pub(crate) async fn insert_entries(tx: &mut Conn, entries: &[NewEntry], now: i64) -> Result<(), sqlx::Error> {
    for chunk in entries.chunks(400) {
        let sql = format!(
            "INSERT INTO log_entries (idx, project_code, type_code, number, event, counter_id, sequence, body, created_at) VALUES {}",
            Db::row_placeholders(chunk.len(), 9)
        );
        let mut q = sqlx::query(&sql);
        for e in chunk {
            q = q
                .bind(e.idx)
                .bind(e.project_code.clone())
                .bind(e.type_code.clone())
                .bind(e.number.clone())
                .bind(e.event.clone())
                .bind(e.counter_id)
                .bind(e.sequence)
                .bind(e.body.clone())
                .bind(now);
        }
        q.execute(&mut *tx).await?;
    }
    Ok(())
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

/// Entries `from..to` in log order.
pub(crate) async fn bodies(db: &Db, from: i64, to: i64) -> Result<Vec<(i64, Vec<u8>)>, sqlx::Error> {
    sqlx::query_as("SELECT idx, body FROM log_entries WHERE idx >= ? AND idx < ? ORDER BY idx").bind(from).bind(to).fetch_all(&db.pool).await
}

/// The newest entry of a number (of one event, if named).
pub(crate) async fn find_entry(
    db: &Db,
    project_code: &str,
    type_code: &str,
    number: &str,
    event: Option<&str>,
) -> Result<Option<(i64, Vec<u8>)>, sqlx::Error> {
    let sql = format!(
        "SELECT idx, body FROM log_entries WHERE number = ? AND project_code = ? AND type_code = ?{} ORDER BY idx DESC LIMIT 1",
        if event.is_some() { " AND event = ?" } else { "" }
    );
    let mut q = sqlx::query_as(&sql).bind(number).bind(project_code).bind(type_code);
    if let Some(e) = event {
        q = q.bind(e);
    }
    q.fetch_optional(&db.pool).await
}

/// Whether anything is staged.
pub(crate) async fn any_staged(db: &Db) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query_scalar::<_, i64>("SELECT id FROM log_staged LIMIT 1").fetch_optional(&db.pool).await?.is_some())
}

/// `(counter_id, sequence, event, number)` of every entry, and of every staged event (how many are staged), for the
/// check against the audit.
pub(crate) async fn logged_events(conn: &mut Conn) -> Result<(Vec<(i64, Option<i64>, String, String)>, u64), sqlx::Error> {
    let mut rows: Vec<(i64, Option<i64>, String, String)> =
        sqlx::query_as("SELECT counter_id, sequence, event, number FROM log_entries").fetch_all(&mut *conn).await?;
    let staged = all_staged(conn).await?;
    let count = staged.len() as u64;
    rows.extend(staged.into_iter().map(|e| (e.counter.0, e.sequence, e.event.into_owned(), e.number.into_owned())));
    Ok((rows, count))
}

#[derive(FromRow)]
pub(crate) struct AuditEvent {
    pub(crate) chain_key: String,
    pub(crate) operation: String,
    pub(crate) document_number: Option<String>,
    pub(crate) sequence: Option<i64>,
    pub(crate) metadata: Option<String>,
}

/// The counters' audit rows written since the log began.
pub(crate) async fn audit_events(conn: &mut Conn) -> Result<Vec<AuditEvent>, sqlx::Error> {
    sqlx::query_as(
        "SELECT chain_key, operation, document_number, sequence, metadata FROM audit_log \
         WHERE chain_key LIKE 'counter:%' AND id > (SELECT audit_from FROM log_state WHERE id = 1)",
    )
    .fetch_all(&mut *conn)
    .await
}

pub(crate) async fn state_in(conn: &mut Conn) -> Result<(i64, Vec<u8>), sqlx::Error> {
    sqlx::query_as("SELECT size, root FROM log_state WHERE id = 1").fetch_one(&mut *conn).await
}

/// Entries' bodies from `from` on, `limit` of them, in log order.
pub(crate) async fn bodies_page(conn: &mut Conn, from: i64, limit: i64) -> Result<Vec<(i64, Vec<u8>)>, sqlx::Error> {
    sqlx::query_as("SELECT idx, body FROM log_entries WHERE idx >= ? ORDER BY idx LIMIT ?").bind(from).bind(limit).fetch_all(&mut *conn).await
}

pub(crate) async fn checkpoints_in(conn: &mut Conn) -> Result<Vec<(i64, String)>, sqlx::Error> {
    sqlx::query_as("SELECT size, note FROM log_checkpoints ORDER BY size").fetch_all(&mut *conn).await
}
