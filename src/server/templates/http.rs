//! REST: numbering templates ("configs", docs/rules/api.md#the-numbering-endpoints).

use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::contract::{ResolvedTemplate, TemplateConfig, TemplateId};
use crate::numbering::ResetScope;
use crate::server::auth::Access;
use crate::server::auth::Caller;
use crate::server::error::{error_set, FAILURES, INPUT, SIGNED_IN};
use crate::server::error::{ApiJson, ApiPath, ApiQuery, AppError, ByIdErrors, QueryErrors};

error_set!(
    /// Saving a template (create, update, roll back): an invalid template, an unacknowledged change of counter key,
    /// a change by someone else meanwhile.
    pub TemplateSaveErrors: FAILURES, SIGNED_IN, INPUT; NotFound, InvalidFormat, KeyChangeNotAcknowledged, VersionConflict, AlreadyExists
);
use crate::numbering::{CorrespondenceTypeId, ProjectId};
use crate::server::reference::Catalog;
use crate::server::templates;

/// The template ("configs") routes (under `/api/v1`).
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    std::sync::Arc<Access>: axum::extract::FromRef<S>,
    std::sync::Arc<Catalog>: axum::extract::FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update))
        .routes(routes!(versions))
        .routes(routes!(rollback))
        .routes(routes!(retire))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct ListQuery {
    pub(crate) project_id: Option<ProjectId>,
}

#[utoipa::path(get, path = "/document-numbering/configs", operation_id = "list_configs", params(ListQuery),
    responses((status = 200, body = [TemplateConfig]), QueryErrors),
    tag = "templates")]
pub(crate) async fn list(
    State(s): State<std::sync::Arc<Catalog>>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> Result<Json<Vec<TemplateConfig>>, AppError> {
    Ok(Json(templates::list(&s.db, &caller, q.project_id).await?))
}

#[utoipa::path(get, path = "/document-numbering/configs/{id}", operation_id = "get_config", params(("id" = i64, Path,)),
    responses((status = 200, body = TemplateConfig), ByIdErrors),
    tag = "templates")]
pub(crate) async fn get(
    State(s): State<std::sync::Arc<Catalog>>,
    caller: Caller,
    ApiPath(id): ApiPath<TemplateId>,
) -> Result<Json<TemplateConfig>, AppError> {
    Ok(Json(templates::current(&s.db, &caller, id).await?.to_config()))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SaveBody {
    // no projectId or correspondenceTypeId: the configuration's own are kept, so a body naming them is refused (400)
    pub(crate) template: String,
    pub(crate) reset_scope: ResetScope,
    #[schema(schema_with = crate::contract::lenient::schema::reason)]
    pub(crate) reason: String,
    /// Required (true) when the change moves numbering to a new counter key (parts shown or reset period).
    #[serde(default)]
    pub(crate) acknowledge_key_change: bool,
}

/// The template of a project and type (none: the project's default), created or replaced by a new version.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct NewConfigBody {
    pub(crate) project_id: ProjectId,
    pub(crate) correspondence_type_id: Option<CorrespondenceTypeId>,
    pub(crate) template: String,
    pub(crate) reset_scope: ResetScope,
    #[schema(schema_with = crate::contract::lenient::schema::reason)]
    pub(crate) reason: String,
    /// Required (true) when the change moves numbering to a new counter key (parts shown or reset period).
    #[serde(default)]
    pub(crate) acknowledge_key_change: bool,
}

/// `POST /configs`: a new version of the template of (projectId, correspondenceTypeId or the project default).
#[utoipa::path(post, path = "/document-numbering/configs", operation_id = "create_config", request_body = NewConfigBody,
    responses((status = 200, body = TemplateConfig), TemplateSaveErrors),
    tag = "templates")]
pub(crate) async fn create(
    State(s): State<std::sync::Arc<Catalog>>,
    caller: Caller,
    ApiJson(b): ApiJson<NewConfigBody>,
) -> Result<Json<TemplateConfig>, AppError> {
    let options = templates::SaveOptions { acknowledge_key_change: b.acknowledge_key_change, ..Default::default() };
    Ok(Json(templates::save(&s, &caller, b.project_id, b.correspondence_type_id, &b.template, b.reset_scope, &b.reason, options).await?))
}

/// `PUT /configs/{id}`: a new version of an existing template.
#[utoipa::path(put, path = "/document-numbering/configs/{id}", operation_id = "update_config", request_body = SaveBody, params(("id" = i64, Path,)),
    responses((status = 200, body = TemplateConfig), TemplateSaveErrors),
    tag = "templates")]
pub(crate) async fn update(
    State(s): State<std::sync::Arc<Catalog>>,
    caller: Caller,
    ApiPath(id): ApiPath<TemplateId>,
    ApiJson(b): ApiJson<SaveBody>,
) -> Result<Json<TemplateConfig>, AppError> {
    let current = templates::current(&s.db, &caller, id).await?;
    let options = templates::SaveOptions { acknowledge_key_change: b.acknowledge_key_change, ..Default::default() };
    Ok(Json(templates::save(&s, &caller, current.project_id, current.correspondence_type_id, &b.template, b.reset_scope, &b.reason, options).await?))
}

/// `GET /configs/{id}/versions`: the history, newest first.
#[utoipa::path(get, path = "/document-numbering/configs/{id}/versions", params(("id" = i64, Path,)),
    responses(
        (status = 200, body = [crate::contract::TemplateVersion], description = "every version, newest first, with the text before and after"),
        ByIdErrors,
    ),
    tag = "templates")]
pub(crate) async fn versions(
    State(s): State<std::sync::Arc<Catalog>>,
    caller: Caller,
    ApiPath(id): ApiPath<TemplateId>,
) -> Result<Json<Vec<crate::contract::TemplateVersion>>, AppError> {
    let t = templates::current(&s.db, &caller, id).await?;
    Ok(Json(templates::versions(&s.db, &caller, t.project_id, t.correspondence_type_id).await?))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RollbackBody {
    pub(crate) version: i64,
    #[schema(schema_with = crate::contract::lenient::schema::reason)]
    pub(crate) reason: String,
    #[serde(default)]
    pub(crate) acknowledge_key_change: bool,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RetireBody {
    #[schema(schema_with = crate::contract::lenient::schema::reason)]
    pub(crate) reason: String,
    #[serde(default)]
    pub(crate) acknowledge_key_change: bool,
}

/// `POST /configs/{id}/retire` (the project's admins): the template stops being used; the next one of the docs/rules/numbering.md#templates
/// order applies (answered). Its history stays; saving it again brings it back.
#[utoipa::path(post, path = "/document-numbering/configs/{id}/retire", params(("id" = i64, Path,)), request_body = RetireBody,
    responses((status = 200, body = ResolvedTemplate, description = "the template that applies now"), TemplateSaveErrors),
    tag = "templates")]
pub(crate) async fn retire(
    State(s): State<std::sync::Arc<Catalog>>,
    caller: Caller,
    ApiPath(id): ApiPath<TemplateId>,
    ApiJson(b): ApiJson<RetireBody>,
) -> Result<Json<ResolvedTemplate>, AppError> {
    Ok(Json(templates::retire(&s, &caller, id, &b.reason, b.acknowledge_key_change).await?))
}

/// `POST /configs/{id}/rollback`: restore an older version as a new one.
#[utoipa::path(post, path = "/document-numbering/configs/{id}/rollback", params(("id" = i64, Path,)), request_body = RollbackBody,
    responses((status = 200, body = TemplateConfig), TemplateSaveErrors),
    tag = "templates")]
pub(crate) async fn rollback(
    State(s): State<std::sync::Arc<Catalog>>,
    caller: Caller,
    ApiPath(id): ApiPath<TemplateId>,
    ApiJson(b): ApiJson<RollbackBody>,
) -> Result<Json<TemplateConfig>, AppError> {
    let t = templates::current(&s.db, &caller, id).await?;
    Ok(Json(templates::rollback(&s, &caller, t.project_id, t.correspondence_type_id, b.version, &b.reason, b.acknowledge_key_change).await?))
}
