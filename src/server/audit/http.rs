//! REST: audit-chain verification, the audit log and the error log (admins: the services check).

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

use crate::contract::{AuditQuery, ErrorPage, ErrorQuery};
use crate::server::audit::{self, VerifyReport};
use crate::server::auth::Caller;
use crate::server::error::{ApiPath, ApiQuery, AppError};
use crate::server::{errors_log, AppState};

/// The audit and error-log routes (under `/api/v1`).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/document-numbering/logs/audit/verify", get(verify))
        .route("/document-numbering/logs/audit", get(search))
        .route("/document-numbering/logs/errors", get(errors))
        .route("/document-numbering/logs/errors/{id}/resolve", post(resolve_error))
}

#[utoipa::path(get, path = "/api/v1/document-numbering/logs/audit/verify",
    responses((status = 200, body = VerifyReport), (status = 403, body = crate::server::error::ErrorBody)), tag = "audit")]
pub async fn verify(State(s): State<AppState>, caller: Caller) -> Result<Json<VerifyReport>, AppError> {
    Ok(Json(audit::verify_for(&s, &caller).await?))
}

/// `GET /logs/audit?from&to&user&operation&number&projectId&page&pageSize[&format=csv]` (admins).
#[utoipa::path(get, path = "/api/v1/document-numbering/logs/audit", params(("from" = Option<String>, Query,), ("to" = Option<String>, Query,), ("user" = Option<String>, Query,), ("operation" = Option<String>, Query,), ("number" = Option<String>, Query, description = "a number or its beginning"), ("projectId" = Option<i64>, Query,), ("page" = Option<u32>, Query,), ("pageSize" = Option<u32>, Query,), ("format" = Option<String>, Query, description = "csv for a CSV export")), responses((status = 200, description = "a page of audit rows, or CSV"), (status = "4XX", body = crate::server::error::ErrorBody)), tag = "audit")]
pub async fn search(
    State(s): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<AuditQuery>,
    ApiQuery(format): ApiQuery<Format>,
) -> Result<Response, AppError> {
    if format.format.as_deref() == Some("csv") {
        let body = audit::export_csv(&s, &caller, &query).await?;
        let headers = [
            (axum::http::header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (axum::http::header::CONTENT_DISPOSITION, "attachment; filename=\"audit-log.csv\""),
        ];
        return Ok((headers, body).into_response());
    }
    Ok(Json(audit::search(&s, &caller, &query).await?).into_response())
}

/// `format=csv` beside the filters (a separate extractor: serde's flatten would read numbers as strings).
#[derive(serde::Deserialize)]
pub struct Format {
    pub format: Option<String>,
}

/// `GET /logs/errors?errorType&unresolvedOnly&page&pageSize` (admins).
#[utoipa::path(get, path = "/api/v1/document-numbering/logs/errors", params(("errorType" = Option<String>, Query,), ("unresolvedOnly" = Option<bool>, Query,), ("page" = Option<u32>, Query,), ("pageSize" = Option<u32>, Query,)), responses((status = 200, description = "a page of the error log"), (status = "4XX", body = crate::server::error::ErrorBody)), tag = "audit")]
pub async fn errors(State(s): State<AppState>, caller: Caller, ApiQuery(q): ApiQuery<ErrorQuery>) -> Result<Json<ErrorPage>, AppError> {
    Ok(Json(errors_log::search(&s, &caller, &q).await?))
}

/// `POST /logs/errors/{id}/resolve` (admins).
#[utoipa::path(post, path = "/api/v1/document-numbering/logs/errors/{id}/resolve", params(("id" = i64, Path,)), responses((status = 200, description = "marked resolved"), (status = "4XX", body = crate::server::error::ErrorBody)), tag = "audit")]
pub async fn resolve_error(State(s): State<AppState>, caller: Caller, ApiPath(id): ApiPath<i64>) -> Result<Json<serde_json::Value>, AppError> {
    errors_log::resolve(&s, &caller, id).await?;
    Ok(Json(serde_json::json!({ "resolved": id })))
}
