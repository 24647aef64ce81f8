//! REST: reference data lists (any authenticated caller).

use axum::extract::State;
use axum::Json;

use crate::app::types::{OrgItem, ProjectItem, RefItem, SubTypeItem};
use crate::server::auth::Caller;
use crate::server::error::{ApiPath, AppError};
use crate::server::AppState;

/// `GET /api/v1/reference/{kind}` for projects, organizations, correspondence-types, sub-types, rfa-types, disciplines.
#[utoipa::path(get, path = "/api/v1/reference/{kind}",
    params(("kind" = String, Path, description = "projects | organizations | correspondence-types | sub-types | rfa-types | disciplines")),
    responses((status = 200, description = "the list"), (status = 404, body = crate::server::error::ErrorBody)), tag = "reference")]
pub async fn list(State(s): State<AppState>, _caller: Caller, ApiPath(kind): ApiPath<String>) -> Result<Json<serde_json::Value>, AppError> {
    let snapshot = s.reference.get().await?;
    let d = &snapshot.data;
    let value = match kind.as_str() {
        "projects" => serde_json::to_value::<&Vec<ProjectItem>>(&d.projects),
        "organizations" => serde_json::to_value::<&Vec<OrgItem>>(&d.organizations),
        "correspondence-types" => serde_json::to_value::<&Vec<RefItem>>(&d.correspondence_types),
        "sub-types" => serde_json::to_value::<&Vec<SubTypeItem>>(&d.sub_types),
        "rfa-types" => serde_json::to_value::<&Vec<RefItem>>(&d.rfa_types),
        "disciplines" => serde_json::to_value::<&Vec<RefItem>>(&d.disciplines),
        other => {
            return Err(AppError::not_found(
                format!("ข้อมูลอ้างอิงประเภท '{}'", other.chars().take(40).collect::<String>()),
                format!("reference kind '{other}'"),
            ))
        }
    };
    value.map(Json).map_err(|e| AppError::internal(e.to_string()))
}
