//! The HTTP surface: REST API under `/api/v1`, server functions under `/sfn`, `/health`, the OpenAPI
//! document, and the Leptos pages. Handlers live with their feature; this file only wires them.

use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use leptos::prelude::provide_context;
use leptos_axum::{generate_route_list, LeptosRoutes};
use tower_sessions::{Expiry, SessionManagerLayer, SessionStore};
use utoipa::OpenApi;

use crate::app::{shell, App};
use crate::server::error::AppError;
use crate::server::{audit, auth, numbering, reference, templates, AppState};

#[derive(OpenApi)]
#[openapi(
    info(title = "Document numbering service", version = "1", description = "Official running numbers: preview, reserve, confirm, cancel, generate."),
    paths(
        numbering::http::preview,
        numbering::http::reserve,
        numbering::http::confirm,
        numbering::http::cancel,
        numbering::http::generate,
        reference::http::list,
        templates::http::list,
        templates::http::get,
        templates::http::create,
        templates::http::update,
        auth::http::login,
        audit::http::verify,
        audit::http::search,
        audit::http::errors,
        audit::http::resolve_error,
        templates::http::versions,
        templates::http::rollback,
        crate::server::admin_ops::http::list_counters,
        crate::server::admin_ops::http::counter_numbers,
        crate::server::admin_ops::http::request_reset,
        crate::server::admin_ops::http::list_reset_requests,
        crate::server::admin_ops::http::revise,
        crate::server::admin_ops::http::void_and_replace,
        crate::server::admin_ops::http::manual_override,
        crate::server::workflow::http::get,
        crate::server::workflow::http::act,
        // imports and reference-data admin
        crate::server::import::http::import,
        reference::http::create,
        reference::http::update,
        reference::http::import,
    ),
    components(schemas(crate::server::error::ErrorBody, crate::contract::import::ImportReport, crate::contract::import::ImportRowReport, crate::contract::import::ReferenceDocument, reference::http::SavedItem)),
    modifiers(&BearerAuth)
)]
pub struct ApiDoc;

struct BearerAuth;
impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        if let Some(components) = openapi.components.as_mut() {
            components.add_security_scheme("bearer", SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()));
        }
    }
}

/// The largest JSON body the API reads; anything bigger is 413 with the §6 body.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The largest server-function body: the bulk import's text (JSON-escaped, with room for escapes)
/// plus the other fields.
pub const MAX_SERVER_FN_BODY_BYTES: usize = 3 * crate::server::import::MAX_BYTES + 64 * 1024;

/// Where the server functions live (the `prefix` of every `#[server]`).
pub const SERVER_FN_PATH: &str = "/sfn/";

/// Server functions (registered by `leptos_routes_with_context`, under `/sfn/`) get a body over the bound
/// refused with the §6 413 body; past the bound Leptos would answer a bare 500 "length limit exceeded".
async fn bound_server_fn_bodies(req: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    if !req.uri().path().starts_with(SERVER_FN_PATH) {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    match axum::body::to_bytes(body, MAX_SERVER_FN_BODY_BYTES).await {
        Ok(bytes) => next.run(axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes))).await,
        Err(_) => AppError::PayloadTooLarge.into_response(),
    }
}

pub fn api_router() -> Router<AppState> {
    Router::new()
        .route("/auth/login", post(auth::http::login))
        .route("/auth/logout", post(auth::http::logout))
        .route("/auth/me", get(auth::http::me))
        .route("/document-numbering/preview", post(numbering::http::preview))
        .route("/document-numbering/reserve", post(numbering::http::reserve))
        .route("/document-numbering/confirm", post(numbering::http::confirm))
        .route("/document-numbering/cancel", post(numbering::http::cancel))
        .route("/documents/{document_id}/generate-number", post(numbering::http::generate))
        .route("/document-numbering/configs", get(templates::http::list).post(templates::http::create))
        .route("/document-numbering/configs/{id}", get(templates::http::get).put(templates::http::update))
        .route("/document-numbering/logs/audit/verify", get(audit::http::verify))
        .route("/document-numbering/logs/audit", get(audit::http::search))
        .route("/document-numbering/logs/errors", get(audit::http::errors))
        .route("/document-numbering/logs/errors/{id}/resolve", post(audit::http::resolve_error))
        .route("/document-numbering/configs/{id}/versions", get(templates::http::versions))
        .route("/document-numbering/configs/{id}/rollback", post(templates::http::rollback))
        .route("/reference/{kind}", get(reference::http::list))
        .route("/admin/api-tokens", get(auth::http::list_tokens).post(auth::http::create_token))
        .route("/admin/api-tokens/{id}", delete(auth::http::revoke_token))
        .route("/admin/users", post(auth::http::create_user))
        .route("/document-numbering/counters", get(crate::server::admin_ops::http::list_counters))
        .route("/document-numbering/counters/{id}/numbers", get(crate::server::admin_ops::http::counter_numbers))
        .route("/document-numbering/counters/{id}/reset-requests", post(crate::server::admin_ops::http::request_reset))
        .route("/document-numbering/revise", post(crate::server::admin_ops::http::revise))
        .route("/document-numbering/void-and-replace", post(crate::server::admin_ops::http::void_and_replace))
        .route("/document-numbering/manual-override", post(crate::server::admin_ops::http::manual_override))
        .route("/workflow/reset-requests", get(crate::server::admin_ops::http::list_reset_requests))
        .route("/workflow/{public_id}", get(crate::server::workflow::http::get))
        .route("/workflow/{public_id}/actions/{action}", post(crate::server::workflow::http::act))
        // imports and reference-data admin (the imports read their bodies with their own, larger limits)
        .route("/document-numbering/import", post(crate::server::import::http::import))
        .route("/reference/import", post(reference::http::import))
        .route("/reference/{kind}", post(reference::http::create))
        .route("/reference/{kind}/{id}", axum::routing::put(reference::http::update))
        .route("/openapi.json", get(|| async { Json(ApiDoc::openapi()) }))
        .fallback(|| async { AppError::not_found("ที่อยู่ API นี้", "no such API endpoint") })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// `/health`: the database answers, and a preview can be computed.
async fn health(State(s): State<AppState>) -> impl IntoResponse {
    let database = s.db.ping().await.is_ok();
    let reference = s.reference.get().await.is_ok();
    // Redis down is not unhealthy: numbering continues on the database lock.
    let redis = match s.engine.redis_up() {
        None => "not configured",
        Some(true) => "up",
        Some(false) => "down (database-lock fallback)",
    };
    let status = if database && reference { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, Json(serde_json::json!({ "status": if status == StatusCode::OK { "ok" } else { "degraded" }, "database": database, "redis": redis, "referenceData": reference })))
}

/// The whole application: API, server functions, pages, static files, sessions.
pub fn router<Store: SessionStore + Clone>(state: AppState, session_store: Store) -> Router {
    let routes = generate_route_list(App);
    let options = state.leptos_options.clone();
    let sessions = SessionManagerLayer::new(session_store)
        .with_name("docnum_session")
        .with_http_only(true)
        .with_same_site(tower_sessions::cookie::SameSite::Lax)
        .with_secure(state.config.secure_cookies)
        .with_expiry(Expiry::OnInactivity(tower_sessions::cookie::time::Duration::hours(8)));
    let ctx_state = state.clone();
    Router::new()
        .nest("/api/v1", api_router())
        .route("/health", get(health))
        // --- observability (SPEC §10): /metrics, no login, outside the number rate limits (METRICS_TOKEN optional) ---
        .merge(crate::server::metrics::routes())
        .leptos_routes_with_context(&state, routes, move || provide_context(ctx_state.clone()), {
            let options = options.clone();
            move || shell(options.clone())
        })
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell))
        .layer(axum::middleware::from_fn(bound_server_fn_bodies))
        // what the server functions may read (the API's routes set their own, smaller limit)
        .layer(DefaultBodyLimit::max(MAX_SERVER_FN_BODY_BYTES))
        .layer(sessions)
        .with_state(state)
}


