//! The audit log and the error log for admins: who may see what (a project admin their projects' rows, a super
//! admin every row and the chains' verification), then the storage; and their REST routes. The logs' pages call the
//! same services through their server functions.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::contract::{AuditPage, AuditQuery, CounterName, ErrorLogId, ErrorPage, ErrorQuery, OrganizationId, ProjectId};
use crate::numbering::key::CounterKey;
use crate::server::audit::{self, VerifyReport};
use crate::server::auth::Caller;
use crate::server::clock::Clock;
use crate::server::db::Db;
use crate::server::error::{ApiPath, ApiQuery, AppError, ByIdErrors, QueryErrors, SignedInErrors};
use crate::server::errors_log;
use crate::server::numbering::Engine;
use crate::server::reference::{Part, Snapshot};

// ---- the services (REST and the server functions) ----

/// Recomputes every audit chain: super admins only (it reads every project's chains).
pub(crate) async fn verify_chains(db: &Db, caller: &Caller) -> Result<VerifyReport, AppError> {
    caller.require_super_admin()?;
    audit::verify(db).await
}

/// The projects whose audit rows this caller may read (None: every row, the `admin` chain's too): admins only, and a
/// project filter outside a project admin's projects is 403.
fn audit_scope<'c>(caller: &'c Caller, q: &AuditQuery) -> Result<Option<&'c [ProjectId]>, AppError> {
    let scope = caller.admin_scope()?;
    if let Some(p) = q.project_id {
        caller.require_project_admin(p)?;
    }
    Ok(scope)
}

/// One page of the audit rows this caller may read, each counter named by its codes (`snapshot`).
pub(crate) async fn audit_page(db: &Db, snapshot: &Snapshot, caller: &Caller, q: &AuditQuery) -> Result<AuditPage, AppError> {
    let mut page = audit::search(db, audit_scope(caller, q)?, q).await?;
    for row in &mut page.rows {
        row.counter = row.counter_key.as_deref().and_then(|key| counter_name(snapshot, key));
    }
    Ok(page)
}

/// A stored counter key (JSON) named by the codes of its parts; a part no longer known shows its id (`#7`).
fn counter_name(snapshot: &Snapshot, stored: &str) -> Option<CounterName> {
    let key: CounterKey = serde_json::from_str(stored).ok()?;
    fn shown<Id: Copy + Default + PartialEq + std::fmt::Display>(id: Id, code: &dyn Fn(Id) -> Option<String>) -> Option<String> {
        (id != Id::default()).then(|| code(id).unwrap_or_else(|| format!("#{id}")))
    }
    let org = |part: Part| move |id: OrganizationId| snapshot.org(Some(id), None, part).ok().map(|o| o.code.clone());
    Some(CounterName {
        project: snapshot.project(Some(key.project_id), None).map_or_else(|_| format!("#{}", key.project_id), |p| p.code.clone()),
        correspondence_type: snapshot
            .correspondence_type(Some(key.correspondence_type_id), None)
            .map_or_else(|_| format!("#{}", key.correspondence_type_id), |t| t.code.clone()),
        originator: shown(key.originator_id, &org(Part::Originator)),
        recipient: shown(key.recipient_id, &org(Part::Recipient)),
        sub_type: shown(key.sub_type_id, &|id| snapshot.sub_type(key.correspondence_type_id, Some(id), None).ok().map(|s| s.sub_type_number.clone())),
        rfa_type: shown(key.rfa_type_id, &|id| snapshot.rfa_type(Some(id), None).ok().map(|t| t.code.clone())),
        discipline: shown(key.discipline_id, &|id| snapshot.discipline(Some(id), None).ok().map(|d| d.code.clone())),
        period: key.period.to_string(),
    })
}

/// The audit rows this caller may read, as CSV.
pub(crate) async fn audit_csv(db: &Db, caller: &Caller, q: &AuditQuery) -> Result<String, AppError> {
    audit::export_csv(db, audit_scope(caller, q)?, q).await
}

/// One page of the error log as this caller may read it (admins; a project admin their projects' rows).
pub(crate) async fn error_page(db: &Db, caller: &Caller, q: &ErrorQuery) -> Result<ErrorPage, AppError> {
    errors_log::search(db, caller.admin_scope()?, q).await
}

/// Marks an error resolved, if the caller may read it (404 otherwise, as for no such unresolved error).
pub(crate) async fn resolve(db: &Db, clock: &Clock, caller: &Caller, id: ErrorLogId) -> Result<(), AppError> {
    errors_log::resolve(db, clock.now_ms(), caller.admin_scope()?, id).await
}

// ---- REST ----

/// The audit and error-log routes (under `/api/v1`).
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    std::sync::Arc<crate::server::auth::Access>: axum::extract::FromRef<S>,
    std::sync::Arc<Engine>: axum::extract::FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(verify)).routes(routes!(search)).routes(routes!(errors)).routes(routes!(resolve_error))
}

#[utoipa::path(get, path = "/document-numbering/logs/audit/verify",
    responses((status = 200, body = VerifyReport), SignedInErrors), tag = "audit")]
pub(crate) async fn verify(State(s): State<std::sync::Arc<Engine>>, caller: Caller) -> Result<Json<VerifyReport>, AppError> {
    Ok(Json(verify_chains(&s.db, &caller).await?))
}

/// `GET /logs/audit?from&to&user&operation&number&projectId&page&pageSize[&format=csv]` (admins).
#[utoipa::path(get, path = "/document-numbering/logs/audit", params(AuditQuery, Format),
    responses(
        (status = 200, description = "a page of audit rows, or (format=csv) the matching rows as CSV",
            content((AuditPage = "application/json"), (String = "text/csv"))),
        QueryErrors,
    ),
    tag = "audit")]
pub(crate) async fn search(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiQuery(query): ApiQuery<AuditQuery>,
    ApiQuery(format): ApiQuery<Format>,
) -> Result<Response, AppError> {
    if format.format.as_deref() == Some("csv") {
        let body = audit_csv(&s.db, &caller, &query).await?;
        let headers = [
            (axum::http::header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (axum::http::header::CONTENT_DISPOSITION, "attachment; filename=\"audit-log.csv\""),
        ];
        return Ok((headers, body).into_response());
    }
    let snapshot = s.reference.get().await?;
    Ok(Json(audit_page(&s.db, &snapshot, &caller, &query).await?).into_response())
}

/// `format=csv` beside the filters (a separate extractor: serde's flatten would read numbers as strings).
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct Format {
    /// `csv` for a CSV export (the same filters, every matching row)
    pub(crate) format: Option<String>,
}

/// `GET /logs/errors?errorType&unresolvedOnly&page&pageSize` (admins).
#[utoipa::path(get, path = "/document-numbering/logs/errors", params(ErrorQuery),
    responses((status = 200, body = ErrorPage), QueryErrors), tag = "audit")]
pub(crate) async fn errors(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ErrorQuery>,
) -> Result<Json<ErrorPage>, AppError> {
    Ok(Json(error_page(&s.db, &caller, &q).await?))
}

/// `POST /logs/errors/{id}/resolve` (admins).
#[utoipa::path(post, path = "/document-numbering/logs/errors/{id}/resolve", params(("id" = i64, Path,)),
    responses((status = 200, body = Resolved, description = "marked resolved"), ByIdErrors),
    tag = "audit")]
pub(crate) async fn resolve_error(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiPath(id): ApiPath<ErrorLogId>,
) -> Result<Json<Resolved>, AppError> {
    resolve(&s.db, &s.clock, &caller, id).await?;
    Ok(Json(Resolved { resolved: id }))
}

/// `{"resolved": id}`
#[derive(Serialize, ToSchema)]
pub(crate) struct Resolved {
    pub(crate) resolved: ErrorLogId,
}
