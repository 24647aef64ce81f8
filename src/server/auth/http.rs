//! REST: login / logout / me, API tokens and users (administration). Thin: the services in `auth` and
//! `auth::tokens` check the caller.

use axum::extract::State;
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use serde::Deserialize;
use tower_sessions::Session;
use utoipa::ToSchema;

use crate::contract::{ApiTokenInfo, CreatedApiToken, UserInfo};
use crate::server::auth::{self, tokens, Caller};
use crate::server::error::{ApiJson, ApiPath, AppError, ErrorBody};
use crate::server::AppState;

/// The login, token and user routes (under `/api/v1`).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/auth/login", post(login))
        .route("/auth/logout", post(logout))
        .route("/auth/me", get(me))
        .route("/admin/api-tokens", get(list_tokens).post(create_token))
        .route("/admin/api-tokens/{id}", delete(revoke_token))
        .route("/admin/users", post(create_user))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginBody {
    pub username: String,
    pub password: String,
}

#[utoipa::path(post, path = "/api/v1/auth/login", request_body = LoginBody,
    responses((status = 200, description = "logged in; the session cookie is set"), (status = 401, body = ErrorBody)), tag = "auth")]
pub async fn login(State(s): State<AppState>, session: Session, ApiJson(body): ApiJson<LoginBody>) -> Result<Json<UserInfo>, AppError> {
    Ok(Json(auth::login(&s, &session, &body.username, &body.password).await?))
}

pub async fn logout(session: Session) -> Result<Json<serde_json::Value>, AppError> {
    auth::logout(&session).await?;
    Ok(Json(serde_json::json!({ "ok": true })))
}

pub async fn me(caller: Caller) -> Result<Json<serde_json::Value>, AppError> {
    Ok(Json(match caller.user() {
        Some(u) => serde_json::to_value(u).unwrap_or_default(),
        None => serde_json::json!({ "token": caller.display_name() }),
    }))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateTokenBody {
    pub name: String,
    #[serde(default)]
    pub project_ids: Vec<i64>,
}

pub async fn create_token(
    State(s): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<CreateTokenBody>,
) -> Result<Json<CreatedApiToken>, AppError> {
    Ok(Json(tokens::create(&s, &caller, &body.name, &body.project_ids).await?))
}

pub async fn list_tokens(State(s): State<AppState>, caller: Caller) -> Result<Json<Vec<ApiTokenInfo>>, AppError> {
    Ok(Json(tokens::list(&s, &caller).await?))
}

pub async fn revoke_token(State(s): State<AppState>, caller: Caller, ApiPath(id): ApiPath<i64>) -> Result<Json<serde_json::Value>, AppError> {
    tokens::revoke(&s, &caller, id).await?;
    Ok(Json(serde_json::json!({ "revoked": id })))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateUserBody {
    pub username: String,
    pub display_name: Option<String>,
    pub password: String,
    pub role: String,
    #[serde(default)]
    pub admin_project_ids: Vec<i64>,
}

pub async fn create_user(State(s): State<AppState>, caller: Caller, ApiJson(body): ApiJson<CreateUserBody>) -> Result<Json<UserInfo>, AppError> {
    let new = tokens::NewUser {
        username: &body.username,
        display_name: body.display_name.as_deref(),
        password: &body.password,
        role: &body.role,
        admin_project_ids: &body.admin_project_ids,
    };
    Ok(Json(tokens::create_user(&s, &caller, new).await?))
}
