//! The pure part of a counter batch: given the counter as read (or remembered), the batch's jobs with the
//! number rows their tokens and document ids point at, and the clock, decide everything the batch writes —
//! new numbers in arrival order, status changes, one audit row per job, the counter's new value — and each
//! job's outcome. No I/O: the batch reads before and applies after (`counter_tx::apply_batch`).

use std::collections::HashMap;
use std::sync::Arc;

use super::lifecycle::{Action, Lifecycle, State, BLOCK_EXPIRED};
use super::store::{CounterRow, NewNumber, NumberRow, StatusChange};
use crate::contract::messages::NumberingDetail;
use crate::contract::NumberStatus;
use crate::numbering::DocumentId;
use crate::numbering::{CounterId, NumberId};
use crate::server::audit::AuditEntry;
use crate::server::auth::Caller;
use crate::server::error::AppError;
use crate::server::numbering::idempotency::{self, Keyed, NewKey};
use crate::server::numbering::Resolved;
use crate::server::outbox::{self, Event, EventKind};

/// What a job asks of its counter. Serializable: a job travels as it is to the counter's lock holder (`forward`).
#[derive(serde::Serialize, serde::Deserialize)]
pub enum JobKind {
    /// Take the next number; with a document id it is confirmed at once (generate), else reserved for `ttl_ms`.
    Issue {
        #[serde(with = "shared")]
        req: Arc<Resolved>,
        ttl_ms: i64,
        document_id: Option<DocumentId>,
    },
    Confirm {
        token: String,
        document_id: DocumentId,
    },
    Cancel {
        token: String,
        reason: Option<String>,
        expiry: bool,
    },
    /// Reserve `count` contiguous numbers at once, each held for `ttl_ms` and confirmed or released on its own.
    Block {
        #[serde(with = "shared")]
        req: Arc<Resolved>,
        ttl_ms: i64,
        block: Block,
    },
}

/// A block of numbers: its id (every number of it carries it), how many, and who it is for.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Block {
    pub id: String,
    pub count: u32,
    pub holder: Option<String>,
}

/// `Arc<Resolved>` as the `Resolved` it shares (serde's `rc` feature would serialize every `Arc` of the crate so).
mod shared {
    use std::sync::Arc;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::server::numbering::Resolved;

    pub(crate) fn serialize<S: Serializer>(r: &Arc<Resolved>, s: S) -> Result<S::Ok, S::Error> {
        r.as_ref().serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<Resolved>, D::Error> {
        Resolved::deserialize(d).map(Arc::new)
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Outcome {
    Issued {
        number: String,
        sequence: i64,
        token: Option<String>,
        expires_at: Option<i64>,
        created_at: i64,
    },
    /// A block's numbers (each an `Issued`), contiguous, in order.
    Block {
        id: String,
        holder: Option<String>,
        numbers: Vec<Outcome>,
    },
    /// `changed` is false when the request found the number already in the asked state (idempotent repeat).
    Status {
        number: String,
        status: NumberStatus,
        changed: bool,
        /// Where the number is in its lifecycle now (EXPIRED where `status` says CANCELLED), and since when (ms).
        state: State,
        at: i64,
    },
}

/// The answer of a confirm or cancel: the number as the row now stands (status, lifecycle state, when it last changed).
fn status_of(row: &NumberRow, changed: bool) -> Outcome {
    Outcome::Status {
        number: row.number.clone(),
        status: row.status,
        changed,
        state: State::of(row.status, row.cancel_reason.as_deref()),
        at: row.changed_at,
    }
}

/// One job as the plan sees it: what it asks, who asks, and the part of its audit row the batch fills in
/// (caller, counter, timings, retries, lock fallback).
pub(crate) struct PlanJob<'a> {
    pub(crate) kind: &'a JobKind,
    pub(crate) caller: &'a Caller,
    pub(crate) audit: AuditEntry,
    /// The job's `Idempotency-Key`, stored with its outcome when it succeeds.
    pub(crate) keyed: Option<&'a Keyed>,
    /// Already answered before the plan (its key was found stored): nothing to do but give this answer.
    pub(crate) answered: Option<Result<Outcome, AppError>>,
}

/// The number rows the batch read for its jobs: by reservation token, and confirmed ones by document id.
#[derive(Default)]
pub(crate) struct Rows {
    pub(crate) by_token: HashMap<String, NumberRow>,
    pub(crate) by_document: HashMap<String, NumberRow>,
}

/// What a batch does, decided before anything is written.
#[derive(Debug)]
pub(crate) struct Plan {
    /// The counter's value after the batch.
    pub(crate) last_number: i64,
    /// The numbers to insert, each with the index of its job.
    pub(crate) new_numbers: Vec<(usize, NewNumber)>,
    pub(crate) changes: Vec<StatusChange>,
    /// One audit row per job that did something, with the index of its job, in job order.
    pub(crate) audits: Vec<(usize, AuditEntry)>,
    /// One outcome per job, in job order.
    pub(crate) results: Vec<Result<Outcome, AppError>>,
    /// The jobs sent with an `Idempotency-Key` that this batch serves, by index: their keys are stored with their
    /// outcomes ([`Plan::settle_keys`]).
    pub(crate) keyed: Vec<(usize, Keyed)>,
    /// A job that repeats an earlier job's key and request in the same batch, and that earlier job: it gets the
    /// same answer.
    pub(crate) repeats: Vec<(usize, usize)>,
    /// The notifications the batch emits (docs/rules/api.md#notifications-and-live-screens), in order, each with the
    /// index of its job (none: the counter's
    /// own, a threshold crossed). Usually none: a batch of reserves writes no outbox row.
    pub(crate) events: Vec<(Option<usize>, Event)>,
}

/// The highest sequence the batch's templates allow (0 without issues): recorded on the counter.
pub(crate) fn max_number(jobs: &[&JobKind]) -> i64 {
    jobs.iter()
        .filter_map(|j| match j {
            JobKind::Issue { req, .. } | JobKind::Block { req, .. } => Some(req.template.max_seq() as i64),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// The reservation tokens the batch's confirms and cancels name.
pub(crate) fn tokens(jobs: &[&JobKind]) -> Vec<String> {
    jobs.iter()
        .filter_map(|j| match j {
            JobKind::Confirm { token, .. } | JobKind::Cancel { token, .. } => Some(token.clone()),
            JobKind::Issue { .. } | JobKind::Block { .. } => None,
        })
        .collect()
}

/// The document ids the batch's generates name.
pub(crate) fn document_ids(jobs: &[&JobKind]) -> Vec<String> {
    jobs.iter()
        .filter_map(|j| match j {
            JobKind::Issue { document_id: Some(d), .. } => Some(d.to_string()),
            _ => None,
        })
        .collect()
}

/// The correspondence type code of the batch's issues, for the metrics.
pub(crate) fn type_code(jobs: &[&JobKind]) -> Option<String> {
    jobs.iter().find_map(|j| match j {
        JobKind::Issue { req, .. } | JobKind::Block { req, .. } => Some(req.correspondence_type_code.clone()),
        _ => None,
    })
}

/// Plans a batch: sequences in arrival order from `counter.last_number`, each job decided against the rows
/// as the jobs before it in the same batch left them, each step of a number's life allowed by its `lifecycle`.
/// `new_token` mints a reservation token.
pub(crate) fn plan(
    counter: &CounterRow,
    jobs: Vec<PlanJob<'_>>,
    rows: Rows,
    lifecycle: &Lifecycle,
    now: i64,
    mut new_token: impl FnMut() -> String,
) -> Plan {
    let Rows { mut by_token, mut by_document } = rows;
    let mut p = Plan {
        last_number: counter.last_number,
        new_numbers: Vec::new(),
        changes: Vec::new(),
        audits: Vec::new(),
        results: Vec::with_capacity(jobs.len()),
        keyed: Vec::new(),
        repeats: Vec::new(),
        events: Vec::new(),
    };
    // the largest range of the batch's templates, for the thresholds
    let mut range = 0;
    let mut first_of_key: HashMap<(&str, &str), (usize, &str)> = HashMap::new();
    for (i, mut job) in jobs.into_iter().enumerate() {
        if let Some(answer) = job.answered.take() {
            p.results.push(answer);
            continue;
        }
        if let Some(k) = job.keyed {
            match first_of_key.get(&(k.scope.as_str(), k.key.as_str())) {
                Some(&(first, fingerprint)) => {
                    if fingerprint == k.fingerprint {
                        p.repeats.push((i, first));
                        p.results.push(Err(idempotency::in_progress(&k.key))); // settled to the first's answer
                    } else {
                        p.results.push(Err(idempotency::reused(&k.key)));
                    }
                    continue;
                }
                None => {
                    first_of_key.insert((&k.scope, &k.key), (i, &k.fingerprint));
                    p.keyed.push((i, k.clone()));
                }
            }
        }
        let kind = job.kind;
        let outcome = match kind {
            JobKind::Issue { req, ttl_ms, document_id } => {
                range = range.max(req.template.max_seq() as i64);
                match document_id.as_ref().and_then(|d| by_document.get(d.as_str())) {
                    // generate is idempotent per document: the number it already has
                    Some(existing) => Ok(Outcome::Issued {
                        number: existing.number.clone(),
                        sequence: existing.sequence,
                        token: None,
                        expires_at: None,
                        created_at: now,
                    }),
                    None => lifecycle
                        .allow(None, if document_id.is_some() { Action::Generate } else { Action::Reserve }, job.caller, "")
                        .and_then(|()| p.issue(i, &job, counter.id, req, *ttl_ms, document_id, None, now, &mut new_token, &mut by_document)),
                }
            }
            JobKind::Block { req, ttl_ms, block } => {
                range = range.max(req.template.max_seq() as i64);
                lifecycle.allow(None, Action::Reserve, job.caller, "").and_then(|()| {
                    let last = p.last_number + i64::from(block.count);
                    if last as u64 > req.template.max_seq() {
                        // all or nothing: a block that does not fit takes no number
                        return Err(AppError::SequenceExhausted { max: req.template.max_seq() });
                    }
                    let numbers = (0..block.count)
                        .map(|_| p.issue(i, &job, counter.id, req, *ttl_ms, &None, Some(block), now, &mut new_token, &mut by_document))
                        .collect::<Result<Vec<_>, _>>()?;
                    let first = p.last_number - i64::from(block.count) + 1;
                    let data = serde_json::json!({ "counterId": counter.id, "blockId": block.id, "holder": block.holder, "count": block.count,
                        "firstSequence": first, "lastSequence": p.last_number, "expiresAt": now + ttl_ms });
                    p.events.push((Some(i), Event::about_counter(EventKind::NumberBlockReserved, counter.id, data).in_project(req.project_id)));
                    Ok(Outcome::Block { id: block.id.clone(), holder: block.holder.clone(), numbers })
                })
            }
            JobKind::Confirm { token, document_id } => match by_token.get_mut(token) {
                None => Err(reservation_not_found(token)),
                Some(row) => {
                    let confirmed = p.confirm(i, job, row, document_id.as_str(), lifecycle, now);
                    if let Ok(Outcome::Status { changed: true, .. }) = &confirmed {
                        p.events.push((Some(i), confirmed_event(counter.id, &row.number, row.sequence, document_id.as_str())));
                    }
                    confirmed
                }
            },
            JobKind::Cancel { token, reason, expiry } => match by_token.get_mut(token) {
                None => Err(reservation_not_found(token)),
                Some(row) => p.cancel(i, job, row, reason.as_deref(), *expiry, lifecycle, now),
            },
        };
        p.results.push(outcome);
    }
    for (pct, kind) in outbox::crossed(counter.last_number, p.last_number, range) {
        let data = serde_json::json!({ "counterId": counter.id, "percent": pct, "lastNumber": p.last_number, "maxNumber": range });
        p.events.push((None, Event::about_counter(kind, counter.id, data)));
    }
    p
}

impl Plan {
    #[allow(clippy::too_many_arguments)]
    fn issue(
        &mut self,
        i: usize,
        job: &PlanJob<'_>,
        counter_id: CounterId,
        req: &Resolved,
        ttl_ms: i64,
        document_id: &Option<DocumentId>,
        block: Option<&Block>,
        now: i64,
        new_token: &mut impl FnMut() -> String,
        by_document: &mut HashMap<String, NumberRow>,
    ) -> Result<Outcome, AppError> {
        let document_id = &document_id.as_ref().map(DocumentId::to_string);
        let sequence = self.last_number + 1;
        if sequence as u64 > req.template.max_seq() {
            return Err(AppError::SequenceExhausted { max: req.template.max_seq() });
        }
        self.last_number = sequence;
        let number = req.render(sequence as u64);
        let generate = document_id.is_some();
        let token = (!generate).then(&mut *new_token);
        let expires_at = (!generate).then_some(now + ttl_ms);
        let status = if generate { NumberStatus::Confirmed } else { NumberStatus::Reserved };
        let row = NewNumber {
            counter_id,
            project_id: req.project_id,
            correspondence_type_id: req.correspondence_type_id,
            sequence,
            revision: req.revision.clone(),
            number: number.clone(),
            template: req.template.source().to_string(),
            status,
            token: token.clone(),
            document_id: document_id.clone(),
            user_id: job.caller.user_id(),
            api_token_id: job.caller.api_token_id(),
            created_at: now,
            expires_at,
            confirmed_at: generate.then_some(now),
            block_id: block.map(|b| b.id.clone()),
            block_holder: block.and_then(|b| b.holder.clone()),
        };
        if let Some(d) = document_id {
            // a second generate for the same document in this batch gets this number
            by_document.insert(
                d.clone(),
                NumberRow {
                    id: NumberId::NONE,
                    number: number.clone(),
                    sequence,
                    template: row.template.clone(),
                    status: NumberStatus::Confirmed,
                    token: None,
                    document_id: Some(d.clone()),
                    expires_at: None,
                    cancel_reason: None,
                    changed_at: now,
                    in_block: false,
                },
            );
        }
        self.audits.push((
            i,
            AuditEntry {
                operation: if generate { "GENERATE" } else { "RESERVE" }.into(),
                status: status.as_str().into(),
                document_number: Some(number.clone()),
                sequence: Some(sequence),
                template_used: Some(row.template.clone()),
                reservation_token: token.clone(),
                document_id: document_id.clone(),
                metadata: issue_metadata(expires_at, req, block),
                ..job.audit.clone()
            },
        ));
        if let Some(d) = document_id {
            // generate: a number confirmed at once
            self.events.push((Some(i), confirmed_event(counter_id, &number, sequence, d)));
        }
        self.new_numbers.push((i, row));
        Ok(Outcome::Issued { number, sequence, token, expires_at, created_at: now })
    }

    fn confirm(
        &mut self,
        i: usize,
        job: PlanJob<'_>,
        row: &mut NumberRow,
        document_id: &str,
        lifecycle: &Lifecycle,
        now: i64,
    ) -> Result<Outcome, AppError> {
        let state = State::of(row.status, row.cancel_reason.as_deref());
        // a repeat of the confirm that took it: the same answer, nothing written
        if state == State::Confirmed && row.document_id.as_deref() == Some(document_id) {
            return Ok(status_of(row, false));
        }
        // too late: the reservation expires now, as the sweep would have expired it
        if state == State::Reserved && row.expires_at.is_some_and(|e| e <= now) {
            lifecycle.allow(Some(state), Action::Expire, job.caller, &row.number)?;
            self.expire(i, job, row, now);
            return Err(AppError::ReservationExpired);
        }
        lifecycle.allow(Some(state), Action::Confirm, job.caller, &row.number)?;
        row.status = NumberStatus::Confirmed;
        row.document_id = Some(document_id.to_string());
        row.changed_at = now;
        self.changes.push(StatusChange {
            id: row.id,
            status: NumberStatus::Confirmed,
            document_id: Some(document_id.to_string()),
            confirmed_at: Some(now),
            cancelled_at: None,
            cancel_reason: None,
        });
        self.audits.push((i, status_audit("CONFIRM", NumberStatus::Confirmed, row, Some(document_id.to_string()), None, job.audit)));
        Ok(status_of(row, true))
    }

    #[allow(clippy::too_many_arguments)]
    fn cancel(
        &mut self,
        i: usize,
        job: PlanJob<'_>,
        row: &mut NumberRow,
        reason: Option<&str>,
        expiry: bool,
        lifecycle: &Lifecycle,
        now: i64,
    ) -> Result<Outcome, AppError> {
        let state = State::of(row.status, row.cancel_reason.as_deref());
        match state {
            // the expiry sweep saw it due, but it was extended or is not due yet: leave it
            State::Reserved if expiry && row.expires_at.is_none_or(|e| e > now) => Ok(status_of(row, false)),
            // a repeat: it is cancelled already (or expired)
            State::Cancelled | State::Expired => Ok(status_of(row, false)),
            State::Reserved if expiry => {
                lifecycle.allow(Some(state), Action::Expire, job.caller, &row.number)?;
                self.expire(i, job, row, now);
                Ok(status_of(row, true))
            }
            _ => {
                lifecycle.allow(Some(state), Action::Cancel, job.caller, &row.number)?;
                self.cancel_row(i, job, row, reason.unwrap_or("cancelled"), now);
                Ok(status_of(row, true))
            }
        }
    }

    /// A reservation past its time is cancelled with reason `expired` (`block expired` for a block's number).
    fn expire(&mut self, i: usize, job: PlanJob<'_>, row: &mut NumberRow, now: i64) {
        self.cancel_row(i, job, row, if row.in_block { BLOCK_EXPIRED } else { "expired" }, now);
    }

    fn cancel_row(&mut self, i: usize, job: PlanJob<'_>, row: &mut NumberRow, reason: &str, now: i64) {
        row.status = NumberStatus::Cancelled;
        row.cancel_reason = Some(reason.to_string());
        row.changed_at = now;
        self.changes.push(StatusChange {
            id: row.id,
            status: NumberStatus::Cancelled,
            document_id: None,
            confirmed_at: None,
            cancelled_at: Some(now),
            cancel_reason: Some(reason.to_string()),
        });
        self.audits.push((i, status_audit("CANCEL", NumberStatus::Cancelled, row, None, Some(reason.to_string()), job.audit)));
    }

    /// The numbers the plan renders, for the pre-check of numbers that exist already.
    pub(crate) fn rendered(&self) -> Vec<String> {
        self.new_numbers.iter().map(|(_, n)| n.number.clone()).collect()
    }

    /// Drops the new numbers that exist already (`taken`, or twice in this batch): their jobs fail with
    /// NB005, their sequences stay consumed, and their audit rows say why. Returns the numbers dropped.
    /// The keys to store with this batch, once its outcomes are final (after [`Plan::refuse_taken`]): each keyed
    /// job that succeeded, with its outcome; a repeat within the batch gets its first's answer.
    pub(crate) fn settle_keys(&mut self, now: i64) -> Vec<NewKey> {
        for &(repeat, first) in &self.repeats {
            self.results[repeat] = self.results[first].clone();
        }
        self.keyed.iter().filter_map(|(i, k)| self.results[*i].as_ref().ok().map(|o| k.answered(o, now))).collect()
    }

    pub(crate) fn refuse_taken(&mut self, taken: impl IntoIterator<Item = String>) -> Vec<String> {
        let mut taken: std::collections::HashSet<String> = taken.into_iter().collect();
        let mut refused = Vec::new();
        let mut keep = Vec::with_capacity(self.new_numbers.len());
        for (i, n) in self.new_numbers.drain(..) {
            if taken.insert(n.number.clone()) {
                keep.push((i, n));
                continue;
            }
            self.results[i] = Err(AppError::DuplicateNumber(n.number.clone()));
            // a block's job has a row per number: the one of this number
            if let Some((_, a)) = self.audits.iter_mut().find(|(j, a)| *j == i && a.document_number.as_deref() == Some(n.number.as_str())) {
                a.status = "FAILED".into();
                a.reservation_token = None;
                a.metadata = Some(serde_json::json!({ "error": "NB005", "reason": "duplicate number" }).to_string());
            }
            self.events.retain(|(j, _)| *j != Some(i));
            refused.push(n.number);
        }
        self.new_numbers = keep;
        refused
    }
}

fn confirmed_event(counter_id: CounterId, number: &str, sequence: i64, document_id: &str) -> Event {
    let data = serde_json::json!({ "counterId": counter_id, "documentNumber": number, "sequence": sequence, "documentId": document_id });
    Event::about_counter(EventKind::NumberConfirmed, counter_id, data)
}

pub(crate) fn reservation_not_found(token: &str) -> AppError {
    AppError::not_found(NumberingDetail::ReservationNotFound { token: &token })
}

/// A reservation's expiry, and for a back-dated number its period and reason (audited as such).
fn issue_metadata(expires_at: Option<i64>, req: &Resolved, block: Option<&Block>) -> Option<String> {
    let mut meta = serde_json::Map::new();
    if let Some(e) = expires_at {
        meta.insert("expiresAt".into(), e.into());
    }
    if let Some(b) = block {
        meta.insert("block".into(), serde_json::json!({ "id": b.id, "count": b.count, "holder": b.holder }));
    }
    if let Some(reason) = &req.backdated {
        meta.insert("backdated".into(), serde_json::json!({ "period": req.key.period, "reason": reason }));
    }
    (!meta.is_empty()).then(|| serde_json::Value::Object(meta).to_string())
}

fn status_audit(
    operation: &str,
    status: NumberStatus,
    row: &NumberRow,
    document_id: Option<String>,
    reason: Option<String>,
    base: AuditEntry,
) -> AuditEntry {
    AuditEntry {
        operation: operation.into(),
        status: status.as_str().into(),
        document_number: Some(row.number.clone()),
        sequence: Some(row.sequence),
        template_used: Some(row.template.clone()),
        reservation_token: row.token.clone(),
        document_id: document_id.or_else(|| row.document_id.clone()),
        metadata: reason.map(|r| serde_json::json!({ "reason": r }).to_string()),
        ..base
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numbering::{CorrespondenceTypeId, DisciplineId, OrganizationId, ProjectId, RfaTypeId, SubTypeId};
    use crate::numbering::{CounterKey, Period, ResetScope, Template};
    use crate::server::error::ErrorCode;

    const NOW: i64 = 1_000_000;
    const RESERVED_AT: i64 = NOW - 60_000;

    fn resolved(template: &str) -> Arc<Resolved> {
        let period = Period::of(ResetScope::Yearly, 2025, 3, 10);
        Arc::new(Resolved {
            project_id: ProjectId(1),
            project_code: "P".into(),
            correspondence_type_id: CorrespondenceTypeId(2),
            correspondence_type_code: "LETTER".into(),
            template: Template::parse(template).unwrap(),
            reset_scope: ResetScope::Yearly,
            originator: "O".into(),
            recipient: "R".into(),
            sub_type: String::new(),
            rfa_type: String::new(),
            discipline: String::new(),
            contract: String::new(),
            revision: "A".into(),
            key: CounterKey {
                project_id: ProjectId(1),
                correspondence_type_id: CorrespondenceTypeId(2),
                originator_id: OrganizationId::NONE,
                recipient_id: OrganizationId::NONE,
                sub_type_id: SubTypeId::NONE,
                rfa_type_id: RfaTypeId::NONE,
                discipline_id: DisciplineId::NONE,
                period: crate::numbering::PeriodKey::of(&period),
            },
            period,
            backdated: None,
        })
    }

    fn reserve(req: &Arc<Resolved>) -> JobKind {
        JobKind::Issue { req: req.clone(), ttl_ms: 60_000, document_id: None }
    }

    fn generate(req: &Arc<Resolved>, doc: &str) -> JobKind {
        JobKind::Issue { req: req.clone(), ttl_ms: 0, document_id: Some(DocumentId::parse(doc).unwrap()) }
    }

    fn confirm(token: &str, doc: &str) -> JobKind {
        JobKind::Confirm { token: token.into(), document_id: DocumentId::parse(doc).unwrap() }
    }

    fn cancel(token: &str) -> JobKind {
        JobKind::Cancel { token: token.into(), reason: None, expiry: false }
    }

    fn expiry(token: &str) -> JobKind {
        JobKind::Cancel { token: token.into(), reason: Some("expired".into()), expiry: true }
    }

    fn reserved(id: i64, token: &str, expires_at: i64) -> NumberRow {
        NumberRow {
            id: NumberId(id),
            number: format!("O-R-{id:04}-2568"),
            sequence: id,
            template: "{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}".into(),
            status: NumberStatus::Reserved,
            token: Some(token.into()),
            document_id: None,
            expires_at: Some(expires_at),
            cancel_reason: None,
            changed_at: RESERVED_AT,
            in_block: false,
        }
    }

    fn run(last: i64, kinds: &[JobKind], rows: Vec<NumberRow>) -> Plan {
        let caller = Caller::system();
        let jobs: Vec<PlanJob<'_>> =
            kinds.iter().map(|kind| PlanJob { kind, caller: &caller, audit: caller.audit_base(NOW), keyed: None, answered: None }).collect();
        let by_token = rows.into_iter().map(|r| (r.token.clone().unwrap(), r)).collect();
        let mut n = 0;
        plan(
            &CounterRow { id: CounterId(7), last_number: last, version: 3 },
            jobs,
            Rows { by_token, by_document: HashMap::new() },
            &Lifecycle::standard(),
            NOW,
            || {
                n += 1;
                format!("token-{n}")
            },
        )
    }

    fn ok(r: &Result<Outcome, AppError>) -> &Outcome {
        r.as_ref().expect("an outcome")
    }

    fn code(r: &Result<Outcome, AppError>) -> ErrorCode {
        r.as_ref().err().map(AppError::code).expect("an error")
    }

    #[test]
    fn sequences_are_assigned_in_arrival_order() {
        let req = resolved("{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}");
        let p = run(41, &[reserve(&req), generate(&req, "DOC-1"), reserve(&req)], vec![]);
        assert_eq!(p.last_number, 44);
        let seqs: Vec<(usize, i64, NumberStatus)> = p.new_numbers.iter().map(|(i, n)| (*i, n.sequence, n.status)).collect();
        assert_eq!(seqs, vec![(0, 42, NumberStatus::Reserved), (1, 43, NumberStatus::Confirmed), (2, 44, NumberStatus::Reserved)]);
        assert_eq!(p.new_numbers[0].1.number, "O-R-0042-2568");
        assert_eq!(p.new_numbers[0].1.counter_id, CounterId(7));
        assert_eq!(p.new_numbers[0].1.token.as_deref(), Some("token-1"));
        assert_eq!(p.new_numbers[0].1.expires_at, Some(NOW + 60_000));
        assert_eq!(p.new_numbers[1].1.token, None);
        assert_eq!(p.new_numbers[1].1.document_id.as_deref(), Some("DOC-1"));
        assert_eq!(p.new_numbers[1].1.confirmed_at, Some(NOW));
        assert_eq!(p.new_numbers[2].1.token.as_deref(), Some("token-2"));
        assert_eq!(
            ok(&p.results[2]),
            &Outcome::Issued {
                number: "O-R-0044-2568".into(),
                sequence: 44,
                token: Some("token-2".into()),
                expires_at: Some(NOW + 60_000),
                created_at: NOW
            }
        );
        let audits: Vec<(usize, &str, &str, Option<i64>)> =
            p.audits.iter().map(|(i, a)| (*i, a.operation.as_str(), a.status.as_str(), a.sequence)).collect();
        assert_eq!(audits, vec![(0, "RESERVE", "RESERVED", Some(42)), (1, "GENERATE", "CONFIRMED", Some(43)), (2, "RESERVE", "RESERVED", Some(44))]);
        assert!(p.changes.is_empty());
    }

    fn kinds_of(p: &Plan) -> Vec<(Option<usize>, EventKind)> {
        p.events.iter().map(|(i, e)| (*i, e.kind)).collect()
    }

    #[test]
    fn a_batch_of_reserves_emits_nothing_below_its_thresholds() {
        // {SEQ:2}: 99 numbers; 90 % is 89.1, so 90 is the first number past it
        let req = resolved("{ORIGINATOR}-{RECIPIENT}-{SEQ:2}-{YEAR:B.E.}");
        let p = run(80, &[reserve(&req), reserve(&req)], vec![]);
        assert!(p.events.is_empty());
        let p = run(88, &[reserve(&req)], vec![]);
        assert!(p.events.is_empty(), "89 of 99 is below 90 %");
    }

    #[test]
    fn a_batch_that_crosses_a_threshold_emits_it_once() {
        let req = resolved("{ORIGINATOR}-{RECIPIENT}-{SEQ:2}-{YEAR:B.E.}");
        let p = run(89, &[reserve(&req), reserve(&req)], vec![]);
        assert_eq!(kinds_of(&p), vec![(None, EventKind::Counter90Percent)]);
        assert_eq!(p.events[0].1.counter_id, Some(CounterId(7)));
        assert_eq!(p.events[0].1.data["percent"], 90);
        assert_eq!(p.events[0].1.data["lastNumber"], 91);
        // already past 90 %, not yet 95 %: nothing
        assert!(run(91, &[reserve(&req)], vec![]).events.is_empty());
        // 95 % of 99 is 94.05: the 95th number crosses it; one batch may cross both
        assert_eq!(kinds_of(&run(94, &[reserve(&req)], vec![])), vec![(None, EventKind::Counter95Percent)]);
        let ten: Vec<JobKind> = (0..10).map(|_| reserve(&req)).collect();
        assert_eq!(kinds_of(&run(85, &ten, vec![])), vec![(None, EventKind::Counter90Percent), (None, EventKind::Counter95Percent)]);
        // a batch with no issue moves nothing and crosses nothing
        assert!(run(99, &[cancel("t")], vec![reserved(99, "t", NOW + 1)]).events.is_empty());
    }

    #[test]
    fn confirms_and_generates_emit_number_confirmed_in_job_order() {
        let req = resolved("{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}");
        let p =
            run(41, &[reserve(&req), confirm("t1", "DOC-1"), generate(&req, "DOC-2"), confirm("t1", "DOC-1")], vec![reserved(40, "t1", NOW + 1000)]);
        assert_eq!(kinds_of(&p), vec![(Some(1), EventKind::NumberConfirmed), (Some(2), EventKind::NumberConfirmed)], "the repeat confirm: no event");
        assert_eq!(p.events[0].1.data["documentNumber"], "O-R-0040-2568");
        assert_eq!(p.events[0].1.data["documentId"], "DOC-1");
        assert_eq!(p.events[1].1.data["sequence"], 43);
    }

    #[test]
    fn a_generate_refused_as_taken_emits_nothing() {
        let req = resolved("{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}");
        let mut p = run(0, &[generate(&req, "DOC-1")], vec![]);
        assert_eq!(p.events.len(), 1);
        p.refuse_taken(["O-R-0001-2568".to_string()]);
        assert!(p.events.is_empty());
    }

    #[test]
    fn a_key_repeated_in_one_batch_takes_one_number_and_its_keys_are_stored_with_their_outcomes() {
        let req = resolved("{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}");
        let caller = Caller::system();
        let key = |k: &str, body: i32| Keyed::new(&caller, &idempotency::IdempotencyKey::parse(k).unwrap(), "RESERVE", &body);
        let (k1, k1_other, k2, k3) = (key("k1", 1), key("k1", 2), key("k2", 1), key("k3", 1));
        let kinds = [reserve(&req), reserve(&req), reserve(&req), reserve(&req), reserve(&req)];
        let stored = Outcome::Issued { number: "O-R-0007-2568".into(), sequence: 7, token: Some("t7".into()), expires_at: None, created_at: 1 };
        let keys = [Some(&k1), Some(&k1), Some(&k1_other), Some(&k2), Some(&k3)];
        let mut answered = [None, None, None, None, Some(Ok(stored.clone()))];
        let jobs: Vec<PlanJob<'_>> = kinds
            .iter()
            .zip(keys)
            .zip(answered.iter_mut())
            .map(|((kind, keyed), answered)| PlanJob { kind, caller: &caller, audit: caller.audit_base(NOW), keyed, answered: answered.take() })
            .collect();
        let mut p =
            plan(&CounterRow { id: CounterId(7), last_number: 0, version: 1 }, jobs, Rows::default(), &Lifecycle::standard(), NOW, || "tok".into());
        assert_eq!(p.last_number, 2, "k1 and k2 take a number each; the repeat, the reuse and the stored key none");
        assert_eq!(p.audits.len(), 2);
        let keys = p.settle_keys(NOW);
        assert_eq!(ok(&p.results[1]), ok(&p.results[0]), "the repeat gets the first's answer");
        assert_eq!(code(&p.results[2]), ErrorCode::IdempotencyKeyReused);
        assert_eq!(ok(&p.results[4]), &stored);
        let stored_keys: Vec<(&str, &Outcome)> =
            keys.iter().map(|k| (k.keyed.key.as_str(), ok(&p.results[if k.keyed.key == "k1" { 0 } else { 3 }]))).collect();
        assert_eq!(stored_keys.len(), 2);
        for (k, outcome) in stored_keys {
            let written = keys.iter().find(|n| n.keyed.key == k).unwrap();
            assert_eq!(serde_json::from_str::<Outcome>(&written.answer).unwrap(), *outcome);
        }
    }

    #[test]
    fn a_keyed_job_refused_after_the_plan_stores_no_key() {
        let req = resolved("{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}");
        let caller = Caller::system();
        let k = Keyed::new(&caller, &idempotency::IdempotencyKey::parse("k").unwrap(), "RESERVE", &1);
        let kinds = [reserve(&req)];
        let jobs = vec![PlanJob { kind: &kinds[0], caller: &caller, audit: caller.audit_base(NOW), keyed: Some(&k), answered: None }];
        let mut p =
            plan(&CounterRow { id: CounterId(7), last_number: 0, version: 1 }, jobs, Rows::default(), &Lifecycle::standard(), NOW, || "tok".into());
        p.refuse_taken(["O-R-0001-2568".to_string()]);
        assert!(p.settle_keys(NOW).is_empty(), "NB005: the retry is decided afresh");
    }

    #[test]
    fn generate_twice_for_one_document_in_a_batch_gives_one_number() {
        let req = resolved("{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}");
        let p = run(0, &[generate(&req, "D"), generate(&req, "D")], vec![]);
        assert_eq!(p.last_number, 1);
        assert_eq!(p.new_numbers.len(), 1);
        assert!(matches!(&p.results[1], Ok(Outcome::Issued { number, sequence: 1, token: None, .. }) if number == "O-R-0001-2568"));
        assert_eq!(p.audits.len(), 1);
    }

    #[test]
    fn confirm_of_a_reserved_number() {
        let p = run(5, &[confirm("t", "DOC-9")], vec![reserved(3, "t", NOW + 1)]);
        assert_eq!(
            ok(&p.results[0]),
            &Outcome::Status { number: "O-R-0003-2568".into(), status: NumberStatus::Confirmed, changed: true, state: State::Confirmed, at: NOW }
        );
        assert_eq!(
            p.changes,
            vec![StatusChange {
                id: NumberId(3),
                status: NumberStatus::Confirmed,
                document_id: Some("DOC-9".into()),
                confirmed_at: Some(NOW),
                cancelled_at: None,
                cancel_reason: None
            }]
        );
        let (i, a) = &p.audits[0];
        assert_eq!(
            (*i, a.operation.as_str(), a.status.as_str(), a.document_id.as_deref(), a.sequence),
            (0, "CONFIRM", "CONFIRMED", Some("DOC-9"), Some(3))
        );
        assert_eq!(a.reservation_token.as_deref(), Some("t"));
        assert_eq!(p.last_number, 5, "a confirm does not move the counter");
        assert!(p.new_numbers.is_empty());
    }

    #[test]
    fn confirm_of_an_expired_reservation_expires_it() {
        let p = run(5, &[confirm("t", "DOC")], vec![reserved(3, "t", NOW)]);
        assert_eq!(code(&p.results[0]), ErrorCode::ReservationExpired);
        assert_eq!(code(&p.results[0]).code(), "NB004");
        assert_eq!(p.changes.len(), 1);
        assert_eq!(
            (p.changes[0].status, p.changes[0].cancel_reason.as_deref(), p.changes[0].cancelled_at),
            (NumberStatus::Cancelled, Some("expired"), Some(NOW))
        );
        let a = &p.audits[0].1;
        assert_eq!((a.operation.as_str(), a.status.as_str()), ("CANCEL", "CANCELLED"));
        assert_eq!(a.metadata.as_deref(), Some(r#"{"reason":"expired"}"#));
    }

    #[test]
    fn double_confirm() {
        // the same document again: idempotent; another document: ALREADY_CONFIRMED
        let p = run(5, &[confirm("t", "A"), confirm("t", "A"), confirm("t", "B")], vec![reserved(3, "t", NOW + 1)]);
        assert!(matches!(p.results[0], Ok(Outcome::Status { changed: true, .. })));
        assert_eq!(
            ok(&p.results[1]),
            &Outcome::Status { number: "O-R-0003-2568".into(), status: NumberStatus::Confirmed, changed: false, state: State::Confirmed, at: NOW }
        );
        assert_eq!(code(&p.results[2]), ErrorCode::AlreadyConfirmed);
        assert_eq!(p.changes.len(), 1);
        assert_eq!(p.audits.len(), 1);
    }

    #[test]
    fn cancel_of_a_reservation() {
        let p = run(5, &[cancel("t"), cancel("t")], vec![reserved(3, "t", NOW + 1)]);
        assert_eq!(
            ok(&p.results[0]),
            &Outcome::Status { number: "O-R-0003-2568".into(), status: NumberStatus::Cancelled, changed: true, state: State::Cancelled, at: NOW }
        );
        assert_eq!(
            ok(&p.results[1]),
            &Outcome::Status { number: "O-R-0003-2568".into(), status: NumberStatus::Cancelled, changed: false, state: State::Cancelled, at: NOW }
        );
        assert_eq!(
            p.changes,
            vec![StatusChange {
                id: NumberId(3),
                status: NumberStatus::Cancelled,
                document_id: None,
                confirmed_at: None,
                cancelled_at: Some(NOW),
                cancel_reason: Some("cancelled".into())
            }]
        );
        assert_eq!(p.audits.len(), 1);
        assert_eq!(p.audits[0].1.metadata.as_deref(), Some(r#"{"reason":"cancelled"}"#));
    }

    #[test]
    fn confirm_after_cancel_is_refused() {
        let p = run(5, &[cancel("t"), confirm("t", "D")], vec![reserved(3, "t", NOW + 1)]);
        assert_eq!(code(&p.results[1]), ErrorCode::ReservationCancelled);
        let p = run(5, &[confirm("t", "D"), cancel("t")], vec![reserved(3, "t", NOW + 1)]);
        assert_eq!(code(&p.results[1]), ErrorCode::AlreadyConfirmed);
    }

    #[test]
    fn unknown_token_is_not_found() {
        let p = run(5, &[confirm("nope", "D")], vec![]);
        assert_eq!(code(&p.results[0]), ErrorCode::NotFound);
    }

    #[test]
    fn sequence_exhausted() {
        let req = resolved("{ORIGINATOR}-{SEQ:2}");
        let p = run(98, &[reserve(&req), reserve(&req)], vec![]);
        assert!(p.results[0].is_ok());
        assert_eq!(code(&p.results[1]), ErrorCode::SequenceExhausted);
        assert_eq!(code(&p.results[1]).code(), "NB002");
        assert_eq!(p.last_number, 99);
        assert_eq!(p.new_numbers.len(), 1);
        assert_eq!(p.audits.len(), 1);
        assert_eq!(max_number(&[&reserve(&req)]), 99);
    }

    #[test]
    fn expiry_cancels_only_what_is_due() {
        let p = run(5, &[expiry("due"), expiry("later"), expiry("due")], vec![reserved(3, "due", NOW), reserved(4, "later", NOW + 1)]);
        assert_eq!(
            ok(&p.results[0]),
            &Outcome::Status { number: "O-R-0003-2568".into(), status: NumberStatus::Cancelled, changed: true, state: State::Expired, at: NOW }
        );
        assert_eq!(
            ok(&p.results[1]),
            &Outcome::Status {
                number: "O-R-0004-2568".into(),
                status: NumberStatus::Reserved,
                changed: false,
                state: State::Reserved,
                at: RESERVED_AT
            }
        );
        assert_eq!(
            ok(&p.results[2]),
            &Outcome::Status { number: "O-R-0003-2568".into(), status: NumberStatus::Cancelled, changed: false, state: State::Expired, at: NOW }
        );
        assert_eq!(p.changes.len(), 1);
        assert_eq!((p.changes[0].id, p.changes[0].cancel_reason.as_deref()), (NumberId(3), Some("expired")));
    }

    #[test]
    fn taken_numbers_fail_with_nb005_and_keep_their_sequence() {
        let req = resolved("{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}");
        let mut p = run(0, &[reserve(&req), reserve(&req)], vec![]);
        assert_eq!(p.rendered(), vec!["O-R-0001-2568".to_string(), "O-R-0002-2568".to_string()]);
        let refused = p.refuse_taken(["O-R-0001-2568".to_string()]);
        assert_eq!(refused, vec!["O-R-0001-2568".to_string()]);
        assert_eq!(code(&p.results[0]), ErrorCode::DuplicateNumber);
        assert!(p.results[1].is_ok());
        assert_eq!(p.last_number, 2);
        assert_eq!(p.new_numbers.iter().map(|(i, _)| *i).collect::<Vec<_>>(), vec![1]);
        let a = &p.audits[0].1;
        assert_eq!((a.status.as_str(), a.reservation_token.as_deref()), ("FAILED", None));
        assert_eq!(a.metadata.as_deref(), Some(r#"{"error":"NB005","reason":"duplicate number"}"#));
    }
}
