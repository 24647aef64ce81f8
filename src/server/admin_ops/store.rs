//! SQL of the administrative operations: counters and numbers by id or text, reset requests, and the
//! read-only views of a counter's numbers. Writes of counters and numbers are in `numbering::counter_tx`.

use sqlx::any::AnyRow;
use sqlx::{Any, Executor};

use super::{AuditView, NumberView, ReleasedView, ResetRow};
use crate::contract::{CorrespondenceTypeId, CounterId, NumberStatus, ProjectId, ResetRequestId, UserId, WorkflowInstanceId};
use crate::server::audit;
use crate::server::db::{ms_to_datetime, Conditions, Db, Tx};
pub(crate) use crate::server::error::lost_race_as_conflict as sql;
use crate::server::error::AppError;
use crate::server::numbering::counter_tx::store::{status_of, CounterRecord, StoredRecord, COUNTER_COLUMNS, STORED_COLUMNS};
pub(crate) use crate::server::numbering::counter_tx::{Counter, StoredNumber};
use crate::server::workflow::Instance;

pub(crate) async fn counter(db: &Db, id: CounterId) -> Result<Option<Counter>, AppError> {
    let sql_text = format!("SELECT {COUNTER_COLUMNS} FROM counters WHERE id = ?");
    Ok(sqlx::query_as::<_, CounterRecord>(&sql_text).bind(id).fetch_optional(&db.pool).await?.map(Counter::from))
}

/// Counters, optionally of one project / type / A.D. year (yearly and monthly periods of that year).
/// Counters by project, type and year; `scope` (a project admin's projects) keeps them to those projects.
pub(crate) async fn counters(
    db: &Db,
    project_id: Option<ProjectId>,
    scope: Option<&[ProjectId]>,
    correspondence_type_id: Option<CorrespondenceTypeId>,
    year: Option<i32>,
    limit: i64,
) -> Result<Vec<Counter>, AppError> {
    let mut filter = Conditions::default();
    filter.and_if("project_id = ?", project_id).and_if("correspondence_type_id = ?", correspondence_type_id);
    if let Some(projects) = scope {
        filter.and_in("project_id IN ({})", projects);
    }
    if let Some(y) = year {
        // the fiscal year that ends in it too
        filter.and(
            "(period = ? OR period LIKE ? OR period = ?)",
            [format!("YEAR_{y}").into(), format!("MONTH_{y}_%").into(), format!("FY_{}", y + 543).into()],
        );
    }
    let sql_text = format!("SELECT {COUNTER_COLUMNS} FROM counters{} ORDER BY project_id, correspondence_type_id, period, id LIMIT ?", filter.sql());
    let rows = typed::<CounterRecord>(filter.bind(sqlx::query(&sql_text)).bind(limit).fetch_all(&db.pool).await?)?;
    Ok(rows.into_iter().map(Counter::from).collect())
}

/// Rows of a filtered query (`Conditions` binds plain queries), read by column name.
fn typed<O: for<'r> sqlx::FromRow<'r, AnyRow>>(rows: Vec<AnyRow>) -> Result<Vec<O>, sqlx::Error> {
    rows.iter().map(O::from_row).collect()
}

/// The highest sequence of the counter among numbers in one of `statuses`.
pub(crate) async fn highest_sequence(tx: &mut Tx<'_>, counter_id: CounterId, statuses: &[NumberStatus]) -> Result<i64, AppError> {
    let sql_text = format!(
        "SELECT COALESCE(MAX(sequence), 0) FROM document_numbers WHERE counter_id = ? AND status IN ({})",
        vec!["?"; statuses.len()].join(", ")
    );
    let mut q = sqlx::query_scalar::<_, i64>(&sql_text).bind(counter_id);
    for s in statuses {
        q = q.bind(s.as_str());
    }
    q.fetch_one(&mut **tx).await.map_err(sql)
}

pub(crate) async fn number_by_text<'e>(
    e: impl Executor<'e, Database = Any>,
    project_id: ProjectId,
    correspondence_type_id: CorrespondenceTypeId,
    number: &str,
) -> Result<Option<StoredNumber>, AppError> {
    let sql_text = format!("SELECT {STORED_COLUMNS} FROM document_numbers WHERE project_id = ? AND correspondence_type_id = ? AND number = ?");
    let found = sqlx::query_as::<_, StoredRecord>(&sql_text)
        .bind(project_id)
        .bind(correspondence_type_id)
        .bind(number)
        .fetch_optional(e)
        .await
        .map_err(sql)?;
    found.map(StoredNumber::try_from).transpose().map_err(sql)
}

/// The revision labels issued for one sequence of a counter.
pub(crate) async fn revisions(tx: &mut Tx<'_>, counter_id: CounterId, sequence: i64) -> Result<Vec<String>, AppError> {
    sqlx::query_scalar::<_, String>("SELECT revision FROM document_numbers WHERE counter_id = ? AND sequence = ?")
        .bind(counter_id)
        .bind(sequence)
        .fetch_all(&mut **tx)
        .await
        .map_err(sql)
}
// ---- reset requests ----

/// The public id of a PENDING reset request of the counter, if one exists.
pub(crate) async fn pending_reset(tx: &mut Tx<'_>, counter_id: CounterId, workflow_code: &str) -> Result<Option<String>, AppError> {
    sqlx::query_scalar::<_, String>(
        "SELECT w.public_id FROM counter_reset_requests r JOIN workflow_instances w ON w.id = r.instance_id \
         WHERE r.counter_id = ? AND w.workflow_code = ? AND w.state = 'PENDING'",
    )
    .bind(counter_id)
    .bind(workflow_code)
    .fetch_optional(&mut **tx)
    .await
    .map_err(sql)
}

#[allow(clippy::too_many_arguments)]
pub(crate) async fn insert_reset_request(
    tx: &mut Tx<'_>,
    instance_id: WorkflowInstanceId,
    counter_id: CounterId,
    previous_value: i64,
    new_value: i64,
    reason: &str,
    requested_by: UserId,
    now_ms: i64,
) -> Result<ResetRequestId, AppError> {
    sqlx::query_scalar::<_, ResetRequestId>(
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
    .map_err(sql)
}

const RESET_SELECT: &str = "SELECT r.id, r.counter_id, r.previous_value, r.new_value, r.reason, COALESCE(u.username, '') AS requested_by, \
    r.requested_at, w.id AS instance_id, w.public_id, w.workflow_code, w.state, w.version, w.created_by, w.updated_at \
    FROM counter_reset_requests r JOIN workflow_instances w ON w.id = r.instance_id LEFT JOIN users u ON u.id = r.requested_by";

#[derive(sqlx::FromRow)]
struct ResetRecord {
    id: ResetRequestId,
    counter_id: CounterId,
    previous_value: i64,
    new_value: i64,
    reason: String,
    requested_by: String,
    requested_at: i64,
    instance_id: WorkflowInstanceId,
    public_id: String,
    workflow_code: String,
    state: String,
    version: i64,
    created_by: Option<UserId>,
    updated_at: i64,
}

impl From<ResetRecord> for ResetRow {
    fn from(r: ResetRecord) -> ResetRow {
        ResetRow {
            id: r.id,
            counter_id: r.counter_id,
            previous_value: r.previous_value,
            new_value: r.new_value,
            reason: r.reason,
            requested_by: r.requested_by,
            requested_at: r.requested_at,
            instance: Instance {
                id: r.instance_id,
                public_id: r.public_id,
                workflow_code: r.workflow_code,
                state: r.state,
                version: r.version,
                created_by: r.created_by,
                updated_at: r.updated_at,
            },
        }
    }
}

pub(crate) async fn reset_by_instance(tx: &mut Tx<'_>, instance_id: WorkflowInstanceId) -> Result<Option<ResetRow>, AppError> {
    let sql_text = format!("{RESET_SELECT} WHERE r.instance_id = ?");
    Ok(sqlx::query_as::<_, ResetRecord>(&sql_text).bind(instance_id).fetch_optional(&mut **tx).await.map_err(sql)?.map(ResetRow::from))
}

/// Reset requests, newest first, filtered by instance public id, state and counter.
pub(crate) async fn reset_requests(
    db: &Db,
    public_id: Option<&str>,
    state: Option<&str>,
    counter_id: Option<CounterId>,
    limit: i64,
) -> Result<Vec<ResetRow>, AppError> {
    let mut filter = Conditions::default();
    filter.and_if("w.public_id = ?", public_id).and_if("w.state = ?", state).and_if("r.counter_id = ?", counter_id);
    let sql_text = format!("{RESET_SELECT}{} ORDER BY r.id DESC LIMIT ?", filter.sql());
    let rows = typed::<ResetRecord>(filter.bind(sqlx::query(&sql_text)).bind(limit).fetch_all(&db.pool).await?)?;
    Ok(rows.into_iter().map(ResetRow::from).collect())
}

// ---- a counter's numbers, for the counter browser ----

#[derive(sqlx::FromRow)]
struct NumberViewRow {
    sequence: i64,
    revision: String,
    number: String,
    status: String,
    document_id: Option<String>,
    created_at: i64,
    confirmed_at: Option<i64>,
    cancelled_at: Option<i64>,
    cancel_reason: Option<String>,
}

pub(crate) async fn numbers_between(db: &Db, counter_id: CounterId, from: i64, to: i64) -> Result<Vec<NumberView>, AppError> {
    Ok(sqlx::query_as::<_, NumberViewRow>(
        "SELECT sequence, revision, number, status, document_id, created_at, confirmed_at, cancelled_at, cancel_reason FROM document_numbers \
         WHERE counter_id = ? AND sequence BETWEEN ? AND ? ORDER BY sequence, revision",
    )
    .bind(counter_id)
    .bind(from)
    .bind(to)
    .fetch_all(&db.pool)
    .await?
    .into_iter()
    .map(|r| {
        Ok(NumberView {
            sequence: r.sequence,
            revision: r.revision,
            document_number: r.number,
            status: status_of(&r.status)?,
            document_id: r.document_id,
            created_at: ms_to_datetime(r.created_at),
            confirmed_at: r.confirmed_at.map(ms_to_datetime),
            cancelled_at: r.cancelled_at.map(ms_to_datetime),
            cancel_reason: r.cancel_reason,
            available_actions: Vec::new(),
        })
    })
    .collect::<Result<_, sqlx::Error>>()?)
}

#[derive(sqlx::FromRow)]
struct ReleasedRow {
    sequence: i64,
    revision: String,
    number: String,
    status: String,
    reset_request_id: ResetRequestId,
    released_at: i64,
}

pub(crate) async fn released_between(db: &Db, counter_id: CounterId, from: i64, to: i64) -> Result<Vec<ReleasedView>, AppError> {
    Ok(sqlx::query_as::<_, ReleasedRow>(
        "SELECT sequence, revision, number, status, reset_request_id, released_at FROM released_numbers \
         WHERE counter_id = ? AND sequence BETWEEN ? AND ? ORDER BY id",
    )
    .bind(counter_id)
    .bind(from)
    .bind(to)
    .fetch_all(&db.pool)
    .await?
    .into_iter()
    .map(|r| {
        Ok(ReleasedView {
            sequence: r.sequence,
            revision: r.revision,
            document_number: r.number,
            status_when_released: status_of(&r.status)?,
            reset_request_id: r.reset_request_id,
            released_at: ms_to_datetime(r.released_at),
        })
    })
    .collect::<Result<_, sqlx::Error>>()?)
}

#[derive(sqlx::FromRow)]
struct GapAuditRow {
    sequence: i64,
    operation: String,
    status: String,
    document_number: Option<String>,
    username: Option<String>,
    metadata: Option<String>,
    created_at: i64,
}

/// The audit rows of the counter that name one of `sequences`, oldest first, as (sequence, row).
pub(crate) async fn audit_for_sequences(db: &Db, counter_id: CounterId, sequences: &[i64]) -> Result<Vec<(i64, AuditView)>, AppError> {
    let mut out = Vec::new();
    for chunk in sequences.chunks(500) {
        let sql_text = format!(
            "SELECT sequence, operation, status, document_number, username, metadata, created_at FROM audit_log \
             WHERE chain_key = ? AND counter_id = ? AND sequence IN ({}) ORDER BY chain_seq",
            vec!["?"; chunk.len()].join(", ")
        );
        // the counter's own chain holds its rows (the chain's unique key finds them; `counter_id` has no index)
        let mut q = sqlx::query_as::<_, GapAuditRow>(&sql_text).bind(audit::counter_chain(counter_id)).bind(counter_id);
        for s in chunk {
            q = q.bind(*s);
        }
        for r in q.fetch_all(&db.pool).await? {
            out.push((
                r.sequence,
                AuditView {
                    operation: r.operation,
                    status: r.status,
                    document_number: r.document_number,
                    username: r.username,
                    metadata: r.metadata.and_then(|m| serde_json::from_str(&m).ok()),
                    at: ms_to_datetime(r.created_at),
                },
            ));
        }
    }
    Ok(out)
}

// ---- the statistics of `/charts` (`stats.rs`) ----

/// The SQL of a number's day, `day_ms` long each, in a window that began at the first `?` (epoch ms, bound twice): its
/// index from 0, or -1 before the window (`stats::day_index`). Cast so that both databases hand over a 64-bit integer.
fn day_bucket(db: &Db, day_ms: i64) -> String {
    format!("CAST(CASE WHEN created_at < ? THEN -1 ELSE (created_at - ?) {} {day_ms} END AS SIGNED)", db.dialect.int_div())
}

/// Numbers created in `[start, end)` per correspondence type and day (`day_ms` long) of the window: (type id, day index,
/// count). One
/// grouped scan of the `created_at` index (`idx_document_numbers_created`, which also holds the project and type).
pub async fn issued_per_day(
    db: &Db,
    start: i64,
    end: i64,
    day_ms: i64,
    project_id: Option<ProjectId>,
    scope: Option<&[ProjectId]>,
) -> Result<Vec<(CorrespondenceTypeId, i64, i64)>, AppError> {
    let mut filter = Conditions::default();
    filter.and("created_at >= ? AND created_at < ?", [start.into(), end.into()]).and_if("project_id = ?", project_id);
    if let Some(projects) = scope {
        filter.and_in("project_id IN ({})", projects);
    }
    let sql_text = format!(
        "SELECT correspondence_type_id, {} AS day_index, COUNT(*) FROM document_numbers{} GROUP BY correspondence_type_id, day_index",
        day_bucket(db, day_ms),
        filter.sql()
    );
    let q = sqlx::query_as::<_, (CorrespondenceTypeId, i64, i64)>(&sql_text).bind(start).bind(start);
    Ok(filter.bind(q).fetch_all(&db.pool).await?)
}

/// The highest sequence each counter issued per day before `end`: (counter id, day index or -1 before `start`,
/// highest). Read through the `(counter_id, sequence, revision)` key.
pub async fn highest_sequence_per_day(
    db: &Db,
    counter_ids: &[CounterId],
    start: i64,
    end: i64,
    day_ms: i64,
) -> Result<Vec<(CounterId, i64, i64)>, AppError> {
    if counter_ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut filter = Conditions::default();
    filter.and_in("counter_id IN ({})", counter_ids).and("created_at < ?", [end.into()]);
    let sql_text = format!(
        "SELECT counter_id, {} AS day_index, MAX(sequence) FROM document_numbers{} GROUP BY counter_id, day_index",
        day_bucket(db, day_ms),
        filter.sql()
    );
    let q = sqlx::query_as::<_, (CounterId, i64, i64)>(&sql_text).bind(start).bind(start);
    Ok(filter.bind(q).fetch_all(&db.pool).await?)
}

/// The counters of these periods closest to their maximum (last number ÷ maximum, in millionths so that both
/// databases order alike), of one project and the caller's scope.
pub async fn fullest_counters(
    db: &Db,
    periods: &[String; 4],
    project_id: Option<ProjectId>,
    scope: Option<&[ProjectId]>,
    limit: i64,
) -> Result<Vec<Counter>, AppError> {
    let mut filter = Conditions::default();
    // a contract's counter never resets: always in use
    filter
        .and("(period IN (?, ?, ?, ?) OR period LIKE 'CONTRACT_%')", periods.iter().map(|p| p.clone().into()))
        .and("max_number > 0", [])
        .and_if("project_id = ?", project_id);
    if let Some(projects) = scope {
        filter.and_in("project_id IN ({})", projects);
    }
    let sql_text = format!(
        "SELECT {COUNTER_COLUMNS} FROM counters{} ORDER BY (last_number * 1000000) {} max_number DESC, id LIMIT ?",
        filter.sql(),
        db.dialect.int_div()
    );
    let rows = typed::<CounterRecord>(filter.bind(sqlx::query(&sql_text)).bind(limit).fetch_all(&db.pool).await?)?;
    Ok(rows.into_iter().map(Counter::from).collect())
}
