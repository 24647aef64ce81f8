//! What every server-function body needs (declared per feature in the pages' `api` modules): the server state and the
//! caller behind the call, found from the request, and a service error turned into the [`ApiError`] the page
//! reads, with the HTTP status of the REST API. A body is: find the caller → call the service → map the error.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use leptos::prelude::use_context;
use tower_sessions::Session;

use crate::contract::{ApiError, Lang};
use crate::server::auth::{self, client_of, Caller, Principal};
use crate::server::error::AppError;
use crate::server::AppState;

/// A service error as the browser receives it. A refusal from a browser call is a 4xx like on the REST API;
/// while a page renders on the server the page keeps its own status.
pub(crate) fn error(e: AppError) -> ApiError {
    let browser_call = use_context::<Parts>().is_some_and(|p| p.uri.path().starts_with(crate::server::http::SERVER_FN_PATH));
    if let (true, Some(response)) = (browser_call, use_context::<leptos_axum::ResponseOptions>()) {
        response.set_status(e.status());
        if let Some(v) = e.retry_after().and_then(|secs| axum::http::HeaderValue::from_str(&secs.max(1).to_string()).ok()) {
            response.insert_header(axum::http::header::RETRY_AFTER, v);
        }
    }
    if e.status().is_server_error() {
        tracing::error!(error = %e.report(), "server function failed");
    }
    e.api_error(page_lang())
}

/// The language the calling page is shown in (its cookie), for the messages a server function answers it.
pub(crate) fn page_lang() -> Lang {
    use_context::<Parts>().map(|p| crate::server::error::page_lang(&p.headers)).unwrap_or_default()
}

/// The server state (provided to every server function by the router).
pub(crate) fn state() -> Result<AppState, ApiError> {
    use_context::<AppState>().ok_or_else(|| gone("server state"))
}

fn parts() -> Result<Parts, ApiError> {
    use_context::<Parts>().ok_or_else(|| gone("request parts"))
}

/// The router provides the state and the request to every server function and every render; they are missing only
/// in a render torn down because its client left (`page_owner`), where a resource's server function ran on. Nobody
/// reads that answer: it is no server fault to log as one.
fn gone(what: &'static str) -> ApiError {
    tracing::debug!(what, "a server function ran on in a render whose client has left");
    AppError::internal(format!("{what} missing from the server-function context")).api_error(Lang::default())
}

/// The session of this call ("who am I" and the pages' form results work on it directly).
pub(crate) async fn session(state: &AppState) -> Result<Session, ApiError> {
    let mut parts = parts()?;
    Session::from_request_parts(&mut parts, state).await.map_err(|_| error(AppError::Unauthenticated))
}

/// The server state and the logged-in user behind this call (sessions only: tokens are for the REST API);
/// no session user is 401.
pub(crate) async fn caller() -> Result<(AppState, Caller), ApiError> {
    let state = state()?;
    let parts = parts()?;
    let (ip, user_agent) = client_of(&parts);
    let session = session(&state).await?;
    let user = auth::user_from_session(&state.db, &session).await.map_err(error)?.ok_or_else(|| error(AppError::Unauthenticated))?;
    Ok((state, Caller { principal: Principal::User(user), ip, user_agent }))
}
