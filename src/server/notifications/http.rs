//! REST: the webhooks and their deliveries (super admins), and what waits for the caller. Thin: the service checks the
//! caller.

use std::sync::Arc;

use axum::extract::{FromRef, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::contract::notifications::{
    DeliveryId, DeliveryView, NewWebhook, Replayed, Waiting, WebhookCreated, WebhookId, WebhookUpdate, WebhookView,
};
use crate::server::auth::{Access, Caller};
use crate::server::error::{error_set, FAILURES, INPUT, SIGNED_IN};
use crate::server::error::{ApiJson, ApiPath, ApiQuery, AppError, ByIdErrors, CreateErrors, QueryErrors, SignedInErrors};
use crate::server::notifications::{self as service, Notifier};

error_set!(
    /// Replaying a delivery: it must exist and have failed.
    pub ReplayErrors: FAILURES, SIGNED_IN, INPUT; NotFound, WfInvalidTransition
);

/// The notifications' routes (under `/api/v1`).
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<Access>: FromRef<S>,
    Arc<Notifier>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list_webhooks, create_webhook))
        .routes(routes!(update_webhook, delete_webhook))
        .routes(routes!(replay_webhook))
        .routes(routes!(list_deliveries))
        .routes(routes!(replay_delivery))
        .routes(routes!(waiting))
}

/// `GET /notifications/webhooks` (super admins): every webhook, with its failed and pending deliveries' counts.
#[utoipa::path(get, path = "/notifications/webhooks",
    responses((status = 200, body = [WebhookView]), SignedInErrors), tag = "notifications")]
pub(crate) async fn list_webhooks(State(n): State<Arc<Notifier>>, caller: Caller) -> Result<Json<Vec<WebhookView>>, AppError> {
    Ok(Json(service::webhooks(&n, &caller).await?))
}

/// `POST /notifications/webhooks` (super admins): a new webhook; its secret (given, or generated) is in the answer,
/// this once. Events are signed with it: `X-Docnum-Signature: sha256=<hex HMAC-SHA256 of the body>`.
#[utoipa::path(post, path = "/notifications/webhooks", request_body = NewWebhook,
    responses((status = 200, body = WebhookCreated), CreateErrors), tag = "notifications")]
pub(crate) async fn create_webhook(
    State(n): State<Arc<Notifier>>,
    caller: Caller,
    ApiJson(body): ApiJson<NewWebhook>,
) -> Result<Json<WebhookCreated>, AppError> {
    Ok(Json(service::create_webhook(&n, &caller, &body).await?))
}

/// `PATCH /notifications/webhooks/{id}` (super admins): enable or disable it.
#[utoipa::path(patch, path = "/notifications/webhooks/{id}", params(("id" = i64, Path,)), request_body = WebhookUpdate,
    responses((status = 200, body = WebhookView), ByIdErrors), tag = "notifications")]
pub(crate) async fn update_webhook(
    State(n): State<Arc<Notifier>>,
    caller: Caller,
    ApiPath(id): ApiPath<WebhookId>,
    ApiJson(body): ApiJson<WebhookUpdate>,
) -> Result<Json<WebhookView>, AppError> {
    Ok(Json(service::set_active(&n, &caller, id, body.active).await?))
}

/// `{"deleted": id}`
#[derive(Serialize, ToSchema)]
pub(crate) struct Deleted {
    pub(crate) deleted: WebhookId,
}

/// `DELETE /notifications/webhooks/{id}` (super admins): the webhook and its deliveries.
#[utoipa::path(delete, path = "/notifications/webhooks/{id}", params(("id" = i64, Path,)),
    responses((status = 200, body = Deleted), ByIdErrors), tag = "notifications")]
pub(crate) async fn delete_webhook(
    State(n): State<Arc<Notifier>>,
    caller: Caller,
    ApiPath(id): ApiPath<WebhookId>,
) -> Result<Json<Deleted>, AppError> {
    service::delete_webhook(&n, &caller, id).await?;
    Ok(Json(Deleted { deleted: id }))
}

/// `POST /notifications/webhooks/{id}/replay` (super admins): every failed delivery of the webhook is due again.
#[utoipa::path(post, path = "/notifications/webhooks/{id}/replay", params(("id" = i64, Path,)),
    responses((status = 200, body = Replayed), ByIdErrors), tag = "notifications")]
pub(crate) async fn replay_webhook(
    State(n): State<Arc<Notifier>>,
    caller: Caller,
    ApiPath(id): ApiPath<WebhookId>,
) -> Result<Json<Replayed>, AppError> {
    Ok(Json(service::replay_failed(&n, &caller, id).await?))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct DeliveriesQuery {
    /// PENDING, DELIVERED or FAILED; absent: every state.
    #[param(schema_with = crate::contract::lenient::schema::delivery_state)]
    pub(crate) state: Option<String>,
    pub(crate) webhook_id: Option<WebhookId>,
}

/// `GET /notifications/deliveries?state&webhookId` (super admins): newest event first, at most 500, with each one's
/// attempts and last error.
#[utoipa::path(get, path = "/notifications/deliveries", params(DeliveriesQuery),
    responses((status = 200, body = [DeliveryView]), QueryErrors), tag = "notifications")]
pub(crate) async fn list_deliveries(
    State(n): State<Arc<Notifier>>,
    caller: Caller,
    ApiQuery(q): ApiQuery<DeliveriesQuery>,
) -> Result<Json<Vec<DeliveryView>>, AppError> {
    Ok(Json(service::deliveries(&n, &caller, q.state.as_deref(), q.webhook_id).await?))
}

/// `POST /notifications/deliveries/{id}/replay` (super admins): a failed delivery is due again, its attempts counted
/// afresh (409 for one that has not failed).
#[utoipa::path(post, path = "/notifications/deliveries/{id}/replay", params(("id" = i64, Path,)),
    responses((status = 200, body = Replayed), ReplayErrors), tag = "notifications")]
pub(crate) async fn replay_delivery(
    State(n): State<Arc<Notifier>>,
    caller: Caller,
    ApiPath(id): ApiPath<DeliveryId>,
) -> Result<Json<Replayed>, AppError> {
    Ok(Json(service::replay(&n, &caller, id).await?))
}

/// `GET /notifications/waiting`: what waits for the caller (a super admin: the reset requests another one made).
#[utoipa::path(get, path = "/notifications/waiting",
    responses((status = 200, body = Waiting), SignedInErrors), tag = "notifications")]
pub(crate) async fn waiting(State(n): State<Arc<Notifier>>, caller: Caller) -> Result<Json<Waiting>, AppError> {
    Ok(Json(service::waiting(&n.db, &caller).await?))
}
