//! Server functions of the reserve page: preview, reserve, confirm, cancel. Reserve goes through the same
//! service path as REST (`server::numbering::reserve`: rate limit, engine, generation histogram).

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use crate::contract::*;
#[cfg(feature = "ssr")]
use crate::server::{numbering, sfn};

#[server(prefix = "/sfn", input = Json)]
pub async fn preview_number(request: NumberRequest) -> Result<PreviewResult, ApiError> {
    let (state, caller) = sfn::caller().await?;
    state.engine.preview(&caller, &request).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", endpoint = "reserve_number", input = Json)]
pub async fn reserve_number(request: NumberRequest) -> Result<ReservationResult, ApiError> {
    let (state, caller) = sfn::caller().await?;
    numbering::reserve(&state, &caller, &request).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn confirm_reservation(token: String, document_id: String) -> Result<StatusResult, ApiError> {
    let (state, caller) = sfn::caller().await?;
    state.engine.confirm(&caller, &token, &document_id).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn cancel_reservation(token: String, reason: Option<String>) -> Result<StatusResult, ApiError> {
    let (state, caller) = sfn::caller().await?;
    state.engine.cancel(&caller, &token, reason.as_deref()).await.map_err(sfn::error)
}
