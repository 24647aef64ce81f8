//! The user administration contract: the users a super admin manages and the changes they make, and a
//! user's own password change. Shared by the `/users` and `/account` pages, their server functions and REST.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{ProjectId, Role};

crate::numbering::ids::id_types! {
    /// A person who logs in (`users.id`).
    UserId;
    /// An API token (`api_tokens.id`): the DMS and other systems that call the REST API.
    ApiTokenId;
    /// A recorded login attempt (`login_attempts.id`).
    LoginAttemptId;
}

/// Passwords have at least this many characters (Unicode characters, not bytes).
pub const MIN_PASSWORD_CHARS: usize = 8;
/// Passwords have at most this many characters.
pub const MAX_PASSWORD_CHARS: usize = 200;
/// Login reads at most this many bytes of a password (the most that [`MAX_PASSWORD_CHARS`] characters take).
pub const MAX_PASSWORD_BYTES: usize = 4 * MAX_PASSWORD_CHARS;

/// The OpenAPI schema of a new password: 8–200 characters.
#[cfg(feature = "ssr")]
fn new_password_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new().schema_type(Type::String).min_length(Some(MIN_PASSWORD_CHARS)).max_length(Some(MAX_PASSWORD_CHARS)).into()
}

/// A user as a super admin sees them (`GET /api/v1/admin/users`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UserAdminInfo {
    pub id: UserId,
    pub username: String,
    pub display_name: String,
    pub role: Role,
    /// Projects this user administers (meaningful for PROJECT_ADMIN).
    pub admin_project_ids: Vec<ProjectId>,
    /// A deactivated user can neither log in nor use a session they had.
    pub active: bool,
    pub created_at: DateTime<Utc>,
}

/// `PUT /api/v1/admin/users/{id}`: the role and the projects administered, as they should be.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UserUpdate {
    pub role: Role,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::ids))]
    pub admin_project_ids: Vec<ProjectId>,
}

/// `POST /api/v1/auth/password`: the caller's own password change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PasswordChange {
    pub current_password: String,
    #[cfg_attr(feature = "ssr", schema(schema_with = new_password_schema))]
    pub new_password: String,
}

/// `POST /api/v1/admin/users/{id}/password`: a password a super admin sets for a user.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PasswordSet {
    #[cfg_attr(feature = "ssr", schema(schema_with = new_password_schema))]
    pub password: String,
}

/// `POST /api/v1/admin/users`: a new user.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NewUser {
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::username))]
    pub username: String,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::display_name))]
    pub display_name: Option<String>,
    #[cfg_attr(feature = "ssr", schema(schema_with = new_password_schema))]
    pub password: String,
    pub role: Role,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::ids))]
    pub admin_project_ids: Vec<ProjectId>,
}

/// The outcomes of a login attempt, as stored and filtered on.
pub const LOGIN_OUTCOMES: [&str; 5] = ["OK", "WRONG_PASSWORD", "UNKNOWN_USER", "THROTTLED", "INACTIVE"];

/// `GET /api/v1/admin/login-attempts?username&outcome&page&pageSize` (super admins).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema, utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct LoginAttemptQuery {
    /// The username as typed, exactly.
    #[cfg_attr(feature = "ssr", param(max_length = 100))]
    pub username: Option<String>,
    /// OK, WRONG_PASSWORD, UNKNOWN_USER, THROTTLED or INACTIVE (empty: any).
    #[cfg_attr(feature = "ssr", param(value_type = Option<String>, pattern = "^(|OK|WRONG_PASSWORD|UNKNOWN_USER|THROTTLED|INACTIVE)$"))]
    pub outcome: Option<String>,
    #[cfg_attr(feature = "ssr", param(maximum = 1000000))]
    pub page: Option<u32>,
    #[cfg_attr(feature = "ssr", param(schema_with = crate::contract::lenient::schema::page_size))]
    pub page_size: Option<u32>,
}

/// One login attempt (docs/rules/api.md#callers-and-authentication: failed and successful logins are recorded).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct LoginAttempt {
    pub id: LoginAttemptId,
    pub at: DateTime<Utc>,
    /// The username as typed (at most 100 characters).
    pub username: String,
    /// The user of that name, when there is one.
    pub user_id: Option<UserId>,
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
