//! Server functions: the browser's calls into the server, one module per feature. Each body finds the caller
//! (`crate::server::sfn`), calls the same service as the REST API, and maps its error; errors arrive as
//! [`ApiError`] (`code` to decide by, Thai `message` to show) — show them with [`error_text`].
//! (Names differ from the types they return: a server function also defines a type of its own name.)

use crate::contract::ApiError;

mod audit;
mod auth;
mod counters;
mod import;
mod notifications;
mod numbering;
mod receipts;
mod reference;
mod stats;
mod templates;

pub use audit::*;
pub use auth::*;
pub use counters::*;
pub use import::*;
pub use notifications::*;
pub use numbering::*;
pub use receipts::*;
pub use reference::*;
pub use stats::*;
pub use templates::*;

/// What a person reads of a server-function error: the Thai message, its NB code and reference.
pub fn error_text(e: &ApiError) -> String {
    e.to_string()
}
