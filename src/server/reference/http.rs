//! REST: reference data lists (any authenticated caller); reference-data admin (super admins: `admin` checks).

use axum::extract::State;
use axum::Json;
use utoipa::openapi::schema::{AnyOfBuilder, ArrayBuilder, Schema};
use utoipa::openapi::RefOr;
use utoipa::{IntoParams, PartialSchema, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::contract::import::{CodeNameInput, OrganizationInput, ProjectInput, SubTypeInput};
use crate::contract::{OrgItem, ProjectItem, RefItem, SubTypeItem};
use crate::server::auth::Access;
use crate::server::auth::Caller;
use crate::server::error::{ApiPath, AppError, ErrorBody};
use crate::server::reference::Catalog;

/// The reference-data routes (under `/api/v1`). The import reads its body with its own, larger limit.
pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    std::sync::Arc<Access>: axum::extract::FromRef<S>,
    std::sync::Arc<Catalog>: axum::extract::FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(import)).routes(routes!(update))
}

/// The list of one kind: projects, organizations, sub-types, or (the other kinds) code-and-name items.
pub struct ReferenceList;

impl PartialSchema for ReferenceList {
    fn schema() -> RefOr<Schema> {
        AnyOfBuilder::new()
            .item(ArrayBuilder::new().items(ProjectItem::schema()))
            .item(ArrayBuilder::new().items(OrgItem::schema()))
            .item(ArrayBuilder::new().items(SubTypeItem::schema()))
            .item(ArrayBuilder::new().items(RefItem::schema()))
            .description(Some("projects | organizations | sub-types | the others (correspondence-types, rfa-types, disciplines)"))
            .into()
    }
}
impl ToSchema for ReferenceList {}

/// One reference item to create or edit; which shape depends on `{kind}`.
pub struct ReferenceItemInput;

impl PartialSchema for ReferenceItemInput {
    fn schema() -> RefOr<Schema> {
        AnyOfBuilder::new()
            .item(ProjectInput::schema())
            .item(OrganizationInput::schema())
            .item(SubTypeInput::schema())
            .item(CodeNameInput::schema())
            .description(Some(
                "projects {code, name, active?, members?: [org code]}; organizations {code, name, role}; \
                 sub-types {correspondenceTypeCode, subTypeNumber, code, name}; the others {code, name}",
            ))
            .into()
    }
}
impl ToSchema for ReferenceItemInput {}

/// The `{kind}` of a path.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct KindParam {
    /// projects | organizations | correspondence-types | sub-types | rfa-types | disciplines
    #[param(inline)]
    kind: super::store::Kind,
}

/// `GET /api/v1/reference/{kind}` for projects, organizations, correspondence-types, sub-types, rfa-types, disciplines.
#[utoipa::path(get, path = "/reference/{kind}", operation_id = "list_reference", params(KindParam),
    responses(
        (status = 200, body = ReferenceList, description = "the list"),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no such kind"),
    ),
    tag = "reference")]
pub async fn list(
    State(s): State<std::sync::Arc<Catalog>>,
    caller: Caller,
    ApiPath(kind): ApiPath<String>,
) -> Result<Json<serde_json::Value>, AppError> {
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
#[utoipa::path(post, path = "/reference/{kind}", operation_id = "create_reference_item", params(KindParam), request_body = ReferenceItemInput,
    responses(
        (status = 200, body = SavedItem),
        (status = 400, body = ErrorBody, description = "malformed body, invalid code or name"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "not a super admin"),
        (status = 404, body = ErrorBody, description = "no such kind, or an unknown code named in the item"),
        (status = 409, body = ErrorBody, description = "the code exists"),
        (status = 413, body = ErrorBody),
    ),
    tag = "reference")]
pub async fn create(
    State(s): State<std::sync::Arc<Catalog>>,
    caller: Caller,
    ApiPath(kind): ApiPath<String>,
    ApiJson(body): ApiJson<serde_json::Value>,
) -> Result<Json<SavedItem>, AppError> {
    let (id, action) = admin::save_json(&s, &caller, &kind, None, body).await?;
    Ok(Json(SavedItem { id, action: action.into() }))
}

/// `PUT /api/v1/reference/{kind}/{id}`: edit one item; its code stays (409 CODE_IMMUTABLE otherwise).
#[utoipa::path(put, path = "/reference/{kind}/{id}", operation_id = "update_reference_item", params(KindParam, ("id" = i64, Path,)),
    request_body(content = ReferenceItemInput, description = "the whole item, as for create; a project with active=false is deactivated"),
    responses(
        (status = 200, body = SavedItem),
        (status = 400, body = ErrorBody, description = "malformed body, invalid code or name"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "not a super admin"),
        (status = 404, body = ErrorBody, description = "no such kind or item"),
        (status = 409, body = ErrorBody, description = "the code is another item's, or would change (CODE_IMMUTABLE)"),
        (status = 413, body = ErrorBody),
    ),
    tag = "reference")]
pub async fn update(
    State(s): State<std::sync::Arc<Catalog>>,
    caller: Caller,
    ApiPath((kind, id)): ApiPath<(String, i64)>,
    ApiJson(body): ApiJson<serde_json::Value>,
) -> Result<Json<SavedItem>, AppError> {
    let (id, action) = admin::save_json(&s, &caller, &kind, Some(id), body).await?;
    Ok(Json(SavedItem { id, action: action.into() }))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ImportQuery {
    /// true: report only, change nothing
    pub dry_run: Option<bool>,
}

/// `POST /api/v1/reference/import?dryRun=true`: a whole reference document, upserted by code, all or nothing.
#[utoipa::path(post, path = "/reference/import", operation_id = "import_reference_data", params(ImportQuery),
    request_body(content = ReferenceDocument, description = "sections organizations, correspondenceTypes, subTypes, rfaTypes, disciplines, projects (each optional); at most 10,000 items and 1 MiB"),
    responses(
        (status = 200, body = ImportReport, description = "the per-item report; applied = true when written"),
        (status = 400, body = crate::server::error::ImportRejected, description = "malformed document, or (when applying) an item is refused: the §6 body plus `report`; nothing was changed"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 413, body = ErrorBody),
    ),
    tag = "reference")]
pub async fn import(
    State(s): State<std::sync::Arc<Catalog>>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ImportQuery>,
    request: Request,
) -> Result<Response, AppError> {
    // refuse before reading a large body (the service checks again)
    caller.require_super_admin()?;
    let text = crate::server::error::body_text(request, admin::MAX_BYTES).await?;
    let report = admin::import_text(&s, &caller, &text, q.dry_run.unwrap_or(false)).await?;
    Ok(crate::server::error::report_response(report))
}
