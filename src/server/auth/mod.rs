//! Who is calling, and what they may do. A caller is a logged-in user (session cookie) or a machine
//! client (API token); every handler and server function asks `Caller` before it acts.

pub mod http;
pub mod password;
pub mod rate_limit;
pub mod store;
pub mod tokens;
pub mod users;

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use tower_sessions::Session;

use crate::contract::{Role, UserInfo};
use crate::server::audit::AuditEntry;
use crate::server::error::AppError;
use crate::server::AppState;

pub const SESSION_USER_KEY: &str = "user_id";

#[derive(Clone, Debug, PartialEq)]
pub enum Principal {
    User(UserInfo),
    Token { id: i64, name: String, project_ids: Vec<i64> },
}

#[derive(Clone, Debug)]
pub struct Caller {
    pub principal: Principal,
    pub ip: Option<String>,
    pub user_agent: Option<String>,
}

impl Caller {
    pub fn user(&self) -> Option<&UserInfo> {
        match &self.principal {
            Principal::User(u) => Some(u),
            Principal::Token { .. } => None,
        }
    }
    pub fn user_id(&self) -> Option<i64> {
        self.user().map(|u| u.id)
    }
    pub fn api_token_id(&self) -> Option<i64> {
        match &self.principal {
            Principal::Token { id, .. } => Some(*id),
            Principal::User(_) => None,
        }
    }
    /// The name shown in audit rows: the username, or `token:<name>` for a machine client.
    pub fn display_name(&self) -> String {
        match &self.principal {
            Principal::User(u) => u.username.clone(),
            Principal::Token { name, .. } => format!("token:{name}"),
        }
    }

    /// May this caller take numbers in the project? Users: any project; tokens: their scope.
    pub fn require_numbering(&self, project_id: i64) -> Result<(), AppError> {
        match &self.principal {
            Principal::User(_) => Ok(()),
            Principal::Token { project_ids, .. } if project_ids.is_empty() || project_ids.contains(&project_id) => Ok(()),
            Principal::Token { name, .. } => Err(AppError::forbidden(format!("token {name} is not scoped to project {project_id}"))),
        }
    }

    pub fn require_project_admin(&self, project_id: i64) -> Result<(), AppError> {
        match &self.principal {
            Principal::User(u) if u.can_edit_templates(project_id) => Ok(()),
            _ => Err(AppError::forbidden(format!("{} may not administer project {project_id}", self.display_name()))),
        }
    }

    pub fn require_admin(&self) -> Result<&UserInfo, AppError> {
        match &self.principal {
            Principal::User(u) if u.is_admin() => Ok(u),
            _ => Err(AppError::forbidden(format!("{} is not an administrator", self.display_name()))),
        }
    }

    pub fn require_super_admin(&self) -> Result<&UserInfo, AppError> {
        match &self.principal {
            Principal::User(u) if u.role == Role::SuperAdmin => Ok(u),
            _ => Err(AppError::forbidden(format!("{} is not a super admin", self.display_name()))),
        }
    }

    /// The projects whose records (audit rows, error-log rows, counters) this administrator may read:
    /// `None` = every project and the rows of no project (super admin); `Some(ids)` = a project admin's own.
    /// Staff and API tokens: 403.
    pub fn admin_scope(&self) -> Result<Option<&[i64]>, AppError> {
        let user = self.require_admin()?;
        Ok(if user.role == Role::SuperAdmin { None } else { Some(&user.admin_project_ids) })
    }

    /// May this caller read the project's configuration (its templates)? The projects it may take numbers in:
    /// people any project, an API token its scope.
    pub fn require_project_read(&self, project_id: i64) -> Result<(), AppError> {
        self.require_numbering(project_id)
    }

    /// An audit entry carrying who, from where, and when.
    pub fn audit_base(&self, now_ms: i64) -> AuditEntry {
        AuditEntry {
            user_id: self.user_id(),
            username: Some(self.display_name()),
            ip_address: self.ip.clone(),
            user_agent: self.user_agent.clone(),
            fallback_used: "NONE".into(),
            created_at: now_ms,
            ..Default::default()
        }
    }

    /// The caller as the engine's own background work (expiry sweep).
    pub fn system() -> Caller {
        Caller { principal: Principal::Token { id: 0, name: "system".into(), project_ids: vec![] }, ip: None, user_agent: None }
    }
}

/// Client address and user agent of a request. The address is the one `edge::guard` resolved (the TCP peer, or
/// the client a trusted proxy forwarded for); the TCP peer when the request did not pass the edge.
pub fn client_of(parts: &Parts) -> (Option<String>, Option<String>) {
    let ip = parts
        .extensions
        .get::<crate::server::edge::ClientAddr>()
        .map(|c| c.0)
        .or_else(|| parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip().to_canonical()))
        .map(|ip| ip.to_string());
    let ua = parts.headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).map(|s| s.chars().take(300).collect());
    (ip, ua)
}

pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim)
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let (ip, user_agent) = client_of(parts);
        if let Some(token) = bearer_token(&parts.headers) {
            let principal = state.auth.principal_for_token(&state.db, token).await?.ok_or(AppError::Unauthenticated)?;
            return Ok(Caller { principal, ip, user_agent });
        }
        let session = Session::from_request_parts(parts, state).await.map_err(|_| AppError::Unauthenticated)?;
        let user = user_from_session(state, &session).await?.ok_or(AppError::Unauthenticated)?;
        Ok(Caller { principal: Principal::User(user), ip, user_agent })
    }
}

pub async fn user_from_session(state: &AppState, session: &Session) -> Result<Option<UserInfo>, AppError> {
    let user_id: Option<i64> = session.get(SESSION_USER_KEY).await.map_err(|e| AppError::internal_from("session store", e))?;
    match user_id {
        Some(id) => store::user_by_id(&state.db, id).await,
        None => Ok(None),
    }
}

/// Checks a username and password; on success binds the user to a fresh session id.
pub async fn login(state: &AppState, session: &Session, username: &str, password: &str) -> Result<UserInfo, AppError> {
    if username.len() > 100 || password.len() > 200 {
        return Err(AppError::InvalidCredentials);
    }
    let found = store::credentials_by_username(&state.db, username.trim()).await?;
    // Verify against a dummy hash when the user is unknown, so timing does not reveal which usernames exist.
    let (user_id, hash) = found.unwrap_or((0, password::DUMMY_HASH.to_string()));
    let ok = password::verify(password.to_string(), hash).await;
    if !ok || user_id == 0 {
        return Err(AppError::InvalidCredentials);
    }
    let user = store::user_by_id(&state.db, user_id).await?.ok_or(AppError::InvalidCredentials)?;
    session.cycle_id().await.map_err(|e| AppError::internal_from("session store", e))?;
    session.insert(SESSION_USER_KEY, user.id).await.map_err(|e| AppError::internal_from("session store", e))?;
    Ok(user)
}

pub async fn logout(session: &Session) -> Result<(), AppError> {
    session.flush().await.map_err(|e| AppError::internal_from("session store", e))
}

/// Cache of token → principal, so that a machine client's every request is not a database read.
/// Revocation takes effect within `TOKEN_CACHE_SECS` on other instances, immediately on this one.
pub struct AuthCache {
    tokens: std::sync::Mutex<std::collections::HashMap<String, (Principal, std::time::Instant)>>,
}

pub const TOKEN_CACHE_SECS: u64 = 5;

impl Default for AuthCache {
    fn default() -> Self {
        AuthCache { tokens: std::sync::Mutex::new(Default::default()) }
    }
}

impl AuthCache {
    pub async fn principal_for_token(&self, db: &crate::server::db::Db, token: &str) -> Result<Option<Principal>, AppError> {
        if token.len() > 200 {
            return Ok(None);
        }
        let hash = store::hash_token(token);
        if let Some((p, at)) = self.tokens.lock().unwrap().get(&hash) {
            if at.elapsed().as_secs() < TOKEN_CACHE_SECS {
                return Ok(Some(p.clone()));
            }
        }
        let principal = store::token_principal(db, &hash).await?;
        let mut cache = self.tokens.lock().unwrap();
        match &principal {
            Some(p) => {
                cache.insert(hash, (p.clone(), std::time::Instant::now()));
            }
            None => {
                cache.remove(&hash);
            }
        }
        Ok(principal)
    }

    pub fn forget_all(&self) {
        self.tokens.lock().unwrap().clear();
    }
}
