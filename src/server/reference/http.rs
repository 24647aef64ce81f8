//! REST: reference data lists (any authenticated caller); reference-data admin (super admins: `admin` checks).

use axum::extract::State;
use axum::Json;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::contract::import::{CodeNameInput, ContractInput, OrganizationInput, ProjectInput, SubTypeInput};
use crate::contract::{ContractItem, CorrespondenceTypeItem, DisciplineItem, OrgItem, ProjectItem, RfaTypeItem, SubTypeItem};
use crate::server::auth::Access;
use crate::server::auth::Caller;
use crate::server::error::{error_set, SignedInErrors, FAILURES, INPUT, SIGNED_IN};
use crate::server::error::{ApiPath, AppError, ImportErrors};
use crate::server::reference::Catalog;

error_set!(
    /// Saving a reference item: a code taken or changed, an unknown code named in the item.
    pub ReferenceSaveErrors: FAILURES, SIGNED_IN, INPUT; NotFound, AlreadyExists, CodeImmutable, VersionConflict
);

/// The reference-data routes (under `/api/v1`): each kind on its own path, so that the OpenAPI document names the
/// shape of its items. The import reads its body with its own, larger limit.
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    std::sync::Arc<Access>: axum::extract::FromRef<S>,
    std::sync::Arc<Catalog>: axum::extract::FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list_projects, create_project))
        .routes(routes!(update_project))
        .routes(routes!(list_organizations, create_organization))
        .routes(routes!(update_organization))
        .routes(routes!(list_correspondence_types, create_correspondence_type))
        .routes(routes!(update_correspondence_type))
        .routes(routes!(list_sub_types, create_sub_type))
        .routes(routes!(update_sub_type))
        .routes(routes!(list_rfa_types, create_rfa_type))
        .routes(routes!(update_rfa_type))
        .routes(routes!(list_disciplines, create_discipline))
        .routes(routes!(update_discipline))
        .routes(routes!(list_contracts, create_contract))
        .routes(routes!(update_contract))
        .routes(routes!(import))
}

/// The three operations of one kind of reference data: list it (any signed-in caller), create an item and edit one
/// (super admins, and a project's admins for its contracts; 409 when the code exists, CODE_IMMUTABLE when an edit
/// would change it).
macro_rules! reference_kind {
    ($kind:tt, $path:tt, $item_path:tt, $list:ident, $create:ident, $update:ident, $item:ident, $input:ident) => {
        #[utoipa::path(get, path = $path, responses((status = 200, body = [$item]), SignedInErrors), tag = "reference")]
        pub(crate) async fn $list(State(s): State<std::sync::Arc<Catalog>>, caller: Caller) -> Result<Json<serde_json::Value>, AppError> {
            Ok(Json(super::list_for(&s, &caller, $kind).await?))
        }

        #[utoipa::path(post, path = $path, request_body = $input, responses((status = 200, body = SavedItem), ReferenceSaveErrors), tag = "reference")]
        pub(crate) async fn $create(
            State(s): State<std::sync::Arc<Catalog>>,
            caller: Caller,
            ApiJson(body): ApiJson<serde_json::Value>,
        ) -> Result<Json<SavedItem>, AppError> {
            let (id, action) = admin::save_json(&s, &caller, $kind, None, body).await?;
            Ok(Json(SavedItem { id, action: action.into() }))
        }

        #[utoipa::path(put, path = $item_path, params(("id" = i64, Path,)),
            request_body(content = $input, description = "the whole item, as for create"),
            responses((status = 200, body = SavedItem), ReferenceSaveErrors), tag = "reference")]
        pub(crate) async fn $update(
            State(s): State<std::sync::Arc<Catalog>>,
            caller: Caller,
            ApiPath(id): ApiPath<i64>,
            ApiJson(body): ApiJson<serde_json::Value>,
        ) -> Result<Json<SavedItem>, AppError> {
            let (id, action) = admin::save_json(&s, &caller, $kind, Some(id), body).await?;
            Ok(Json(SavedItem { id, action: action.into() }))
        }
    };
}

reference_kind!(
    "projects",
    "/reference/projects",
    "/reference/projects/{id}",
    list_projects,
    create_project,
    update_project,
    ProjectItem,
    ProjectInput
);
reference_kind!(
    "organizations",
    "/reference/organizations",
    "/reference/organizations/{id}",
    list_organizations,
    create_organization,
    update_organization,
    OrgItem,
    OrganizationInput
);
reference_kind!(
    "correspondence-types",
    "/reference/correspondence-types",
    "/reference/correspondence-types/{id}",
    list_correspondence_types,
    create_correspondence_type,
    update_correspondence_type,
    CorrespondenceTypeItem,
    CodeNameInput
);
reference_kind!(
    "sub-types",
    "/reference/sub-types",
    "/reference/sub-types/{id}",
    list_sub_types,
    create_sub_type,
    update_sub_type,
    SubTypeItem,
    SubTypeInput
);
reference_kind!(
    "rfa-types",
    "/reference/rfa-types",
    "/reference/rfa-types/{id}",
    list_rfa_types,
    create_rfa_type,
    update_rfa_type,
    RfaTypeItem,
    CodeNameInput
);
reference_kind!(
    "disciplines",
    "/reference/disciplines",
    "/reference/disciplines/{id}",
    list_disciplines,
    create_discipline,
    update_discipline,
    DisciplineItem,
    CodeNameInput
);
reference_kind!(
    "contracts",
    "/reference/contracts",
    "/reference/contracts/{id}",
    list_contracts,
    create_contract,
    update_contract,
    ContractItem,
    ContractInput
);

// ---- reference-data admin (super admins): create, edit, JSON import ----

use axum::extract::Request;
use axum::response::Response;
use serde::{Deserialize, Serialize};

use super::admin;
use crate::contract::import::{ImportReport, ReferenceDocument};
use crate::server::error::{ApiJson, ApiQuery};

/// A reference document as the import takes it: at least one item in some section.
pub(crate) struct ReferenceImport;
impl utoipa::PartialSchema for ReferenceImport {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AllOfBuilder, AnyOfBuilder, ArrayBuilder, ObjectBuilder};
        let mut some_section = AnyOfBuilder::new();
        for section in ["organizations", "correspondenceTypes", "subTypes", "rfaTypes", "disciplines", "projects", "contracts"] {
            some_section = some_section.item(ObjectBuilder::new().property(section, ArrayBuilder::new().min_items(Some(1))).required(section));
        }
        AllOfBuilder::new().item(<ReferenceDocument as utoipa::PartialSchema>::schema()).item(some_section).into()
    }
}
impl utoipa::ToSchema for ReferenceImport {}

/// What a create or edit did.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SavedItem {
    pub(crate) id: i64,
    /// CREATE, UPDATE or UNCHANGED
    pub(crate) action: String,
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct ImportQuery {
    /// true: report only, change nothing
    pub(crate) dry_run: Option<bool>,
}

/// `POST /api/v1/reference/import?dryRun=true`: a whole reference document, upserted by code, all or nothing.
#[utoipa::path(post, path = "/reference/import", operation_id = "import_reference_data", params(ImportQuery),
    request_body(content = ReferenceImport, description = "sections organizations, correspondenceTypes, subTypes, rfaTypes, disciplines, projects, contracts (each optional); at most 10,000 items and 1 MiB"),
    responses(
        (status = 200, body = ImportReport, description = "the per-item report; applied = true when written"),
        (status = 400, body = crate::server::error::ImportRejected, description = "malformed document, or (when applying) an item is refused: the §6 body plus `report`; nothing was changed"),
        ImportErrors,
    ),
    tag = "reference")]
pub(crate) async fn import(
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
