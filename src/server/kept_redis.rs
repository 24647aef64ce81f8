//! One multiplexed Redis connection shared by every caller of a feature (the lock's wait markers, the shared
//! rate limits): made on first use, made again after an error. A connection per command cost a TCP handshake.

use redis::aio::MultiplexedConnection;

pub struct KeptRedis {
    client: redis::Client,
    slot: tokio::sync::Mutex<Option<MultiplexedConnection>>,
}

impl KeptRedis {
    pub fn new(client: redis::Client) -> KeptRedis {
        KeptRedis { client, slot: tokio::sync::Mutex::new(None) }
    }

    /// The kept connection (a cheap clone: commands multiplex over one socket), connecting when there is none.
    pub async fn get(&self) -> redis::RedisResult<MultiplexedConnection> {
        let mut slot = self.slot.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let c = self.client.get_multiplexed_async_connection().await?;
        *slot = Some(c.clone());
        Ok(c)
    }

    /// After an error or a timeout: the next `get` connects afresh.
    pub async fn reset(&self) {
        *self.slot.lock().await = None;
    }
}
