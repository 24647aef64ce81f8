//! The live events' hub (docs/rules/api.md#notifications-and-live-screens): every feature hands it what changed
//! (plain values, no caller), and the event
//! streams (`admin_ops::live`) pass each change to the subscribers who may see it.
//!
//! Publishing never waits: a counter's change goes into a map under a short lock (the latest value per counter wins)
//! and a flusher task sends what gathered every [`COALESCE`]; so a counter issuing thousands of numbers a second
//! costs its committer one map insert per batch and its viewers a few events a second. The other events go out at once
//! (`broadcast::send` does not wait either; a subscriber that falls [`BACKLOG`] events behind is ended and reconnects).
//!
//! With Redis (`REDIS_URLS`), each instance also PUBLISHes its own changes on a channel named after the database
//! (instances of one service share it, other services on the same Redis do not), and SUBSCRIBEs to it on a connection
//! of its own, dropping its own messages by an instance id. Redis down: local events still flow; the subscriber
//! reconnects with backoff.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures::StreamExt;
use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, mpsc, watch, Notify};

use crate::contract::live::LiveEvent;
use crate::numbering::CounterId;
use crate::server::error::AppError;
use crate::server::kept_redis::KeptRedis;

/// How long counter changes gather before they are sent: the most a viewer waits, the fewest events a hot counter sends.
pub(crate) const COALESCE: Duration = Duration::from_millis(200);
/// Events a subscriber may fall behind before its stream ends (the browser reconnects and fetches afresh).
const BACKLOG: usize = 1024;
/// Streams open at once on one instance, and per caller (user or API token): one per browser tab, with room.
pub(crate) const MAX_STREAMS: usize = 2000;
pub const MAX_STREAMS_PER_CALLER: usize = 16;
/// Local events waiting for Redis; past it they are not sent to the other instances (they still reach local viewers).
const OUTBOX: usize = 4096;
/// The subscriber's waits between reconnections to Redis.
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// One event as sent: its id (per instance, increasing) and what changed.
#[derive(Debug)]
pub(crate) struct Stamped {
    pub(crate) id: u64,
    pub(crate) event: LiveEvent,
}

pub struct Events {
    sender: broadcast::Sender<Arc<Stamped>>,
    next_id: AtomicU64,
    /// Counter changes waiting for the flusher, by counter id.
    pending: Mutex<HashMap<CounterId, LiveEvent>>,
    wake: Arc<Notify>,
    /// true once the server stops: every stream ends.
    closed: watch::Sender<bool>,
    streams: AtomicUsize,
    per_caller: Mutex<HashMap<String, usize>>,
    /// Local events on their way to Redis (None: no Redis).
    outbox: Option<mpsc::Sender<LiveEvent>>,
}

/// What travels on the Redis channel: the sending instance and its event.
#[derive(Serialize, Deserialize)]
struct Wire {
    from: String,
    event: LiveEvent,
}

impl Events {
    /// The hub, its flusher and, with `redis_urls`, its bridge to the other instances (on the first server: a channel
    /// is not a lock, it needs no quorum) on the channel of `database` (its identity). Needs a Tokio runtime.
    pub(crate) fn start(redis_urls: &[String], database: &str) -> Result<Arc<Events>, AppError> {
        let bridge = match redis_urls.first() {
            Some(url) => Some(crate::server::tls::redis_client(url).map_err(|e| AppError::internal(format!("REDIS_URLS (events): {e}")))?),
            None => None,
        };
        let (outbox, outbound) = match bridge {
            Some(_) => {
                let (tx, rx) = mpsc::channel(OUTBOX);
                (Some(tx), Some(rx))
            }
            None => (None, None),
        };
        let events = Arc::new(Events {
            sender: broadcast::channel(BACKLOG).0,
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            wake: Arc::new(Notify::new()),
            closed: watch::channel(false).0,
            streams: AtomicUsize::new(0),
            per_caller: Mutex::new(HashMap::new()),
            outbox,
        });
        tokio::spawn(flush(Arc::downgrade(&events), events.wake.clone()));
        if let (Some(client), Some(outbound)) = (bridge, outbound) {
            let channel = format!("docnum:events:{database}");
            let instance = uuid::Uuid::new_v4().to_string();
            tokio::spawn(publish_to_redis(KeptRedis::new(client.clone()), channel.clone(), instance.clone(), outbound));
            tokio::spawn(subscribe_to_redis(client, channel, instance, Arc::downgrade(&events), events.closed.subscribe()));
        }
        Ok(events)
    }

    /// A change made here. Never waits: a counter's change is kept (its latest value) for the flusher.
    pub(crate) fn publish(&self, event: LiveEvent) {
        if let LiveEvent::Counter { counter_id, .. } = &event {
            let first = {
                let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
                let first = pending.is_empty();
                pending.insert(*counter_id, event);
                first
            };
            if first {
                self.wake.notify_one();
            }
            return;
        }
        self.deliver(event, true);
    }

    /// Sends an event to this instance's streams and, when it was made here, to the other instances.
    fn deliver(&self, event: LiveEvent, local: bool) {
        if local {
            if let Some(outbox) = &self.outbox {
                // full: Redis is slow or gone; the other instances miss it, this one's viewers do not
                let _ = outbox.try_send(event.clone());
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        // no subscriber is no error
        let _ = self.sender.send(Arc::new(Stamped { id, event }));
    }

    /// A stream for `caller` (a name per user or token), refused past [`MAX_STREAMS_PER_CALLER`] or [`MAX_STREAMS`].
    pub(crate) fn subscribe(self: &Arc<Self>, caller: &str) -> Result<Subscription, AppError> {
        let refused = || AppError::RateLimited { scope: "events", retry_after_secs: 5 };
        {
            let mut per = self.per_caller.lock().unwrap_or_else(|e| e.into_inner());
            let mine = per.entry(caller.to_string()).or_default();
            if *mine >= MAX_STREAMS_PER_CALLER || self.streams.load(Ordering::Relaxed) >= MAX_STREAMS {
                if *mine == 0 {
                    per.remove(caller);
                }
                return Err(refused());
            }
            *mine += 1;
            self.streams.fetch_add(1, Ordering::Relaxed);
        }
        Ok(Subscription { events: self.clone(), caller: caller.to_string(), receiver: self.sender.subscribe(), closed: self.closed.subscribe() })
    }

    /// Streams open now.
    pub fn streams(&self) -> usize {
        self.streams.load(Ordering::Relaxed)
    }

    /// The server is stopping: every stream ends (a stream would otherwise hold the graceful stop until its deadline).
    pub(crate) fn close(&self) {
        self.closed.send_replace(true);
    }

    /// Sends the counter changes gathered since the last flush.
    fn flush_pending(&self) {
        let drained: Vec<LiveEvent> = {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            pending.drain().map(|(_, e)| e).collect()
        };
        for event in drained {
            self.deliver(event, true);
        }
    }
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events").field("streams", &self.streams()).field("bridged", &self.outbox.is_some()).finish()
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        // the flusher waits for a wake-up: it finds the hub gone and ends
        self.wake.notify_one();
    }
}

/// One open stream: counted until dropped (the client hung up, the server stops).
pub(crate) struct Subscription {
    events: Arc<Events>,
    caller: String,
    receiver: broadcast::Receiver<Arc<Stamped>>,
    closed: watch::Receiver<bool>,
}

impl Subscription {
    /// The next event; None when the server stops or this stream fell too far behind (the client reconnects).
    pub(crate) async fn next(&mut self) -> Option<Arc<Stamped>> {
        if *self.closed.borrow() {
            return None;
        }
        tokio::select! {
            received = self.receiver.recv() => received.ok(),
            _ = self.closed.changed() => None,
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut per = self.events.per_caller.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = per.get_mut(&self.caller) {
            *n -= 1;
            if *n == 0 {
                per.remove(&self.caller);
            }
        }
        self.events.streams.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn flush(events: Weak<Events>, wake: Arc<Notify>) {
    loop {
        wake.notified().await;
        if events.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(COALESCE).await;
        match events.upgrade() {
            Some(events) => events.flush_pending(),
            None => return,
        }
    }
}

/// Sends this instance's events to the channel, one PUBLISH each, on the kept connection (`KeptRedis`: made again
/// after an error, and Redis left alone for a second after a failure, so an outage does not queue events behind
/// timeouts: meanwhile they stay local).
async fn publish_to_redis(redis: KeptRedis, channel: String, instance: String, mut outbound: mpsc::Receiver<LiveEvent>) {
    while let Some(event) = outbound.recv().await {
        if redis.resting() {
            continue;
        }
        let Ok(payload) = serde_json::to_string(&Wire { from: instance.clone(), event }) else { continue };
        let sent = tokio::time::timeout(Duration::from_secs(1), async {
            let mut c = redis.get().await?;
            c.publish::<_, _, i64>(&channel, payload).await
        })
        .await;
        if !matches!(sent, Ok(Ok(_))) {
            tracing::debug!("events: PUBLISH to Redis failed; Redis left alone for a second");
            redis.failed().await;
        }
    }
}

/// Receives the other instances' events from the channel and hands them to this instance's streams, reconnecting
/// with backoff when Redis goes away; ends with the hub.
async fn subscribe_to_redis(client: redis::Client, channel: String, instance: String, events: Weak<Events>, mut closed: watch::Receiver<bool>) {
    let mut backoff = BACKOFF_MIN;
    loop {
        if events.strong_count() == 0 || *closed.borrow() {
            return;
        }
        let subscribed = async {
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe(&channel).await?;
            redis::RedisResult::Ok(pubsub)
        };
        match tokio::time::timeout(Duration::from_secs(2), subscribed).await {
            Ok(Ok(pubsub)) => {
                backoff = BACKOFF_MIN;
                let mut messages = pubsub.into_on_message();
                loop {
                    let message = tokio::select! {
                        m = messages.next() => m,
                        _ = closed.changed() => return,
                    };
                    let Some(message) = message else { break }; // the connection is gone
                    let Ok(wire) = serde_json::from_slice::<Wire>(message.get_payload_bytes()) else { continue };
                    if wire.from == instance {
                        continue;
                    }
                    match events.upgrade() {
                        Some(hub) => hub.deliver(wire.event, false),
                        None => return,
                    }
                }
                tracing::warn!("events: the Redis subscription ended; reconnecting");
            }
            _ => tracing::debug!(wait_ms = backoff.as_millis() as u64, "events: Redis unreachable; retrying"),
        }
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            _ = closed.changed() => return,
        }
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numbering::ProjectId;

    fn counter(id: CounterId, last: i64) -> LiveEvent {
        LiveEvent::bare_counter(ProjectId(1), id, last)
    }

    #[tokio::test]
    async fn a_hot_counter_is_sent_as_its_latest_value() {
        let events = Events::start(&[], "test").unwrap();
        let mut sub = events.subscribe("a").unwrap();
        for n in 1..=1000 {
            events.publish(counter(CounterId(7), n));
        }
        events.publish(counter(CounterId(8), 5));
        let mut seen = HashMap::new();
        for _ in 0..2 {
            let e = sub.next().await.unwrap();
            if let LiveEvent::Counter { counter_id, last_number, .. } = e.event {
                seen.insert(counter_id, last_number);
            }
        }
        assert_eq!(seen, HashMap::from([(CounterId(7), 1000), (CounterId(8), 5)]));
        assert_eq!(events.streams(), 1);
        drop(sub);
        assert_eq!(events.streams(), 0);
    }

    #[tokio::test]
    async fn streams_are_bounded_per_caller_and_end_when_closed() {
        let events = Events::start(&[], "test").unwrap();
        let subs: Vec<_> = (0..MAX_STREAMS_PER_CALLER).map(|_| events.subscribe("a").unwrap()).collect();
        assert!(events.subscribe("a").is_err());
        let mut other = events.subscribe("b").unwrap();
        drop(subs);
        assert!(events.subscribe("a").is_ok());
        events.close();
        assert!(other.next().await.is_none());
    }
}
