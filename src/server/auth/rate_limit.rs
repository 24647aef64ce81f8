//! Limits on number requests (docs/rules/api.md#rate-limits): per user, per IP and global for people; per token for machine
//! clients. A limit of 0 switches it off. Exceeding one answers 429 with `Retry-After`.
//!
//! Requests that take no new number — preview, confirm, cancel — count in a bucket of their own
//! ([`RateLimits::light`]): the same limits times `light_factor` (default 10), since a form previews at every
//! change and each reservation is followed by a confirm or a cancel. A number limit of 0 switches its light
//! counterpart off too; a factor of 0 switches the light bucket off altogether.
//!
//! With Redis configured the counts are shared by all instances: a fixed one-minute window per key in Redis
//! (`INCR` + `EXPIRE NX`, one round trip per limit). When Redis does not answer quickly, each instance falls
//! back to its own in-memory limiter (governor), so an outage never blocks numbering.

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota, RateLimiter};

use super::{Caller, Principal};
use crate::contract::{ApiTokenId, UserId};
pub use crate::server::config::{RateLimits, DEFAULT_LIGHT_FACTOR};
use crate::server::error::AppError;
use crate::server::kept_redis::KeptRedis;

pub(crate) struct NumberRateLimiter {
    limits: RateLimits,
    user: Option<DefaultKeyedRateLimiter<UserId>>,
    ip: Option<DefaultKeyedRateLimiter<String>>,
    global: Option<DefaultDirectRateLimiter>,
    token: Option<DefaultKeyedRateLimiter<ApiTokenId>>,
    /// The Redis server the counts are shared through (left alone for a second after a failure).
    shared: Option<KeptRedis>,
    /// The prefix of this limiter's Redis keys (`docnum:rl:` for numbers, `docnum:rl:light:` for the light bucket).
    prefix: &'static str,
}

fn quota(per_min: u32) -> Option<Quota> {
    NonZeroU32::new(per_min).map(Quota::per_minute)
}

const REDIS_TIMEOUT: Duration = Duration::from_millis(100);

impl NumberRateLimiter {
    pub(crate) fn new(limits: &RateLimits) -> Self {
        NumberRateLimiter {
            limits: limits.clone(),
            user: quota(limits.per_user_per_min).map(RateLimiter::keyed),
            ip: quota(limits.per_ip_per_min).map(RateLimiter::keyed),
            global: quota(limits.global_per_min).map(RateLimiter::direct),
            token: quota(limits.per_token_per_min).map(RateLimiter::keyed),
            shared: None,
            prefix: "docnum:rl:",
        }
    }

    /// The limiter of the requests that take no new number (preview, confirm, cancel): [`RateLimits::light`],
    /// counted apart from the number requests.
    pub(crate) fn light(limits: &RateLimits) -> Self {
        NumberRateLimiter { prefix: "docnum:rl:light:", ..NumberRateLimiter::new(&limits.light()) }
    }

    /// Shares the counts through this Redis server.
    pub(crate) fn shared_through(mut self, redis_url: &str) -> Result<Self, AppError> {
        let client = crate::server::tls::redis_client(redis_url).map_err(AppError::internal)?;
        self.shared = Some(KeptRedis::new(client));
        Ok(self)
    }

    /// The limits that apply to this caller: (scope, key, limit per minute).
    fn applicable(&self, caller: &Caller) -> Vec<(&'static str, String, u32)> {
        let l = &self.limits;
        let mut out = Vec::new();
        match &caller.principal {
            Principal::Token { id, .. } => out.push(("token", id.to_string(), l.per_token_per_min)),
            Principal::User(u) => {
                out.push(("user", u.id.to_string(), l.per_user_per_min));
                if let Some(ip) = &caller.ip {
                    out.push(("ip", ip.clone(), l.per_ip_per_min));
                }
                out.push(("global", String::new(), l.global_per_min));
            }
        }
        out.retain(|(_, _, limit)| *limit > 0);
        out
    }

    /// Takes one request from every limit that applies to the caller.
    pub(crate) async fn check(&self, caller: &Caller) -> Result<(), AppError> {
        let limits = self.applicable(caller);
        if limits.is_empty() {
            return Ok(());
        }
        if let Some(shared) = self.shared.as_ref().filter(|s| !s.resting()) {
            match tokio::time::timeout(REDIS_TIMEOUT, check_shared(shared, self.prefix, &limits)).await {
                Ok(Ok(result)) => return result,
                _ => {
                    tracing::debug!("rate limits: Redis did not answer, using this instance's counts");
                    shared.failed().await;
                }
            }
        }
        self.check_local(caller)
    }

    fn check_local(&self, caller: &Caller) -> Result<(), AppError> {
        let now = DefaultClock::default().now();
        let refuse = |scope: &'static str, wait: Duration| AppError::RateLimited { scope, retry_after_secs: wait.as_secs() + 1 };
        match &caller.principal {
            Principal::Token { id, .. } => {
                if let Some(l) = &self.token {
                    l.check_key(id).map_err(|n| refuse("token", n.wait_time_from(now)))?;
                }
            }
            Principal::User(u) => {
                if let Some(l) = &self.user {
                    l.check_key(&u.id).map_err(|n| refuse("user", n.wait_time_from(now)))?;
                }
                if let (Some(l), Some(ip)) = (&self.ip, &caller.ip) {
                    l.check_key(ip).map_err(|n| refuse("ip", n.wait_time_from(now)))?;
                }
                if let Some(l) = &self.global {
                    l.check().map_err(|n| refuse("global", n.wait_time_from(now)))?;
                }
            }
        }
        Ok(())
    }
}

/// One pipeline: INCR each window key (and give it a 60 s life when new); refuse on the first over its limit.
async fn check_shared(shared: &KeptRedis, prefix: &str, limits: &[(&'static str, String, u32)]) -> redis::RedisResult<Result<(), AppError>> {
    let now_ms = chrono::Utc::now().timestamp_millis();
    let window = now_ms / 60_000;
    let mut con = shared.get().await?;
    let mut pipe = redis::pipe();
    for (scope, key, _) in limits {
        let name = format!("{prefix}{scope}:{key}:{window}");
        pipe.cmd("INCR").arg(&name).cmd("EXPIRE").arg(&name).arg(60).arg("NX").ignore();
    }
    let counts: Vec<u64> = pipe.query_async(&mut con).await?;
    let retry_after_secs = ((window + 1) * 60_000 - now_ms) as u64 / 1000 + 1;
    for ((scope, _, limit), count) in limits.iter().zip(counts) {
        if count > *limit as u64 {
            return Ok(Err(AppError::RateLimited { scope, retry_after_secs }));
        }
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_light_bucket_is_the_number_limits_times_the_factor() {
        let l = RateLimits::default().light();
        assert_eq!((l.per_user_per_min, l.per_ip_per_min, l.global_per_min, l.per_token_per_min), (100, 500, 50_000, 60_000));
        let off = RateLimits { per_token_per_min: 0, light_factor: 3, ..RateLimits::default() }.light();
        assert_eq!((off.per_user_per_min, off.per_token_per_min), (30, 0), "a number limit of 0 keeps its light limit off");
        let none = RateLimits { light_factor: 0, ..RateLimits::default() }.light();
        assert_eq!((none.per_user_per_min, none.per_ip_per_min, none.global_per_min, none.per_token_per_min), (0, 0, 0, 0));
        assert_eq!(RateLimits { per_user_per_min: u32::MAX, ..RateLimits::default() }.light().per_user_per_min, u32::MAX);
    }
}
