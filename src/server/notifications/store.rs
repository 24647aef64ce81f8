//! The SQL of the notifications: webhooks, the fan-out of outbox events to deliveries, the deliveries' claims and
//! outcomes. Plain statements that read alike on SQLite and MariaDB (no `RETURNING` on UPDATE, integers for flags).

use sqlx::Any;

use crate::contract::notifications::{DeliveryId, DeliveryState, WebhookId};
use crate::contract::{CounterId, ProjectId, UserId};
use crate::server::db::{Conn, Db, Tx};

/// A webhook row, without its secret (the worker reads it with each delivery: [`Outgoing`]).
#[derive(Clone, Debug, sqlx::FromRow)]
pub(crate) struct WebhookRow {
    pub(crate) id: WebhookId,
    pub(crate) url: String,
    pub(crate) kinds: String,
    pub(crate) active: i64,
    pub(crate) created_by: String,
    pub(crate) created_at: i64,
    pub(crate) failed: i64,
    pub(crate) pending: i64,
}

const WEBHOOK_COLUMNS: &str = "w.id, w.url, w.kinds, w.active, w.created_by, w.created_at, \
    (SELECT COUNT(*) FROM notification_deliveries d WHERE d.webhook_id = w.id AND d.state = 'FAILED') AS failed, \
    (SELECT COUNT(*) FROM notification_deliveries d WHERE d.webhook_id = w.id AND d.state = 'PENDING') AS pending";

pub(crate) async fn webhooks<'e>(e: impl sqlx::Executor<'e, Database = Any>) -> Result<Vec<WebhookRow>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {WEBHOOK_COLUMNS} FROM notification_webhooks w ORDER BY w.id")).fetch_all(e).await
}

/// The active webhooks and the event kinds each wants (stored text): what a fan-out needs, without the views'
/// delivery counts (a count over every delivery of the last 30 days, each round).
pub(crate) async fn active_webhooks(db: &Db) -> Result<Vec<(WebhookId, String)>, sqlx::Error> {
    sqlx::query_as("SELECT id, kinds FROM notification_webhooks WHERE active <> 0 ORDER BY id").fetch_all(&db.pool).await
}

pub(crate) async fn webhook<'e>(e: impl sqlx::Executor<'e, Database = Any>, id: WebhookId) -> Result<Option<WebhookRow>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {WEBHOOK_COLUMNS} FROM notification_webhooks w WHERE w.id = ?")).bind(id).fetch_optional(e).await
}

pub(crate) async fn insert_webhook(
    tx: &mut Tx<'_>,
    url: &str,
    secret: &str,
    kinds: &str,
    created_by: &str,
    now: i64,
) -> Result<WebhookId, sqlx::Error> {
    sqlx::query_scalar::<_, WebhookId>(
        "INSERT INTO notification_webhooks (url, secret, kinds, active, created_by, created_at) VALUES (?, ?, ?, 1, ?, ?) RETURNING id",
    )
    .bind(url)
    .bind(secret)
    .bind(kinds)
    .bind(created_by)
    .bind(now)
    .fetch_one(&mut **tx)
    .await
}

/// Every webhook's stored secret (sealed or not): for [`super::Notifier::seal_stored_secrets`].
pub(crate) async fn secrets(pool: &sqlx::AnyPool) -> Result<Vec<(WebhookId, String)>, sqlx::Error> {
    sqlx::query_as("SELECT id, secret FROM notification_webhooks ORDER BY id").fetch_all(pool).await
}

/// Replaces a stored secret by its sealed form, if it is still `was` (another instance may have sealed it first).
pub(crate) async fn replace_secret(db: &Db, id: WebhookId, was: &str, sealed: &str) -> Result<bool, sqlx::Error> {
    let done = sqlx::query("UPDATE notification_webhooks SET secret = ? WHERE id = ? AND secret = ?")
        .bind(sealed)
        .bind(id)
        .bind(was)
        .execute(&db.writer)
        .await?;
    Ok(done.rows_affected() == 1)
}

pub(crate) async fn set_active(tx: &mut Tx<'_>, id: WebhookId, active: bool) -> Result<bool, sqlx::Error> {
    let done = sqlx::query("UPDATE notification_webhooks SET active = ? WHERE id = ?").bind(i64::from(active)).bind(id).execute(&mut **tx).await?;
    Ok(done.rows_affected() == 1)
}

/// Deletes a webhook and every delivery of it.
pub(crate) async fn delete_webhook(tx: &mut Tx<'_>, id: WebhookId) -> Result<bool, sqlx::Error> {
    sqlx::query("DELETE FROM notification_deliveries WHERE webhook_id = ?").bind(id).execute(&mut **tx).await?;
    let done = sqlx::query("DELETE FROM notification_webhooks WHERE id = ?").bind(id).execute(&mut **tx).await?;
    Ok(done.rows_affected() == 1)
}

/// An outbox event not yet fanned out.
#[derive(Clone, Debug, sqlx::FromRow)]
pub(crate) struct NewEvent {
    pub(crate) id: i64,
    pub(crate) kind: String,
    pub(crate) counter_id: Option<CounterId>,
}

pub(crate) async fn unfanned(db: &Db, limit: i64) -> Result<Vec<NewEvent>, sqlx::Error> {
    sqlx::query_as("SELECT id, kind, counter_id FROM notification_outbox WHERE fanned_out = 0 ORDER BY id LIMIT ?")
        .bind(limit)
        .fetch_all(&db.pool)
        .await
}

/// Marks the event fanned out; false when another instance did it first (it then writes the deliveries).
pub(crate) async fn take_for_fan_out(tx: &mut Conn, outbox_id: i64) -> Result<bool, sqlx::Error> {
    let done = sqlx::query("UPDATE notification_outbox SET fanned_out = 1 WHERE id = ? AND fanned_out = 0").bind(outbox_id).execute(&mut *tx).await?;
    Ok(done.rows_affected() == 1)
}

/// One delivery row per (webhook, event), due at once.
pub(crate) async fn insert_deliveries(tx: &mut Conn, rows: &[(WebhookId, i64, CounterId)], now: i64) -> Result<(), sqlx::Error> {
    for chunk in rows.chunks(500) {
        let sql = format!(
            "INSERT INTO notification_deliveries (webhook_id, outbox_id, counter_id, state, attempts, next_attempt_at, lease_until, created_at) VALUES {}",
            Db::row_placeholders(chunk.len(), 8)
        );
        let mut q = sqlx::query(&sql);
        for &(webhook_id, outbox_id, counter_id) in chunk {
            q = q.bind(webhook_id).bind(outbox_id).bind(counter_id).bind(DeliveryState::Pending.as_str()).bind(0_i64).bind(now).bind(0_i64).bind(now);
        }
        q.execute(&mut *tx).await?;
    }
    Ok(())
}

/// The deliveries due now whose earlier events of the same counter for the same webhook are all delivered (the order
/// per counter) — and fanned out: another instance may be writing an earlier event's deliveries —, of active webhooks,
/// oldest event first. Candidates only: each is then claimed by [`claim`].
pub(crate) async fn due(db: &Db, now: i64, limit: i64) -> Result<Vec<DeliveryId>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT d.id FROM notification_deliveries d JOIN notification_webhooks w ON w.id = d.webhook_id \
         WHERE d.state = 'PENDING' AND d.next_attempt_at <= ? AND d.lease_until <= ? AND w.active = 1 \
           AND NOT EXISTS (SELECT 1 FROM notification_deliveries e WHERE e.webhook_id = d.webhook_id AND e.counter_id = d.counter_id \
                           AND e.outbox_id < d.outbox_id AND e.state <> 'DELIVERED') \
           AND NOT EXISTS (SELECT 1 FROM notification_outbox o WHERE o.counter_id = d.counter_id AND o.id < d.outbox_id AND o.fanned_out = 0) \
         ORDER BY d.outbox_id LIMIT ?",
    )
    .bind(now)
    .bind(now)
    .bind(limit)
    .fetch_all(&db.pool)
    .await
}

/// Leases a due delivery to `owner` until `until`: a conditional UPDATE, so of several instances that found it due,
/// one takes it.
pub(crate) async fn claim(db: &Db, id: DeliveryId, owner: &str, now: i64, until: i64) -> Result<bool, sqlx::Error> {
    let done =
        sqlx::query("UPDATE notification_deliveries SET lease_owner = ?, lease_until = ? WHERE id = ? AND state = 'PENDING' AND lease_until <= ?")
            .bind(owner)
            .bind(until)
            .bind(id)
            .bind(now)
            .execute(&db.writer)
            .await?;
    Ok(done.rows_affected() == 1)
}

/// What a claimed delivery sends, and where.
#[derive(Clone, Debug, sqlx::FromRow)]
pub(crate) struct Outgoing {
    pub(crate) attempts: i64,
    pub(crate) url: String,
    pub(crate) secret: String,
    pub(crate) event_id: String,
    pub(crate) kind: String,
    pub(crate) counter_id: Option<CounterId>,
    pub(crate) project_id: Option<ProjectId>,
    pub(crate) payload: String,
    pub(crate) created_at: i64,
}

pub(crate) async fn outgoing(db: &Db, id: DeliveryId) -> Result<Option<Outgoing>, sqlx::Error> {
    sqlx::query_as(
        "SELECT d.id, d.attempts, w.url, w.secret, o.event_id, o.kind, o.counter_id, o.project_id, o.payload, o.created_at \
         FROM notification_deliveries d JOIN notification_webhooks w ON w.id = d.webhook_id JOIN notification_outbox o ON o.id = d.outbox_id \
         WHERE d.id = ?",
    )
    .bind(id)
    .fetch_optional(&db.pool)
    .await
}

/// Records an attempt's outcome under the lease (a lease that expired and was taken by another instance changes
/// nothing here): delivered, or failed with the next attempt's time (`None`: no attempt left, FAILED).
pub(crate) async fn record_attempt(
    db: &Db,
    id: DeliveryId,
    owner: &str,
    now: i64,
    outcome: Result<i64, (Option<i64>, &str)>,
    next_attempt_at: Option<i64>,
) -> Result<(), sqlx::Error> {
    let q = match outcome {
        Ok(status) => sqlx::query(
            "UPDATE notification_deliveries SET state = 'DELIVERED', attempts = attempts + 1, delivered_at = ?, last_status = ?, \
             last_error = NULL, lease_owner = NULL, lease_until = 0 WHERE id = ? AND lease_owner = ?",
        )
        .bind(now)
        .bind(status),
        Err((status, error)) => sqlx::query(
            "UPDATE notification_deliveries SET state = ?, attempts = attempts + 1, next_attempt_at = ?, last_status = ?, last_error = ?, \
             lease_owner = NULL, lease_until = 0 WHERE id = ? AND lease_owner = ?",
        )
        .bind(if next_attempt_at.is_some() { DeliveryState::Pending } else { DeliveryState::Failed }.as_str())
        .bind(next_attempt_at.unwrap_or(now))
        .bind(status)
        .bind(error.chars().take(1000).collect::<String>()),
    };
    q.bind(id).bind(owner).execute(&db.writer).await?;
    Ok(())
}

/// A delivery as listed.
#[derive(Clone, Debug, sqlx::FromRow)]
pub(crate) struct DeliveryRow {
    pub(crate) id: DeliveryId,
    pub(crate) webhook_id: WebhookId,
    pub(crate) webhook_url: String,
    pub(crate) event_id: String,
    pub(crate) kind: String,
    pub(crate) counter_id: Option<CounterId>,
    pub(crate) state: String,
    pub(crate) attempts: i64,
    pub(crate) next_attempt_at: i64,
    pub(crate) last_status: Option<i64>,
    pub(crate) last_error: Option<String>,
    pub(crate) delivered_at: Option<i64>,
    pub(crate) occurred_at: i64,
}

/// Deliveries, newest event first, optionally of one state and one webhook.
pub(crate) async fn deliveries(
    db: &Db,
    state: Option<DeliveryState>,
    webhook_id: Option<WebhookId>,
    limit: i64,
) -> Result<Vec<DeliveryRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT d.id, d.webhook_id, w.url AS webhook_url, o.event_id, o.kind, o.counter_id, d.state, d.attempts, d.next_attempt_at, \
                d.last_status, d.last_error, d.delivered_at, o.created_at AS occurred_at \
         FROM notification_deliveries d JOIN notification_webhooks w ON w.id = d.webhook_id JOIN notification_outbox o ON o.id = d.outbox_id \
         WHERE (? IS NULL OR d.state = ?) AND (? IS NULL OR d.webhook_id = ?) \
         ORDER BY d.outbox_id DESC, d.id DESC LIMIT ?",
    )
    .bind(state.map(DeliveryState::as_str))
    .bind(state.map(DeliveryState::as_str))
    .bind(webhook_id)
    .bind(webhook_id)
    .bind(limit)
    .fetch_all(&db.pool)
    .await
}

pub(crate) async fn delivery_webhook(tx: &mut Tx<'_>, id: DeliveryId) -> Result<Option<(WebhookId, String)>, sqlx::Error> {
    sqlx::query_as("SELECT webhook_id, state FROM notification_deliveries WHERE id = ?").bind(id).fetch_optional(&mut **tx).await
}

/// Puts failed deliveries back in line, due now with their attempts counted afresh: one (`id`) or every failed one
/// of a webhook. Returns how many.
pub(crate) async fn replay(tx: &mut Tx<'_>, id: Option<DeliveryId>, webhook_id: Option<WebhookId>, now: i64) -> Result<u64, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE notification_deliveries SET state = 'PENDING', attempts = 0, next_attempt_at = ?, lease_owner = NULL, lease_until = 0 \
         WHERE state = 'FAILED' AND (? IS NULL OR id = ?) AND (? IS NULL OR webhook_id = ?)",
    )
    .bind(now)
    .bind(id)
    .bind(id)
    .bind(webhook_id)
    .bind(webhook_id)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected())
}

/// Reset requests waiting for a decision that `user_id` may take: pending, and not their own (four eyes).
pub(crate) async fn resets_waiting_for(db: &Db, user_id: UserId, workflow: &str) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM workflow_instances WHERE workflow_code = ? AND state = 'PENDING' AND (created_by IS NULL OR created_by <> ?)",
    )
    .bind(workflow)
    .bind(user_id)
    .fetch_one(&db.pool)
    .await
}
