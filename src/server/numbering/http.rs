//! REST endpoints of the numbering operations (SPEC §9). Thin: find the caller, call the service, answer.

use axum::extract::State;
use axum::Json;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Numbering;
use crate::contract::{NumberRequest, PreviewResult, ReservationResult, StatusResult};
use crate::server::auth::Access;
use crate::server::auth::Caller;
use crate::server::error::{ApiJson, ApiPath, AppError, ErrorBody};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The numbering routes (under `/api/v1`).
pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    std::sync::Arc<Access>: axum::extract::FromRef<S>,
    std::sync::Arc<Numbering>: axum::extract::FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(preview)).routes(routes!(reserve)).routes(routes!(confirm)).routes(routes!(cancel)).routes(routes!(generate))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfirmBody {
    pub token: String,
    pub document_id: String,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CancelBody {
    pub token: String,
    pub reason: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GenerateResult {
    pub document_number: String,
    pub generated_at: DateTime<Utc>,
}

#[utoipa::path(post, path = "/document-numbering/preview", request_body = NumberRequest,
    responses(
        (status = 200, body = PreviewResult),
        (status = 400, body = ErrorBody, description = "malformed body, a missing or unknown part, a bad year (NB006 for a template that cannot be formatted)"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "the token or user may not number this project"),
        (status = 404, body = ErrorBody, description = "an unknown project, type, organization … (NB001: no template)"),
        (status = 409, body = ErrorBody, description = "NB002 sequence exhausted, NB005 duplicate, or a version conflict after retries"),
        (status = 413, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "rate limited (Retry-After)"),
        (status = 503, body = ErrorBody, description = "NB003 lock timeout (Retry-After)"),
    ),
    tag = "numbering")]
pub async fn preview(
    State(s): State<std::sync::Arc<Numbering>>,
    caller: Caller,
    ApiJson(req): ApiJson<NumberRequest>,
) -> Result<Json<PreviewResult>, AppError> {
    Ok(Json(super::preview(&s, &caller, &req).await?))
}

#[utoipa::path(post, path = "/document-numbering/reserve", request_body = NumberRequest,
    responses(
        (status = 200, body = ReservationResult),
        (status = 400, body = ErrorBody, description = "malformed body, a missing or unknown part, a bad year (NB006 for a template that cannot be formatted)"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "the token or user may not number this project"),
        (status = 404, body = ErrorBody, description = "an unknown project, type, organization … (NB001: no template)"),
        (status = 409, body = ErrorBody, description = "NB002 sequence exhausted, NB005 duplicate, or a version conflict after retries"),
        (status = 413, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "rate limited (Retry-After)"),
        (status = 503, body = ErrorBody, description = "NB003 lock timeout (Retry-After)"),
    ),
    tag = "numbering")]
pub async fn reserve(
    State(s): State<std::sync::Arc<Numbering>>,
    caller: Caller,
    ApiJson(req): ApiJson<NumberRequest>,
) -> Result<Json<ReservationResult>, AppError> {
    Ok(Json(super::reserve(&s, &caller, &req).await?))
}

#[utoipa::path(post, path = "/document-numbering/confirm", request_body = ConfirmBody,
    responses(
        (status = 200, body = StatusResult),
        (status = 400, body = ErrorBody, description = "malformed body"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "the reservation is another caller's"),
        (status = 404, body = ErrorBody, description = "unknown token"),
        (status = 409, body = ErrorBody, description = "the reservation is no longer RESERVED"),
        (status = 410, body = ErrorBody, description = "NB004 reservation expired"),
        (status = 413, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "rate limited (Retry-After)"),
        (status = 503, body = ErrorBody, description = "NB003 lock timeout (Retry-After)"),
    ),
    tag = "numbering")]
pub async fn confirm(
    State(s): State<std::sync::Arc<Numbering>>,
    caller: Caller,
    ApiJson(body): ApiJson<ConfirmBody>,
) -> Result<Json<StatusResult>, AppError> {
    Ok(Json(super::confirm(&s, &caller, &body.token, &body.document_id).await?))
}

#[utoipa::path(post, path = "/document-numbering/cancel", request_body = CancelBody,
    responses(
        (status = 200, body = StatusResult),
        (status = 400, body = ErrorBody, description = "malformed body"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "the reservation is another caller's"),
        (status = 404, body = ErrorBody, description = "unknown token"),
        (status = 409, body = ErrorBody, description = "the reservation is no longer RESERVED"),
        (status = 410, body = ErrorBody, description = "NB004 reservation expired"),
        (status = 413, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "rate limited (Retry-After)"),
        (status = 503, body = ErrorBody, description = "NB003 lock timeout (Retry-After)"),
    ),
    tag = "numbering")]
pub async fn cancel(
    State(s): State<std::sync::Arc<Numbering>>,
    caller: Caller,
    ApiJson(body): ApiJson<CancelBody>,
) -> Result<Json<StatusResult>, AppError> {
    Ok(Json(super::cancel(&s, &caller, &body.token, body.reason.as_deref()).await?))
}

#[utoipa::path(post, path = "/documents/{documentId}/generate-number", request_body = NumberRequest,
    params(("documentId" = String, Path, description = "the DMS document id")),
    responses(
        (status = 200, body = GenerateResult),
        (status = 400, body = ErrorBody, description = "malformed body, a missing or unknown part, a bad year (NB006 for a template that cannot be formatted)"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "the token or user may not number this project"),
        (status = 404, body = ErrorBody, description = "an unknown project, type, organization … (NB001: no template)"),
        (status = 409, body = ErrorBody, description = "NB002 sequence exhausted, NB005 duplicate, or a version conflict after retries"),
        (status = 413, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "rate limited (Retry-After)"),
        (status = 503, body = ErrorBody, description = "NB003 lock timeout (Retry-After)"),
    ),
    tag = "numbering")]
pub async fn generate(
    State(s): State<std::sync::Arc<Numbering>>,
    caller: Caller,
    ApiPath(document_id): ApiPath<String>,
    ApiJson(req): ApiJson<NumberRequest>,
) -> Result<Json<GenerateResult>, AppError> {
    let (document_number, generated_at) = super::generate(&s, &caller, &document_id, &req).await?;
    Ok(Json(GenerateResult { document_number, generated_at }))
}
