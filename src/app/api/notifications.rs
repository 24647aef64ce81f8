use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use crate::contract::notifications::{DeliveryId, DeliveryView, NewWebhook, Replayed, Waiting, WebhookCreated, WebhookId, WebhookView};
use crate::contract::ApiError;
#[cfg(feature = "ssr")]
use crate::server::{notifications, sfn};

/// What waits for the viewer: the header's badge.
#[server(prefix = "/sfn", input = Json)]
pub async fn waiting_for_me() -> Result<Waiting, ApiError> {
    let (state, caller) = sfn::caller().await?;
    notifications::waiting(&state.db, &caller).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn list_webhooks() -> Result<Vec<WebhookView>, ApiError> {
    let (state, caller) = sfn::caller().await?;
    notifications::webhooks(&state.notifier, &caller).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn create_webhook(new: NewWebhook) -> Result<WebhookCreated, ApiError> {
    let (state, caller) = sfn::caller().await?;
    notifications::create_webhook(&state.notifier, &caller, &new).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn set_webhook_active(id: WebhookId, active: bool) -> Result<WebhookView, ApiError> {
    let (state, caller) = sfn::caller().await?;
    notifications::set_active(&state.notifier, &caller, id, active).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn delete_webhook(id: WebhookId) -> Result<(), ApiError> {
    let (state, caller) = sfn::caller().await?;
    notifications::delete_webhook(&state.notifier, &caller, id).await.map_err(sfn::error)
}

/// The failed deliveries (newest first), with their last errors.
#[server(prefix = "/sfn", input = Json)]
pub async fn failed_deliveries() -> Result<Vec<DeliveryView>, ApiError> {
    let (state, caller) = sfn::caller().await?;
    notifications::deliveries(&state.notifier, &caller, Some("FAILED"), None).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn replay_delivery(id: DeliveryId) -> Result<Replayed, ApiError> {
    let (state, caller) = sfn::caller().await?;
    notifications::replay(&state.notifier, &caller, id).await.map_err(sfn::error)
}

#[server(prefix = "/sfn", input = Json)]
pub async fn replay_webhook(id: WebhookId) -> Result<Replayed, ApiError> {
    let (state, caller) = sfn::caller().await?;
    notifications::replay_failed(&state.notifier, &caller, id).await.map_err(sfn::error)
}
