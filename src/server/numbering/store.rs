//! Read-only lookups of counters and issued numbers outside the batch. Everything that writes a counter or a
//! number is in `counter_tx`.

use super::counter_tx::store::{bind_key, KeyRow, KEY_WHERE};
use crate::contract::{ApiTokenId, CorrespondenceTypeId, ProjectId, UserId};
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

// ---- blocks (the blocks page) ----

/// Whose blocks a listing holds: every block, or the caller's own and those of the projects it administers.
pub(crate) enum BlockScope<'a> {
    All,
    Of { user_id: Option<UserId>, api_token_id: Option<ApiTokenId>, projects: &'a [ProjectId] },
}

#[derive(sqlx::FromRow)]
pub(crate) struct BlockRow {
    pub(crate) block_id: String,
    pub(crate) project_id: ProjectId,
    pub(crate) correspondence_type_id: CorrespondenceTypeId,
    pub(crate) holder: Option<String>,
    pub(crate) first_number: String,
    pub(crate) last_number: String,
    pub(crate) count: i64,
    pub(crate) held: i64,
    pub(crate) confirmed: i64,
    pub(crate) cancelled: i64,
    pub(crate) expired: i64,
    pub(crate) hold_until: Option<i64>,
    pub(crate) created_at: i64,
    pub(crate) user_id: Option<UserId>,
    pub(crate) api_token_id: Option<ApiTokenId>,
}

/// The blocks in `scope` (one block when `block_id` is given), newest first, at most `limit`. Each sequence counts
/// once (its first revision); a number "expired" is one cancelled with `expired_reason`.
pub(crate) async fn blocks(
    db: &Db,
    scope: &BlockScope<'_>,
    block_id: Option<&str>,
    expired_reason: &str,
    limit: i64,
) -> Result<Vec<BlockRow>, sqlx::Error> {
    let mut filter = String::new();
    if block_id.is_some() {
        filter.push_str(" AND block_id = ?");
    }
    if let BlockScope::Of { projects, .. } = scope {
        let in_projects = if projects.is_empty() { String::new() } else { format!(" OR project_id IN ({})", vec!["?"; projects.len()].join(", ")) };
        filter.push_str(&format!(" AND (user_id = ? OR api_token_id = ?{in_projects})"));
    }
    let sql = format!(
        "SELECT block_id, MIN(project_id) AS project_id, MIN(correspondence_type_id) AS correspondence_type_id, MIN(block_holder) AS holder, \
         MIN(number) AS first_number, MAX(number) AS last_number, COUNT(*) AS count, \
         COUNT(CASE WHEN status = 'RESERVED' THEN 1 END) AS held, \
         COUNT(CASE WHEN status = 'CONFIRMED' THEN 1 END) AS confirmed, \
         COUNT(CASE WHEN status = 'VOID' OR (status = 'CANCELLED' AND COALESCE(cancel_reason, '') <> ?) THEN 1 END) AS cancelled, \
         COUNT(CASE WHEN status = 'CANCELLED' AND cancel_reason = ? THEN 1 END) AS expired, \
         MAX(expires_at) AS hold_until, MIN(created_at) AS created_at, MIN(user_id) AS user_id, MIN(api_token_id) AS api_token_id \
         FROM document_numbers WHERE block_id IS NOT NULL AND revision = 'A'{filter} \
         GROUP BY block_id ORDER BY MIN(created_at) DESC, block_id LIMIT ?"
    );
    let mut q = sqlx::query_as::<_, BlockRow>(&sql).bind(expired_reason).bind(expired_reason);
    if let Some(id) = block_id {
        q = q.bind(id);
    }
    if let BlockScope::Of { user_id, api_token_id, projects } = scope {
        // -1: no such row, so a caller without a user (or without a token) matches nothing by it
        q = q.bind(user_id.unwrap_or(UserId(-1))).bind(api_token_id.unwrap_or(ApiTokenId(-1)));
        for p in projects.iter() {
            q = q.bind(*p);
        }
    }
    q.bind(limit).fetch_all(&db.pool).await
}

#[derive(sqlx::FromRow)]
pub(crate) struct BlockNumberRow {
    pub(crate) sequence: i64,
    pub(crate) number: String,
    pub(crate) status: String,
    pub(crate) document_id: Option<String>,
    pub(crate) token: Option<String>,
    pub(crate) cancel_reason: Option<String>,
}

/// A block's numbers (first revisions), in sequence order.
pub(crate) async fn block_numbers(db: &Db, block_id: &str) -> Result<Vec<BlockNumberRow>, sqlx::Error> {
    sqlx::query_as::<_, BlockNumberRow>(
        "SELECT sequence, number, status, document_id, token, cancel_reason FROM document_numbers \
         WHERE block_id = ? AND revision = 'A' ORDER BY sequence",
    )
    .bind(block_id)
    .fetch_all(&db.pool)
    .await
}

/// The names of users and API tokens, for "reserved by".
pub(crate) async fn reserver_name(db: &Db, user_id: Option<UserId>, api_token_id: Option<ApiTokenId>) -> Result<String, sqlx::Error> {
    if let Some(id) = user_id {
        let name: Option<String> = sqlx::query_scalar("SELECT username FROM users WHERE id = ?").bind(id).fetch_optional(&db.pool).await?;
        return Ok(name.unwrap_or_default());
    }
    if let Some(id) = api_token_id {
        let name: Option<String> = sqlx::query_scalar("SELECT name FROM api_tokens WHERE id = ?").bind(id).fetch_optional(&db.pool).await?;
        return Ok(name.map(|n| format!("token:{n}")).unwrap_or_default());
    }
    Ok(String::new())
}
