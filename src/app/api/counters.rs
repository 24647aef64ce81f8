//! Server functions of the admin pages: counters, counter resets (workflow), super-admin operations.
//! `admin_ops` checks the caller.

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use crate::contract::*;
#[cfg(feature = "ssr")]
use crate::server::admin_ops::{self, NumberRef, Override};
#[cfg(feature = "ssr")]
use crate::server::sfn;

/// Counters with last number and utilization; project admins get their projects' only.
#[server(prefix = "/sfn", input = Json)]
pub async fn list_counters(query: CounterQuery) -> Result<Vec<CounterView>, ApiError> {
    let (state, caller) = sfn::caller().await?;
    let e = state.engine();
    admin_ops::counters(&e.db, &e.reference, &caller, query.project_id, query.correspondence_type_id, query.year).await.map_err(sfn::error)
}

/// Every number of a counter in a window of sequences, and the audit row explaining each missing sequence.
#[server(prefix = "/sfn", input = Json)]
pub async fn fetch_counter_numbers(counter_id: CounterId, after_sequence: Option<i64>, limit: Option<i64>) -> Result<CounterNumbers, ApiError> {
    let (state, caller) = sfn::caller().await?;
    let e = state.engine();
    admin_ops::counter_numbers(&e.db, &e.reference, &e.lifecycle, &caller, counter_id, after_sequence, limit).await.map_err(sfn::error)
}

/// A super admin asks for a counter to restart at `new_value` (default 0); a different one decides.
#[server(prefix = "/sfn", input = Json)]
pub async fn request_counter_reset(counter_id: CounterId, new_value: Option<i64>, reason: String) -> Result<Envelope<ResetRequestView>, ApiError> {
    let (state, caller) = sfn::caller().await?;
    admin_ops::request_reset(state.engine(), &caller, counter_id, new_value, &reason).await.map_err(sfn::error)
}

/// Reset requests, newest first, each with the actions this caller may take (the workflow envelope).
#[server(prefix = "/sfn", input = Json)]
pub async fn list_reset_requests(state: Option<String>, counter_id: Option<CounterId>) -> Result<Vec<Envelope<ResetRequestView>>, ApiError> {
    let (app, caller) = sfn::caller().await?;
    let state = state.filter(|s| !s.trim().is_empty());
    admin_ops::reset_requests(&app.engine().db, &caller, state.as_deref(), counter_id).await.map_err(sfn::error)
}

/// Takes one of the envelope's `availableActions` (APPROVE, REJECT) on a reset request.
#[server(prefix = "/sfn", input = Json)]
pub async fn act_on_reset_request(public_id: String, action: String, comment: Option<String>) -> Result<Envelope<ResetRequestView>, ApiError> {
    let (state, caller) = sfn::caller().await?;
    admin_ops::act_on_reset(state.engine(), &caller, &public_id, &action, comment.as_deref()).await.map_err(sfn::error)
}

#[cfg(feature = "ssr")]
fn number_ref(t: &NumberTarget) -> NumberRef {
    NumberRef {
        project_id: Some(t.project_id),
        correspondence_type_id: Some(t.correspondence_type_id),
        document_number: t.document_number.clone(),
        ..Default::default()
    }
}

/// The next revision of a confirmed number (same sequence, next `{REV}`).
#[server(prefix = "/sfn", input = Json)]
pub async fn revise_number(target: NumberTarget) -> Result<IssuedNumber, ApiError> {
    let (state, caller) = sfn::caller().await?;
    admin_ops::revise(state.engine(), &caller, &number_ref(&target), target.document_id.as_deref(), None).await.map_err(sfn::error)
}

/// Voids a confirmed number and issues its replacement.
#[server(prefix = "/sfn", input = Json)]
pub async fn void_and_replace_number(target: NumberTarget, reason: String) -> Result<VoidResult, ApiError> {
    let (state, caller) = sfn::caller().await?;
    admin_ops::void_and_replace(state.engine(), &caller, &number_ref(&target), &reason, target.document_id.as_deref(), None).await.map_err(sfn::error)
}

/// Voids a confirmed number without a replacement (super admins).
#[server(prefix = "/sfn", input = Json)]
pub async fn void_number(target: NumberTarget, reason: String) -> Result<StatusResult, ApiError> {
    let (state, caller) = sfn::caller().await?;
    admin_ops::void(state.engine(), &caller, &number_ref(&target), &reason).await.map_err(sfn::error)
}

/// Manual override: registers a hand-typed (legacy) number on a counter.
#[server(prefix = "/sfn", input = Json)]
pub async fn override_register_number(
    counter_id: CounterId,
    document_number: String,
    document_id: Option<String>,
    reason: String,
) -> Result<OverrideResult, ApiError> {
    let (state, caller) = sfn::caller().await?;
    let document_id = document_id.filter(|d| !d.trim().is_empty());
    admin_ops::manual_override(state.engine(), &caller, counter_id, Override::Register { document_number, document_id }, &reason)
        .await
        .map_err(sfn::error)
}

/// Manual override: sets a counter to a value at least the highest issued.
#[server(prefix = "/sfn", input = Json)]
pub async fn override_counter_value(counter_id: CounterId, value: i64, reason: String) -> Result<OverrideResult, ApiError> {
    let (state, caller) = sfn::caller().await?;
    admin_ops::manual_override(state.engine(), &caller, counter_id, Override::SetValue(value), &reason).await.map_err(sfn::error)
}
