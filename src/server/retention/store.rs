//! The retention's SQL: the rows that have aged out, counted or deleted a chunk at a time, and the claim of a
//! scheduled job's run (`job_runs`).

use crate::server::db::{Db, Dialect};
use crate::server::error::AppError;

/// Most rows one DELETE removes: a large backlog goes in many short statements, so no statement holds its locks
/// for long and the service's own writes (on SQLite, one writer) get their turn between them.
pub const CHUNK: u64 = 5_000;

/// A kind of row that ages out: its table, its key, and the condition that selects the aged rows (one bind: the
/// cutoff, epoch ms).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Aged {
    pub(crate) table: &'static str,
    pub(crate) key: &'static str,
    pub(crate) condition: &'static str,
}

pub(crate) const LOGIN_ATTEMPTS: Aged = Aged { table: "login_attempts", key: "id", condition: "created_at < ?" };

/// Only resolved errors age out; an unresolved one stays however old it is.
pub(crate) const RESOLVED_ERRORS: Aged = Aged { table: "error_log", key: "id", condition: "resolved_at IS NOT NULL AND resolved_at < ?" };

/// Idempotency keys (docs/rules/api.md#idempotency-keys): kept for the 24 h a retry may come in. SQLite's table has a composite primary key;
/// its rowid names a row.
pub(crate) const IDEMPOTENCY_KEYS: Aged = Aged { table: "idempotency_keys", key: "rowid", condition: "created_at < ?" };

/// Notifications delivered (docs/operations/README.md#retention: after 30 days); pending and failed ones stay.
pub(crate) const DELIVERED_NOTIFICATIONS: Aged =
    Aged { table: "notification_deliveries", key: "id", condition: "state = 'DELIVERED' AND delivered_at IS NOT NULL AND delivered_at < ?" };

/// Outbox events fanned out, old, and with no delivery left (taken after [`DELIVERED_NOTIFICATIONS`]).
pub(crate) const NOTIFICATION_EVENTS: Aged = Aged {
    table: "notification_outbox",
    key: "id",
    condition: "fanned_out = 1 AND created_at < ? \
        AND NOT EXISTS (SELECT 1 FROM notification_deliveries nd WHERE nd.outbox_id = notification_outbox.id)",
};

/// The sessions' table, as tower-sessions' sqlx stores create it (`run::app`): SQLite's `tower_sessions` keeps the
/// expiry as RFC 3339 text, MariaDB's `session` (in the service's database) as a TIMESTAMP. The layouts are the
/// stores', not ours, hence the branch here rather than in `Dialect`.
pub(crate) fn expired_sessions(dialect: Dialect) -> Aged {
    match dialect {
        Dialect::Sqlite => Aged { table: "tower_sessions", key: "id", condition: "julianday(expiry_date) < julianday(? / 1000.0, 'unixepoch')" },
        Dialect::MySql => Aged { table: "session", key: "id", condition: "expiry_date < FROM_UNIXTIME(? / 1000)" },
    }
}

/// Whether `table` exists: the sessions' table is created by the server's first start, not by our migrations, and
/// `docnum prune` may run on a database no server has opened yet.
pub(crate) async fn table_exists(db: &Db, table: &str) -> Result<bool, AppError> {
    let sql = match db.dialect {
        Dialect::Sqlite => "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
        Dialect::MySql => "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
    };
    let found: i64 = sqlx::query_scalar(sql).bind(table).fetch_one(&db.pool).await?;
    Ok(found > 0)
}

/// How many rows of `aged` are older than `before_ms`.
pub(crate) async fn count(db: &Db, aged: &Aged, before_ms: i64) -> Result<u64, AppError> {
    let sql = format!("SELECT COUNT(*) FROM {} WHERE {}", aged.table, aged.condition);
    let n: i64 = sqlx::query_scalar(&sql).bind(before_ms).fetch_one(&db.pool).await?;
    Ok(n.max(0) as u64)
}

/// Deletes at most [`CHUNK`] rows of `aged` older than `before_ms`, in a statement of its own; how many went.
/// MariaDB has `DELETE … LIMIT`; SQLite (built without it) deletes the keys a limited sub-select names.
pub(crate) async fn delete_chunk(db: &Db, aged: &Aged, before_ms: i64) -> Result<u64, AppError> {
    let Aged { table, key, condition } = aged;
    let sql = match db.dialect {
        Dialect::Sqlite => format!("DELETE FROM {table} WHERE {key} IN (SELECT {key} FROM {table} WHERE {condition} LIMIT {CHUNK})"),
        Dialect::MySql => format!("DELETE FROM {table} WHERE {condition} LIMIT {CHUNK}"),
    };
    Ok(sqlx::query(&sql).bind(before_ms).execute(&db.writer).await?.rows_affected())
}

/// Claims the run of `job` due at `now_ms` for `instance`, moving its next run to `next_run_at_ms`: true when this
/// UPDATE changed the row (this instance runs the job), false when the job was not due or another instance's claim
/// came first (its UPDATE moved `next_run_at` past now, so this one matches nothing).
pub(crate) async fn claim(db: &Db, job: &str, instance: &str, now_ms: i64, next_run_at_ms: i64) -> Result<bool, AppError> {
    let claimed = sqlx::query("UPDATE job_runs SET next_run_at = ?, claimed_by = ?, claimed_at = ? WHERE name = ? AND next_run_at <= ?")
        .bind(next_run_at_ms)
        .bind(instance)
        .bind(now_ms)
        .bind(job)
        .bind(now_ms)
        .execute(&db.writer)
        .await?;
    Ok(claimed.rows_affected() == 1)
}
