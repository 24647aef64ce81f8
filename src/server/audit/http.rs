//! REST: audit-chain verification.

use axum::extract::State;
use axum::Json;

use crate::server::audit::{self, VerifyReport};
use crate::server::auth::Caller;
use crate::server::error::AppError;
use crate::server::AppState;

#[utoipa::path(get, path = "/api/v1/document-numbering/logs/audit/verify",
    responses((status = 200, body = VerifyReport), (status = 403, body = crate::server::error::ErrorBody)), tag = "audit")]
pub async fn verify(State(s): State<AppState>, caller: Caller) -> Result<Json<VerifyReport>, AppError> {
    caller.require_admin()?;
    Ok(Json(audit::verify(&s.db).await?))
}

/// `GET /logs/audit?from&to&user&operation&number&projectId&page&pageSize[&format=csv]` (admins).
pub async fn search(
    State(s): State<AppState>,
    caller: Caller,
    crate::server::error::ApiQuery(query): crate::server::error::ApiQuery<crate::app::types::AuditQuery>,
    crate::server::error::ApiQuery(format): crate::server::error::ApiQuery<Format>,
) -> Result<axum::response::Response, AppError> {
    use axum::response::IntoResponse;
    caller.require_admin()?;
    if format.format.as_deref() == Some("csv") {
        let body = audit::export_csv(&s.db, &query).await?;
        let headers = [
            (axum::http::header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (axum::http::header::CONTENT_DISPOSITION, "attachment; filename=\"audit-log.csv\""),
        ];
        return Ok((headers, body).into_response());
    }
    Ok(Json(audit::search(&s.db, &query).await?).into_response())
}

/// `format=csv` beside the filters (a separate extractor: serde's flatten would read numbers as strings).
#[derive(serde::Deserialize)]
pub struct Format {
    pub format: Option<String>,
}

/// `GET /logs/errors?errorType&unresolvedOnly&page&pageSize` (admins).
pub async fn errors(
    State(s): State<AppState>,
    caller: Caller,
    crate::server::error::ApiQuery(q): crate::server::error::ApiQuery<crate::app::types::ErrorQuery>,
) -> Result<Json<crate::app::types::ErrorPage>, AppError> {
    caller.require_admin()?;
    Ok(Json(crate::server::errors_log::search(&s.db, &q).await?))
}

/// `POST /logs/errors/{id}/resolve` (admins).
pub async fn resolve_error(
    State(s): State<AppState>,
    caller: Caller,
    crate::server::error::ApiPath(id): crate::server::error::ApiPath<i64>,
) -> Result<Json<serde_json::Value>, AppError> {
    caller.require_admin()?;
    if !crate::server::errors_log::resolve(&s.db, id, s.clock.now_ms()).await? {
        return Err(AppError::not_found(format!("ข้อผิดพลาดที่ยังไม่แก้ไขรหัส {id}"), format!("unresolved error {id}")));
    }
    Ok(Json(serde_json::json!({ "resolved": id })))
}
