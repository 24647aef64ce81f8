//! Data of the two imports (bulk import of counters and legacy numbers; reference data) and of the
//! reference-data admin, shared by the REST API, the server functions and the pages `/import`, `/reference`.

use crate::numbering::CounterId;
use serde::{Deserialize, Serialize};

/// The text format of a bulk import.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImportFormat {
    #[default]
    Json,
    Csv,
}

/// One row of an import report: what the row is, and whether it can be (or was) applied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ImportRowReport {
    /// 1-based: the data row of the CSV file / the element of the JSON array (per section for reference data).
    pub row: usize,
    /// Bulk import: `NUMBER` (a legacy number) or `COUNTER` (a counter value); reference data: the section
    /// (`projects`, `organizations`, `correspondenceTypes`, `subTypes`, `rfaTypes`, `disciplines`, `contracts`).
    pub kind: String,
    /// The number, or the code of the item / counter the row is about, when it could be read.
    pub key: Option<String>,
    /// Reference data: `CREATE`, `UPDATE` or `UNCHANGED`; bulk import: `REGISTER` or `SET`.
    pub action: Option<String>,
    pub ok: bool,
    /// Why the row is refused (Thai, as shown to people).
    pub message: Option<String>,
    /// The same in English, for logs and the English page.
    pub detail: Option<String>,
    /// Error code (docs/rules/api.md#errors: NB005, NB006, VALIDATION_ERROR, …).
    pub code: Option<String>,
    pub counter_id: Option<CounterId>,
    /// The counter's last number after the row.
    pub last_number: Option<i64>,
}

/// What an import did or would do. Nothing is written unless every row is ok (`applied`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ImportReport {
    pub dry_run: bool,
    /// True when the rows were written (never on a dry run, never when a row is refused).
    pub applied: bool,
    pub total: usize,
    pub ok_rows: usize,
    pub error_rows: usize,
    pub rows: Vec<ImportRowReport>,
}

impl ImportReport {
    pub fn new(dry_run: bool, rows: Vec<ImportRowReport>) -> ImportReport {
        let ok_rows = rows.iter().filter(|r| r.ok).count();
        ImportReport { dry_run, applied: false, total: rows.len(), ok_rows, error_rows: rows.len() - ok_rows, rows }
    }
}

// ---- reference data: one item, and a whole document (JSON import) ----

/// A project: identified by its code; `members` (organization codes), when given, is the whole membership.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ProjectInput {
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::project_code))]
    pub code: String,
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::item_name))]
    pub name: String,
    /// Default true; false deactivates the project (no new numbers; issued numbers stay).
    pub active: Option<bool>,
    pub members: Option<Vec<String>>,
    /// The month (1–12) the project's fiscal year starts in; default 10 (October), unchanged when absent.
    #[serde(default, deserialize_with = "super::lenient::month")]
    #[cfg_attr(feature = "ssr", schema(minimum = 1, maximum = 12))]
    pub fiscal_year_first_month: Option<u32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct OrganizationInput {
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::party_code))]
    pub code: String,
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::item_name))]
    pub name: String,
    /// OWNER, CONSULTANT, CONTRACTOR or OTHER.
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::org_role))]
    pub role: String,
}

/// A correspondence type, RFA type or discipline.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CodeNameInput {
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::party_code))]
    pub code: String,
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::item_name))]
    pub name: String,
}

/// A sub-type: identified by its correspondence type and number.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SubTypeInput {
    pub correspondence_type_code: String,
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::sub_type_number))]
    pub sub_type_number: String,
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::party_code))]
    pub code: String,
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::item_name))]
    pub name: String,
}

/// A contract of a project: identified by the project's code and its own code (unique within the project).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ContractInput {
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::project_code))]
    pub project_code: String,
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::party_code))]
    pub code: String,
    #[cfg_attr(feature = "ssr", schema(schema_with = crate::contract::lenient::schema::item_name))]
    pub name: String,
    /// Default true; false deactivates the contract (no new numbers; issued numbers stay).
    pub active: Option<bool>,
}

/// A whole reference-data document: every section optional; items are matched by code and created or updated.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReferenceDocument {
    pub organizations: Vec<OrganizationInput>,
    pub correspondence_types: Vec<CodeNameInput>,
    pub sub_types: Vec<SubTypeInput>,
    pub rfa_types: Vec<CodeNameInput>,
    pub disciplines: Vec<CodeNameInput>,
    pub projects: Vec<ProjectInput>,
    pub contracts: Vec<ContractInput>,
}

impl ReferenceDocument {
    pub fn len(&self) -> usize {
        self.organizations.len()
            + self.correspondence_types.len()
            + self.sub_types.len()
            + self.rfa_types.len()
            + self.disciplines.len()
            + self.projects.len()
            + self.contracts.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
