//! The staff pages' plain HTML forms, which work before and without the browser bundle: where they post, the
//! reserve page's choices and what a post leaves behind for the page. The same field names serve the page's address
//! (`/?project=1&type=2`), the forms and the hydrated page, so a choice survives every step of either path.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{ApiError, NumberRequest, NumberStatus, PreviewResult, ReferenceData, ReservationResult, ResolvedTemplate, WorkflowContext};
use crate::numbering::{ContractId, CorrespondenceTypeId, DisciplineId, OrganizationId, ProjectId, RfaTypeId, SubTypeId};
use crate::numbering::{Segment, Template, Token};

/// Where the forms post (`server::auth::forms`, `server::numbering::forms`): each answers `303 See Other`.
pub mod path {
    pub const LOGIN: &str = "/forms/login";
    pub const LOGOUT: &str = "/forms/logout";
    /// The header's language switch: sets the language cookie and answers back to the page it was posted from.
    pub const LANG: &str = "/forms/lang";
    pub const RESERVE: &str = "/forms/reserve";
    pub const CONFIRM: &str = "/forms/confirm";
    pub const CANCEL: &str = "/forms/cancel";
    /// The blocks page, and its forms: a block for the choices in its address; a number of a block confirmed or
    /// cancelled (each answers back to the block).
    pub const BLOCKS: &str = "/blocks";
    pub const BLOCK_RESERVE: &str = "/forms/block/reserve";
    pub const BLOCK_CONFIRM: &str = "/forms/block/confirm";
    pub const BLOCK_CANCEL: &str = "/forms/block/cancel";
}

/// The parts of a request the resolved template shows (and therefore asks for).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shows {
    pub originator: bool,
    pub recipient: bool,
    pub sub_type: bool,
    pub rfa_type: bool,
    pub discipline: bool,
    pub contract: bool,
    pub rev: bool,
}

impl Shows {
    /// None when the text is not a template the numbering module can read.
    pub fn of(template_text: &str) -> Option<Shows> {
        let t = Template::parse(template_text).ok()?;
        let kp = t.key_parts();
        Some(Shows {
            originator: kp.originator,
            recipient: kp.recipient,
            sub_type: kp.sub_type,
            rfa_type: kp.rfa_type,
            discipline: kp.discipline,
            contract: t.shows_contract(),
            rev: t.segments().iter().any(|s| matches!(s, Segment::Token(Token::Rev))),
        })
    }
}

/// What a person chose on the reserve page, by id (an id that does not parse is no choice).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReserveChoices {
    pub project: Option<ProjectId>,
    pub correspondence_type: Option<CorrespondenceTypeId>,
    pub originator: Option<OrganizationId>,
    pub recipient: Option<OrganizationId>,
    pub sub_type: Option<SubTypeId>,
    pub rfa_type: Option<RfaTypeId>,
    pub discipline: Option<DisciplineId>,
    #[serde(default)]
    pub contract: Option<ContractId>,
    pub revision: String,
}

/// The form fields' names, in the order of the page.
pub mod field {
    pub const PROJECT: &str = "project";
    pub const TYPE: &str = "type";
    pub const ORIGINATOR: &str = "originator";
    pub const RECIPIENT: &str = "recipient";
    pub const SUB_TYPE: &str = "subType";
    pub const RFA_TYPE: &str = "rfaType";
    pub const DISCIPLINE: &str = "discipline";
    pub const CONTRACT: &str = "contract";
    pub const REVISION: &str = "revision";
}

/// A revision label is at most this long (the form's `maxlength`); longer text is cut, not refused, in the form.
pub const MAX_REVISION_CHARS: usize = 4;

impl ReserveChoices {
    /// Reads the choices from named fields (a query string or a posted form).
    pub fn from_fields(get: impl Fn(&str) -> Option<String>) -> ReserveChoices {
        fn id<T: From<i64>>(get: &impl Fn(&str) -> Option<String>, name: &str) -> Option<T> {
            get(name).and_then(|v| v.trim().parse::<i64>().ok()).filter(|id| *id > 0).map(T::from)
        }
        ReserveChoices {
            project: id(&get, field::PROJECT),
            correspondence_type: id(&get, field::TYPE),
            originator: id(&get, field::ORIGINATOR),
            recipient: id(&get, field::RECIPIENT),
            sub_type: id(&get, field::SUB_TYPE),
            rfa_type: id(&get, field::RFA_TYPE),
            discipline: id(&get, field::DISCIPLINE),
            contract: id(&get, field::CONTRACT),
            revision: get(field::REVISION).map(|r| r.trim().to_uppercase().chars().take(MAX_REVISION_CHARS).collect()).unwrap_or_default(),
        }
    }

    /// The fields that hold a choice, as (name, value).
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        let ids = [
            (field::PROJECT, self.project.map(i64::from)),
            (field::TYPE, self.correspondence_type.map(i64::from)),
            (field::ORIGINATOR, self.originator.map(i64::from)),
            (field::RECIPIENT, self.recipient.map(i64::from)),
            (field::SUB_TYPE, self.sub_type.map(i64::from)),
            (field::RFA_TYPE, self.rfa_type.map(i64::from)),
            (field::DISCIPLINE, self.discipline.map(i64::from)),
            (field::CONTRACT, self.contract.map(i64::from)),
        ];
        let mut out: Vec<_> = ids.into_iter().filter_map(|(name, v)| v.map(|v| (name, v.to_string()))).collect();
        if !self.revision.is_empty() {
            out.push((field::REVISION, self.revision.clone()));
        }
        out
    }

    /// The reserve page's address with these choices (`/` when there are none).
    pub fn page_address(&self) -> String {
        self.address_on("/")
    }

    /// The address of `page` with these choices in its query.
    pub fn address_on(&self, page: &str) -> String {
        let query: Vec<String> = self.fields().into_iter().map(|(k, v)| format!("{k}={}", percent_encode(&v))).collect();
        if query.is_empty() {
            page.to_string()
        } else {
            format!("{page}?{}", query.join("&"))
        }
    }

    /// The request for a number, when every part the template shows is chosen; the parts it does not show are
    /// left out, and an empty revision is the template's first.
    pub fn request(&self, shows: &Shows) -> Option<NumberRequest> {
        let mut req =
            NumberRequest { project_id: Some(self.project?), correspondence_type_id: Some(self.correspondence_type?), ..Default::default() };
        if shows.originator {
            req.originator_org_id = Some(self.originator?);
        }
        if shows.recipient {
            req.recipient_org_id = Some(self.recipient?);
        }
        if shows.sub_type {
            req.sub_type_id = Some(self.sub_type?);
        }
        if shows.rfa_type {
            req.rfa_type_id = Some(self.rfa_type?);
        }
        if shows.discipline {
            req.discipline_id = Some(self.discipline?);
        }
        if shows.contract {
            req.contract_id = Some(self.contract?);
        }
        if shows.rev && !self.revision.is_empty() {
            req.revision = Some(self.revision.clone());
        }
        Some(req)
    }

    /// Every part, chosen or not: what a posted form asks for (the server takes the parts its template shows).
    pub fn request_of_every_part(&self) -> NumberRequest {
        NumberRequest {
            project_id: self.project,
            correspondence_type_id: self.correspondence_type,
            originator_org_id: self.originator,
            recipient_org_id: self.recipient,
            sub_type_id: self.sub_type,
            rfa_type_id: self.rfa_type,
            discipline_id: self.discipline,
            contract_id: self.contract,
            revision: (!self.revision.is_empty()).then(|| self.revision.clone()),
            ..Default::default()
        }
    }
}

/// Percent-encoding of a query or form value: every byte but RFC 3986's unreserved characters (codes may be Thai).
pub fn percent_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A number held on the reserve page and what became of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeldNumber {
    pub result: ReservationResult,
    pub status: NumberStatus,
}

impl HeldNumber {
    /// A number the forms name by its token, number and expiry (a confirm or cancel posted without scripts), with
    /// what the server says the caller may do with it now.
    pub fn named(
        token: String,
        document_number: String,
        expires_at: DateTime<Utc>,
        status: NumberStatus,
        workflow: Option<WorkflowContext>,
        now: DateTime<Utc>,
    ) -> HeldNumber {
        let ttl_seconds = if status == NumberStatus::Reserved { (expires_at - now).num_seconds().max(0) } else { 0 };
        HeldNumber { result: ReservationResult { token, document_number, sequence: 0, expires_at, ttl_seconds, workflow }, status }
    }

    /// Whether the server's `availableActions` for this number include `action` (CONFIRM, CANCEL…): the card draws
    /// its buttons from them, never from the status.
    pub fn may(&self, action: &str) -> bool {
        self.result.workflow.as_ref().is_some_and(|w| w.available_actions.iter().any(|a| a == action))
    }
}

/// What a form post left for the page to show once: the number held, or why the post was refused.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReserveFlash {
    pub held: Option<HeldNumber>,
    pub error: Option<ApiError>,
}

/// Everything the reserve page shows at first, in one call, so that the server's HTML carries the whole form: the
/// choice lists, the template and preview of the choices in the address, and what the last form post left.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReservePageData {
    pub reference: ReferenceData,
    pub template: Option<Result<ResolvedTemplate, ApiError>>,
    pub preview: Option<Result<PreviewResult, ApiError>>,
    pub flash: ReserveFlash,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(pairs: &[(&str, &str)]) -> ReserveChoices {
        ReserveChoices::from_fields(|name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn choices_survive_the_address_and_ignore_what_does_not_parse() {
        let c = from(&[("project", "3"), ("type", " 7 "), ("originator", "x"), ("recipient", "-2"), ("revision", " b&c ")]);
        assert_eq!(c.project, Some(ProjectId(3)));
        assert_eq!(c.correspondence_type, Some(CorrespondenceTypeId(7)));
        assert_eq!(c.originator, None);
        assert_eq!(c.recipient, None);
        assert_eq!(c.revision, "B&C");
        assert_eq!(c.page_address(), "/?project=3&type=7&revision=B%26C");
        assert_eq!(ReserveChoices::default().page_address(), "/");
    }

    #[test]
    fn a_request_needs_every_part_the_template_shows_and_only_those() {
        let shows = Shows::of("{ORIGINATOR}-{SEQ:4}-{REV}").unwrap();
        let mut c = from(&[("project", "1"), ("type", "2"), ("discipline", "9")]);
        assert_eq!(c.request(&shows), None);
        c.originator = Some(OrganizationId(5));
        let req = c.request(&shows).unwrap();
        assert_eq!(
            (req.project_id, req.correspondence_type_id, req.originator_org_id),
            (Some(ProjectId(1)), Some(CorrespondenceTypeId(2)), Some(OrganizationId(5)))
        );
        assert_eq!(req.discipline_id, None, "a part the template does not show is left out");
        assert_eq!(req.revision, None, "an empty revision is the first");
        c.revision = "B".into();
        assert_eq!(c.request(&shows).unwrap().revision.as_deref(), Some("B"));
    }

    #[test]
    fn a_contract_template_asks_for_the_contract() {
        let shows = Shows::of("{PROJECT}-{CONTRACT}-{SEQ:4}").unwrap();
        assert!(shows.contract && !shows.originator);
        let mut c = from(&[("project", "1"), ("type", "2")]);
        assert_eq!(c.request(&shows), None);
        c = from(&[("project", "1"), ("type", "2"), ("contract", "4")]);
        assert_eq!(c.request(&shows).unwrap().contract_id, Some(ContractId(4)));
        assert_eq!(c.page_address(), "/?project=1&type=2&contract=4");
        assert_eq!(c.request(&Shows::of("{SEQ:4}").unwrap()).unwrap().contract_id, None);
    }
}
