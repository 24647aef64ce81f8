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
#[utoipa::path(get, path = "/api/v1/document-numbering/logs/audit", params(("from" = Option<String>, Query,), ("to" = Option<String>, Query,), ("user" = Option<String>, Query,), ("operation" = Option<String>, Query,), ("number" = Option<String>, Query, description = "a number or its beginning"), ("projectId" = Option<i64>, Query,), ("page" = Option<u32>, Query,), ("pageSize" = Option<u32>, Query,), ("format" = Option<String>, Query, description = "csv for a CSV export")), responses((status = 200, description = "a page of audit rows, or CSV"), (status = "4XX", body = crate::server::error::ErrorBody)), tag = "audit")]
pub async fn search(
    State(s): State<AppState>,
    caller: Caller,
    crate::server::error::ApiQuery(query): crate::server::error::ApiQuery<crate::contract::AuditQuery>,
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
#[utoipa::path(get, path = "/api/v1/document-numbering/logs/errors", params(("errorType" = Option<String>, Query,), ("unresolvedOnly" = Option<bool>, Query,), ("page" = Option<u32>, Query,), ("pageSize" = Option<u32>, Query,)), responses((status = 200, description = "a page of the error log"), (status = "4XX", body = crate::server::error::ErrorBody)), tag = "audit")]
pub async fn errors(
    State(s): State<AppState>,
    caller: Caller,
    crate::server::error::ApiQuery(q): crate::server::error::ApiQuery<crate::contract::ErrorQuery>,
) -> Result<Json<crate::contract::ErrorPage>, AppError> {
    caller.require_admin()?;
    Ok(Json(crate::server::errors_log::search(&s.db, &q).await?))
}

/// `POST /logs/errors/{id}/resolve` (admins).
#[utoipa::path(post, path = "/api/v1/document-numbering/logs/errors/{id}/resolve", params(("id" = i64, Path,)), responses((status = 200, description = "marked resolved"), (status = "4XX", body = crate::server::error::ErrorBody)), tag = "audit")]
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
