//! User administration: creating users, their role and project-admin rights, deactivation, passwords.
//! Super admins manage every user; each user changes their own password. Every change of a permission appends
//! a row to the `admin` audit chain in the transaction that makes it, whoever makes it: a caller of the REST API
//! or a page (`Caller::audit_base`), the CLI (`system_actor("cli")`) or the first start (`system_actor("system")`).
//! The audit rows name the user and what changed; never a password or its hash.

use std::collections::BTreeSet;

use serde_json::json;

use crate::contract::messages::AccessDetail;
use crate::contract::users::{MAX_PASSWORD_BYTES, MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS};
use crate::contract::{NewUser, ProjectId, Role, UserAdminInfo, UserId, UserInfo, UserUpdate};
use crate::server::audit::{self, AuditEntry, ADMIN_CHAIN};
use crate::server::auth::{password, store, Access, Caller};
use crate::server::db::{Conn, Db};
use crate::server::error::AppError;

/// Who made a change when no caller did: the CLI (`cli`) or the service itself (`system`).
pub fn system_actor(name: &str, now_ms: i64) -> AuditEntry {
    AuditEntry { username: Some(name.to_string()), fallback_used: "NONE".into(), created_at: now_ms, ..Default::default() }
}

/// A user to create, checked: username, display name, password length, role.
pub struct Validated {
    pub username: String,
    pub(crate) display_name: String,
    password: String,
    pub role: Role,
}

impl Validated {
    pub fn new(username: &str, display_name: Option<&str>, password: &str, role: &str) -> Result<Validated, AppError> {
        let username = username.trim();
        if username.is_empty() || username.chars().count() > 50 || username.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(AppError::validation(AccessDetail::UsernameShape));
        }
        let display_name = display_name.map(str::trim).filter(|d| !d.is_empty()).unwrap_or(username);
        if display_name.chars().count() > 200 || display_name.chars().any(char::is_control) {
            return Err(AppError::validation(AccessDetail::DisplayNameTooLong));
        }
        check_password(password)?;
        Ok(Validated {
            username: username.to_string(),
            display_name: display_name.to_string(),
            password: password.to_string(),
            role: parse_role(role)?,
        })
    }
}

fn parse_role(role: &str) -> Result<Role, AppError> {
    Role::parse(role).ok_or_else(|| AppError::validation(AccessDetail::RoleUnknown))
}

/// A new password: at least [`MIN_PASSWORD_CHARS`] characters, at most what login reads.
pub(crate) fn check_password(password: &str) -> Result<(), AppError> {
    let chars = password.chars().count();
    if chars > MAX_PASSWORD_CHARS {
        return Err(AppError::validation(AccessDetail::PasswordTooLong { max: &MAX_PASSWORD_CHARS }));
    }
    if chars < MIN_PASSWORD_CHARS {
        return Err(AppError::validation(AccessDetail::PasswordTooShort { min: &MIN_PASSWORD_CHARS }));
    }
    Ok(())
}

/// An audit row about a user: the operation, who the user is, and what changed.
fn user_entry(actor: &AuditEntry, operation: &str, user_id: UserId, username: &str, old: Option<String>, new: Option<String>) -> AuditEntry {
    AuditEntry {
        operation: operation.to_string(),
        status: "SUCCESS".into(),
        old_value: old,
        new_value: new,
        metadata: Some(json!({ "userId": user_id, "username": username }).to_string()),
        ..actor.clone()
    }
}

fn project_entry(actor: &AuditEntry, operation: &str, user_id: UserId, username: &str, project_id: ProjectId, code: &str) -> AuditEntry {
    let (old, new) = if operation == "PROJECT_ADMIN_GRANTED" { (None, Some(code.to_string())) } else { (Some(code.to_string()), None) };
    AuditEntry {
        metadata: Some(json!({ "userId": user_id, "username": username, "projectId": project_id, "projectCode": code }).to_string()),
        ..user_entry(actor, operation, user_id, username, old, new)
    }
}

fn not_found_user(id: UserId) -> AppError {
    AppError::not_found(AccessDetail::User { id: &id })
}

/// Grants a project-admin right inside `tx`; its audit row, or None when the user had it already.
async fn grant(tx: &mut Conn, actor: &AuditEntry, user_id: UserId, username: &str, project_id: ProjectId) -> Result<Option<AuditEntry>, AppError> {
    let code = store::project_code(tx, project_id).await?.ok_or_else(|| AppError::not_found(AccessDetail::Project { id: &project_id }))?;
    Ok(store::insert_project_admin(tx, user_id, project_id)
        .await?
        .then(|| project_entry(actor, "PROJECT_ADMIN_GRANTED", user_id, username, project_id, &code)))
}

/// Creates a user and their project-admin rights with `USER_CREATED` and `PROJECT_ADMIN_GRANTED` audit rows, in one
/// transaction. No caller check: the service [`create_user`] checks; the CLI and the first start call this.
pub async fn create_user_as(db: &Db, actor: &AuditEntry, new: &Validated, admin_project_ids: &[ProjectId]) -> Result<UserId, AppError> {
    let hash = password::hash(new.password.clone()).await;
    let projects: BTreeSet<ProjectId> = admin_project_ids.iter().copied().collect();
    let mut tx = db.begin_write().await?;
    let id = store::insert_user(&mut tx, &new.username, &new.display_name, &hash, new.role, actor.created_at).await?;
    let created = json!({ "username": new.username, "displayName": new.display_name, "role": new.role.as_str() }).to_string();
    let mut entries = vec![user_entry(actor, "USER_CREATED", id, &new.username, None, Some(created))];
    for p in projects {
        entries.extend(grant(&mut tx, actor, id, &new.username, p).await?);
    }
    audit::append(&mut tx, db.dialect, ADMIN_CHAIN, &entries).await?;
    tx.commit().await?;
    Ok(id)
}

/// Grants one project-admin right, audited. No caller check (tools and tests).
pub(crate) async fn grant_project_admin_as(db: &Db, actor: &AuditEntry, user_id: UserId, project_id: ProjectId) -> Result<(), AppError> {
    let mut tx = db.begin_write().await?;
    let user = store::lock_user(&mut tx, db.dialect, user_id).await?.ok_or_else(|| not_found_user(user_id))?;
    if let Some(entry) = grant(&mut tx, actor, user_id, &user.username, project_id).await? {
        audit::append(&mut tx, db.dialect, ADMIN_CHAIN, &[entry]).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// `POST /admin/users`: creates a user with the projects they administer (super admins).
pub(crate) async fn create_user(s: &Access, caller: &Caller, new: &NewUser) -> Result<UserInfo, AppError> {
    caller.require_super_admin()?;
    let validated = Validated::new(&new.username, new.display_name.as_deref(), &new.password, new.role.as_str())?;
    let id = create_user_as(&s.db, &caller.audit_base(s.clock.now_ms()), &validated, &new.admin_project_ids).await?;
    store::user_by_id(&s.db, id).await?.ok_or_else(|| AppError::internal("user vanished"))
}

/// `GET /admin/users`: every user, active or not (super admins).
pub(crate) async fn list(s: &Access, caller: &Caller) -> Result<Vec<UserAdminInfo>, AppError> {
    caller.require_super_admin()?;
    store::list_users(&s.db).await
}

async fn admin_info(db: &Db, id: UserId) -> Result<UserAdminInfo, AppError> {
    store::list_users(db).await?.into_iter().find(|u| u.id == id).ok_or_else(|| not_found_user(id))
}

fn last_super_admin(username: &str) -> AppError {
    AppError::validation(AccessDetail::LastSuperAdmin { username: &username })
}

/// `PUT /admin/users/{id}`: sets a user's role and the projects they administer (super admins). Each change is its
/// own audit row: `ROLE_CHANGED`, `PROJECT_ADMIN_GRANTED`, `PROJECT_ADMIN_REMOVED`. A super admin keeps their own
/// role; the last active super admin cannot lose it.
pub(crate) async fn update(s: &Access, caller: &Caller, id: UserId, change: &UserUpdate) -> Result<UserAdminInfo, AppError> {
    let me = caller.require_super_admin()?;
    let role = change.role;
    if me.id == id && role != Role::SuperAdmin {
        return Err(AppError::validation(AccessDetail::OwnRole));
    }
    let wanted: BTreeSet<ProjectId> = change.admin_project_ids.iter().copied().collect();
    let actor = caller.audit_base(s.clock.now_ms());
    let db = &s.db;
    let mut tx = db.begin_write().await?;
    let supers = store::lock_active_super_admins(&mut tx, db.dialect).await?;
    let user = store::lock_user(&mut tx, db.dialect, id).await?.ok_or_else(|| not_found_user(id))?;
    let mut entries = Vec::new();
    if user.role != role.as_str() {
        if user.role == Role::SuperAdmin.as_str() && user.active != 0 && supers == [id] {
            return Err(last_super_admin(&user.username));
        }
        store::set_role(&mut tx, id, role).await?;
        entries.push(user_entry(&actor, "ROLE_CHANGED", id, &user.username, Some(user.role.clone()), Some(role.as_str().to_string())));
    }
    let current: BTreeSet<ProjectId> = store::admin_projects_of(&mut tx, id).await?.into_iter().collect();
    for p in wanted.difference(&current) {
        entries.extend(grant(&mut tx, &actor, id, &user.username, *p).await?);
    }
    for p in current.difference(&wanted) {
        let code = store::project_code(&mut tx, *p).await?.unwrap_or_else(|| format!("#{p}"));
        store::delete_project_admin(&mut tx, id, *p).await?;
        entries.push(project_entry(&actor, "PROJECT_ADMIN_REMOVED", id, &user.username, *p, &code));
    }
    if !entries.is_empty() {
        audit::append(&mut tx, db.dialect, ADMIN_CHAIN, &entries).await?;
    }
    tx.commit().await?;
    admin_info(db, id).await
}

/// Deactivates or reactivates a user, audited (`USER_DEACTIVATED` / `USER_REACTIVATED`). The last active super
/// admin stays. No caller check: [`set_active`] checks; the CLI calls this. Setting the state a user is in
/// changes nothing and writes no row.
pub async fn set_active_as(db: &Db, actor: &AuditEntry, id: UserId, active: bool) -> Result<(), AppError> {
    let mut tx = db.begin_write().await?;
    let supers = store::lock_active_super_admins(&mut tx, db.dialect).await?;
    let user = store::lock_user(&mut tx, db.dialect, id).await?.ok_or_else(|| not_found_user(id))?;
    if (user.active != 0) == active {
        tx.rollback().await?;
        return Ok(());
    }
    if !active && supers == [id] {
        return Err(last_super_admin(&user.username));
    }
    store::set_active(&mut tx, id, active).await?;
    let (operation, old, new) = if active { ("USER_REACTIVATED", "INACTIVE", "ACTIVE") } else { ("USER_DEACTIVATED", "ACTIVE", "INACTIVE") };
    let entry = user_entry(actor, operation, id, &user.username, Some(old.into()), Some(new.into()));
    audit::append(&mut tx, db.dialect, ADMIN_CHAIN, &[entry]).await?;
    tx.commit().await?;
    Ok(())
}

/// `POST /admin/users/{id}/deactivate|reactivate` (super admins; not themself). A deactivated user cannot log in,
/// and the sessions they have stop working at once (a session is read back through `store::user_by_id`).
pub(crate) async fn set_active(s: &Access, caller: &Caller, id: UserId, active: bool) -> Result<UserAdminInfo, AppError> {
    let me = caller.require_super_admin()?;
    if me.id == id && !active {
        return Err(AppError::validation(AccessDetail::DeactivateSelf));
    }
    set_active_as(&s.db, &caller.audit_base(s.clock.now_ms()), id, active).await?;
    admin_info(&s.db, id).await
}

/// Replaces a user's password hash, audited as `operation` (`PASSWORD_SET` by an admin, `PASSWORD_CHANGED` by the
/// user). No caller check.
async fn store_password(db: &Db, actor: &AuditEntry, id: UserId, plain: &str, operation: &str) -> Result<(), AppError> {
    check_password(plain)?;
    let hash = password::hash(plain.to_string()).await;
    let mut tx = db.begin_write().await?;
    let user = store::lock_user(&mut tx, db.dialect, id).await?.ok_or_else(|| not_found_user(id))?;
    store::set_password_hash(&mut tx, id, &hash).await?;
    audit::append(&mut tx, db.dialect, ADMIN_CHAIN, &[user_entry(actor, operation, id, &user.username, None, None)]).await?;
    tx.commit().await?;
    Ok(())
}

/// Sets a user's password, audited as `PASSWORD_SET`. No caller check (the CLI).
pub async fn set_password_as(db: &Db, actor: &AuditEntry, id: UserId, plain: &str) -> Result<(), AppError> {
    store_password(db, actor, id, plain, "PASSWORD_SET").await
}

/// `POST /admin/users/{id}/password`: a super admin sets a user's password.
pub(crate) async fn set_password(s: &Access, caller: &Caller, id: UserId, plain: &str) -> Result<(), AppError> {
    caller.require_super_admin()?;
    set_password_as(&s.db, &caller.audit_base(s.clock.now_ms()), id, plain).await
}

/// `POST /auth/password`: a logged-in user changes their own password, giving the current one.
pub(crate) async fn change_own_password(s: &Access, caller: &Caller, current: &str, new: &str) -> Result<(), AppError> {
    let user = caller.user().ok_or_else(|| AppError::forbidden(format!("{} is an API token: it has no password", caller.display_name())))?;
    check_password(new)?;
    let stored = store::credentials_by_username(&s.db, &user.username).await?.ok_or(AppError::Unauthenticated)?;
    if current.len() > MAX_PASSWORD_BYTES || !password::verify(current.to_string(), stored.1).await {
        return Err(AppError::WrongCurrentPassword);
    }
    if current == new {
        return Err(AppError::validation(AccessDetail::PasswordUnchanged));
    }
    store_password(&s.db, &caller.audit_base(s.clock.now_ms()), user.id, new, "PASSWORD_CHANGED").await
}
