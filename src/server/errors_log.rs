//! The error log table (SPEC §7): failures worth an operator's look, with a reference id for 500s.
//! Written off the request path so a slow or failing database never delays the answer.

use crate::server::auth::Caller;
use crate::server::db::Db;
use crate::server::error::AppError;

#[derive(Clone)]
pub struct ErrorLog {
    db: Db,
    clock: std::sync::Arc<crate::server::clock::Clock>,
}

impl ErrorLog {
    pub fn new(db: Db, clock: std::sync::Arc<crate::server::clock::Clock>) -> ErrorLog {
        ErrorLog { db, clock }
    }

    pub fn record(&self, error: &AppError, caller: &Caller, context: serde_json::Value) {
        let Some(error_type) = error.log_type() else { return };
        let code = error.code().code();
        let db = self.db.clone();
        let message: String = error.report().chars().take(2000).collect();
        let ref_id = error.reference().map(str::to_string);
        let user_id = caller.user_id();
        let ip = caller.ip.clone();
        let context = serde_json::json!({ "caller": caller.display_name(), "context": context }).to_string();
        let at = self.clock.now_ms(); // the service clock, like every other timestamp
        if error_type == "DB_ERROR" {
            tracing::error!(%message, ref_id = ?ref_id, "database error");
        }
        tokio::spawn(async move {
            let written = sqlx::query(
                "INSERT INTO error_log (error_type, code, message, context, ref_id, user_id, ip_address, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(error_type)
            .bind(code)
            .bind(message)
            .bind(context)
            .bind(ref_id)
            .bind(user_id)
            .bind(ip)
            .bind(at)
            .execute(&db.writer)
            .await;
            if let Err(e) = written {
                tracing::warn!(error = %e, "could not write the error log");
            }
        });
    }
}

use crate::contract::{ErrorPage, ErrorQuery, ErrorRow};
use crate::server::db::{ms_to_datetime, Conditions};

fn page_of(page: Option<u32>, size: Option<u32>) -> (u32, u32) {
    (page.unwrap_or(1).max(1), size.unwrap_or(50).clamp(1, 500))
}

/// One row of `error_log` as stored (times in epoch milliseconds).
#[derive(sqlx::FromRow)]
struct StoredError {
    id: i64,
    created_at: i64,
    error_type: String,
    code: Option<String>,
    message: String,
    ref_id: Option<String>,
    ip_address: Option<String>,
    resolved_at: Option<i64>,
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
        }
    }
}

/// The error log, newest first, filtered by type and (optionally) unresolved only (admins).
pub async fn search(s: &crate::server::AppState, caller: &Caller, q: &ErrorQuery) -> Result<ErrorPage, AppError> {
    caller.require_admin()?;
    let db = &s.db;
    let (page, size) = page_of(q.page, q.page_size);
    let mut filter = Conditions::default();
    filter.and_if("error_type = ?", q.error_type.clone());
    if q.unresolved_only {
        filter.and("resolved_at IS NULL", []);
    }
    let total_sql = format!("SELECT COUNT(*) FROM error_log{}", filter.sql());
    let total: i64 = filter.bind(sqlx::query_scalar(&total_sql)).fetch_one(&db.pool).await?;
    let rows_sql = format!(
        "SELECT id, created_at, error_type, code, message, ref_id, ip_address, resolved_at FROM error_log{} ORDER BY id DESC LIMIT ? OFFSET ?",
        filter.sql()
    );
    let rows = filter
        .bind(sqlx::query_as::<_, StoredError>(&rows_sql))
        .bind(size as i64)
        .bind(((page - 1) * size) as i64)
        .fetch_all(&db.pool)
        .await?
        .into_iter()
        .map(ErrorRow::from)
        .collect();
    Ok(ErrorPage { rows, total, page, page_size: size })
}

/// Marks an error as dealt with (admins); 404 when there is no such unresolved error.
pub async fn resolve(s: &crate::server::AppState, caller: &Caller, id: i64) -> Result<(), AppError> {
    caller.require_admin()?;
    let (db, now_ms) = (&s.db, s.clock.now_ms());
    let r =
        sqlx::query("UPDATE error_log SET resolved_at = ? WHERE id = ? AND resolved_at IS NULL").bind(now_ms).bind(id).execute(&db.writer).await?;
    if r.rows_affected() != 1 {
        return Err(AppError::not_found(format!("ข้อผิดพลาดที่ยังไม่แก้ไขรหัส {id}"), format!("unresolved error {id}")));
    }
    Ok(())
}
