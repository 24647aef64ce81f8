//! The pure part of the administrative writes (docs/rules/numbering.md#the-lifecycle-of-a-number): revise,
//! void-and-replace, a manual override (each row of
//! the bulk import is one), and a reset's request, rejection and approval. Like a batch's [`plan`](super::plan),
//! each is decided without I/O from what was read under its counters' locks, into a [`Write`] that
//! [`apply`](super::apply) writes the one way every counter write is written: the counters and their audit chains'
//! heads moved in one fenced UPDATE, then the rows.

use serde_json::json;

use super::lifecycle::{Action, Lifecycle, State};
use super::store::{Counter, CounterRow, NewNumber, StatusChange, StoredNumber};
use crate::contract::messages::NumberingDetail;
use crate::contract::{IssuedNumber, NumberRequest, NumberStatus, OverrideResult, ResetRequestId, VoidResult};
use crate::numbering::CounterId;
use crate::numbering::{next_rev, parse_rev, ParsedNumber, RenderValues, Segment, Template, Token};
use crate::server::audit::{AuditEntry, ChainHead};
use crate::server::auth::Caller;
use crate::server::db::ms_to_datetime;
use crate::server::error::{AppError, ErrorCode};
use crate::server::numbering::Resolved;

/// Sequences one override may skip: each skipped sequence gets an audit row (docs/rules/numbering.md#what-is-never-done-twice: no unexplained gap).
pub(crate) const MAX_SKIP: i64 = 100_000;

/// A counter as read under its lock, with its audit chain's head.
#[derive(Clone, Debug)]
pub struct Locked {
    pub counter: Counter,
    pub head: ChainHead,
}

/// One counter's part of a write: where it moves from (its version and chain head, the fence) and to.
#[derive(Debug)]
pub struct CounterWrite {
    pub counter: CounterRow,
    pub chain: ChainHead,
    pub last_number: i64,
    /// None keeps the recorded maximum.
    pub max_number: Option<i64>,
    /// Appended to the counter's audit chain, in order.
    pub audits: Vec<AuditEntry>,
}

/// A reset's release: the numbers of a counter above `above` move to `released_numbers`; exactly `expected` of
/// them, those the plan saw (more is a number that appeared meanwhile: a lost race).
#[derive(Debug)]
pub struct Release {
    pub(crate) counter_id: CounterId,
    pub(crate) above: i64,
    pub(crate) reset_request_id: ResetRequestId,
    pub(crate) expected: usize,
}

/// What an administrative write does, decided before anything is written.
#[derive(Debug, Default)]
pub struct Write {
    /// Every counter it touches (each at most once), moved or not: the fence holds for all of them.
    pub counters: Vec<CounterWrite>,
    /// Refused with NB005 if one exists already.
    pub new_numbers: Vec<NewNumber>,
    pub changes: Vec<StatusChange>,
    pub release: Option<Release>,
}

impl Write {
    /// Audit rows only: the counter stays where it is (its version still moves, so the fence holds).
    fn audit_only(locked: &Locked, audits: Vec<AuditEntry>) -> Write {
        Write { counters: vec![stay(locked, audits)], ..Write::default() }
    }
}

fn stay(locked: &Locked, audits: Vec<AuditEntry>) -> CounterWrite {
    let row = &locked.counter.row;
    CounterWrite { counter: row.clone(), chain: locked.head.clone(), last_number: row.last_number, max_number: None, audits }
}

// ---- revise ----

/// The next revision of a confirmed number: the same sequence under the next `{REV}` label, no counter consumed
/// (audit GENERATE). `revisions`: the labels already issued for that sequence.
#[allow(clippy::too_many_arguments)]
pub(crate) fn revise(
    lifecycle: &Lifecycle,
    caller: &Caller,
    locked: &Locked,
    original: &StoredNumber,
    project_code: &str,
    revisions: &[String],
    document_id: Option<String>,
    now: i64,
) -> Result<(Write, IssuedNumber), AppError> {
    lifecycle.allow(Some(State::of_stored(original)), Action::Revise, caller, &original.number)?;
    let template = stored_template(original)?;
    if !template.segments().iter().any(|seg| matches!(seg, Segment::Token(Token::Rev))) {
        return Err(AppError::validation(NumberingDetail::RevisionNotInTemplate { number: &original.number }));
    }
    let parsed = read_back(&template, original, project_code)?;
    let latest = revisions.iter().max_by_key(|r| parse_rev(r));
    let revision = latest
        .map(String::as_str)
        .and_then(next_rev)
        .ok_or_else(|| AppError::conflict(ErrorCode::RevisionExhausted, NumberingDetail::RevisionsExhausted { number: &original.number }))?;
    let number = render_parsed(&template, &parsed, project_code, &revision);
    let document_id = document_id.or_else(|| original.document_id.clone());
    let counter = &locked.counter;
    let row = confirmed(caller, counter, original.sequence, &revision, &number, &original.template, document_id.clone(), now);
    let entry = AuditEntry {
        operation: "GENERATE".into(),
        status: NumberStatus::Confirmed.as_str().into(),
        document_number: Some(number.clone()),
        sequence: Some(original.sequence),
        template_used: Some(original.template.clone()),
        document_id: document_id.clone(),
        metadata: Some(json!({ "revisedFrom": original.number, "revision": revision }).to_string()),
        ..number_base(caller, counter, now)
    };
    let issued = issued(&row, now, Some(original.number.clone()), None);
    Ok((Write { new_numbers: vec![row], ..Write::audit_only(locked, vec![entry]) }, issued))
}

// ---- void and replace ----

/// Voids a confirmed number (with a reason) and issues its replacement from `new`, the counter of today's period
/// for the same parts (often the same counter as `old`): its next sequence, confirmed at once, linked both ways in
/// the audit rows.
#[allow(clippy::too_many_arguments)]
pub(crate) fn void_and_replace(
    lifecycle: &Lifecycle,
    caller: &Caller,
    old: &Locked,
    original: &StoredNumber,
    new: &Locked,
    resolved: &Resolved,
    reason: &str,
    document_id: Option<String>,
    now: i64,
) -> Result<(Write, VoidResult), AppError> {
    lifecycle.allow(Some(State::of_stored(original)), Action::Void, caller, &original.number)?;
    lifecycle.allow(None, Action::Generate, caller, "")?;
    let max = resolved.template.max_seq() as i64;
    let counter = &new.counter;
    let sequence = counter.row.last_number + 1;
    if sequence > max {
        return Err(AppError::SequenceExhausted { max: max as u64 });
    }
    let number = resolved.render(sequence as u64);
    let document_id = document_id.or_else(|| original.document_id.clone());
    let template = resolved.template.source().to_string();
    let row = confirmed(caller, counter, sequence, &resolved.revision, &number, &template, document_id.clone(), now);
    let (voided, void) = voiding(caller, old, original, reason, Some(&number), now);
    let generated = AuditEntry {
        operation: "GENERATE".into(),
        status: NumberStatus::Confirmed.as_str().into(),
        document_number: Some(number.clone()),
        sequence: Some(sequence),
        template_used: Some(template),
        document_id: document_id.clone(),
        metadata: Some(json!({ "replaces": original.number, "reason": reason }).to_string()),
        ..number_base(caller, counter, now)
    };
    let moved = |audits| CounterWrite { last_number: sequence, max_number: Some(max), ..stay(new, audits) };
    let counters = if old.counter.row.id == counter.row.id {
        vec![moved(vec![voided, generated])]
    } else {
        vec![stay(old, vec![voided]), moved(vec![generated])]
    };
    let result = VoidResult {
        voided: original.number.clone(),
        status: NumberStatus::Void,
        replacement: issued(&row, now, None, Some(original.number.clone())),
        workflow: None,
    };
    Ok((Write { counters, new_numbers: vec![row], changes: vec![void], release: None }, result))
}

/// Voids a confirmed number without issuing a replacement (the DMS's admin "cancel"; a super admin's): the number stays
/// on record as VOID with the reason, its sequence is never issued again, and its counter does not move.
pub(crate) fn void(
    lifecycle: &Lifecycle,
    caller: &Caller,
    locked: &Locked,
    original: &StoredNumber,
    reason: &str,
    now: i64,
) -> Result<Write, AppError> {
    lifecycle.allow(Some(State::of_stored(original)), Action::Void, caller, &original.number)?;
    let (voided, change) = voiding(caller, locked, original, reason, None, now);
    Ok(Write { counters: vec![stay(locked, vec![voided])], new_numbers: Vec::new(), changes: vec![change], release: None })
}

/// A confirmed number voided with `reason` (and, when there is one, the number replacing it): its audit row on its
/// counter's chain and its status change.
fn voiding(
    caller: &Caller,
    locked: &Locked,
    original: &StoredNumber,
    reason: &str,
    replaced_by: Option<&str>,
    now: i64,
) -> (AuditEntry, StatusChange) {
    let audit = AuditEntry {
        operation: "VOID".into(),
        status: NumberStatus::Void.as_str().into(),
        document_number: Some(original.number.clone()),
        sequence: Some(original.sequence),
        template_used: Some(original.template.clone()),
        document_id: original.document_id.clone(),
        metadata: Some(json!({ "reason": reason, "replacedBy": replaced_by }).to_string()),
        ..number_base(caller, &locked.counter, now)
    };
    let change = StatusChange {
        id: original.id,
        status: NumberStatus::Void,
        document_id: None,
        confirmed_at: None,
        cancelled_at: Some(now),
        cancel_reason: Some(reason.to_string()),
    };
    (audit, change)
}

// ---- manual override ----

/// What a manual override asks of its counter, checked against it before anything is locked (see
/// `admin_ops::prepare_override`).
pub(crate) enum Prepared {
    /// Register a legacy number, read with the counter's template.
    Register(Legacy),
    /// Move the counter forward to this value.
    SetValue(i64),
}

/// A legacy number, read and checked against its counter.
pub(crate) struct Legacy {
    pub(crate) text: String,
    pub(crate) sequence: i64,
    pub(crate) revision: String,
    pub(crate) template: Template,
    pub(crate) document_id: Option<String>,
}

/// What an override reads under the lock: for a value, the highest sequence issued in any status; for a legacy
/// number, the revision labels already issued for its sequence.
pub(crate) enum OverrideFacts {
    HighestIssued(i64),
    Revisions(Vec<String>),
}

/// A manual override: registers a legacy number, or moves the counter forward (never back: lowering a counter is a
/// reset, which needs a second person). Every sequence it passes over gets its own audit row, so none is an
/// unexplained gap; at most [`MAX_SKIP`] of them.
pub(crate) fn manual_override(
    lifecycle: &Lifecycle,
    caller: &Caller,
    locked: &Locked,
    what: &Prepared,
    facts: &OverrideFacts,
    reason: &str,
    now: i64,
) -> Result<(Write, OverrideResult), AppError> {
    let counter = &locked.counter;
    let (counter_id, last) = (counter.row.id, counter.row.last_number);
    let base = AuditEntry { operation: "MANUAL_OVERRIDE".into(), ..number_base(caller, counter, now) };
    let (new_last, mut entries, registered) = match (what, facts) {
        (Prepared::SetValue(set_to), OverrideFacts::HighestIssued(issued)) => {
            let (set_to, floor) = (*set_to, last.max(*issued));
            if set_to < floor {
                let detail = NumberingDetail::OverrideBelowIssued { value: &set_to, issued: &floor };
                return Err(AppError::conflict(ErrorCode::OverrideBelowIssued, detail));
            }
            let entry = AuditEntry {
                status: "SUCCESS".into(),
                old_value: Some(last.to_string()),
                new_value: Some(set_to.to_string()),
                metadata: Some(json!({ "reason": reason }).to_string()),
                ..base.clone()
            };
            (set_to, vec![entry], None)
        }
        (Prepared::Register(l), OverrideFacts::Revisions(revisions)) => {
            lifecycle.allow(None, Action::Generate, caller, &l.text)?;
            if revisions.contains(&l.revision) {
                return Err(AppError::DuplicateNumber(l.text.clone())); // that sequence is held under another rendering
            }
            let row = confirmed(caller, counter, l.sequence, &l.revision, &l.text, l.template.source(), l.document_id.clone(), now);
            let new_last = last.max(l.sequence);
            let entry = AuditEntry {
                status: NumberStatus::Confirmed.as_str().into(),
                document_number: Some(l.text.clone()),
                sequence: Some(l.sequence),
                template_used: Some(l.template.source().to_string()),
                document_id: l.document_id.clone(),
                old_value: Some(last.to_string()),
                new_value: Some(new_last.to_string()),
                metadata: Some(json!({ "reason": reason, "legacy": true }).to_string()),
                ..base.clone()
            };
            (new_last, vec![entry], Some(row))
        }
        _ => return Err(AppError::internal("an override was read for the other kind of override")),
    };
    if new_last - last > MAX_SKIP {
        return Err(AppError::validation(NumberingDetail::OverrideSkipsTooMany { max: &MAX_SKIP }));
    }
    let registered_seq = registered.as_ref().map(|r| r.sequence);
    let skipped: Vec<AuditEntry> = (last + 1..=new_last)
        .filter(|q| Some(*q) != registered_seq)
        .map(|q| AuditEntry {
            status: "SKIPPED".into(),
            sequence: Some(q),
            metadata: Some(json!({ "reason": reason, "counterSetTo": new_last }).to_string()),
            ..base.clone()
        })
        .collect();
    let skipped_count = skipped.len() as i64;
    entries.splice(0..0, skipped);
    let result = OverrideResult {
        counter_id,
        previous_last_number: last,
        last_number: new_last,
        skipped: skipped_count,
        registered: registered.as_ref().map(|r| issued(r, now, None, None)),
    };
    let write = Write {
        counters: vec![CounterWrite { last_number: new_last, ..stay(locked, entries) }],
        new_numbers: registered.into_iter().collect(),
        ..Write::default()
    };
    Ok((write, result))
}

// ---- counter reset (workflow COUNTER_RESET) ----

/// A reset asked for, as the plans see it.
pub(crate) struct ResetAsk<'a> {
    pub(crate) request_id: ResetRequestId,
    pub(crate) instance_public_id: &'a str,
    pub(crate) new_value: i64,
}

/// A super admin asks for a counter to restart at `new_value`: never above its last number (raising a counter is
/// an override), never below a confirmed number (`highest_confirmed`), one pending request per counter.
pub(crate) fn check_reset_request(locked: &Locked, highest_confirmed: i64, pending: Option<&str>, new_value: i64) -> Result<(), AppError> {
    let last = locked.counter.row.last_number;
    if new_value > last {
        return Err(AppError::conflict(ErrorCode::ResetAboveLast, NumberingDetail::ResetAboveLast { value: &new_value, last: &last }));
    }
    check_floor(highest_confirmed, new_value)?;
    if let Some(pending) = pending {
        return Err(AppError::conflict(ErrorCode::ResetAlreadyPending, NumberingDetail::ResetAlreadyPending { request: &pending }));
    }
    Ok(())
}

/// The request's audit row (RESET_REQUEST, PENDING) on the counter's chain.
pub(crate) fn reset_requested(caller: &Caller, locked: &Locked, ask: &ResetAsk<'_>, reason: &str, now: i64) -> Write {
    let entry = AuditEntry {
        operation: "RESET_REQUEST".into(),
        status: "PENDING".into(),
        metadata: Some(json!({ "requestId": ask.request_id, "instancePublicId": ask.instance_public_id, "reason": reason }).to_string()),
        ..reset_base(caller, &locked.counter, locked.counter.row.last_number, ask.new_value, now)
    };
    Write::audit_only(locked, vec![entry])
}

/// A rejection's audit row (RESET_REJECT) on the counter's chain.
pub(crate) fn reset_rejected(caller: &Caller, locked: &Locked, ask: &ResetAsk<'_>, comment: Option<&str>, now: i64) -> Write {
    let entry = AuditEntry {
        operation: "RESET_REJECT".into(),
        status: "REJECTED".into(),
        metadata: Some(json!({ "requestId": ask.request_id, "instancePublicId": ask.instance_public_id, "comment": comment }).to_string()),
        ..reset_base(caller, &locked.counter, locked.counter.row.last_number, ask.new_value, now)
    };
    Write::audit_only(locked, vec![entry])
}

/// An approved reset: the counter restarts at the asked value and every number above it — none confirmed
/// (`highest_confirmed`), those read in `above` — is released for reuse, each release audited.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reset_approved(
    lifecycle: &Lifecycle,
    caller: &Caller,
    locked: &Locked,
    ask: &ResetAsk<'_>,
    requested_by: &str,
    highest_confirmed: i64,
    above: &[StoredNumber],
    comment: Option<&str>,
    now: i64,
) -> Result<Write, AppError> {
    let counter = &locked.counter;
    let (last, new_value) = (counter.row.last_number, ask.new_value);
    check_floor(highest_confirmed, new_value)?;
    if new_value > last {
        return Err(AppError::conflict(ErrorCode::ResetAboveLast, NumberingDetail::ResetAboveLastNow { last: &last, value: &new_value }));
    }
    for n in above {
        lifecycle.allow(Some(State::of_stored(n)), Action::Release, caller, &n.number)?;
    }
    let base = reset_base(caller, counter, last, new_value, now);
    let mut entries = vec![AuditEntry {
        operation: "RESET_APPROVE".into(),
        status: "APPROVED".into(),
        metadata: Some(
            json!({ "requestId": ask.request_id, "instancePublicId": ask.instance_public_id, "requestedBy": requested_by, "comment": comment })
                .to_string(),
        ),
        ..base.clone()
    }];
    entries.extend(above.iter().map(|n| AuditEntry {
        operation: "RESET_EXECUTE".into(),
        status: "RELEASED".into(),
        document_number: Some(n.number.clone()),
        sequence: Some(n.sequence),
        template_used: Some(n.template.clone()),
        reservation_token: n.token.clone(),
        metadata: Some(json!({ "requestId": ask.request_id, "previousStatus": n.status.as_str(), "revision": n.revision }).to_string()),
        ..base.clone()
    }));
    entries.push(AuditEntry {
        operation: "RESET_EXECUTE".into(),
        status: "SUCCESS".into(),
        metadata: Some(json!({ "requestId": ask.request_id, "released": above.len() }).to_string()),
        ..base
    });
    let release = Release { counter_id: counter.row.id, above: new_value, reset_request_id: ask.request_id, expected: above.len() };
    Ok(Write { counters: vec![CounterWrite { last_number: new_value, ..stay(locked, entries) }], release: Some(release), ..Write::default() })
}

/// A counter may not restart below a number that was confirmed: it would issue that number twice.
fn check_floor(highest_confirmed: i64, new_value: i64) -> Result<(), AppError> {
    if new_value < highest_confirmed {
        let detail = NumberingDetail::ResetBelowConfirmed { value: &new_value, confirmed: &highest_confirmed };
        return Err(AppError::conflict(ErrorCode::ResetBelowConfirmed, detail));
    }
    Ok(())
}

// ---- shared ----

/// A confirmed number issued by hand: the counter's own columns, the caller, confirmed now.
#[allow(clippy::too_many_arguments)]
fn confirmed(
    caller: &Caller,
    c: &Counter,
    sequence: i64,
    revision: &str,
    number: &str,
    template: &str,
    document_id: Option<String>,
    now: i64,
) -> NewNumber {
    NewNumber {
        counter_id: c.row.id,
        project_id: c.key.project_id,
        correspondence_type_id: c.key.correspondence_type_id,
        sequence,
        revision: revision.to_string(),
        number: number.to_string(),
        template: template.to_string(),
        status: NumberStatus::Confirmed,
        token: None,
        document_id,
        user_id: caller.user_id(),
        api_token_id: caller.api_token_id(),
        created_at: now,
        expires_at: None,
        confirmed_at: Some(now),
        block_id: None,
        block_holder: None,
    }
}

fn issued(n: &NewNumber, now: i64, revised_from: Option<String>, replaces: Option<String>) -> IssuedNumber {
    IssuedNumber {
        document_number: n.number.clone(),
        counter_id: n.counter_id,
        sequence: n.sequence,
        revision: n.revision.clone(),
        status: NumberStatus::Confirmed,
        document_id: n.document_id.clone(),
        issued_at: ms_to_datetime(now),
        revised_from,
        replaces,
        workflow: None,
    }
}

fn number_base(caller: &Caller, c: &Counter, now: i64) -> AuditEntry {
    AuditEntry { counter_id: Some(c.row.id), counter_key: serde_json::to_string(&c.key).ok(), ..caller.audit_base(now) }
}

fn reset_base(caller: &Caller, counter: &Counter, old: i64, new: i64, now: i64) -> AuditEntry {
    AuditEntry { old_value: Some(old.to_string()), new_value: Some(new.to_string()), ..number_base(caller, counter, now) }
}

pub(crate) fn stored_template(n: &StoredNumber) -> Result<Template, AppError> {
    Template::parse(&n.template).map_err(|_| AppError::internal(format!("stored template '{}' of {} is invalid", n.template, n.number)))
}

fn render_parsed(t: &Template, p: &ParsedNumber, project: &str, rev: &str) -> String {
    t.render(&RenderValues {
        project,
        originator: p.originator.as_deref().unwrap_or(""),
        recipient: p.recipient.as_deref().unwrap_or(""),
        correspondence_type: p.correspondence_type.as_deref().unwrap_or(""),
        sub_type: p.sub_type.as_deref().unwrap_or(""),
        rfa_type: p.rfa_type.as_deref().unwrap_or(""),
        discipline: p.discipline.as_deref().unwrap_or(""),
        contract: p.contract.as_deref().unwrap_or(""),
        seq: p.seq,
        year: p.year.unwrap_or(0),
        month: p.month.unwrap_or(1),
        fiscal_year: p.fiscal_year.unwrap_or(0),
        rev,
    })
}

/// `base` with the parts a number read back shows (its codes, not its period or revision): the request that numbers
/// again what it named.
pub(crate) fn parts_request(parsed: &ParsedNumber, base: NumberRequest) -> NumberRequest {
    NumberRequest {
        originator_code: parsed.originator.clone(),
        recipient_code: parsed.recipient.clone(),
        sub_type_number: parsed.sub_type.clone(),
        rfa_type_code: parsed.rfa_type.clone(),
        discipline_code: parsed.discipline.clone(),
        contract_code: parsed.contract.clone(),
        ..base
    }
}

/// The parts of an issued number, read back through the template it was issued with (and rendered again to be sure).
pub(crate) fn read_back(t: &Template, n: &StoredNumber, project_code: &str) -> Result<ParsedNumber, AppError> {
    t.parse_number(&n.number, project_code)
        .filter(|p| render_parsed(t, p, project_code, p.rev.as_deref().unwrap_or("")) == n.number)
        .ok_or_else(|| AppError::invalid_format(NumberingDetail::NumberDoesNotReadBack { number: &n.number, template: &n.template }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{CorrespondenceTypeId, DisciplineId, OrganizationId, ProjectId, RfaTypeId, SubTypeId, UserId};
    use crate::numbering::{CounterKey, NumberId, Period, ResetScope};

    const NOW: i64 = 1_000_000;
    const REVISED: &str = "{PROJECT}-{ORIGINATOR}-{SEQ:4}-{REV}";

    fn key(period: &str) -> CounterKey {
        CounterKey {
            project_id: ProjectId(1),
            correspondence_type_id: CorrespondenceTypeId(2),
            originator_id: OrganizationId(3),
            recipient_id: OrganizationId::NONE,
            sub_type_id: SubTypeId::NONE,
            rfa_type_id: RfaTypeId::NONE,
            discipline_id: DisciplineId::NONE,
            period: crate::numbering::PeriodKey::parse(period).unwrap(),
        }
    }

    fn locked(id: CounterId, last: i64) -> Locked {
        Locked {
            counter: Counter { row: CounterRow { id, last_number: last, version: 9 }, key: key("NONE"), max_number: 9999, updated_at: 0 },
            head: ChainHead { hash: format!("head-{id}"), length: 40 },
        }
    }

    fn stored(id: i64, sequence: i64, number: &str, template: &str, status: NumberStatus) -> StoredNumber {
        StoredNumber {
            id: NumberId(id),
            counter_id: CounterId(7),
            sequence,
            revision: "A".into(),
            number: number.into(),
            template: template.into(),
            status,
            token: None,
            document_id: Some("DOC-1".into()),
        }
    }

    fn resolved() -> Resolved {
        let period = Period::of(ResetScope::None, 2025, 3, 10);
        Resolved {
            project_id: ProjectId(1),
            project_code: "P".into(),
            correspondence_type_id: CorrespondenceTypeId(2),
            correspondence_type_code: "LETTER".into(),
            template: Template::parse(REVISED).unwrap(),
            reset_scope: ResetScope::None,
            originator: "O".into(),
            recipient: String::new(),
            sub_type: String::new(),
            rfa_type: String::new(),
            discipline: String::new(),
            contract: String::new(),
            revision: "A".into(),
            key: key(&period.key()),
            period,
            backdated: None,
        }
    }

    fn code(e: AppError) -> ErrorCode {
        e.code()
    }

    fn user(role: crate::contract::Role) -> Caller {
        let info = crate::contract::UserInfo { id: UserId(1), username: "u".into(), display_name: "U".into(), role, admin_project_ids: vec![] };
        Caller { principal: crate::server::auth::Principal::User(info), ip: None, user_agent: None }
    }

    fn super_admin() -> Caller {
        user(crate::contract::Role::SuperAdmin)
    }

    #[test]
    fn a_revision_takes_the_label_after_the_highest_issued_and_leaves_the_counter_where_it_is() {
        let caller = super_admin();
        let original = stored(11, 5, "P-O-0005-A", REVISED, NumberStatus::Confirmed);
        let revisions = ["A".to_string(), "C".into(), "B".into()];
        let (write, issued) = revise(&Lifecycle::standard(), &caller, &locked(CounterId(7), 12), &original, "P", &revisions, None, NOW).unwrap();
        assert_eq!(issued.document_number, "P-O-0005-D");
        assert_eq!((issued.sequence, issued.revision.as_str(), issued.revised_from.as_deref()), (5, "D", Some("P-O-0005-A")));
        assert_eq!(issued.document_id.as_deref(), Some("DOC-1"), "the original's document id when none is given");
        assert_eq!(write.counters.len(), 1);
        let c = &write.counters[0];
        assert_eq!((c.counter.id, c.counter.version, c.last_number, c.max_number), (CounterId(7), 9, 12, None), "no counter consumed, still fenced");
        assert_eq!(c.chain, ChainHead { hash: "head-7".into(), length: 40 });
        assert_eq!(c.audits.iter().map(|a| (a.operation.as_str(), a.sequence)).collect::<Vec<_>>(), [("GENERATE", Some(5))]);
        assert_eq!(write.new_numbers.len(), 1);
        assert_eq!((write.new_numbers[0].number.as_str(), write.new_numbers[0].status), ("P-O-0005-D", NumberStatus::Confirmed));
        assert!(write.changes.is_empty() && write.release.is_none());
    }

    #[test]
    fn a_revision_is_refused_for_a_number_not_confirmed_a_template_without_rev_and_after_the_last_label() {
        let caller = super_admin();
        let reserved = stored(11, 5, "P-O-0005-A", REVISED, NumberStatus::Reserved);
        assert_eq!(
            code(revise(&Lifecycle::standard(), &caller, &locked(CounterId(7), 5), &reserved, "P", &[], None, NOW).unwrap_err()),
            ErrorCode::NotConfirmed
        );
        let plain = stored(11, 5, "P-O-0005", "{PROJECT}-{ORIGINATOR}-{SEQ:4}", NumberStatus::Confirmed);
        assert_eq!(
            code(revise(&Lifecycle::standard(), &caller, &locked(CounterId(7), 5), &plain, "P", &[], None, NOW).unwrap_err()),
            ErrorCode::ValidationError
        );
        let original = stored(11, 5, "P-O-0005-A", REVISED, NumberStatus::Confirmed);
        let last = ["ZZZ".to_string()];
        assert_eq!(
            code(revise(&Lifecycle::standard(), &caller, &locked(CounterId(7), 5), &original, "P", &last, None, NOW).unwrap_err()),
            ErrorCode::RevisionExhausted
        );
    }

    #[test]
    fn void_and_replace_on_one_counter_moves_it_once_with_both_audit_rows() {
        let caller = super_admin();
        let original = stored(11, 5, "P-O-0005-A", REVISED, NumberStatus::Confirmed);
        let counter = locked(CounterId(7), 12);
        let (write, result) =
            void_and_replace(&Lifecycle::standard(), &caller, &counter, &original, &counter, &resolved(), "typo", Some("DOC-2".into()), NOW).unwrap();
        assert_eq!((result.voided.as_str(), result.replacement.document_number.as_str()), ("P-O-0005-A", "P-O-0013-A"));
        assert_eq!(result.replacement.replaces.as_deref(), Some("P-O-0005-A"));
        assert_eq!(write.counters.len(), 1, "one counter, one fenced move");
        let c = &write.counters[0];
        assert_eq!((c.last_number, c.max_number), (13, Some(9999)));
        assert_eq!(c.audits.iter().map(|a| a.operation.as_str()).collect::<Vec<_>>(), ["VOID", "GENERATE"]);
        assert_eq!(write.changes.len(), 1);
        assert_eq!(
            (write.changes[0].id, write.changes[0].status, write.changes[0].cancel_reason.as_deref()),
            (NumberId(11), NumberStatus::Void, Some("typo"))
        );
        assert_eq!(write.new_numbers[0].document_id.as_deref(), Some("DOC-2"));
    }

    #[test]
    fn void_and_replace_across_periods_fences_both_counters_and_refuses_a_full_one() {
        let caller = super_admin();
        let original = stored(11, 5, "P-O-0005-A", REVISED, NumberStatus::Confirmed);
        let (old, new) = (locked(CounterId(7), 12), locked(CounterId(8), 0));
        let (write, _) = void_and_replace(&Lifecycle::standard(), &caller, &old, &original, &new, &resolved(), "typo", None, NOW).unwrap();
        let moves: Vec<_> = write.counters.iter().map(|c| (c.counter.id, c.last_number, c.audits.len())).collect();
        assert_eq!(moves, [(CounterId(7), 12, 1), (CounterId(8), 1, 1)], "the old counter stays (fenced), the new one moves");
        let full = locked(CounterId(8), 9999);
        let e = void_and_replace(&Lifecycle::standard(), &caller, &old, &original, &full, &resolved(), "typo", None, NOW).unwrap_err();
        assert_eq!(code(e), ErrorCode::SequenceExhausted);
        // the lifecycle's table says who may void: a super admin, not staff
        let e = void_and_replace(&Lifecycle::standard(), &user(crate::contract::Role::Staff), &old, &original, &new, &resolved(), "x", None, NOW);
        assert_eq!(code(e.unwrap_err()), ErrorCode::Forbidden);
        let voided = stored(11, 5, "P-O-0005-A", REVISED, NumberStatus::Void);
        assert_eq!(
            code(void_and_replace(&Lifecycle::standard(), &caller, &old, &voided, &new, &resolved(), "x", None, NOW).unwrap_err()),
            ErrorCode::NotConfirmed
        );
    }

    #[test]
    fn an_override_moves_forward_only_with_one_audit_row_per_sequence_passed_over() {
        let caller = super_admin();
        let c = locked(CounterId(7), 10);
        let (write, result) =
            manual_override(&Lifecycle::standard(), &caller, &c, &Prepared::SetValue(14), &OverrideFacts::HighestIssued(10), "paper log", NOW)
                .unwrap();
        assert_eq!((result.previous_last_number, result.last_number, result.skipped), (10, 14, 4));
        let audits = &write.counters[0].audits;
        let rows: Vec<_> = audits.iter().map(|a| (a.status.as_str(), a.sequence)).collect();
        assert_eq!(rows, [("SKIPPED", Some(11)), ("SKIPPED", Some(12)), ("SKIPPED", Some(13)), ("SKIPPED", Some(14)), ("SUCCESS", None)]);
        assert_eq!(write.counters[0].last_number, 14);
        assert!(write.new_numbers.is_empty());
        // below a number issued (in any status) is a reset's business
        let e =
            manual_override(&Lifecycle::standard(), &caller, &c, &Prepared::SetValue(11), &OverrideFacts::HighestIssued(12), "x", NOW).unwrap_err();
        assert_eq!(code(e), ErrorCode::OverrideBelowIssued);
        let e =
            manual_override(&Lifecycle::standard(), &caller, &c, &Prepared::SetValue(10 + MAX_SKIP + 1), &OverrideFacts::HighestIssued(0), "x", NOW)
                .unwrap_err();
        assert_eq!(code(e), ErrorCode::ValidationError);
    }

    #[test]
    fn a_legacy_number_above_the_counter_is_registered_and_the_sequences_before_it_are_explained() {
        let caller = super_admin();
        let legacy = |revision: &str| {
            Prepared::Register(Legacy {
                text: "P-O-0013-A".into(),
                sequence: 13,
                revision: revision.into(),
                template: Template::parse(REVISED).unwrap(),
                document_id: None,
            })
        };
        let (write, result) = manual_override(
            &Lifecycle::standard(),
            &caller,
            &locked(CounterId(7), 10),
            &legacy("A"),
            &OverrideFacts::Revisions(vec![]),
            "legacy",
            NOW,
        )
        .unwrap();
        assert_eq!((result.last_number, result.skipped), (13, 2));
        assert_eq!(result.registered.as_ref().map(|r| r.document_number.as_str()), Some("P-O-0013-A"));
        let rows: Vec<_> = write.counters[0].audits.iter().map(|a| (a.status.as_str(), a.sequence)).collect();
        assert_eq!(rows, [("SKIPPED", Some(11)), ("SKIPPED", Some(12)), ("CONFIRMED", Some(13))]);
        assert_eq!(write.new_numbers.len(), 1);
        // below the counter: registered, the counter stays
        let (write, result) = manual_override(
            &Lifecycle::standard(),
            &caller,
            &locked(CounterId(7), 20),
            &legacy("A"),
            &OverrideFacts::Revisions(vec![]),
            "legacy",
            NOW,
        )
        .unwrap();
        assert_eq!((result.last_number, result.skipped, write.counters[0].last_number), (20, 0, 20));
        // that sequence already issued under that revision
        let taken = OverrideFacts::Revisions(vec!["A".into()]);
        assert_eq!(
            code(manual_override(&Lifecycle::standard(), &caller, &locked(CounterId(7), 20), &legacy("A"), &taken, "x", NOW).unwrap_err()),
            ErrorCode::DuplicateNumber
        );
    }

    #[test]
    fn a_reset_request_is_checked_against_the_counter_its_confirmed_numbers_and_a_pending_one() {
        let c = locked(CounterId(7), 10);
        assert!(check_reset_request(&c, 4, None, 4).is_ok());
        assert_eq!(code(check_reset_request(&c, 4, None, 11).unwrap_err()), ErrorCode::ResetAboveLast, "above the last number");
        assert_eq!(code(check_reset_request(&c, 4, None, 3).unwrap_err()), ErrorCode::ResetBelowConfirmed);
        assert_eq!(code(check_reset_request(&c, 4, Some("wf-1"), 5).unwrap_err()), ErrorCode::ResetAlreadyPending);
        let ask = ResetAsk { request_id: ResetRequestId(3), instance_public_id: "wf-1", new_value: 5 };
        let write = reset_requested(&super_admin(), &c, &ask, "wrong year", NOW);
        let w = &write.counters[0];
        assert_eq!((w.last_number, w.audits.len(), w.audits[0].operation.as_str(), w.audits[0].status.as_str()), (10, 1, "RESET_REQUEST", "PENDING"));
        let write = reset_rejected(&super_admin(), &c, &ask, Some("no"), NOW);
        assert_eq!((write.counters[0].last_number, write.counters[0].audits[0].operation.as_str()), (10, "RESET_REJECT"));
    }

    #[test]
    fn an_approved_reset_restarts_the_counter_and_releases_exactly_the_numbers_it_read() {
        let caller = super_admin();
        let ask = ResetAsk { request_id: ResetRequestId(3), instance_public_id: "wf-1", new_value: 4 };
        let above = [stored(21, 5, "P-O-0005-A", REVISED, NumberStatus::Cancelled), stored(22, 6, "P-O-0006-A", REVISED, NumberStatus::Reserved)];
        let write = reset_approved(&Lifecycle::standard(), &caller, &locked(CounterId(7), 6), &ask, "admin1", 4, &above, None, NOW).unwrap();
        let w = &write.counters[0];
        assert_eq!(w.last_number, 4);
        let rows: Vec<_> = w.audits.iter().map(|a| (a.operation.as_str(), a.status.as_str(), a.sequence)).collect();
        assert_eq!(
            rows,
            [
                ("RESET_APPROVE", "APPROVED", None),
                ("RESET_EXECUTE", "RELEASED", Some(5)),
                ("RESET_EXECUTE", "RELEASED", Some(6)),
                ("RESET_EXECUTE", "SUCCESS", None)
            ]
        );
        let r = write.release.as_ref().unwrap();
        assert_eq!((r.counter_id, r.above, r.reset_request_id, r.expected), (CounterId(7), 4, ResetRequestId(3), 2));
        // the counter went below the value meanwhile, or a number above it was confirmed meanwhile
        assert_eq!(
            code(reset_approved(&Lifecycle::standard(), &caller, &locked(CounterId(7), 3), &ask, "a", 0, &[], None, NOW).unwrap_err()),
            ErrorCode::ResetAboveLast
        );
        assert_eq!(
            code(reset_approved(&Lifecycle::standard(), &caller, &locked(CounterId(7), 6), &ask, "a", 5, &above, None, NOW).unwrap_err()),
            ErrorCode::ResetBelowConfirmed
        );
    }
}
