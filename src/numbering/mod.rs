//! The template language of docs/rules/numbering.md: codes, templates (parse, validate, render, read back),
//! reset periods, revisions and counter keys. Pure: no I/O, so the server and the browser's
//! live preview (WASM) run the very same code and can never disagree.

pub mod codes;
pub mod document_id;
pub mod ids;
pub mod key;
pub mod period;
pub mod period_key;
pub mod resolution;
pub mod revision;
pub mod template;

pub use codes::{normalize_code, validate_code, CodeError, CodeKind, MAX_CODE_LEN};
pub use document_id::{DocumentId, DocumentIdError, MAX_DOCUMENT_ID_CHARS};
pub use ids::{ContractId, CorrespondenceTypeId, CounterId, DisciplineId, NumberId, OrganizationId, ProjectId, RfaTypeId, SubTypeId};
pub use key::{CounterKey, PartIds};
pub use period::{bangkok_date, fiscal_year, BackdateError, Period, ResetScope, DEFAULT_FISCAL_FIRST_MONTH};
pub use period_key::{PeriodKey, UnknownPeriod};
pub use resolution::{system_default, Resolution, Step, Stored, SYSTEM_DEFAULT_TEMPLATE};
pub use revision::{next_rev, parse_rev, rev_label};
pub use template::{KeyParts, ParsedNumber, RenderValues, Segment, Template, TemplateError, Token, MAX_NUMBER_LEN, SAMPLE_CONTRACT_CODE};
