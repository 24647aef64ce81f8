//! The table-driven workflow engine (docs/rules/api.md#the-workflow-envelope). States and allowed actions are rows of
//! `workflow_transitions`; the engine reads an instance's state from the database (never from the client),
//! checks the action against that table for the state and the caller's role, moves the state with a version
//! check and appends an event — all inside the caller's transaction, so the owning feature's side effects
//! (e.g. executing a counter reset) commit or roll back with the transition. Responses carry the workflow
//! envelope, whose `availableActions` are the ones the caller may take now.

pub(crate) mod store;

use crate::contract::messages::WorkflowDetail;
use crate::contract::Role;
pub(crate) use crate::contract::{Envelope, EventView, WorkflowContext};
use crate::contract::{UserId, WorkflowInstanceId};
use crate::server::auth::Caller;
use crate::server::db::{ms_to_datetime, Tx};
use crate::server::error::{echo, AppError, ErrorCode};

/// The pseudo-state before an instance exists: transitions from it create instances.
pub(crate) const START: &str = "NEW";

#[derive(Clone, Debug, sqlx::FromRow)]
pub(crate) struct Transition {
    pub(crate) from_state: String,
    pub(crate) action: String,
    pub(crate) to_state: String,
    pub(crate) required_role: String,
    /// ANY, NOT_REQUESTER (four eyes) or REQUESTER.
    pub(crate) actor_rule: String,
}

#[derive(Clone, Debug, sqlx::FromRow)]
pub(crate) struct Instance {
    pub(crate) id: WorkflowInstanceId,
    pub(crate) public_id: String,
    pub(crate) workflow_code: String,
    pub(crate) state: String,
    pub(crate) version: i64,
    pub(crate) created_by: Option<UserId>,
    pub(crate) updated_at: i64,
}

/// Users rank STAFF < PROJECT_ADMIN < SUPER_ADMIN; machine clients hold no workflow role.
fn rank(role: &str) -> Option<u8> {
    Some(match Role::parse(role)? {
        Role::Staff => 0,
        Role::ProjectAdmin => 1,
        Role::SuperAdmin => 2,
    })
}

/// `CLIENT`: whoever may take numbers in the project (a user of any role, an API token, the service itself); the
/// project scope is checked before the workflow is asked (`Caller::require_numbering`).
pub(crate) const ANY_CLIENT: &str = "CLIENT";

fn holds_role(caller: &Caller, required: &str) -> bool {
    if required == ANY_CLIENT {
        return true;
    }
    match (caller.user().and_then(|u| rank(u.role.as_str())), rank(required)) {
        (Some(have), Some(need)) => have >= need,
        _ => false,
    }
}

fn fits_actor_rule(t: &Transition, caller: &Caller, created_by: Option<UserId>) -> bool {
    match t.actor_rule.as_str() {
        "NOT_REQUESTER" => caller.user_id().is_some() && caller.user_id() != created_by,
        "REQUESTER" => caller.user_id().is_some() && caller.user_id() == created_by,
        _ => true,
    }
}

/// One workflow's transitions, as loaded from the table.
#[derive(Clone, Debug)]
pub(crate) struct Machine {
    pub(crate) code: String,
    transitions: Vec<Transition>,
}

impl Machine {
    #[cfg(test)]
    pub(crate) fn new(code: &str, transitions: Vec<Transition>) -> Machine {
        Machine { code: code.to_string(), transitions }
    }

    pub(crate) async fn load<'e>(e: impl sqlx::Executor<'e, Database = sqlx::Any>, code: &str) -> Result<Machine, AppError> {
        let transitions = store::transitions(e, code).await?;
        if transitions.is_empty() {
            return Err(AppError::internal(format!("workflow {code} has no transitions")));
        }
        Ok(Machine { code: code.to_string(), transitions })
    }

    /// The transition `caller` may take with `action` from `state`, or why not: no role in this workflow → 403;
    /// no such action from this state → 409; the transition's role or the four-eyes rule not met → 403.
    pub(crate) fn decide(&self, state: &str, created_by: Option<UserId>, action: &str, caller: &Caller) -> Result<&Transition, AppError> {
        let action = action.trim().to_ascii_uppercase();
        // Someone who takes no part in this workflow learns nothing about its states.
        if !self.transitions.iter().any(|t| holds_role(caller, &t.required_role)) {
            return Err(AppError::forbidden(format!("{} takes no part in workflow {}", caller.display_name(), self.code)));
        }
        let t = self.transitions.iter().find(|t| t.from_state == state && t.action == action).ok_or_else(|| {
            AppError::conflict(ErrorCode::WfInvalidTransition, WorkflowDetail::ActionNotAllowed { action: &echo(&action), state: &state })
        })?;
        if !holds_role(caller, &t.required_role) {
            return Err(AppError::forbidden(format!("{action} needs role {}", t.required_role)));
        }
        if !fits_actor_rule(t, caller, created_by) {
            let who = if t.actor_rule == "NOT_REQUESTER" { "someone other than the requester" } else { "the requester" };
            return Err(AppError::forbidden(format!("{action} must be taken by {who}")));
        }
        Ok(t)
    }

    pub(crate) fn available_actions(&self, instance: &Instance, caller: &Caller) -> Vec<String> {
        self.transitions
            .iter()
            .filter(|t| t.from_state == instance.state && holds_role(caller, &t.required_role) && fits_actor_rule(t, caller, instance.created_by))
            .map(|t| t.action.clone())
            .collect()
    }

    pub(crate) fn context(&self, instance: &Instance, caller: &Caller) -> WorkflowContext {
        let open = self.transitions.iter().any(|t| t.from_state == instance.state);
        WorkflowContext {
            instance_public_id: instance.public_id.clone(),
            current_state: instance.state.clone(),
            available_actions: self.available_actions(instance, caller),
            can_edit: open && self.transitions.iter().any(|t| holds_role(caller, &t.required_role)),
            last_transition_at: ms_to_datetime(instance.updated_at),
        }
    }

    pub(crate) fn envelope<T>(&self, data: T, instance: &Instance, caller: &Caller) -> Envelope<T> {
        Envelope { data, workflow: self.context(instance, caller) }
    }
}

/// Creates an instance through the start transition `action` (checked like any other), inside `tx`.
pub(crate) async fn start(
    tx: &mut Tx<'_>,
    machine: &Machine,
    action: &str,
    caller: &Caller,
    comment: Option<&str>,
    now_ms: i64,
) -> Result<Instance, AppError> {
    let t = machine.decide(START, None, action, caller)?;
    let public_id = uuid::Uuid::new_v4().to_string();
    let id = store::insert_instance(tx, &public_id, &machine.code, &t.to_state, caller.user_id(), now_ms).await?;
    store::insert_event(tx, id, &t.action, START, &t.to_state, caller.user_id(), &caller.display_name(), comment, now_ms).await?;
    Ok(Instance {
        id,
        public_id,
        workflow_code: machine.code.clone(),
        state: t.to_state.clone(),
        version: 0,
        created_by: caller.user_id(),
        updated_at: now_ms,
    })
}

/// Takes `action` on the instance inside `tx`: its state is read here, the action checked against the table,
/// the state moved with a version check (taking the instance's row lock first, so a concurrent second decision
/// waits and then loses cleanly) and the event appended. Returns the moved instance and the transition taken;
/// the caller applies its side effects in the same transaction and commits.
pub(crate) async fn transition(
    tx: &mut Tx<'_>,
    public_id: &str,
    action: &str,
    caller: &Caller,
    comment: Option<&str>,
    now_ms: i64,
) -> Result<(Instance, Machine, Transition), AppError> {
    let instance = store::instance_by_public_id(&mut **tx, public_id).await?.ok_or_else(|| not_found(public_id))?;
    let machine = Machine::load(&mut **tx, &instance.workflow_code).await?;
    let t = machine.decide(&instance.state, instance.created_by, action, caller)?.clone();
    if !store::advance(tx, &instance, &t.to_state, now_ms).await? {
        return Err(AppError::conflict(ErrorCode::WfVersionConflict, WorkflowDetail::TakenByOthers));
    }
    store::insert_event(tx, instance.id, &t.action, &instance.state, &t.to_state, caller.user_id(), &caller.display_name(), comment, now_ms).await?;
    let moved = Instance { state: t.to_state.clone(), version: instance.version + 1, updated_at: now_ms, ..instance };
    Ok((moved, machine, t))
}

/// Which workflow an instance follows (the REST routes dispatch on it); 404 for an unknown id.
pub(crate) async fn workflow_of(db: &crate::server::db::Db, public_id: &str) -> Result<String, AppError> {
    Ok(store::instance_by_public_id(&db.pool, public_id).await?.ok_or_else(|| not_found(public_id))?.workflow_code)
}

pub(crate) fn not_found(public_id: &str) -> AppError {
    AppError::not_found(WorkflowDetail::InstanceNotFound { id: &echo(public_id) })
}
