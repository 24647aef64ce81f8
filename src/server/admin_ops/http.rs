//! REST: counter browser, counter reset requests, revise, void-and-replace, manual override
//! (docs/rules/numbering.md#the-lifecycle-of-a-number, docs/rules/api.md#the-workflow-envelope).
//! Thin: parse, call `admin_ops`, answer.

use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{CounterNumbers, CounterView, IssuedNumber, NumberRef, Override, OverrideResult, ResetRequestView, VoidResult};
use crate::contract::messages::AdminDetail;
use crate::contract::stats::{MAX_STATS_COUNTERS, MAX_STATS_DAYS};
use crate::contract::{CorrespondenceTypeId, CounterId, DailyIssued, ProjectId, StatsQuery, StatusResult, UtilizationHistory, WitnessResume};
use crate::server::auth::Caller;
use crate::server::error::{error_set, FAILURES, INPUT, SIGNED_IN};
use crate::server::error::{ApiJson, ApiPath, ApiQuery, AppError, ByIdErrors, QueryErrors};
use crate::server::numbering::idempotency::{KeyHeader, KeyParam};
use crate::server::numbering::Engine;
use crate::server::workflow::Envelope;

/// The counter browser, reset-request and super-admin operation routes (under `/api/v1`).
pub(crate) fn router<S>() -> OpenApiRouter<S>
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
        .routes(routes!(void_number))
        .routes(routes!(manual_override))
        .routes(routes!(resume_past_witness))
        .routes(routes!(list_reset_requests))
        .routes(routes!(daily_stats))
        .routes(routes!(utilization_stats))
}

error_set!(
    /// A counter reset request: the counter may be unknown, a request already open, the value out of bounds.
    pub ResetRequestErrors: FAILURES, SIGNED_IN, INPUT;
        NotFound, ResetAlreadyPending, ResetAboveLast, ResetBelowConfirmed, WfInvalidTransition, VersionConflict, LockTimeout
);
error_set!(
    /// Revise, void-and-replace, manual override: super admins' writes on a number or a counter.
    pub AdminNumberErrors: FAILURES, SIGNED_IN, INPUT;
        NotFound, ConfigNotFound, InvalidFormat, ManualOverrideNotAllowed, SequenceExhausted, DuplicateNumber, VersionConflict, LockTimeout,
        AlreadyConfirmed, NotConfirmed, ReservationCancelled, ReservationExpired, RevisionExhausted, OverrideBelowIssued, WfInvalidTransition,
        IdempotencyKeyReused, IdempotencyInProgress
);

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct CountersQuery {
    pub(crate) project_id: Option<ProjectId>,
    pub(crate) correspondence_type_id: Option<CorrespondenceTypeId>,
    /// A.D. or B.E.
    pub(crate) year: Option<i32>,
}

/// `GET /document-numbering/counters?projectId&correspondenceTypeId&year`
#[utoipa::path(get, path = "/document-numbering/counters", params(CountersQuery),
    responses(
        (status = 200, body = [CounterView], description = "counters with last number, maximum and utilization"),
        ByIdErrors,
    ),
    tag = "counters")]
pub(crate) async fn list_counters(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiQuery(q): ApiQuery<CountersQuery>,
) -> Result<Json<Vec<CounterView>>, AppError> {
    Ok(Json(super::counters(&s.db, &s.reference, &caller, q.project_id, q.correspondence_type_id, q.year).await?))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct NumbersQuery {
    #[param(minimum = 0)]
    pub(crate) after_sequence: Option<i64>,
    pub(crate) limit: Option<i64>,
}

/// `GET /document-numbering/counters/{id}/numbers?afterSequence&limit`
#[utoipa::path(get, path = "/document-numbering/counters/{id}/numbers", params(("id" = i64, Path,), NumbersQuery),
    responses(
        (status = 200, body = CounterNumbers, description = "every number of the counter with its status, and the audit row explaining each missing sequence"),
        ByIdErrors,
    ),
    tag = "counters")]
pub(crate) async fn counter_numbers(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiPath(id): ApiPath<CounterId>,
    ApiQuery(q): ApiQuery<NumbersQuery>,
) -> Result<Json<CounterNumbers>, AppError> {
    Ok(Json(super::counter_numbers(&s.db, &s.reference, &s.lifecycle, &caller, id, q.after_sequence, q.limit).await?))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ResetBody {
    /// Default 0.
    #[schema(minimum = 0)]
    pub(crate) new_value: Option<i64>,
    #[schema(schema_with = crate::contract::reset_reason_schema)]
    pub(crate) reason: String,
}

/// `POST /document-numbering/counters/{id}/reset-requests` `{"newValue"?, "reason"}`
#[utoipa::path(post, path = "/document-numbering/counters/{id}/reset-requests", params(("id" = i64, Path,)), request_body = ResetBody,
    responses(
        (status = 200, body = Envelope<ResetRequestView>, description = "the request in the workflow envelope"),
        ResetRequestErrors,
    ),
    tag = "counters")]
pub(crate) async fn request_reset(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiPath(id): ApiPath<CounterId>,
    ApiJson(b): ApiJson<ResetBody>,
) -> Result<Json<Envelope<ResetRequestView>>, AppError> {
    Ok(Json(super::request_reset(&s, &caller, id, b.new_value, &b.reason).await?))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ResumeBody {
    #[schema(schema_with = crate::contract::lenient::schema::reason)]
    pub(crate) reason: String,
}

error_set!(
    /// Resuming past the witness: the counter may be unknown, or not behind its witness.
    pub ResumeErrors: FAILURES, SIGNED_IN, INPUT;
        NotFound, WfInvalidTransition, OverrideBelowIssued, VersionConflict, LockTimeout
);

/// `POST /document-numbering/counters/{id}/resume-past-witness` `{"reason"}` (super admins): the counter's database
/// is behind its witness (`COUNTER_BEHIND_WITNESS`); it goes on after the last number the witness saw.
#[utoipa::path(post, path = "/document-numbering/counters/{id}/resume-past-witness", params(("id" = i64, Path,)), request_body = ResumeBody,
    responses((status = 200, body = WitnessResume, description = "the counter resumed, the numbers passed over"), ResumeErrors),
    tag = "counters")]
pub(crate) async fn resume_past_witness(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiPath(id): ApiPath<CounterId>,
    ApiJson(b): ApiJson<ResumeBody>,
) -> Result<Json<WitnessResume>, AppError> {
    Ok(Json(super::resume_past_witness(&s, &caller, id, &b.reason).await?))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct ResetListQuery {
    pub(crate) state: Option<String>,
    pub(crate) counter_id: Option<CounterId>,
}

/// `GET /workflow/reset-requests?state&counterId`
#[utoipa::path(get, path = "/workflow/reset-requests", params(ResetListQuery),
    responses(
        (status = 200, body = [Envelope<ResetRequestView>], description = "reset requests, each in the workflow envelope"),
        QueryErrors,
    ),
    tag = "workflow")]
pub(crate) async fn list_reset_requests(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ResetListQuery>,
) -> Result<Json<Vec<Envelope<ResetRequestView>>>, AppError> {
    Ok(Json(super::reset_requests(&s.db, &caller, q.state.as_deref(), q.counter_id).await?))
}

/// The number an operation applies to: project and type (by id or code) and its text.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct NumberBody {
    pub(crate) project_id: Option<ProjectId>,
    pub(crate) project_code: Option<String>,
    pub(crate) correspondence_type_id: Option<CorrespondenceTypeId>,
    pub(crate) correspondence_type_code: Option<String>,
    #[schema(schema_with = crate::contract::lenient::schema::document_number)]
    pub(crate) document_number: String,
    /// The document the new number is for (default: the original's).
    #[schema(schema_with = crate::contract::lenient::schema::optional_document_id)]
    pub(crate) document_id: Option<String>,
    /// Required to void a number (with or without a replacement); not used by a revision (read for the bodies that
    /// carried it).
    #[schema(schema_with = crate::contract::lenient::schema::optional_reason)]
    pub(crate) reason: Option<String>,
}

/// [`NumberBody`] as the OpenAPI document states it: the project and the type named.
pub(crate) struct ReviseRequest;
impl utoipa::PartialSchema for ReviseRequest {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        crate::contract::lenient::schema::naming_project_and_type(<NumberBody as utoipa::PartialSchema>::schema())
    }
}
impl ToSchema for ReviseRequest {}

/// [`NumberBody`] as the voids (with or without a replacement) read it: the project and the type named, a reason
/// required.
pub(crate) struct VoidRequest;
impl utoipa::PartialSchema for VoidRequest {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::Schema;
        let mut schema = <NumberBody as utoipa::PartialSchema>::schema();
        if let utoipa::openapi::RefOr::T(Schema::Object(o)) = &mut schema {
            o.required.push("reason".into());
            o.properties.insert("reason".into(), crate::contract::lenient::schema::reason());
        }
        crate::contract::lenient::schema::naming_project_and_type(schema)
    }
}
impl ToSchema for VoidRequest {}

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
#[utoipa::path(post, path = "/document-numbering/revise", request_body = ReviseRequest, params(KeyParam),
    responses((status = 200, body = IssuedNumber, description = "the next revision of a confirmed number"), AdminNumberErrors),
    tag = "numbering")]
pub(crate) async fn revise(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    KeyHeader(key): KeyHeader,
    ApiJson(b): ApiJson<NumberBody>,
) -> Result<Json<IssuedNumber>, AppError> {
    Ok(Json(super::revise(&s, &caller, &b.number(), b.document_id.as_deref(), key.as_ref()).await?))
}

/// `POST /document-numbering/void-and-replace`
#[utoipa::path(post, path = "/document-numbering/void-and-replace", request_body = VoidRequest, params(KeyParam),
    responses(
        (status = 200, body = VoidResult, description = "the voided number and its replacement (a reason is required)"),
        AdminNumberErrors,
    ),
    tag = "numbering")]
pub(crate) async fn void_and_replace(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    KeyHeader(key): KeyHeader,
    ApiJson(b): ApiJson<NumberBody>,
) -> Result<Json<VoidResult>, AppError> {
    let reason = b.reason.as_deref().unwrap_or_default();
    Ok(Json(super::void_and_replace(&s, &caller, &b.number(), reason, b.document_id.as_deref(), key.as_ref()).await?))
}

/// `POST /document-numbering/void` (super admins): voids a confirmed number without a replacement (the DMS's admin
/// "cancel"); the number stays on record as VOID and is never issued again. `documentId` is not used.
#[utoipa::path(post, path = "/document-numbering/void", request_body = VoidRequest,
    responses((status = 200, body = StatusResult, description = "the number, now VOID, with its lifecycle"), AdminNumberErrors),
    tag = "numbering")]
pub(crate) async fn void_number(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiJson(b): ApiJson<NumberBody>,
) -> Result<Json<StatusResult>, AppError> {
    Ok(Json(super::void(&s, &caller, &b.number(), b.reason.as_deref().unwrap_or_default()).await?))
}

/// Register a legacy number on a counter, or set the counter to a value: exactly one of the two.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct OverrideBody {
    pub(crate) counter_id: CounterId,
    /// Register this legacy number (with the document it belongs to) …
    pub(crate) document_number: Option<String>,
    pub(crate) document_id: Option<String>,
    /// … or set the counter to this value.
    pub(crate) value: Option<i64>,
    pub(crate) reason: String,
}

/// The two shapes of [`OverrideBody`], each naming the other's fields only as `null` (absent and `null` read alike).
impl utoipa::PartialSchema for OverrideBody {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, OneOfBuilder, SchemaFormat, Type};
        let null = || ObjectBuilder::new().schema_type(Type::Null);
        let shape = |register: bool| {
            let counter_id = ObjectBuilder::new().schema_type(Type::Integer).format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)));
            let object = ObjectBuilder::new()
                .property("counterId", counter_id)
                .required("counterId")
                .property("reason", crate::contract::lenient::schema::reason())
                .required("reason");
            let object = if register {
                object
                    .property("documentNumber", ObjectBuilder::new().schema_type(Type::String))
                    .required("documentNumber")
                    .property("documentId", crate::contract::lenient::schema::optional_document_id())
                    .property("value", null())
                    .description(Some("register this legacy number (with the document it belongs to)"))
            } else {
                let value =
                    ObjectBuilder::new().schema_type(Type::Integer).format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64))).minimum(Some(0));
                object
                    .property("value", value)
                    .required("value")
                    .property("documentNumber", null())
                    .property("documentId", null())
                    .description(Some("set the counter to this value"))
            };
            object.additional_properties(Some(utoipa::openapi::schema::AdditionalProperties::FreeForm(false)))
        };
        OneOfBuilder::new().item(shape(true)).item(shape(false)).into()
    }
}
impl ToSchema for OverrideBody {}

/// `POST /document-numbering/manual-override`
#[utoipa::path(post, path = "/document-numbering/manual-override", request_body = OverrideBody,
    responses(
        (status = 200, body = OverrideResult, description = "super admins only (NB007 otherwise); exactly one of documentNumber or value"),
        AdminNumberErrors,
    ),
    tag = "numbering")]
pub(crate) async fn manual_override(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiJson(b): ApiJson<OverrideBody>,
) -> Result<Json<OverrideResult>, AppError> {
    let what = match (b.document_number, b.value) {
        (Some(document_number), None) => Override::Register { document_number, document_id: b.document_id },
        (None, Some(value)) if b.document_id.is_none() => Override::SetValue(value),
        _ => return Err(AppError::validation(AdminDetail::OverrideNumberOrValue)),
    };
    Ok(Json(super::manual_override(&s, &caller, b.counter_id, what, &b.reason).await?))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct DailyStatsParams {
    /// Bangkok days ending today (default 90).
    #[param(minimum = 1, maximum = 366)]
    pub days: Option<u32>,
    /// One project (default: every project the caller administers).
    pub project_id: Option<ProjectId>,
}

/// `GET /document-numbering/stats/daily?days&projectId` (admins): numbers issued per Bangkok day and correspondence
/// type, the last `days` days ending today (every status: a reservation takes its number for good).
#[utoipa::path(get, path = "/document-numbering/stats/daily", params(DailyStatsParams),
    responses((status = 200, body = DailyIssued, description = "one series per type, aligned with the days; 0 on a day with none"), ByIdErrors),
    tag = "counters")]
pub async fn daily_stats(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiQuery(q): ApiQuery<DailyStatsParams>,
) -> Result<Json<DailyIssued>, AppError> {
    let query = StatsQuery { days: q.days, project_id: q.project_id, ..Default::default() };
    Ok(Json(super::stats::daily(&s.db, &s.reference, &s.clock, &caller, &query).await?))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct UtilizationStatsParams {
    /// Bangkok days ending today (default 90).
    #[param(minimum = 1, maximum = 366)]
    pub days: Option<u32>,
    /// One project (default: every project the caller administers).
    pub project_id: Option<ProjectId>,
    /// One counter (of any period); default: the fullest `limit` counters of the current period.
    pub counter_id: Option<CounterId>,
    /// How many of the fullest counters (default 10).
    #[param(minimum = 1, maximum = 50)]
    pub limit: Option<u32>,
}

/// `GET /document-numbering/stats/utilization?days&projectId&counterId&limit` (admins): each counter's highest
/// sequence issued up to the end of each Bangkok day, and that ÷ its maximum.
#[utoipa::path(get, path = "/document-numbering/stats/utilization", params(UtilizationStatsParams),
    responses((status = 200, body = UtilizationHistory, description = "the counters, fullest first, each with a value per day"), ByIdErrors),
    tag = "counters")]
pub async fn utilization_stats(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiQuery(q): ApiQuery<UtilizationStatsParams>,
) -> Result<Json<UtilizationHistory>, AppError> {
    let query = StatsQuery { days: q.days, project_id: q.project_id, counter_id: q.counter_id, limit: q.limit };
    Ok(Json(super::stats::utilization(&s.db, &s.reference, &s.clock, &caller, &query).await?))
}

// the schema's bounds are the service's
const _: () = assert!(MAX_STATS_DAYS == 366 && MAX_STATS_COUNTERS == 50);
