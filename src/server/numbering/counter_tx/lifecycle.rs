//! Every number's lifecycle on the workflow engine (docs/rules/numbering.md#the-lifecycle-of-a-number): its states, the actions between
//! them and who may take each are the `NUMBER` rows of `workflow_transitions`. They are loaded once at start (only a
//! migration changes them), like the reference snapshot, and the plans of the batch and of the administrative writes
//! ask them without I/O. A number's state is its stored status; EXPIRED is a CANCELLED number whose reason is
//! `expired`.

use super::store::StoredNumber;
use crate::contract::messages::NumberingDetail;
use crate::contract::NumberStatus;
use crate::contract::{WorkflowContext, WorkflowInstanceId};
use crate::server::auth::Caller;
use crate::server::db::Db;
use crate::server::error::{AppError, ErrorCode};
#[cfg(test)]
use crate::server::workflow::Transition;
use crate::server::workflow::{Instance, Machine, START};

/// Actions the service takes by itself (the expiry sweep; a reset's release of the numbers above its value): never
/// offered to a caller as an available action.
const TAKEN_BY_THE_SERVICE: [Action; 2] = [Action::Expire, Action::Release];

/// Actions taken with the reservation's token (its holder's): not offered where a number is named by its text.
const TAKEN_WITH_THE_TOKEN: [Action; 2] = [Action::Confirm, Action::Cancel];

/// The workflow code of the number lifecycle in `workflow_transitions`.
pub(crate) const WORKFLOW: &str = "NUMBER";

/// The cancel reason of a block's number whose hold ended unconfirmed (state EXPIRED, as `expired`).
pub(crate) const BLOCK_EXPIRED: &str = "block expired";

/// Where a number is in its lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum State {
    Reserved,
    Confirmed,
    Cancelled,
    Expired,
    Void,
}

impl State {
    pub(crate) fn of(status: NumberStatus, cancel_reason: Option<&str>) -> State {
        match status {
            NumberStatus::Reserved => State::Reserved,
            NumberStatus::Confirmed => State::Confirmed,
            NumberStatus::Cancelled if matches!(cancel_reason, Some("expired" | BLOCK_EXPIRED)) => State::Expired,
            NumberStatus::Cancelled => State::Cancelled,
            NumberStatus::Void => State::Void,
        }
    }

    /// A stored number's state. `StoredNumber` has no cancel reason: an expired one reads as CANCELLED (the two
    /// are alike for the administrative writes, which read stored numbers: both may be released, neither revised).
    pub(crate) fn of_stored(n: &StoredNumber) -> State {
        State::of(n.status, None)
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            State::Reserved => "RESERVED",
            State::Confirmed => "CONFIRMED",
            State::Cancelled => "CANCELLED",
            State::Expired => "EXPIRED",
            State::Void => "VOID",
        }
    }
}

/// What may happen to a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Reserve,
    Generate,
    Confirm,
    Cancel,
    Expire,
    Revise,
    Void,
    Release,
}

impl Action {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Action::Reserve => "RESERVE",
            Action::Generate => "GENERATE",
            Action::Confirm => "CONFIRM",
            Action::Cancel => "CANCEL",
            Action::Expire => "EXPIRE",
            Action::Revise => "REVISE",
            Action::Void => "VOID",
            Action::Release => "RELEASE",
        }
    }
}

/// The number lifecycle's machine.
#[derive(Clone, Debug)]
pub struct Lifecycle {
    machine: Machine,
}

impl Lifecycle {
    pub(crate) async fn load(db: &Db) -> Result<Lifecycle, AppError> {
        Ok(Lifecycle { machine: Machine::load(&db.pool, WORKFLOW).await? })
    }

    #[cfg(test)]
    pub(crate) fn from_transitions(transitions: Vec<Transition>) -> Lifecycle {
        Lifecycle { machine: Machine::new(WORKFLOW, transitions) }
    }

    /// Whether `caller` may take `action` on `number`, in `state` (None: a number about to be issued). A refusal
    /// in the table is answered in the number's own words where docs/rules/api.md#errors has them (NB codes), else as the workflow
    /// engine answers (409 WF_INVALID_TRANSITION; 403 for a role or actor rule not met).
    pub(crate) fn allow(&self, state: Option<State>, action: Action, caller: &Caller, number: &str) -> Result<(), AppError> {
        let from = state.map_or(START, State::as_str);
        match self.machine.decide(from, None, action.as_str(), caller) {
            Ok(_) => Ok(()),
            Err(engine @ AppError::Conflict { code: ErrorCode::WfInvalidTransition, .. }) => {
                Err(state.and_then(|s| refusal(s, action, number)).unwrap_or(engine))
            }
            Err(other) => Err(other),
        }
    }

    /// The workflow context of a number (docs/rules/api.md#the-workflow-envelope): its state, when it last changed, and what `caller` may do
    /// with it next, from the table. `public_id` names the number's instance: its reservation token where it has one,
    /// else the number itself.
    pub(crate) fn context(&self, public_id: &str, state: State, at_ms: i64, caller: &Caller) -> WorkflowContext {
        let instance = Instance {
            id: WorkflowInstanceId::NONE,
            public_id: public_id.to_string(),
            workflow_code: WORKFLOW.to_string(),
            state: state.as_str().to_string(),
            version: 0,
            created_by: None,
            updated_at: at_ms,
        };
        let mut context = self.machine.context(&instance, caller);
        context.available_actions.retain(|a| !TAKEN_BY_THE_SERVICE.iter().any(|t| t.as_str() == a));
        context.can_edit = context.can_edit && !context.available_actions.is_empty();
        context
    }

    /// What `caller` may do with a number named by its text, as the counter browser lists it: the context's actions
    /// but those that need the reservation's token, which only its holder has.
    pub(crate) fn actions_on_number(&self, number: &str, state: State, caller: &Caller) -> Vec<String> {
        let mut actions = self.context(number, state, 0, caller).available_actions;
        actions.retain(|a| !TAKEN_WITH_THE_TOKEN.iter().any(|t| t.as_str() == a));
        actions
    }

    /// The lifecycle the migration seeds (`…_number_lifecycle.sql`), for the unit tests of the plans.
    #[cfg(test)]
    pub(crate) fn standard() -> Lifecycle {
        Lifecycle::from_transitions(standard_rows())
    }
}

/// The rows of the migration that seeds the lifecycle.
#[cfg(test)]
fn standard_rows() -> Vec<Transition> {
    let t = |from: &str, action: &str, to: &str, role: &str| Transition {
        from_state: from.into(),
        action: action.into(),
        to_state: to.into(),
        required_role: role.into(),
        actor_rule: "ANY".into(),
    };
    vec![
        t("NEW", "RESERVE", "RESERVED", "CLIENT"),
        t("NEW", "GENERATE", "CONFIRMED", "CLIENT"),
        t("RESERVED", "CONFIRM", "CONFIRMED", "CLIENT"),
        t("RESERVED", "CANCEL", "CANCELLED", "CLIENT"),
        t("RESERVED", "EXPIRE", "EXPIRED", "CLIENT"),
        t("CONFIRMED", "REVISE", "CONFIRMED", "CLIENT"),
        t("CONFIRMED", "VOID", "VOID", "SUPER_ADMIN"),
        t("RESERVED", "RELEASE", "RELEASED", "SUPER_ADMIN"),
        t("CANCELLED", "RELEASE", "RELEASED", "SUPER_ADMIN"),
        t("EXPIRED", "RELEASE", "RELEASED", "SUPER_ADMIN"),
    ]
}

/// The refusals docs/rules/api.md#errors words for a number.
fn refusal(state: State, action: Action, number: &str) -> Option<AppError> {
    fn conflict(code: ErrorCode, detail: NumberingDetail<'_>) -> Option<AppError> {
        Some(AppError::conflict(code, detail))
    }
    match (state, action) {
        (State::Confirmed, Action::Confirm) => conflict(ErrorCode::AlreadyConfirmed, NumberingDetail::AlreadyConfirmedElsewhere { number: &number }),
        (State::Confirmed | State::Void, Action::Cancel) => {
            conflict(ErrorCode::AlreadyConfirmed, NumberingDetail::ConfirmedNotCancellable { number: &number })
        }
        (State::Expired, Action::Confirm) => Some(AppError::ReservationExpired),
        (State::Cancelled | State::Void, Action::Confirm) => {
            conflict(ErrorCode::ReservationCancelled, NumberingDetail::ReservationCancelled { number: &number })
        }
        (s, Action::Revise | Action::Void) if s != State::Confirmed => {
            conflict(ErrorCode::NotConfirmed, NumberingDetail::NotConfirmed { number: &number, state: &s.as_str() })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_decides_and_a_refusal_speaks_the_numbers_language() {
        let lifecycle = Lifecycle::standard();
        let client = Caller::system();
        assert!(lifecycle.allow(None, Action::Reserve, &client, "").is_ok());
        assert!(lifecycle.allow(Some(State::Reserved), Action::Confirm, &client, "N-1").is_ok());
        let code = |r: Result<(), AppError>| r.unwrap_err().code();
        assert_eq!(code(lifecycle.allow(Some(State::Confirmed), Action::Cancel, &client, "N-1")), ErrorCode::AlreadyConfirmed);
        assert_eq!(code(lifecycle.allow(Some(State::Expired), Action::Confirm, &client, "N-1")), ErrorCode::ReservationExpired);
        assert_eq!(code(lifecycle.allow(Some(State::Void), Action::Confirm, &client, "N-1")), ErrorCode::ReservationCancelled);
        assert_eq!(code(lifecycle.allow(Some(State::Cancelled), Action::Revise, &client, "N-1")), ErrorCode::NotConfirmed);
        // no words of its own: the engine's
        assert_eq!(code(lifecycle.allow(Some(State::Confirmed), Action::Release, &client, "N-1")), ErrorCode::WfInvalidTransition);
        // voiding needs a super admin: the system caller holds no user role
        assert_eq!(code(lifecycle.allow(Some(State::Confirmed), Action::Void, &client, "N-1")), ErrorCode::Forbidden);
    }

    #[test]
    fn a_numbers_context_offers_what_the_caller_may_do_and_never_the_services_own_actions() {
        let lifecycle = Lifecycle::standard();
        let client = Caller::system();
        let reserved = lifecycle.context("tok-1", State::Reserved, 1_700_000_000_000, &client);
        assert_eq!(reserved.instance_public_id, "tok-1");
        assert_eq!(reserved.current_state, "RESERVED");
        assert_eq!(reserved.available_actions, vec!["CONFIRM".to_string(), "CANCEL".to_string()]);
        assert!(reserved.can_edit);
        assert_eq!(reserved.last_transition_at.timestamp_millis(), 1_700_000_000_000);
        // confirmed: revising is the client's, voiding a super admin's
        let confirmed = lifecycle.context("N-1", State::Confirmed, 0, &client);
        assert_eq!(confirmed.available_actions, vec!["REVISE".to_string()]);
        // cancelled: only the release of a reset, which the service takes: nothing to offer
        let cancelled = lifecycle.context("tok-1", State::Cancelled, 0, &client);
        assert!(cancelled.available_actions.is_empty());
        assert!(!cancelled.can_edit);
        // named by its text (the counter browser): what needs the token is not offered
        assert!(lifecycle.actions_on_number("N-1", State::Reserved, &client).is_empty());
        assert_eq!(lifecycle.actions_on_number("N-1", State::Confirmed, &client), vec!["REVISE".to_string()]);
    }

    #[test]
    fn a_transition_taken_out_of_the_table_is_refused() {
        let mut rows = standard_rows();
        rows.retain(|t| !(t.from_state == "RESERVED" && t.action == "CANCEL"));
        let lifecycle = Lifecycle::from_transitions(rows);
        let e = lifecycle.allow(Some(State::Reserved), Action::Cancel, &Caller::system(), "N-1").unwrap_err();
        assert_eq!(e.code(), ErrorCode::WfInvalidTransition);
    }
}
