//! SQL of the administrative operations: counters by id (locked like the batch locks them), numbers by text,
//! releases, reset requests, and the read-only views of a counter's numbers.

use sqlx::{Any, Executor, Row};

use super::{AuditView, NumberView, ReleasedView, ResetRow};
use crate::numbering::CounterKey;
use crate::server::db::{ms_to_datetime, Conditions, Db, Dialect, Tx};
use crate::server::error::AppError;
use crate::server::numbering::store::CounterRow;
pub use crate::server::error::lost_race_as_conflict as sql;
use crate::server::workflow::Instance;

#[derive(Clone, Debug)]
pub struct Counter {
    pub row: CounterRow,
    pub key: CounterKey,
    pub max_number: i64,
    pub updated_at: i64,
}

const COUNTER_COLUMNS: &str = "id, project_id, corr_type_id, originator_id, recipient_id, sub_type_id, rfa_type_id, discipline_id, \
    period, last_number, max_number, version, updated_at";

fn counter_row(r: &sqlx::any::AnyRow) -> Counter {
    Counter {
        row: CounterRow { id: r.get(0), last_number: r.get(9), version: r.get(11) },
        key: CounterKey {
            project_id: r.get(1),
            corr_type_id: r.get(2),
            originator_id: r.get(3),
            recipient_id: r.get(4),
            sub_type_id: r.get(5),
            rfa_type_id: r.get(6),
            discipline_id: r.get(7),
            period: r.get(8),
        },
        max_number: r.get(10),
        updated_at: r.get(12),
    }
}

/// The counter row, locked as the batch locks it (`FOR UPDATE` on MariaDB; SQLite's write transaction is
/// already exclusive), so these operations and the per-counter batches take turns on the row.
pub async fn lock_counter(tx: &mut Tx<'_>, dialect: Dialect, id: i64) -> Result<Option<Counter>, AppError> {
    let lock = if dialect == Dialect::MySql { " FOR UPDATE" } else { "" };
    let sql_text = format!("SELECT {COUNTER_COLUMNS} FROM counters WHERE id = ?{lock}");
    Ok(sqlx::query(&sql_text).bind(id).fetch_optional(&mut **tx).await.map_err(sql)?.as_ref().map(counter_row))
}

pub async fn counter(db: &Db, id: i64) -> Result<Option<Counter>, AppError> {
    let sql_text = format!("SELECT {COUNTER_COLUMNS} FROM counters WHERE id = ?");
    Ok(sqlx::query(&sql_text).bind(id).fetch_optional(&db.pool).await?.as_ref().map(counter_row))
}

/// Counters, optionally of one project / type / A.D. year (yearly and monthly periods of that year).
pub async fn counters(db: &Db, project_id: Option<i64>, corr_type_id: Option<i64>, year: Option<i32>, limit: i64) -> Result<Vec<Counter>, AppError> {
    let mut filter = Conditions::default();
    filter.and_if("project_id = ?", project_id).and_if("corr_type_id = ?", corr_type_id);
    if let Some(y) = year {
        filter.and("(period = ? OR period LIKE ?)", [format!("YEAR_{y}").into(), format!("MONTH_{y}_%").into()]);
    }
    let sql_text = format!("SELECT {COUNTER_COLUMNS} FROM counters{} ORDER BY project_id, corr_type_id, period, id LIMIT ?", filter.sql());
    Ok(filter.bind(sqlx::query(&sql_text)).bind(limit).fetch_all(&db.pool).await?.iter().map(counter_row).collect())
}

/// The highest sequence of the counter among numbers in one of `statuses`.
pub async fn highest_sequence(tx: &mut Tx<'_>, counter_id: i64, statuses: &[&str]) -> Result<i64, AppError> {
    let sql_text = format!(
        "SELECT COALESCE(MAX(sequence), 0) FROM document_numbers WHERE counter_id = ? AND status IN ({})",
        vec!["?"; statuses.len()].join(", ")
    );
    let mut q = sqlx::query(&sql_text).bind(counter_id);
    for s in statuses {
        q = q.bind(*s);
    }
    Ok(q.fetch_one(&mut **tx).await.map_err(sql)?.get(0))
}

/// A number as stored, for revise / void.
#[derive(Clone, Debug)]
pub struct StoredNumber {
    pub id: i64,
    pub counter_id: i64,
    pub sequence: i64,
    pub revision: String,
    pub number: String,
    pub template: String,
    pub status: String,
    pub token: Option<String>,
    pub document_id: Option<String>,
}

const NUMBER_COLUMNS: &str = "id, counter_id, sequence, revision, number, template, status, token, document_id";

fn stored_number(r: &sqlx::any::AnyRow) -> StoredNumber {
    StoredNumber {
        id: r.get(0),
        counter_id: r.get(1),
        sequence: r.get(2),
        revision: r.get(3),
        number: r.get(4),
        template: r.get(5),
        status: r.get(6),
        token: r.get(7),
        document_id: r.get(8),
    }
}

pub async fn number_by_text<'e>(e: impl Executor<'e, Database = Any>, project_id: i64, corr_type_id: i64, number: &str) -> Result<Option<StoredNumber>, AppError> {
    let sql_text = format!("SELECT {NUMBER_COLUMNS} FROM document_numbers WHERE project_id = ? AND corr_type_id = ? AND number = ?");
    Ok(sqlx::query(&sql_text).bind(project_id).bind(corr_type_id).bind(number).fetch_optional(e).await.map_err(sql)?.as_ref().map(stored_number))
}

/// The revision labels issued for one sequence of a counter.
pub async fn revisions(tx: &mut Tx<'_>, counter_id: i64, sequence: i64) -> Result<Vec<String>, AppError> {
    Ok(sqlx::query("SELECT revision FROM document_numbers WHERE counter_id = ? AND sequence = ?")
        .bind(counter_id)
        .bind(sequence)
        .fetch_all(&mut **tx)
        .await
        .map_err(sql)?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

/// Moves the numbers of a counter above `above` (none of them confirmed: the caller checked) out of
/// `document_numbers` into `released_numbers`: copied first, then deleted, in the caller's transaction.
pub async fn release_above(tx: &mut Tx<'_>, counter_id: i64, above: i64, reset_request_id: i64, now_ms: i64) -> Result<Vec<StoredNumber>, AppError> {
    let sql_text = format!("SELECT {NUMBER_COLUMNS} FROM document_numbers WHERE counter_id = ? AND sequence > ? ORDER BY sequence, revision");
    let released: Vec<StoredNumber> =
        sqlx::query(&sql_text).bind(counter_id).bind(above).fetch_all(&mut **tx).await.map_err(sql)?.iter().map(stored_number).collect();
    if released.is_empty() {
        return Ok(released);
    }
    sqlx::query(
        "INSERT INTO released_numbers (original_id, counter_id, project_id, corr_type_id, sequence, revision, number, template, status, token, \
         document_id, user_id, api_token_id, created_at, expires_at, confirmed_at, cancelled_at, cancel_reason, reset_request_id, released_at) \
         SELECT id, counter_id, project_id, corr_type_id, sequence, revision, number, template, status, token, document_id, user_id, api_token_id, \
         created_at, expires_at, confirmed_at, cancelled_at, cancel_reason, ?, ? FROM document_numbers WHERE counter_id = ? AND sequence > ?",
    )
    .bind(reset_request_id)
    .bind(now_ms)
    .bind(counter_id)
    .bind(above)
    .execute(&mut **tx)
    .await
    .map_err(sql)?;
    let deleted = sqlx::query("DELETE FROM document_numbers WHERE counter_id = ? AND sequence > ?")
        .bind(counter_id)
        .bind(above)
        .execute(&mut **tx)
        .await
        .map_err(sql)?;
    if deleted.rows_affected() != released.len() as u64 {
        return Err(AppError::VersionConflict(format!("counter {counter_id}")));
    }
    Ok(released)
}

// ---- reset requests ----

/// The public id of a PENDING reset request of the counter, if one exists.
pub async fn pending_reset(tx: &mut Tx<'_>, counter_id: i64, workflow_code: &str) -> Result<Option<String>, AppError> {
    Ok(sqlx::query(
        "SELECT w.public_id FROM counter_reset_requests r JOIN workflow_instances w ON w.id = r.instance_id \
         WHERE r.counter_id = ? AND w.workflow_code = ? AND w.state = 'PENDING'",
    )
    .bind(counter_id)
    .bind(workflow_code)
    .fetch_optional(&mut **tx)
    .await
    .map_err(sql)?
    .map(|r| r.get(0)))
}

#[allow(clippy::too_many_arguments)]
pub async fn insert_reset_request(
    tx: &mut Tx<'_>,
    instance_id: i64,
    counter_id: i64,
    previous_value: i64,
    new_value: i64,
    reason: &str,
    requested_by: i64,
    now_ms: i64,
) -> Result<i64, AppError> {
    Ok(sqlx::query(
        "INSERT INTO counter_reset_requests (instance_id, counter_id, previous_value, new_value, reason, requested_by, requested_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(instance_id)
    .bind(counter_id)
    .bind(previous_value)
    .bind(new_value)
    .bind(reason)
    .bind(requested_by)
    .bind(now_ms)
    .fetch_one(&mut **tx)
    .await
    .map_err(sql)?
    .get(0))
}

const RESET_SELECT: &str = "SELECT r.id, r.counter_id, r.previous_value, r.new_value, r.reason, COALESCE(u.username, ''), r.requested_at, \
    w.id, w.public_id, w.workflow_code, w.state, w.version, w.created_by, w.created_at, w.updated_at \
    FROM counter_reset_requests r JOIN workflow_instances w ON w.id = r.instance_id LEFT JOIN users u ON u.id = r.requested_by";

fn reset_row(r: &sqlx::any::AnyRow) -> ResetRow {
    ResetRow {
        id: r.get(0),
        counter_id: r.get(1),
        previous_value: r.get(2),
        new_value: r.get(3),
        reason: r.get(4),
        requested_by: r.get(5),
        requested_at: r.get(6),
        instance: Instance {
            id: r.get(7),
            public_id: r.get(8),
            workflow_code: r.get(9),
            state: r.get(10),
            version: r.get(11),
            created_by: r.get(12),
            created_at: r.get(13),
            updated_at: r.get(14),
        },
    }
}

pub async fn reset_by_instance(tx: &mut Tx<'_>, instance_id: i64) -> Result<Option<ResetRow>, AppError> {
    let sql_text = format!("{RESET_SELECT} WHERE r.instance_id = ?");
    Ok(sqlx::query(&sql_text).bind(instance_id).fetch_optional(&mut **tx).await.map_err(sql)?.as_ref().map(reset_row))
}

/// Reset requests, newest first, filtered by instance public id, state and counter.
pub async fn reset_requests(db: &Db, public_id: Option<&str>, state: Option<&str>, counter_id: Option<i64>, limit: i64) -> Result<Vec<ResetRow>, AppError> {
    let mut filter = Conditions::default();
    filter.and_if("w.public_id = ?", public_id).and_if("w.state = ?", state).and_if("r.counter_id = ?", counter_id);
    let sql_text = format!("{RESET_SELECT}{} ORDER BY r.id DESC LIMIT ?", filter.sql());
    Ok(filter.bind(sqlx::query(&sql_text)).bind(limit).fetch_all(&db.pool).await?.iter().map(reset_row).collect())
}

// ---- a counter's numbers, for the counter browser ----

pub async fn numbers_between(db: &Db, counter_id: i64, from: i64, to: i64) -> Result<Vec<NumberView>, AppError> {
    Ok(sqlx::query(
        "SELECT sequence, revision, number, status, document_id, created_at, confirmed_at, cancelled_at, cancel_reason FROM document_numbers \
         WHERE counter_id = ? AND sequence BETWEEN ? AND ? ORDER BY sequence, revision",
    )
    .bind(counter_id)
    .bind(from)
    .bind(to)
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(|r| NumberView {
        sequence: r.get(0),
        revision: r.get(1),
        document_number: r.get(2),
        status: r.get(3),
        document_id: r.get(4),
        created_at: ms_to_datetime(r.get(5)),
        confirmed_at: r.get::<Option<i64>, _>(6).map(ms_to_datetime),
        cancelled_at: r.get::<Option<i64>, _>(7).map(ms_to_datetime),
        cancel_reason: r.get(8),
    })
    .collect())
}

pub async fn released_between(db: &Db, counter_id: i64, from: i64, to: i64) -> Result<Vec<ReleasedView>, AppError> {
    Ok(sqlx::query(
        "SELECT sequence, revision, number, status, reset_request_id, released_at FROM released_numbers \
         WHERE counter_id = ? AND sequence BETWEEN ? AND ? ORDER BY id",
    )
    .bind(counter_id)
    .bind(from)
    .bind(to)
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(|r| ReleasedView {
        sequence: r.get(0),
        revision: r.get(1),
        document_number: r.get(2),
        status_when_released: r.get(3),
        reset_request_id: r.get(4),
        released_at: ms_to_datetime(r.get(5)),
    })
    .collect())
}

/// The audit rows of the counter that name one of `sequences`, oldest first, as (sequence, row).
pub async fn audit_for_sequences(db: &Db, counter_id: i64, sequences: &[i64]) -> Result<Vec<(i64, AuditView)>, AppError> {
    let mut out = Vec::new();
    for chunk in sequences.chunks(500) {
        let sql_text = format!(
            "SELECT sequence, operation, status, document_number, username, metadata, created_at FROM audit_log \
             WHERE counter_id = ? AND sequence IN ({}) ORDER BY id",
            vec!["?"; chunk.len()].join(", ")
        );
        let mut q = sqlx::query(&sql_text).bind(counter_id);
        for s in chunk {
            q = q.bind(*s);
        }
        for r in q.fetch_all(&db.pool).await? {
            let metadata: Option<String> = r.get(5);
            out.push((
                r.get(0),
                AuditView {
                    operation: r.get(1),
                    status: r.get(2),
                    document_number: r.get(3),
                    username: r.get(4),
                    metadata: metadata.and_then(|m| serde_json::from_str(&m).ok()),
                    at: ms_to_datetime(r.get(6)),
                },
            ));
        }
    }
    Ok(out)
}
