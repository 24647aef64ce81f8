//! REST: audit-chain verification, the audit log and the error log (admins: the services check).

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::contract::{AuditPage, AuditQuery, ErrorPage, ErrorQuery};
use crate::server::audit::{self, VerifyReport};
use crate::server::auth::Caller;
use crate::server::error::{ApiPath, ApiQuery, AppError, ErrorBody};
use crate::server::{errors_log, AppState};

/// The audit and error-log routes (under `/api/v1`).
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(verify)).routes(routes!(search)).routes(routes!(errors)).routes(routes!(resolve_error))
}

#[utoipa::path(get, path = "/document-numbering/logs/audit/verify",
    responses((status = 200, body = VerifyReport), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)), tag = "audit")]
pub async fn verify(State(s): State<AppState>, caller: Caller) -> Result<Json<VerifyReport>, AppError> {
    Ok(Json(audit::verify_for(&s, &caller).await?))
}

/// `GET /logs/audit?from&to&user&operation&number&projectId&page&pageSize[&format=csv]` (admins).
#[utoipa::path(get, path = "/document-numbering/logs/audit", params(AuditQuery, Format),
    responses(
        (status = 200, description = "a page of audit rows, or (format=csv) the matching rows as CSV",
            content((AuditPage = "application/json"), (String = "text/csv"))),
        (status = 400, body = ErrorBody, description = "a malformed filter"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
    ),
    tag = "audit")]
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
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Format {
    /// `csv` for a CSV export (the same filters, every matching row)
    pub format: Option<String>,
}

/// `GET /logs/errors?errorType&unresolvedOnly&page&pageSize` (admins).
#[utoipa::path(get, path = "/document-numbering/logs/errors", params(ErrorQuery),
    responses((status = 200, body = ErrorPage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)), tag = "audit")]
pub async fn errors(State(s): State<AppState>, caller: Caller, ApiQuery(q): ApiQuery<ErrorQuery>) -> Result<Json<ErrorPage>, AppError> {
    Ok(Json(errors_log::search(&s, &caller, &q).await?))
}

/// `POST /logs/errors/{id}/resolve` (admins).
#[utoipa::path(post, path = "/document-numbering/logs/errors/{id}/resolve", params(("id" = i64, Path,)),
    responses(
        (status = 200, body = Resolved, description = "marked resolved"),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ),
    tag = "audit")]
pub async fn resolve_error(State(s): State<AppState>, caller: Caller, ApiPath(id): ApiPath<i64>) -> Result<Json<Resolved>, AppError> {
    errors_log::resolve(&s, &caller, id).await?;
    Ok(Json(Resolved { resolved: id }))
}

/// `{"resolved": id}`
#[derive(Serialize, ToSchema)]
pub struct Resolved {
    pub resolved: i64,
}
