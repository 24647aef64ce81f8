//! Server functions: the browser's calls into the server. Each body only delegates to
//! `crate::server::ui`, which checks the caller and calls the engine; errors arrive as
//! [`ApiError`] (`code` to decide by, Thai `message` to show) — show them with [`error_text`].

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use crate::contract::*;
use crate::numbering::ResetScope;

/// What a person reads of a server-function error: the Thai message, its NB code and reference.
pub fn error_text(e: &ApiError) -> String {
    e.to_string()
}

#[server(prefix = "/sfn", input = Json)]
pub async fn current_user() -> Result<Option<UserInfo>, ApiError> {
    crate::server::ui::current_user().await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn login(username: String, password: String) -> Result<UserInfo, ApiError> {
    crate::server::ui::login(username, password).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn logout() -> Result<(), ApiError> {
    crate::server::ui::logout().await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn fetch_reference_data() -> Result<ReferenceData, ApiError> {
    crate::server::ui::reference_data().await
}

/// The template a (project, type) request would use, with its reset scope.
#[server(prefix = "/sfn", input = Json)]
pub async fn resolve_template(project_id: i64, correspondence_type_id: i64) -> Result<ResolvedTemplate, ApiError> {
    crate::server::ui::resolve_template(project_id, correspondence_type_id).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn preview_number(request: NumberRequest) -> Result<PreviewResult, ApiError> {
    crate::server::ui::preview_number(request).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn reserve_number(request: NumberRequest) -> Result<ReservationResult, ApiError> {
    crate::server::ui::reserve_number(request).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn confirm_reservation(token: String, document_id: String) -> Result<StatusResult, ApiError> {
    crate::server::ui::confirm_reservation(token, document_id).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn cancel_reservation(token: String, reason: Option<String>) -> Result<StatusResult, ApiError> {
    crate::server::ui::cancel_reservation(token, reason).await
}

/// Current templates of a project (one per type, plus the project default).
#[server(prefix = "/sfn", input = Json)]
pub async fn list_templates(project_id: i64) -> Result<Vec<TemplateConfig>, ApiError> {
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
) -> Result<TemplateConfig, ApiError> {
    crate::server::ui::save_template(project_id, correspondence_type_id, template, reset_scope, reason, acknowledge_key_change).await
}

/// The history of the template of (project, type or default), newest first.
#[server(prefix = "/sfn", input = Json)]
pub async fn list_template_versions(project_id: i64, correspondence_type_id: Option<i64>) -> Result<Vec<TemplateVersion>, ApiError> {
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
) -> Result<TemplateConfig, ApiError> {
    crate::server::ui::rollback_template(project_id, correspondence_type_id, version, reason, acknowledge_key_change).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn search_audit(query: AuditQuery) -> Result<AuditPage, ApiError> {
    crate::server::ui::search_audit(query).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn list_errors(query: ErrorQuery) -> Result<ErrorPage, ApiError> {
    crate::server::ui::list_errors(query).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn resolve_error(id: i64) -> Result<(), ApiError> {
    crate::server::ui::resolve_error(id).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn list_api_tokens() -> Result<Vec<ApiTokenInfo>, ApiError> {
    crate::server::ui::list_api_tokens().await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn create_api_token(name: String, project_ids: Vec<i64>) -> Result<CreatedApiToken, ApiError> {
    crate::server::ui::create_api_token(name, project_ids).await
}

#[server(prefix = "/sfn", input = Json)]
pub async fn revoke_api_token(id: i64) -> Result<(), ApiError> {
    crate::server::ui::revoke_api_token(id).await
}

// ---- admin pages: counters, counter resets (workflow), super-admin operations ----
// (names differ from the types they return: a server function also defines a type of its own name)

/// Counters with last number and utilization; project admins get their projects' only.
#[server(prefix = "/sfn", input = Json)]
pub async fn list_counters(query: CounterQuery) -> Result<Vec<CounterView>, ApiError> {
    crate::server::ui::list_counters(query).await
}

/// Every number of a counter in a window of sequences, and the audit row explaining each missing sequence.
#[server(prefix = "/sfn", input = Json)]
pub async fn fetch_counter_numbers(counter_id: i64, after_sequence: Option<i64>, limit: Option<i64>) -> Result<CounterNumbers, ApiError> {
    crate::server::ui::counter_numbers(counter_id, after_sequence, limit).await
}

/// A super admin asks for a counter to restart at `new_value` (default 0); a different one decides.
#[server(prefix = "/sfn", input = Json)]
pub async fn request_counter_reset(counter_id: i64, new_value: Option<i64>, reason: String) -> Result<Envelope<ResetRequestView>, ApiError> {
    crate::server::ui::request_counter_reset(counter_id, new_value, reason).await
}

/// Reset requests, newest first, each with the actions this caller may take (ADR-021 envelope).
#[server(prefix = "/sfn", input = Json)]
pub async fn list_reset_requests(state: Option<String>, counter_id: Option<i64>) -> Result<Vec<Envelope<ResetRequestView>>, ApiError> {
    crate::server::ui::list_reset_requests(state, counter_id).await
}

/// Takes one of the envelope's `availableActions` (APPROVE, REJECT) on a reset request.
#[server(prefix = "/sfn", input = Json)]
pub async fn act_on_reset_request(public_id: String, action: String, comment: Option<String>) -> Result<Envelope<ResetRequestView>, ApiError> {
    crate::server::ui::act_on_reset_request(public_id, action, comment).await
}

/// The next revision of a confirmed number (same sequence, next `{REV}`).
#[server(prefix = "/sfn", input = Json)]
pub async fn revise_number(target: NumberTarget) -> Result<IssuedNumber, ApiError> {
    crate::server::ui::revise_number(target).await
}

/// Voids a confirmed number and issues its replacement.
#[server(prefix = "/sfn", input = Json)]
pub async fn void_and_replace_number(target: NumberTarget, reason: String) -> Result<VoidResult, ApiError> {
    crate::server::ui::void_and_replace_number(target, reason).await
}

/// Manual override: registers a hand-typed (legacy) number on a counter.
#[server(prefix = "/sfn", input = Json)]
pub async fn override_register_number(counter_id: i64, document_number: String, document_id: Option<String>, reason: String) -> Result<OverrideResult, ApiError> {
    crate::server::ui::override_register_number(counter_id, document_number, document_id, reason).await
}

/// Manual override: sets a counter to a value at least the highest issued.
#[server(prefix = "/sfn", input = Json)]
pub async fn override_counter_value(counter_id: i64, value: i64, reason: String) -> Result<OverrideResult, ApiError> {
    crate::server::ui::override_counter_value(counter_id, value, reason).await
}
