//! Server functions: who is logged in, why a login was refused, one's own password; API tokens (admins: `auth::tokens`
//! checks); users (super admins: `auth::users` checks).

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use crate::contract::*;
#[cfg(feature = "ssr")]
use crate::server::{auth, auth::attempts, auth::tokens, auth::users, sfn};

#[server(prefix = "/sfn", input = Json)]
pub async fn current_user() -> Result<Option<UserInfo>, ApiError> {
    let state = sfn::state()?;
    let session = sfn::session(&state).await?;
    auth::user_from_session(&state.db, &session).await.map_err(sfn::error)
}

/// Why the last login from this browser was refused, shown once (a login form posted without scripts).
#[server(prefix = "/sfn", input = Json)]
pub async fn login_refusal() -> Result<Option<ApiError>, ApiError> {
    let state = sfn::state()?;
    let session = sfn::session(&state).await?;
    auth::forms::take_refusal(&session).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn list_api_tokens() -> Result<Vec<ApiTokenInfo>, ApiError> {
    let (state, caller) = sfn::caller().await?;
    tokens::list(&state.access, &caller).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn create_api_token(name: String, project_ids: Vec<ProjectId>) -> Result<CreatedApiToken, ApiError> {
    let (state, caller) = sfn::caller().await?;
    tokens::create(&state.access, &caller, &name, &project_ids).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn revoke_api_token(id: ApiTokenId) -> Result<(), ApiError> {
    let (state, caller) = sfn::caller().await?;
    tokens::revoke(&state.access, &caller, id).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn change_password(current_password: String, new_password: String) -> Result<(), ApiError> {
    let (state, caller) = sfn::caller().await?;
    users::change_own_password(&state.access, &caller, &current_password, &new_password).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn list_users() -> Result<Vec<UserAdminInfo>, ApiError> {
    let (state, caller) = sfn::caller().await?;
    users::list(&state.access, &caller).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn create_user(new: NewUser) -> Result<UserInfo, ApiError> {
    let (state, caller) = sfn::caller().await?;
    users::create_user(&state.access, &caller, &new).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn update_user(id: UserId, change: UserUpdate) -> Result<UserAdminInfo, ApiError> {
    let (state, caller) = sfn::caller().await?;
    users::update(&state.access, &caller, id, &change).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn set_user_active(id: UserId, active: bool) -> Result<UserAdminInfo, ApiError> {
    let (state, caller) = sfn::caller().await?;
    users::set_active(&state.access, &caller, id, active).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn set_user_password(id: UserId, password: String) -> Result<(), ApiError> {
    let (state, caller) = sfn::caller().await?;
    users::set_password(&state.access, &caller, id, &password).await.map_err(sfn::error)
}

/// The login attempts (super admins: `auth::attempts` checks).
#[server(prefix = "/sfn", input = Json)]
pub async fn list_login_attempts(query: LoginAttemptQuery) -> Result<LoginAttemptPage, ApiError> {
    let (state, caller) = sfn::caller().await?;
    attempts::search(&state.db, &caller, &query).await.map_err(sfn::error)
}
