//! Who is calling, and what they may do. A caller is a logged-in user (session cookie) or a machine
//! client (API token); every handler and server function asks `Caller` before it acts.

pub(crate) mod attempts;
pub(crate) mod forms;
pub(crate) mod http;
pub mod password;
pub mod rate_limit;
pub(crate) mod store;
pub mod system;
pub mod throttle;
pub mod tokens;
pub mod users;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRef, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use tower_sessions::Session;

use crate::contract::{ApiTokenId, ProjectId, Role, UserId, UserInfo};
use crate::server::audit::AuditEntry;
use crate::server::clock::Clock;
use crate::server::db::Db;
use crate::server::error::AppError;

pub(crate) const SESSION_USER_KEY: &str = "user_id";

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Principal {
    User(UserInfo),
    Token { id: ApiTokenId, name: String, project_ids: Vec<ProjectId> },
}

/// Serializable: a forwarded counter job carries its caller to the lock holder, for the audit row.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Caller {
    pub principal: Principal,
    pub ip: Option<String>,
    pub user_agent: Option<String>,
}

impl Caller {
    pub(crate) fn user(&self) -> Option<&UserInfo> {
        match &self.principal {
            Principal::User(u) => Some(u),
            Principal::Token { .. } => None,
        }
    }
    pub(crate) fn user_id(&self) -> Option<UserId> {
        self.user().map(|u| u.id)
    }
    pub(crate) fn api_token_id(&self) -> Option<ApiTokenId> {
        match &self.principal {
            Principal::Token { id, .. } => Some(*id),
            Principal::User(_) => None,
        }
    }
    /// The name shown in audit rows: the username, or `token:<name>` for a machine client.
    /// This caller as the error log keeps it.
    pub(crate) fn who(&self) -> crate::server::errors_log::Who {
        crate::server::errors_log::Who { name: self.display_name(), user_id: self.user_id(), ip: self.ip.clone() }
    }

    pub(crate) fn display_name(&self) -> String {
        match &self.principal {
            Principal::User(u) => u.username.clone(),
            Principal::Token { name, .. } => format!("token:{name}"),
        }
    }

    /// May this caller take numbers in the project? Users: any project; tokens: their scope.
    pub(crate) fn may_number(&self, project_id: ProjectId) -> bool {
        match &self.principal {
            Principal::User(_) => true,
            Principal::Token { project_ids, .. } => project_ids.is_empty() || project_ids.contains(&project_id),
        }
    }

    pub(crate) fn require_numbering(&self, project_id: ProjectId) -> Result<(), AppError> {
        match &self.principal {
            Principal::Token { name, .. } if !self.may_number(project_id) => {
                Err(AppError::forbidden(format!("token {name} is not scoped to project {project_id}")))
            }
            _ => Ok(()),
        }
    }

    pub(crate) fn require_project_admin(&self, project_id: ProjectId) -> Result<(), AppError> {
        match &self.principal {
            Principal::User(u) if u.can_edit_templates(project_id) => Ok(()),
            _ => Err(AppError::forbidden(format!("{} may not administer project {project_id}", self.display_name()))),
        }
    }

    pub(crate) fn require_admin(&self) -> Result<&UserInfo, AppError> {
        match &self.principal {
            Principal::User(u) if u.is_admin() => Ok(u),
            _ => Err(AppError::forbidden(format!("{} is not an administrator", self.display_name()))),
        }
    }

    pub(crate) fn require_super_admin(&self) -> Result<&UserInfo, AppError> {
        match &self.principal {
            Principal::User(u) if u.role == Role::SuperAdmin => Ok(u),
            _ => Err(AppError::forbidden(format!("{} is not a super admin", self.display_name()))),
        }
    }

    /// The projects whose records (audit rows, error-log rows, counters) this administrator may read:
    /// `None` = every project and the rows of no project (super admin); `Some(ids)` = a project admin's own.
    /// Staff and API tokens: 403.
    pub(crate) fn admin_scope(&self) -> Result<Option<&[ProjectId]>, AppError> {
        let user = self.require_admin()?;
        Ok(if user.role == Role::SuperAdmin { None } else { Some(&user.admin_project_ids) })
    }

    /// May this caller read the project's configuration (its templates)? The projects it may take numbers in:
    /// people any project, an API token its scope.
    pub(crate) fn require_project_read(&self, project_id: ProjectId) -> Result<(), AppError> {
        self.require_numbering(project_id)
    }

    /// An audit entry carrying who, from where, and when.
    pub(crate) fn audit_base(&self, now_ms: i64) -> AuditEntry {
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
        Caller { principal: Principal::Token { id: ApiTokenId::NONE, name: "system".into(), project_ids: vec![] }, ip: None, user_agent: None }
    }
}

/// The client's address as the edge resolved it (`edge::guard`: the TCP peer, or the client a trusted proxy
/// forwarded for), put into the request's extensions for the callers and audit rows read here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ClientAddr(pub(crate) std::net::IpAddr);

/// Client address and user agent of a request. The address is the one `edge::guard` resolved (the TCP peer, or
/// the client a trusted proxy forwarded for); the TCP peer when the request did not pass the edge.
pub(crate) fn client_of(parts: &Parts) -> (Option<String>, Option<String>) {
    let ip = parts
        .extensions
        .get::<ClientAddr>()
        .map(|c| c.0)
        .or_else(|| parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip().to_canonical()))
        .map(|ip| ip.to_string());
    let ua = parts.headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).map(|s| s.chars().take(300).collect());
    (ip, ua)
}

pub(crate) fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim)
}

/// What the access services use: the database, the clock, the token cache and the login throttle. A sub-state of
/// the application's (`FromRef`), one `Arc` to clone per request.
pub(crate) struct Access {
    pub(crate) db: Db,
    pub(crate) clock: Arc<Clock>,
    pub(crate) tokens: Arc<AuthCache>,
    /// Failed logins per username and per client address (`throttle`).
    pub(crate) login_throttle: Arc<throttle::LoginThrottle>,
}

impl<S> FromRequestParts<S> for Caller
where
    S: Send + Sync,
    Arc<Access>: FromRef<S>,
{
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let (ip, user_agent) = client_of(parts);
        let access = Arc::<Access>::from_ref(state);
        // Credentials presented are the credentials: an Authorization header that is not a valid API token is refused,
        // even beside a valid session cookie.
        if parts.headers.contains_key(header::AUTHORIZATION) {
            let token = bearer_token(&parts.headers).ok_or(AppError::Unauthenticated)?;
            let principal = access.tokens.principal_for_token(&access.db, token).await?.ok_or(AppError::Unauthenticated)?;
            return Ok(Caller { principal, ip, user_agent });
        }
        let session = Session::from_request_parts(parts, state).await.map_err(|_| AppError::Unauthenticated)?;
        let user = user_from_session(&access.db, &session).await?.ok_or(AppError::Unauthenticated)?;
        Ok(Caller { principal: Principal::User(user), ip, user_agent })
    }
}

pub(crate) async fn user_from_session(db: &Db, session: &Session) -> Result<Option<UserInfo>, AppError> {
    let user_id: Option<UserId> = session.get(SESSION_USER_KEY).await.map_err(|e| AppError::internal_from("session store", e))?;
    match user_id {
        Some(id) => store::user_by_id(db, id).await,
        None => Ok(None),
    }
}

/// Where a request comes from: the client address (as the edge resolved it) and the user agent.
#[derive(Clone, Debug, Default)]
pub(crate) struct ClientInfo {
    pub(crate) ip: Option<String>,
    pub(crate) user_agent: Option<String>,
}

impl ClientInfo {
    pub(crate) fn of(parts: &Parts) -> ClientInfo {
        let (ip, user_agent) = client_of(parts);
        ClientInfo { ip, user_agent }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ClientInfo {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientInfo::of(parts))
    }
}

/// Checks a username and password; on success binds the user to a fresh session id. The one login path of the
/// REST API and the login page's server function:
///
/// 1. the user of that name is looked up (an index read: the record names the user even when refused);
/// 2. throttled (`throttle`: per username and per client address) → 429 with `Retry-After`, no Argon2;
///    otherwise an unknown name is verified against a dummy hash, an inactive user against their own, so timing
///    does not tell which names exist or are active;
/// 3. a permit of the Argon2 semaphore is awaited (`password`), and the throttle asked again: failures recorded
///    while this attempt queued count too, so parallel guesses cannot all slip past a threshold;
/// 4. failures are counted; a success clears the username's count.
///
/// Every attempt, refused or not, is a row of `login_attempts` (`attempts`), except repeats during one wait: of
/// those only the first (in each instance) is, so knocking on during a wait does not grow the record.
pub(crate) async fn login(state: &Access, session: &Session, client: &ClientInfo, username: &str, password: &str) -> Result<UserInfo, AppError> {
    use attempts::Outcome;
    let name = username.trim();
    let keys = state.login_throttle.keys(name, client.ip.as_deref());
    // a name or password longer than any that can be set is wrong without asking Argon2
    let impossible = name.chars().count() > attempts::MAX_USERNAME_CHARS || password.len() > crate::contract::users::MAX_PASSWORD_BYTES;
    let found = if name.chars().count() > attempts::MAX_USERNAME_CHARS { None } else { store::login_credentials(&state.db, name).await? };
    let user_id = found.as_ref().map(|f| f.0);
    if let Err(refusal) = state.login_throttle.check(&keys, state.clock.now_ms()).await {
        return Err(throttled(state, client, username, user_id, refusal).await);
    }
    let permit = password::permit().await;
    if let Err(refusal) = state.login_throttle.check(&keys, state.clock.now_ms()).await {
        drop(permit);
        return Err(throttled(state, client, username, user_id, refusal).await);
    }
    let hash = found.as_ref().map(|f| f.1.clone()).unwrap_or_else(|| password::DUMMY_HASH.to_string());
    let verified = if impossible {
        drop(permit);
        false
    } else {
        password::verify_holding(permit, password.to_string(), hash).await
    };
    let outcome = match &found {
        None => Outcome::UnknownUser,
        Some((_, _, false)) => Outcome::Inactive,
        Some(_) if !verified => Outcome::WrongPassword,
        Some(_) => Outcome::Ok,
    };
    // a user deactivated since the lookup is refused here
    let user = match (outcome, user_id) {
        (Outcome::Ok, Some(id)) => store::user_by_id(&state.db, id).await?,
        _ => None,
    };
    let Some(user) = user else {
        let now = state.clock.now_ms();
        state.login_throttle.failed(&keys, now).await;
        let outcome = if outcome == Outcome::Ok { Outcome::Inactive } else { outcome };
        attempts::record_refusal(&state.db, now, username, user_id, client, outcome).await;
        return Err(AppError::InvalidCredentials);
    };
    // recorded before the session is bound: a login that cannot be recorded does not happen
    attempts::record(&state.db, state.clock.now_ms(), username, Some(user.id), client, Outcome::Ok).await?;
    state.login_throttle.succeeded(&keys).await;
    session.cycle_id().await.map_err(|e| AppError::internal_from("session store", e))?;
    session.insert(SESSION_USER_KEY, user.id).await.map_err(|e| AppError::internal_from("session store", e))?;
    Ok(user)
}

/// A refusal by the throttle: recorded if it is the first of its wait, answered 429.
async fn throttled(state: &Access, client: &ClientInfo, username: &str, user_id: Option<UserId>, refusal: throttle::Refusal) -> AppError {
    if refusal.first_of_its_wait {
        attempts::record_refusal(&state.db, state.clock.now_ms(), username, user_id, client, attempts::Outcome::Throttled).await;
    }
    refusal.error
}

pub(crate) async fn logout(session: &Session) -> Result<(), AppError> {
    session.flush().await.map_err(|e| AppError::internal_from("session store", e))
}

/// Cache of token → principal, so that a machine client's every request is not a database read.
/// Revocation takes effect within `TOKEN_CACHE_SECS` on other instances, immediately on this one.
pub(crate) struct AuthCache {
    tokens: std::sync::Mutex<std::collections::HashMap<String, (Principal, std::time::Instant)>>,
}

pub(crate) const TOKEN_CACHE_SECS: u64 = 5;

impl Default for AuthCache {
    fn default() -> Self {
        AuthCache { tokens: std::sync::Mutex::new(Default::default()) }
    }
}

impl AuthCache {
    pub(crate) async fn principal_for_token(&self, db: &crate::server::db::Db, token: &str) -> Result<Option<Principal>, AppError> {
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

    pub(crate) fn forget_all(&self) {
        self.tokens.lock().unwrap().clear();
    }
}
