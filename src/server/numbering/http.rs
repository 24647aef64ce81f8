//! REST endpoints of the numbering operations (docs/rules/api.md#the-numbering-endpoints). Thin: find the caller, call the service, answer.

use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use utoipa::ToSchema;

use super::idempotency::{KeyHeader, KeyParam};
use super::Numbering;
use crate::contract::{
    AnyNumberRequest, BlockDetail, BlockRequest, BlockResult, BlockSummary, GenerateResult, PreviewResult, ReservationResult, StatusResult,
};
use crate::server::auth::Access;
use crate::server::auth::Caller;
use crate::server::error::{error_set, SignedInErrors, FAILURES, INPUT, SIGNED_IN};
use crate::server::error::{ApiJson, ApiPath, AppError};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The numbering routes (under `/api/v1`).
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    std::sync::Arc<Access>: axum::extract::FromRef<S>,
    std::sync::Arc<Numbering>: axum::extract::FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(preview))
        .routes(routes!(reserve))
        .routes(routes!(reserve_block))
        .routes(routes!(blocks))
        .routes(routes!(block))
        .routes(routes!(confirm))
        .routes(routes!(cancel))
        .routes(routes!(generate))
}

error_set!(
    /// Preview, reserve, generate: the parts may be unknown, the template unusable, the counter full or busy.
    pub NumberErrors: FAILURES, SIGNED_IN, INPUT;
        NotFound, ConfigNotFound, InvalidFormat, SequenceExhausted, DuplicateNumber, VersionConflict, WfInvalidTransition, RateLimited, LockTimeout
);
error_set!(
    /// Reserve, generate: as [`NumberErrors`], and an `Idempotency-Key` reused or still in flight.
    pub KeyedNumberErrors: FAILURES, SIGNED_IN, INPUT;
        NotFound, ConfigNotFound, InvalidFormat, SequenceExhausted, DuplicateNumber, VersionConflict, WfInvalidTransition, RateLimited, LockTimeout,
        IdempotencyKeyReused, IdempotencyInProgress
);
error_set!(
    /// Confirm, cancel: the reservation may be unknown, another caller's, or past the state the action needs.
    pub ReservationErrors: FAILURES, SIGNED_IN, INPUT;
        NotFound, AlreadyConfirmed, ReservationCancelled, ReservationExpired, DuplicateNumber, VersionConflict, WfInvalidTransition, RateLimited,
        LockTimeout, IdempotencyKeyReused, IdempotencyInProgress
);

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ConfirmBody {
    #[schema(schema_with = crate::contract::lenient::schema::reservation_token)]
    pub(crate) token: String,
    #[schema(schema_with = crate::contract::lenient::schema::document_id)]
    pub(crate) document_id: String,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CancelBody {
    #[schema(schema_with = crate::contract::lenient::schema::reservation_token)]
    pub(crate) token: String,
    #[schema(schema_with = crate::contract::lenient::schema::optional_reason)]
    pub(crate) reason: Option<String>,
}

#[utoipa::path(post, path = "/document-numbering/preview", request_body = AnyNumberRequest,
    responses((status = 200, body = PreviewResult), NumberErrors),
    tag = "numbering")]
pub(crate) async fn preview(
    State(s): State<std::sync::Arc<Numbering>>,
    caller: Caller,
    ApiJson(AnyNumberRequest(req)): ApiJson<AnyNumberRequest>,
) -> Result<Json<PreviewResult>, AppError> {
    Ok(Json(super::preview(&s, &caller, &req).await?))
}

#[utoipa::path(post, path = "/document-numbering/reserve", request_body = AnyNumberRequest, params(KeyParam),
    responses((status = 200, body = ReservationResult), KeyedNumberErrors),
    tag = "numbering")]
pub(crate) async fn reserve(
    State(s): State<std::sync::Arc<Numbering>>,
    caller: Caller,
    KeyHeader(key): KeyHeader,
    ApiJson(AnyNumberRequest(req)): ApiJson<AnyNumberRequest>,
) -> Result<Json<ReservationResult>, AppError> {
    Ok(Json(super::reserve(&s, &caller, &req, key.as_ref()).await?))
}

#[utoipa::path(post, path = "/document-numbering/reserve-block", request_body = BlockRequest, params(KeyParam),
    responses((status = 200, body = BlockResult), KeyedNumberErrors),
    tag = "numbering")]
pub(crate) async fn reserve_block(
    State(s): State<std::sync::Arc<Numbering>>,
    caller: Caller,
    KeyHeader(key): KeyHeader,
    ApiJson(body): ApiJson<BlockRequest>,
) -> Result<Json<BlockResult>, AppError> {
    let block = super::BlockAsk { count: body.count, hold_until: body.hold_until, holder: body.holder };
    Ok(Json(super::reserve_block(&s, &caller, &body.request, &block, key.as_ref()).await?))
}

error_set!(
    /// One block: signed in; unknown, or not the caller's to see.
    pub BlockErrors: FAILURES, SIGNED_IN;
        NotFound
);

/// `GET /document-numbering/blocks`: the newest blocks the caller may see (its own; a project admin's projects'; a
/// super admin's, all), at most 200.
#[utoipa::path(get, path = "/document-numbering/blocks",
    responses((status = 200, body = Vec<BlockSummary>), SignedInErrors),
    tag = "numbering")]
pub(crate) async fn blocks(State(s): State<std::sync::Arc<Numbering>>, caller: Caller) -> Result<Json<Vec<BlockSummary>>, AppError> {
    Ok(Json(super::blocks::list(&s.engine, &caller).await?))
}

/// `GET /document-numbering/blocks/{blockId}`: a block and its numbers, with their tokens for the caller who
/// reserved it.
#[utoipa::path(get, path = "/document-numbering/blocks/{blockId}", params(("blockId" = String, Path,)),
    responses((status = 200, body = BlockDetail), BlockErrors),
    tag = "numbering")]
pub(crate) async fn block(
    State(s): State<std::sync::Arc<Numbering>>,
    caller: Caller,
    ApiPath(block_id): ApiPath<String>,
) -> Result<Json<BlockDetail>, AppError> {
    Ok(Json(super::blocks::detail(&s.engine, &caller, &block_id).await?))
}

#[utoipa::path(post, path = "/document-numbering/confirm", request_body = ConfirmBody, params(KeyParam),
    responses((status = 200, body = StatusResult), ReservationErrors),
    tag = "numbering")]
pub(crate) async fn confirm(
    State(s): State<std::sync::Arc<Numbering>>,
    caller: Caller,
    KeyHeader(key): KeyHeader,
    ApiJson(body): ApiJson<ConfirmBody>,
) -> Result<Json<StatusResult>, AppError> {
    Ok(Json(super::confirm(&s, &caller, &body.token, &body.document_id, key.as_ref()).await?))
}

#[utoipa::path(post, path = "/document-numbering/cancel", request_body = CancelBody, params(KeyParam),
    responses((status = 200, body = StatusResult), ReservationErrors),
    tag = "numbering")]
pub(crate) async fn cancel(
    State(s): State<std::sync::Arc<Numbering>>,
    caller: Caller,
    KeyHeader(key): KeyHeader,
    ApiJson(body): ApiJson<CancelBody>,
) -> Result<Json<StatusResult>, AppError> {
    Ok(Json(super::cancel(&s, &caller, &body.token, body.reason.as_deref(), key.as_ref()).await?))
}

#[utoipa::path(post, path = "/documents/{documentId}/generate-number", request_body = AnyNumberRequest,
    params(("documentId" = String, Path, description = "the DMS document id: 1–100 characters (trimmed), no control characters",
        pattern = r"^[^\S\x1c-\x1f]*[^\s\x00-\x1f\x7f-\x9f]([^\x00-\x1f\x7f-\x9f]{0,98}[^\s\x00-\x1f\x7f-\x9f])?[^\S\x1c-\x1f]*$"), KeyParam),
    responses((status = 200, body = GenerateResult), KeyedNumberErrors),
    tag = "numbering")]
pub(crate) async fn generate(
    State(s): State<std::sync::Arc<Numbering>>,
    caller: Caller,
    ApiPath(document_id): ApiPath<String>,
    KeyHeader(key): KeyHeader,
    ApiJson(AnyNumberRequest(req)): ApiJson<AnyNumberRequest>,
) -> Result<Json<GenerateResult>, AppError> {
    Ok(Json(super::generate(&s, &caller, &document_id, &req, key.as_ref()).await?))
}
