//! SQL of the workflow engine: the transition table, instances (state + version) and their append-only events.

use sqlx::{Any, Executor};

use super::{EventView, Instance, Transition};
use crate::contract::{UserId, WorkflowInstanceId};
use crate::server::db::{ms_to_datetime, Db, Tx};
use crate::server::error::{lost_race_as_conflict as sql, AppError};

pub(crate) async fn transitions<'e>(e: impl Executor<'e, Database = Any>, workflow_code: &str) -> Result<Vec<Transition>, AppError> {
    sqlx::query_as(
        "SELECT from_state, action, to_state, required_role, actor_rule FROM workflow_transitions WHERE workflow_code = ? \
         ORDER BY from_state, action",
    )
    .bind(workflow_code)
    .fetch_all(e)
    .await
    .map_err(sql)
}

const INSTANCE_COLUMNS: &str = "id, public_id, workflow_code, state, version, created_by, updated_at";

pub(crate) async fn instance_by_public_id<'e>(e: impl Executor<'e, Database = Any>, public_id: &str) -> Result<Option<Instance>, AppError> {
    let sql_text = format!("SELECT {INSTANCE_COLUMNS} FROM workflow_instances WHERE public_id = ?");
    sqlx::query_as(&sql_text).bind(public_id).fetch_optional(e).await.map_err(sql)
}

pub(crate) async fn insert_instance(
    tx: &mut Tx<'_>,
    public_id: &str,
    workflow_code: &str,
    state: &str,
    created_by: Option<UserId>,
    now_ms: i64,
) -> Result<WorkflowInstanceId, AppError> {
    sqlx::query_scalar(
        "INSERT INTO workflow_instances (public_id, workflow_code, state, version, created_by, created_at, updated_at) \
         VALUES (?, ?, ?, 0, ?, ?, ?) RETURNING id",
    )
    .bind(public_id)
    .bind(workflow_code)
    .bind(state)
    .bind(created_by)
    .bind(now_ms)
    .bind(now_ms)
    .fetch_one(&mut **tx)
    .await
    .map_err(sql)
}

/// Moves an instance to `to_state` if nobody moved it since it was read: false = lost the race.
pub(crate) async fn advance(tx: &mut Tx<'_>, instance: &Instance, to_state: &str, now_ms: i64) -> Result<bool, AppError> {
    let r = sqlx::query("UPDATE workflow_instances SET state = ?, version = version + 1, updated_at = ? WHERE public_id = ? AND version = ?")
        .bind(to_state)
        .bind(now_ms)
        .bind(instance.public_id.as_str())
        .bind(instance.version)
        .execute(&mut **tx)
        .await
        .map_err(sql)?;
    Ok(r.rows_affected() == 1)
}

#[allow(clippy::too_many_arguments)]
pub(crate) async fn insert_event(
    tx: &mut Tx<'_>,
    instance_id: WorkflowInstanceId,
    action: &str,
    from_state: &str,
    to_state: &str,
    actor_id: Option<UserId>,
    actor_name: &str,
    comment: Option<&str>,
    now_ms: i64,
) -> Result<(), AppError> {
    sqlx::query(
        "INSERT INTO workflow_events (instance_id, action, from_state, to_state, actor_id, actor_name, comment, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(instance_id)
    .bind(action)
    .bind(from_state)
    .bind(to_state)
    .bind(actor_id)
    .bind(actor_name)
    .bind(comment)
    .bind(now_ms)
    .execute(&mut **tx)
    .await
    .map_err(sql)?;
    Ok(())
}

/// One row of `workflow_events`, with the instance it belongs to.
#[derive(sqlx::FromRow)]
struct EventRow {
    instance_id: WorkflowInstanceId,
    action: String,
    from_state: String,
    to_state: String,
    actor_name: String,
    comment: Option<String>,
    created_at: i64,
}

/// The events of these instances, oldest first, as (instance id, event).
pub(crate) async fn events(db: &Db, instance_ids: &[WorkflowInstanceId]) -> Result<Vec<(WorkflowInstanceId, EventView)>, AppError> {
    let mut out = Vec::new();
    for chunk in instance_ids.chunks(500) {
        let sql_text = format!(
            "SELECT instance_id, action, from_state, to_state, actor_name, comment, created_at FROM workflow_events \
             WHERE instance_id IN ({}) ORDER BY id",
            vec!["?"; chunk.len()].join(", ")
        );
        let mut q = sqlx::query_as::<_, EventRow>(&sql_text);
        for id in chunk {
            q = q.bind(*id);
        }
        for r in q.fetch_all(&db.pool).await? {
            out.push((
                r.instance_id,
                EventView {
                    action: r.action,
                    from_state: r.from_state,
                    to_state: r.to_state,
                    actor: r.actor_name,
                    comment: r.comment,
                    at: ms_to_datetime(r.created_at),
                },
            ));
        }
    }
    Ok(out)
}
