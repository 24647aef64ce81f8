//! Server functions of the reference data: the lists every page reads, and the page `/reference` (super admins:
//! `reference::admin` checks). The JSON import carries a whole document: its size is checked (1 MiB).

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use crate::contract::import::ImportReport;
use crate::contract::{ApiError, ReferenceData};
#[cfg(feature = "ssr")]
use crate::server::{reference::admin, sfn};

#[server(prefix = "/sfn", input = Json)]
pub async fn fetch_reference_data() -> Result<ReferenceData, ApiError> {
    let (state, caller) = sfn::caller().await?;
    crate::server::reference::data_for(&state.catalog, &caller).await.map_err(sfn::error)
}

/// JSON import of a whole reference-data document (`dry_run`: report only).
#[server(prefix = "/sfn", endpoint = "import_reference", input = Json)]
pub async fn reference_import(text: String, dry_run: bool) -> Result<ImportReport, ApiError> {
    let (state, caller) = sfn::caller().await?;
    admin::import_text(&state.catalog, &caller, &text, dry_run).await.map_err(sfn::error)
}

/// Creates (`id` None) or edits one reference item of `kind` (`projects`, `organizations`, …); returns its id.
#[server(prefix = "/sfn", input = Json)]
pub async fn save_reference_item(kind: String, id: Option<i64>, item: serde_json::Value) -> Result<i64, ApiError> {
    let (state, caller) = sfn::caller().await?;
    admin::save_json(&state.catalog, &caller, &kind, id, item).await.map(|(id, _)| id).map_err(sfn::error)
}
