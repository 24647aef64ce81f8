//! The error log table (SPEC §7): failures worth an operator's look, with a reference id for 500s.
//! Written off the request path so a slow or failing database never delays the answer.

use crate::server::auth::Caller;
use crate::server::db::{now_ms, Db};
use crate::server::error::AppError;

#[derive(Clone)]
pub struct ErrorLog {
    db: Db,
}

impl ErrorLog {
    pub fn new(db: Db) -> ErrorLog {
        ErrorLog { db }
    }

    pub fn record(&self, error: &AppError, caller: &Caller, context: serde_json::Value) {
        let Some(error_type) = error.log_type() else { return };
        let (_, code, _) = error.kind();
        let db = self.db.clone();
        let message = error.to_string();
        let ref_id = error.reference().map(str::to_string);
        let user_id = caller.user_id();
        let ip = caller.ip.clone();
        let context = serde_json::json!({ "caller": caller.display_name(), "context": context }).to_string();
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
            .bind(now_ms())
            .execute(&db.writer)
            .await;
            if let Err(e) = written {
                tracing::warn!(error = %e, "could not write the error log");
            }
        });
    }
}
