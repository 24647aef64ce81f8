//! REST: `POST /api/v1/document-numbering/import?dryRun=true&format=json|csv&reason=…` with the rows as a JSON
//! body or as `text/csv`. Thin: read the body (own size limit), call the engine, answer.

use axum::extract::{Request, State};
use axum::response::Response;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{RowInput, MAX_BYTES};
use crate::contract::import::{ImportFormat, ImportReport};
use crate::server::auth::Caller;
use crate::server::error::{body_text, media_type, report_response, ApiQuery, AppError, ImportErrors, ImportRejected};
use crate::server::numbering::Engine;

/// The bulk import route (under `/api/v1`); it reads its body with its own, larger limit.
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    std::sync::Arc<crate::server::auth::Access>: axum::extract::FromRef<S>,
    std::sync::Arc<Engine>: axum::extract::FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(import))
}

/// The JSON body of a bulk import, for the OpenAPI document (the handler reads the text itself, leniently:
/// numbers may be JSON numbers or text).
pub(crate) struct ImportBody;

/// `[row, …]` or `{"reason"?, "rows": [row, …]}`, 1–10,000 rows (`import::read_json` reads it).
impl utoipa::PartialSchema for ImportBody {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AdditionalProperties, ArrayBuilder, ObjectBuilder, OneOfBuilder};
        let rows = || ArrayBuilder::new().items(RowInput::schema()).min_items(Some(1)).max_items(Some(super::MAX_ROWS));
        OneOfBuilder::new()
            .item(rows())
            .item(
                ObjectBuilder::new()
                    .property("reason", crate::contract::lenient::schema::optional_reason())
                    .description(Some("recorded in every audit row"))
                    .property("rows", rows())
                    .required("rows")
                    .additional_properties(Some(AdditionalProperties::FreeForm(false))),
            )
            .into()
    }
}
impl ToSchema for ImportBody {}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct ImportQuery {
    /// Default false: apply. `true`: check every row, change nothing.
    pub(crate) dry_run: Option<bool>,
    /// `json` or `csv`; default from the Content-Type (`text/csv` → csv, else json).
    #[param(value_type = Option<String>, pattern = "^(json|csv)$")]
    pub(crate) format: Option<ImportFormat>,
    /// The reason recorded in every audit row (JSON bodies may carry `reason` too).
    #[param(schema_with = crate::contract::lenient::schema::optional_reason)]
    pub(crate) reason: Option<String>,
}

/// `POST /document-numbering/import` — bulk import of counters and legacy numbers (super admins).
#[utoipa::path(post, path = "/document-numbering/import", operation_id = "bulk_import", params(ImportQuery),
    request_body(content((ImportBody = "application/json"), (String = "text/csv")),
        description = "JSON `[row, …]` or `{\"reason\", \"rows\": [row, …]}`, or CSV (text/csv) with a header row. \
        A row is a legacy number {projectCode, correspondenceTypeCode, documentNumber, documentId?} or a counter value \
        {projectCode, correspondenceTypeCode, originatorCode?, recipientCode?, subTypeNumber?, rfaTypeCode?, disciplineCode?, year?, month?, value}. \
        At most 10,000 rows and 2 MiB."),
    responses(
        (status = 200, body = ImportReport, description = "the report; applied = true when the rows were written (all or nothing)"),
        (status = 400, body = ImportRejected, description = "malformed text, or (when applying) a row is refused: the §6 error body plus `report` with every row; nothing was changed"),
        ImportErrors,
    ),
    tag = "numbering")]
pub(crate) async fn import(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ImportQuery>,
    request: Request,
) -> Result<Response, AppError> {
    // refuse before reading a large body
    if caller.require_super_admin().is_err() {
        return Err(AppError::ManualOverrideNotAllowed);
    }
    // the media type says what the text is (as the OpenAPI document does); `format` is for a body sent without one
    let format = match media_type(request.headers()).as_deref() {
        Some(ct) if ct.starts_with("text/csv") => ImportFormat::Csv,
        Some(ct) if ct.starts_with("application/json") => ImportFormat::Json,
        _ => q.format.unwrap_or(ImportFormat::Json),
    };
    let text = body_text(request, MAX_BYTES).await?;
    let dry_run = q.dry_run.unwrap_or(false);
    let report = super::bulk_import(&s, &caller, &text, format, q.reason.as_deref(), dry_run).await?;
    Ok(report_response(report))
}
