//! REST: login / logout / me, API tokens and users (administration).

use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use tower_sessions::Session;
use utoipa::ToSchema;

use crate::contract::{ApiTokenInfo, CreatedApiToken, Role, UserInfo};
use crate::server::auth::{self, store, Caller};
use crate::server::error::{ApiJson, ApiPath, AppError, ErrorBody};
use crate::server::AppState;

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

pub async fn create_token(State(s): State<AppState>, caller: Caller, ApiJson(body): ApiJson<CreateTokenBody>) -> Result<Json<CreatedApiToken>, AppError> {
    Ok(Json(create_token_for(&s, &caller, &body.name, &body.project_ids).await?))
}

pub async fn create_token_for(s: &AppState, caller: &Caller, name: &str, project_ids: &[i64]) -> Result<CreatedApiToken, AppError> {
    let admin = caller.require_admin()?;
    let snapshot = s.reference.get().await?;
    for p in project_ids {
        snapshot.project(Some(*p), None)?;
        if admin.role != Role::SuperAdmin {
            caller.require_project_admin(*p)?;
        }
    }
    if project_ids.is_empty() && admin.role != Role::SuperAdmin {
        return Err(AppError::forbidden("only a super admin may create a token for all projects"));
    }
    let (info, token) = store::create_token(&s.db, name, project_ids, admin.id, s.clock.now_ms()).await?;
    Ok(CreatedApiToken { info, token })
}

pub async fn list_tokens(State(s): State<AppState>, caller: Caller) -> Result<Json<Vec<ApiTokenInfo>>, AppError> {
    caller.require_admin()?;
    Ok(Json(store::list_tokens(&s.db).await?))
}

pub async fn revoke_token(State(s): State<AppState>, caller: Caller, ApiPath(id): ApiPath<i64>) -> Result<Json<serde_json::Value>, AppError> {
    revoke_token_for(&s, &caller, id).await?;
    Ok(Json(serde_json::json!({ "revoked": id })))
}

pub async fn revoke_token_for(s: &AppState, caller: &Caller, id: i64) -> Result<(), AppError> {
    caller.require_admin()?;
    if !store::revoke_token(&s.db, id, s.clock.now_ms()).await? {
        return Err(AppError::not_found(format!("API token {id} (หรือถูกเพิกถอนแล้ว)"), format!("active API token {id}")));
    }
    s.auth.forget_all();
    Ok(())
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
    caller.require_super_admin()?;
    let role = Role::parse(&body.role)
        .ok_or_else(|| AppError::validation("บทบาทต้องเป็น STAFF, PROJECT_ADMIN หรือ SUPER_ADMIN", "role must be STAFF, PROJECT_ADMIN or SUPER_ADMIN"))?;
    let snapshot = s.reference.get().await?;
    for p in &body.admin_project_ids {
        snapshot.project(Some(*p), None)?;
    }
    let display = body.display_name.clone().unwrap_or_else(|| body.username.clone());
    let id = store::create_user(&s.db, &body.username, &display, &body.password, role).await?;
    for p in &body.admin_project_ids {
        store::add_project_admin(&s.db, id, *p).await?;
    }
    store::user_by_id(&s.db, id).await?.map(Json).ok_or_else(|| AppError::internal("user vanished"))
}
