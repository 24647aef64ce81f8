//! REST: login / logout / me, the caller's own password, API tokens and users (administration). Thin: the
//! services in `auth`, `auth::tokens` and `auth::users` check the caller.

use std::sync::Arc;

use axum::extract::{FromRef, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use tower_sessions::Session;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::contract::{ApiTokenId, ProjectId, UserId};
use crate::contract::{
    ApiTokenInfo, CreatedApiToken, LoginAttemptPage, LoginAttemptQuery, NewUser, PasswordChange, PasswordSet, UserAdminInfo, UserInfo, UserUpdate,
};
use crate::server::auth::{self, attempts, tokens, users, Access, Caller, ClientInfo};
use crate::server::error::{error_set, FAILURES, INPUT, SIGNED_IN};
use crate::server::error::{ApiJson, ApiPath, ApiQuery, AppError, ByIdErrors, CreateErrors, QueryErrors, SignedInErrors};

error_set!(
    /// Logging in: wrong credentials, a cross-site form (CSRF), too many failures of this username or address.
    pub LoginErrors: FAILURES, INPUT; InvalidCredentials, Forbidden, RateLimited
);
error_set!(
    /// Logging out: only a cross-site request is refused.
    pub LogoutErrors: FAILURES; Forbidden
);
error_set!(
    /// Changing one's own password: the current one must be right.
    pub PasswordChangeErrors: FAILURES, SIGNED_IN, INPUT; InvalidCredentials
);

/// The login, token and user routes (under `/api/v1`); the OpenAPI document comes from the same calls.
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<Access>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(login))
        .routes(routes!(logout))
        .routes(routes!(me))
        .routes(routes!(list_tokens, create_token))
        .routes(routes!(revoke_token))
        .routes(routes!(change_password))
        .routes(routes!(list_users, create_user))
        .routes(routes!(update_user))
        .routes(routes!(deactivate_user))
        .routes(routes!(reactivate_user))
        .routes(routes!(set_user_password))
        .routes(routes!(login_attempts))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LoginBody {
    pub(crate) username: String,
    pub(crate) password: String,
}

/// `POST /auth/login`: a username and password for the session cookie `docnum_session`; throttled per username
/// and per client address (429 with `Retry-After`), every attempt recorded.
#[utoipa::path(post, path = "/auth/login", request_body = LoginBody, security(()),
    responses((status = 200, body = UserInfo, description = "logged in; the session cookie is set"), LoginErrors),
    tag = "auth")]
pub(crate) async fn login(
    State(s): State<Arc<Access>>,
    session: Session,
    client: ClientInfo,
    ApiJson(body): ApiJson<LoginBody>,
) -> Result<Json<UserInfo>, AppError> {
    Ok(Json(auth::login(&s, &session, &client, &body.username, &body.password).await?))
}

/// `GET /admin/login-attempts?username&outcome&page&pageSize`: failed and successful logins, newest first
/// (super admins).
#[utoipa::path(get, path = "/admin/login-attempts", params(LoginAttemptQuery),
    responses((status = 200, body = LoginAttemptPage), QueryErrors),
    tag = "users")]
pub(crate) async fn login_attempts(
    State(s): State<Arc<Access>>,
    caller: Caller,
    ApiQuery(q): ApiQuery<LoginAttemptQuery>,
) -> Result<Json<LoginAttemptPage>, AppError> {
    Ok(Json(attempts::search(&s.db, &caller, &q).await?))
}

/// `{"ok": true}`
#[derive(Serialize, ToSchema)]
pub(crate) struct LoggedOut {
    pub(crate) ok: bool,
}

/// `POST /auth/logout`: ends the session (if any).
#[utoipa::path(post, path = "/auth/logout", security((), ("session" = [])),
    responses((status = 200, body = LoggedOut, description = "the session is ended"), LogoutErrors),
    tag = "auth")]
pub(crate) async fn logout(session: Session) -> Result<Json<LoggedOut>, AppError> {
    auth::logout(&session).await?;
    Ok(Json(LoggedOut { ok: true }))
}

/// Who the caller is: a logged-in user, or the name of an API token.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub(crate) enum Me {
    User(UserInfo),
    Token {
        /// The API token's name.
        token: String,
    },
}

/// `GET /auth/me`
#[utoipa::path(get, path = "/auth/me",
    responses((status = 200, body = Me, description = "the caller: a user, or an API token's name"), SignedInErrors), tag = "auth")]
pub(crate) async fn me(caller: Caller) -> Json<Me> {
    Json(match caller.user() {
        Some(u) => Me::User(u.clone()),
        None => Me::Token { token: caller.display_name() },
    })
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateTokenBody {
    #[schema(schema_with = crate::contract::lenient::schema::token_name)]
    pub(crate) name: String,
    /// Projects the token may number; empty or absent = all projects (super admins only).
    #[serde(default)]
    #[schema(schema_with = crate::contract::lenient::schema::ids)]
    pub(crate) project_ids: Vec<ProjectId>,
}

/// `POST /admin/api-tokens` (admins): a new token; the secret is in the answer, once.
#[utoipa::path(post, path = "/admin/api-tokens", request_body = CreateTokenBody,
    responses((status = 200, body = CreatedApiToken), CreateErrors),
    tag = "auth")]
pub(crate) async fn create_token(
    State(s): State<Arc<Access>>,
    caller: Caller,
    ApiJson(body): ApiJson<CreateTokenBody>,
) -> Result<Json<CreatedApiToken>, AppError> {
    Ok(Json(tokens::create(&s, &caller, &body.name, &body.project_ids).await?))
}

/// `GET /admin/api-tokens` (admins): the tokens the caller administers.
#[utoipa::path(get, path = "/admin/api-tokens",
    responses((status = 200, body = [ApiTokenInfo]), SignedInErrors), tag = "auth")]
pub(crate) async fn list_tokens(State(s): State<Arc<Access>>, caller: Caller) -> Result<Json<Vec<ApiTokenInfo>>, AppError> {
    Ok(Json(tokens::list(&s, &caller).await?))
}

/// `{"revoked": id}`
#[derive(Serialize, ToSchema)]
pub(crate) struct Revoked {
    pub(crate) revoked: ApiTokenId,
}

/// `DELETE /admin/api-tokens/{id}` (admins).
#[utoipa::path(delete, path = "/admin/api-tokens/{id}", params(("id" = i64, Path,)),
    responses((status = 200, body = Revoked), ByIdErrors),
    tag = "auth")]
pub(crate) async fn revoke_token(State(s): State<Arc<Access>>, caller: Caller, ApiPath(id): ApiPath<ApiTokenId>) -> Result<Json<Revoked>, AppError> {
    tokens::revoke(&s, &caller, id).await?;
    Ok(Json(Revoked { revoked: id }))
}

/// `POST /admin/users` (super admins).
#[utoipa::path(post, path = "/admin/users", request_body = NewUser,
    responses((status = 200, body = UserInfo, description = "the new user"), CreateErrors),
    tag = "users")]
pub(crate) async fn create_user(State(s): State<Arc<Access>>, caller: Caller, ApiJson(body): ApiJson<NewUser>) -> Result<Json<UserInfo>, AppError> {
    Ok(Json(users::create_user(&s, &caller, &body).await?))
}

/// `GET /admin/users`: every user with role, projects administered and state (super admins).
#[utoipa::path(get, path = "/admin/users",
    responses((status = 200, body = [UserAdminInfo]), SignedInErrors), tag = "users")]
pub(crate) async fn list_users(State(s): State<Arc<Access>>, caller: Caller) -> Result<Json<Vec<UserAdminInfo>>, AppError> {
    Ok(Json(users::list(&s, &caller).await?))
}

/// `PUT /admin/users/{id}`: role and project-admin rights (super admins).
#[utoipa::path(put, path = "/admin/users/{id}", params(("id" = i64, Path,)), request_body = UserUpdate,
    responses((status = 200, body = UserAdminInfo), ByIdErrors),
    tag = "users")]
pub(crate) async fn update_user(
    State(s): State<Arc<Access>>,
    caller: Caller,
    ApiPath(id): ApiPath<UserId>,
    ApiJson(body): ApiJson<UserUpdate>,
) -> Result<Json<UserAdminInfo>, AppError> {
    Ok(Json(users::update(&s, &caller, id, &body).await?))
}

/// `POST /admin/users/{id}/deactivate` (super admins; not themself, not the last super admin).
#[utoipa::path(post, path = "/admin/users/{id}/deactivate", params(("id" = i64, Path,)),
    responses((status = 200, body = UserAdminInfo), ByIdErrors),
    tag = "users")]
pub(crate) async fn deactivate_user(
    State(s): State<Arc<Access>>,
    caller: Caller,
    ApiPath(id): ApiPath<UserId>,
) -> Result<Json<UserAdminInfo>, AppError> {
    Ok(Json(users::set_active(&s, &caller, id, false).await?))
}

/// `POST /admin/users/{id}/reactivate` (super admins).
#[utoipa::path(post, path = "/admin/users/{id}/reactivate", params(("id" = i64, Path,)),
    responses((status = 200, body = UserAdminInfo), ByIdErrors),
    tag = "users")]
pub(crate) async fn reactivate_user(
    State(s): State<Arc<Access>>,
    caller: Caller,
    ApiPath(id): ApiPath<UserId>,
) -> Result<Json<UserAdminInfo>, AppError> {
    Ok(Json(users::set_active(&s, &caller, id, true).await?))
}

/// `{"passwordSet": id}`
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PasswordSetResult {
    pub(crate) password_set: UserId,
}

/// `POST /admin/users/{id}/password`: a super admin sets a user's password.
#[utoipa::path(post, path = "/admin/users/{id}/password", params(("id" = i64, Path,)), request_body = PasswordSet,
    responses((status = 200, body = PasswordSetResult, description = "the password is set"), ByIdErrors),
    tag = "users")]
pub(crate) async fn set_user_password(
    State(s): State<Arc<Access>>,
    caller: Caller,
    ApiPath(id): ApiPath<UserId>,
    ApiJson(body): ApiJson<PasswordSet>,
) -> Result<Json<PasswordSetResult>, AppError> {
    users::set_password(&s, &caller, id, &body.password).await?;
    Ok(Json(PasswordSetResult { password_set: id }))
}

/// `{"passwordChanged": true}`
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PasswordChanged {
    pub(crate) password_changed: bool,
}

/// `POST /auth/password`: the logged-in user changes their own password (current and new).
#[utoipa::path(post, path = "/auth/password", request_body = PasswordChange,
    responses((status = 200, body = PasswordChanged, description = "the password is changed"), PasswordChangeErrors),
    tag = "auth")]
pub(crate) async fn change_password(
    State(s): State<Arc<Access>>,
    caller: Caller,
    ApiJson(body): ApiJson<PasswordChange>,
) -> Result<Json<PasswordChanged>, AppError> {
    users::change_own_password(&s, &caller, &body.current_password, &body.new_password).await?;
    Ok(Json(PasswordChanged { password_changed: true }))
}
