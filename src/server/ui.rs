//! Bodies of the browser's server functions (declared in the pages' `api` module): find the caller from the request,
//! call the same engine and services as the REST API, and turn errors into their Thai message.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use leptos::prelude::use_context;
use tower_sessions::Session;

use crate::contract::*;
use crate::contract::import::{ImportFormat, ImportReport};
use crate::numbering::ResetScope;
use crate::server::auth::{self, client_of, Caller, Principal};
use crate::server::error::AppError;
use crate::server::{templates, AppState};

fn sfe(e: AppError) -> ApiError {
    // a refusal from a browser call is a 4xx like on the REST API; while a page renders on the server the
    // page keeps its own status
    let browser_call = use_context::<Parts>().is_some_and(|p| p.uri.path().starts_with(crate::server::http::SERVER_FN_PATH));
    if let (true, Some(response)) = (browser_call, use_context::<leptos_axum::ResponseOptions>()) {
        response.set_status(e.status());
    }
    if e.status().is_server_error() {
        tracing::error!(error = %e.report(), "server function failed");
    }
    ApiError::from(&e)
}

fn state() -> Result<AppState, ApiError> {
    use_context::<AppState>().ok_or_else(|| sfe(AppError::internal("server state missing from the server-function context")))
}

fn parts() -> Result<Parts, ApiError> {
    use_context::<Parts>().ok_or_else(|| sfe(AppError::internal("request parts missing from the server-function context")))
}

async fn session(state: &AppState) -> Result<Session, ApiError> {
    let mut parts = parts()?;
    Session::from_request_parts(&mut parts, state).await.map_err(|_| sfe(AppError::Unauthenticated))
}

/// The logged-in user behind this server-function call (sessions only: tokens are for the REST API).
async fn caller(state: &AppState) -> Result<Caller, ApiError> {
    let parts = parts()?;
    let (ip, user_agent) = client_of(&parts);
    let session = session(state).await?;
    let user = auth::user_from_session(state, &session).await.map_err(sfe)?.ok_or_else(|| sfe(AppError::Unauthenticated))?;
    Ok(Caller { principal: Principal::User(user), ip, user_agent })
}

pub async fn current_user() -> Result<Option<UserInfo>, ApiError> {
    let state = state()?;
    let session = session(&state).await?;
    auth::user_from_session(&state, &session).await.map_err(sfe)
}

pub async fn login(username: String, password: String) -> Result<UserInfo, ApiError> {
    let state = state()?;
    let session = session(&state).await?;
    auth::login(&state, &session, &username, &password).await.map_err(sfe)
}

pub async fn logout() -> Result<(), ApiError> {
    let state = state()?;
    let session = session(&state).await?;
    auth::logout(&session).await.map_err(sfe)
}

pub async fn reference_data() -> Result<ReferenceData, ApiError> {
    let state = state()?;
    caller(&state).await?;
    Ok(state.reference.get().await.map_err(sfe)?.data.clone())
}

pub async fn resolve_template(project_id: i64, correspondence_type_id: i64) -> Result<ResolvedTemplate, ApiError> {
    let state = state()?;
    caller(&state).await?;
    let snapshot = state.reference.get().await.map_err(sfe)?;
    snapshot.project(Some(project_id), None).map_err(sfe)?;
    snapshot.corr_type(Some(correspondence_type_id), None).map_err(sfe)?;
    Ok(templates::resolve(&snapshot, project_id, correspondence_type_id))
}

pub async fn preview_number(request: NumberRequest) -> Result<PreviewResult, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    state.engine.preview(&caller, &request).await.map_err(sfe)
}

pub async fn reserve_number(request: NumberRequest) -> Result<ReservationResult, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    state.limits.check(&caller).await.map_err(sfe)?;
    state.engine.reserve(&caller, &request).await.map_err(sfe)
}

pub async fn confirm_reservation(token: String, document_id: String) -> Result<StatusResult, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    state.engine.confirm(&caller, &token, &document_id).await.map_err(sfe)
}

pub async fn cancel_reservation(token: String, reason: Option<String>) -> Result<StatusResult, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    state.engine.cancel(&caller, &token, reason.as_deref()).await.map_err(sfe)
}

pub async fn list_templates(project_id: i64) -> Result<Vec<TemplateConfig>, ApiError> {
    let state = state()?;
    caller(&state).await?;
    let list = templates::store::list_for_project(&state.db, project_id).await.map_err(sfe)?;
    Ok(list.iter().map(|t| t.to_config()).collect())
}

pub async fn save_template(
    project_id: i64,
    correspondence_type_id: Option<i64>,
    template: String,
    reset_scope: ResetScope,
    reason: String,
    acknowledge_key_change: bool,
) -> Result<TemplateConfig, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    let options = templates::SaveOptions { acknowledge_key_change, ..Default::default() };
    templates::save(&state, &caller, project_id, correspondence_type_id, &template, reset_scope, &reason, options).await.map_err(sfe)
}

pub async fn list_template_versions(project_id: i64, correspondence_type_id: Option<i64>) -> Result<Vec<TemplateVersion>, ApiError> {
    let state = state()?;
    caller(&state).await?;
    templates::store::list_versions(&state.db, project_id, correspondence_type_id).await.map_err(sfe)
}

pub async fn rollback_template(
    project_id: i64,
    correspondence_type_id: Option<i64>,
    version: i64,
    reason: String,
    acknowledge_key_change: bool,
) -> Result<TemplateConfig, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    templates::rollback(&state, &caller, project_id, correspondence_type_id, version, &reason, acknowledge_key_change).await.map_err(sfe)
}

pub async fn search_audit(query: AuditQuery) -> Result<AuditPage, ApiError> {
    let state = state()?;
    caller(&state).await?.require_admin().map_err(sfe)?;
    crate::server::audit::search(&state.db, &query).await.map_err(sfe)
}

pub async fn list_errors(query: ErrorQuery) -> Result<ErrorPage, ApiError> {
    let state = state()?;
    caller(&state).await?.require_admin().map_err(sfe)?;
    crate::server::errors_log::search(&state.db, &query).await.map_err(sfe)
}

pub async fn resolve_error(id: i64) -> Result<(), ApiError> {
    let state = state()?;
    caller(&state).await?.require_admin().map_err(sfe)?;
    if crate::server::errors_log::resolve(&state.db, id, state.clock.now_ms()).await.map_err(sfe)? {
        Ok(())
    } else {
        Err(sfe(AppError::not_found(format!("ข้อผิดพลาดที่ยังไม่แก้ไขรหัส {id}"), format!("unresolved error {id}"))))
    }
}

pub async fn list_api_tokens() -> Result<Vec<ApiTokenInfo>, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    caller.require_admin().map_err(sfe)?;
    auth::store::list_tokens(&state.db).await.map_err(sfe)
}

pub async fn create_api_token(name: String, project_ids: Vec<i64>) -> Result<CreatedApiToken, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    auth::http::create_token_for(&state, &caller, &name, &project_ids).await.map_err(sfe)
}

pub async fn revoke_api_token(id: i64) -> Result<(), ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    auth::http::revoke_token_for(&state, &caller, id).await.map_err(sfe)
}

// ---- admin pages: counters, counter resets, super-admin operations (each checks the caller in the engine) ----

use crate::server::admin_ops::{self, NumberRef, Override};

pub async fn list_counters(q: CounterQuery) -> Result<Vec<CounterView>, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    admin_ops::counters(&state, &caller, q.project_id, q.correspondence_type_id, q.year).await.map_err(sfe)
}

pub async fn counter_numbers(counter_id: i64, after: Option<i64>, limit: Option<i64>) -> Result<CounterNumbers, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    admin_ops::counter_numbers(&state, &caller, counter_id, after, limit).await.map_err(sfe)
}

pub async fn request_counter_reset(counter_id: i64, new_value: Option<i64>, reason: String) -> Result<Envelope<ResetRequestView>, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    admin_ops::request_reset(&state, &caller, counter_id, new_value, &reason).await.map_err(sfe)
}

pub async fn list_reset_requests(st: Option<String>, counter_id: Option<i64>) -> Result<Vec<Envelope<ResetRequestView>>, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    let st = st.filter(|s| !s.trim().is_empty());
    admin_ops::reset_requests(&state, &caller, st.as_deref(), counter_id).await.map_err(sfe)
}

pub async fn act_on_reset_request(public_id: String, action: String, comment: Option<String>) -> Result<Envelope<ResetRequestView>, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    admin_ops::act_on_reset(&state, &caller, &public_id, &action, comment.as_deref()).await.map_err(sfe)
}

fn number_ref(t: &NumberTarget) -> NumberRef {
    NumberRef {
        project_id: Some(t.project_id),
        correspondence_type_id: Some(t.correspondence_type_id),
        document_number: t.document_number.clone(),
        ..Default::default()
    }
}

pub async fn revise_number(target: NumberTarget) -> Result<IssuedNumber, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    admin_ops::revise(&state, &caller, &number_ref(&target), target.document_id.as_deref()).await.map_err(sfe)
}

pub async fn void_and_replace_number(target: NumberTarget, reason: String) -> Result<VoidResult, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    admin_ops::void_and_replace(&state, &caller, &number_ref(&target), &reason, target.document_id.as_deref()).await.map_err(sfe)
}

pub async fn override_register_number(counter_id: i64, document_number: String, document_id: Option<String>, reason: String) -> Result<OverrideResult, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    let document_id = document_id.filter(|d| !d.trim().is_empty());
    admin_ops::manual_override(&state, &caller, counter_id, Override::Register { document_number, document_id }, &reason).await.map_err(sfe)
}

pub async fn override_counter_value(counter_id: i64, value: i64, reason: String) -> Result<OverrideResult, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    admin_ops::manual_override(&state, &caller, counter_id, Override::SetValue(value), &reason).await.map_err(sfe)
}

// ---- imports and reference-data admin (pages /import and /reference) ----

pub async fn bulk_import(
    text: String,
    format: ImportFormat,
    reason: Option<String>,
    dry_run: bool,
) -> Result<ImportReport, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    crate::server::import::bulk_import(&state, &caller, &text, format, reason.as_deref(), dry_run).await.map_err(sfe)
}

pub async fn reference_import(text: String, dry_run: bool) -> Result<ImportReport, ApiError> {
    let state = state()?;
    let caller = caller(&state).await?;
    caller.require_super_admin().map_err(sfe)?;
    if text.len() > crate::server::reference::admin::MAX_BYTES {
        return Err(sfe(AppError::PayloadTooLarge));
    }
    let doc = crate::server::reference::http::parse_document(&text).map_err(sfe)?;
    crate::server::reference::admin::import_document(&state, &caller, doc, dry_run).await.map_err(sfe)
}

pub async fn save_reference_item(kind: String, id: Option<i64>, item: serde_json::Value) -> Result<i64, ApiError> {
    use crate::server::reference::admin::{save_item, Item, Kind, Mode};
    let state = state()?;
    let caller = caller(&state).await?;
    caller.require_super_admin().map_err(sfe)?;
    let item = Item::from_json(Kind::parse(&kind).map_err(sfe)?, item).map_err(sfe)?;
    let mode = match id {
        Some(id) => Mode::Update(id),
        None => Mode::Create,
    };
    save_item(&state, &caller, item, mode).await.map(|(id, _)| id).map_err(sfe)
}
