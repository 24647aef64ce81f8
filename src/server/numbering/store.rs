//! Read-only lookups of counters and issued numbers outside the batch. Everything that writes a counter or a
//! number is in `counter_tx`.

use super::counter_tx::store::{bind_key, KeyRow, KEY_WHERE};
use crate::numbering::CounterKey;
use crate::server::db::Db;
use crate::server::error::AppError;

// ---- read-only lookups outside the batch ----

pub(crate) async fn last_number(db: &Db, key: &CounterKey) -> Result<i64, AppError> {
    let sql = format!("SELECT last_number FROM counters WHERE {KEY_WHERE}");
    Ok(bind_key(sqlx::query_scalar::<_, i64>(&sql), key).fetch_optional(&db.pool).await?.unwrap_or(0))
}

/// The counter a reservation token belongs to, so the request can join that counter's queue.
pub(crate) async fn counter_key_of_token(db: &Db, token: &str) -> Result<Option<CounterKey>, AppError> {
    Ok(sqlx::query_as::<_, KeyRow>(
        "SELECT c.project_id, c.correspondence_type_id, c.originator_id, c.recipient_id, c.sub_type_id, c.rfa_type_id, c.discipline_id, c.period \
         FROM document_numbers d JOIN counters c ON c.id = d.counter_id WHERE d.token = ?",
    )
    .bind(token)
    .fetch_optional(&db.pool)
    .await?
    .map(CounterKey::from))
}

#[derive(sqlx::FromRow)]
struct DueRow {
    token: String,
    #[sqlx(flatten)]
    key: KeyRow,
}

/// Reservations past their expiry, with the counter each belongs to.
pub(crate) async fn due_reservations(db: &Db, now_ms: i64, limit: i64) -> Result<Vec<(String, CounterKey)>, AppError> {
    Ok(sqlx::query_as::<_, DueRow>(
        "SELECT d.token, c.project_id, c.correspondence_type_id, c.originator_id, c.recipient_id, c.sub_type_id, c.rfa_type_id, c.discipline_id, c.period \
         FROM document_numbers d JOIN counters c ON c.id = d.counter_id \
         WHERE d.status = 'RESERVED' AND d.expires_at <= ? ORDER BY d.expires_at LIMIT ?",
    )
    .bind(now_ms)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?
    .into_iter()
    .map(|r| (r.token, r.key.into()))
    .collect())
}

#[derive(sqlx::FromRow)]
struct Utilization {
    code: String,
    millionths: i64,
}

/// Per correspondence type code, the highest `last_number / max_number` (0..1) over the counters of these
/// periods. The ratio is computed in millionths as an integer, so the same code reads it on SQLite and MariaDB.
pub(crate) async fn max_utilization_by_type(db: &Db, periods: &[String; 4]) -> Result<Vec<(String, f64)>, sqlx::Error> {
    let sql = format!(
        "SELECT t.code AS code, MAX((c.last_number * 1000000) {} c.max_number) AS millionths \
         FROM counters c JOIN correspondence_types t ON t.id = c.correspondence_type_id \
         WHERE (c.period IN (?, ?, ?, ?) OR c.period LIKE 'CONTRACT_%') AND c.max_number > 0 \
         GROUP BY t.code",
        db.dialect.int_div()
    );
    let rows =
        sqlx::query_as::<_, Utilization>(&sql).bind(&periods[0]).bind(&periods[1]).bind(&periods[2]).bind(&periods[3]).fetch_all(&db.pool).await?;
    Ok(rows.into_iter().map(|r| (r.code, r.millionths as f64 / 1_000_000.0)).collect())
}
