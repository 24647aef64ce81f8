//! The template language of SPEC §2–4: codes, templates (parse, validate, render, read back),
//! reset periods, revisions and counter keys. Pure: no I/O, so the server and the browser's
//! live preview (WASM) run the very same code and can never disagree.

pub mod codes;
pub mod document_id;
pub mod key;
pub mod period;
pub mod period_key;
pub mod revision;
pub mod template;

pub use codes::{normalize_code, validate_code, CodeError, CodeKind, MAX_CODE_LEN};
pub use document_id::{DocumentId, DocumentIdError, MAX_DOCUMENT_ID_CHARS};
pub use key::{CounterKey, PartIds};
pub use period::{bangkok_date, Period, ResetScope};
pub use period_key::PeriodKey;
pub use revision::{next_rev, parse_rev, rev_label};
pub use template::{KeyParts, ParsedNumber, RenderValues, Segment, Template, TemplateError, Token, MAX_NUMBER_LEN};

/// Used when neither the (project, type) nor the project default template exists.
pub const SYSTEM_DEFAULT_TEMPLATE: &str = "{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}";

const TRANSMITTAL_DEFAULT: &str = "{ORIGINATOR}-{RECIPIENT}-{SUB_TYPE}-{SEQ:4}-{YEAR:B.E.}";
const RFA_DEFAULT: &str = "{PROJECT}-{CORR_TYPE}-{DISCIPLINE}-{RFA_TYPE}-{SEQ:4}-{REV}";

/// The seeds' default template and reset scope for a correspondence type code.
/// RFA never resets: its template shows no year, so a yearly reset would repeat numbers (SPEC §4).
pub fn seed_default_template(corr_type_code: &str) -> (&'static str, ResetScope) {
    match normalize_code(corr_type_code).as_str() {
        "TRANSMITTAL" => (TRANSMITTAL_DEFAULT, ResetScope::Yearly),
        "RFA" => (RFA_DEFAULT, ResetScope::None),
        _ => (SYSTEM_DEFAULT_TEMPLATE, ResetScope::Yearly),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_defaults() {
        assert_eq!(seed_default_template("LETTER"), (SYSTEM_DEFAULT_TEMPLATE, ResetScope::Yearly));
        assert_eq!(seed_default_template("NEW_TYPE"), (SYSTEM_DEFAULT_TEMPLATE, ResetScope::Yearly));
        assert_eq!(seed_default_template(" TRANSMITTAL").0, TRANSMITTAL_DEFAULT);
        assert_eq!(seed_default_template("RFA"), (RFA_DEFAULT, ResetScope::None));
    }

    #[test]
    fn every_seed_default_validates_for_its_type() {
        for ty in ["LETTER", "RFI", "MEMO", "EMAIL", "MOM", "INSTRUCTION", "NOTICE", "OTHER", "DRAWING", "TRANSMITTAL", "RFA", ""] {
            let (src, scope) = seed_default_template(ty);
            assert!(Template::validate(src, ty, scope).is_ok(), "{ty}: {src}");
        }
    }
}
