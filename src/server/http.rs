//! The HTTP surface: REST API under `/api/v1`, server functions under `/sfn`, `/health`, the OpenAPI
//! document, and the Leptos pages. Handlers live with their feature; this file only wires them.

use std::collections::HashSet;
use std::sync::OnceLock;

use axum::extract::{DefaultBodyLimit, State};
use axum::handler::Handler;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use leptos::prelude::provide_context;
use leptos_axum::{generate_route_list, AxumRouteListing, LeptosRoutes};
use tower_sessions::{Expiry, Session, SessionManagerLayer, SessionStore};
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

use crate::app::{shell, App, StaffScript, StylesheetHref, PAGES_WITHOUT_LOGIN};
use crate::contract::messages::RequestDetail;
use crate::server::error::{AppError, ErrorBody};
use crate::server::{
    admin_ops, auth, bundle, edge, import, inflight, metrics, notifications, numbering, page_owner, reference, seed_paths, templates, tlog, AppState,
};

/// The parts of the OpenAPI document that no route carries: title, security schemes. The paths and their
/// schemas come from the routers themselves ([`api`]), so the document cannot drift from what is served.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Document numbering service",
        version = "1",
        description = "Official running numbers: preview, reserve, confirm, cancel, generate; templates, counters, audit, \
            reference data, users and API tokens. Errors answer the body `ErrorBody` (docs/rules/api.md)."
    ),
    components(schemas(ErrorBody)),
    modifiers(&Security)
)]
pub(crate) struct ApiDoc;

/// Authentication: an API token (`Authorization: Bearer …`) or the session cookie of `POST /api/v1/auth/login`
/// (state-changing requests with the cookie must come from the service's own pages: `Origin`).
struct Security;
impl utoipa::Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).description(Some("an API token")).build()),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                SESSION_COOKIE,
                "the session of POST /api/v1/auth/login; state-changing requests must carry the service's own Origin",
            ))),
        );
        openapi.security =
            Some(vec![SecurityRequirement::new("bearer", Vec::<String>::new()), SecurityRequirement::new("session", Vec::<String>::new())]);
    }
}

/// The largest JSON body the API reads; anything bigger is 413 with the error body.
pub(crate) const MAX_BODY_BYTES: usize = 64 * 1024;

/// The largest server-function body: the bulk import's text (JSON-escaped, with room for escapes)
/// plus the other fields.
pub const MAX_SERVER_FN_BODY_BYTES: usize = 3 * crate::server::import::MAX_BYTES + 64 * 1024;

pub(crate) use edge::{SERVER_FN_PATH, SESSION_COOKIE};

/// Server functions (registered by `leptos_routes_with_context`, under `/sfn/`) get a body over the bound
/// refused with the 413 error body; past the bound Leptos would answer a bare 500 "length limit exceeded".
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

/// Where the REST API is mounted.
pub(crate) const API_PREFIX: &str = "/api/v1";

/// The REST API (under [`API_PREFIX`]) and its OpenAPI document, both built from the same routers: every route
/// registered with `routes!` brings its `#[utoipa::path]` (paths, parameters, bodies, responses) into the
/// document. Also the JSON 404 and the body bound (the imports read their bodies with their own, larger limits).
pub(crate) fn api() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    let features = OpenApiRouter::new()
        .merge(auth::http::router())
        .merge(numbering::http::router())
        .merge(templates::http::router())
        .merge(admin_ops::logs::router())
        .merge(admin_ops::register::router())
        .merge(admin_ops::live::router())
        .merge(reference::http::router())
        .merge(admin_ops::http::router())
        .merge(admin_ops::workflows::router())
        .merge(import::http::router())
        .merge(notifications::http::router())
        .merge(seed_paths::router())
        .merge(tlog::http::router())
        .fallback(|| async { AppError::not_found(RequestDetail::NoSuchEndpoint) })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES));
    OpenApiRouter::with_openapi(ApiDoc::openapi()).nest(API_PREFIX, features).split_for_parts()
}

/// The OpenAPI document of the REST API (what `/api/v1/openapi.json` serves).
pub fn openapi() -> utoipa::openapi::OpenApi {
    api().1
}

/// The REST API with `/api/v1/openapi.json`; merged into the whole application (its paths carry the prefix).
pub(crate) fn api_router() -> Router<AppState> {
    let (router, doc) = api();
    let doc = std::sync::Arc::new(doc);
    router.route(&format!("{API_PREFIX}/openapi.json"), get(move || std::future::ready(Json(doc.as_ref().clone()))))
}

/// `/metrics` (docs/operations/README.md#metrics-and-alerts): the recorded series and what the parts of the service report at scrape time.
async fn scrape_metrics(state: AppState, headers: HeaderMap, token: Option<&str>) -> axum::response::Response {
    if let Some(expected) = token {
        if !metrics::bearer_matches(&headers, expected) {
            return metrics::unauthorized();
        }
    }
    let redis = if state.config.redis_urls.is_empty() {
        None
    } else {
        Some((metrics::redis_quorum_answers(&state.config.redis_urls).await, state.engine().redis_up() == Some(false)))
    };
    let utilization = match tokio::time::timeout(std::time::Duration::from_secs(2), state.engine().sequence_utilization()).await {
        Ok(Ok(rows)) => Some(rows),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "metrics: sequence utilization query failed");
            None
        }
        Err(_) => {
            tracing::warn!("metrics: sequence utilization query took more than 2 s; skipped");
            None
        }
    };
    metrics::scrape(metrics::Snapshot {
        redis,
        db: &state.db,
        in_flight: state.inflight.oldest_by_route(),
        utilization,
        event_streams: state.events.streams(),
        cert_expiry: {
            let config = &state.config;
            let urls = std::iter::once(config.database_url.as_str()).chain(config.redis_urls.iter().map(String::as_str));
            crate::server::tls::cert_files(urls, config.notify.ca_file.clone())
                .into_iter()
                .map(|f| (f.display().to_string(), crate::server::tls::expiry_of(&f)))
                .collect()
        },
    })
}

/// `/health`: the database answers, and a preview can be computed.
async fn health(State(s): State<AppState>) -> impl IntoResponse {
    let database = s.db.ping().await.is_ok();
    let reference = s.reference().get().await.is_ok();
    // Redis down is not unhealthy: numbering continues on the database lock.
    let redis = match s.engine().redis_up() {
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

/// `/health/live`: the process answers (a load balancer restarts it otherwise).
async fn live() -> impl IntoResponse {
    Json(serde_json::json!({ "status": "live" }))
}

/// The longest a readiness check waits for any one part.
const READY_PART_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// `/health/ready`: the database answers, Redis answers when configured, and a preview goes through the engine.
/// 503 names the parts that failed, so a load balancer sends no traffic and an operator sees why.
async fn ready(State(s): State<AppState>) -> impl IntoResponse {
    let database = matches!(tokio::time::timeout(READY_PART_TIMEOUT, s.db.ping()).await, Ok(Ok(_)));
    let redis = match tokio::time::timeout(READY_PART_TIMEOUT, s.engine().redis_reachable()).await {
        Ok(None) => None,
        Ok(Some(up)) => Some(up),
        Err(_) => Some(false),
    };
    let preview = match tokio::time::timeout(READY_PART_TIMEOUT, s.engine().probe_preview()).await {
        Ok(Ok(number)) => Ok(number),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("timed out".to_string()),
    };
    let mut failing = Vec::new();
    if !database {
        failing.push("database");
    }
    if redis == Some(false) {
        failing.push("redis");
    }
    if preview.is_err() {
        failing.push("preview");
    }
    let status = if failing.is_empty() { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    let body = serde_json::json!({
        "status": if failing.is_empty() { "ready" } else { "not ready" },
        "failing": failing,
        "database": database,
        "redis": match redis { None => "not configured", Some(true) => "up", Some(false) => "down" },
        "preview": match &preview { Ok(Some(n)) => serde_json::json!(n), Ok(None) => serde_json::json!(null), Err(e) => serde_json::json!({ "error": e }) },
    });
    (status, Json(body))
}

/// The site root's files (favicon.ico: not hashed) and the 404 page are `no-cache`: a browser asks again before it
/// uses them. Only the bundle's hashed files (`bundle::service`) are cached for good.
async fn revalidate_unless_said(req: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    let mut response = next.run(req).await;
    response.headers_mut().entry(axum::http::header::CACHE_CONTROL).or_insert(axum::http::HeaderValue::from_static(bundle::NO_CACHE));
    response
}

/// The pages' routes, generated once per process. Generating them raises a process-wide flag
/// (leptos_server's `SuppressResourceLoad`): a resource first polled by any page render meanwhile never loads, and
/// its page never ends (leptos-rs/leptos#4773). A process serves one app, but the tests start many in one process,
/// and a second generation while another test rendered a page hung that page (`edge::every_page…`, about one run in
/// three at four test threads). Once generated, no render can overlap a generation again.
fn route_list() -> Vec<AxumRouteListing> {
    static ROUTES: OnceLock<Vec<AxumRouteListing>> = OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(App)).clone()
}

/// The pages that need a session: every route of the app but [`PAGES_WITHOUT_LOGIN`].
fn pages_needing_a_session() -> &'static HashSet<String> {
    static PAGES: OnceLock<HashSet<String>> = OnceLock::new();
    PAGES.get_or_init(|| route_list().iter().map(|r| r.path().to_string()).filter(|p| !PAGES_WITHOUT_LOGIN.contains(&p.as_str())).collect())
}

/// A page that needs a session, loaded without one, is answered `303 See Other` to `/login` here, before Leptos renders
/// anything: so no `<Redirect>` runs in a server render, where a client hanging up could wedge a worker
/// (`app::widgets::ToLogin`). A session store that fails lets the page render, and show the error.
async fn pages_need_a_session(
    State(state): State<AppState>,
    session: Session,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let page_load = matches!(*req.method(), Method::GET | Method::HEAD) && pages_needing_a_session().contains(req.uri().path());
    if page_load && matches!(auth::user_from_session(&state.db, &session).await, Ok(None)) {
        return (StatusCode::SEE_OTHER, [(header::LOCATION, "/login"), (header::CACHE_CONTROL, bundle::NO_CACHE)]).into_response();
    }
    next.run(req).await
}

/// The whole application: API, server functions, pages, static files, sessions.
pub(crate) fn router<Store: SessionStore + Clone>(state: AppState, session_store: Store) -> Router {
    let routes = route_list();
    let options = state.leptos_options.clone();
    let sessions = SessionManagerLayer::new(session_store)
        .with_name(SESSION_COOKIE)
        .with_http_only(true)
        .with_same_site(tower_sessions::cookie::SameSite::Lax)
        .with_secure(state.config.secure_cookies)
        .with_expiry(Expiry::OnInactivity(tower_sessions::cookie::time::Duration::hours(8)));
    let ctx_state = state.clone();
    let stylesheet = StylesheetHref(state.bundle.css_href.clone());
    let staff_script = state.bundle.staff_script.clone().map(StaffScript);
    let page_context = move || {
        provide_context(stylesheet.clone());
        if let Some(script) = &staff_script {
            provide_context(script.clone());
        }
        edge::provide_nonce();
        page_owner::remember();
    };
    // the pages (and the 404 page): each render's reactive tree cleaned up when its body goes, finished or not
    let pages = Router::new()
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
        .layer(axum::middleware::from_fn(page_owner::layer));
    Router::new()
        .merge(api_router())
        .merge(tlog::http::public())
        .route("/health", get(health))
        .route("/health/live", get(live))
        .route("/health/ready", get(ready))
        // a counter's batches from the other instances, while this one holds its lock (CLUSTER_SECRET; not in the API)
        .route(numbering::forward::PATH, axum::routing::post(numbering::forward::receive))
        // the staff pages' plain HTML forms (login, logout, reserve, confirm, cancel): they work without scripts
        .merge(auth::forms::router())
        .merge(numbering::forms::router())
        .merge(numbering::blocks::forms::router())
        // --- observability (docs/operations/README.md#metrics-and-alerts): /metrics, no login, outside the number
        // rate limits (METRICS_TOKEN optional) ---
        .route("/metrics", {
            let token = state.config.metrics_token.clone();
            get(move |State(state): State<AppState>, headers: HeaderMap| {
                let token = token.clone();
                async move { scrape_metrics(state, headers, token.as_deref()).await }
            })
        })
        // the browser bundle: precompressed, hashed names cached for a year
        .nest_service(&bundle::route(&options), bundle::service(&options, state.bundle.clone()))
        .merge(pages)
        .layer(axum::middleware::from_fn(bound_server_fn_bodies))
        .layer(axum::middleware::from_fn_with_state(state.clone(), pages_need_a_session))
        // what the server functions may read (the API's routes set their own, smaller limit)
        .layer(DefaultBodyLimit::max(MAX_SERVER_FN_BODY_BYTES))
        .layer(sessions)
        // outermost: the client address, CSRF, JSON-only server functions, the security headers (docs/rules/api.md#callers-and-authentication)
        .layer(axum::middleware::from_fn_with_state(state.clone(), edge::guard))
        // per route, so its pattern is known: counted until its answer is sent or dropped (the watchdog, the stop)
        .layer(axum::middleware::from_fn_with_state(state.inflight.clone(), inflight::track))
        // error bodies in the caller's language (Thai unless Accept-Language prefers English)
        .layer(axum::middleware::from_fn(crate::server::error::answer_in_callers_language))
        .with_state(state)
}
