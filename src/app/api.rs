//! Server functions: the browser's calls into the server. Each body only delegates to
//! `crate::server::ui`, which checks the caller and calls the engine; errors arrive as
//! `ServerFnError::ServerError(<Thai message>)` — show them with [`error_text`].

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use super::types::*;
use crate::numbering::ResetScope;

/// The message of a server-function error, without the framework's prefix.
pub fn error_text(e: &ServerFnError) -> String {
    match e {
        ServerFnError::ServerError(m) => m.clone(),
        other => other.to_string(),
    }
}

#[server(prefix = "/sfn", input = Json)]
pub async fn current_user() -> Result<Option<UserInfo>, ServerFnError> {
    crate::server::ui::current_user().await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn login(username: String, password: String) -> Result<UserInfo, ServerFnError> {
    crate::server::ui::login(username, password).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn logout() -> Result<(), ServerFnError> {
    crate::server::ui::logout().await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn fetch_reference_data() -> Result<ReferenceData, ServerFnError> {
    crate::server::ui::reference_data().await
}

/// The template a (project, type) request would use, with its reset scope.
#[server(prefix = "/sfn", input = Json)]
pub async fn resolve_template(project_id: i64, correspondence_type_id: i64) -> Result<ResolvedTemplate, ServerFnError> {
    crate::server::ui::resolve_template(project_id, correspondence_type_id).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn preview_number(request: NumberRequest) -> Result<PreviewResult, ServerFnError> {
    crate::server::ui::preview_number(request).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn reserve_number(request: NumberRequest) -> Result<ReservationResult, ServerFnError> {
    crate::server::ui::reserve_number(request).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn confirm_reservation(token: String, document_id: String) -> Result<StatusResult, ServerFnError> {
    crate::server::ui::confirm_reservation(token, document_id).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn cancel_reservation(token: String, reason: Option<String>) -> Result<StatusResult, ServerFnError> {
    crate::server::ui::cancel_reservation(token, reason).await
}

/// Current templates of a project (one per type, plus the project default).
#[server(prefix = "/sfn", input = Json)]
pub async fn list_templates(project_id: i64) -> Result<Vec<TemplateConfig>, ServerFnError> {
    crate::server::ui::list_templates(project_id).await
}

/// Saves a new version of the template for (project, type); `correspondence_type_id = None` is the project default.
#[server(prefix = "/sfn", input = Json)]
pub async fn save_template(
    project_id: i64,
    correspondence_type_id: Option<i64>,
    template: String,
    reset_scope: ResetScope,
    reason: String,
    acknowledge_key_change: bool,
) -> Result<TemplateConfig, ServerFnError> {
    crate::server::ui::save_template(project_id, correspondence_type_id, template, reset_scope, reason, acknowledge_key_change).await
}

/// The history of the template of (project, type or default), newest first.
#[server(prefix = "/sfn", input = Json)]
pub async fn list_template_versions(project_id: i64, correspondence_type_id: Option<i64>) -> Result<Vec<TemplateVersion>, ServerFnError> {
    crate::server::ui::list_template_versions(project_id, correspondence_type_id).await
}

/// Restores an older version as a new version.
#[server(prefix = "/sfn", input = Json)]
pub async fn rollback_template(
    project_id: i64,
    correspondence_type_id: Option<i64>,
    version: i64,
    reason: String,
    acknowledge_key_change: bool,
) -> Result<TemplateConfig, ServerFnError> {
    crate::server::ui::rollback_template(project_id, correspondence_type_id, version, reason, acknowledge_key_change).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn search_audit(query: AuditQuery) -> Result<AuditPage, ServerFnError> {
    crate::server::ui::search_audit(query).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn list_errors(query: ErrorQuery) -> Result<ErrorPage, ServerFnError> {
    crate::server::ui::list_errors(query).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn resolve_error(id: i64) -> Result<(), ServerFnError> {
    crate::server::ui::resolve_error(id).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn list_api_tokens() -> Result<Vec<ApiTokenInfo>, ServerFnError> {
    crate::server::ui::list_api_tokens().await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn create_api_token(name: String, project_ids: Vec<i64>) -> Result<CreatedApiToken, ServerFnError> {
    crate::server::ui::create_api_token(name, project_ids).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn revoke_api_token(id: i64) -> Result<(), ServerFnError> {
    crate::server::ui::revoke_api_token(id).await
}
