//! Server functions of the pages `/import` and `/reference`. Bodies only delegate to `crate::server::ui`,
//! which checks the caller (super admins) and calls the import / reference-data engines.
//! The imports carry whole files: their bodies check the size themselves (2 MiB bulk, 1 MiB reference data).

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use crate::contract::import::{ImportFormat, ImportReport};
use crate::contract::ApiError;

/// Bulk import of counters and legacy numbers (`dry_run`: report only).
#[server(prefix = "/sfn", endpoint = "import_bulk", input = Json)]
pub async fn bulk_import(text: String, format: ImportFormat, reason: Option<String>, dry_run: bool) -> Result<ImportReport, ApiError> {
    crate::server::ui::bulk_import(text, format, reason, dry_run).await
}

/// JSON import of a whole reference-data document (`dry_run`: report only).
#[server(prefix = "/sfn", endpoint = "import_reference", input = Json)]
pub async fn reference_import(text: String, dry_run: bool) -> Result<ImportReport, ApiError> {
    crate::server::ui::reference_import(text, dry_run).await
}

/// Creates (`id` None) or edits one reference item of `kind` (`projects`, `organizations`, …); returns its id.
#[server(prefix = "/sfn", input = Json)]
pub async fn save_reference_item(kind: String, id: Option<i64>, item: serde_json::Value) -> Result<i64, ApiError> {
    crate::server::ui::save_reference_item(kind, id, item).await
}
