//! Server functions of the audit and error-log pages (admins: the services check).

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use crate::contract::*;
#[cfg(feature = "ssr")]
use crate::server::{audit, errors_log, sfn};

#[server(prefix = "/sfn", input = Json)]
pub async fn search_audit(query: AuditQuery) -> Result<AuditPage, ApiError> {
    let (state, caller) = sfn::caller().await?;
    audit::search(&state, &caller, &query).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn list_errors(query: ErrorQuery) -> Result<ErrorPage, ApiError> {
    let (state, caller) = sfn::caller().await?;
    errors_log::search(&state, &caller, &query).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn resolve_error(id: i64) -> Result<(), ApiError> {
    let (state, caller) = sfn::caller().await?;
    errors_log::resolve(&state, &caller, id).await.map_err(sfn::error)
}
