//! Server functions of the template pages: the template a request would use, list, save, history, rollback.

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use crate::contract::*;
use crate::numbering::ResetScope;
#[cfg(feature = "ssr")]
use crate::server::{sfn, templates};

/// The template a (project, type) request would use, with its reset scope.
#[server(prefix = "/sfn", endpoint = "resolve_template", input = Json)]
pub async fn resolve_template(project_id: ProjectId, correspondence_type_id: CorrespondenceTypeId) -> Result<ResolvedTemplate, ApiError> {
    let (state, caller) = sfn::caller().await?;
    templates::resolved_for(&state.catalog, &caller, project_id, correspondence_type_id).await.map_err(sfn::error)
}

/// Current templates of a project (one per type, plus the project default).
#[server(prefix = "/sfn", input = Json)]
pub async fn list_templates(project_id: ProjectId) -> Result<Vec<TemplateConfig>, ApiError> {
    let (state, caller) = sfn::caller().await?;
    templates::list(&state.db, &caller, Some(project_id)).await.map_err(sfn::error)
}

/// Saves a new version of the template for (project, type); `correspondence_type_id = None` is the project default.
#[server(prefix = "/sfn", input = Json)]
pub async fn save_template(
    project_id: ProjectId,
    correspondence_type_id: Option<CorrespondenceTypeId>,
    template: String,
    reset_scope: ResetScope,
    reason: String,
    acknowledge_key_change: bool,
) -> Result<TemplateConfig, ApiError> {
    let (state, caller) = sfn::caller().await?;
    let options = templates::SaveOptions { acknowledge_key_change, ..Default::default() };
    templates::save(&state.catalog, &caller, project_id, correspondence_type_id, &template, reset_scope, &reason, options).await.map_err(sfn::error)
}

/// The history of the template of (project, type or default), newest first.
#[server(prefix = "/sfn", input = Json)]
pub async fn list_template_versions(
    project_id: ProjectId,
    correspondence_type_id: Option<CorrespondenceTypeId>,
) -> Result<Vec<TemplateVersion>, ApiError> {
    let (state, caller) = sfn::caller().await?;
    templates::versions(&state.db, &caller, project_id, correspondence_type_id).await.map_err(sfn::error)
}

/// Restores an older version as a new version.
#[server(prefix = "/sfn", input = Json)]
pub async fn rollback_template(
    project_id: ProjectId,
    correspondence_type_id: Option<CorrespondenceTypeId>,
    version: i64,
    reason: String,
    acknowledge_key_change: bool,
) -> Result<TemplateConfig, ApiError> {
    let (state, caller) = sfn::caller().await?;
    templates::rollback(&state.catalog, &caller, project_id, correspondence_type_id, version, &reason, acknowledge_key_change)
        .await
        .map_err(sfn::error)
}

/// Retires a (project, type) template or a project default: its history stays, requests use the next template of
/// the resolution order (docs/rules/numbering.md#which-template-numbers-a-request). Answers the template now used.
#[server(prefix = "/sfn", input = Json)]
pub async fn retire_template(id: TemplateId, reason: String, acknowledge_key_change: bool) -> Result<ResolvedTemplate, ApiError> {
    let (state, caller) = sfn::caller().await?;
    templates::retire(&state.catalog, &caller, id, &reason, acknowledge_key_change).await.map_err(sfn::error)
}
