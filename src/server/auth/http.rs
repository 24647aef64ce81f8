//! REST: login / logout / me, the caller's own password, API tokens and users (administration). Thin: the
//! services in `auth`, `auth::tokens` and `auth::users` check the caller.

use axum::extract::State;
use axum::routing::{delete, get, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use tower_sessions::Session;
use utoipa::ToSchema;

use crate::contract::{
    ApiTokenInfo, CreatedApiToken, LoginAttemptPage, LoginAttemptQuery, NewUser, PasswordChange, PasswordSet, UserAdminInfo, UserInfo, UserUpdate,
};
use crate::server::auth::{self, attempts, tokens, users, Caller, ClientInfo};
use crate::server::error::{ApiJson, ApiPath, ApiQuery, AppError, ErrorBody};
use crate::server::AppState;

/// The login, token and user routes (under `/api/v1`).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/auth/login", post(login))
        .route("/auth/logout", post(logout))
        .route("/auth/me", get(me))
        .route("/admin/api-tokens", get(list_tokens).post(create_token))
        .route("/admin/api-tokens/{id}", delete(revoke_token))
        .route("/auth/password", post(change_password))
        .route("/admin/users", get(list_users).post(create_user))
        .route("/admin/users/{id}", put(update_user))
        .route("/admin/users/{id}/deactivate", post(deactivate_user))
        .route("/admin/users/{id}/reactivate", post(reactivate_user))
        .route("/admin/users/{id}/password", post(set_user_password))
        .route("/admin/login-attempts", get(login_attempts))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginBody {
    pub username: String,
    pub password: String,
}

/// `POST /auth/login`: throttled per username and per client address (429 with `Retry-After`), recorded.
#[utoipa::path(post, path = "/api/v1/auth/login", request_body = LoginBody,
    responses((status = 200, description = "logged in; the session cookie is set"), (status = 401, body = ErrorBody),
        (status = 429, description = "too many failed logins of this username or from this address; see Retry-After", body = ErrorBody)), tag = "auth")]
pub async fn login(
    State(s): State<AppState>,
    session: Session,
    client: ClientInfo,
    ApiJson(body): ApiJson<LoginBody>,
) -> Result<Json<UserInfo>, AppError> {
    Ok(Json(auth::login(&s, &session, &client, &body.username, &body.password).await?))
}

/// `GET /admin/login-attempts?username&outcome&page&pageSize`: failed and successful logins, newest first
/// (super admins).
#[utoipa::path(get, path = "/api/v1/admin/login-attempts",
    params(("username" = Option<String>, Query, description = "the username as typed"),
        ("outcome" = Option<String>, Query, description = "OK, WRONG_PASSWORD, UNKNOWN_USER, THROTTLED or INACTIVE"),
        ("page" = Option<u32>, Query,), ("pageSize" = Option<u32>, Query,)),
    responses((status = 200, body = LoginAttemptPage), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody)), tag = "users")]
pub async fn login_attempts(
    State(s): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<LoginAttemptQuery>,
) -> Result<Json<LoginAttemptPage>, AppError> {
    Ok(Json(attempts::search(&s, &caller, &q).await?))
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

/// `POST /admin/users` (super admins).
#[utoipa::path(post, path = "/api/v1/admin/users", request_body = NewUser,
    responses((status = 200, description = "the new user"), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody)), tag = "users")]
pub async fn create_user(State(s): State<AppState>, caller: Caller, ApiJson(body): ApiJson<NewUser>) -> Result<Json<UserInfo>, AppError> {
    Ok(Json(users::create_user(&s, &caller, &body).await?))
}

/// `GET /admin/users`: every user with role, projects administered and state (super admins).
#[utoipa::path(get, path = "/api/v1/admin/users",
    responses((status = 200, body = [UserAdminInfo]), (status = 403, body = ErrorBody)), tag = "users")]
pub async fn list_users(State(s): State<AppState>, caller: Caller) -> Result<Json<Vec<UserAdminInfo>>, AppError> {
    Ok(Json(users::list(&s, &caller).await?))
}

/// `PUT /admin/users/{id}`: role and project-admin rights (super admins).
#[utoipa::path(put, path = "/api/v1/admin/users/{id}", params(("id" = i64, Path,)), request_body = UserUpdate,
    responses((status = 200, body = UserAdminInfo), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)), tag = "users")]
pub async fn update_user(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<UserUpdate>,
) -> Result<Json<UserAdminInfo>, AppError> {
    Ok(Json(users::update(&s, &caller, id, &body).await?))
}

/// `POST /admin/users/{id}/deactivate` (super admins; not themself, not the last super admin).
#[utoipa::path(post, path = "/api/v1/admin/users/{id}/deactivate", params(("id" = i64, Path,)),
    responses((status = 200, body = UserAdminInfo), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)), tag = "users")]
pub async fn deactivate_user(State(s): State<AppState>, caller: Caller, ApiPath(id): ApiPath<i64>) -> Result<Json<UserAdminInfo>, AppError> {
    Ok(Json(users::set_active(&s, &caller, id, false).await?))
}

/// `POST /admin/users/{id}/reactivate` (super admins).
#[utoipa::path(post, path = "/api/v1/admin/users/{id}/reactivate", params(("id" = i64, Path,)),
    responses((status = 200, body = UserAdminInfo), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)), tag = "users")]
pub async fn reactivate_user(State(s): State<AppState>, caller: Caller, ApiPath(id): ApiPath<i64>) -> Result<Json<UserAdminInfo>, AppError> {
    Ok(Json(users::set_active(&s, &caller, id, true).await?))
}

/// `POST /admin/users/{id}/password`: a super admin sets a user's password.
#[utoipa::path(post, path = "/api/v1/admin/users/{id}/password", params(("id" = i64, Path,)), request_body = PasswordSet,
    responses((status = 200, description = "the password is set"), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)), tag = "users")]
pub async fn set_user_password(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<PasswordSet>,
) -> Result<Json<serde_json::Value>, AppError> {
    users::set_password(&s, &caller, id, &body.password).await?;
    Ok(Json(serde_json::json!({ "passwordSet": id })))
}

/// `POST /auth/password`: the logged-in user changes their own password (current and new).
#[utoipa::path(post, path = "/api/v1/auth/password", request_body = PasswordChange,
    responses((status = 200, description = "the password is changed"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)), tag = "auth")]
pub async fn change_password(
    State(s): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<PasswordChange>,
) -> Result<Json<serde_json::Value>, AppError> {
    users::change_own_password(&s, &caller, &body.current_password, &body.new_password).await?;
    Ok(Json(serde_json::json!({ "passwordChanged": true })))
}
