//! The login page's and the header's plain HTML forms, which work without scripts: each post is answered `303 See
//! Other`. Logging in goes to the reserve page, or back to the login page with the refusal kept once in the session
//! (the service REST calls: the same throttle and the same record of attempts); logging out to the login page; the
//! language switch sets the language cookie and goes back to the page it was posted from.

use std::sync::Arc;

use axum::extract::rejection::FormRejection;
use axum::extract::{FromRef, State};
use axum::http::header::{self, HeaderValue};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Form, Router};
use serde::Deserialize;
use tower_sessions::Session;

use super::{Access, ClientInfo};
use crate::contract::forms::path;
use crate::contract::messages::{AccessDetail, Lang, RequestDetail};
use crate::contract::ApiError;
use crate::server::error::{page_lang, AppError};

/// The session's key of a refused login, for the login page to show once.
const REFUSAL_KEY: &str = "login.refusal";

pub(crate) fn router<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<Access>: FromRef<S>,
{
    Router::new().route(path::LOGIN, post(login)).route(path::LOGOUT, post(logout)).route(path::LANG, post(switch_language))
}

#[derive(Deserialize)]
struct LoginFields {
    #[serde(default)]
    username: String,
    #[serde(default)]
    password: String,
}

fn see_other(location: &'static str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, location), (header::CACHE_CONTROL, "no-store")]).into_response()
}

async fn login(
    State(s): State<Arc<Access>>,
    session: Session,
    client: ClientInfo,
    headers: axum::http::HeaderMap,
    form: Result<Form<LoginFields>, FormRejection>,
) -> Response {
    let Form(fields) = match form {
        Ok(f) => f,
        Err(rejection) => return AppError::validation(RequestDetail::FormExpected { reason: &rejection }).into_response(),
    };
    match super::login(&s, &session, &client, &fields.username, &fields.password).await {
        Ok(_) => see_other("/"),
        Err(e) => {
            if e.status().is_server_error() {
                tracing::error!(error = %e.report(), "login form failed");
            }
            if let Err(store) = session.insert(REFUSAL_KEY, e.api_error(page_lang(&headers))).await {
                return AppError::internal_from("session store", store).into_response();
            }
            see_other("/login")
        }
    }
}

async fn logout(session: Session) -> Response {
    match super::logout(&session).await {
        Ok(()) => see_other("/login"),
        Err(e) => e.into_response(),
    }
}

#[derive(Deserialize)]
struct LanguageFields {
    #[serde(default)]
    lang: String,
    /// The page the switch was on (its path and query).
    #[serde(default)]
    back: String,
}

async fn switch_language(form: Result<Form<LanguageFields>, FormRejection>) -> Response {
    let Form(fields) = match form {
        Ok(f) => f,
        Err(rejection) => return AppError::validation(RequestDetail::FormExpected { reason: &rejection }).into_response(),
    };
    let Some(lang) = Lang::from_code(&fields.lang) else {
        return AppError::validation(AccessDetail::LanguageUnknown).into_response();
    };
    let back = HeaderValue::from_str(page_of_this_site(&fields.back)).unwrap_or(HeaderValue::from_static("/"));
    let cookie = HeaderValue::from_str(&lang.cookie()).expect("the language cookie is ASCII");
    (StatusCode::SEE_OTHER, [(header::LOCATION, back), (header::SET_COOKIE, cookie), (header::CACHE_CONTROL, HeaderValue::from_static("no-store"))])
        .into_response()
}

/// `back` when it is a path of this site (never another host: `//host`, `/\host`, a scheme), else the reserve page.
fn page_of_this_site(back: &str) -> &str {
    let local = back.starts_with('/') && !back.starts_with("//") && !back.contains('\\') && back.bytes().all(|b| b.is_ascii_graphic());
    if local {
        back
    } else {
        "/"
    }
}

/// Why the last login from this browser was refused, once (None when it was not).
pub(crate) async fn take_refusal(session: &Session) -> Result<Option<ApiError>, AppError> {
    session.remove(REFUSAL_KEY).await.map_err(|e| AppError::internal_from("session store", e))
}

#[cfg(test)]
mod tests {
    use super::page_of_this_site;

    #[test]
    fn the_language_switch_goes_back_only_to_this_site() {
        assert_eq!(page_of_this_site("/counters?project=1"), "/counters?project=1");
        assert_eq!(page_of_this_site("/"), "/");
        for elsewhere in ["", "https://evil.example/", "//evil.example/x", "/\\evil.example", "counters", "/a b", "/\u{e01}"] {
            assert_eq!(page_of_this_site(elsewhere), "/", "{elsewhere:?}");
        }
    }
}
