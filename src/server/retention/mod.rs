//! Retention (docs/operations/README.md#retention): what the service keeps for a while only goes once it has aged out — login attempts after
//! [`RetentionConfig::login_attempts_days`], resolved error-log rows after [`RetentionConfig::resolved_errors_days`]
//! (unresolved ones stay), sessions as soon as they expire. A daily job (one instance at a time: [`spawn_job`]) and
//! `docnum prune [--dry-run]` run the same [`prune`]; each real run appends one `PRUNE` row with its counts to the
//! `admin` audit chain, a dry run ([`count`]) only counts.
//!
//! Never pruned, and named nowhere here: the audit log (kept at least 7 years; its triggers refuse DELETE anyway),
//! issued numbers, templates and their versions, workflow instances and their events. Idempotency keys go after
//! [`RetentionConfig::idempotency_keys_hours`] (24). Delivered notifications after
//! [`RetentionConfig::notifications_days`] (30): the deliveries that succeeded, then the outbox events that have no
//! delivery left (a pending or failed one keeps its event).
//!
//! The service takes the database, the service clock's now and plain settings, no `AppState`, so the CLI and the
//! job call it alike and tests set its time.

pub mod store;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::json;

use crate::server::audit::{self, AuditEntry, ADMIN_CHAIN};
use crate::server::auth::users::system_actor;
use crate::server::clock::Clock;
pub use crate::server::config::RetentionConfig;
use crate::server::db::{ms_to_datetime, Db};
use crate::server::error::{is_lost_race, AppError, Pause, Retry};
use store::Aged;

const DAY_MS: i64 = 86_400_000;
/// The operation of a prune's audit row.
pub(crate) const PRUNE: &str = "PRUNE";
/// The prune's row in `job_runs`.
pub(crate) const PRUNE_JOB: &str = "prune";
/// Who the daily job's audit rows name (the CLI's say `cli`).
pub(crate) const JOB_ACTOR: &str = "system";
/// However long the interval, an instance looks at least this often whether the run is due: an instance that
/// starts, or outlives the one that ran it last, takes it over within this time.
const MAX_POLL: Duration = Duration::from_secs(3600);

/// A run's cutoffs, computed once: a row older than its cutoff goes (named as [`PruneCounts`] names the rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Plan {
    #[serde(rename = "loginAttempts")]
    pub(crate) login_attempts_before: DateTime<Utc>,
    #[serde(rename = "resolvedErrors")]
    pub(crate) resolved_errors_before: DateTime<Utc>,
    #[serde(rename = "expiredSessions")]
    pub(crate) sessions_expired_before: DateTime<Utc>,
    #[serde(rename = "idempotencyKeys")]
    pub(crate) idempotency_keys_before: DateTime<Utc>,
    /// Delivered notifications, and then the events with nothing left to deliver.
    #[serde(rename = "deliveredNotifications")]
    pub(crate) notifications_before: DateTime<Utc>,
}

impl Plan {
    /// The cutoffs at `now_ms` (service clock). A session lives for the session layer until its expiry by the
    /// system clock (`system_now_ms`), so its cutoff is the earlier of the two: a service clock set ahead
    /// (`CLOCK_START`) never logs anyone out.
    pub(crate) fn at(now_ms: i64, system_now_ms: i64, config: &RetentionConfig) -> Plan {
        let days_before = |days: u32| ms_to_datetime(now_ms.saturating_sub(i64::from(days).saturating_mul(DAY_MS)));
        Plan {
            login_attempts_before: days_before(config.login_attempts_days),
            resolved_errors_before: days_before(config.resolved_errors_days),
            sessions_expired_before: ms_to_datetime(now_ms.min(system_now_ms)),
            idempotency_keys_before: ms_to_datetime(now_ms.saturating_sub(i64::from(config.idempotency_keys_hours).saturating_mul(DAY_MS / 24))),
            notifications_before: days_before(config.notifications_days),
        }
    }

    /// Each kind of row with its cutoff (epoch ms), in the order a run takes them.
    fn kinds(&self, db: &Db) -> [(Aged, i64); KINDS] {
        [
            (store::LOGIN_ATTEMPTS, self.login_attempts_before.timestamp_millis()),
            (store::RESOLVED_ERRORS, self.resolved_errors_before.timestamp_millis()),
            (store::expired_sessions(db.dialect), self.sessions_expired_before.timestamp_millis()),
            (store::IDEMPOTENCY_KEYS, self.idempotency_keys_before.timestamp_millis()),
            (store::DELIVERED_NOTIFICATIONS, self.notifications_before.timestamp_millis()),
            (store::NOTIFICATION_EVENTS, self.notifications_before.timestamp_millis()),
        ]
    }
}

/// Rows removed by a run (or, in a dry run, that it would remove), per kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PruneCounts {
    pub login_attempts: u64,
    pub resolved_errors: u64,
    pub expired_sessions: u64,
    pub idempotency_keys: u64,
    pub delivered_notifications: u64,
    pub notification_events: u64,
}

/// The kinds of rows a run removes.
const KINDS: usize = 6;

impl PruneCounts {
    /// The counts in the order of [`Plan::kinds`].
    fn of_kinds(
        [login_attempts, resolved_errors, expired_sessions, idempotency_keys, delivered_notifications, notification_events]: [u64; KINDS],
    ) -> PruneCounts {
        PruneCounts { login_attempts, resolved_errors, expired_sessions, idempotency_keys, delivered_notifications, notification_events }
    }
}

/// What `docnum prune` prints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PruneReport {
    pub dry_run: bool,
    #[serde(flatten)]
    pub counts: PruneCounts,
    pub(crate) before: Plan,
}

/// Counts, exactly, what [`prune`] at `now_ms` would remove; changes nothing and writes no audit row.
pub async fn count(db: &Db, now_ms: i64, config: &RetentionConfig) -> Result<PruneReport, AppError> {
    let plan = Plan::at(now_ms, crate::server::db::now_ms(), config);
    let mut counted = [0; KINDS];
    for ((aged, before_ms), n) in plan.kinds(db).iter().zip(&mut counted) {
        if store::table_exists(db, aged.table).await? {
            *n = store::count(db, aged, *before_ms).await?;
        }
    }
    Ok(PruneReport { dry_run: true, counts: PruneCounts::of_kinds(counted), before: plan })
}

/// Deletes what has aged out at `now_ms`, [`store::CHUNK`] rows per statement, then appends one `PRUNE` row to the
/// `admin` chain naming `actor`, with the counts (`new_value`), the limits and cutoffs (`metadata`). A run that fails
/// part-way still records what it removed (status `FAILED`, the error in `metadata`) before answering the error.
pub async fn prune(db: &Db, now_ms: i64, config: &RetentionConfig, actor: &str) -> Result<PruneReport, AppError> {
    let started = Instant::now();
    let plan = Plan::at(now_ms, crate::server::db::now_ms(), config);
    let mut removed = [0; KINDS];
    let mut outcome = Ok(());
    for ((aged, before_ms), deleted) in plan.kinds(db).iter().zip(&mut removed) {
        outcome = delete_aged(db, aged, *before_ms, deleted).await;
        if outcome.is_err() {
            break;
        }
    }
    let counts = PruneCounts::of_kinds(removed);
    let entry = AuditEntry {
        operation: PRUNE.into(),
        status: if outcome.is_ok() { "SUCCESS" } else { "FAILED" }.into(),
        new_value: Some(json!(counts).to_string()),
        metadata: Some(
            json!({
                "limits": {
                    "loginAttemptsDays": config.login_attempts_days,
                    "resolvedErrorsDays": config.resolved_errors_days,
                    "idempotencyKeysHours": config.idempotency_keys_hours,
                    "notificationsDays": config.notifications_days,
                },
                "before": plan,
                "error": outcome.as_ref().err().map(AppError::report),
            })
            .to_string(),
        ),
        total_ms: i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX),
        ..system_actor(actor, now_ms)
    };
    append_admin(db, entry).await?;
    outcome.map(|()| PruneReport { dry_run: false, counts, before: plan })
}

/// Deletes the rows of `aged` older than `before_ms` a chunk at a time, adding each chunk to `deleted` as it goes
/// (so a failure still knows what went). Nothing when the table does not exist (the sessions' before a first start).
async fn delete_aged(db: &Db, aged: &Aged, before_ms: i64, deleted: &mut u64) -> Result<(), AppError> {
    if !store::table_exists(db, aged.table).await? {
        return Ok(());
    }
    loop {
        let n = store::delete_chunk(db, aged, before_ms).await?;
        *deleted += n;
        if n < store::CHUNK {
            return Ok(());
        }
    }
}

/// Appends `entry` to the `admin` chain in a transaction of its own; a lost race for the chain's head (another
/// administrative change at the same moment) is tried again.
async fn append_admin(db: &Db, entry: AuditEntry) -> Result<(), AppError> {
    Retry { times: 3, pause: Pause::None }
        .run(is_lost_race, || async {
            let mut tx = db.begin_write().await?;
            audit::append(&mut tx, db.dialect, ADMIN_CHAIN, std::slice::from_ref(&entry)).await?;
            Ok(tx.commit().await?)
        })
        .await
}

/// The daily job's step on one instance: when the prune is due at `now_ms` and this instance's claim moves its next
/// run an interval on, runs it (audited as [`JOB_ACTOR`]). None when it was not due, or another instance claimed it.
pub async fn run_if_due(db: &Db, now_ms: i64, config: &RetentionConfig, instance: &str) -> Result<Option<PruneReport>, AppError> {
    let interval_ms = i64::try_from(config.interval.as_millis()).unwrap_or(i64::MAX);
    if !store::claim(db, PRUNE_JOB, instance, now_ms, now_ms.saturating_add(interval_ms)).await? {
        return Ok(None);
    }
    prune(db, now_ms, config, JOB_ACTOR).await.map(Some)
}

/// Starts the daily job on this instance: every interval (at most [`MAX_POLL`]) it tries [`run_if_due`] on the
/// service clock. The instances sharing the database run each day's prune once between them; a failure is logged
/// and the next day's run goes on.
pub(crate) fn spawn_job(db: Db, clock: Arc<Clock>, config: RetentionConfig, instance: String) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(config.interval.clamp(Duration::from_secs(1), MAX_POLL));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            match run_if_due(&db, clock.now_ms(), &config, &instance).await {
                Ok(None) => {}
                Ok(Some(r)) => tracing::info!(
                    login_attempts = r.counts.login_attempts,
                    resolved_errors = r.counts.resolved_errors,
                    expired_sessions = r.counts.expired_sessions,
                    delivered_notifications = r.counts.delivered_notifications,
                    "retention: aged rows pruned"
                ),
                Err(e) => tracing::warn!(error = %e.report(), "retention: the daily prune failed"),
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_750_000_000_000;

    #[test]
    fn the_cutoffs_are_the_limits_before_now() {
        let config = RetentionConfig { login_attempts_days: 180, resolved_errors_days: 365, ..Default::default() };
        let plan = Plan::at(NOW, NOW + 1, &config);
        assert_eq!(plan.login_attempts_before.timestamp_millis(), NOW - 180 * DAY_MS);
        assert_eq!(plan.resolved_errors_before.timestamp_millis(), NOW - 365 * DAY_MS);
        assert_eq!(plan.sessions_expired_before.timestamp_millis(), NOW);
        assert_eq!(plan.idempotency_keys_before.timestamp_millis(), NOW - DAY_MS);
    }

    #[test]
    fn a_service_clock_set_ahead_prunes_no_session_still_alive() {
        let plan = Plan::at(NOW + 30 * DAY_MS, NOW, &RetentionConfig::default());
        assert_eq!(plan.sessions_expired_before.timestamp_millis(), NOW);
        assert_eq!(plan.login_attempts_before.timestamp_millis(), NOW - 150 * DAY_MS);
    }
}
