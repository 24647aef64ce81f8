//! The transparency log's SQL.

use sqlx::FromRow;

use crate::server::db::{Conn, Db, Dialect};

/// An event staged by the transaction that makes it.
pub(crate) struct Staged<'a> {
    pub(crate) event: &'static str,
    pub(crate) number: &'a str,
    pub(crate) counter_id: i64,
    pub(crate) sequence: Option<i64>,
    pub(crate) document_id: Option<&'a str>,
    pub(crate) at: i64,
}

pub(crate) async fn insert_pending(tx: &mut Conn, rows: &[Staged<'_>]) -> Result<(), sqlx::Error> {
    const ROWS: usize = 500;
    for chunk in rows.chunks(ROWS) {
        let sql =
            format!("INSERT INTO log_pending (event, number, counter_id, sequence, document_id, at) VALUES {}", Db::row_placeholders(chunk.len(), 6));
        let mut q = sqlx::query(&sql);
        for r in chunk {
            q = q.bind(r.event).bind(r.number).bind(r.counter_id).bind(r.sequence).bind(r.document_id).bind(r.at);
        }
        q.execute(&mut *tx).await?;
    }
    Ok(())
}

#[derive(FromRow)]
pub(crate) struct PendingRow {
    pub(crate) id: i64,
    pub(crate) event: String,
    pub(crate) number: String,
    pub(crate) counter_id: i64,
    pub(crate) sequence: Option<i64>,
    pub(crate) document_id: Option<String>,
    pub(crate) at: i64,
    pub(crate) project_code: String,
    pub(crate) type_code: String,
}

/// The oldest staged events (by id), with their counter's project and type codes.
pub(crate) async fn read_pending(tx: &mut Conn, limit: i64) -> Result<Vec<PendingRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT p.id, p.event, p.number, p.counter_id, p.sequence, p.document_id, p.at, pr.code AS project_code, ct.code AS type_code \
         FROM log_pending p JOIN counters c ON c.id = p.counter_id JOIN projects pr ON pr.id = c.project_id \
         JOIN correspondence_types ct ON ct.id = c.correspondence_type_id ORDER BY p.id LIMIT ?",
    )
    .bind(limit)
    .fetch_all(&mut *tx)
    .await
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

pub(crate) async fn read_hashes(conn: &mut Conn, ids: &[i64]) -> Result<Vec<(i64, Vec<u8>)>, sqlx::Error> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let sql = format!("SELECT id, hash FROM log_hashes WHERE id IN ({})", placeholders(chunk.len()));
        let mut q = sqlx::query_as(&sql);
        for id in chunk {
            q = q.bind(*id);
        }
        out.extend(q.fetch_all(&mut *conn).await?);
    }
    Ok(out)
}

pub(crate) async fn insert_hashes(tx: &mut Conn, hashes: &[(i64, [u8; 32])]) -> Result<(), sqlx::Error> {
    for chunk in hashes.chunks(500) {
        let sql = format!("INSERT INTO log_hashes (id, hash) VALUES {}", Db::row_placeholders(chunk.len(), 2));
        let mut q = sqlx::query(&sql);
        for (id, h) in chunk {
            q = q.bind(*id).bind(h.to_vec());
        }
        q.execute(&mut *tx).await?;
    }
    Ok(())
}

pub(crate) struct NewEntry {
    pub(crate) idx: i64,
    pub(crate) project_code: String,
    pub(crate) type_code: String,
    pub(crate) number: String,
    pub(crate) event: String,
    pub(crate) counter_id: i64,
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

pub(crate) async fn delete_pending(tx: &mut Conn, ids: &[i64]) -> Result<(), sqlx::Error> {
    for chunk in ids.chunks(500) {
        let sql = format!("DELETE FROM log_pending WHERE id IN ({})", placeholders(chunk.len()));
        let mut q = sqlx::query(&sql);
        for id in chunk {
            q = q.bind(*id);
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

pub(crate) async fn pending_count_in(conn: &mut Conn) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM log_pending").fetch_one(&mut *conn).await
}

pub(crate) async fn pending_count(db: &Db) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM log_pending").fetch_one(&db.pool).await
}

/// `(counter_id, sequence, event, number)` of every entry and every staged event, for the check against the audit.
pub(crate) async fn logged_events(conn: &mut Conn) -> Result<Vec<(i64, Option<i64>, String, String)>, sqlx::Error> {
    let mut rows: Vec<(i64, Option<i64>, String, String)> =
        sqlx::query_as("SELECT counter_id, sequence, event, number FROM log_entries").fetch_all(&mut *conn).await?;
    rows.extend(
        sqlx::query_as::<_, (i64, Option<i64>, String, String)>("SELECT counter_id, sequence, event, number FROM log_pending")
            .fetch_all(&mut *conn)
            .await?,
    );
    Ok(rows)
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

pub(crate) async fn hash_count(conn: &mut Conn) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM log_hashes").fetch_one(&mut *conn).await
}
