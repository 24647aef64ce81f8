//! The record of logins (docs/rules/api.md#callers-and-authentication: failed and successful logins are recorded): one `login_attempts` row per
//! attempt — when (service clock), the username as typed (at most [`MAX_USERNAME_CHARS`] characters), the user when
//! the name is known, the client address, the user agent (at most 300 characters, see `auth::client_of`) and the
//! outcome. Super admins read it (`GET /api/v1/admin/login-attempts`, the `/logins` page). Attempts refused during
//! a throttle wait are not checked at all; of those, the first of each wait is a row (`throttle::Refusal`).

use crate::contract::messages::AccessDetail;
use crate::contract::UserId;
use crate::contract::{LoginAttemptPage, LoginAttemptQuery, LOGIN_OUTCOMES};
use crate::server::auth::{store, Caller, ClientInfo};
use crate::server::db::{paging, Db};
use crate::server::error::AppError;

/// The longest username kept in a row (longer ones are cut).
pub(crate) const MAX_USERNAME_CHARS: usize = 100;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    WrongPassword,
    UnknownUser,
    Throttled,
    Inactive,
}

impl Outcome {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "OK",
            Outcome::WrongPassword => "WRONG_PASSWORD",
            Outcome::UnknownUser => "UNKNOWN_USER",
            Outcome::Throttled => "THROTTLED",
            Outcome::Inactive => "INACTIVE",
        }
    }
}

/// Appends one attempt.
pub(crate) async fn record(
    db: &Db,
    at_ms: i64,
    typed_username: &str,
    user_id: Option<UserId>,
    client: &ClientInfo,
    outcome: Outcome,
) -> Result<(), AppError> {
    let username: String = typed_username.chars().filter(|c| !c.is_control()).take(MAX_USERNAME_CHARS).collect();
    let user_agent: Option<String> = client.user_agent.as_deref().map(|ua| ua.chars().take(300).collect());
    store::insert_login_attempt(
        db,
        &store::NewLoginAttempt {
            at_ms,
            username: &username,
            user_id,
            ip_address: client.ip.as_deref(),
            user_agent: user_agent.as_deref(),
            outcome: outcome.as_str(),
        },
    )
    .await
}

/// Records a refused attempt; a failure to record is logged, the refusal stands.
pub(crate) async fn record_refusal(db: &Db, at_ms: i64, typed_username: &str, user_id: Option<UserId>, client: &ClientInfo, outcome: Outcome) {
    if let Err(e) = record(db, at_ms, typed_username, user_id, client, outcome).await {
        tracing::warn!(error = %e.report(), outcome = outcome.as_str(), "a refused login could not be recorded");
    }
}

/// The login attempts, newest first, optionally of one username (as typed) and one outcome (super admins).
pub(crate) async fn search(db: &Db, caller: &Caller, q: &LoginAttemptQuery) -> Result<LoginAttemptPage, AppError> {
    caller.require_super_admin()?;
    let outcome = q.outcome.as_deref().filter(|o| !o.is_empty());
    if let Some(o) = outcome {
        if !LOGIN_OUTCOMES.contains(&o) {
            return Err(AppError::validation(AccessDetail::LoginOutcomeUnknown { outcomes: &LOGIN_OUTCOMES.join(", ") }));
        }
    }
    let username = q.username.as_deref().filter(|u| !u.is_empty());
    if username.is_some_and(|u| u.chars().count() > MAX_USERNAME_CHARS) {
        return Err(AppError::validation(AccessDetail::SearchedUsernameTooLong { max: &MAX_USERNAME_CHARS }));
    }
    let (page, size, offset) = paging(q.page, q.page_size, 50, 500)?;
    let (total, rows) = store::login_attempts(db, username, outcome, size, offset).await?;
    Ok(LoginAttemptPage { rows, total, page, page_size: size })
}
