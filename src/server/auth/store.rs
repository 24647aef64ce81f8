//! SQL for users, project administrators and API tokens. Every change of a permission runs inside the
//! caller's transaction (`&mut Conn`), so that the services can append its audit row to the same transaction.

use sha2::{Digest, Sha256};

use super::Principal;
use crate::contract::messages::AccessDetail;
use crate::contract::{ApiTokenId, ApiTokenInfo, ProjectId, Role, UserAdminInfo, UserId, UserInfo};
use crate::server::db::{classify, ms_to_datetime, Conditions, Conn, Db, DbFailure, Dialect};
use crate::server::error::{AppError, ErrorCode};

#[derive(sqlx::FromRow)]
struct UserRow {
    id: UserId,
    username: String,
    display_name: String,
    role: String,
}

/// An active user (None for an unknown or deactivated one: their sessions stop working at once).
pub(crate) async fn user_by_id(db: &Db, id: UserId) -> Result<Option<UserInfo>, AppError> {
    let row: Option<UserRow> =
        sqlx::query_as("SELECT id, username, display_name, role FROM users WHERE id = ? AND active = 1").bind(id).fetch_optional(&db.pool).await?;
    let Some(r) = row else { return Ok(None) };
    let admin_project_ids =
        sqlx::query_scalar("SELECT project_id FROM project_admins WHERE user_id = ? ORDER BY project_id").bind(id).fetch_all(&db.pool).await?;
    Ok(Some(UserInfo {
        id: r.id,
        username: r.username,
        display_name: r.display_name,
        role: Role::parse(&r.role).unwrap_or(Role::Staff),
        admin_project_ids,
    }))
}

/// The id and password hash of an active user.
pub(crate) async fn credentials_by_username(db: &Db, username: &str) -> Result<Option<(UserId, String)>, AppError> {
    Ok(sqlx::query_as("SELECT id, password_hash FROM users WHERE username = ? AND active = 1").bind(username).fetch_optional(&db.pool).await?)
}

/// The password hash of a user, active or not.
pub(crate) async fn password_hash_of(db: &Db, username: &str) -> Result<Option<String>, AppError> {
    Ok(sqlx::query_scalar("SELECT password_hash FROM users WHERE username = ?").bind(username).fetch_optional(&db.pool).await?)
}

pub(crate) async fn user_exists(db: &Db, username: &str) -> Result<bool, AppError> {
    let id: Option<i64> = sqlx::query_scalar("SELECT id FROM users WHERE username = ?").bind(username).fetch_optional(&db.pool).await?;
    Ok(id.is_some())
}

pub(crate) async fn user_id_by_username(db: &Db, username: &str) -> Result<Option<UserId>, AppError> {
    Ok(sqlx::query_scalar("SELECT id FROM users WHERE username = ?").bind(username.trim()).fetch_optional(&db.pool).await?)
}

/// A user's row as it stands inside a transaction (locked on MariaDB until the transaction ends).
#[derive(Clone, Debug, sqlx::FromRow)]
pub(crate) struct UserState {
    pub(crate) username: String,
    pub(crate) role: String,
    pub(crate) active: i64,
}

pub(crate) async fn lock_user(tx: &mut Conn, dialect: Dialect, id: UserId) -> Result<Option<UserState>, AppError> {
    Ok(sqlx::query_as(&format!("SELECT username, role, active FROM users WHERE id = ?{}", dialect.for_update()))
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?)
}

/// The ids of the active super admins, locked (MariaDB) so that two changes cannot each remove "another" one.
pub(crate) async fn lock_active_super_admins(tx: &mut Conn, dialect: Dialect) -> Result<Vec<UserId>, AppError> {
    Ok(sqlx::query_scalar(&format!("SELECT id FROM users WHERE role = 'SUPER_ADMIN' AND active = 1 ORDER BY id{}", dialect.for_update()))
        .fetch_all(&mut *tx)
        .await?)
}

pub(crate) async fn insert_user(
    tx: &mut Conn,
    username: &str,
    display_name: &str,
    password_hash: &str,
    role: Role,
    now_ms: i64,
) -> Result<UserId, AppError> {
    sqlx::query_scalar("INSERT INTO users (username, display_name, password_hash, role, active, created_at) VALUES (?, ?, ?, ?, 1, ?) RETURNING id")
        .bind(username)
        .bind(display_name)
        .bind(password_hash)
        .bind(role.as_str())
        .bind(now_ms)
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| match classify(&e) {
            DbFailure::UniqueViolation => AppError::conflict(ErrorCode::AlreadyExists, AccessDetail::UsernameTaken { username: &username }),
            _ => e.into(),
        })
}

pub(crate) async fn set_role(tx: &mut Conn, user_id: UserId, role: Role) -> Result<(), AppError> {
    sqlx::query("UPDATE users SET role = ? WHERE id = ?").bind(role.as_str()).bind(user_id).execute(&mut *tx).await?;
    Ok(())
}

pub(crate) async fn set_active(tx: &mut Conn, user_id: UserId, active: bool) -> Result<(), AppError> {
    sqlx::query("UPDATE users SET active = ? WHERE id = ?").bind(i64::from(active)).bind(user_id).execute(&mut *tx).await?;
    Ok(())
}

pub(crate) async fn set_password_hash(tx: &mut Conn, user_id: UserId, hash: &str) -> Result<(), AppError> {
    sqlx::query("UPDATE users SET password_hash = ? WHERE id = ?").bind(hash).bind(user_id).execute(&mut *tx).await?;
    Ok(())
}

/// The projects a user administers, inside a transaction.
pub(crate) async fn admin_projects_of(tx: &mut Conn, user_id: UserId) -> Result<Vec<ProjectId>, AppError> {
    Ok(sqlx::query_scalar("SELECT project_id FROM project_admins WHERE user_id = ? ORDER BY project_id").bind(user_id).fetch_all(&mut *tx).await?)
}

/// The code of a project, or None when there is no project of that id.
pub(crate) async fn project_code(tx: &mut Conn, project_id: ProjectId) -> Result<Option<String>, AppError> {
    Ok(sqlx::query_scalar("SELECT code FROM projects WHERE id = ?").bind(project_id).fetch_optional(&mut *tx).await?)
}

/// Adds a project-admin right; false when the user had it already.
pub(crate) async fn insert_project_admin(tx: &mut Conn, user_id: UserId, project_id: ProjectId) -> Result<bool, AppError> {
    let had: Option<i64> = sqlx::query_scalar("SELECT user_id FROM project_admins WHERE user_id = ? AND project_id = ?")
        .bind(user_id)
        .bind(project_id)
        .fetch_optional(&mut *tx)
        .await?;
    if had.is_some() {
        return Ok(false);
    }
    sqlx::query("INSERT INTO project_admins (user_id, project_id) VALUES (?, ?)").bind(user_id).bind(project_id).execute(&mut *tx).await?;
    Ok(true)
}

pub(crate) async fn delete_project_admin(tx: &mut Conn, user_id: UserId, project_id: ProjectId) -> Result<(), AppError> {
    sqlx::query("DELETE FROM project_admins WHERE user_id = ? AND project_id = ?").bind(user_id).bind(project_id).execute(&mut *tx).await?;
    Ok(())
}

#[derive(sqlx::FromRow)]
struct UserAdminRow {
    id: UserId,
    username: String,
    display_name: String,
    role: String,
    active: i64,
    created_at: i64,
}

/// Every user with their role, projects and state, by username.
pub(crate) async fn list_users(db: &Db) -> Result<Vec<UserAdminInfo>, AppError> {
    let rows: Vec<UserAdminRow> =
        sqlx::query_as("SELECT id, username, display_name, role, active, created_at FROM users ORDER BY username").fetch_all(&db.pool).await?;
    let grants: Vec<(UserId, ProjectId)> =
        sqlx::query_as("SELECT user_id, project_id FROM project_admins ORDER BY user_id, project_id").fetch_all(&db.pool).await?;
    Ok(rows
        .into_iter()
        .map(|r| UserAdminInfo {
            admin_project_ids: grants.iter().filter(|(u, _)| *u == r.id).map(|(_, p)| *p).collect(),
            id: r.id,
            username: r.username,
            display_name: r.display_name,
            role: Role::parse(&r.role).unwrap_or(Role::Staff),
            active: r.active != 0,
            created_at: ms_to_datetime(r.created_at),
        })
        .collect())
}

pub(crate) fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A new random API token (256 bits), returned in clear once; only its hash is stored.
pub(crate) fn generate_token() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!("dnt_{}", hex::encode(bytes))
}

/// A token's stored scope: a JSON array of project ids (empty = every project). Anything else is None, and
/// such a token grants nothing.
pub(crate) fn parse_scope(stored: &str) -> Option<Vec<ProjectId>> {
    serde_json::from_str::<Vec<ProjectId>>(stored).ok()
}

/// The principal of an active token; None for an unknown or revoked one, and for one whose stored scope
/// cannot be read (logged: the row was written by something other than this service).
pub(crate) async fn token_principal(db: &Db, token_hash: &str) -> Result<Option<Principal>, AppError> {
    let row: Option<(ApiTokenId, String, String)> =
        sqlx::query_as("SELECT id, name, project_ids FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL")
            .bind(token_hash)
            .fetch_optional(&db.pool)
            .await?;
    Ok(row.and_then(|(id, name, stored)| match parse_scope(&stored) {
        Some(project_ids) => Some(Principal::Token { id, name, project_ids }),
        None => {
            tracing::warn!(token_id = id.0, token = %name, "API token refused: its stored project scope is not a list of project ids");
            None
        }
    }))
}

pub(crate) async fn insert_token(
    tx: &mut Conn,
    name: &str,
    token: &str,
    project_ids: &[ProjectId],
    created_by: UserId,
    now_ms: i64,
) -> Result<ApiTokenId, AppError> {
    let prefix: String = token.chars().take(12).collect();
    Ok(sqlx::query_scalar(
        "INSERT INTO api_tokens (name, token_hash, prefix, project_ids, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(name)
    .bind(hash_token(token))
    .bind(prefix)
    .bind(serde_json::to_string(project_ids).unwrap_or_else(|_| "[]".into()))
    .bind(created_by)
    .bind(now_ms)
    .fetch_one(&mut *tx)
    .await?)
}

/// A row of `api_tokens` with the name of its creator (the hash stays in the database).
#[derive(sqlx::FromRow)]
struct TokenRow {
    id: ApiTokenId,
    name: String,
    prefix: String,
    /// A JSON array of project ids.
    project_ids: String,
    created_at: i64,
    created_by: String,
    revoked_at: Option<i64>,
}

impl From<TokenRow> for ApiTokenInfo {
    fn from(r: TokenRow) -> ApiTokenInfo {
        let scope = parse_scope(&r.project_ids);
        ApiTokenInfo {
            id: r.id,
            name: r.name,
            prefix: r.prefix,
            scope_unreadable: scope.is_none(),
            project_ids: scope.unwrap_or_default(),
            created_at: ms_to_datetime(r.created_at),
            created_by: r.created_by,
            revoked_at: r.revoked_at.map(ms_to_datetime),
        }
    }
}

const TOKEN_SELECT: &str = "SELECT t.id, t.name, t.prefix, t.project_ids, t.created_at, COALESCE(u.username, '?') AS created_by, t.revoked_at \
     FROM api_tokens t LEFT JOIN users u ON u.id = t.created_by";

/// Every token, newest first (the services decide who sees which).
pub(crate) async fn list_tokens(db: &Db) -> Result<Vec<ApiTokenInfo>, AppError> {
    let rows: Vec<TokenRow> = sqlx::query_as(&format!("{TOKEN_SELECT} ORDER BY t.id DESC")).fetch_all(&db.pool).await?;
    Ok(rows.into_iter().map(ApiTokenInfo::from).collect())
}

/// One token, inside a transaction.
pub(crate) async fn token_by_id(tx: &mut Conn, id: ApiTokenId) -> Result<Option<ApiTokenInfo>, AppError> {
    let row: Option<TokenRow> = sqlx::query_as(&format!("{TOKEN_SELECT} WHERE t.id = ?")).bind(id).fetch_optional(&mut *tx).await?;
    Ok(row.map(ApiTokenInfo::from))
}

pub(crate) async fn revoke_token(tx: &mut Conn, id: ApiTokenId, now_ms: i64) -> Result<bool, AppError> {
    let r = sqlx::query("UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").bind(now_ms).bind(id).execute(&mut *tx).await?;
    Ok(r.rows_affected() == 1)
}

/// The id, password hash and state of the user of this name (active or not), for login.
pub(crate) async fn login_credentials(db: &Db, username: &str) -> Result<Option<(UserId, String, bool)>, AppError> {
    let row: Option<(UserId, String, i64)> =
        sqlx::query_as("SELECT id, password_hash, active FROM users WHERE username = ?").bind(username).fetch_optional(&db.pool).await?;
    Ok(row.map(|(id, hash, active)| (id, hash, active != 0)))
}

/// A login attempt to record (`login_attempts`); the texts are bounded by the caller.
pub(crate) struct NewLoginAttempt<'a> {
    pub(crate) at_ms: i64,
    pub(crate) username: &'a str,
    pub(crate) user_id: Option<UserId>,
    pub(crate) ip_address: Option<&'a str>,
    pub(crate) user_agent: Option<&'a str>,
    pub(crate) outcome: &'a str,
}

pub(crate) async fn insert_login_attempt(db: &Db, a: &NewLoginAttempt<'_>) -> Result<(), AppError> {
    sqlx::query("INSERT INTO login_attempts (created_at, username, user_id, ip_address, user_agent, outcome) VALUES (?, ?, ?, ?, ?, ?)")
        .bind(a.at_ms)
        .bind(a.username)
        .bind(a.user_id)
        .bind(a.ip_address)
        .bind(a.user_agent)
        .bind(a.outcome)
        .execute(&db.writer)
        .await?;
    Ok(())
}

#[derive(sqlx::FromRow)]
struct LoginAttemptRow {
    id: i64,
    created_at: i64,
    username: String,
    user_id: Option<UserId>,
    ip_address: Option<String>,
    user_agent: Option<String>,
    outcome: String,
}

/// One page of login attempts (newest first) matching the filters, and how many match in all.
pub(crate) async fn login_attempts(
    db: &Db,
    username: Option<&str>,
    outcome: Option<&str>,
    limit: u32,
    offset: i64,
) -> Result<(i64, Vec<crate::contract::LoginAttempt>), AppError> {
    let mut filter = crate::server::db::Conditions::default();
    filter.and_if("username = ?", username).and_if("outcome = ?", outcome);
    let total: i64 = filter.bind(sqlx::query_scalar(&format!("SELECT COUNT(*) FROM login_attempts{}", filter.sql()))).fetch_one(&db.pool).await?;
    let sql = format!(
        "SELECT id, created_at, username, user_id, ip_address, user_agent, outcome FROM login_attempts{} ORDER BY id DESC LIMIT ? OFFSET ?",
        filter.sql()
    );
    let rows: Vec<LoginAttemptRow> =
        filter.bind(sqlx::query_as::<_, LoginAttemptRow>(&sql)).bind(i64::from(limit)).bind(offset).fetch_all(&db.pool).await?;
    Ok((
        total,
        rows.into_iter()
            .map(|r| crate::contract::LoginAttempt {
                id: r.id.into(),
                at: ms_to_datetime(r.created_at),
                username: r.username,
                user_id: r.user_id,
                ip_address: r.ip_address,
                user_agent: r.user_agent,
                outcome: r.outcome,
            })
            .collect(),
    ))
}

/// Which of these project ids exist (a token's scope names projects; the reference snapshot is the catalog's, above).
pub(crate) async fn existing_projects(db: &Db, ids: &[ProjectId]) -> Result<Vec<ProjectId>, AppError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut filter = Conditions::default();
    filter.and_in("id IN ({})", ids);
    let sql = format!("SELECT id FROM projects{}", filter.sql());
    Ok(filter.bind(sqlx::query_scalar(&sql)).fetch_all(&db.pool).await?)
}
