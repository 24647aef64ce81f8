//! Blocks of numbers as the blocks page and `GET /document-numbering/blocks[/{blockId}]` show them: who a block is
//! for, how far it is used, and each of its numbers.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::forms::ReserveChoices;
use super::{ApiError, NumberStatus, PreviewResult};

/// One block: its counter's project and type, whom it is for, its range, and how many of its numbers stand where.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct BlockSummary {
    pub block_id: String,
    pub project_code: String,
    pub correspondence_type_code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<String>,
    pub first_number: String,
    pub last_number: String,
    pub count: i64,
    /// Still held (RESERVED): each may be confirmed or cancelled until the hold ends.
    pub held: i64,
    pub confirmed: i64,
    /// Cancelled by a caller, or voided after confirmation.
    pub cancelled: i64,
    /// Not confirmed when the hold ended ("block expired").
    pub expired: i64,
    pub hold_until: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    /// Who reserved it (a user's name, or an API token's).
    pub reserved_by: String,
}

/// A number of a block. Its reservation token only for the caller who reserved the block: confirming and
/// cancelling are theirs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct BlockNumber {
    pub sequence: i64,
    pub document_number: String,
    pub status: NumberStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_reason: Option<String>,
    /// What the caller may do with it now, from the number lifecycle's table (CONFIRM, CANCEL with the token).
    pub available_actions: Vec<String>,
}

/// A block and its numbers, in sequence order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct BlockDetail {
    pub block: BlockSummary,
    pub numbers: Vec<BlockNumber>,
}

/// Everything the blocks page shows at first, in one call, so that the server's HTML carries it whole.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlocksPageData {
    /// The newest blocks the caller may see.
    pub blocks: Vec<BlockSummary>,
    /// The block in the address (`?block=`), or why it cannot be shown.
    pub selected: Option<Result<BlockDetail, ApiError>>,
    /// A new block for the choices in the address (the reserve page's), with the number it would start at.
    pub new_block: Option<NewBlock>,
    /// What the last form post refused, shown once.
    pub refusal: Option<ApiError>,
}

/// The form for a new block: the reserve page's choices, and the preview of its first number (or why there is none).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewBlock {
    pub choices: ReserveChoices,
    pub first: Result<PreviewResult, ApiError>,
}

/// The query of the blocks page: the reserve page's choices, and the block shown.
pub const BLOCK_FIELD: &str = "block";

/// The blocks page showing one block.
pub fn block_address(block_id: &str) -> String {
    format!("{}?{BLOCK_FIELD}={}", super::forms::path::BLOCKS, super::forms::percent_encode(block_id))
}
