//! What tools and tests do as the system, without a caller's check: create users, grant project-admin rights, create
//! API tokens. Each writes the audit rows of the service it stands beside, with the system as the actor.

use crate::contract::{ApiTokenInfo, ProjectId, Role, UserId};
use crate::server::db::Db;
use crate::server::error::AppError;

/// Creates a user without a caller's check, writing its `USER_CREATED` (and `PROJECT_ADMIN_GRANTED`) audit rows
/// as the system: for tools and tests. The service is `auth::users::create_user`.
pub async fn create_user(db: &Db, username: &str, display_name: &str, plain_password: &str, role: Role) -> Result<UserId, AppError> {
    let new = super::users::Validated::new(username, Some(display_name), plain_password, role.as_str())?;
    super::users::create_user_as(db, &super::users::system_actor("system", crate::server::db::now_ms()), &new, &[]).await
}

/// Grants project-admin rights without a caller's check, audited as the system: for tools and tests.
pub async fn add_project_admin(db: &Db, user_id: UserId, project_id: ProjectId) -> Result<(), AppError> {
    super::users::grant_project_admin_as(db, &super::users::system_actor("system", crate::server::db::now_ms()), user_id, project_id).await
}

/// The id of the user with this name, if there is one: what a tool or a test names a user by.
pub async fn user_id(db: &Db, username: &str) -> Result<Option<UserId>, AppError> {
    super::store::user_id_by_username(db, username).await
}

/// Creates a token without a caller's check, writing its `TOKEN_CREATED` audit row as the system: for tools
/// and tests. The service is `auth::tokens::create`.
pub async fn create_token(
    db: &Db,
    name: &str,
    project_ids: &[ProjectId],
    created_by: UserId,
    now_ms: i64,
) -> Result<(ApiTokenInfo, String), AppError> {
    super::tokens::create_as(db, &super::users::system_actor("system", now_ms), name, project_ids, created_by).await
}
