//! Logging in and out without scripts: the login page's and the header's plain HTML forms post here and are answered
//! `303 See Other` (to the reserve page, or back to the login page with the refusal kept once in the session). The
//! service is the one REST and the server functions call: the same throttle and the same record of attempts.

use std::sync::Arc;

use axum::extract::rejection::FormRejection;
use axum::extract::{FromRef, State};
use axum::http::header;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Form, Router};
use serde::Deserialize;
use tower_sessions::Session;

use super::{Access, ClientInfo};
use crate::contract::forms::path;
use crate::contract::ApiError;
use crate::server::error::AppError;

/// The session's key of a refused login, for the login page to show once.
const REFUSAL_KEY: &str = "login.refusal";

pub(crate) fn router<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<Access>: FromRef<S>,
{
    Router::new().route(path::LOGIN, post(login)).route(path::LOGOUT, post(logout))
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

async fn login(State(s): State<Arc<Access>>, session: Session, client: ClientInfo, form: Result<Form<LoginFields>, FormRejection>) -> Response {
    let Form(fields) = match form {
        Ok(f) => f,
        Err(rejection) => return AppError::validation("ต้องส่งข้อมูลเป็นแบบฟอร์ม", format!("a form was expected: {rejection}")).into_response(),
    };
    match super::login(&s, &session, &client, &fields.username, &fields.password).await {
        Ok(_) => see_other("/"),
        Err(e) => {
            if e.status().is_server_error() {
                tracing::error!(error = %e.report(), "login form failed");
            }
            if let Err(store) = session.insert(REFUSAL_KEY, ApiError::from(&e)).await {
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

/// Why the last login from this browser was refused, once (None when it was not).
pub(crate) async fn take_refusal(session: &Session) -> Result<Option<ApiError>, AppError> {
    session.remove(REFUSAL_KEY).await.map_err(|e| AppError::internal_from("session store", e))
}
