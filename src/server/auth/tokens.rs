//! Administration of API tokens and users: who may create, list and revoke tokens, who may create users.
//! The REST handlers and the server functions both call these; each checks the caller itself.

use crate::contract::{ApiTokenInfo, CreatedApiToken, Role, UserInfo};
use crate::server::auth::{store, Caller};
use crate::server::error::AppError;
use crate::server::AppState;

/// A new API token (admins): a project admin only for projects they administer, a super admin for any
/// (no project = every project, super admins only). The secret is shown once, here.
pub async fn create(s: &AppState, caller: &Caller, name: &str, project_ids: &[i64]) -> Result<CreatedApiToken, AppError> {
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

/// Every API token, newest first (admins).
pub async fn list(s: &AppState, caller: &Caller) -> Result<Vec<ApiTokenInfo>, AppError> {
    caller.require_admin()?;
    store::list_tokens(&s.db).await
}

/// Revokes an active token (admins); 404 when there is none of that id.
pub async fn revoke(s: &AppState, caller: &Caller, id: i64) -> Result<(), AppError> {
    caller.require_admin()?;
    if !store::revoke_token(&s.db, id, s.clock.now_ms()).await? {
        return Err(AppError::not_found(format!("API token {id} (หรือถูกเพิกถอนแล้ว)"), format!("active API token {id}")));
    }
    s.auth.forget_all();
    Ok(())
}

/// A user to create.
pub struct NewUser<'a> {
    pub username: &'a str,
    pub display_name: Option<&'a str>,
    pub password: &'a str,
    pub role: &'a str,
    pub admin_project_ids: &'a [i64],
}

/// Creates a user (super admins), with the projects they administer.
pub async fn create_user(s: &AppState, caller: &Caller, new: NewUser<'_>) -> Result<UserInfo, AppError> {
    caller.require_super_admin()?;
    let role = Role::parse(new.role).ok_or_else(|| {
        AppError::validation("บทบาทต้องเป็น STAFF, PROJECT_ADMIN หรือ SUPER_ADMIN", "role must be STAFF, PROJECT_ADMIN or SUPER_ADMIN")
    })?;
    let snapshot = s.reference.get().await?;
    for p in new.admin_project_ids {
        snapshot.project(Some(*p), None)?;
    }
    let display = new.display_name.unwrap_or(new.username);
    let id = store::create_user(&s.db, new.username, display, new.password, role).await?;
    for p in new.admin_project_ids {
        store::add_project_admin(&s.db, id, *p).await?;
    }
    store::user_by_id(&s.db, id).await?.ok_or_else(|| AppError::internal("user vanished"))
}
