//! The contract layer: the data that the REST API, the server functions and the pages exchange, the roles,
//! the statuses and the error codes. Compiled into the server and the WASM bundle; it sits beside
//! `crate::numbering`, under everything else. Plain data only: every rule lives in `crate::numbering` or
//! the server's services.

pub mod blocks;
pub mod error;
pub mod forms;
pub mod import;
pub mod lenient;
pub mod live;
pub mod messages;
pub mod notifications;
pub mod staff_page;
pub mod stats;
pub mod users;

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use blocks::{block_address, BlockDetail, BlockNumber, BlockSummary, BlocksPageData, NewBlock, BLOCK_FIELD};
pub use error::{ApiError, ErrorCode};
pub use messages::{Lang, Message};
pub use stats::{CounterSeries, DailyIssued, StatsQuery, TypeSeries, UtilizationHistory};
pub use users::{
    ApiTokenId, LoginAttempt, LoginAttemptId, LoginAttemptPage, LoginAttemptQuery, NewUser, PasswordChange, PasswordSet, UserAdminInfo, UserId,
    UserUpdate, LOGIN_OUTCOMES,
};

use crate::numbering::ResetScope;
pub use crate::numbering::{ContractId, CorrespondenceTypeId, CounterId, DisciplineId, NumberId, OrganizationId, ProjectId, RfaTypeId, SubTypeId};

crate::numbering::ids::id_types! {
    /// A stored numbering template (`numbering_templates.id`): a project's template for one type, or its default.
    TemplateId;
    /// A counter reset request (`counter_reset_requests.id`), decided through the workflow.
    ResetRequestId;
    /// A workflow instance (`workflow_instances.id`): one request on its way through approval.
    WorkflowInstanceId;
    /// A row of the error log (`error_log.id`).
    ErrorLogId;
    /// A row of the audit log (`audit_log.id`): its place in the log, shown to people who trace an event.
    AuditRowId;
}

/// docs/rules/numbering.md#counter-resets: a counter reset's reason has at least this many characters (Unicode characters, not bytes). The
/// server counts and decides; the reset form shows the count against it.
pub const MIN_RESET_REASON_CHARS: usize = 20;

/// The OpenAPI schema of a reset's reason (at least [`MIN_RESET_REASON_CHARS`] characters).
#[cfg(feature = "ssr")]
pub fn reset_reason_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    lenient::schema::reason_of_at_least(MIN_RESET_REASON_CHARS)
}

/// Where a number stands (column `document_numbers.status`). A reservation is RESERVED until it is
/// confirmed, cancelled or expires (CANCELLED); a confirmed number may later be voided (VOID).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub enum NumberStatus {
    Reserved,
    Confirmed,
    Cancelled,
    Void,
}

impl NumberStatus {
    pub const ALL: [NumberStatus; 4] = [NumberStatus::Reserved, NumberStatus::Confirmed, NumberStatus::Cancelled, NumberStatus::Void];

    pub fn as_str(self) -> &'static str {
        match self {
            NumberStatus::Reserved => "RESERVED",
            NumberStatus::Confirmed => "CONFIRMED",
            NumberStatus::Cancelled => "CANCELLED",
            NumberStatus::Void => "VOID",
        }
    }

    pub fn parse(s: &str) -> Option<NumberStatus> {
        NumberStatus::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

impl fmt::Display for NumberStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub enum Role {
    Staff,
    ProjectAdmin,
    SuperAdmin,
}

impl Role {
    pub fn as_str(&self) -> &'static str {
        match self {
            Role::Staff => "STAFF",
            Role::ProjectAdmin => "PROJECT_ADMIN",
            Role::SuperAdmin => "SUPER_ADMIN",
        }
    }
    pub fn parse(s: &str) -> Option<Role> {
        match s.trim().to_ascii_uppercase().as_str() {
            "STAFF" => Some(Role::Staff),
            "PROJECT_ADMIN" => Some(Role::ProjectAdmin),
            "SUPER_ADMIN" => Some(Role::SuperAdmin),
            _ => None,
        }
    }
}

/// The logged-in person, as the UI needs to know it (what to show; the server re-checks everything).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UserInfo {
    pub id: UserId,
    pub username: String,
    pub display_name: String,
    pub role: Role,
    /// Projects this user administers (PROJECT_ADMIN); empty for others.
    pub admin_project_ids: Vec<ProjectId>,
}

impl UserInfo {
    pub fn can_edit_templates(&self, project_id: ProjectId) -> bool {
        self.role == Role::SuperAdmin || (self.role == Role::ProjectAdmin && self.admin_project_ids.contains(&project_id))
    }
    pub fn is_admin(&self) -> bool {
        self.role != Role::Staff
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RefItem<Id> {
    pub id: Id,
    pub code: String,
    pub name: String,
}

/// A correspondence type as the reference lists show it.
pub type CorrespondenceTypeItem = RefItem<CorrespondenceTypeId>;
/// An RFA type as the reference lists show it.
pub type RfaTypeItem = RefItem<RfaTypeId>;
/// A discipline as the reference lists show it.
pub type DisciplineItem = RefItem<DisciplineId>;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ProjectItem {
    pub id: ProjectId,
    pub code: String,
    pub name: String,
    pub active: bool,
    /// Organizations that are members of this project (only they may originate or receive numbers).
    pub member_org_ids: Vec<OrganizationId>,
    /// The month (1–12) its fiscal year starts in (reset scope `FISCAL_YEAR`, `{FY:BE}`); default October.
    #[serde(default = "crate::contract::october")]
    pub fiscal_year_first_month: u32,
}

fn october() -> u32 {
    crate::numbering::DEFAULT_FISCAL_FIRST_MONTH
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct OrgItem {
    pub id: OrganizationId,
    pub code: String,
    pub name: String,
    /// OWNER / CONSULTANT / CONTRACTOR / OTHER
    pub role: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SubTypeItem {
    pub id: SubTypeId,
    /// `corrTypeId` on the wire, as the REST API has always answered.
    #[serde(rename = "corrTypeId")]
    pub correspondence_type_id: CorrespondenceTypeId,
    /// The number shown by `{SUB_TYPE}`, e.g. "21".
    pub sub_type_number: String,
    pub code: String,
    pub name: String,
}

/// A contract of a project (LCBP3's C1, C2, …): `{CONTRACT}` shows its code, reset scope `CONTRACT` keeps a sequence
/// per contract. The code is unique within the project; an inactive contract issues no new numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ContractItem {
    pub id: ContractId,
    pub project_id: ProjectId,
    pub code: String,
    pub name: String,
    pub active: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReferenceData {
    pub projects: Vec<ProjectItem>,
    pub organizations: Vec<OrgItem>,
    pub correspondence_types: Vec<CorrespondenceTypeItem>,
    pub sub_types: Vec<SubTypeItem>,
    pub rfa_types: Vec<RfaTypeItem>,
    pub disciplines: Vec<DisciplineItem>,
    #[serde(default)]
    pub contracts: Vec<ContractItem>,
}

/// A request for a number (docs/rules/api.md#the-request-body-and-its-leniency): each part by id or by code. Also
/// the REST body. Ids, years and sub-type
/// numbers may come as numbers or numeric strings; codes are trimmed and NFC-normalised (`lenient`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NumberRequest {
    #[serde(default, deserialize_with = "lenient::id")]
    pub project_id: Option<ProjectId>,
    #[serde(default, deserialize_with = "lenient::code")]
    pub project_code: Option<String>,
    #[serde(default, deserialize_with = "lenient::id")]
    pub correspondence_type_id: Option<CorrespondenceTypeId>,
    #[serde(default, deserialize_with = "lenient::code")]
    pub correspondence_type_code: Option<String>,
    #[serde(default, deserialize_with = "lenient::id")]
    pub originator_org_id: Option<OrganizationId>,
    #[serde(default, deserialize_with = "lenient::code")]
    pub originator_code: Option<String>,
    #[serde(default, deserialize_with = "lenient::id")]
    pub recipient_org_id: Option<OrganizationId>,
    #[serde(default, deserialize_with = "lenient::code")]
    pub recipient_code: Option<String>,
    #[serde(default, deserialize_with = "lenient::id")]
    pub sub_type_id: Option<SubTypeId>,
    #[serde(default, deserialize_with = "lenient::number_text")]
    pub sub_type_number: Option<String>,
    #[serde(default, deserialize_with = "lenient::id")]
    pub rfa_type_id: Option<RfaTypeId>,
    #[serde(default, deserialize_with = "lenient::code")]
    pub rfa_type_code: Option<String>,
    #[serde(default, deserialize_with = "lenient::id")]
    pub discipline_id: Option<DisciplineId>,
    #[serde(default, deserialize_with = "lenient::code")]
    pub discipline_code: Option<String>,
    /// The contract of the project, where the template shows `{CONTRACT}` or resets per contract.
    #[serde(default, deserialize_with = "lenient::id")]
    pub contract_id: Option<ContractId>,
    #[serde(default, deserialize_with = "lenient::code")]
    pub contract_code: Option<String>,
    /// The document's addressees, as a DMS keeps them: the first `TO` by sort order is the main recipient, the one
    /// `{RECIPIENT}` shows (instead of `recipientOrgId`/`recipientCode`, never beside them).
    #[serde(default)]
    pub recipients: Option<Vec<Addressee>>,
    /// Revision label (A…Z, AA…); `A` when absent.
    #[serde(default, deserialize_with = "lenient::code")]
    pub revision: Option<String>,
    /// Optional; must equal the current year (A.D. or B.E.) — unless `backdateReason` is given.
    #[serde(default, deserialize_with = "lenient::year")]
    pub year: Option<i32>,
    /// Back-dating (super admins only): `year` then names an earlier, closed period of the template's reset — a
    /// calendar year, or a fiscal year by the year it ends in — whose series the number continues; audited with this
    /// reason.
    #[serde(default, deserialize_with = "lenient::code")]
    pub backdate_reason: Option<String>,
}

/// The most addressees one request may list.
pub const MAX_ADDRESSEES: usize = 100;

/// One addressee of a document: an organisation by id or by code, `TO` (when absent) or `CC`, and its place in the
/// list (`sortOrder`; when absent, its position).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Addressee {
    #[serde(default, deserialize_with = "lenient::id")]
    pub organization_id: Option<OrganizationId>,
    #[serde(default, deserialize_with = "lenient::code")]
    pub organization_code: Option<String>,
    #[serde(default, deserialize_with = "lenient::code")]
    pub recipient_type: Option<String>,
    #[serde(default, deserialize_with = "lenient::id")]
    pub sort_order: Option<i64>,
}

/// The numbering request as the DMS documents it: `{"counterKey": {…ids, year}}`, a part that is absent as
/// `0`. It means the same as the flat request (docs/rules/api.md#the-request-body-and-its-leniency).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedCounterKey {
    #[serde(default, deserialize_with = "lenient::id")]
    pub project_id: Option<ProjectId>,
    #[serde(default, deserialize_with = "lenient::id")]
    pub originator_org_id: Option<OrganizationId>,
    #[serde(default, deserialize_with = "lenient::id")]
    pub recipient_org_id: Option<OrganizationId>,
    #[serde(default, deserialize_with = "lenient::id")]
    pub correspondence_type_id: Option<CorrespondenceTypeId>,
    #[serde(default, deserialize_with = "lenient::id")]
    pub sub_type_id: Option<SubTypeId>,
    #[serde(default, deserialize_with = "lenient::id")]
    pub rfa_type_id: Option<RfaTypeId>,
    #[serde(default, deserialize_with = "lenient::id")]
    pub discipline_id: Option<DisciplineId>,
    #[serde(default, deserialize_with = "lenient::id")]
    pub contract_id: Option<ContractId>,
    #[serde(default, deserialize_with = "lenient::year")]
    pub year: Option<i32>,
}

impl From<SeedCounterKey> for NumberRequest {
    fn from(k: SeedCounterKey) -> NumberRequest {
        fn given<Id: Copy + Default + PartialEq>(id: Option<Id>) -> Option<Id> {
            id.filter(|&id| id != Id::default())
        }
        NumberRequest {
            project_id: given(k.project_id),
            correspondence_type_id: given(k.correspondence_type_id),
            originator_org_id: given(k.originator_org_id),
            recipient_org_id: given(k.recipient_org_id),
            sub_type_id: given(k.sub_type_id),
            rfa_type_id: given(k.rfa_type_id),
            discipline_id: given(k.discipline_id),
            contract_id: given(k.contract_id),
            year: k.year.filter(|&y| y != 0),
            ..NumberRequest::default()
        }
    }
}

/// A numbering request in either shape the REST API takes: flat, or wrapped as the requirements write it.
#[derive(Clone, Debug, PartialEq)]
pub struct AnyNumberRequest(pub NumberRequest);

impl<'de> Deserialize<'de> for AnyNumberRequest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<AnyNumberRequest, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct Wrapped {
            counter_key: SeedCounterKey,
        }
        use serde::de::Error;
        let value = serde_json::Value::deserialize(d)?;
        let request = if value.get("counterKey").is_some() {
            Wrapped::deserialize(value).map(|w| NumberRequest::from(w.counter_key))
        } else {
            NumberRequest::deserialize(value)
        };
        request.map(AnyNumberRequest).map_err(D::Error::custom)
    }
}

#[cfg(feature = "ssr")]
impl utoipa::PartialSchema for AnyNumberRequest {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        lenient::schema::any_number_request()
    }
}
#[cfg(feature = "ssr")]
impl utoipa::ToSchema for AnyNumberRequest {}

/// The body of `POST /document-numbering/reserve-block`: a numbering request (flat) with `count`, and optionally
/// `holdUntil` (RFC 3339) and `holder`. Bounds are the service's (`count` 2–500, a hold of at most 30 days).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlockRequest {
    pub request: NumberRequest,
    pub count: i64,
    pub hold_until: Option<DateTime<Utc>>,
    pub holder: Option<String>,
}

impl<'de> Deserialize<'de> for BlockRequest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<BlockRequest, D::Error> {
        use serde::de::Error;
        let mut value = serde_json::Value::deserialize(d)?;
        let object = value.as_object_mut().ok_or_else(|| D::Error::custom("expected a JSON object"))?;
        let count = match object.remove("count") {
            Some(serde_json::Value::Number(n)) => n.as_i64().ok_or_else(|| D::Error::custom(format!("count: expected a whole number, found {n}")))?,
            Some(serde_json::Value::String(s)) => {
                s.trim().parse().map_err(|_| D::Error::custom(format!("count: expected a whole number, found {s:?}")))?
            }
            None | Some(serde_json::Value::Null) => return Err(D::Error::custom("missing field `count`")),
            Some(other) => return Err(D::Error::custom(format!("count: expected a whole number, found {other}"))),
        };
        let hold_until = match object.remove("holdUntil") {
            None => None,
            Some(v) => Option::<DateTime<Utc>>::deserialize(v).map_err(|e| D::Error::custom(format!("holdUntil: {e}")))?,
        };
        let holder = match object.remove("holder") {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(s)) => Some(s),
            Some(other) => return Err(D::Error::custom(format!("holder: expected text, found {other}"))),
        };
        let request = NumberRequest::deserialize(value).map_err(D::Error::custom)?;
        Ok(BlockRequest { request, count, hold_until, holder })
    }
}

#[cfg(feature = "ssr")]
impl utoipa::PartialSchema for BlockRequest {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        lenient::schema::block_request()
    }
}
#[cfg(feature = "ssr")]
impl utoipa::ToSchema for BlockRequest {}

#[cfg(feature = "ssr")]
impl utoipa::PartialSchema for NumberRequest {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        lenient::schema::number_request()
    }
}
#[cfg(feature = "ssr")]
impl utoipa::ToSchema for NumberRequest {}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub enum TemplateSource {
    /// A template for this project and correspondence type.
    ProjectType,
    /// The project's default template (no type).
    ProjectDefault,
    /// The system default of the type (docs/rules/numbering.md#which-template-numbers-a-request: TRANSMITTAL and RFA
    /// have their own, the others the general one).
    SystemDefault,
}

impl From<crate::numbering::Step> for TemplateSource {
    fn from(step: crate::numbering::Step) -> Self {
        match step {
            crate::numbering::Step::ProjectType => TemplateSource::ProjectType,
            crate::numbering::Step::ProjectDefault => TemplateSource::ProjectDefault,
            crate::numbering::Step::SystemDefault => TemplateSource::SystemDefault,
        }
    }
}

/// The template that a (project, type) request resolves to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ResolvedTemplate {
    pub template: String,
    pub reset_scope: ResetScope,
    pub source: TemplateSource,
    pub config_id: Option<TemplateId>,
    /// The project's default template breaks this type's rules, so the type uses its system default instead.
    #[serde(default)]
    pub project_default_skipped: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PreviewResult {
    pub document_number: String,
    pub sequence: u64,
    pub template: String,
    /// Always false: a preview consumes nothing.
    pub reserved: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReservationResult {
    pub token: String,
    pub document_number: String,
    pub sequence: u64,
    pub expires_at: DateTime<Utc>,
    /// Seconds from now until the reservation expires (the UI counts down from this, not from its own clock).
    pub ttl_seconds: i64,
    /// The number's place in its lifecycle (docs/rules/numbering.md#the-lifecycle-of-a-number): the instance is the reservation token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<WorkflowContext>,
}

/// The answer of `POST /document-numbering/reserve-block`: contiguous numbers taken in one commit, each a reservation
/// confirmed or cancelled on its own; the unconfirmed ones expire at the hold's end ("block expired").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct BlockResult {
    pub block_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<String>,
    pub numbers: Vec<ReservationResult>,
}

/// What a block asks beside the reservation's request.
pub const MIN_BLOCK: u32 = 2;
pub const MAX_BLOCK: u32 = 500;
/// The longest hold of a block, in days.
pub const MAX_BLOCK_HOLD_DAYS: i64 = 30;

/// The answer of `POST /documents/{documentId}/generate-number`: a confirmed number for the document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GenerateResult {
    pub document_number: String,
    pub generated_at: DateTime<Utc>,
    /// The number's place in its lifecycle (docs/rules/numbering.md#the-lifecycle-of-a-number): with no reservation, the number names its instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<WorkflowContext>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct StatusResult {
    pub document_number: String,
    /// CONFIRMED or CANCELLED
    pub status: NumberStatus,
    /// The number's place in its lifecycle (docs/rules/numbering.md#the-lifecycle-of-a-number): the instance is the reservation token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<WorkflowContext>,
}

/// One stored numbering template (the current version).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TemplateConfig {
    pub id: TemplateId,
    pub project_id: ProjectId,
    /// None = the project's default template.
    pub correspondence_type_id: Option<CorrespondenceTypeId>,
    pub template: String,
    pub reset_scope: ResetScope,
    pub version: i64,
    pub updated_at: DateTime<Utc>,
    pub updated_by: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ApiTokenInfo {
    pub id: ApiTokenId,
    pub name: String,
    /// First characters of the token, to recognise it; the token itself is shown once.
    pub prefix: String,
    /// Projects the token may number; empty = all projects.
    pub project_ids: Vec<ProjectId>,
    pub created_at: DateTime<Utc>,
    pub created_by: String,
    pub revoked_at: Option<DateTime<Utc>>,
    /// The stored scope is not a list of project ids: the token grants nothing (and `project_ids` is empty).
    #[serde(default)]
    pub scope_unreadable: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CreatedApiToken {
    pub info: ApiTokenInfo,
    /// The secret, shown once.
    pub token: String,
}

/// One stored version of a template (history), with the text before and after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TemplateVersion {
    pub version: i64,
    pub template: String,
    pub reset_scope: ResetScope,
    pub previous_template: Option<String>,
    pub previous_reset_scope: Option<ResetScope>,
    pub reason: String,
    pub changed_by: String,
    pub changed_at: DateTime<Utc>,
}

/// Filters of the audit search; every field optional. Dates are inclusive (`from`) / exclusive (`to`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[cfg_attr(feature = "ssr", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct AuditQuery {
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    /// Username (exact), or `token:<name>` for a machine client.
    pub user: Option<String>,
    pub operation: Option<String>,
    /// A document number, or its beginning.
    pub number: Option<String>,
    pub project_id: Option<ProjectId>,
    #[cfg_attr(feature = "ssr", param(maximum = 1000000))]
    pub page: Option<u32>,
    #[cfg_attr(feature = "ssr", param(schema_with = crate::contract::lenient::schema::page_size))]
    pub page_size: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AuditRow {
    pub id: AuditRowId,
    pub created_at: DateTime<Utc>,
    pub operation: String,
    pub status: String,
    pub document_number: Option<String>,
    pub sequence: Option<i64>,
    pub counter_id: Option<CounterId>,
    pub document_id: Option<String>,
    pub user: Option<String>,
    pub ip_address: Option<String>,
    pub fallback_used: String,
    pub old_value: Option<String>,
    pub new_value: Option<String>,
    pub metadata: Option<String>,
    /// The counter's key as JSON (project, type, parts, period), as stored.
    #[serde(default)]
    pub counter_key: Option<String>,
    /// The same counter named by its codes, for people (absent for a row of no counter).
    #[serde(default)]
    pub counter: Option<CounterName>,
    #[serde(default)]
    pub template_used: Option<String>,
    #[serde(default)]
    pub user_agent: Option<String>,
    /// Version-conflict retries of the counter transaction.
    #[serde(default)]
    pub retry_count: i64,
    /// Time waited for the counter's lock, and the whole request, in milliseconds.
    #[serde(default)]
    pub lock_wait_ms: i64,
    #[serde(default)]
    pub total_ms: i64,
}

/// A counter named by the codes of its parts (a part the template does not show is absent) and its period key
/// (`YEAR_2026`, `MONTH_2026_03`, `NONE`). A part whose id is no longer known is `#<id>`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CounterName {
    pub project: String,
    pub correspondence_type: String,
    pub originator: Option<String>,
    pub recipient: Option<String>,
    pub sub_type: Option<String>,
    pub rfa_type: Option<String>,
    pub discipline: Option<String>,
    pub period: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AuditPage {
    pub rows: Vec<AuditRow>,
    pub total: i64,
    pub page: u32,
    pub page_size: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[cfg_attr(feature = "ssr", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct ErrorQuery {
    /// LOCK_TIMEOUT, VERSION_CONFLICT, DB_ERROR, REDIS_ERROR, VALIDATION_ERROR, SEQUENCE_EXHAUSTED, RESERVATION_EXPIRED, DUPLICATE_NUMBER
    pub error_type: Option<String>,
    pub unresolved_only: bool,
    #[cfg_attr(feature = "ssr", param(maximum = 1000000))]
    pub page: Option<u32>,
    #[cfg_attr(feature = "ssr", param(schema_with = crate::contract::lenient::schema::page_size))]
    pub page_size: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ErrorRow {
    pub id: ErrorLogId,
    pub created_at: DateTime<Utc>,
    pub error_type: String,
    pub code: Option<String>,
    pub message: String,
    pub ref_id: Option<String>,
    pub ip_address: Option<String>,
    pub resolved_at: Option<DateTime<Utc>>,
    /// The project of the failing request, when known (a project admin sees only their projects' rows).
    #[serde(default)]
    pub project_id: Option<ProjectId>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ErrorPage {
    pub rows: Vec<ErrorRow>,
    pub total: i64,
    pub page: u32,
    pub page_size: u32,
}

// ---- admin pages: counters, reset requests (workflow), super-admin operations ----
// Moved here from `server::admin_ops` and `server::workflow` so the server functions and the WASM side share
// them; the REST API answers the same types (same JSON, camelCase).

/// A counter with its last number and utilization (the counter browser, docs/rules/numbering.md#counter-keys, docs/rules/api.md#web-app).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CounterView {
    pub id: CounterId,
    pub project_id: ProjectId,
    pub project_code: String,
    pub correspondence_type_id: CorrespondenceTypeId,
    pub correspondence_type_code: String,
    pub originator_code: Option<String>,
    pub recipient_code: Option<String>,
    pub sub_type_number: Option<String>,
    pub rfa_type_code: Option<String>,
    pub discipline_code: Option<String>,
    /// The contract of a contract counter (period `CONTRACT_<id>`).
    #[serde(default)]
    pub contract_code: Option<String>,
    pub period: String,
    pub last_number: i64,
    pub max_number: i64,
    /// last number ÷ maximum, 0–1 (the utilization gauge of docs/rules/numbering.md#counter-keys).
    pub utilization: f64,
    pub version: i64,
    pub updated_at: DateTime<Utc>,
}

/// One issued number of a counter: RESERVED, CONFIRMED, CANCELLED or VOID.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NumberView {
    pub sequence: i64,
    pub revision: String,
    pub document_number: String,
    pub status: NumberStatus,
    pub document_id: Option<String>,
    pub created_at: DateTime<Utc>,
    pub confirmed_at: Option<DateTime<Utc>>,
    pub cancelled_at: Option<DateTime<Utc>>,
    pub cancel_reason: Option<String>,
    /// What the caller may do with this number here (REVISE, VOID), from the number lifecycle's table; actions that
    /// need the reservation's token are its holder's and not listed.
    #[serde(default)]
    pub available_actions: Vec<String>,
}

/// A number released for reuse by an approved counter reset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReleasedView {
    pub sequence: i64,
    pub revision: String,
    pub document_number: String,
    pub status_when_released: NumberStatus,
    pub reset_request_id: ResetRequestId,
    pub released_at: DateTime<Utc>,
}

/// The audit row that explains a missing sequence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AuditView {
    pub operation: String,
    pub status: String,
    pub document_number: Option<String>,
    pub username: Option<String>,
    pub metadata: Option<serde_json::Value>,
    pub at: DateTime<Utc>,
}

/// A sequence without a number on record, and the (latest) audit row that says why; None = unexplained.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GapView {
    pub sequence: i64,
    pub explanation: Option<AuditView>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CounterNumbers {
    pub counter: CounterView,
    pub numbers: Vec<NumberView>,
    pub gaps: Vec<GapView>,
    pub released: Vec<ReleasedView>,
    /// Pass as `afterSequence` for the next page; absent on the last page.
    pub next_after_sequence: Option<i64>,
}

/// One transition of a workflow instance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct EventView {
    pub action: String,
    pub from_state: String,
    pub to_state: String,
    pub actor: String,
    pub comment: Option<String>,
    pub at: DateTime<Utc>,
}

/// The workflow context: what the client needs to draw its buttons, computed on the server for this caller.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct WorkflowContext {
    pub instance_public_id: String,
    pub current_state: String,
    pub available_actions: Vec<String>,
    /// The instance is still open and the caller takes part in this workflow.
    pub can_edit: bool,
    pub last_transition_at: DateTime<Utc>,
}

/// The envelope of a workflow object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Envelope<T> {
    pub data: T,
    pub workflow: WorkflowContext,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ResetRequestView {
    pub request_id: ResetRequestId,
    pub counter_id: CounterId,
    /// The counter's last number when the reset was requested.
    pub previous_value: i64,
    pub new_value: i64,
    pub reason: String,
    pub requested_by: String,
    pub requested_at: DateTime<Utc>,
    pub history: Vec<EventView>,
}

/// A number issued by an administrative operation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct IssuedNumber {
    pub document_number: String,
    pub counter_id: CounterId,
    pub sequence: i64,
    pub revision: String,
    pub status: NumberStatus,
    pub document_id: Option<String>,
    pub issued_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revised_from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
    /// Its place in its lifecycle (docs/rules/numbering.md#the-lifecycle-of-a-number): the number names its instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<WorkflowContext>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct VoidResult {
    pub voided: String,
    /// Always VOID.
    pub status: NumberStatus,
    pub replacement: IssuedNumber,
    /// The voided number's place in its lifecycle (docs/rules/numbering.md#the-lifecycle-of-a-number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<WorkflowContext>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct OverrideResult {
    pub counter_id: CounterId,
    pub previous_last_number: i64,
    pub last_number: i64,
    /// Sequences passed over (each with its audit row).
    pub skipped: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registered: Option<IssuedNumber>,
}

/// A counter a super admin resumed past its witnessed head (docs/rules/numbering.md#what-is-never-done-twice): it
/// issues again after the highest number the
/// witness saw; the numbers between its database's last one and that are passed over, each with its audit row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct WitnessResume {
    pub counter_id: CounterId,
    /// The `WITNESS_RESUME` workflow instance that records the approval.
    pub workflow_public_id: String,
    /// The counter's last number as the database had it.
    pub previous_last_number: i64,
    /// The last number the witness saw: the counter goes on from here.
    pub last_number: i64,
    pub skipped: i64,
}

/// Filters of the counter browser; `year` in A.D. or B.E.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CounterQuery {
    pub project_id: Option<ProjectId>,
    pub correspondence_type_id: Option<CorrespondenceTypeId>,
    pub year: Option<i32>,
}

/// An issued number an operation applies to (revise, void-and-replace).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NumberTarget {
    pub project_id: ProjectId,
    pub correspondence_type_id: CorrespondenceTypeId,
    pub document_number: String,
    /// The document the new number is for (default: the original's).
    pub document_id: Option<String>,
}

/// The administrators' metrics summary (`GET /document-numbering/metrics`): today is the Asia/Bangkok day.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct MetricsSummary {
    /// The day counted, `YYYY-MM-DD` (A.D.).
    pub day: String,
    /// Numbers issued today (every status), per correspondence type, most first.
    pub issued_today: Vec<IssuedToday>,
    pub requests_today: RequestTimings,
    /// `up`, `down` (database-lock fallback) or `not configured`.
    pub redis: String,
    /// The counters of the current year closest to their maximum.
    pub fullest_counters: Vec<CounterView>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct IssuedToday {
    pub correspondence_type_code: String,
    pub count: i64,
}

/// Today's reserve and generate requests, from their audit rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RequestTimings {
    pub count: i64,
    pub lock_wait_avg_ms: f64,
    pub lock_wait_max_ms: i64,
    /// Version-conflict retries, summed.
    pub retries: i64,
    /// Requests served under the database-lock fallback (Redis unreachable).
    pub fallbacks: i64,
}
