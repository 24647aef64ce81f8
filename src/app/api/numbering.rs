//! Server functions of the reserve page: preview, reserve, confirm, cancel. Each goes through the same service
//! path as REST (`server::numbering::{preview, reserve, confirm, cancel}`: rate limit, engine; reserve also the
//! generation histogram).

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use crate::contract::*;
#[cfg(feature = "ssr")]
use crate::server::{numbering, sfn};

#[server(prefix = "/sfn", endpoint = "preview_number", input = Json)]
pub async fn preview_number(request: NumberRequest) -> Result<PreviewResult, ApiError> {
    let (state, caller) = sfn::caller().await?;
    numbering::preview(&state.numbering, &caller, &request).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", endpoint = "reserve_number", input = Json)]
pub async fn reserve_number(request: NumberRequest) -> Result<ReservationResult, ApiError> {
    let (state, caller) = sfn::caller().await?;
    numbering::reserve(&state.numbering, &caller, &request, None).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", endpoint = "confirm_reservation", input = Json)]
pub async fn confirm_reservation(token: String, document_id: String) -> Result<StatusResult, ApiError> {
    let (state, caller) = sfn::caller().await?;
    numbering::confirm(&state.numbering, &caller, &token, &document_id, None).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", endpoint = "cancel_reservation", input = Json)]
pub async fn cancel_reservation(token: String, reason: Option<String>) -> Result<StatusResult, ApiError> {
    let (state, caller) = sfn::caller().await?;
    numbering::cancel(&state.numbering, &caller, &token, reason.as_deref(), None).await.map_err(sfn::error)
}

/// What the reserve page shows at first for the choices in its address (`server::numbering::forms::page`).
#[server(prefix = "/sfn", endpoint = "reserve_page", input = Json)]
pub async fn reserve_page(choices: crate::contract::forms::ReserveChoices) -> Result<crate::contract::forms::ReservePageData, ApiError> {
    let (state, caller) = sfn::caller().await?;
    let session = sfn::session(&state).await?;
    numbering::forms::page(&state.numbering, &state.catalog, &caller, &session, &choices, sfn::page_lang()).await.map_err(sfn::error)
}

/// What the blocks page shows at first: the caller's blocks, the one in its address (`block`), the form for a new
/// block for the reserve page's choices in its address (`server::numbering::blocks::page`).
#[server(prefix = "/sfn", endpoint = "blocks_page", input = Json)]
pub async fn blocks_page(choices: crate::contract::forms::ReserveChoices, block: Option<String>) -> Result<BlocksPageData, ApiError> {
    let (state, caller) = sfn::caller().await?;
    let session = sfn::session(&state).await?;
    numbering::blocks::page(&state.numbering, &caller, &session, &choices, block.as_deref(), sfn::page_lang()).await.map_err(sfn::error)
}
