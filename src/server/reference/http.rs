//! REST: reference data lists (any authenticated caller); reference-data admin (super admins: `admin` checks).

use axum::extract::State;
use axum::routing::{get, post, put};
use axum::{Json, Router};

use crate::server::auth::Caller;
use crate::server::error::{ApiPath, AppError};
use crate::server::AppState;

/// The reference-data routes (under `/api/v1`). The import reads its body with its own, larger limit.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/reference/{kind}", get(list))
        .route("/reference/import", post(import))
        .route("/reference/{kind}", post(create))
        .route("/reference/{kind}/{id}", put(update))
}

/// `GET /api/v1/reference/{kind}` for projects, organizations, correspondence-types, sub-types, rfa-types, disciplines.
#[utoipa::path(get, path = "/api/v1/reference/{kind}",
    params(("kind" = String, Path, description = "projects | organizations | correspondence-types | sub-types | rfa-types | disciplines")),
    responses((status = 200, description = "the list"), (status = 404, body = crate::server::error::ErrorBody)), tag = "reference")]
pub async fn list(State(s): State<AppState>, caller: Caller, ApiPath(kind): ApiPath<String>) -> Result<Json<serde_json::Value>, AppError> {
    Ok(Json(super::list_for(&s, &caller, &kind).await?))
}

// ---- reference-data admin (super admins): create, edit, JSON import ----

use axum::extract::Request;
use axum::response::Response;
use serde::{Deserialize, Serialize};

use super::admin;
use crate::contract::import::{ImportReport, ReferenceDocument};
use crate::server::error::{ApiJson, ApiQuery};

/// What a create or edit did.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SavedItem {
    pub id: i64,
    /// CREATE, UPDATE or UNCHANGED
    pub action: String,
}

/// `POST /api/v1/reference/{kind}`: create one item (409 when the code exists).
#[utoipa::path(post, path = "/api/v1/reference/{kind}",
    params(("kind" = String, Path, description = "projects | organizations | correspondence-types | sub-types | rfa-types | disciplines")),
    request_body(content = serde_json::Value, description = "projects {code, name, active?, members?: [org code]}; organizations {code, name, role}; \
        sub-types {correspondenceTypeCode, subTypeNumber, code, name}; the others {code, name}"),
    responses((status = 200, body = SavedItem), (status = "4XX", body = crate::server::error::ErrorBody, description = "invalid code or name (400), not a super admin (403), code exists (409)")),
    tag = "reference")]
pub async fn create(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath(kind): ApiPath<String>,
    ApiJson(body): ApiJson<serde_json::Value>,
) -> Result<Json<SavedItem>, AppError> {
    let (id, action) = admin::save_json(&s, &caller, &kind, None, body).await?;
    Ok(Json(SavedItem { id, action: action.into() }))
}

/// `PUT /api/v1/reference/{kind}/{id}`: edit one item; its code stays (409 CODE_IMMUTABLE otherwise).
#[utoipa::path(put, path = "/api/v1/reference/{kind}/{id}",
    params(("kind" = String, Path,), ("id" = i64, Path,)),
    request_body(content = serde_json::Value, description = "the whole item, as for create; a project with active=false is deactivated"),
    responses((status = 200, body = SavedItem), (status = "4XX", body = crate::server::error::ErrorBody)),
    tag = "reference")]
pub async fn update(
    State(s): State<AppState>,
    caller: Caller,
    ApiPath((kind, id)): ApiPath<(String, i64)>,
    ApiJson(body): ApiJson<serde_json::Value>,
) -> Result<Json<SavedItem>, AppError> {
    let (id, action) = admin::save_json(&s, &caller, &kind, Some(id), body).await?;
    Ok(Json(SavedItem { id, action: action.into() }))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportQuery {
    pub dry_run: Option<bool>,
}

/// `POST /api/v1/reference/import?dryRun=true`: a whole reference document, upserted by code, all or nothing.
#[utoipa::path(post, path = "/api/v1/reference/import",
    params(("dryRun" = Option<bool>, Query, description = "true: report only, change nothing")),
    request_body(content = ReferenceDocument, description = "sections organizations, correspondenceTypes, subTypes, rfaTypes, disciplines, projects (each optional); at most 10,000 items and 1 MiB"),
    responses(
        (status = 200, body = ImportReport, description = "the per-item report; applied = true when written"),
        (status = 400, description = "malformed document, or (when applying) an item is refused: the §6 body plus `report`; nothing was changed"),
        (status = 403, body = crate::server::error::ErrorBody),
    ),
    tag = "reference")]
pub async fn import(State(s): State<AppState>, caller: Caller, ApiQuery(q): ApiQuery<ImportQuery>, request: Request) -> Result<Response, AppError> {
    // refuse before reading a large body (the service checks again)
    caller.require_super_admin()?;
    let text = crate::server::import::http::body_text(request, admin::MAX_BYTES).await?;
    let report = admin::import_text(&s, &caller, &text, q.dry_run.unwrap_or(false)).await?;
    Ok(crate::server::import::http::report_response(report))
}
