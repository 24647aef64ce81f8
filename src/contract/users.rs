//! The user administration contract: the users a super admin manages and the changes they make, and a
//! user's own password change. Shared by the `/users` and `/account` pages, their server functions and REST.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Role;

/// Passwords have at least this many characters (Unicode characters, not bytes).
pub const MIN_PASSWORD_CHARS: usize = 8;
/// Login reads at most this many bytes of a password, so no longer one may be set.
pub const MAX_PASSWORD_BYTES: usize = 200;

/// A user as a super admin sees them (`GET /api/v1/admin/users`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UserAdminInfo {
    pub id: i64,
    pub username: String,
    pub display_name: String,
    pub role: Role,
    /// Projects this user administers (meaningful for PROJECT_ADMIN).
    pub admin_project_ids: Vec<i64>,
    /// A deactivated user can neither log in nor use a session they had.
    pub active: bool,
    pub created_at: DateTime<Utc>,
}

/// `PUT /api/v1/admin/users/{id}`: the role and the projects administered, as they should be.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UserUpdate {
    /// STAFF, PROJECT_ADMIN or SUPER_ADMIN
    pub role: String,
    #[serde(default)]
    pub admin_project_ids: Vec<i64>,
}

/// `POST /api/v1/auth/password`: the caller's own password change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PasswordChange {
    pub current_password: String,
    pub new_password: String,
}

/// `POST /api/v1/admin/users/{id}/password`: a password a super admin sets for a user.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PasswordSet {
    pub password: String,
}

/// `POST /api/v1/admin/users`: a new user.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NewUser {
    pub username: String,
    #[serde(default)]
    pub display_name: Option<String>,
    pub password: String,
    /// STAFF, PROJECT_ADMIN or SUPER_ADMIN
    pub role: String,
    #[serde(default)]
    pub admin_project_ids: Vec<i64>,
}

/// The outcomes of a login attempt, as stored and filtered on.
pub const LOGIN_OUTCOMES: [&str; 5] = ["OK", "WRONG_PASSWORD", "UNKNOWN_USER", "THROTTLED", "INACTIVE"];

/// `GET /api/v1/admin/login-attempts?username&outcome&page&pageSize` (super admins).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema, utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct LoginAttemptQuery {
    /// The username as typed, exactly.
    pub username: Option<String>,
    /// OK, WRONG_PASSWORD, UNKNOWN_USER, THROTTLED or INACTIVE.
    pub outcome: Option<String>,
    pub page: Option<u32>,
    pub page_size: Option<u32>,
}

/// One login attempt (SPEC §8: failed and successful logins are recorded).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct LoginAttempt {
    pub id: i64,
    pub at: DateTime<Utc>,
    /// The username as typed (at most 100 characters).
    pub username: String,
    /// The user of that name, when there is one.
    pub user_id: Option<i64>,
    /// The client address (the TCP peer, or the client a trusted proxy forwarded for).
    pub ip_address: Option<String>,
    pub user_agent: Option<String>,
    /// OK, WRONG_PASSWORD, UNKNOWN_USER, THROTTLED or INACTIVE.
    pub outcome: String,
}

/// A page of login attempts, newest first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct LoginAttemptPage {
    pub rows: Vec<LoginAttempt>,
    pub total: i64,
    pub page: u32,
    pub page_size: u32,
}
