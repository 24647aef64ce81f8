//! The reactive tree of a page render, torn down when its client hangs up.
//!
//! Leptos cleans up a render's root owner only when the streamed body runs to its end
//! (`leptos_integration_utils`: `owner.unset_with_forced_cleanup()` is the stream's last item), and only draining the
//! stream empties the render's shared context. That context keeps a future per resource (to serialize it into the
//! page); the future holds the resource, the resource its owner, and every owner the shared context: a cycle. A
//! render cut off before its stream ran dry (the client navigated away, lost signal, timed out) stayed behind for
//! good, each resource's task waiting forever — about 0.6 tasks and 1.3 owners (≈ 5 KB) per abandoned page load.
//!
//! [`layer`] puts an empty [`RenderOwner`] slot into the request; the page context fills it with the render's root
//! owner ([`remember`]); when the answer's body is dropped, finished or not (or the handler, before it answered), the
//! shared context's pending futures are dropped (`abandon_pending`, vendor/hydration_context: that breaks the cycle)
//! and the owner gets the cleanup Leptos would have given it at the stream's end. Both are no-ops a second time.
//! Before both, the tree is paused, so that no effect of the torn-down render runs again (see [`CleanUp`]).

use std::sync::{Arc, Mutex};

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use leptos::prelude::use_context;
use leptos::reactive::owner::Owner;

use crate::server::inflight::BodyWith;

/// The root owner of the page rendered for this request, once the render has started.
#[derive(Clone, Default)]
pub(crate) struct RenderOwner(Arc<Mutex<Option<Owner>>>);

impl RenderOwner {
    fn take(&self) -> Option<Owner> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// Called from the page context, inside the render's root owner: keeps that owner for the body's drop.
pub(crate) fn remember() {
    let slot = use_context::<axum::http::request::Parts>().and_then(|parts| parts.extensions.get::<RenderOwner>().cloned());
    if let (Some(slot), Some(owner)) = (slot, Owner::current()) {
        *slot.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(owner);
    }
}

/// Middleware for the page routes (and the 404 page): the slot in, the cleanup when the body goes. A client that
/// hangs up before the first chunk drops this future at its `await` (Leptos answers only once the render has its
/// first chunk): the guard then cleans up as it goes.
pub(crate) async fn layer(mut req: Request, next: Next) -> Response {
    let slot = RenderOwner::default();
    req.extensions_mut().insert(slot.clone());
    let cleanup = CleanUp(slot);
    let response = next.run(req).await;
    response.map(|body| BodyWith::wrap(body, cleanup))
}

/// Cleans up the render's owner, if it has one, when dropped: after the body (the stream that still holds the owner).
struct CleanUp(RenderOwner);

impl Drop for CleanUp {
    fn drop(&mut self) {
        if let Some(owner) = self.0.take() {
            // first pause the tree and wait for its running effects: a `Suspense` boundary re-checks its children in
            // an effect, a task of its own that a resource's answer wakes, on another worker; run during or after the
            // cleanup below, it rendered children whose signals and contexts were gone (a panic in the log). The wait
            // is for at most one render pass of that boundary's children (vendor/reactive_graph: `pause_and_wait`).
            owner.pause_and_wait();
            if let Some(shared) = owner.shared_context() {
                shared.abandon_pending();
            }
            owner.unset_with_forced_cleanup();
        }
    }
}
