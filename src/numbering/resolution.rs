//! Which template numbers a (project, type) request (docs/rules/numbering.md#which-template-numbers-a-request): the
//! template of that (project, type); else the
//! project's default, when it keeps the type's rules; else the system default of the type. A type is never
//! numbered in another type's format, however the project was created.

use super::{normalize_code, ResetScope, Template};

/// The general system default: LETTER and every type without a default of its own.
pub const SYSTEM_DEFAULT_TEMPLATE: &str = "{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}";
const TRANSMITTAL_DEFAULT: &str = "{ORIGINATOR}-{RECIPIENT}-{SUB_TYPE}-{SEQ:4}-{YEAR:B.E.}";
const RFA_DEFAULT: &str = "{PROJECT}-{CORR_TYPE}-{DISCIPLINE}-{RFA_TYPE}-{SEQ:4}-{REV}";

/// The system default template and reset period of a correspondence type (the requirements' defaults).
/// RFA never resets: its template shows no year, so a yearly reset would repeat numbers (docs/rules/numbering.md#reset-scopes-and-periods).
pub fn system_default(correspondence_type_code: &str) -> (&'static str, ResetScope) {
    match normalize_code(correspondence_type_code).as_str() {
        "TRANSMITTAL" => (TRANSMITTAL_DEFAULT, ResetScope::Yearly),
        "RFA" => (RFA_DEFAULT, ResetScope::None),
        _ => (SYSTEM_DEFAULT_TEMPLATE, ResetScope::Yearly),
    }
}

/// A stored template: its text and reset period.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stored<'a> {
    pub text: &'a str,
    pub scope: ResetScope,
}

/// The step of the resolution that found the template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    ProjectType,
    ProjectDefault,
    SystemDefault,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Resolution<'a> {
    pub text: &'a str,
    pub scope: ResetScope,
    pub step: Step,
    /// The project has a default template, but it breaks this type's rules (an RFA default without
    /// `{DISCIPLINE}`, a TRANSMITTAL one without `{SUB_TYPE}`), so it was passed over.
    pub project_default_skipped: bool,
}

/// Resolves the template of a request of type `correspondence_type_code`, given the project's template for the type
/// (`own`) and the project's default (`project_default`), as stored.
pub fn resolve<'a>(correspondence_type_code: &str, own: Option<Stored<'a>>, project_default: Option<Stored<'a>>) -> Resolution<'a> {
    if let Some(t) = own {
        return Resolution { text: t.text, scope: t.scope, step: Step::ProjectType, project_default_skipped: false };
    }
    let mut project_default_skipped = false;
    if let Some(d) = project_default {
        if Template::validate(d.text, correspondence_type_code, d.scope).is_ok() {
            return Resolution { text: d.text, scope: d.scope, step: Step::ProjectDefault, project_default_skipped };
        }
        project_default_skipped = true;
    }
    let (text, scope) = system_default(correspondence_type_code);
    Resolution { text, scope, step: Step::SystemDefault, project_default_skipped }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TYPES: [&str; 12] = ["LETTER", "RFI", "MEMO", "EMAIL", "MOM", "INSTRUCTION", "NOTICE", "OTHER", "DRAWING", "TRANSMITTAL", "RFA", ""];

    #[test]
    fn system_defaults_per_type() {
        assert_eq!(system_default("LETTER"), (SYSTEM_DEFAULT_TEMPLATE, ResetScope::Yearly));
        assert_eq!(system_default("NEW_TYPE"), (SYSTEM_DEFAULT_TEMPLATE, ResetScope::Yearly));
        assert_eq!(system_default(" TRANSMITTAL ").0, TRANSMITTAL_DEFAULT, "codes are trimmed");
        assert_eq!(system_default("RFA"), (RFA_DEFAULT, ResetScope::None));
    }

    #[test]
    fn every_system_default_validates_for_its_type() {
        for ty in TYPES {
            let (src, scope) = system_default(ty);
            assert!(Template::validate(src, ty, scope).is_ok(), "{ty}: {src}");
        }
    }

    #[test]
    fn a_project_without_templates_numbers_each_type_in_its_own_format() {
        for ty in TYPES {
            let r = resolve(ty, None, None);
            assert_eq!(
                (r.text, r.scope, r.step, r.project_default_skipped),
                (system_default(ty).0, system_default(ty).1, Step::SystemDefault, false)
            );
        }
    }

    #[test]
    fn the_type_template_comes_first() {
        let own = Stored { text: "{PROJECT}-{SEQ:5}", scope: ResetScope::None };
        let default = Stored { text: "{ORIGINATOR}-{SEQ:4}-{YEAR:A.D.}", scope: ResetScope::Yearly };
        let r = resolve("LETTER", Some(own), Some(default));
        assert_eq!((r.text, r.step), ("{PROJECT}-{SEQ:5}", Step::ProjectType));
    }

    #[test]
    fn a_project_default_that_keeps_the_type_rules_is_used() {
        let default = Stored { text: "{PROJECT}-{CORR_TYPE}-{DISCIPLINE}-{SEQ:4}-{YEAR:B.E.}", scope: ResetScope::Yearly };
        for ty in ["LETTER", "RFA"] {
            let r = resolve(ty, None, Some(default));
            assert_eq!((r.text, r.scope, r.step, r.project_default_skipped), (default.text, ResetScope::Yearly, Step::ProjectDefault, false), "{ty}");
        }
    }

    #[test]
    fn a_project_default_that_breaks_the_type_rules_is_skipped_for_that_type_only() {
        let default = Stored { text: "{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}", scope: ResetScope::Yearly };
        let letter = resolve("LETTER", None, Some(default));
        assert_eq!(letter.step, Step::ProjectDefault);
        // RFA needs {PROJECT} and {DISCIPLINE}; TRANSMITTAL needs {SUB_TYPE}
        for ty in ["RFA", "TRANSMITTAL"] {
            let r = resolve(ty, None, Some(default));
            assert_eq!(
                (r.text, r.scope, r.step, r.project_default_skipped),
                (system_default(ty).0, system_default(ty).1, Step::SystemDefault, true),
                "{ty}"
            );
        }
    }
}
