//! REST: the requirements' paths (docs/rules/api.md#the-numbering-endpoints). Clients written against the original documents call these; each is an
//! alias of one of today's endpoints and answers as it does (same checks, same bodies, same errors), so the
//! rules stay in one place. The one new answer is the metrics summary, which the requirements describe and Prometheus'
//! `/metrics` does not give in one JSON document.

use axum::extract::{Request, State};
use axum::response::Response;
use axum::Json;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::contract::{CounterView, MetricsSummary, TemplateId};
use crate::numbering::CounterId;
use crate::server::admin_ops::http::ResetRequestErrors;
use crate::server::admin_ops::http::{self as counters, CountersQuery};
use crate::server::admin_ops::{self, ResetRequestView};
use crate::server::auth::Caller;
use crate::server::error::ImportErrors;
use crate::server::error::ImportRejected;
use crate::server::error::{ApiJson, ApiPath, ApiQuery, AppError, ByIdErrors, SignedInErrors};
use crate::server::import::http::{self as import, ImportBody, ImportQuery};
use crate::server::numbering::idempotency::{KeyHeader, KeyParam};
use crate::server::numbering::Engine;
use crate::server::workflow::Envelope;

/// The requirements' paths (under `/api/v1`).
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    std::sync::Arc<crate::server::auth::Access>: axum::extract::FromRef<S>,
    std::sync::Arc<Engine>: axum::extract::FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(sequences))
        .routes(routes!(bulk_import))
        .routes(routes!(reset_counter))
        .routes(routes!(metrics_summary))
        .routes(routes!(admin_metrics))
        .routes(routes!(admin_manual_override))
        .routes(routes!(admin_void_and_replace))
        .routes(routes!(admin_cancel))
        .routes(routes!(admin_bulk_import))
}

// ---- the DMS's admin endpoints under /admin/document-numbering ----

/// `GET /admin/document-numbering/metrics` — as `GET /document-numbering/metrics`.
#[utoipa::path(get, path = "/admin/document-numbering/metrics", operation_id = "admin_metrics_seed_path",
    responses((status = 200, body = MetricsSummary, description = "as GET /document-numbering/metrics"), SignedInErrors),
    tag = "seed paths")]
pub(crate) async fn admin_metrics(s: State<std::sync::Arc<Engine>>, caller: Caller) -> Result<Json<MetricsSummary>, AppError> {
    metrics_summary(s, caller).await
}

/// `POST /admin/document-numbering/manual-override` — as `POST /document-numbering/manual-override`.
#[utoipa::path(post, path = "/admin/document-numbering/manual-override", operation_id = "admin_manual_override_seed_path",
    request_body = counters::OverrideBody,
    responses((status = 200, body = admin_ops::OverrideResult, description = "as POST /document-numbering/manual-override"), counters::AdminNumberErrors),
    tag = "seed paths")]
pub(crate) async fn admin_manual_override(
    s: State<std::sync::Arc<Engine>>,
    caller: Caller,
    b: ApiJson<counters::OverrideBody>,
) -> Result<Json<admin_ops::OverrideResult>, AppError> {
    counters::manual_override(s, caller, b).await
}

/// `POST /admin/document-numbering/void-and-replace` — as `POST /document-numbering/void-and-replace`.
#[utoipa::path(post, path = "/admin/document-numbering/void-and-replace", operation_id = "admin_void_and_replace_seed_path",
    request_body = counters::VoidRequest, params(KeyParam),
    responses((status = 200, body = admin_ops::VoidResult, description = "as POST /document-numbering/void-and-replace"), counters::AdminNumberErrors),
    tag = "seed paths")]
pub(crate) async fn admin_void_and_replace(
    s: State<std::sync::Arc<Engine>>,
    caller: Caller,
    key: KeyHeader,
    b: ApiJson<counters::NumberBody>,
) -> Result<Json<admin_ops::VoidResult>, AppError> {
    counters::void_and_replace(s, caller, key, b).await
}

/// `POST /admin/document-numbering/cancel` — the seed's admin "cancel a number": as `POST /document-numbering/void`.
#[utoipa::path(post, path = "/admin/document-numbering/cancel", operation_id = "admin_cancel_seed_path", request_body = counters::VoidRequest,
    responses((status = 200, body = crate::contract::StatusResult, description = "as POST /document-numbering/void"), counters::AdminNumberErrors),
    tag = "seed paths")]
pub(crate) async fn admin_cancel(
    s: State<std::sync::Arc<Engine>>,
    caller: Caller,
    b: ApiJson<counters::NumberBody>,
) -> Result<Json<crate::contract::StatusResult>, AppError> {
    counters::void_number(s, caller, b).await
}

/// `POST /admin/document-numbering/bulk-import` — as `POST /document-numbering/import`.
#[utoipa::path(post, path = "/admin/document-numbering/bulk-import", operation_id = "admin_bulk_import_seed_path", params(ImportQuery),
    request_body(content((ImportBody = "application/json"), (String = "text/csv")), description = "as POST /document-numbering/import"),
    responses(
        (status = 200, body = crate::contract::import::ImportReport, description = "as POST /document-numbering/import"),
        (status = 400, body = ImportRejected),
        ImportErrors,
    ),
    tag = "seed paths")]
pub(crate) async fn admin_bulk_import(
    s: State<std::sync::Arc<Engine>>,
    caller: Caller,
    q: ApiQuery<ImportQuery>,
    request: Request,
) -> Result<Response, AppError> {
    import::import(s, caller, q, request).await
}

/// `GET /document-numbering/sequences` — the requirements' name of `GET /document-numbering/counters`.
#[utoipa::path(get, path = "/document-numbering/sequences", operation_id = "sequences", params(CountersQuery),
    responses((status = 200, body = [CounterView], description = "as GET /document-numbering/counters"), ByIdErrors),
    tag = "seed paths")]
pub(crate) async fn sequences(
    s: State<std::sync::Arc<Engine>>,
    caller: Caller,
    q: ApiQuery<CountersQuery>,
) -> Result<Json<Vec<CounterView>>, AppError> {
    counters::list_counters(s, caller, q).await
}

/// `POST /document-numbering/bulk-import` — the requirements' name of `POST /document-numbering/import`.
#[utoipa::path(post, path = "/document-numbering/bulk-import", operation_id = "bulk_import_seed_path", params(ImportQuery),
    request_body(content((ImportBody = "application/json"), (String = "text/csv")), description = "as POST /document-numbering/import"),
    responses(
        (status = 200, body = crate::contract::import::ImportReport, description = "as POST /document-numbering/import"),
        (status = 400, body = ImportRejected),
        ImportErrors,
    ),
    tag = "seed paths")]
pub(crate) async fn bulk_import(
    s: State<std::sync::Arc<Engine>>,
    caller: Caller,
    q: ApiQuery<ImportQuery>,
    request: Request,
) -> Result<Response, AppError> {
    import::import(s, caller, q, request).await
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ResetCounterBody {
    /// A counter numbered under this configuration (its project, and its type unless the configuration is the
    /// project default).
    pub(crate) counter_id: CounterId,
    /// Default 0.
    #[schema(minimum = 0)]
    pub(crate) new_value: Option<i64>,
    #[schema(schema_with = crate::contract::reset_reason_schema)]
    pub(crate) reason: String,
}

/// `POST /document-numbering/configs/{id}/reset-counter` — the requirements' way to ask for a counter reset: as
/// `POST /document-numbering/counters/{counterId}/reset-requests`, for a counter of configuration `id`. The reset
/// itself waits for a second super admin's approval (docs/rules/numbering.md#counter-resets).
#[utoipa::path(post, path = "/document-numbering/configs/{id}/reset-counter", operation_id = "reset_counter", params(("id" = i64, Path,)),
    request_body = ResetCounterBody,
    responses(
        (status = 200, body = Envelope<ResetRequestView>, description = "the request in the workflow envelope"),
        ResetRequestErrors,
    ),
    tag = "seed paths")]
pub(crate) async fn reset_counter(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiPath(config_id): ApiPath<TemplateId>,
    ApiJson(b): ApiJson<ResetCounterBody>,
) -> Result<Json<Envelope<ResetRequestView>>, AppError> {
    Ok(Json(admin_ops::request_reset_of_config(&s, &caller, config_id, b.counter_id, b.new_value, &b.reason).await?))
}

/// `GET /document-numbering/metrics` — today's numbers per type, lock waits, retries, fallbacks, Redis, and the
/// fullest counters (admins; a project admin sees their projects).
#[utoipa::path(get, path = "/document-numbering/metrics", operation_id = "metrics_summary",
    responses((status = 200, body = MetricsSummary), SignedInErrors),
    tag = "seed paths")]
pub(crate) async fn metrics_summary(State(s): State<std::sync::Arc<Engine>>, caller: Caller) -> Result<Json<MetricsSummary>, AppError> {
    Ok(Json(admin_ops::summary::summary(&s, &caller).await?))
}
