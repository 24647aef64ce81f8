//! REST endpoints of the numbering operations (SPEC §9). Thin: check the caller, call the engine.

use std::time::Instant;

use axum::extract::State;
use axum::Json;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::contract::{NumberRequest, PreviewResult, ReservationResult, StatusResult};
use crate::server::auth::Caller;
use crate::server::error::{ApiJson, ApiPath, AppError, ErrorBody};
use crate::server::{metrics, AppState};

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
    responses((status = 200, body = PreviewResult), (status = "4XX", body = ErrorBody)), tag = "numbering")]
pub async fn preview(State(s): State<AppState>, caller: Caller, ApiJson(req): ApiJson<NumberRequest>) -> Result<Json<PreviewResult>, AppError> {
    Ok(Json(s.engine.preview(&caller, &req).await?))
}

#[utoipa::path(post, path = "/api/v1/document-numbering/reserve", request_body = NumberRequest,
    responses((status = 200, body = ReservationResult), (status = "4XX", body = ErrorBody), (status = 503, body = ErrorBody)), tag = "numbering")]
pub async fn reserve(State(s): State<AppState>, caller: Caller, ApiJson(req): ApiJson<NumberRequest>) -> Result<Json<ReservationResult>, AppError> {
    s.limits.check(&caller).await?;
    let started = Instant::now();
    let result = s.engine.reserve(&caller, &req).await;
    let type_code = type_label(&s, &req).await;
    metrics::generation(&type_code, metrics::status_of(&result), started.elapsed());
    Ok(Json(result?))
}

#[utoipa::path(post, path = "/api/v1/document-numbering/confirm", request_body = ConfirmBody,
    responses((status = 200, body = StatusResult), (status = 410, body = ErrorBody), (status = "4XX", body = ErrorBody)), tag = "numbering")]
pub async fn confirm(State(s): State<AppState>, caller: Caller, ApiJson(body): ApiJson<ConfirmBody>) -> Result<Json<StatusResult>, AppError> {
    Ok(Json(s.engine.confirm(&caller, &body.token, &body.document_id).await?))
}

#[utoipa::path(post, path = "/api/v1/document-numbering/cancel", request_body = CancelBody,
    responses((status = 200, body = StatusResult), (status = "4XX", body = ErrorBody)), tag = "numbering")]
pub async fn cancel(State(s): State<AppState>, caller: Caller, ApiJson(body): ApiJson<CancelBody>) -> Result<Json<StatusResult>, AppError> {
    Ok(Json(s.engine.cancel(&caller, &body.token, body.reason.as_deref()).await?))
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
    s.limits.check(&caller).await?;
    let started = Instant::now();
    let result = s.engine.generate(&caller, &document_id, &req).await;
    let type_code = type_label(&s, &req).await;
    metrics::generation(&type_code, metrics::status_of(&result), started.elapsed());
    let (document_number, generated_at) = result?;
    Ok(Json(GenerateResult { document_number, generated_at }))
}

/// The correspondence type of a request as a metrics label: its code in the reference data, or `unknown`
/// (never the raw input, so the label's values stay bounded).
async fn type_label(s: &AppState, req: &NumberRequest) -> String {
    match s.reference.get().await {
        Ok(snapshot) => snapshot
            .corr_type(req.correspondence_type_id, req.correspondence_type_code.as_deref())
            .map(|t| t.code.clone())
            .unwrap_or_else(|_| metrics::UNKNOWN.to_string()),
        Err(_) => metrics::UNKNOWN.to_string(),
    }
}
