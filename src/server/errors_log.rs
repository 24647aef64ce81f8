//! The error log table (docs/rules/numbering.md#audit-and-retention): failures worth an operator's look, with a reference id for 500s.
//! Written off the request path so a slow or failing database never delays the answer.

use std::collections::HashMap;

use crate::contract::messages::RequestDetail;
use crate::server::db::Db;
use crate::server::error::AppError;

/// Repeats of one error (same caller, code, message and project) within this window write one row.
pub(crate) const REPEAT_WINDOW_MS: i64 = 60_000;
/// Longest text kept of each string in a row's context (the request that failed, …).
pub const MAX_CONTEXT_TEXT_CHARS: usize = 200;
/// Most items kept of each array or object in the context, and how deep it is kept.
const MAX_CONTEXT_ITEMS: usize = 20;
const MAX_CONTEXT_DEPTH: usize = 4;
/// Longest context stored, whatever its shape.
pub(crate) const MAX_CONTEXT_CHARS: usize = 4000;
/// Most distinct errors remembered for the repeat window (then the expired ones are dropped, or all).
const MAX_RECENT: usize = 10_000;

/// Who a failing request came from, as the log keeps it (`auth::Caller::who` makes one).
pub(crate) struct Who {
    /// The name shown: a username, or `token:<name>` for an API token.
    pub(crate) name: String,
    /// The user's id, when a person.
    pub(crate) user_id: Option<UserId>,
    /// The client address.
    pub(crate) ip: Option<String>,
}

#[derive(Clone)]
pub(crate) struct ErrorLog {
    db: Db,
    clock: std::sync::Arc<crate::server::clock::Clock>,
    repeats: std::sync::Arc<Repeats>,
    /// Redis outages, written in the order they were seen by one task (a short outage's end must not be
    /// written before its beginning).
    outages: tokio::sync::mpsc::UnboundedSender<Outage>,
}

/// A change of Redis reachability as this instance saw it.
#[derive(Debug)]
enum Outage {
    Began { at_ms: i64, detail: String },
    Ended { at_ms: i64 },
}

/// The errors written lately, so that repeats within the window are not written again.
#[derive(Default)]
struct Repeats(std::sync::Mutex<HashMap<u64, Recent>>);

/// When an error was last written, and how many repeats were skipped since.
struct Recent {
    written_at_ms: i64,
    skipped: u64,
}

impl ErrorLog {
    pub(crate) fn new(db: Db, clock: std::sync::Arc<crate::server::clock::Clock>) -> ErrorLog {
        let (outages, events) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(write_outages(db.clone(), events));
        ErrorLog { db, clock, repeats: Default::default(), outages }
    }

    /// Redis lost its quorum (docs/rules/numbering.md#audit-and-retention REDIS_ERROR): one row per outage, however many requests fall back to the
    /// database lock meanwhile. No new row while an earlier outage's row is still open (another instance's).
    pub(crate) fn redis_outage_began(&self, detail: &str) {
        crate::server::metrics::error_seen("REDIS_ERROR");
        let _ = self.outages.send(Outage::Began { at_ms: self.clock.now_ms(), detail: detail.chars().take(500).collect() });
    }

    /// Redis answers again: the open outage row is marked resolved at this time.
    pub(crate) fn redis_outage_ended(&self) {
        let _ = self.outages.send(Outage::Ended { at_ms: self.clock.now_ms() });
    }

    /// [`ErrorLog::record_in`] for an error of no known project (super admins see it).
    pub(crate) fn record(&self, error: &AppError, who: &Who, context: serde_json::Value) {
        self.record_in(error, who, None, context)
    }

    /// Writes the error (when it is of a kind the log keeps, see `AppError::log_type`) with the project of the
    /// failing request when known, off the request path. The context's texts are clipped; an error without a
    /// reference id repeated by the same caller within [`REPEAT_WINDOW_MS`] is written once, the next row after
    /// the window saying how many repeats were skipped.
    pub(crate) fn record_in(&self, error: &AppError, who: &Who, project_id: Option<ProjectId>, context: serde_json::Value) {
        let Some(error_type) = error.log_type() else { return };
        crate::server::metrics::error_seen(error_type);
        let code = error.code().code();
        let message: String = error.report().chars().take(2000).collect();
        let ref_id = error.reference().map(str::to_string);
        let at = self.clock.now_ms(); // the service clock, like every other timestamp
        let caller_name: String = who.name.chars().take(MAX_CONTEXT_TEXT_CHARS).collect();
        let mut context = serde_json::json!({ "caller": caller_name, "context": clipped(context, 0) });
        if ref_id.is_none() {
            match self.repeats.admit(repeat_key(&caller_name, error_type, code, &message, project_id), at) {
                None => return,
                Some(0) => {}
                Some(skipped) => context["repeatsSkipped"] = skipped.into(),
            }
        }
        let mut context = context.to_string();
        if context.chars().count() > MAX_CONTEXT_CHARS {
            context = serde_json::json!({ "clipped": context.chars().take(MAX_CONTEXT_CHARS).collect::<String>() }).to_string();
        }
        let db = self.db.clone();
        let user_id = who.user_id;
        let ip = who.ip.as_deref().map(|ip| ip.chars().take(64).collect::<String>());
        if error_type == "DB_ERROR" {
            tracing::error!(%message, ref_id = ?ref_id, "database error");
        }
        tokio::spawn(async move {
            let written = sqlx::query(
                "INSERT INTO error_log (error_type, code, message, context, ref_id, user_id, ip_address, created_at, project_id) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(error_type)
            .bind(code)
            .bind(message)
            .bind(context)
            .bind(ref_id)
            .bind(user_id)
            .bind(ip)
            .bind(at)
            .bind(project_id)
            .execute(&db.writer)
            .await;
            if let Err(e) = written {
                tracing::warn!(error = %e, "could not write the error log");
            }
        });
    }
}

/// Writes the outage rows one after another, off the request path.
async fn write_outages(db: Db, mut events: tokio::sync::mpsc::UnboundedReceiver<Outage>) {
    while let Some(event) = events.recv().await {
        let written = match &event {
            Outage::Began { at_ms, detail } => {
                let context = serde_json::json!({ "fallback": "DB_LOCK", "detail": detail }).to_string();
                sqlx::query(
                    "INSERT INTO error_log (error_type, code, message, context, created_at) \
                     SELECT 'REDIS_ERROR', 'REDIS_UNAVAILABLE', ?, ?, ? FROM (SELECT 1 AS one) AS once \
                     WHERE NOT EXISTS (SELECT 1 FROM error_log WHERE error_type = 'REDIS_ERROR' AND resolved_at IS NULL)",
                )
                .bind("Redis unreachable (no quorum): numbering continues on the database lock")
                .bind(context)
                .bind(at_ms)
                .execute(&db.writer)
                .await
            }
            Outage::Ended { at_ms } => {
                sqlx::query("UPDATE error_log SET resolved_at = ? WHERE error_type = 'REDIS_ERROR' AND resolved_at IS NULL")
                    .bind(at_ms)
                    .execute(&db.writer)
                    .await
            }
        };
        if let Err(e) = written {
            tracing::warn!(error = %e, ?event, "could not write the Redis outage to the error log");
        }
    }
}

impl Repeats {
    /// Whether an error seen at `now_ms` is written: `None` = a repeat inside the window (skipped), `Some(n)` =
    /// write it, `n` repeats having been skipped since the last row.
    fn admit(&self, key: u64, now_ms: i64) -> Option<u64> {
        let mut recent = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(r) = recent.get_mut(&key) {
            if now_ms.saturating_sub(r.written_at_ms) < REPEAT_WINDOW_MS {
                r.skipped += 1;
                return None;
            }
            let skipped = std::mem::take(&mut r.skipped);
            r.written_at_ms = now_ms;
            return Some(skipped);
        }
        if recent.len() >= MAX_RECENT {
            recent.retain(|_, r| now_ms.saturating_sub(r.written_at_ms) < REPEAT_WINDOW_MS);
            if recent.len() >= MAX_RECENT {
                recent.clear();
            }
        }
        recent.insert(key, Recent { written_at_ms: now_ms, skipped: 0 });
        Some(0)
    }
}

fn repeat_key(caller: &str, error_type: &str, code: &str, message: &str, project_id: Option<ProjectId>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (caller, error_type, code, message, project_id).hash(&mut h);
    h.finish()
}

/// The context as stored: strings cut to [`MAX_CONTEXT_TEXT_CHARS`], arrays and objects to their first
/// `MAX_CONTEXT_ITEMS` entries, nothing deeper than `MAX_CONTEXT_DEPTH`.
fn clipped(value: serde_json::Value, depth: usize) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) if s.chars().count() > MAX_CONTEXT_TEXT_CHARS => {
            Value::String(s.chars().take(MAX_CONTEXT_TEXT_CHARS).chain(std::iter::once('…')).collect())
        }
        Value::Array(_) | Value::Object(_) if depth >= MAX_CONTEXT_DEPTH => Value::String("…".into()),
        Value::Array(items) => Value::Array(items.into_iter().take(MAX_CONTEXT_ITEMS).map(|v| clipped(v, depth + 1)).collect()),
        Value::Object(map) => Value::Object(map.into_iter().take(MAX_CONTEXT_ITEMS).map(|(k, v)| (clip_text(&k), clipped(v, depth + 1))).collect()),
        other => other,
    }
}

fn clip_text(s: &str) -> String {
    s.chars().take(MAX_CONTEXT_TEXT_CHARS).collect()
}

use crate::contract::{ErrorLogId, ErrorPage, ErrorQuery, ErrorRow, ProjectId, UserId};
use crate::server::db::{ms_to_datetime, paging, Conditions};

/// One row of `error_log` as stored (times in epoch milliseconds).
#[derive(sqlx::FromRow)]
struct StoredError {
    id: ErrorLogId,
    created_at: i64,
    error_type: String,
    code: Option<String>,
    message: String,
    ref_id: Option<String>,
    ip_address: Option<String>,
    resolved_at: Option<i64>,
    project_id: Option<ProjectId>,
}

impl From<StoredError> for ErrorRow {
    fn from(r: StoredError) -> ErrorRow {
        ErrorRow {
            id: r.id,
            created_at: ms_to_datetime(r.created_at),
            error_type: r.error_type,
            code: r.code,
            message: r.message,
            ref_id: r.ref_id,
            ip_address: r.ip_address,
            resolved_at: r.resolved_at.map(ms_to_datetime),
            project_id: r.project_id,
        }
    }
}

/// The error log, newest first, filtered by type and (optionally) unresolved only; kept to the rows of `projects`
/// (None: every row).
pub(crate) async fn search(db: &Db, projects: Option<&[ProjectId]>, q: &ErrorQuery) -> Result<ErrorPage, AppError> {
    let (page, size, offset) = paging(q.page, q.page_size, 50, 500)?;
    let mut filter = Conditions::default();
    if let Some(projects) = projects {
        filter.and_in("project_id IN ({})", projects);
    }
    filter.and_if("error_type = ?", q.error_type.clone());
    if q.unresolved_only {
        filter.and("resolved_at IS NULL", []);
    }
    let total_sql = format!("SELECT COUNT(*) FROM error_log{}", filter.sql());
    let total: i64 = filter.bind(sqlx::query_scalar(&total_sql)).fetch_one(&db.pool).await?;
    let rows_sql = format!(
        "SELECT id, created_at, error_type, code, message, ref_id, ip_address, resolved_at, project_id FROM error_log{} ORDER BY id DESC LIMIT ? OFFSET ?",
        filter.sql()
    );
    let rows = filter
        .bind(sqlx::query_as::<_, StoredError>(&rows_sql))
        .bind(i64::from(size))
        .bind(offset)
        .fetch_all(&db.pool)
        .await?
        .into_iter()
        .map(ErrorRow::from)
        .collect();
    Ok(ErrorPage { rows, total, page, page_size: size })
}

/// Marks an error as dealt with at `now_ms`, if it is one of `projects`' rows (None: any); 404 when there is no such
/// unresolved error.
pub(crate) async fn resolve(db: &Db, now_ms: i64, projects: Option<&[ProjectId]>, id: ErrorLogId) -> Result<(), AppError> {
    let mut filter = Conditions::default();
    filter.and("id = ?", [id.into()]).and("resolved_at IS NULL", []);
    if let Some(projects) = projects {
        filter.and_in("project_id IN ({})", projects);
    }
    let sql = format!("UPDATE error_log SET resolved_at = ?{}", filter.sql());
    let r = filter.bind(sqlx::query(&sql).bind(now_ms)).execute(&db.writer).await?;
    if r.rows_affected() != 1 {
        return Err(AppError::not_found(RequestDetail::UnresolvedError { id: &id }));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeat_within_the_window_is_skipped_and_counted_on_the_next_row() {
        let repeats = Repeats::default();
        let (a, b) = (
            repeat_key("u", "VALIDATION_ERROR", "NB400", "bad", Some(ProjectId(1))),
            repeat_key("u", "VALIDATION_ERROR", "NB400", "bad", Some(ProjectId(2))),
        );
        assert_ne!(a, b);
        assert_eq!(repeats.admit(a, 1_000), Some(0));
        for i in 1..20 {
            assert_eq!(repeats.admit(a, 1_000 + i), None);
        }
        assert_eq!(repeats.admit(b, 1_000), Some(0), "another project is another error");
        assert_eq!(repeats.admit(a, 1_000 + REPEAT_WINDOW_MS), Some(19));
        assert_eq!(repeats.admit(a, 1_001 + REPEAT_WINDOW_MS), None);
    }

    #[test]
    fn the_remembered_errors_stay_bounded() {
        let repeats = Repeats::default();
        for k in 0..(MAX_RECENT as u64 + 10) {
            assert_eq!(repeats.admit(k, 0), Some(0));
        }
        assert!(repeats.0.lock().unwrap().len() <= MAX_RECENT);
    }

    #[test]
    fn the_context_is_clipped_field_by_field() {
        let long = "x".repeat(10_000);
        let deep = serde_json::json!({"a": {"b": {"c": {"d": {"e": 1}}}}});
        let v = clipped(serde_json::json!({ "documentId": long, "list": vec![1; 100], "deep": deep }), 0);
        assert_eq!(v["documentId"].as_str().unwrap().chars().count(), MAX_CONTEXT_TEXT_CHARS + 1);
        assert_eq!(v["list"].as_array().unwrap().len(), MAX_CONTEXT_ITEMS);
        assert_eq!(v["deep"]["a"]["b"]["c"], serde_json::json!("…"));
    }
}
