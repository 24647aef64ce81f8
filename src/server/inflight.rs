//! The requests in flight: which route, since when. A request counts from the moment it is routed until its answer's
//! body has been sent or dropped (a client that hangs up ends it too), so a streamed page counts while it streams.
//!
//! Two readers: `/metrics` (the age of the oldest request per route — the watchdog's gauge, alerted on past a minute),
//! and the stop (`run::serve`): past its deadline it logs what was still in flight before exiting.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};

/// The route label of a request that matched no route (the 404 page, a file of the site root).
pub(crate) const UNMATCHED: &str = "other";

#[derive(Default)]
pub struct InFlight {
    next_id: AtomicU64,
    requests: Mutex<HashMap<u64, (Arc<str>, Instant)>>,
}

/// One request in flight, as long as it is alive.
pub(crate) struct Tracked {
    registry: Arc<InFlight>,
    id: u64,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.registry.requests.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.id);
    }
}

impl InFlight {
    pub(crate) fn begin(self: &Arc<Self>, route: Arc<str>) -> Tracked {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.requests.lock().unwrap_or_else(|e| e.into_inner()).insert(id, (route, Instant::now()));
        Tracked { registry: self.clone(), id }
    }

    /// Every request in flight with its age, oldest first.
    pub fn snapshot(&self) -> Vec<(Arc<str>, Duration)> {
        let now = Instant::now();
        let mut all: Vec<_> =
            self.requests.lock().unwrap_or_else(|e| e.into_inner()).values().map(|(route, since)| (route.clone(), now - *since)).collect();
        all.sort_by_key(|(_, age)| std::cmp::Reverse(*age));
        all
    }

    /// Per route: the age of its oldest request in flight and how many there are.
    pub(crate) fn oldest_by_route(&self) -> Vec<(Arc<str>, Duration, usize)> {
        let mut by_route: HashMap<Arc<str>, (Duration, usize)> = HashMap::new();
        for (route, age) in self.snapshot() {
            let entry = by_route.entry(route).or_default();
            entry.0 = entry.0.max(age);
            entry.1 += 1;
        }
        by_route.into_iter().map(|(route, (age, n))| (route, age, n)).collect()
    }

    pub(crate) fn len(&self) -> usize {
        self.requests.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// Middleware (per route, so the route's pattern is known): counts the request until its answer is sent or dropped.
pub(crate) async fn track(State(registry): State<Arc<InFlight>>, req: Request, next: Next) -> Response {
    // an event stream lasts as long as its browser tab: not a stuck request (the hub counts the streams, and ends them at a stop)
    if req.extensions().get::<MatchedPath>().is_some_and(|p| p.as_str() == crate::contract::live::EVENTS_PATH) {
        return next.run(req).await;
    }
    let route: Arc<str> = req.extensions().get::<MatchedPath>().map(|p| Arc::from(p.as_str())).unwrap_or_else(|| Arc::from(UNMATCHED));
    let tracked = registry.begin(route);
    let response = next.run(req).await;
    // the request stays counted until its answer's body has gone
    response.map(|body| BodyWith::wrap(body, tracked))
}

/// An answer's body with something that must last as long as it: the guard is dropped right after the body (fields drop
/// in declaration order), whether the last frame went or the client hung up. Its size hint is the body's own: without
/// it hyper would send every answer chunked, without Content-Length.
pub(crate) struct BodyWith<G> {
    body: Body,
    _guard: G,
}

impl<G: Unpin + Send + 'static> BodyWith<G> {
    pub(crate) fn wrap(body: Body, guard: G) -> Body {
        Body::new(BodyWith { body, _guard: guard })
    }
}

impl<G: Unpin> http_body::Body for BodyWith<G> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
