//! REST endpoints of the numbering operations (SPEC §9). Thin: find the caller, call the service, answer.

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::contract::{NumberRequest, PreviewResult, ReservationResult, StatusResult};
use crate::server::auth::Caller;
use crate::server::error::{ApiJson, ApiPath, AppError, ErrorBody};
use crate::server::AppState;

/// The numbering routes (under `/api/v1`).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/document-numbering/preview", post(preview))
        .route("/document-numbering/reserve", post(reserve))
        .route("/document-numbering/confirm", post(confirm))
        .route("/document-numbering/cancel", post(cancel))
        .route("/documents/{document_id}/generate-number", post(generate))
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

#[utoipa::path(post, path = "/api/v1/document-numbering/preview", request_body = NumberRequest,
    responses((status = 200, body = PreviewResult), (status = 429, body = ErrorBody), (status = "4XX", body = ErrorBody)), tag = "numbering")]
pub async fn preview(State(s): State<AppState>, caller: Caller, ApiJson(req): ApiJson<NumberRequest>) -> Result<Json<PreviewResult>, AppError> {
    Ok(Json(super::preview(&s, &caller, &req).await?))
}

#[utoipa::path(post, path = "/api/v1/document-numbering/reserve", request_body = NumberRequest,
    responses((status = 200, body = ReservationResult), (status = "4XX", body = ErrorBody), (status = 503, body = ErrorBody)), tag = "numbering")]
pub async fn reserve(State(s): State<AppState>, caller: Caller, ApiJson(req): ApiJson<NumberRequest>) -> Result<Json<ReservationResult>, AppError> {
    Ok(Json(super::reserve(&s, &caller, &req).await?))
}

#[utoipa::path(post, path = "/api/v1/document-numbering/confirm", request_body = ConfirmBody,
    responses((status = 200, body = StatusResult), (status = 410, body = ErrorBody), (status = "4XX", body = ErrorBody)), tag = "numbering")]
pub async fn confirm(State(s): State<AppState>, caller: Caller, ApiJson(body): ApiJson<ConfirmBody>) -> Result<Json<StatusResult>, AppError> {
    Ok(Json(super::confirm(&s, &caller, &body.token, &body.document_id).await?))
}

#[utoipa::path(post, path = "/api/v1/document-numbering/cancel", request_body = CancelBody,
    responses((status = 200, body = StatusResult), (status = "4XX", body = ErrorBody)), tag = "numbering")]
pub async fn cancel(State(s): State<AppState>, caller: Caller, ApiJson(body): ApiJson<CancelBody>) -> Result<Json<StatusResult>, AppError> {
    Ok(Json(super::cancel(&s, &caller, &body.token, body.reason.as_deref()).await?))
}

#[utoipa::path(post, path = "/api/v1/documents/{documentId}/generate-number", request_body = NumberRequest,
    params(("documentId" = String, Path, description = "the DMS document id")),
    responses((status = 200, body = GenerateResult), (status = "4XX", body = ErrorBody), (status = 503, body = ErrorBody)), tag = "numbering")]
pub async fn generate(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath(document_id): ApiPath<String>,
    ApiJson(req): ApiJson<NumberRequest>,
) -> Result<Json<GenerateResult>, AppError> {
    let (document_number, generated_at) = super::generate(&s, &caller, &document_id, &req).await?;
    Ok(Json(GenerateResult { document_number, generated_at }))
}
