//! Server functions of `/verify`: the log's public keys, and a number's receipt by its coordinates. Public, like
//! the log: no caller is looked for.

use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

use crate::contract::ApiError;
#[cfg(feature = "ssr")]
use crate::server::sfn;

/// What the verify page needs from the server: the keys it pins, and the receipt the link named, if any.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifyPageData {
    /// The log's verifier key (what `/log/key` serves).
    pub log_vkey: String,
    /// The configured witnesses' verifier keys.
    pub witness_vkeys: Vec<String>,
    /// The newest receipt of the number the link named.
    pub receipt: Option<String>,
}

/// A number by its coordinates, as the QR codes' links name it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NumberCoordinates {
    pub project_code: String,
    pub correspondence_type_code: String,
    pub document_number: String,
}

#[server(prefix = "/sfn", input = Json)]
pub async fn verify_page(number: Option<NumberCoordinates>) -> Result<VerifyPageData, ApiError> {
    let state = sfn::state()?;
    let log = &state.tlog;
    let receipt = match number {
        Some(n) => Some(log.named_receipt(&n.project_code, &n.correspondence_type_code, &n.document_number, None).await.map_err(sfn::error)?.0),
        None => None,
    };
    Ok(VerifyPageData { log_vkey: log.vkey().to_string(), witness_vkeys: log.witness_vkeys(), receipt })
}
