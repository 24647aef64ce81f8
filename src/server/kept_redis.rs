//! One multiplexed Redis connection shared by every caller of a feature (the lock's wait markers, the shared
//! rate limits, the login throttle): made on first use, made again after an error. A connection per command cost a
//! TCP handshake. After a failure the server is left alone for a second ([`KeptRedis::resting`]), so an unreachable
//! server does not cost every request its timeout: the one breaker of the features that can do without Redis.

use std::sync::atomic::{AtomicI64, Ordering};

use redis::aio::MultiplexedConnection;

/// How long a server is left alone after a failure.
const REST_MS: i64 = 1000;

pub(crate) struct KeptRedis {
    client: redis::Client,
    slot: tokio::sync::Mutex<Option<MultiplexedConnection>>,
    /// Until when (system clock, ms) the server is left alone after a failure.
    rest_until_ms: AtomicI64,
}

impl KeptRedis {
    pub(crate) fn new(client: redis::Client) -> KeptRedis {
        KeptRedis { client, slot: tokio::sync::Mutex::new(None), rest_until_ms: AtomicI64::new(0) }
    }

    /// Whether the server is being left alone after a failure (the caller does without it meanwhile).
    pub(crate) fn resting(&self) -> bool {
        chrono::Utc::now().timestamp_millis() < self.rest_until_ms.load(Ordering::Relaxed)
    }

    /// After a failed or timed-out command: the next `get` connects afresh, and not before a second has passed.
    pub(crate) async fn failed(&self) {
        self.reset().await;
        self.rest_until_ms.store(chrono::Utc::now().timestamp_millis() + REST_MS, Ordering::Relaxed);
    }

    /// The kept connection (a cheap clone: commands multiplex over one socket), connecting when there is none.
    pub(crate) async fn get(&self) -> redis::RedisResult<MultiplexedConnection> {
        let mut slot = self.slot.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let c = self.client.get_multiplexed_async_connection().await?;
        *slot = Some(c.clone());
        Ok(c)
    }

    /// After an error or a timeout: the next `get` connects afresh.
    pub(crate) async fn reset(&self) {
        *self.slot.lock().await = None;
    }
}
