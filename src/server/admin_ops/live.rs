//! `GET /api/v1/events`: the live screens' event stream (server-sent events), one per browser tab. Each change of the
//! hub (`events`) goes to the subscriber only if the caller may see it: a counter's number to whoever may open that
//! counter (a super admin every counter, a project admin their projects' counters, staff and API tokens the projects
//! they number in: the reservation form previews those numbers); a reset request to super admins (the reset queue is
//! theirs); a template change to whoever may read the project's templates.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::contract::live::LiveEvent;
use crate::contract::Role;
use crate::server::auth::{Caller, Principal};
use crate::server::error::{error_set, AppError, FAILURES, SIGNED_IN};
use crate::server::events::{Events, Subscription};

/// How long a browser waits before reconnecting (`retry:`), after a stop or a lost connection.
pub(crate) const RETRY: Duration = Duration::from_secs(2);
/// A comment this often keeps proxies from closing an idle stream, and finds a client that hung up.
pub(crate) const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Whether `caller` may see `event` (see the module's comment).
pub(crate) fn may_see(caller: &Caller, event: &LiveEvent) -> bool {
    let project = event.project_id();
    match (&caller.principal, event) {
        (Principal::User(u), _) if u.role == Role::SuperAdmin => true,
        (Principal::User(_), LiveEvent::Reset { .. }) | (Principal::Token { .. }, LiveEvent::Reset { .. }) => false,
        (Principal::User(u), LiveEvent::Counter { .. }) if u.is_admin() => u.admin_project_ids.contains(&project),
        (Principal::User(_), LiveEvent::Counter { .. } | LiveEvent::Template { .. }) => true,
        (Principal::Token { project_ids, .. }, _) => project_ids.is_empty() || project_ids.contains(&project),
    }
}

/// The stream of `caller`: `retry:` first, then each event it may see (`id:`, `event:` its kind, `data:` its JSON),
/// until the client hangs up (the subscription is dropped with the body) or the server stops.
pub(crate) fn stream(caller: Caller, subscription: Subscription) -> impl Stream<Item = Result<Event, Infallible>> {
    let hello = futures::stream::once(async { Ok(Event::default().retry(RETRY).comment("live")) });
    let events = futures::stream::unfold((caller, subscription), |(caller, mut subscription)| async move {
        loop {
            let stamped = subscription.next().await?;
            if !may_see(&caller, &stamped.event) {
                continue;
            }
            let Ok(event) = Event::default().id(stamped.id.to_string()).event(stamped.event.kind()).json_data(&stamped.event) else { continue };
            return Some((Ok(event), (caller, subscription)));
        }
    });
    futures::StreamExt::chain(hello, events)
}

// ---- REST ----

error_set!(
    /// The event stream: a caller, and not too many streams at once.
    pub LiveErrors: FAILURES, SIGNED_IN; RateLimited
);

/// The event stream's route (under `/api/v1`).
pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<crate::server::auth::Access>: axum::extract::FromRef<S>,
    Arc<Events>: axum::extract::FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(events))
}

/// `GET /events`: server-sent events while the connection lasts — `counter`, `reset`, `template` (each `data:` a
/// `LiveEvent`), filtered by what the caller may see. At most 16 streams per caller per instance (429 past it).
#[utoipa::path(get, path = "/events",
    responses(
        (status = 200, description = "a `text/event-stream`: `retry:` then one event per change (`id:`, `event:` its kind, \
            `data:` the JSON), a comment every 15 s", content_type = "text/event-stream", body = LiveEvent),
        LiveErrors,
    ),
    tag = "live")]
pub(crate) async fn events(State(hub): State<Arc<Events>>, caller: Caller) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, AppError> {
    let subscription = hub.subscribe(&caller.display_name())?;
    Ok(Sse::new(stream(caller, subscription)).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::UserInfo;
    use crate::contract::{ApiTokenId, CounterId, ProjectId, UserId};

    fn user(role: Role, admin_of: &[ProjectId]) -> Caller {
        let u = UserInfo { id: UserId(1), username: "u".into(), display_name: "u".into(), role, admin_project_ids: admin_of.to_vec() };
        Caller { principal: Principal::User(u), ip: None, user_agent: None }
    }

    fn counter(project_id: ProjectId) -> LiveEvent {
        LiveEvent::bare_counter(project_id, CounterId(1), 1)
    }

    #[test]
    fn each_caller_sees_what_it_may_open() {
        let reset = LiveEvent::Reset { project_id: ProjectId(1), counter_id: CounterId(1), request_id: "r".into(), state: "PENDING".into() };
        let template = LiveEvent::Template { project_id: ProjectId(1), correspondence_type_id: None };
        let superadmin = user(Role::SuperAdmin, &[]);
        let admin_of_2 = user(Role::ProjectAdmin, &[ProjectId(2)]);
        let staff = user(Role::Staff, &[]);
        let token = Caller {
            principal: Principal::Token { id: ApiTokenId(1), name: "t".into(), project_ids: vec![ProjectId(2)] },
            ip: None,
            user_agent: None,
        };
        assert!(may_see(&superadmin, &counter(ProjectId(1))) && may_see(&superadmin, &reset) && may_see(&superadmin, &template));
        assert!(!may_see(&admin_of_2, &counter(ProjectId(1))) && may_see(&admin_of_2, &counter(ProjectId(2))));
        assert!(!may_see(&admin_of_2, &reset) && may_see(&admin_of_2, &template));
        assert!(may_see(&staff, &counter(ProjectId(1))) && !may_see(&staff, &reset) && may_see(&staff, &template));
        assert!(
            !may_see(&token, &counter(ProjectId(1)))
                && may_see(&token, &counter(ProjectId(2)))
                && !may_see(&token, &reset)
                && !may_see(&token, &template)
        );
    }
}
