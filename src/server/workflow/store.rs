//! SQL of the workflow engine: the transition table, instances (state + version) and their append-only events.

use sqlx::{Any, Executor, Row};

use super::{EventView, Instance, Transition};
use crate::server::db::{is_retryable_conflict, Db, Tx};
use crate::server::error::AppError;

/// A lost race inside a transaction (MariaDB deadlock, lock wait timeout) becomes a version conflict, which
/// the operations built on the engine retry; anything else is a database error.
pub fn sql(e: sqlx::Error) -> AppError {
    if is_retryable_conflict(&e) {
        AppError::VersionConflict("workflow transaction".into())
    } else {
        e.into()
    }
}

pub async fn transitions<'e>(e: impl Executor<'e, Database = Any>, workflow_code: &str) -> Result<Vec<Transition>, AppError> {
    Ok(sqlx::query(
        "SELECT from_state, action, to_state, required_role, actor_rule FROM workflow_transitions WHERE workflow_code = ? \
         ORDER BY from_state, action",
    )
    .bind(workflow_code)
    .fetch_all(e)
    .await
    .map_err(sql)?
    .iter()
    .map(|r| Transition { from_state: r.get(0), action: r.get(1), to_state: r.get(2), required_role: r.get(3), actor_rule: r.get(4) })
    .collect())
}

const INSTANCE_COLUMNS: &str = "id, public_id, workflow_code, state, version, created_by, created_at, updated_at";

fn instance(r: &sqlx::any::AnyRow) -> Instance {
    Instance {
        id: r.get(0),
        public_id: r.get(1),
        workflow_code: r.get(2),
        state: r.get(3),
        version: r.get(4),
        created_by: r.get(5),
        created_at: r.get(6),
        updated_at: r.get(7),
    }
}

pub async fn instance_by_public_id<'e>(e: impl Executor<'e, Database = Any>, public_id: &str) -> Result<Option<Instance>, AppError> {
    let sql_text = format!("SELECT {INSTANCE_COLUMNS} FROM workflow_instances WHERE public_id = ?");
    Ok(sqlx::query(&sql_text).bind(public_id).fetch_optional(e).await.map_err(sql)?.as_ref().map(instance))
}

pub async fn insert_instance(tx: &mut Tx<'_>, public_id: &str, workflow_code: &str, state: &str, created_by: Option<i64>, now_ms: i64) -> Result<i64, AppError> {
    let r = sqlx::query(
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
    .map_err(sql)?;
    Ok(r.get(0))
}

/// Moves an instance to `to_state` if nobody moved it since it was read: false = lost the race.
pub async fn advance(tx: &mut Tx<'_>, instance: &Instance, to_state: &str, now_ms: i64) -> Result<bool, AppError> {
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
pub async fn insert_event(
    tx: &mut Tx<'_>,
    instance_id: i64,
    action: &str,
    from_state: &str,
    to_state: &str,
    actor_id: Option<i64>,
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

/// The events of these instances, oldest first, as (instance id, event).
pub async fn events(db: &Db, instance_ids: &[i64]) -> Result<Vec<(i64, EventView)>, AppError> {
    let mut out = Vec::new();
    for chunk in instance_ids.chunks(500) {
        let sql_text = format!(
            "SELECT instance_id, action, from_state, to_state, actor_name, comment, created_at FROM workflow_events \
             WHERE instance_id IN ({}) ORDER BY id",
            vec!["?"; chunk.len()].join(", ")
        );
        let mut q = sqlx::query(&sql_text);
        for id in chunk {
            q = q.bind(*id);
        }
        for r in q.fetch_all(&db.pool).await? {
            out.push((
                r.get(0),
                EventView {
                    action: r.get(1),
                    from_state: r.get(2),
                    to_state: r.get(3),
                    actor: r.get(4),
                    comment: r.get(5),
                    at: crate::server::db::ms_to_datetime(r.get(6)),
                },
            ));
        }
    }
    Ok(out)
}
