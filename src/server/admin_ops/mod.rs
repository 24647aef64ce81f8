//! Administrative operations on counters and issued numbers (docs/rules/numbering.md#the-lifecycle-of-a-number): counter reset through the workflow
//! engine (one super admin requests, a different one approves), revise, void-and-replace and manual override;
//! and the reads of the counter browser. Each write: authorize → locate → read under the counter's lock (in ONE
//! transaction, holding the row the way the batch does) → the pure plan of `counter_tx::admin` → `counter_tx::apply`
//! (the counters and their chain heads in one fenced UPDATE, then the rows) → answer. A lost race is retried by
//! the same policy as the batch (`counter_tx::retrying`).

pub(crate) mod http;
// the live screens' event stream (server-sent events), filtered per subscriber
pub(crate) mod live;
pub(crate) mod logs;
pub(crate) mod register;
pub(crate) mod stats;
pub(crate) mod store;
pub(crate) mod summary;
pub(crate) mod workflows;

use std::collections::{HashMap, HashSet};

use serde_json::json;
use unicode_normalization::UnicodeNormalization;

use crate::contract::live::LiveEvent;
use crate::contract::messages::AdminDetail;
use crate::contract::{
    ContractId, CorrespondenceTypeId, CounterId, DisciplineId, NumberRequest, NumberStatus, OrganizationId, ProjectId, ProjectItem, RefItem,
    ResetRequestId, RfaTypeId, StatusResult, SubTypeId, TemplateId, WitnessResume, WorkflowInstanceId,
};
use crate::numbering::{
    DocumentId, ParsedNumber, Period, PeriodKey, ResetScope, Template, DEFAULT_FISCAL_FIRST_MONTH, MAX_DOCUMENT_ID_CHARS, MAX_NUMBER_LEN,
};
use crate::server::auth::Caller;
use crate::server::db::{ms_to_datetime, Conn, Db, Tx};
use crate::server::error::{echo, AppError, ErrorCode};
use crate::server::numbering::committer::counter_event;
use crate::server::numbering::counter_tx::admin::{self, Legacy, OverrideFacts, Prepared};
use crate::server::numbering::counter_tx::lifecycle::{Action, Lifecycle, State};
use crate::server::numbering::counter_tx::{self, retrying, Locked};
use crate::server::numbering::idempotency::{self, IdempotencyKey, Keyed};
use crate::server::numbering::witness::Head;
use crate::server::numbering::{Engine, Keying};
use crate::server::outbox::{self, Event, EventKind};
use crate::server::reference::{Part, ReferenceCache, Snapshot};
use crate::server::templates;
use crate::server::workflow::{self, Envelope, EventView, Instance, Machine};
use store::{sql, Counter, StoredNumber};

pub(crate) const RESET_WORKFLOW: &str = "COUNTER_RESET";
/// A super admin's approval to issue again on a counter whose database is behind its witness (docs/rules/numbering.md#what-is-never-done-twice).
pub(crate) const WITNESS_WORKFLOW: &str = "WITNESS_RESUME";
/// The one action of [`WITNESS_WORKFLOW`]: a super admin approves the resumption, which is done at once.
const WITNESS_RESUME_ACTION: &str = "APPROVE";
pub(crate) use crate::contract::MIN_RESET_REASON_CHARS;
const MAX_TEXT_CHARS: usize = 500;
const MAX_COUNTERS: i64 = 2000;

/// The actions of the reset workflow that act on the counter. The workflow's actions are its rows
/// (`workflow_transitions`); an action this service does not know moves the request without touching the counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ResetDecision {
    Approve,
    Reject,
}

impl ResetDecision {
    fn of(action: &str) -> Option<ResetDecision> {
        match action {
            "APPROVE" => Some(ResetDecision::Approve),
            "REJECT" => Some(ResetDecision::Reject),
            _ => None,
        }
    }
}

/// Numbers that were confirmed: a VOID number was confirmed before it was voided, and stays on record.
const CONFIRMED: &[NumberStatus] = &[NumberStatus::Confirmed, NumberStatus::Void];

// ---- views (the shared ones are in `crate::contract`) ----

pub(crate) use crate::contract::{
    AuditView, CounterNumbers, CounterView, GapView, IssuedNumber, NumberView, OverrideResult, ReleasedView, ResetRequestView, VoidResult,
};

/// A reset request as stored (see `store::reset_requests`).
#[derive(Clone, Debug)]
pub(crate) struct ResetRow {
    pub(crate) id: ResetRequestId,
    pub(crate) counter_id: CounterId,
    pub(crate) previous_value: i64,
    pub(crate) new_value: i64,
    pub(crate) reason: String,
    pub(crate) requested_by: String,
    pub(crate) requested_at: i64,
    pub(crate) instance: Instance,
}

/// Identifies an issued number: its text is unique within (project, correspondence type).
#[derive(Clone, Debug, Default)]
pub(crate) struct NumberRef {
    pub(crate) project_id: Option<ProjectId>,
    pub(crate) project_code: Option<String>,
    pub(crate) correspondence_type_id: Option<CorrespondenceTypeId>,
    pub(crate) correspondence_type_code: Option<String>,
    pub(crate) document_number: String,
}

/// What a manual override does to a counter.
pub(crate) enum Override {
    /// Register a number typed by hand (legacy), read with the counter's template.
    Register { document_number: String, document_id: Option<String> },
    /// Move the counter forward to this value.
    SetValue(i64),
}

// ---- the operations as callers see them: each failure recorded in the error log with who and what
// (docs/rules/numbering.md#audit-and-retention) ----

/// An administrative operation as every entry point runs it: with an `Idempotency-Key`, a repeat answers what the
/// first request answered (the operation gets the key, to store its answer with its commit); a failure is recorded in
/// the error log with who asked and what (docs/rules/numbering.md#audit-and-retention). The operation tells the live
/// screens itself, after its commit.
pub(crate) struct AdminOp<'a> {
    s: &'a Engine,
    caller: &'a Caller,
    operation: &'static str,
    request: serde_json::Value,
}

impl<'a> AdminOp<'a> {
    pub(crate) fn new(s: &'a Engine, caller: &'a Caller, operation: &'static str, request: serde_json::Value) -> Self {
        AdminOp { s, caller, operation, request }
    }

    /// Runs `op`, recording its failure.
    pub(crate) async fn run<T>(self, op: impl std::future::Future<Output = Result<T, AppError>>) -> Result<T, AppError> {
        let result = op.await;
        self.record(result)
    }

    /// Runs `op` once per idempotency key (None: every time), recording its failure.
    pub(crate) async fn run_keyed<T, F, Fut>(self, key: Option<&IdempotencyKey>, op: F) -> Result<T, AppError>
    where
        T: serde::de::DeserializeOwned,
        F: FnOnce(Option<Keyed>) -> Fut,
        Fut: std::future::Future<Output = Result<T, AppError>>,
    {
        let result = async {
            let (keyed, _claim) = match self.s.keying(self.caller, key, self.operation, &self.request).await? {
                Keying::Replay(answer) => return Ok(answer),
                Keying::Fresh(fresh) => fresh.unzip(),
            };
            op(keyed).await
        }
        .await;
        self.record(result)
    }

    fn record<T>(&self, result: Result<T, AppError>) -> Result<T, AppError> {
        if let Err(e) = &result {
            self.s.errors.record(e, &self.caller.who(), json!({ "operation": self.operation, "request": self.request }));
        }
        result
    }
}

fn number_context(number: &NumberRef) -> serde_json::Value {
    json!({ "projectId": number.project_id, "projectCode": number.project_code, "correspondenceTypeId": number.correspondence_type_id,
            "correspondenceTypeCode": number.correspondence_type_code, "documentNumber": number.document_number })
}

/// Tells the live screens (`events`) a reset request's new state, and the counter's number (an approval moved it).
/// After the commit, on an administrator's path: the read costs nothing the numbering path waits for.
async fn announce_reset(s: &Engine, view: &Envelope<ResetRequestView>) {
    let Some(events) = &s.config.events else { return };
    match store::counter(&s.db, view.data.counter_id).await {
        Ok(Some(counter)) => {
            events.publish(LiveEvent::Reset {
                project_id: counter.key.project_id,
                counter_id: counter.row.id,
                request_id: view.workflow.instance_public_id.clone(),
                state: view.workflow.current_state.clone(),
            });
            events.publish(counter_event(&counter.key, counter.row.id, counter.row.last_number));
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e.report(), "live events: reading the reset's counter failed"),
    }
}

/// Tells the live screens a counter's number after an administrator moved it.
async fn announce_counter(s: &Engine, counter_id: CounterId) {
    let Some(events) = &s.config.events else { return };
    match store::counter(&s.db, counter_id).await {
        Ok(Some(counter)) => events.publish(counter_event(&counter.key, counter.row.id, counter.row.last_number)),
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e.report(), "live events: reading the counter failed"),
    }
}

/// `POST /counters/{id}/reset-requests`: a super admin asks for a counter to restart at `new_value`.
pub(crate) async fn request_reset(
    s: &Engine,
    caller: &Caller,
    counter_id: CounterId,
    new_value: Option<i64>,
    reason: &str,
) -> Result<Envelope<ResetRequestView>, AppError> {
    let result = AdminOp::new(s, caller, "RESET_REQUEST", json!({ "counterId": counter_id, "newValue": new_value, "reason": reason }))
        .run(async {
            let user_id = caller.require_super_admin()?.id;
            let reason = &text(reason, MIN_RESET_REASON_CHARS)?;
            let new_value = new_value.unwrap_or(0);
            if new_value < 0 {
                return Err(AppError::validation(AdminDetail::NewValueNegative));
            }
            let public_id = retrying(|| async move {
                let now = s.clock.now_ms();
                let mut tx = s.db.begin_write().await.map_err(sql)?;
                let locked = lock_counter(&mut tx, s, counter_id).await?;
                let floor = store::highest_sequence(&mut tx, counter_id, CONFIRMED).await?;
                let pending = store::pending_reset(&mut tx, counter_id, RESET_WORKFLOW).await?;
                admin::check_reset_request(&locked, floor, pending.as_deref(), new_value)?;
                let machine = Machine::load(&mut *tx, RESET_WORKFLOW).await?;
                let instance = workflow::start(&mut tx, &machine, "REQUEST", caller, Some(reason), now).await?;
                let last = locked.counter.row.last_number;
                let request_id = store::insert_reset_request(&mut tx, instance.id, counter_id, last, new_value, reason, user_id, now).await?;
                let ask = admin::ResetAsk { request_id, instance_public_id: &instance.public_id, new_value };
                counter_tx::apply(&mut tx, &admin::reset_requested(caller, &locked, &ask, reason, now), now).await?;
                let data = json!({ "counterId": counter_id, "instancePublicId": instance.public_id, "previousValue": last, "newValue": new_value,
                                   "reason": reason, "by": caller.display_name() });
                let told = Event::about_counter(EventKind::ResetRequested, counter_id, data).in_project(locked.counter.key.project_id);
                outbox::append(&mut tx, &[told], now).await.map_err(sql)?;
                tx.commit().await.map_err(sql)?;
                Ok(instance.public_id)
            })
            .await?;
            reset_request(&s.db, caller, &public_id).await
        })
        .await;
    if let Ok(view) = &result {
        announce_reset(s, view).await;
    }
    result
}

/// The requirements' `POST configs/{id}/reset-counter`: a reset request for a counter numbered under configuration
/// `config_id` — of its project and, unless it is the project default, of its type. Then as [`request_reset`].
pub(crate) async fn request_reset_of_config(
    s: &Engine,
    caller: &Caller,
    config_id: TemplateId,
    counter_id: CounterId,
    new_value: Option<i64>,
    reason: &str,
) -> Result<Envelope<ResetRequestView>, AppError> {
    caller.require_admin()?;
    let config = crate::server::templates::current(&s.db, caller, config_id).await?;
    let counter = store::counter(&s.db, counter_id).await?.ok_or_else(|| counter_not_found(counter_id))?;
    let same_type = config.correspondence_type_id.is_none_or(|t| t == counter.key.correspondence_type_id);
    if counter.key.project_id != config.project_id || !same_type {
        // no such counter under this configuration
        return Err(AppError::not_found(AdminDetail::CounterOfConfig { counter: &counter_id, config: &config_id }));
    }
    request_reset(s, caller, counter_id, new_value, reason).await
}

/// `POST /workflow/{publicId}/actions/{APPROVE|REJECT}` on a reset request. The engine checks the state, the
/// role and the four-eyes rule; on APPROVE the reset is executed in the same transaction as the transition.
pub(crate) async fn act_on_reset(
    s: &Engine,
    caller: &Caller,
    public_id: &str,
    action: &str,
    comment: Option<&str>,
) -> Result<Envelope<ResetRequestView>, AppError> {
    let result = AdminOp::new(s, caller, "RESET_ACTION", json!({ "instancePublicId": public_id, "action": action, "comment": comment }))
        .run(async {
            let comment = &optional_text(comment)?;
            retrying(|| async move {
                let now = s.clock.now_ms();
                let mut tx = s.db.begin_write().await.map_err(sql)?;
                let (instance, _, t) = workflow::transition(&mut tx, public_id, action, caller, comment.as_deref(), now).await?;
                if instance.workflow_code != RESET_WORKFLOW {
                    return Err(workflow::not_found(public_id));
                }
                let request = store::reset_by_instance(&mut tx, instance.id)
                    .await?
                    .ok_or_else(|| AppError::internal(format!("reset request of {public_id} missing")))?;
                let ask = admin::ResetAsk { request_id: request.id, instance_public_id: public_id, new_value: request.new_value };
                let write = match ResetDecision::of(&t.action) {
                    Some(ResetDecision::Approve) => {
                        let locked = lock_counter(&mut tx, s, request.counter_id).await?;
                        let floor = store::highest_sequence(&mut tx, request.counter_id, CONFIRMED).await?;
                        let above = counter_tx::numbers_above(&mut tx, request.counter_id, request.new_value).await?;
                        let write =
                            admin::reset_approved(&s.lifecycle, caller, &locked, &ask, &request.requested_by, floor, &above, comment.as_deref(), now)?;
                        Some((write, locked.counter.key.project_id, &[EventKind::ResetApproved, EventKind::ResetExecuted][..]))
                    }
                    Some(ResetDecision::Reject) => {
                        let locked = lock_counter(&mut tx, s, request.counter_id).await?;
                        Some((
                            admin::reset_rejected(caller, &locked, &ask, comment.as_deref(), now),
                            locked.counter.key.project_id,
                            &[EventKind::ResetRejected][..],
                        ))
                    }
                    None => None,
                };
                if let Some((write, project_id, told)) = write {
                    counter_tx::apply(&mut tx, &write, now).await?;
                    let data = json!({ "counterId": request.counter_id, "instancePublicId": public_id, "previousValue": request.previous_value,
                                       "newValue": request.new_value, "requestedBy": request.requested_by, "by": caller.display_name(), "comment": comment });
                    let told: Vec<Event> =
                        told.iter().map(|&kind| Event::about_counter(kind, request.counter_id, data.clone()).in_project(project_id)).collect();
                    outbox::append(&mut tx, &told, now).await.map_err(sql)?;
                }
                tx.commit().await.map_err(sql)
            })
            .await?;
            reset_request(&s.db, caller, public_id).await
        })
        .await;
    if let Ok(view) = &result {
        announce_reset(s, view).await;
    }
    result
}

/// The next revision of a confirmed number: same sequence, next `{REV}`, no counter consumed (audit GENERATE).
/// Open to whoever may take numbers in the project, like generate.
pub(crate) async fn revise(
    s: &Engine,
    caller: &Caller,
    number: &NumberRef,
    document_id: Option<&str>,
    key: Option<&IdempotencyKey>,
) -> Result<IssuedNumber, AppError> {
    let request = json!({ "number": number_context(number), "documentId": document_id });
    AdminOp::new(s, caller, "REVISE", request)
        .run_keyed(key, |keyed| async move {
            let keyed = keyed.as_ref();
            let snapshot = s.reference.get().await?;
            let (project, correspondence_type, text) = &locate(&snapshot, number)?;
            caller.require_numbering(project.id)?;
            let document_id = &document_id.map(check_document_id).transpose()?.map(String::from);
            retrying(|| async move {
                let now = s.clock.now_ms();
                let mut tx = s.db.begin_write().await.map_err(sql)?;
                if let Some(answer) = stored_answer_in(&mut tx, keyed, now).await? {
                    return Ok(answer);
                }
                let (locked, original) = lock_number(&mut tx, s, project.id, correspondence_type.id, text).await?;
                let revisions = store::revisions(&mut tx, locked.counter.row.id, original.sequence).await?;
                let (write, issued) = admin::revise(&s.lifecycle, caller, &locked, &original, &project.code, &revisions, document_id.clone(), now)?;
                counter_tx::apply(&mut tx, &write, now).await?;
                store_key(&mut tx, keyed, &issued, now).await?;
                tx.commit().await.map_err(sql)?;
                Ok(issued)
            })
            .await
        })
        .await
        .map(|n| with_workflow(s, caller, n))
}

/// Voids a confirmed number (with a reason) and issues its replacement for the same parts — read back from
/// the voided number — under today's template and period, linked both ways in the audit rows. One transaction.
pub(crate) async fn void_and_replace(
    s: &Engine,
    caller: &Caller,
    number: &NumberRef,
    reason: &str,
    document_id: Option<&str>,
    key: Option<&IdempotencyKey>,
) -> Result<VoidResult, AppError> {
    let request = json!({ "number": number_context(number), "reason": reason, "documentId": document_id });
    AdminOp::new(s, caller, "VOID_REPLACE", request)
        .run_keyed(key, |keyed| async move {
            let keyed = keyed.as_ref();
            caller.require_super_admin()?;
            let reason = &text(reason, 1)?;
            let document_id = &document_id.map(check_document_id).transpose()?.map(String::from);
            let snapshot = s.reference.get().await?;
            let (project, correspondence_type, text) = &locate(&snapshot, number)?;
            let original =
                store::number_by_text(&s.db.pool, project.id, correspondence_type.id, text).await?.ok_or_else(|| number_not_found(text))?;
            s.lifecycle.allow(Some(State::of_stored(&original)), Action::Void, caller, &original.number)?;
            let parsed = admin::read_back(&admin::stored_template(&original)?, &original, &project.code)?;
            let request = admin::parts_request(
                &parsed,
                NumberRequest { project_id: Some(project.id), correspondence_type_id: Some(correspondence_type.id), ..Default::default() },
            );
            let resolved = &crate::server::numbering::resolve(&snapshot, &request, s.clock.now())?;
            retrying(|| async move {
                let now = s.clock.now_ms();
                let mut tx = s.db.begin_write().await.map_err(sql)?;
                if let Some(answer) = stored_answer_in(&mut tx, keyed, now).await? {
                    return Ok(answer);
                }
                let (old, original) = lock_number(&mut tx, s, project.id, correspondence_type.id, text).await?;
                // the replacement's counter: today's period, often the same row (already held by this transaction)
                let max = resolved.template.max_seq() as i64;
                let new = counter_tx::load_or_create_counter(&mut tx, s.db.dialect, &resolved.key, max, now).await?;
                let (write, result) =
                    admin::void_and_replace(&s.lifecycle, caller, &old, &original, &new, resolved, reason, document_id.clone(), now)?;
                counter_tx::apply(&mut tx, &write, now).await?;
                let r = &result.replacement;
                let told = [
                    voided_event(&old, &original, reason, Some(&r.document_number), caller),
                    Event::about_counter(
                        EventKind::NumberConfirmed,
                        r.counter_id,
                        json!({ "counterId": r.counter_id, "documentNumber": r.document_number, "sequence": r.sequence, "documentId": r.document_id,
                                "replaces": original.number }),
                    )
                    .in_project(new.counter.key.project_id),
                ];
                outbox::append(&mut tx, &told, now).await.map_err(sql)?;
                store_key(&mut tx, keyed, &result, now).await?;
                tx.commit().await.map_err(sql)?;
                Ok(result)
            })
            .await
        })
        .await
        .map(|v: VoidResult| {
            let at = v.replacement.issued_at.timestamp_millis();
            VoidResult {
                workflow: Some(s.lifecycle.context(&v.voided, State::Void, at, caller)),
                replacement: with_workflow(s, caller, v.replacement),
                ..v
            }
        })
}

/// Voids a confirmed number without a replacement (super admins; a reason of 1–500 characters): it stays on record as
/// VOID, audited, and its sequence is never issued again.
pub(crate) async fn void(s: &Engine, caller: &Caller, number: &NumberRef, reason: &str) -> Result<StatusResult, AppError> {
    let result = AdminOp::new(s, caller, "VOID", json!({ "number": number_context(number), "reason": reason }))
        .run(async {
            caller.require_super_admin()?;
            let reason = &text(reason, 1)?;
            let snapshot = s.reference.get().await?;
            let (project, correspondence_type, text) = &locate(&snapshot, number)?;
            let at = retrying(|| async move {
                let now = s.clock.now_ms();
                let mut tx = s.db.begin_write().await.map_err(sql)?;
                let (locked, original) = lock_number(&mut tx, s, project.id, correspondence_type.id, text).await?;
                let write = admin::void(&s.lifecycle, caller, &locked, &original, reason, now)?;
                counter_tx::apply(&mut tx, &write, now).await?;
                outbox::append(&mut tx, &[voided_event(&locked, &original, reason, None, caller)], now).await.map_err(sql)?;
                tx.commit().await.map_err(sql)?;
                Ok(now)
            })
            .await?;
            Ok(StatusResult {
                document_number: text.clone(),
                status: NumberStatus::Void,
                workflow: Some(s.lifecycle.context(text, State::Void, at, caller)),
            })
        })
        .await;
    result
}

/// A super admin registers a legacy number for a counter, or moves the counter forward (NB007 for anyone else).
pub(crate) async fn manual_override(
    s: &Engine,
    caller: &Caller,
    counter_id: CounterId,
    what: Override,
    reason: &str,
) -> Result<OverrideResult, AppError> {
    let described = match &what {
        Override::Register { document_number, document_id } => json!({ "documentNumber": document_number, "documentId": document_id }),
        Override::SetValue(value) => json!({ "value": value }),
    };
    let request = json!({ "counterId": counter_id, "override": described, "reason": reason });
    let result = AdminOp::new(s, caller, "MANUAL_OVERRIDE", request)
        .run(async {
            if caller.require_super_admin().is_err() {
                return Err(AppError::ManualOverrideNotAllowed);
            }
            let reason = &text(reason, 1)?;
            let snapshot = s.reference.get().await?;
            let counter = store::counter(&s.db, counter_id).await?.ok_or_else(|| counter_not_found(counter_id))?;
            let prepared = &prepare_override(&snapshot, &counter, what)?;
            retrying(|| async move {
                let now = s.clock.now_ms();
                let mut tx = s.db.begin_write().await.map_err(sql)?;
                let result = apply_override(s, &mut tx, caller, counter_id, prepared, reason, now).await?;
                tx.commit().await.map_err(sql)?;
                Ok(result)
            })
            .await
        })
        .await
        .map(|o| OverrideResult { registered: o.registered.map(|n| with_workflow(s, caller, n)), ..o });
    if result.is_ok() {
        announce_counter(s, counter_id).await;
    }
    result
}

/// A number an administrative write issued, with its lifecycle context: confirmed, named by itself.
fn with_workflow(s: &Engine, caller: &Caller, n: IssuedNumber) -> IssuedNumber {
    let at = n.issued_at.timestamp_millis();
    IssuedNumber { workflow: Some(s.lifecycle.context(&n.document_number, State::Confirmed, at, caller)), ..n }
}

// ---- counter reset (workflow COUNTER_RESET) ----

/// One reset request with its envelope (super admins only).
pub(crate) async fn reset_request(db: &Db, caller: &Caller, public_id: &str) -> Result<Envelope<ResetRequestView>, AppError> {
    caller.require_super_admin()?;
    let rows = store::reset_requests(db, Some(public_id), None, None, 1).await?;
    envelopes(db, caller, rows).await?.pop().ok_or_else(|| workflow::not_found(public_id))
}

/// `GET /workflow/reset-requests`: newest first, optionally by state and counter.
pub(crate) async fn reset_requests(
    db: &Db,
    caller: &Caller,
    state: Option<&str>,
    counter_id: Option<CounterId>,
) -> Result<Vec<Envelope<ResetRequestView>>, AppError> {
    caller.require_super_admin()?;
    let state = state.map(|st| st.trim().to_ascii_uppercase());
    let rows = store::reset_requests(db, None, state.as_deref(), counter_id, 500).await?;
    envelopes(db, caller, rows).await
}

async fn envelopes(db: &Db, caller: &Caller, rows: Vec<ResetRow>) -> Result<Vec<Envelope<ResetRequestView>>, AppError> {
    let machine = Machine::load(&db.pool, RESET_WORKFLOW).await?;
    let ids: Vec<WorkflowInstanceId> = rows.iter().map(|r| r.instance.id).collect();
    let mut history: HashMap<WorkflowInstanceId, Vec<EventView>> = HashMap::new();
    for (id, event) in workflow::store::events(db, &ids).await? {
        history.entry(id).or_default().push(event);
    }
    Ok(rows
        .into_iter()
        .map(|r| {
            let data = ResetRequestView {
                request_id: r.id,
                counter_id: r.counter_id,
                previous_value: r.previous_value,
                new_value: r.new_value,
                reason: r.reason,
                requested_by: r.requested_by,
                requested_at: ms_to_datetime(r.requested_at),
                history: history.remove(&r.instance.id).unwrap_or_default(),
            };
            machine.envelope(data, &r.instance, caller)
        })
        .collect())
}

// ---- revise, void-and-replace ----

/// The notification of a number voided (docs/rules/api.md#notifications-and-live-screens), written with the void.
fn voided_event(locked: &Locked, original: &StoredNumber, reason: &str, replacement: Option<&str>, caller: &Caller) -> Event {
    let data = json!({ "counterId": original.counter_id, "documentNumber": original.number, "sequence": original.sequence,
                       "documentId": original.document_id, "reason": reason, "replacement": replacement, "by": caller.display_name() });
    Event::about_counter(EventKind::NumberVoided, original.counter_id, data).in_project(locked.counter.key.project_id)
}

/// Inside the write's transaction: the answer another instance stored for the key since it was looked up.
async fn stored_answer_in<T: serde::de::DeserializeOwned>(tx: &mut Conn, keyed: Option<&Keyed>, now: i64) -> Result<Option<T>, AppError> {
    match keyed {
        Some(k) => idempotency::answer_in(tx, k, now).await,
        None => Ok(None),
    }
}

/// Stores the key with the write's answer, in its transaction.
async fn store_key(tx: &mut Conn, keyed: Option<&Keyed>, answer: &impl serde::Serialize, now: i64) -> Result<(), AppError> {
    match keyed {
        Some(k) => idempotency::insert_one(tx, &k.answered(answer, now)).await,
        None => Ok(()),
    }
}

// ---- resume past the witnessed head (docs/rules/numbering.md#what-is-never-done-twice) ----
/// `POST /document-numbering/counters/{id}/resume-past-witness` `{reason}`: a super admin approves, through the
/// `WITNESS_RESUME` workflow, issuing again on a counter whose database is behind its witness (a restored backup, a
/// failover that lost commits). The counter moves to the last number the witness saw, each number passed over with
/// an audit row (as a manual override records them: `docnum check` finds them explained), and the witness takes the
/// database's new head. Refused (409) for a counter that is not behind.
pub(crate) async fn resume_past_witness(s: &Engine, caller: &Caller, counter_id: CounterId, reason: &str) -> Result<WitnessResume, AppError> {
    AdminOp::new(s, caller, "RESUME_PAST_WITNESS", json!({ "counterId": counter_id, "reason": reason }))
        .run(async {
            caller.require_super_admin()?;
            let reason = &text(reason, 1)?;
            let counter = store::counter(&s.db, counter_id).await?.ok_or_else(|| counter_not_found(counter_id))?;
            let not_behind = || AppError::conflict(ErrorCode::WfInvalidTransition, AdminDetail::NotBehindWitness { counter: &counter_id });
            let witness = s.config.witness.as_deref().ok_or_else(not_behind)?;
            let witnessed = witness.witnessed(&counter.key).ok_or_else(not_behind)?;
            let (key, witnessed) = (&counter.key, &witnessed);
            let (resumed, head) = retrying(|| async move {
                let now = s.clock.now_ms();
                let mut tx = s.db.begin_write().await.map_err(sql)?;
                let locked = lock_counter(&mut tx, s, counter_id).await?;
                if witness.check(key, &locked.head).is_ok() {
                    return Err(not_behind());
                }
                let machine = Machine::load(&mut *tx, WITNESS_WORKFLOW).await?;
                let instance = workflow::start(&mut tx, &machine, WITNESS_RESUME_ACTION, caller, Some(reason), now).await?;
                let set_to = witnessed.last_number.max(locked.counter.row.last_number);
                let issued = store::highest_sequence(&mut tx, counter_id, &NumberStatus::ALL).await?;
                let why = format!("resume past the witnessed head (workflow {}): {reason}", instance.public_id);
                let (write, o) = admin::manual_override(
                    &s.lifecycle,
                    caller,
                    &locked,
                    &Prepared::SetValue(set_to),
                    &OverrideFacts::HighestIssued(issued),
                    &why,
                    now,
                )?;
                counter_tx::apply(&mut tx, &write, now).await?;
                let after = lock_counter(&mut tx, s, counter_id).await?;
                tx.commit().await.map_err(sql)?;
                let resumed = WitnessResume {
                    counter_id,
                    workflow_public_id: instance.public_id,
                    previous_last_number: o.previous_last_number,
                    last_number: o.last_number,
                    skipped: o.skipped,
                };
                Ok((resumed, Head::of(after.counter.row.last_number, &after.head)))
            })
            .await?;
            witness.resume(key, head).await;
            Ok(resumed)
        })
        .await
}

// ---- manual override ----

/// Checks what an override asks for against the counter before anything is locked: a value within the counter's
/// range, or a legacy number read with the counter's template (format, parts and period must be the counter's own).
pub(crate) fn prepare_override(snapshot: &Snapshot, counter: &Counter, what: Override) -> Result<Prepared, AppError> {
    match what {
        Override::SetValue(value) if value < 0 => Err(AppError::validation(AdminDetail::ValueOutOfRange { max: &counter.max_number })),
        // well formed, but more than this counter's template can number
        Override::SetValue(value) if value > counter.max_number => {
            Err(AppError::conflict(ErrorCode::SequenceExhausted, AdminDetail::ValueAboveMax { max: &counter.max_number }))
        }
        Override::SetValue(value) => Ok(Prepared::SetValue(value)),
        Override::Register { document_number, document_id } => {
            let project = snapshot.project(Some(counter.key.project_id), None)?;
            let chosen = templates::resolve(snapshot, counter.key.project_id, counter.key.correspondence_type_id);
            let template =
                Template::parse(&chosen.template).map_err(|_| AppError::internal(format!("stored template '{}' is invalid", chosen.template)))?;
            let text: String = document_number.trim().nfc().collect();
            let parsed = template
                .parse_number(&text, &project.code)
                .filter(|p| p.seq >= 1)
                .ok_or_else(|| AppError::invalid_format(AdminDetail::NumberNotInTemplate { number: &echo(&text), template: &template.source() }))?;
            belongs_to(snapshot, chosen.reset_scope, &template, &parsed, counter)?;
            let document_id = document_id.as_deref().map(check_document_id).transpose()?.map(String::from);
            let revision = parsed.rev.unwrap_or_else(|| "A".into());
            Ok(Prepared::Register(Legacy { sequence: parsed.seq as i64, revision, text, template, document_id }))
        }
    }
}

/// Applies a prepared override inside the caller's write transaction (which it does not commit): locks the
/// counter, reads what the plan needs, plans (`counter_tx::admin::manual_override`) and applies.
/// `reason` must already be checked (`check_reason`). Used per row by the bulk import, all rows in one transaction.
pub(crate) async fn apply_override(
    s: &Engine,
    tx: &mut Tx<'_>,
    caller: &Caller,
    counter_id: CounterId,
    prepared: &Prepared,
    reason: &str,
    now: i64,
) -> Result<OverrideResult, AppError> {
    let locked = lock_counter(tx, s, counter_id).await?;
    let facts = match prepared {
        Prepared::SetValue(_) => OverrideFacts::HighestIssued(store::highest_sequence(tx, counter_id, &NumberStatus::ALL).await?),
        Prepared::Register(l) => OverrideFacts::Revisions(store::revisions(tx, counter_id, l.sequence).await?),
    };
    let (write, result) = admin::manual_override(&s.lifecycle, caller, &locked, prepared, &facts, reason, now)?;
    counter_tx::apply(tx, &write, now).await?;
    Ok(result)
}

/// The reason of an administrative operation: 1–500 characters (what `manual_override` requires).
pub(crate) fn check_reason(reason: &str) -> Result<String, AppError> {
    text(reason, 1)
}

/// A legacy number belongs to the counter when the parts and the period it shows are the counter's own.
fn belongs_to(snapshot: &Snapshot, scope: ResetScope, template: &Template, p: &ParsedNumber, c: &Counter) -> Result<(), AppError> {
    let parts = template.key_parts();
    let org = |code: &Option<String>, part| code.as_deref().and_then(|code| snapshot.org(None, Some(code), part).ok()).map(|o| o.id.0);
    // (the part's word, whether the template shows it, the id the number's code names, the counter's id of it): plain
    // integers, as the parts are of different kinds
    let checks = [
        (AdminDetail::PartOriginator, parts.originator, org(&p.originator, Part::Originator), c.key.originator_id.0),
        (AdminDetail::PartRecipient, parts.recipient, org(&p.recipient, Part::Recipient), c.key.recipient_id.0),
        (
            AdminDetail::PartSubType,
            parts.sub_type,
            p.sub_type.as_deref().and_then(|n| snapshot.sub_type(c.key.correspondence_type_id, None, Some(n)).ok()).map(|x| x.id.0),
            c.key.sub_type_id.0,
        ),
        (
            AdminDetail::PartRfaType,
            parts.rfa_type,
            p.rfa_type.as_deref().and_then(|x| snapshot.rfa_type(None, Some(x)).ok()).map(|x| x.id.0),
            c.key.rfa_type_id.0,
        ),
        (
            AdminDetail::PartDiscipline,
            parts.discipline,
            p.discipline.as_deref().and_then(|x| snapshot.discipline(None, Some(x)).ok()).map(|x| x.id.0),
            c.key.discipline_id.0,
        ),
    ];
    let mismatch = |part: AdminDetail<'_>| AppError::invalid_format(AdminDetail::NotThisCounter { part: &part });
    for (part, shown, found, expected) in checks {
        if (if shown { found.unwrap_or(-1) } else { 0 }) != expected {
            return Err(mismatch(part));
        }
    }
    if let Some(code) = &p.correspondence_type {
        if snapshot.correspondence_type(None, Some(code)).ok().map(|t| t.id) != Some(c.key.correspondence_type_id) {
            return Err(mismatch(AdminDetail::PartCorrespondenceType));
        }
    }
    // The period the number shows, completed from the counter's own (a yearly counter's month is irrelevant).
    let stored = c.key.period;
    let (year, month) = (stored.year(), stored.month());
    let mut period = Period::of(scope, p.year.or(year).unwrap_or(0), p.month.or(month).unwrap_or(1), DEFAULT_FISCAL_FIRST_MONTH);
    period.fiscal_year = p.fiscal_year.or(stored.fiscal_year()).unwrap_or(0);
    if scope == ResetScope::Contract {
        // a contract counter's period is its contract: the one the number shows
        let shown = p.contract.as_deref().and_then(|code| snapshot.contract_in(c.key.project_id, &crate::numbering::normalize_code(code)));
        period = period.of_contract(shown.map_or(ContractId::NONE, |x| x.id));
    }
    if PeriodKey::of(&period) != stored {
        return Err(mismatch(AdminDetail::PartPeriod));
    }
    Ok(())
}

// ---- the counter browser ----

/// `GET /counters`: admins; a project admin sees the counters of their projects.
pub(crate) async fn counters(
    db: &Db,
    reference: &ReferenceCache,
    caller: &Caller,
    project_id: Option<ProjectId>,
    correspondence_type_id: Option<CorrespondenceTypeId>,
    year: Option<i32>,
) -> Result<Vec<CounterView>, AppError> {
    let user = caller.require_admin()?;
    let scope = caller.admin_scope()?;
    if let Some(p) = project_id {
        caller.require_project_admin(p)?;
    }
    let year = year.map(|y| if y > 2400 { y - 543 } else { y }); // B.E. or A.D.
    let snapshot = reference.get().await?;
    // the scope goes into the query, so a project admin's counters are not crowded out by others' under the limit
    let rows = store::counters(db, project_id, scope, correspondence_type_id, year, MAX_COUNTERS).await?;
    Ok(rows.iter().filter(|c| user.can_edit_templates(c.key.project_id)).map(|c| counter_view(&snapshot, c)).collect())
}

/// `GET /counters/{id}/numbers`: every number in a window of sequences, and for each missing sequence the audit
/// row that explains it.
pub(crate) async fn counter_numbers(
    db: &Db,
    reference: &ReferenceCache,
    lifecycle: &Lifecycle,
    caller: &Caller,
    counter_id: CounterId,
    after: Option<i64>,
    limit: Option<i64>,
) -> Result<CounterNumbers, AppError> {
    caller.require_admin()?;
    let counter = store::counter(db, counter_id).await?.ok_or_else(|| counter_not_found(counter_id))?;
    caller.require_project_admin(counter.key.project_id)?;
    let limit = limit.unwrap_or(1000).clamp(1, 5000);
    // a sequence is never negative (400, as the OpenAPI document says); a window past the last number holds nothing
    if after.is_some_and(|a| a < 0) {
        return Err(AppError::validation(AdminDetail::AfterSequenceNegative));
    }
    // saturating all the same: the limit comes from the client too
    let from = after.unwrap_or(0).saturating_add(1);
    let window_end = from.saturating_add(limit - 1);
    let to = window_end.min(counter.row.last_number);
    let mut numbers = if to >= from { store::numbers_between(db, counter_id, from, to).await? } else { Vec::new() };
    for n in &mut numbers {
        n.available_actions = lifecycle.actions_on_number(&n.document_number, State::of(n.status, n.cancel_reason.as_deref()), caller);
    }
    let present: HashSet<i64> = numbers.iter().map(|n| n.sequence).collect();
    let missing: Vec<i64> = (from..=to).filter(|q| !present.contains(q)).collect();
    let mut explained: HashMap<i64, AuditView> = HashMap::new();
    for (q, row) in store::audit_for_sequences(db, counter_id, &missing).await? {
        explained.insert(q, row); // oldest first: the latest row wins
    }
    let gaps = missing.iter().map(|q| GapView { sequence: *q, explanation: explained.remove(q) }).collect();
    let released = store::released_between(db, counter_id, from, window_end).await?;
    let snapshot = reference.get().await?;
    Ok(CounterNumbers {
        counter: counter_view(&snapshot, &counter),
        numbers,
        gaps,
        released,
        next_after_sequence: (to < counter.row.last_number).then_some(to),
    })
}

fn counter_view(snapshot: &Snapshot, c: &Counter) -> CounterView {
    let k = &c.key;
    let org =
        |id: OrganizationId, part| (id != OrganizationId::NONE).then(|| snapshot.org(Some(id), None, part).ok().map(|o| o.code.clone())).flatten();
    CounterView {
        id: c.row.id,
        project_id: k.project_id,
        project_code: snapshot.project(Some(k.project_id), None).map(|p| p.code.clone()).unwrap_or_default(),
        correspondence_type_id: k.correspondence_type_id,
        correspondence_type_code: snapshot.correspondence_type(Some(k.correspondence_type_id), None).map(|t| t.code.clone()).unwrap_or_default(),
        originator_code: org(k.originator_id, Part::Originator),
        recipient_code: org(k.recipient_id, Part::Recipient),
        sub_type_number: (k.sub_type_id != SubTypeId::NONE)
            .then(|| snapshot.sub_type(k.correspondence_type_id, Some(k.sub_type_id), None).ok().map(|x| x.sub_type_number.clone()))
            .flatten(),
        rfa_type_code: (k.rfa_type_id != RfaTypeId::NONE)
            .then(|| snapshot.rfa_type(Some(k.rfa_type_id), None).ok().map(|x| x.code.clone()))
            .flatten(),
        discipline_code: (k.discipline_id != DisciplineId::NONE)
            .then(|| snapshot.discipline(Some(k.discipline_id), None).ok().map(|x| x.code.clone()))
            .flatten(),
        contract_code: k.period.contract_id().and_then(|id| snapshot.contract_by_id.get(&id).map(|i| snapshot.data.contracts[*i].code.clone())),
        period: k.period.to_string(),
        last_number: c.row.last_number,
        max_number: c.max_number,
        utilization: if c.max_number > 0 { c.row.last_number as f64 / c.max_number as f64 } else { 0.0 },
        version: c.row.version,
        updated_at: ms_to_datetime(c.updated_at),
    }
}

// ---- shared helpers ----

/// The counter by id, locked, with its chain head.
async fn lock_counter(tx: &mut Tx<'_>, s: &Engine, counter_id: CounterId) -> Result<Locked, AppError> {
    counter_tx::lock_counter(tx, s.db.dialect, counter_id).await?.ok_or_else(|| counter_not_found(counter_id))
}

/// The number and its counter (with the counter's audit chain head), the counter locked; the number is read again
/// under the lock.
async fn lock_number(
    tx: &mut Tx<'_>,
    s: &Engine,
    project_id: ProjectId,
    correspondence_type_id: CorrespondenceTypeId,
    text: &str,
) -> Result<(Locked, StoredNumber), AppError> {
    let found = store::number_by_text(&mut **tx, project_id, correspondence_type_id, text).await?.ok_or_else(|| number_not_found(text))?;
    let locked = lock_counter(tx, s, found.counter_id).await?;
    let found = store::number_by_text(&mut **tx, project_id, correspondence_type_id, text).await?.ok_or_else(|| number_not_found(text))?;
    Ok((locked, found))
}

fn locate(snapshot: &Snapshot, r: &NumberRef) -> Result<(ProjectItem, RefItem<CorrespondenceTypeId>, String), AppError> {
    let project = snapshot.project(r.project_id, r.project_code.as_deref())?.clone();
    let correspondence_type = snapshot.correspondence_type(r.correspondence_type_id, r.correspondence_type_code.as_deref())?.clone();
    let text: String = r.document_number.trim().nfc().collect();
    if text.is_empty() {
        return Err(AppError::validation(AdminDetail::DocumentNumberRequired));
    }
    if text.chars().count() > MAX_NUMBER_LEN {
        return Err(AppError::invalid_format(AdminDetail::DocumentNumberTooLong { max: &MAX_NUMBER_LEN }));
    }
    Ok((project, correspondence_type, text))
}

/// Free text with at least `min` characters — counted as Unicode characters, not bytes — and at most 500.
fn text(value: &str, min: usize) -> Result<String, AppError> {
    // counted as sent (trimmed), so that the OpenAPI document's pattern says the same; stored NFC-normalised
    let value = value.trim();
    let n = value.chars().count();
    if n == 0 {
        return Err(AppError::validation(AdminDetail::ReasonRequired));
    }
    if n < min {
        return Err(AppError::validation(AdminDetail::ReasonTooShort { min: &min, count: &n }));
    }
    if n > MAX_TEXT_CHARS {
        return Err(AppError::validation(AdminDetail::TextTooLong { max: &MAX_TEXT_CHARS }));
    }
    Ok(value.nfc().collect())
}

fn optional_text(value: Option<&str>) -> Result<Option<String>, AppError> {
    match value.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => text(v, 1).map(Some),
    }
}

fn check_document_id(d: &str) -> Result<DocumentId, AppError> {
    DocumentId::parse(d).map_err(|_| AppError::validation(AdminDetail::DocumentIdLength { max: &MAX_DOCUMENT_ID_CHARS }))
}

fn counter_not_found(id: CounterId) -> AppError {
    AppError::not_found(AdminDetail::CounterNotFound { id: &id })
}

fn number_not_found(number: &str) -> AppError {
    AppError::not_found(AdminDetail::NumberNotFound { number: &echo(number) })
}
