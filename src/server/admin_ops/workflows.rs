//! REST: the generic workflow endpoints. The workflow engine (`workflow`) is generic; the data of an instance and the
//! side effects of its transitions belong to the operation that owns the workflow (here: counter resets), so these
//! handlers route by workflow code.

use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::server::admin_ops::{self, ResetRequestView};
use crate::server::auth::Caller;
use crate::server::error::{error_set, FAILURES, INPUT, SIGNED_IN};
use crate::server::error::{ApiJson, ApiPath, AppError, ByIdErrors};
use crate::server::numbering::Engine;
use crate::server::workflow::{not_found, workflow_of, Envelope};

/// The generic workflow routes (under `/api/v1`).
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    std::sync::Arc<crate::server::auth::Access>: axum::extract::FromRef<S>,
    std::sync::Arc<Engine>: axum::extract::FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(get)).routes(routes!(act))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ActionBody {
    #[schema(schema_with = crate::contract::lenient::schema::optional_reason)]
    pub(crate) comment: Option<String>,
}

/// `GET /workflow/{publicId}`: one instance with its envelope.
#[utoipa::path(get, path = "/workflow/{publicId}", operation_id = "get_workflow_instance", params(("publicId" = String, Path,)),
    responses(
        (status = 200, body = Envelope<ResetRequestView>, description = "a workflow object in the envelope {data, workflow}"),
        ByIdErrors,
    ),
    tag = "workflow")]
pub(crate) async fn get(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiPath(public_id): ApiPath<String>,
) -> Result<Json<Envelope<ResetRequestView>>, AppError> {
    match workflow_of(&s.db, &public_id).await?.as_str() {
        admin_ops::RESET_WORKFLOW => Ok(Json(admin_ops::reset_request(&s.db, &caller, &public_id).await?)),
        _ => Err(not_found(&public_id)),
    }
}

error_set!(
    /// A workflow action: the instance may be unknown, the action not allowed in its state or to the caller, the state
    /// changed meanwhile; approving a reset applies it to its counter.
    pub WorkflowActionErrors: FAILURES, SIGNED_IN, INPUT;
        NotFound, WfInvalidTransition, WfVersionConflict, VersionConflict, LockTimeout, ResetAboveLast, ResetBelowConfirmed
);

/// `POST /workflow/{publicId}/actions/{action}` `{"comment"?}`: takes an action; answers the new envelope.
#[utoipa::path(post, path = "/workflow/{publicId}/actions/{action}", operation_id = "act_on_workflow_instance",
    params(("publicId" = String, Path,), ("action" = String, Path, description = "APPROVE or REJECT")),
    request_body = ActionBody,
    responses(
        (status = 200, body = Envelope<ResetRequestView>, description = "the object after the transition, in the envelope"),
        WorkflowActionErrors,
    ),
    tag = "workflow")]
pub(crate) async fn act(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiPath((public_id, action)): ApiPath<(String, String)>,
    ApiJson(body): ApiJson<ActionBody>,
) -> Result<Json<Envelope<ResetRequestView>>, AppError> {
    match workflow_of(&s.db, &public_id).await?.as_str() {
        admin_ops::RESET_WORKFLOW => Ok(Json(admin_ops::act_on_reset(&s, &caller, &public_id, &action, body.comment.as_deref()).await?)),
        _ => Err(not_found(&public_id)),
    }
}
