//! Server function of the page `/import`: the bulk import of counters and legacy numbers (super admins: the
//! import checks). It carries a whole file: the import checks the size itself (2 MiB).

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use crate::contract::import::{ImportFormat, ImportReport};
use crate::contract::ApiError;
#[cfg(feature = "ssr")]
use crate::server::{import, sfn};

/// Bulk import of counters and legacy numbers (`dry_run`: report only).
#[server(prefix = "/sfn", endpoint = "import_bulk", input = Json)]
pub async fn bulk_import(text: String, format: ImportFormat, reason: Option<String>, dry_run: bool) -> Result<ImportReport, ApiError> {
    let (state, caller) = sfn::caller().await?;
    import::bulk_import(state.engine(), &caller, &text, format, reason.as_deref(), dry_run).await.map_err(sfn::error)
}
