//! Administrative operations on counters and issued numbers (SPEC §5): counter reset through the workflow
//! engine (one super admin requests, a different one approves), revise, void-and-replace and manual override;
//! and the reads of the counter browser. Every write runs in ONE transaction that holds the counter row the way
//! the batch does (read it locked, then `UPDATE … WHERE version = ?`: `counter_tx::fence`), so it takes turns
//! with the counter's batches on every lock path, and appends its audit rows to the counter's own hash chain.
//! Its counter and number writes go through `numbering::counter_tx`, and a lost race is retried by the same
//! policy as the batch (`counter_tx::retrying`).

pub mod http;
pub mod logs;
pub mod store;
pub mod summary;
pub mod workflows;

use std::collections::{HashMap, HashSet};

use serde_json::json;
use unicode_normalization::UnicodeNormalization;

use crate::contract::{NumberRequest, NumberStatus, ProjectItem, RefItem};
use crate::numbering::{
    next_rev, parse_rev, DocumentId, ParsedNumber, Period, PeriodKey, RenderValues, ResetScope, Segment, Template, Token, MAX_DOCUMENT_ID_CHARS,
    MAX_NUMBER_LEN,
};
use crate::server::audit::{self, counter_chain, AuditEntry, ChainHead};
use crate::server::auth::Caller;
use crate::server::db::{ms_to_datetime, Tx};
use crate::server::error::{AppError, ErrorCode};
use crate::server::numbering::counter_tx::{self, new_confirmed, retrying};
use crate::server::numbering::Engine;
use crate::server::reference::{Part, Snapshot};
use crate::server::templates;
use crate::server::workflow::{self, Envelope, EventView, Instance, Machine};
use store::{sql, Counter, StoredNumber};

pub const RESET_WORKFLOW: &str = "COUNTER_RESET";
pub use crate::contract::MIN_RESET_REASON_CHARS;
const MAX_TEXT_CHARS: usize = 500;
/// Sequences one override may skip: each skipped sequence gets an audit row (SPEC §5: no unexplained gap).
pub const MAX_SKIP: i64 = 100_000;
const MAX_COUNTERS: i64 = 2000;
/// Numbers that were confirmed: a VOID number was confirmed before it was voided, and stays on record.
const CONFIRMED: &[NumberStatus] = &[NumberStatus::Confirmed, NumberStatus::Void];

// ---- views (the shared ones are in `crate::contract`) ----

pub use crate::contract::{
    AuditView, CounterNumbers, CounterView, GapView, IssuedNumber, NumberView, OverrideResult, ReleasedView, ResetRequestView, VoidResult,
};

/// A reset request as stored (see `store::reset_requests`).
#[derive(Clone, Debug)]
pub struct ResetRow {
    pub id: i64,
    pub counter_id: i64,
    pub previous_value: i64,
    pub new_value: i64,
    pub reason: String,
    pub requested_by: String,
    pub requested_at: i64,
    pub instance: Instance,
}

/// Identifies an issued number: its text is unique within (project, correspondence type).
#[derive(Clone, Debug, Default)]
pub struct NumberRef {
    pub project_id: Option<i64>,
    pub project_code: Option<String>,
    pub correspondence_type_id: Option<i64>,
    pub correspondence_type_code: Option<String>,
    pub document_number: String,
}

/// What a manual override does to a counter.
pub enum Override {
    /// Register a number typed by hand (legacy), read with the counter's template.
    Register { document_number: String, document_id: Option<String> },
    /// Move the counter forward to this value.
    SetValue(i64),
}

// ---- the operations as callers see them: each failure recorded in the error log with who and what (SPEC §7) ----

/// Records a failed administrative operation (when its error is of a kind the error log keeps), then hands the
/// result back.
fn logged<T>(s: &Engine, caller: &Caller, operation: &str, context: serde_json::Value, result: Result<T, AppError>) -> Result<T, AppError> {
    if let Err(e) = &result {
        s.errors.record(e, &caller.who(), json!({ "operation": operation, "request": context }));
    }
    result
}

fn number_context(number: &NumberRef) -> serde_json::Value {
    json!({ "projectId": number.project_id, "projectCode": number.project_code, "correspondenceTypeId": number.correspondence_type_id,
            "correspondenceTypeCode": number.correspondence_type_code, "documentNumber": number.document_number })
}

/// See [`request_reset_unlogged`].
pub async fn request_reset(
    s: &Engine,
    caller: &Caller,
    counter_id: i64,
    new_value: Option<i64>,
    reason: &str,
) -> Result<Envelope<ResetRequestView>, AppError> {
    let result = request_reset_unlogged(s, caller, counter_id, new_value, reason).await;
    logged(s, caller, "RESET_REQUEST", json!({ "counterId": counter_id, "newValue": new_value, "reason": reason }), result)
}

/// The seeds' `POST configs/{id}/reset-counter`: a reset request for a counter numbered under configuration
/// `config_id` — of its project and, unless it is the project default, of its type. Then as [`request_reset`].
pub async fn request_reset_of_config(
    s: &Engine,
    caller: &Caller,
    config_id: i64,
    counter_id: i64,
    new_value: Option<i64>,
    reason: &str,
) -> Result<Envelope<ResetRequestView>, AppError> {
    caller.require_admin()?;
    let config = crate::server::templates::current(&s.db, caller, config_id).await?;
    let counter = store::counter(&s.db, counter_id).await?.ok_or_else(|| counter_not_found(counter_id))?;
    let same_type = config.corr_type_id.is_none_or(|t| t == counter.key.corr_type_id);
    if counter.key.project_id != config.project_id || !same_type {
        return Err(AppError::validation(
            format!("ตัวนับ {counter_id} ไม่ได้ใช้การตั้งค่า {config_id}"),
            format!("counter {counter_id} is not numbered under config {config_id}"),
        ));
    }
    request_reset(s, caller, counter_id, new_value, reason).await
}

/// See [`act_on_reset_unlogged`].
pub async fn act_on_reset(
    s: &Engine,
    caller: &Caller,
    public_id: &str,
    action: &str,
    comment: Option<&str>,
) -> Result<Envelope<ResetRequestView>, AppError> {
    let result = act_on_reset_unlogged(s, caller, public_id, action, comment).await;
    logged(s, caller, "RESET_ACTION", json!({ "instancePublicId": public_id, "action": action, "comment": comment }), result)
}

/// See [`revise_unlogged`].
pub async fn revise(s: &Engine, caller: &Caller, number: &NumberRef, document_id: Option<&str>) -> Result<IssuedNumber, AppError> {
    let result = revise_unlogged(s, caller, number, document_id).await;
    logged(s, caller, "REVISE", json!({ "number": number_context(number), "documentId": document_id }), result)
}

/// See [`void_and_replace_unlogged`].
pub async fn void_and_replace(
    s: &Engine,
    caller: &Caller,
    number: &NumberRef,
    reason: &str,
    document_id: Option<&str>,
) -> Result<VoidResult, AppError> {
    let result = void_and_replace_unlogged(s, caller, number, reason, document_id).await;
    logged(s, caller, "VOID_REPLACE", json!({ "number": number_context(number), "reason": reason, "documentId": document_id }), result)
}

/// See [`manual_override_unlogged`].
pub async fn manual_override(s: &Engine, caller: &Caller, counter_id: i64, what: Override, reason: &str) -> Result<OverrideResult, AppError> {
    let described = match &what {
        Override::Register { document_number, document_id } => json!({ "documentNumber": document_number, "documentId": document_id }),
        Override::SetValue(value) => json!({ "value": value }),
    };
    let result = manual_override_unlogged(s, caller, counter_id, what, reason).await;
    logged(s, caller, "MANUAL_OVERRIDE", json!({ "counterId": counter_id, "override": described, "reason": reason }), result)
}

// ---- counter reset (workflow COUNTER_RESET) ----

/// `POST /counters/{id}/reset-requests`: a super admin asks for a counter to restart at `new_value`.
async fn request_reset_unlogged(
    s: &Engine,
    caller: &Caller,
    counter_id: i64,
    new_value: Option<i64>,
    reason: &str,
) -> Result<Envelope<ResetRequestView>, AppError> {
    let user_id = caller.require_super_admin()?.id;
    let reason = &text(reason, MIN_RESET_REASON_CHARS)?;
    let new_value = new_value.unwrap_or(0);
    if new_value < 0 {
        return Err(AppError::validation("ค่าใหม่ของตัวนับต้องไม่ติดลบ", "newValue must be >= 0"));
    }
    let public_id = retrying(|| async move {
        let now = s.clock.now_ms();
        let mut tx = s.db.begin_write().await.map_err(sql)?;
        let (counter, head) = counter_tx::lock_counter(&mut tx, s.db.dialect, counter_id).await?.ok_or_else(|| counter_not_found(counter_id))?;
        let last = counter.row.last_number;
        if new_value > last {
            return Err(AppError::validation(
                format!("ค่าใหม่ ({new_value}) ต้องไม่เกินเลขล่าสุดของตัวนับ ({last}); การเลื่อนตัวนับขึ้นใช้การกำหนดเลขเอง (manual override)"),
                format!("newValue {new_value} is above the counter's last number {last}; raising a counter is a manual override"),
            ));
        }
        check_floor(&mut tx, counter.row.id, new_value).await?;
        if let Some(pending) = store::pending_reset(&mut tx, counter_id, RESET_WORKFLOW).await? {
            return Err(AppError::Conflict {
                code: ErrorCode::ResetAlreadyPending,
                th: "ตัวนับนี้มีคำขอรีเซ็ตที่รออนุมัติอยู่แล้ว".into(),
                en: format!("counter {counter_id} already has a pending reset request {pending}"),
            });
        }
        let machine = Machine::load(&mut *tx, RESET_WORKFLOW).await?;
        let instance = workflow::start(&mut tx, &machine, "REQUEST", caller, Some(reason), now).await?;
        let request_id = store::insert_reset_request(&mut tx, instance.id, counter_id, last, new_value, reason, user_id, now).await?;
        let entry = AuditEntry {
            operation: "RESET_REQUEST".into(),
            status: "PENDING".into(),
            metadata: Some(json!({ "requestId": request_id, "instancePublicId": instance.public_id, "reason": reason }).to_string()),
            ..reset_base(caller, &counter, last, new_value, now)
        };
        audit::append_after(&mut tx, s.db.dialect, &counter_chain(counter_id), Some(&head), &[entry]).await?;
        tx.commit().await.map_err(sql)?;
        Ok(instance.public_id)
    })
    .await?;
    reset_request(s, caller, &public_id).await
}

/// `POST /workflow/{publicId}/actions/{APPROVE|REJECT}` on a reset request. The engine checks the state, the
/// role and the four-eyes rule; on APPROVE the reset is executed in the same transaction as the transition.
async fn act_on_reset_unlogged(
    s: &Engine,
    caller: &Caller,
    public_id: &str,
    action: &str,
    comment: Option<&str>,
) -> Result<Envelope<ResetRequestView>, AppError> {
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
        match t.action.as_str() {
            "APPROVE" => execute_reset(s, &mut tx, caller, &request, comment.as_deref(), now).await?,
            "REJECT" => {
                let (counter, head) = counter_tx::lock_counter(&mut tx, s.db.dialect, request.counter_id)
                    .await?
                    .ok_or_else(|| counter_not_found(request.counter_id))?;
                let entry = AuditEntry {
                    operation: "RESET_REJECT".into(),
                    status: "REJECTED".into(),
                    metadata: Some(json!({ "requestId": request.id, "instancePublicId": public_id, "comment": comment }).to_string()),
                    ..reset_base(caller, &counter, counter.row.last_number, request.new_value, now)
                };
                audit::append_after(&mut tx, s.db.dialect, &counter_chain(counter.row.id), Some(&head), &[entry]).await?;
            }
            _ => {}
        }
        tx.commit().await.map_err(sql)
    })
    .await?;
    reset_request(s, caller, public_id).await
}

/// The reset itself, inside the approval's transaction, with the counter row held like the batch holds it.
async fn execute_reset(s: &Engine, tx: &mut Tx<'_>, caller: &Caller, request: &ResetRow, comment: Option<&str>, now: i64) -> Result<(), AppError> {
    let (counter, head) =
        counter_tx::lock_counter(tx, s.db.dialect, request.counter_id).await?.ok_or_else(|| counter_not_found(request.counter_id))?;
    let (last, new_value) = (counter.row.last_number, request.new_value);
    check_floor(tx, counter.row.id, new_value).await?;
    if new_value > last {
        return Err(AppError::Conflict {
            code: ErrorCode::ResetAboveLast,
            th: format!("เลขล่าสุดของตัวนับ ({last}) ต่ำกว่าค่าที่ขอ ({new_value}) แล้ว การรีเซ็ตนี้จะทำให้เลขขาดช่วง"),
            en: format!("counter {} is at {last}, below the requested {new_value}", counter.row.id),
        });
    }
    // Above the new value nothing was ever confirmed (checked): release it all for reuse, each release audited.
    let released = counter_tx::release_above(tx, counter.row.id, new_value, request.id, now).await?;
    counter_tx::fence(tx, &counter.row, new_value, None, now).await?;
    let base = reset_base(caller, &counter, last, new_value, now);
    let mut entries = vec![AuditEntry {
        operation: "RESET_APPROVE".into(),
        status: "APPROVED".into(),
        metadata: Some(json!({ "requestId": request.id, "instancePublicId": request.instance.public_id, "requestedBy": request.requested_by, "comment": comment }).to_string()),
        ..base.clone()
    }];
    entries.extend(released.iter().map(|n| AuditEntry {
        operation: "RESET_EXECUTE".into(),
        status: "RELEASED".into(),
        document_number: Some(n.number.clone()),
        sequence: Some(n.sequence),
        template_used: Some(n.template.clone()),
        reservation_token: n.token.clone(),
        metadata: Some(json!({ "requestId": request.id, "previousStatus": n.status.as_str(), "revision": n.revision }).to_string()),
        ..base.clone()
    }));
    entries.push(AuditEntry {
        operation: "RESET_EXECUTE".into(),
        status: "SUCCESS".into(),
        metadata: Some(json!({ "requestId": request.id, "released": released.len() }).to_string()),
        ..base
    });
    audit::append_after(tx, s.db.dialect, &counter_chain(counter.row.id), Some(&head), &entries).await.map(drop)
}

/// A counter may not restart below a number that was confirmed: it would issue that number twice.
async fn check_floor(tx: &mut Tx<'_>, counter_id: i64, new_value: i64) -> Result<(), AppError> {
    let floor = store::highest_sequence(tx, counter_id, CONFIRMED).await?;
    if new_value < floor {
        return Err(AppError::Conflict {
            code: ErrorCode::ResetBelowConfirmed,
            th: format!("ค่าใหม่ ({new_value}) ต่ำกว่าเลขลำดับที่ยืนยันแล้วสูงสุด ({floor}) ของตัวนับนี้ จะทำให้ออกเลขที่ซ้ำ"),
            en: format!("newValue {new_value} is below the highest confirmed sequence {floor} of counter {counter_id}"),
        });
    }
    Ok(())
}

fn reset_base(caller: &Caller, counter: &Counter, old: i64, new: i64, now: i64) -> AuditEntry {
    AuditEntry {
        counter_id: Some(counter.row.id),
        counter_key: serde_json::to_string(&counter.key).ok(),
        old_value: Some(old.to_string()),
        new_value: Some(new.to_string()),
        ..caller.audit_base(now)
    }
}

/// One reset request with its envelope (super admins only).
pub async fn reset_request(s: &Engine, caller: &Caller, public_id: &str) -> Result<Envelope<ResetRequestView>, AppError> {
    caller.require_super_admin()?;
    let rows = store::reset_requests(&s.db, Some(public_id), None, None, 1).await?;
    envelopes(s, caller, rows).await?.pop().ok_or_else(|| workflow::not_found(public_id))
}

/// `GET /workflow/reset-requests`: newest first, optionally by state and counter.
pub async fn reset_requests(
    s: &Engine,
    caller: &Caller,
    state: Option<&str>,
    counter_id: Option<i64>,
) -> Result<Vec<Envelope<ResetRequestView>>, AppError> {
    caller.require_super_admin()?;
    let state = state.map(|st| st.trim().to_ascii_uppercase());
    let rows = store::reset_requests(&s.db, None, state.as_deref(), counter_id, 500).await?;
    envelopes(s, caller, rows).await
}

async fn envelopes(s: &Engine, caller: &Caller, rows: Vec<ResetRow>) -> Result<Vec<Envelope<ResetRequestView>>, AppError> {
    let machine = Machine::load(&s.db.pool, RESET_WORKFLOW).await?;
    let ids: Vec<i64> = rows.iter().map(|r| r.instance.id).collect();
    let mut history: HashMap<i64, Vec<EventView>> = HashMap::new();
    for (id, event) in workflow::store::events(&s.db, &ids).await? {
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

/// The next revision of a confirmed number: same sequence, next `{REV}`, no counter consumed (audit GENERATE).
/// Open to whoever may take numbers in the project, like generate.
async fn revise_unlogged(s: &Engine, caller: &Caller, number: &NumberRef, document_id: Option<&str>) -> Result<IssuedNumber, AppError> {
    let snapshot = s.reference.get().await?;
    let (project, corr_type, text) = &locate(&snapshot, number)?;
    caller.require_numbering(project.id)?;
    let document_id = &document_id.map(check_document_id).transpose()?;
    retrying(|| async move {
        let now = s.clock.now_ms();
        let mut tx = s.db.begin_write().await.map_err(sql)?;
        let (counter, head, original) = lock_number(&mut tx, s, project.id, corr_type.id, text).await?;
        require_confirmed(&original)?;
        let template = stored_template(&original)?;
        if !template.segments().iter().any(|seg| matches!(seg, Segment::Token(Token::Rev))) {
            return Err(AppError::validation(
                format!("รูปแบบของเลขที่ {} ไม่มี {{REV}} จึงออกฉบับแก้ไขไม่ได้", original.number),
                format!("the template of {} shows no {{REV}}: a revision could not be told apart", original.number),
            ));
        }
        let parsed = read_back(&template, &original, &project.code)?;
        let latest = store::revisions(&mut tx, counter.row.id, original.sequence).await?.into_iter().max_by_key(|r| parse_rev(r));
        let revision = latest.as_deref().and_then(next_rev).ok_or_else(|| AppError::Conflict {
            code: ErrorCode::RevisionExhausted,
            th: format!("เลขที่ {} ไม่มีรหัสฉบับแก้ไขถัดไปแล้ว", original.number),
            en: format!("no revision label after {latest:?}"),
        })?;
        let number = render_parsed(&template, &parsed, &project.code, &revision);
        counter_tx::refuse_existing(&mut tx, project.id, corr_type.id, &number).await?;
        let document_id = document_id.clone().map(String::from).or_else(|| original.document_id.clone());
        let row = new_confirmed(caller, &counter, original.sequence, &revision, &number, &original.template, document_id.clone(), now);
        counter_tx::insert_number(&mut tx, &row).await?;
        counter_tx::fence(&mut tx, &counter.row, counter.row.last_number, None, now).await?;
        let entry = AuditEntry {
            operation: "GENERATE".into(),
            status: NumberStatus::Confirmed.as_str().into(),
            document_number: Some(number.clone()),
            sequence: Some(original.sequence),
            template_used: Some(original.template.clone()),
            document_id: document_id.clone(),
            metadata: Some(json!({ "revisedFrom": original.number, "revision": revision }).to_string()),
            ..number_base(caller, &counter, now)
        };
        audit::append_after(&mut tx, s.db.dialect, &counter_chain(counter.row.id), Some(&head), &[entry]).await?;
        tx.commit().await.map_err(sql)?;
        Ok(IssuedNumber {
            document_number: number,
            counter_id: counter.row.id,
            sequence: original.sequence,
            revision,
            status: NumberStatus::Confirmed,
            document_id,
            issued_at: ms_to_datetime(now),
            revised_from: Some(original.number),
            replaces: None,
        })
    })
    .await
}

/// Voids a confirmed number (with a reason) and issues its replacement for the same parts — read back from
/// the voided number — under today's template and period, linked both ways in the audit rows. One transaction.
async fn void_and_replace_unlogged(
    s: &Engine,
    caller: &Caller,
    number: &NumberRef,
    reason: &str,
    document_id: Option<&str>,
) -> Result<VoidResult, AppError> {
    caller.require_super_admin()?;
    let reason = &text(reason, 1)?;
    let document_id = &document_id.map(check_document_id).transpose()?;
    let snapshot = s.reference.get().await?;
    let (project, corr_type, text) = &locate(&snapshot, number)?;
    let original = store::number_by_text(&s.db.pool, project.id, corr_type.id, text).await?.ok_or_else(|| number_not_found(text))?;
    require_confirmed(&original)?;
    let parsed = read_back(&stored_template(&original)?, &original, &project.code)?;
    let request = NumberRequest {
        project_id: Some(project.id),
        correspondence_type_id: Some(corr_type.id),
        originator_code: parsed.originator.clone(),
        recipient_code: parsed.recipient.clone(),
        sub_type_number: parsed.sub_type.clone(),
        rfa_type_code: parsed.rfa_type.clone(),
        discipline_code: parsed.discipline.clone(),
        ..Default::default()
    };
    let resolved = &crate::server::numbering::resolve(&snapshot, &request, s.clock.now())?;
    retrying(|| async move {
        let now = s.clock.now_ms();
        let mut tx = s.db.begin_write().await.map_err(sql)?;
        let (old_counter, old_head, original) = lock_number(&mut tx, s, project.id, corr_type.id, text).await?;
        require_confirmed(&original)?;
        // The replacement's counter (today's period; often the same row, already held by this transaction).
        let max = resolved.template.max_seq() as i64;
        let (row, head) = counter_tx::load_or_create_counter(&mut tx, s.db.dialect, &resolved.key, max, now).await?;
        let counter = Counter { row, key: resolved.key.clone(), max_number: max, updated_at: now };
        let sequence = counter.row.last_number + 1;
        if sequence > max {
            return Err(AppError::SequenceExhausted { max: max as u64 });
        }
        let number = resolved.render(sequence as u64);
        counter_tx::refuse_existing(&mut tx, project.id, corr_type.id, &number).await?;
        counter_tx::void_number(&mut tx, original.id, reason, now).await?;
        let document_id = document_id.clone().map(String::from).or_else(|| original.document_id.clone());
        let template = resolved.template.source().to_string();
        let row = new_confirmed(caller, &counter, sequence, &resolved.revision, &number, &template, document_id.clone(), now);
        counter_tx::insert_number(&mut tx, &row).await?;
        counter_tx::fence(&mut tx, &counter.row, sequence, Some(max), now).await?;
        let same_counter = old_counter.row.id == counter.row.id;
        if !same_counter {
            counter_tx::fence(&mut tx, &old_counter.row, old_counter.row.last_number, None, now).await?;
        }
        let voided = AuditEntry {
            operation: "VOID".into(),
            status: NumberStatus::Void.as_str().into(),
            document_number: Some(original.number.clone()),
            sequence: Some(original.sequence),
            template_used: Some(original.template.clone()),
            document_id: original.document_id.clone(),
            metadata: Some(json!({ "reason": reason, "replacedBy": number }).to_string()),
            ..number_base(caller, &old_counter, now)
        };
        let generated = AuditEntry {
            operation: "GENERATE".into(),
            status: NumberStatus::Confirmed.as_str().into(),
            document_number: Some(number.clone()),
            sequence: Some(sequence),
            template_used: Some(template),
            document_id: document_id.clone(),
            metadata: Some(json!({ "replaces": original.number, "reason": reason }).to_string()),
            ..number_base(caller, &counter, now)
        };
        if same_counter {
            audit::append_after(&mut tx, s.db.dialect, &counter_chain(counter.row.id), Some(&head), &[voided, generated]).await?;
        } else {
            audit::append_after(&mut tx, s.db.dialect, &counter_chain(old_counter.row.id), Some(&old_head), &[voided]).await?;
            audit::append_after(&mut tx, s.db.dialect, &counter_chain(counter.row.id), Some(&head), &[generated]).await?;
        }
        tx.commit().await.map_err(sql)?;
        Ok(VoidResult {
            voided: original.number.clone(),
            status: NumberStatus::Void,
            replacement: IssuedNumber {
                document_number: number,
                counter_id: counter.row.id,
                sequence,
                revision: resolved.revision.clone(),
                status: NumberStatus::Confirmed,
                document_id,
                issued_at: ms_to_datetime(now),
                revised_from: None,
                replaces: Some(original.number),
            },
        })
    })
    .await
}

// ---- manual override ----

/// A super admin registers a legacy number for a counter, or moves the counter forward (NB007 for anyone else).
async fn manual_override_unlogged(s: &Engine, caller: &Caller, counter_id: i64, what: Override, reason: &str) -> Result<OverrideResult, AppError> {
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
}

/// A manual override checked against its counter before anything is locked (see [`prepare_override`]).
pub struct PreparedOverride {
    legacy: Option<Legacy>,
    set_to: i64,
}

/// Checks what an override asks for against the counter: a value within the counter's range, or a legacy
/// number read with the counter's template (format, parts and period must be the counter's own).
pub fn prepare_override(snapshot: &Snapshot, counter: &Counter, what: Override) -> Result<PreparedOverride, AppError> {
    let (legacy, set_to) = match what {
        Override::SetValue(value) if value < 0 || value > counter.max_number => {
            return Err(AppError::validation(
                format!("ค่าตัวนับต้องอยู่ระหว่าง 0 ถึง {}", counter.max_number),
                format!("value must be within 0..={}", counter.max_number),
            ))
        }
        Override::SetValue(value) => (None, value),
        Override::Register { document_number, document_id } => {
            let project = snapshot.project(Some(counter.key.project_id), None)?;
            let chosen = templates::resolve(snapshot, counter.key.project_id, counter.key.corr_type_id);
            let template =
                Template::parse(&chosen.template).map_err(|_| AppError::internal(format!("stored template '{}' is invalid", chosen.template)))?;
            let text: String = document_number.trim().nfc().collect();
            let parsed = template.parse_number(&text, &project.code).filter(|p| p.seq >= 1).ok_or_else(|| AppError::InvalidFormat {
                th: format!("เลขที่ '{}' ไม่ตรงกับรูปแบบ {}", clip(&text), template.source()),
                en: format!("'{}' does not read as {}", clip(&text), template.source()),
            })?;
            belongs_to(snapshot, chosen.reset_scope, &template, &parsed, counter)?;
            let document_id = document_id.as_deref().map(check_document_id).transpose()?.map(String::from);
            (Some(Legacy { sequence: parsed.seq as i64, revision: parsed.rev.unwrap_or_else(|| "A".into()), text, template, document_id }), 0)
        }
    };
    Ok(PreparedOverride { legacy, set_to })
}

/// Applies a prepared override inside the caller's write transaction (which it does not commit): locks the
/// counter, checks against what is issued, writes the number, moves the counter fenced by its version, and
/// appends the MANUAL_OVERRIDE audit rows (one per sequence passed over) to the counter's chain.
/// `reason` must already be checked (`check_reason`). Used per row by the bulk import, all rows in one transaction.
pub async fn apply_override(
    s: &Engine,
    tx: &mut Tx<'_>,
    caller: &Caller,
    counter_id: i64,
    prepared: &PreparedOverride,
    reason: &str,
    now: i64,
) -> Result<OverrideResult, AppError> {
    let (legacy, set_to) = (&prepared.legacy, prepared.set_to);
    let (counter, head) = counter_tx::lock_counter(tx, s.db.dialect, counter_id).await?.ok_or_else(|| counter_not_found(counter_id))?;
    let last = counter.row.last_number;
    let base = AuditEntry { operation: "MANUAL_OVERRIDE".into(), ..number_base(caller, &counter, now) };
    let (new_last, mut entries, registered) = match legacy {
        None => {
            // Only forward: lowering a counter is a reset, which needs a second person.
            let floor = last.max(store::highest_sequence(tx, counter_id, &NumberStatus::ALL).await?);
            if set_to < floor {
                return Err(AppError::Conflict {
                    code: ErrorCode::OverrideBelowIssued,
                    th: format!("ค่าที่กำหนด ({set_to}) ต่ำกว่าเลขที่ออกไปแล้ว ({floor}) การลดค่าตัวนับต้องขออนุมัติรีเซ็ต"),
                    en: format!("value {set_to} is below the highest issued {floor}; lowering a counter is a reset"),
                });
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
        Some(l) => {
            counter_tx::refuse_existing(tx, counter.key.project_id, counter.key.corr_type_id, &l.text).await?;
            if store::revisions(tx, counter_id, l.sequence).await?.contains(&l.revision) {
                return Err(AppError::DuplicateNumber(l.text.clone())); // that sequence is held under another rendering
            }
            let row = new_confirmed(caller, &counter, l.sequence, &l.revision, &l.text, l.template.source(), l.document_id.clone(), now);
            counter_tx::insert_number(tx, &row).await?;
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
            let issued = IssuedNumber {
                document_number: l.text.clone(),
                counter_id,
                sequence: l.sequence,
                revision: l.revision.clone(),
                status: NumberStatus::Confirmed,
                document_id: l.document_id.clone(),
                issued_at: ms_to_datetime(now),
                revised_from: None,
                replaces: None,
            };
            (new_last, vec![entry], Some(issued))
        }
    };
    // Moving forward passes over sequences nobody holds: each gets its audit row, so none is an unexplained gap.
    if new_last - last > MAX_SKIP {
        return Err(AppError::validation(
            format!("ข้ามเลขได้ครั้งละไม่เกิน {MAX_SKIP} เลข"),
            format!("an override may pass over at most {MAX_SKIP} sequences"),
        ));
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
    counter_tx::fence(tx, &counter.row, new_last, None, now).await?;
    audit::append_after(tx, s.db.dialect, &counter_chain(counter_id), Some(&head), &entries).await?;
    Ok(OverrideResult { counter_id, previous_last_number: last, last_number: new_last, skipped: skipped_count, registered })
}

/// The reason of an administrative operation: 1–500 characters (what `manual_override` requires).
pub fn check_reason(reason: &str) -> Result<String, AppError> {
    text(reason, 1)
}

/// A legacy number, read and checked against its counter.
struct Legacy {
    text: String,
    sequence: i64,
    revision: String,
    template: Template,
    document_id: Option<String>,
}

/// A legacy number belongs to the counter when the parts and the period it shows are the counter's own.
fn belongs_to(snapshot: &Snapshot, scope: ResetScope, template: &Template, p: &ParsedNumber, c: &Counter) -> Result<(), AppError> {
    let parts = template.key_parts();
    let org = |code: &Option<String>, part| code.as_deref().and_then(|code| snapshot.org(None, Some(code), part).ok()).map(|o| o.id);
    let checks = [
        (Part::Originator, parts.originator, org(&p.originator, Part::Originator), c.key.originator_id),
        (Part::Recipient, parts.recipient, org(&p.recipient, Part::Recipient), c.key.recipient_id),
        (
            Part::SubType,
            parts.sub_type,
            p.sub_type.as_deref().and_then(|n| snapshot.sub_type(c.key.corr_type_id, None, Some(n)).ok()).map(|x| x.id),
            c.key.sub_type_id,
        ),
        (Part::RfaType, parts.rfa_type, p.rfa_type.as_deref().and_then(|x| snapshot.rfa_type(None, Some(x)).ok()).map(|x| x.id), c.key.rfa_type_id),
        (
            Part::Discipline,
            parts.discipline,
            p.discipline.as_deref().and_then(|x| snapshot.discipline(None, Some(x)).ok()).map(|x| x.id),
            c.key.discipline_id,
        ),
    ];
    let mismatch = |th: &str, en: &str| AppError::InvalidFormat {
        th: format!("เลขที่นี้ไม่ใช่ของตัวนับที่เลือก ({th} ไม่ตรงกัน)"),
        en: format!("the number does not belong to counter {} ({en} differs)", c.row.id),
    };
    for (part, shown, found, expected) in checks {
        if (if shown { found.unwrap_or(-1) } else { 0 }) != expected {
            let (th, en) = part.names();
            return Err(mismatch(th, en));
        }
    }
    if let Some(code) = &p.corr_type {
        if snapshot.corr_type(None, Some(code)).ok().map(|t| t.id) != Some(c.key.corr_type_id) {
            return Err(mismatch("ประเภทเอกสาร", "correspondence type"));
        }
    }
    // The period the number shows, completed from the counter's own (a yearly counter's month is irrelevant).
    let stored = PeriodKey::parse(&c.key.period);
    let (year, month) = (stored.and_then(|k| k.year()), stored.and_then(|k| k.month()));
    let period = Period { scope, year: p.year.or(year).unwrap_or(0), month: p.month.or(month).unwrap_or(1) };
    if Some(PeriodKey::of(&period)) != stored {
        return Err(mismatch("ปี/เดือน หรือรอบการนับ", "period"));
    }
    Ok(())
}

// ---- the counter browser ----

/// `GET /counters`: admins; a project admin sees the counters of their projects.
pub async fn counters(
    s: &Engine,
    caller: &Caller,
    project_id: Option<i64>,
    corr_type_id: Option<i64>,
    year: Option<i32>,
) -> Result<Vec<CounterView>, AppError> {
    let user = caller.require_admin()?;
    let scope = caller.admin_scope()?;
    if let Some(p) = project_id {
        caller.require_project_admin(p)?;
    }
    let year = year.map(|y| if y > 2400 { y - 543 } else { y }); // B.E. or A.D.
    let snapshot = s.reference.get().await?;
    // the scope goes into the query, so a project admin's counters are not crowded out by others' under the limit
    let rows = store::counters(&s.db, project_id, scope, corr_type_id, year, MAX_COUNTERS).await?;
    Ok(rows.iter().filter(|c| user.can_edit_templates(c.key.project_id)).map(|c| counter_view(&snapshot, c)).collect())
}

/// `GET /counters/{id}/numbers`: every number in a window of sequences, and for each missing sequence the audit
/// row that explains it.
pub async fn counter_numbers(
    s: &Engine,
    caller: &Caller,
    counter_id: i64,
    after: Option<i64>,
    limit: Option<i64>,
) -> Result<CounterNumbers, AppError> {
    caller.require_admin()?;
    let counter = store::counter(&s.db, counter_id).await?.ok_or_else(|| counter_not_found(counter_id))?;
    caller.require_project_admin(counter.key.project_id)?;
    let limit = limit.unwrap_or(1000).clamp(1, 5000);
    // a window that starts past the largest number the counter can hold (or before 0) asks for numbers that
    // cannot exist: a clear 400, as for a page past the last one
    let ceiling = if counter.max_number > 0 { counter.max_number.max(counter.row.last_number) } else { counter.row.last_number };
    if let Some(a) = after.filter(|a| *a < 0 || *a > ceiling) {
        return Err(AppError::validation(
            format!("afterSequence ต้องอยู่ระหว่าง 0 ถึง {ceiling}"),
            format!("afterSequence {a} is outside 0..={ceiling}, the numbers this counter can hold"),
        ));
    }
    // saturating all the same: the limit comes from the client too
    let from = after.unwrap_or(0).saturating_add(1);
    let window_end = from.saturating_add(limit - 1);
    let to = window_end.min(counter.row.last_number);
    let numbers = if to >= from { store::numbers_between(&s.db, counter_id, from, to).await? } else { Vec::new() };
    let present: HashSet<i64> = numbers.iter().map(|n| n.sequence).collect();
    let missing: Vec<i64> = (from..=to).filter(|q| !present.contains(q)).collect();
    let mut explained: HashMap<i64, AuditView> = HashMap::new();
    for (q, row) in store::audit_for_sequences(&s.db, counter_id, &missing).await? {
        explained.insert(q, row); // oldest first: the latest row wins
    }
    let gaps = missing.iter().map(|q| GapView { sequence: *q, explanation: explained.remove(q) }).collect();
    let released = store::released_between(&s.db, counter_id, from, window_end).await?;
    let snapshot = s.reference.get().await?;
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
    let org = |id: i64, part| (id != 0).then(|| snapshot.org(Some(id), None, part).ok().map(|o| o.code.clone())).flatten();
    CounterView {
        id: c.row.id,
        project_id: k.project_id,
        project_code: snapshot.project(Some(k.project_id), None).map(|p| p.code.clone()).unwrap_or_default(),
        correspondence_type_id: k.corr_type_id,
        correspondence_type_code: snapshot.corr_type(Some(k.corr_type_id), None).map(|t| t.code.clone()).unwrap_or_default(),
        originator_code: org(k.originator_id, Part::Originator),
        recipient_code: org(k.recipient_id, Part::Recipient),
        sub_type_number: (k.sub_type_id != 0)
            .then(|| snapshot.sub_type(k.corr_type_id, Some(k.sub_type_id), None).ok().map(|x| x.sub_type_number.clone()))
            .flatten(),
        rfa_type_code: (k.rfa_type_id != 0).then(|| snapshot.rfa_type(Some(k.rfa_type_id), None).ok().map(|x| x.code.clone())).flatten(),
        discipline_code: (k.discipline_id != 0).then(|| snapshot.discipline(Some(k.discipline_id), None).ok().map(|x| x.code.clone())).flatten(),
        period: k.period.clone(),
        last_number: c.row.last_number,
        max_number: c.max_number,
        utilization: if c.max_number > 0 { c.row.last_number as f64 / c.max_number as f64 } else { 0.0 },
        version: c.row.version,
        updated_at: ms_to_datetime(c.updated_at),
    }
}

// ---- shared helpers ----

/// The number and its counter (with the counter's audit chain head), the counter locked; the number is read again
/// under the lock.
async fn lock_number(
    tx: &mut Tx<'_>,
    s: &Engine,
    project_id: i64,
    corr_type_id: i64,
    text: &str,
) -> Result<(Counter, ChainHead, StoredNumber), AppError> {
    let found = store::number_by_text(&mut **tx, project_id, corr_type_id, text).await?.ok_or_else(|| number_not_found(text))?;
    let (counter, head) = counter_tx::lock_counter(tx, s.db.dialect, found.counter_id).await?.ok_or_else(|| counter_not_found(found.counter_id))?;
    let found = store::number_by_text(&mut **tx, project_id, corr_type_id, text).await?.ok_or_else(|| number_not_found(text))?;
    Ok((counter, head, found))
}

fn number_base(caller: &Caller, c: &Counter, now: i64) -> AuditEntry {
    AuditEntry { counter_id: Some(c.row.id), counter_key: serde_json::to_string(&c.key).ok(), ..caller.audit_base(now) }
}

fn require_confirmed(n: &StoredNumber) -> Result<(), AppError> {
    if n.status == NumberStatus::Confirmed {
        return Ok(());
    }
    Err(AppError::Conflict {
        code: ErrorCode::NotConfirmed,
        th: format!("เลขที่ {} มีสถานะ {} ไม่ใช่เลขที่ยืนยันแล้ว", n.number, n.status),
        en: format!("{} is {}, not CONFIRMED", n.number, n.status),
    })
}

fn stored_template(n: &StoredNumber) -> Result<Template, AppError> {
    Template::parse(&n.template).map_err(|_| AppError::internal(format!("stored template '{}' of {} is invalid", n.template, n.number)))
}

fn render_parsed(t: &Template, p: &ParsedNumber, project: &str, rev: &str) -> String {
    t.render(&RenderValues {
        project,
        originator: p.originator.as_deref().unwrap_or(""),
        recipient: p.recipient.as_deref().unwrap_or(""),
        corr_type: p.corr_type.as_deref().unwrap_or(""),
        sub_type: p.sub_type.as_deref().unwrap_or(""),
        rfa_type: p.rfa_type.as_deref().unwrap_or(""),
        discipline: p.discipline.as_deref().unwrap_or(""),
        seq: p.seq,
        year: p.year.unwrap_or(0),
        month: p.month.unwrap_or(1),
        rev,
    })
}

/// The parts of an issued number, read back through the template it was issued with (and rendered again to be sure).
fn read_back(t: &Template, n: &StoredNumber, project_code: &str) -> Result<ParsedNumber, AppError> {
    t.parse_number(&n.number, project_code).filter(|p| render_parsed(t, p, project_code, p.rev.as_deref().unwrap_or("")) == n.number).ok_or_else(
        || AppError::InvalidFormat {
            th: format!("อ่านส่วนประกอบของเลขที่ {} ตามรูปแบบ {} ไม่ได้", n.number, n.template),
            en: format!("{} does not read back through its template {}", n.number, n.template),
        },
    )
}

fn locate(snapshot: &Snapshot, r: &NumberRef) -> Result<(ProjectItem, RefItem, String), AppError> {
    let project = snapshot.project(r.project_id, r.project_code.as_deref())?.clone();
    let corr_type = snapshot.corr_type(r.correspondence_type_id, r.correspondence_type_code.as_deref())?.clone();
    let text: String = r.document_number.trim().nfc().collect();
    if text.is_empty() {
        return Err(AppError::validation("ต้องระบุเลขที่เอกสาร (documentNumber)", "documentNumber is required"));
    }
    if text.chars().count() > MAX_NUMBER_LEN {
        return Err(AppError::InvalidFormat {
            th: format!("เลขที่เอกสารยาวเกิน {MAX_NUMBER_LEN} ตัวอักษร"),
            en: format!("documentNumber longer than {MAX_NUMBER_LEN} characters"),
        });
    }
    Ok((project, corr_type, text))
}

/// Free text with at least `min` characters — counted as Unicode characters, not bytes — and at most 500.
fn text(value: &str, min: usize) -> Result<String, AppError> {
    let value: String = value.trim().nfc().collect();
    let n = value.chars().count();
    if n == 0 {
        return Err(AppError::validation("ต้องระบุเหตุผล", "a reason is required"));
    }
    if n < min {
        return Err(AppError::validation(
            format!("เหตุผลต้องมีอย่างน้อย {min} ตัวอักษร (มี {n} ตัวอักษร)"),
            format!("reason must have at least {min} characters, has {n}"),
        ));
    }
    if n > MAX_TEXT_CHARS {
        return Err(AppError::validation(format!("ข้อความยาวเกิน {MAX_TEXT_CHARS} ตัวอักษร"), format!("text longer than {MAX_TEXT_CHARS} characters")));
    }
    Ok(value)
}

fn optional_text(value: Option<&str>) -> Result<Option<String>, AppError> {
    match value.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => text(v, 1).map(Some),
    }
}

fn check_document_id(d: &str) -> Result<DocumentId, AppError> {
    DocumentId::parse(d).map_err(|_| {
        AppError::validation(
            format!("รหัสเอกสารต้องมี 1–{MAX_DOCUMENT_ID_CHARS} ตัวอักษร"),
            format!("documentId must be 1-{MAX_DOCUMENT_ID_CHARS} printable characters"),
        )
    })
}

fn clip(s: &str) -> String {
    s.chars().take(60).collect() // never echo an oversize input back
}

fn counter_not_found(id: i64) -> AppError {
    AppError::not_found(format!("ตัวนับเลขที่ {id}"), format!("counter {id}"))
}

fn number_not_found(number: &str) -> AppError {
    AppError::not_found(format!("เลขที่เอกสาร {}", clip(number)), format!("document number {}", clip(number)))
}
