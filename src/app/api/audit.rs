//! Server functions of the audit and error-log pages (admins: `admin_ops::logs` checks).

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use crate::contract::*;
#[cfg(feature = "ssr")]
use crate::server::admin_ops::logs;
#[cfg(feature = "ssr")]
use crate::server::sfn;

#[server(prefix = "/sfn", input = Json)]
pub async fn search_audit(query: AuditQuery) -> Result<AuditPage, ApiError> {
    let (state, caller) = sfn::caller().await?;
    let snapshot = state.reference().get().await.map_err(sfn::error)?;
    logs::audit_page(&state.db, &snapshot, &caller, &query).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn list_errors(query: ErrorQuery) -> Result<ErrorPage, ApiError> {
    let (state, caller) = sfn::caller().await?;
    logs::error_page(&state.db, &caller, &query).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn resolve_error(id: ErrorLogId) -> Result<(), ApiError> {
    let (state, caller) = sfn::caller().await?;
    logs::resolve(&state.db, &state.clock, &caller, id).await.map_err(sfn::error)
}
