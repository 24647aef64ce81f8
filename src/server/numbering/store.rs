//! SQL for counters and issued numbers. Everything here runs inside the batch transaction of one
//! counter, except the read-only lookups at the bottom.

use std::collections::HashMap;

use sqlx::Row;

use crate::numbering::CounterKey;
use crate::server::audit;
use crate::server::db::{Conn, Db, Dialect};
use crate::server::error::AppError;

#[derive(Clone, Debug)]
pub struct CounterRow {
    pub id: i64,
    pub last_number: i64,
    pub version: i64,
}

const KEY_WHERE: &str = "project_id = ? AND corr_type_id = ? AND originator_id = ? AND recipient_id = ? \
    AND sub_type_id = ? AND rfa_type_id = ? AND discipline_id = ? AND period = ?";

fn bind_key<'q>(
    q: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    key: &CounterKey,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    q.bind(key.project_id)
        .bind(key.corr_type_id)
        .bind(key.originator_id)
        .bind(key.recipient_id)
        .bind(key.sub_type_id)
        .bind(key.rfa_type_id)
        .bind(key.discipline_id)
        .bind(key.period.clone())
}

/// The counter row of `key`, created at 0 on first use (a new year simply gets a new row). On MariaDB the
/// row is read `FOR UPDATE` on every path (distributed lock or fallback alike), so two paths can never take
/// row locks in different orders; SQLite's write transaction is already exclusive.
pub async fn load_or_create_counter(tx: &mut Conn, dialect: Dialect, key: &CounterKey, max_number: i64, now_ms: i64) -> Result<CounterRow, sqlx::Error> {
    let lock = if dialect == Dialect::MySql { " FOR UPDATE" } else { "" };
    let sql = format!("SELECT id, last_number, version FROM counters WHERE {KEY_WHERE}{lock}");
    if let Some(r) = bind_key(sqlx::query(&sql), key).fetch_optional(&mut *tx).await? {
        return Ok(CounterRow { id: r.get(0), last_number: r.get(1), version: r.get(2) });
    }
    let inserted = bind_key(
        sqlx::query(
            "INSERT INTO counters (project_id, corr_type_id, originator_id, recipient_id, sub_type_id, rfa_type_id, discipline_id, period, \
             last_number, max_number, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, 0, ?, ?) RETURNING id",
        ),
        key,
    )
    .bind(max_number)
    .bind(now_ms)
    .bind(now_ms)
    .fetch_one(&mut *tx)
    .await?;
    Ok(CounterRow { id: inserted.get(0), last_number: 0, version: 0 })
}

/// Moves the counter on, fenced by its version: false means someone else moved it since we read it.
/// `max_number` is None for a batch without issues (it keeps the recorded maximum).
pub async fn advance_counter(tx: &mut Conn, counter: &CounterRow, last_number: i64, max_number: Option<i64>, now_ms: i64) -> Result<bool, sqlx::Error> {
    let r = sqlx::query("UPDATE counters SET last_number = ?, max_number = COALESCE(?, max_number), version = version + 1, updated_at = ? WHERE id = ? AND version = ?")
        .bind(last_number)
        .bind(max_number)
        .bind(now_ms)
        .bind(counter.id)
        .bind(counter.version)
        .execute(&mut *tx)
        .await?;
    Ok(r.rows_affected() == 1)
}

/// `advance_counter` together with the audit chain's head move, both fenced (version, length): false
/// when either fence fails. On MariaDB they are one multi-table UPDATE, one round trip less per batch,
/// which is most of what a single caller waits for; STRAIGHT_JOIN locks the counter row before the chain
/// row, the order every other writer uses, and both rows must change, so anything but 2 means a race.
pub async fn advance_counter_and_chain(
    tx: &mut Conn,
    dialect: Dialect,
    counter: &CounterRow,
    last_number: i64,
    max_number: Option<i64>,
    now_ms: i64,
    chain: &audit::Placed<'_>,
) -> Result<bool, sqlx::Error> {
    if chain.is_empty() {
        return advance_counter(tx, counter, last_number, max_number, now_ms).await;
    }
    if dialect == Dialect::Sqlite {
        return Ok(advance_counter(tx, counter, last_number, max_number, now_ms).await? && audit::try_move_head(tx, chain).await?);
    }
    let r = sqlx::query(
        "UPDATE counters c STRAIGHT_JOIN audit_chains a ON a.chain_key = ? \
         SET c.last_number = ?, c.max_number = COALESCE(?, c.max_number), c.version = c.version + 1, c.updated_at = ?, \
             a.head_hash = ?, a.length = ? \
         WHERE c.id = ? AND c.version = ? AND a.length = ?",
    )
    .bind(chain.chain_key)
    .bind(last_number)
    .bind(max_number)
    .bind(now_ms)
    .bind(chain.head.hash.clone())
    .bind(chain.head.length)
    .bind(counter.id)
    .bind(counter.version)
    .bind(chain.start.length)
    .execute(&mut *tx)
    .await?;
    Ok(r.rows_affected() == 2)
}

/// A number handed out, as the batch inserts it.
#[derive(Clone, Debug)]
pub struct NewNumber {
    pub counter_id: i64,
    pub project_id: i64,
    pub corr_type_id: i64,
    pub sequence: i64,
    pub revision: String,
    pub number: String,
    pub template: String,
    pub status: &'static str,
    pub token: Option<String>,
    pub document_id: Option<String>,
    pub user_id: Option<i64>,
    pub api_token_id: Option<i64>,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub confirmed_at: Option<i64>,
}

pub async fn insert_numbers(tx: &mut Conn, rows: &[NewNumber]) -> Result<(), sqlx::Error> {
    for chunk in rows.chunks(1000) {
        let sql = format!(
            "INSERT INTO document_numbers (counter_id, project_id, corr_type_id, sequence, revision, number, template, status, token, \
             document_id, user_id, api_token_id, created_at, expires_at, confirmed_at) VALUES {}",
            Db::row_placeholders(chunk.len(), 15)
        );
        let mut q = sqlx::query(&sql);
        for n in chunk {
            q = q
                .bind(n.counter_id)
                .bind(n.project_id)
                .bind(n.corr_type_id)
                .bind(n.sequence)
                .bind(n.revision.clone())
                .bind(n.number.clone())
                .bind(n.template.clone())
                .bind(n.status)
                .bind(n.token.clone())
                .bind(n.document_id.clone())
                .bind(n.user_id)
                .bind(n.api_token_id)
                .bind(n.created_at)
                .bind(n.expires_at)
                .bind(n.confirmed_at);
        }
        q.execute(&mut *tx).await?;
    }
    Ok(())
}

/// Which of `numbers` already exist in the uniqueness scope (project, type).
pub async fn existing_numbers(tx: &mut Conn, project_id: i64, corr_type_id: i64, numbers: &[String]) -> Result<Vec<String>, sqlx::Error> {
    let mut found = Vec::new();
    for chunk in numbers.chunks(500) {
        let sql = format!(
            "SELECT number FROM document_numbers WHERE project_id = ? AND corr_type_id = ? AND number IN ({})",
            vec!["?"; chunk.len()].join(", ")
        );
        let mut q = sqlx::query(&sql).bind(project_id).bind(corr_type_id);
        for n in chunk {
            q = q.bind(n.clone());
        }
        found.extend(q.fetch_all(&mut *tx).await?.iter().map(|r| r.get::<String, _>(0)));
    }
    Ok(found)
}

/// A number as stored, for confirm / cancel / expiry decisions.
#[derive(Clone, Debug)]
pub struct NumberRow {
    pub id: i64,
    pub number: String,
    pub sequence: i64,
    pub template: String,
    pub status: String,
    pub token: Option<String>,
    pub document_id: Option<String>,
    pub expires_at: Option<i64>,
    pub cancel_reason: Option<String>,
}

const NUMBER_COLUMNS: &str = "id, number, sequence, template, status, token, document_id, expires_at, cancel_reason";

fn number_row(r: &sqlx::any::AnyRow) -> NumberRow {
    NumberRow {
        id: r.get(0),
        number: r.get(1),
        sequence: r.get(2),
        template: r.get(3),
        status: r.get(4),
        token: r.get(5),
        document_id: r.get(6),
        expires_at: r.get(7),
        cancel_reason: r.get(8),
    }
}

pub async fn numbers_by_token(tx: &mut Conn, counter_id: i64, tokens: &[String]) -> Result<HashMap<String, NumberRow>, sqlx::Error> {
    let mut found = HashMap::new();
    for chunk in tokens.chunks(500) {
        let sql = format!(
            "SELECT {NUMBER_COLUMNS} FROM document_numbers WHERE counter_id = ? AND token IN ({})",
            vec!["?"; chunk.len()].join(", ")
        );
        let mut q = sqlx::query(&sql).bind(counter_id);
        for t in chunk {
            q = q.bind(t.clone());
        }
        for r in q.fetch_all(&mut *tx).await? {
            let row = number_row(&r);
            if let Some(t) = row.token.clone() {
                found.insert(t, row);
            }
        }
    }
    Ok(found)
}

/// Numbers already confirmed for these document ids in (project, type): `generate` is idempotent per document.
pub async fn confirmed_for_documents(
    tx: &mut Conn,
    project_id: i64,
    corr_type_id: i64,
    document_ids: &[String],
) -> Result<HashMap<String, NumberRow>, sqlx::Error> {
    let mut found = HashMap::new();
    for chunk in document_ids.chunks(500) {
        let sql = format!(
            "SELECT {NUMBER_COLUMNS} FROM document_numbers WHERE project_id = ? AND corr_type_id = ? AND status = 'CONFIRMED' AND document_id IN ({})",
            vec!["?"; chunk.len()].join(", ")
        );
        let mut q = sqlx::query(&sql).bind(project_id).bind(corr_type_id);
        for d in chunk {
            q = q.bind(d.clone());
        }
        for r in q.fetch_all(&mut *tx).await? {
            let row = number_row(&r);
            if let Some(d) = row.document_id.clone() {
                found.insert(d, row);
            }
        }
    }
    Ok(found)
}

#[derive(Clone, Debug)]
pub struct StatusChange {
    pub id: i64,
    pub status: &'static str,
    pub document_id: Option<String>,
    pub confirmed_at: Option<i64>,
    pub cancelled_at: Option<i64>,
    pub cancel_reason: Option<String>,
}

pub async fn apply_status_changes(tx: &mut Conn, changes: &[StatusChange]) -> Result<(), sqlx::Error> {
    for c in changes {
        sqlx::query(
            "UPDATE document_numbers SET status = ?, document_id = COALESCE(?, document_id), confirmed_at = COALESCE(?, confirmed_at), \
             cancelled_at = COALESCE(?, cancelled_at), cancel_reason = COALESCE(?, cancel_reason) WHERE id = ?",
        )
        .bind(c.status)
        .bind(c.document_id.clone())
        .bind(c.confirmed_at)
        .bind(c.cancelled_at)
        .bind(c.cancel_reason.clone())
        .bind(c.id)
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

// ---- read-only lookups outside the batch ----

pub async fn last_number(db: &Db, key: &CounterKey) -> Result<i64, AppError> {
    let sql = format!("SELECT last_number FROM counters WHERE {KEY_WHERE}");
    Ok(bind_key(sqlx::query(&sql), key).fetch_optional(&db.pool).await?.map(|r| r.get::<i64, _>(0)).unwrap_or(0))
}

/// The counter a reservation token belongs to, so the request can join that counter's queue.
pub async fn counter_key_of_token(db: &Db, token: &str) -> Result<Option<CounterKey>, AppError> {
    Ok(sqlx::query(
        "SELECT c.project_id, c.corr_type_id, c.originator_id, c.recipient_id, c.sub_type_id, c.rfa_type_id, c.discipline_id, c.period \
         FROM document_numbers d JOIN counters c ON c.id = d.counter_id WHERE d.token = ?",
    )
    .bind(token)
    .fetch_optional(&db.pool)
    .await?
    .map(|r| CounterKey {
        project_id: r.get(0),
        corr_type_id: r.get(1),
        originator_id: r.get(2),
        recipient_id: r.get(3),
        sub_type_id: r.get(4),
        rfa_type_id: r.get(5),
        discipline_id: r.get(6),
        period: r.get(7),
    }))
}

/// Reservations past their expiry, with the counter each belongs to.
pub async fn due_reservations(db: &Db, now_ms: i64, limit: i64) -> Result<Vec<(String, CounterKey)>, AppError> {
    Ok(sqlx::query(
        "SELECT d.token, c.project_id, c.corr_type_id, c.originator_id, c.recipient_id, c.sub_type_id, c.rfa_type_id, c.discipline_id, c.period \
         FROM document_numbers d JOIN counters c ON c.id = d.counter_id \
         WHERE d.status = 'RESERVED' AND d.expires_at <= ? ORDER BY d.expires_at LIMIT ?",
    )
    .bind(now_ms)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(|r| {
        (
            r.get(0),
            CounterKey {
                project_id: r.get(1),
                corr_type_id: r.get(2),
                originator_id: r.get(3),
                recipient_id: r.get(4),
                sub_type_id: r.get(5),
                rfa_type_id: r.get(6),
                discipline_id: r.get(7),
                period: r.get(8),
            },
        )
    })
    .collect())
}

/// Per correspondence type code, the highest `last_number / max_number` (0..1) over the counters of these
/// periods. The ratio is computed in millionths as an integer, so the same code reads it on SQLite and MariaDB.
pub async fn max_utilization_by_type(db: &Db, periods: &[String; 3]) -> Result<Vec<(String, f64)>, sqlx::Error> {
    let div = match db.dialect {
        Dialect::Sqlite => "/",
        Dialect::MySql => "DIV",
    };
    let sql = format!(
        "SELECT t.code, MAX((c.last_number * 1000000) {div} c.max_number) \
         FROM counters c JOIN correspondence_types t ON t.id = c.corr_type_id \
         WHERE c.period IN (?, ?, ?) AND c.max_number > 0 \
         GROUP BY t.code"
    );
    let rows = sqlx::query(&sql).bind(&periods[0]).bind(&periods[1]).bind(&periods[2]).fetch_all(&db.pool).await?;
    rows.iter()
        .map(|row| Ok((row.try_get::<String, _>(0)?, row.try_get::<i64, _>(1)? as f64 / 1_000_000.0)))
        .collect()
}
