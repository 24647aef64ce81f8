//! REST: audit-chain verification.

use axum::extract::State;
use axum::Json;

use crate::server::audit::{self, VerifyReport};
use crate::server::auth::Caller;
use crate::server::error::AppError;
use crate::server::AppState;

#[utoipa::path(get, path = "/api/v1/document-numbering/logs/audit/verify",
    responses((status = 200, body = VerifyReport), (status = 403, body = crate::server::error::ErrorBody)), tag = "audit")]
pub async fn verify(State(s): State<AppState>, caller: Caller) -> Result<Json<VerifyReport>, AppError> {
    caller.require_admin()?;
    Ok(Json(audit::verify(&s.db).await?))
}
