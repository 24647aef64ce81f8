//! The HTTP surface: REST API under `/api/v1`, server functions under `/sfn`, `/health`, the OpenAPI
//! document, and the Leptos pages. Handlers live with their feature; this file only wires them.

use axum::extract::{DefaultBodyLimit, State};
use axum::handler::Handler;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use leptos::prelude::provide_context;
use leptos_axum::{generate_route_list, LeptosRoutes};
use tower_sessions::{Expiry, SessionManagerLayer, SessionStore};
use utoipa::OpenApi;

use crate::app::{shell, App, StylesheetHref};
use crate::server::error::AppError;
use crate::server::{admin_ops, audit, auth, bundle, edge, import, numbering, reference, templates, workflow, AppState};

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
        // users: own password, administration
        auth::http::change_password,
        auth::http::list_users,
        auth::http::create_user,
        auth::http::update_user,
        auth::http::deactivate_user,
        auth::http::reactivate_user,
        auth::http::set_user_password,
        audit::http::verify,
        audit::http::search,
        audit::http::errors,
        audit::http::resolve_error,
        templates::http::versions,
        templates::http::rollback,
        admin_ops::http::list_counters,
        admin_ops::http::counter_numbers,
        admin_ops::http::request_reset,
        admin_ops::http::list_reset_requests,
        admin_ops::http::revise,
        admin_ops::http::void_and_replace,
        admin_ops::http::manual_override,
        workflow::http::get,
        workflow::http::act,
        // imports and reference-data admin
        import::http::import,
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

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "docnum_session";

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

/// The REST API (under `/api/v1`): each feature's router, the OpenAPI document, the JSON 404 and the body bound
/// (the imports read their bodies with their own, larger limits).
pub fn api_router() -> Router<AppState> {
    Router::new()
        .merge(auth::http::router())
        .merge(numbering::http::router())
        .merge(templates::http::router())
        .merge(audit::http::router())
        .merge(reference::http::router())
        .merge(admin_ops::http::router())
        .merge(workflow::http::router())
        .merge(import::http::router())
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
    (
        status,
        Json(
            serde_json::json!({ "status": if status == StatusCode::OK { "ok" } else { "degraded" }, "database": database, "redis": redis, "referenceData": reference }),
        ),
    )
}

/// The site root's files (favicon.ico: not hashed) and the 404 page are `no-cache`: a browser asks again before it
/// uses them. Only the bundle's hashed files (`bundle::service`) are cached for good.
async fn revalidate_unless_said(req: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    let mut response = next.run(req).await;
    response.headers_mut().entry(axum::http::header::CACHE_CONTROL).or_insert(axum::http::HeaderValue::from_static(bundle::NO_CACHE));
    response
}

/// The whole application: API, server functions, pages, static files, sessions.
pub fn router<Store: SessionStore + Clone>(state: AppState, session_store: Store) -> Router {
    let routes = generate_route_list(App);
    let options = state.leptos_options.clone();
    let sessions = SessionManagerLayer::new(session_store)
        .with_name(SESSION_COOKIE)
        .with_http_only(true)
        .with_same_site(tower_sessions::cookie::SameSite::Lax)
        .with_secure(state.config.secure_cookies)
        .with_expiry(Expiry::OnInactivity(tower_sessions::cookie::time::Duration::hours(8)));
    let ctx_state = state.clone();
    let stylesheet = StylesheetHref(state.bundle.css_href.clone());
    let page_context = move || {
        provide_context(stylesheet.clone());
        edge::provide_nonce();
    };
    Router::new()
        .nest("/api/v1", api_router())
        .route("/health", get(health))
        // --- observability (SPEC §10): /metrics, no login, outside the number rate limits (METRICS_TOKEN optional) ---
        .merge(crate::server::metrics::routes())
        // the browser bundle: precompressed, hashed names cached for a year
        .nest_service(&bundle::route(&options), bundle::service(&options, state.bundle.clone()))
        .leptos_routes_with_context(
            &state,
            routes,
            {
                let page_context = page_context.clone();
                move || {
                    provide_context(ctx_state.clone());
                    page_context();
                }
            },
            {
                let options = options.clone();
                move || shell(options.clone())
            },
        )
        // the other files of the site root (favicon.ico), and the 404 page
        .fallback(
            leptos_axum::file_and_error_handler_with_context::<AppState, _>(page_context, shell)
                .layer(axum::middleware::from_fn(revalidate_unless_said)),
        )
        .layer(axum::middleware::from_fn(bound_server_fn_bodies))
        // what the server functions may read (the API's routes set their own, smaller limit)
        .layer(DefaultBodyLimit::max(MAX_SERVER_FN_BODY_BYTES))
        .layer(sessions)
        // outermost: the client address, CSRF, JSON-only server functions, the security headers (SPEC §8)
        .layer(axum::middleware::from_fn_with_state(state.clone(), edge::guard))
        .with_state(state)
}
