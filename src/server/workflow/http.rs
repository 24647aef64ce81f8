//! REST: the generic workflow endpoints. The engine is generic; the data of an instance and the side effects
//! of its transitions belong to the feature that owns the workflow, so these handlers route by workflow code.

use axum::extract::State;
use axum::routing::{self, post};
use axum::{Json, Router};
use serde::Deserialize;

use super::not_found;
use crate::server::admin_ops::{self, ResetRequestView};
use crate::server::auth::Caller;
use crate::server::error::{ApiJson, ApiPath, AppError};
use crate::server::workflow::Envelope;
use crate::server::AppState;

/// The generic workflow routes (under `/api/v1`).
pub fn router() -> Router<AppState> {
    Router::new().route("/workflow/{public_id}", routing::get(get)).route("/workflow/{public_id}/actions/{action}", post(act))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionBody {
    pub comment: Option<String>,
}

/// `GET /workflow/{publicId}`: one instance with its envelope.
#[utoipa::path(get, path = "/api/v1/workflow/{publicId}", params(("publicId" = String, Path,)), responses((status = 200, description = "a workflow object in the envelope {data, workflow}"), (status = "4XX", body = crate::server::error::ErrorBody)), tag = "workflow")]
pub async fn get(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath(public_id): ApiPath<String>,
) -> Result<Json<Envelope<ResetRequestView>>, AppError> {
    match super::workflow_of(&s.db, &public_id).await?.as_str() {
        admin_ops::RESET_WORKFLOW => Ok(Json(admin_ops::reset_request(&s, &caller, &public_id).await?)),
        _ => Err(not_found(&public_id)),
    }
}

/// `POST /workflow/{publicId}/actions/{action}` `{"comment"?}`: takes an action; answers the new envelope.
#[utoipa::path(post, path = "/api/v1/workflow/{publicId}/actions/{action}", params(("publicId" = String, Path,), ("action" = String, Path, description = "APPROVE or REJECT")), responses((status = 200, description = "the object after the transition, in the envelope"), (status = "4XX", body = crate::server::error::ErrorBody)), tag = "workflow")]
pub async fn act(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath((public_id, action)): ApiPath<(String, String)>,
    ApiJson(body): ApiJson<ActionBody>,
) -> Result<Json<Envelope<ResetRequestView>>, AppError> {
    match super::workflow_of(&s.db, &public_id).await?.as_str() {
        admin_ops::RESET_WORKFLOW => Ok(Json(admin_ops::act_on_reset(&s, &caller, &public_id, &action, body.comment.as_deref()).await?)),
        _ => Err(not_found(&public_id)),
    }
}
