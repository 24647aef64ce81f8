//! SQL for users, project administrators and API tokens.

use sha2::{Digest, Sha256};

use super::{password, Principal};
use crate::contract::{ApiTokenInfo, Role, UserInfo};
use crate::server::db::{classify, ms_to_datetime, Db, DbFailure};
use crate::server::error::{AppError, ErrorCode};

#[derive(sqlx::FromRow)]
struct UserRow {
    id: i64,
    username: String,
    display_name: String,
    role: String,
}

pub async fn user_by_id(db: &Db, id: i64) -> Result<Option<UserInfo>, AppError> {
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

pub async fn credentials_by_username(db: &Db, username: &str) -> Result<Option<(i64, String)>, AppError> {
    Ok(sqlx::query_as("SELECT id, password_hash FROM users WHERE username = ? AND active = 1").bind(username).fetch_optional(&db.pool).await?)
}

pub async fn user_exists(db: &Db, username: &str) -> Result<bool, AppError> {
    let id: Option<i64> = sqlx::query_scalar("SELECT id FROM users WHERE username = ?").bind(username).fetch_optional(&db.pool).await?;
    Ok(id.is_some())
}

pub async fn create_user(db: &Db, username: &str, display_name: &str, plain_password: &str, role: Role) -> Result<i64, AppError> {
    let username = username.trim();
    if username.is_empty() || username.chars().count() > 50 || username.chars().any(char::is_whitespace) {
        return Err(AppError::validation("ชื่อผู้ใช้ต้องมี 1–50 ตัวอักษรและไม่มีช่องว่าง", "username must be 1-50 characters without spaces"));
    }
    if plain_password.chars().count() < 8 {
        return Err(AppError::validation("รหัสผ่านต้องมีอย่างน้อย 8 ตัวอักษร", "password must have at least 8 characters"));
    }
    if display_name.trim().chars().count() > 200 {
        return Err(AppError::validation("ชื่อที่แสดงยาวเกิน 200 ตัวอักษร", "display name longer than 200 characters"));
    }
    let hash = password::hash(plain_password.to_string()).await;
    sqlx::query_scalar("INSERT INTO users (username, display_name, password_hash, role, active, created_at) VALUES (?, ?, ?, ?, 1, ?) RETURNING id")
        .bind(username)
        .bind(display_name.trim())
        .bind(hash)
        .bind(role.as_str())
        .bind(crate::server::db::now_ms())
        .fetch_one(&db.writer)
        .await
        .map_err(|e| match classify(&e) {
            DbFailure::UniqueViolation => {
                AppError::Conflict {
                    code: ErrorCode::AlreadyExists, th: format!("ชื่อผู้ใช้ '{username}' มีอยู่แล้ว"), en: format!("user {username} exists")
                }
            }
            _ => e.into(),
        })
}

pub async fn add_project_admin(db: &Db, user_id: i64, project_id: i64) -> Result<(), AppError> {
    sqlx::query("INSERT INTO project_admins (user_id, project_id) VALUES (?, ?)").bind(user_id).bind(project_id).execute(&db.writer).await?;
    Ok(())
}

pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A new random API token (256 bits), returned in clear once; only its hash is stored.
pub fn generate_token() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!("dnt_{}", hex::encode(bytes))
}

pub async fn token_principal(db: &Db, token_hash: &str) -> Result<Option<Principal>, AppError> {
    let row: Option<(i64, String, String)> =
        sqlx::query_as("SELECT id, name, project_ids FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL")
            .bind(token_hash)
            .fetch_optional(&db.pool)
            .await?;
    Ok(row.map(|(id, name, project_ids)| Principal::Token { id, name, project_ids: serde_json::from_str(&project_ids).unwrap_or_default() }))
}

pub async fn create_token(db: &Db, name: &str, project_ids: &[i64], created_by: i64, now_ms: i64) -> Result<(ApiTokenInfo, String), AppError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(AppError::validation("ชื่อ token ต้องมี 1–100 ตัวอักษร", "token name must be 1-100 characters"));
    }
    let token = generate_token();
    let prefix: String = token.chars().take(12).collect();
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO api_tokens (name, token_hash, prefix, project_ids, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(name)
    .bind(hash_token(&token))
    .bind(prefix)
    .bind(serde_json::to_string(project_ids).unwrap_or_else(|_| "[]".into()))
    .bind(created_by)
    .bind(now_ms)
    .fetch_one(&db.writer)
    .await?;
    let info = list_tokens(db).await?.into_iter().find(|t| t.id == id).ok_or_else(|| AppError::internal("token vanished"))?;
    Ok((info, token))
}

/// A row of `api_tokens` with the name of its creator (the hash stays in the database).
#[derive(sqlx::FromRow)]
struct TokenRow {
    id: i64,
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
        ApiTokenInfo {
            id: r.id,
            name: r.name,
            prefix: r.prefix,
            project_ids: serde_json::from_str(&r.project_ids).unwrap_or_default(),
            created_at: ms_to_datetime(r.created_at),
            created_by: r.created_by,
            revoked_at: r.revoked_at.map(ms_to_datetime),
        }
    }
}

pub async fn list_tokens(db: &Db) -> Result<Vec<ApiTokenInfo>, AppError> {
    let rows: Vec<TokenRow> = sqlx::query_as(
        "SELECT t.id, t.name, t.prefix, t.project_ids, t.created_at, COALESCE(u.username, '?') AS created_by, t.revoked_at \
         FROM api_tokens t LEFT JOIN users u ON u.id = t.created_by ORDER BY t.id DESC",
    )
    .fetch_all(&db.pool)
    .await?;
    Ok(rows.into_iter().map(ApiTokenInfo::from).collect())
}

pub async fn revoke_token(db: &Db, id: i64, now_ms: i64) -> Result<bool, AppError> {
    let r = sqlx::query("UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").bind(now_ms).bind(id).execute(&db.writer).await?;
    Ok(r.rows_affected() == 1)
}
