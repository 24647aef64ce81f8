//! Administration of API tokens: who may create, list and revoke them. The REST handlers and the server
//! functions both call these; each checks the caller itself. A project admin sees and revokes only tokens whose
//! scope lies within the projects they administer (a token for every project is a super admin's); creating and
//! revoking a token appends a row to the `admin` audit chain in the same transaction (never the secret).

use serde_json::json;

use crate::contract::messages::AccessDetail;
use crate::contract::{ApiTokenId, ApiTokenInfo, CreatedApiToken, ProjectId, Role, UserId, UserInfo};
use crate::server::audit::{self, AuditEntry, ADMIN_CHAIN};
use crate::server::auth::{store, Access, Caller};
use crate::server::db::Db;
use crate::server::error::AppError;

/// A new API token (admins): a project admin only for projects they administer, a super admin for any
/// (no project = every project, super admins only). The secret is shown once, here.
pub(crate) async fn create(s: &Access, caller: &Caller, name: &str, project_ids: &[ProjectId]) -> Result<CreatedApiToken, AppError> {
    let admin = caller.require_admin()?;
    let known = store::existing_projects(&s.db, project_ids).await?;
    for p in project_ids {
        if !known.contains(p) {
            return Err(AppError::not_found(AccessDetail::TokenProject { id: p }));
        }
        if admin.role != Role::SuperAdmin {
            caller.require_project_admin(*p)?;
        }
    }
    if project_ids.is_empty() && admin.role != Role::SuperAdmin {
        return Err(AppError::forbidden("only a super admin may create a token for all projects"));
    }
    let (info, token) = create_as(&s.db, &caller.audit_base(s.clock.now_ms()), name, project_ids, admin.id).await?;
    Ok(CreatedApiToken { info, token })
}

fn token_entry(actor: &AuditEntry, operation: &str, t: &ApiTokenInfo, old: Option<&str>, new: Option<&str>) -> AuditEntry {
    AuditEntry {
        operation: operation.to_string(),
        status: "SUCCESS".into(),
        old_value: old.map(str::to_string),
        new_value: new.map(str::to_string),
        metadata: Some(json!({ "tokenId": t.id, "name": t.name, "projectIds": t.project_ids }).to_string()),
        ..actor.clone()
    }
}

/// Creates a token with its `TOKEN_CREATED` audit row, in one transaction. No caller check: [`create`] checks;
/// the CLI calls this. Returns the token's listing and its secret (shown once).
pub async fn create_as(
    db: &Db,
    actor: &AuditEntry,
    name: &str,
    project_ids: &[ProjectId],
    created_by: UserId,
) -> Result<(ApiTokenInfo, String), AppError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(AppError::validation(AccessDetail::TokenNameLength));
    }
    let mut ids = project_ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let token = store::generate_token();
    let mut tx = db.begin_write().await?;
    let id = store::insert_token(&mut tx, name, &token, &ids, created_by, actor.created_at).await?;
    let info = store::token_by_id(&mut tx, id).await?.ok_or_else(|| AppError::internal("token vanished"))?;
    audit::append(&mut tx, db.dialect, ADMIN_CHAIN, &[token_entry(actor, "TOKEN_CREATED", &info, None, Some("ACTIVE"))]).await?;
    tx.commit().await?;
    Ok((info, token))
}

/// Whether an admin may see and revoke a token: a super admin any; a project admin one whose (readable) scope
/// names only projects they administer — not a token for every project.
pub(crate) fn administers(user: &UserInfo, token: &ApiTokenInfo) -> bool {
    match user.role {
        Role::SuperAdmin => true,
        Role::ProjectAdmin => {
            !token.scope_unreadable && !token.project_ids.is_empty() && token.project_ids.iter().all(|p| user.can_edit_templates(*p))
        }
        Role::Staff => false,
    }
}

/// The tokens the caller administers, newest first (admins).
pub(crate) async fn list(s: &Access, caller: &Caller) -> Result<Vec<ApiTokenInfo>, AppError> {
    let admin = caller.require_admin()?;
    Ok(store::list_tokens(&s.db).await?.into_iter().filter(|t| administers(admin, t)).collect())
}

/// Revokes an active token the caller administers (403 for another's; 404 when there is no active token of that id).
pub(crate) async fn revoke(s: &Access, caller: &Caller, id: ApiTokenId) -> Result<(), AppError> {
    let admin = caller.require_admin()?;
    let gone = || AppError::not_found(AccessDetail::ActiveToken { id: &id });
    let actor = caller.audit_base(s.clock.now_ms());
    let mut tx = s.db.begin_write().await?;
    let token = store::token_by_id(&mut tx, id).await?.ok_or_else(gone)?;
    if !administers(admin, &token) {
        return Err(AppError::forbidden(format!("{} may not revoke API token {id} (outside their projects)", admin.username)));
    }
    if !store::revoke_token(&mut tx, id, actor.created_at).await? {
        return Err(gone());
    }
    audit::append(&mut tx, s.db.dialect, ADMIN_CHAIN, &[token_entry(&actor, "TOKEN_REVOKED", &token, Some("ACTIVE"), Some("REVOKED"))]).await?;
    tx.commit().await?;
    s.tokens.forget_all();
    Ok(())
}
