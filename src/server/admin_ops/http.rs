//! REST: counter browser, counter reset requests, revise, void-and-replace, manual override (SPEC §5, §9).
//! Thin: parse, call `admin_ops`, answer.

use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{CounterNumbers, CounterView, IssuedNumber, NumberRef, Override, OverrideResult, ResetRequestView, VoidResult};
use crate::server::auth::Caller;
use crate::server::error::{ApiJson, ApiPath, ApiQuery, AppError, ErrorBody};
use crate::server::numbering::Engine;
use crate::server::workflow::Envelope;

/// The counter browser, reset-request and super-admin operation routes (under `/api/v1`).
pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    std::sync::Arc<crate::server::auth::Access>: axum::extract::FromRef<S>,
    std::sync::Arc<Engine>: axum::extract::FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list_counters))
        .routes(routes!(counter_numbers))
        .routes(routes!(request_reset))
        .routes(routes!(revise))
        .routes(routes!(void_and_replace))
        .routes(routes!(manual_override))
        .routes(routes!(list_reset_requests))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct CountersQuery {
    pub project_id: Option<i64>,
    pub correspondence_type_id: Option<i64>,
    /// A.D. or B.E.
    pub year: Option<i32>,
}

/// `GET /document-numbering/counters?projectId&correspondenceTypeId&year`
#[utoipa::path(get, path = "/document-numbering/counters", params(CountersQuery),
    responses(
        (status = 200, body = [CounterView], description = "counters with last number, maximum and utilization"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
    ),
    tag = "counters")]
pub async fn list_counters(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiQuery(q): ApiQuery<CountersQuery>,
) -> Result<Json<Vec<CounterView>>, AppError> {
    Ok(Json(super::counters(&s, &caller, q.project_id, q.correspondence_type_id, q.year).await?))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct NumbersQuery {
    pub after_sequence: Option<i64>,
    pub limit: Option<i64>,
}

/// `GET /document-numbering/counters/{id}/numbers?afterSequence&limit`
#[utoipa::path(get, path = "/document-numbering/counters/{id}/numbers", params(("id" = i64, Path,), NumbersQuery),
    responses(
        (status = 200, body = CounterNumbers, description = "every number of the counter with its status, and the audit row explaining each missing sequence"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    tag = "counters")]
pub async fn counter_numbers(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiPath(id): ApiPath<i64>,
    ApiQuery(q): ApiQuery<NumbersQuery>,
) -> Result<Json<CounterNumbers>, AppError> {
    Ok(Json(super::counter_numbers(&s, &caller, id, q.after_sequence, q.limit).await?))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResetBody {
    /// Default 0.
    pub new_value: Option<i64>,
    pub reason: String,
}

/// `POST /document-numbering/counters/{id}/reset-requests` `{"newValue"?, "reason"}`
#[utoipa::path(post, path = "/document-numbering/counters/{id}/reset-requests", params(("id" = i64, Path,)), request_body = ResetBody,
    responses(
        (status = 200, body = Envelope<ResetRequestView>, description = "the request in the workflow envelope"),
        (status = 400, body = ErrorBody, description = "malformed body, a reason under 20 characters, a negative value"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "a request for this counter is already open"),
        (status = 413, body = ErrorBody),
    ),
    tag = "counters")]
pub async fn request_reset(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiPath(id): ApiPath<i64>,
    ApiJson(b): ApiJson<ResetBody>,
) -> Result<Json<Envelope<ResetRequestView>>, AppError> {
    Ok(Json(super::request_reset(&s, &caller, id, b.new_value, &b.reason).await?))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ResetListQuery {
    pub state: Option<String>,
    pub counter_id: Option<i64>,
}

/// `GET /workflow/reset-requests?state&counterId`
#[utoipa::path(get, path = "/workflow/reset-requests", params(ResetListQuery),
    responses(
        (status = 200, body = [Envelope<ResetRequestView>], description = "reset requests, each in the workflow envelope"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
    ),
    tag = "workflow")]
pub async fn list_reset_requests(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ResetListQuery>,
) -> Result<Json<Vec<Envelope<ResetRequestView>>>, AppError> {
    Ok(Json(super::reset_requests(&s, &caller, q.state.as_deref(), q.counter_id).await?))
}

/// The number an operation applies to: project and type (by id or code) and its text.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NumberBody {
    pub project_id: Option<i64>,
    pub project_code: Option<String>,
    pub correspondence_type_id: Option<i64>,
    pub correspondence_type_code: Option<String>,
    pub document_number: String,
    /// Revise / void-and-replace: the document the new number is for (default: the original's).
    pub document_id: Option<String>,
    /// Void-and-replace: required.
    pub reason: Option<String>,
}

impl NumberBody {
    fn number(&self) -> NumberRef {
        NumberRef {
            project_id: self.project_id,
            project_code: self.project_code.clone(),
            correspondence_type_id: self.correspondence_type_id,
            correspondence_type_code: self.correspondence_type_code.clone(),
            document_number: self.document_number.clone(),
        }
    }
}

/// `POST /document-numbering/revise`
#[utoipa::path(post, path = "/document-numbering/revise", request_body = NumberBody,
    responses(
        (status = 200, body = IssuedNumber, description = "the next revision of a confirmed number"),
        (status = 400, body = ErrorBody, description = "malformed body, a number the template cannot read (NB006)"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "not allowed (NB007 for super-admin operations)"),
        (status = 404, body = ErrorBody, description = "unknown project, type, counter or number"),
        (status = 409, body = ErrorBody, description = "the number's state does not allow it, a duplicate (NB005), exhausted (NB002), or a version conflict"),
        (status = 413, body = ErrorBody),
        (status = 503, body = ErrorBody, description = "NB003 lock timeout (Retry-After)"),
    ),
    tag = "numbering")]
pub async fn revise(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiJson(b): ApiJson<NumberBody>,
) -> Result<Json<IssuedNumber>, AppError> {
    Ok(Json(super::revise(&s, &caller, &b.number(), b.document_id.as_deref()).await?))
}

/// `POST /document-numbering/void-and-replace`
#[utoipa::path(post, path = "/document-numbering/void-and-replace", request_body = NumberBody,
    responses(
        (status = 200, body = VoidResult, description = "the voided number and its replacement (a reason is required)"),
        (status = 400, body = ErrorBody, description = "malformed body, a number the template cannot read (NB006)"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "not allowed (NB007 for super-admin operations)"),
        (status = 404, body = ErrorBody, description = "unknown project, type, counter or number"),
        (status = 409, body = ErrorBody, description = "the number's state does not allow it, a duplicate (NB005), exhausted (NB002), or a version conflict"),
        (status = 413, body = ErrorBody),
        (status = 503, body = ErrorBody, description = "NB003 lock timeout (Retry-After)"),
    ),
    tag = "numbering")]
pub async fn void_and_replace(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiJson(b): ApiJson<NumberBody>,
) -> Result<Json<VoidResult>, AppError> {
    Ok(Json(super::void_and_replace(&s, &caller, &b.number(), b.reason.as_deref().unwrap_or(""), b.document_id.as_deref()).await?))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OverrideBody {
    pub counter_id: i64,
    /// Register this legacy number …
    pub document_number: Option<String>,
    pub document_id: Option<String>,
    /// … or set the counter to this value (exactly one of the two).
    pub value: Option<i64>,
    pub reason: String,
}

/// `POST /document-numbering/manual-override`
#[utoipa::path(post, path = "/document-numbering/manual-override", request_body = OverrideBody,
    responses(
        (status = 200, body = OverrideResult, description = "super admins only (NB007 otherwise); exactly one of documentNumber or value"),
        (status = 400, body = ErrorBody, description = "malformed body, a number the template cannot read (NB006)"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "not allowed (NB007 for super-admin operations)"),
        (status = 404, body = ErrorBody, description = "unknown project, type, counter or number"),
        (status = 409, body = ErrorBody, description = "the number's state does not allow it, a duplicate (NB005), exhausted (NB002), or a version conflict"),
        (status = 413, body = ErrorBody),
        (status = 503, body = ErrorBody, description = "NB003 lock timeout (Retry-After)"),
    ),
    tag = "numbering")]
pub async fn manual_override(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiJson(b): ApiJson<OverrideBody>,
) -> Result<Json<OverrideResult>, AppError> {
    let what = match (b.document_number, b.value) {
        (Some(document_number), None) => Override::Register { document_number, document_id: b.document_id },
        (None, Some(value)) => Override::SetValue(value),
        _ => {
            return Err(AppError::validation(
                "ระบุอย่างใดอย่างหนึ่ง: เลขที่เอกสาร (documentNumber) หรือค่าตัวนับ (value)",
                "give exactly one of documentNumber or value",
            ))
        }
    };
    Ok(Json(super::manual_override(&s, &caller, b.counter_id, what, &b.reason).await?))
}
