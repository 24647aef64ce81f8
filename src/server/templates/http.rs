//! REST: numbering templates ("configs", SPEC §9).

use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::contract::TemplateConfig;
use crate::numbering::ResetScope;
use crate::server::auth::Access;
use crate::server::auth::Caller;
use crate::server::error::{ApiJson, ApiPath, ApiQuery, AppError, ErrorBody};
use crate::server::reference::Catalog;
use crate::server::templates;

/// The template ("configs") routes (under `/api/v1`).
pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    std::sync::Arc<Access>: axum::extract::FromRef<S>,
    std::sync::Arc<Catalog>: axum::extract::FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(get, update)).routes(routes!(versions)).routes(routes!(rollback))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    pub project_id: Option<i64>,
}

#[utoipa::path(get, path = "/document-numbering/configs", operation_id = "list_configs", params(ListQuery),
    responses((status = 200, body = [TemplateConfig]), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    tag = "templates")]
pub async fn list(
    State(s): State<std::sync::Arc<Catalog>>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> Result<Json<Vec<TemplateConfig>>, AppError> {
    Ok(Json(templates::list(&s.db, &caller, q.project_id).await?))
}

#[utoipa::path(get, path = "/document-numbering/configs/{id}", operation_id = "get_config", params(("id" = i64, Path,)),
    responses((status = 200, body = TemplateConfig), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)),
    tag = "templates")]
pub async fn get(State(s): State<std::sync::Arc<Catalog>>, caller: Caller, ApiPath(id): ApiPath<i64>) -> Result<Json<TemplateConfig>, AppError> {
    Ok(Json(templates::current(&s.db, &caller, id).await?.to_config()))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveBody {
    /// Only for POST (create or replace by project and type).
    pub project_id: Option<i64>,
    pub correspondence_type_id: Option<i64>,
    pub template: String,
    pub reset_scope: ResetScope,
    pub reason: String,
    /// Required (true) when the change moves numbering to a new counter key (parts shown or reset period).
    #[serde(default)]
    pub acknowledge_key_change: bool,
}

/// `POST /configs`: a new version of the template of (projectId, correspondenceTypeId or the project default).
#[utoipa::path(post, path = "/document-numbering/configs", operation_id = "create_config", request_body = SaveBody,
    responses(
        (status = 200, body = TemplateConfig),
        (status = 400, body = ErrorBody, description = "malformed body, an invalid template (NB006), a short reason, an unacknowledged key change"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "changed by someone else meanwhile"),
        (status = 413, body = ErrorBody),
    ),
    tag = "templates")]
pub async fn create(
    State(s): State<std::sync::Arc<Catalog>>,
    caller: Caller,
    ApiJson(b): ApiJson<SaveBody>,
) -> Result<Json<TemplateConfig>, AppError> {
    let project_id = b.project_id.ok_or_else(|| AppError::validation("ต้องระบุโครงการ (projectId)", "projectId is required"))?;
    let options = templates::SaveOptions { acknowledge_key_change: b.acknowledge_key_change, ..Default::default() };
    Ok(Json(templates::save(&s, &caller, project_id, b.correspondence_type_id, &b.template, b.reset_scope, &b.reason, options).await?))
}

/// `PUT /configs/{id}`: a new version of an existing template.
#[utoipa::path(put, path = "/document-numbering/configs/{id}", operation_id = "update_config", request_body = SaveBody, params(("id" = i64, Path,)),
    responses(
        (status = 200, body = TemplateConfig),
        (status = 400, body = ErrorBody, description = "malformed body, an invalid template (NB006), a short reason, an unacknowledged key change"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "changed by someone else meanwhile"),
        (status = 413, body = ErrorBody),
    ),
    tag = "templates")]
pub async fn update(
    State(s): State<std::sync::Arc<Catalog>>,
    caller: Caller,
    ApiPath(id): ApiPath<i64>,
    ApiJson(b): ApiJson<SaveBody>,
) -> Result<Json<TemplateConfig>, AppError> {
    let current = templates::current(&s.db, &caller, id).await?;
    let options = templates::SaveOptions { acknowledge_key_change: b.acknowledge_key_change, ..Default::default() };
    Ok(Json(templates::save(&s, &caller, current.project_id, current.corr_type_id, &b.template, b.reset_scope, &b.reason, options).await?))
}

/// `GET /configs/{id}/versions`: the history, newest first.
#[utoipa::path(get, path = "/document-numbering/configs/{id}/versions", params(("id" = i64, Path,)),
    responses(
        (status = 200, body = [crate::contract::TemplateVersion], description = "every version, newest first, with the text before and after"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    tag = "templates")]
pub async fn versions(
    State(s): State<std::sync::Arc<Catalog>>,
    caller: Caller,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<Vec<crate::contract::TemplateVersion>>, AppError> {
    let t = templates::current(&s.db, &caller, id).await?;
    Ok(Json(templates::versions(&s.db, &caller, t.project_id, t.corr_type_id).await?))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RollbackBody {
    pub version: i64,
    pub reason: String,
    #[serde(default)]
    pub acknowledge_key_change: bool,
}

/// `POST /configs/{id}/rollback`: restore an older version as a new one.
#[utoipa::path(post, path = "/document-numbering/configs/{id}/rollback", params(("id" = i64, Path,)), request_body = RollbackBody,
    responses(
        (status = 200, body = TemplateConfig),
        (status = 400, body = ErrorBody, description = "malformed body, an invalid template (NB006), a short reason, an unacknowledged key change"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "changed by someone else meanwhile"),
        (status = 413, body = ErrorBody),
    ),
    tag = "templates")]
pub async fn rollback(
    State(s): State<std::sync::Arc<Catalog>>,
    caller: Caller,
    ApiPath(id): ApiPath<i64>,
    ApiJson(b): ApiJson<RollbackBody>,
) -> Result<Json<TemplateConfig>, AppError> {
    let t = templates::current(&s.db, &caller, id).await?;
    Ok(Json(templates::rollback(&s, &caller, t.project_id, t.corr_type_id, b.version, &b.reason, b.acknowledge_key_change).await?))
}
