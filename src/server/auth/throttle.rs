//! Login throttling (docs/rules/api.md#callers-and-authentication): failed logins are counted per username and per client address (the address the
//! edge resolved behind trusted proxies). Once a key has `threshold` consecutive failures, the next attempt must
//! wait: `first_wait` after the threshold-th failure, doubling with every further failure, at most `max_wait`.
//! An attempt inside the wait answers 429 with `Retry-After` and runs no Argon2; it does not count as a failure.
//! The refusal says whether it is the first this instance has seen of its wait: only that one is worth a row of the
//! login record, so a client that keeps knocking during a wait cannot grow the record (or the disk) without bound.
//! A successful login clears its username's count (not its address's: one good account must not wipe out the
//! failures an address made against others). A key's failures are forgotten `max_wait` after its wait ended.
//!
//! Times are the service's [`Clock`](crate::server::clock::Clock)'s (the caller passes `now_ms`), so tests move the
//! clock instead of sleeping.
//!
//! With Redis configured (`REDIS_URLS`, the first server) the counts are shared by every instance: one hash per
//! key (`n`, `last`) with a TTL, updated by a script so two instances never lose a failure. When Redis does not
//! answer within 100 ms each instance falls back to its own in-memory counts (and leaves Redis alone for a
//! second); without Redis only those are used. The in-memory table is bounded: forgotten keys are dropped when it
//! grows, and it is emptied (logged) if it still holds [`MAX_LOCAL_KEYS`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use sha2::{Digest, Sha256};

pub use crate::server::config::LoginThrottleConfig;
use crate::server::error::AppError;
use crate::server::kept_redis::KeptRedis;

impl LoginThrottleConfig {
    /// The wait (ms) after `failures` consecutive failures of a key whose threshold is `threshold`.
    pub(crate) fn wait_ms(&self, threshold: u32, failures: u64) -> i64 {
        if threshold == 0 || failures < u64::from(threshold) {
            return 0;
        }
        let doublings = (failures - u64::from(threshold)).min(40) as u32;
        let first = self.first_wait.as_millis() as i64;
        let max = self.max_wait.as_millis() as i64;
        first.saturating_mul(1i64 << doublings).min(max)
    }

    fn forget_ms(&self) -> i64 {
        self.max_wait.as_millis() as i64
    }
}

/// Which count refused an attempt (the `scope` of [`AppError::RateLimited`]).
pub(crate) const USER_SCOPE: &str = "login-user";
pub(crate) const ADDRESS_SCOPE: &str = "login-address";

/// The counts one attempt touches: (scope, key, threshold); keys whose threshold is 0 are left out.
#[derive(Clone, Debug, Default)]
pub(crate) struct Keys(Vec<(&'static str, String, u32)>);

/// A key's consecutive failures and when the last one was (service-clock milliseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Record {
    failures: u64,
    last_ms: i64,
}

pub(crate) struct LoginThrottle {
    config: LoginThrottleConfig,
    local: Mutex<HashMap<String, Record>>,
    /// The Redis server the counts are shared through (left alone for a second after a failure).
    shared: Option<KeptRedis>,
    /// Per key, the wait (its record's last failure) whose first refusal this instance has seen already.
    refused_waits: Mutex<HashMap<String, i64>>,
}

/// An attempt refused during a wait: the 429 to answer, and whether it is the first refusal of that wait in this
/// instance (the one the login record keeps; the others are only counted in `/metrics`).
#[derive(Debug)]
pub(crate) struct Refusal {
    pub(crate) error: AppError,
    pub(crate) first_of_its_wait: bool,
}

/// At most this many keys in memory.
pub(crate) const MAX_LOCAL_KEYS: usize = 100_000;

const REDIS_TIMEOUT: Duration = Duration::from_millis(100);
const KEY_PREFIX: &str = "docnum:login:";

/// One failure of one key, atomically: a forgotten record starts again from 0. ARGV: now, threshold, first wait,
/// max wait (ms). Returns the new count. The TTL outlives the wait and the forgetting time (Redis' own time).
const FAILED_SCRIPT: &str = r"
local now = tonumber(ARGV[1])
local threshold = tonumber(ARGV[2])
local first = tonumber(ARGV[3])
local max = tonumber(ARGV[4])
local function wait(n)
  if threshold == 0 or n < threshold then return 0 end
  local w = first * 2 ^ math.min(n - threshold, 40)
  if w > max then return max end
  return w
end
local n = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
local last = tonumber(redis.call('HGET', KEYS[1], 'last') or '0')
if n > 0 and now > last + wait(n) + max then n = 0 end
n = n + 1
redis.call('HSET', KEYS[1], 'n', n, 'last', now)
redis.call('PEXPIRE', KEYS[1], math.floor(wait(n) + max + 1000))
return n
";

impl LoginThrottle {
    pub(crate) fn new(config: &LoginThrottleConfig) -> LoginThrottle {
        LoginThrottle { config: config.clone(), local: Mutex::new(HashMap::new()), shared: None, refused_waits: Mutex::new(HashMap::new()) }
    }

    /// Shares the counts through this Redis server.
    pub(crate) fn shared_through(mut self, redis_url: &str) -> Result<Self, AppError> {
        let client = crate::server::tls::redis_client(redis_url).map_err(AppError::internal)?;
        self.shared = Some(KeptRedis::new(client));
        Ok(self)
    }

    /// The counts of an attempt for `username` (trimmed, compared without case) from `ip`.
    pub(crate) fn keys(&self, username: &str, ip: Option<&str>) -> Keys {
        let mut keys = Vec::new();
        if self.config.per_user_failures > 0 {
            let name: String = username.trim().to_lowercase().chars().take(100).collect();
            let digest = hex::encode(Sha256::digest(name.as_bytes()));
            keys.push((USER_SCOPE, format!("{KEY_PREFIX}user:{digest}"), self.config.per_user_failures));
        }
        if let (true, Some(ip)) = (self.config.per_address_failures > 0, ip) {
            keys.push((ADDRESS_SCOPE, format!("{KEY_PREFIX}ip:{ip}"), self.config.per_address_failures));
        }
        Keys(keys)
    }

    /// The record as it counts at `now`: forgotten `max_wait` after its wait ended.
    fn current(&self, threshold: u32, r: Record, now_ms: i64) -> Record {
        if r.failures > 0 && now_ms > r.last_ms.saturating_add(self.config.wait_ms(threshold, r.failures)).saturating_add(self.config.forget_ms()) {
            Record::default()
        } else {
            r
        }
    }

    /// Seconds to wait (at least 1) while the record's wait lasts.
    fn wait_left(&self, threshold: u32, r: Record, now_ms: i64) -> Option<u64> {
        let r = self.current(threshold, r, now_ms);
        let until = r.last_ms.saturating_add(self.config.wait_ms(threshold, r.failures));
        (r.failures > 0 && now_ms < until).then(|| ((until - now_ms + 999) / 1000).max(1) as u64)
    }

    /// Refuses (429 with `Retry-After`) while any of the keys is waiting.
    pub(crate) async fn check(&self, keys: &Keys, now_ms: i64) -> Result<(), Refusal> {
        if keys.0.is_empty() {
            return Ok(());
        }
        let records = match self.shared_records(keys).await {
            Some(records) => records,
            None => {
                let local = self.local.lock().unwrap();
                keys.0.iter().map(|(_, key, _)| local.get(key).copied().unwrap_or_default()).collect()
            }
        };
        for ((scope, key, threshold), record) in keys.0.iter().zip(records) {
            if let Some(secs) = self.wait_left(*threshold, record, now_ms) {
                crate::server::metrics::login_throttled();
                return Err(Refusal {
                    error: AppError::RateLimited { scope, retry_after_secs: secs },
                    first_of_its_wait: self.first_refusal_of(key, record.last_ms),
                });
            }
        }
        Ok(())
    }

    /// True the first time this instance refuses an attempt during the wait that began with the failure at `last_ms`.
    fn first_refusal_of(&self, key: &str, last_ms: i64) -> bool {
        let mut refused = self.refused_waits.lock().unwrap();
        if refused.get(key) == Some(&last_ms) {
            return false;
        }
        if refused.len() >= MAX_LOCAL_KEYS {
            // a wait lasts at most `max_wait`; forgetting which were refused only costs a row each
            refused.clear();
        }
        refused.insert(key.to_string(), last_ms);
        true
    }

    /// Counts a failed attempt on every key.
    pub(crate) async fn failed(&self, keys: &Keys, now_ms: i64) {
        if keys.0.is_empty() {
            return;
        }
        if let Some(shared) = self.shared.as_ref().filter(|s| !s.resting()) {
            match tokio::time::timeout(REDIS_TIMEOUT, self.failed_shared(shared, keys, now_ms)).await {
                Ok(Ok(())) => return,
                _ => {
                    tracing::debug!("login throttle: Redis did not answer, counting in this instance");
                    shared.failed().await;
                }
            }
        }
        let mut local = self.local.lock().unwrap();
        if local.len() >= MAX_LOCAL_KEYS {
            local.retain(|_, r| {
                // the threshold only lengthens a record's life; the smallest one keeps the fewest
                self.current(1, *r, now_ms) != Record::default()
            });
            if local.len() >= MAX_LOCAL_KEYS {
                tracing::warn!(keys = local.len(), "login throttle: too many keys in memory; counts forgotten");
                local.clear();
            }
        }
        for (_, key, threshold) in &keys.0 {
            let r = local.get(key).copied().unwrap_or_default();
            let r = self.current(*threshold, r, now_ms);
            local.insert(key.clone(), Record { failures: r.failures + 1, last_ms: now_ms });
        }
    }

    /// A successful login: its username's failures are forgotten.
    pub(crate) async fn succeeded(&self, keys: &Keys) {
        let Some((_, user_key, _)) = keys.0.iter().find(|(scope, _, _)| *scope == USER_SCOPE) else { return };
        self.local.lock().unwrap().remove(user_key);
        if let Some(shared) = self.shared.as_ref().filter(|s| !s.resting()) {
            let del = async {
                let mut con = shared.get().await?;
                redis::cmd("DEL").arg(user_key).query_async::<i64>(&mut con).await
            };
            if !matches!(tokio::time::timeout(REDIS_TIMEOUT, del).await, Ok(Ok(_))) {
                shared.failed().await;
            }
        }
    }

    /// The keys' records from Redis; None when Redis is not configured or does not answer.
    async fn shared_records(&self, keys: &Keys) -> Option<Vec<Record>> {
        let shared = self.shared.as_ref().filter(|s| !s.resting())?;
        let read = async {
            let mut con = shared.get().await?;
            let mut pipe = redis::pipe();
            for (_, key, _) in &keys.0 {
                pipe.cmd("HMGET").arg(key).arg("n").arg("last");
            }
            pipe.query_async::<Vec<(Option<u64>, Option<i64>)>>(&mut con).await
        };
        match tokio::time::timeout(REDIS_TIMEOUT, read).await {
            Ok(Ok(rows)) => Some(rows.into_iter().map(|(n, last)| Record { failures: n.unwrap_or(0), last_ms: last.unwrap_or(0) }).collect()),
            _ => {
                tracing::debug!("login throttle: Redis did not answer, using this instance's counts");
                shared.failed().await;
                None
            }
        }
    }

    async fn failed_shared(&self, shared: &KeptRedis, keys: &Keys, now_ms: i64) -> redis::RedisResult<()> {
        let mut con = shared.get().await?;
        let script = redis::Script::new(FAILED_SCRIPT);
        for (_, key, threshold) in &keys.0 {
            script
                .key(key)
                .arg(now_ms)
                .arg(*threshold)
                .arg(self.config.first_wait.as_millis() as i64)
                .arg(self.config.max_wait.as_millis() as i64)
                .invoke_async::<i64>(&mut con)
                .await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_begin_at_the_threshold_double_and_stop_at_the_maximum() {
        let c = LoginThrottleConfig::default();
        let waits: Vec<i64> = (0..=8).map(|n| c.wait_ms(5, n)).collect();
        assert_eq!(waits, vec![0, 0, 0, 0, 0, 1000, 2000, 4000, 8000]);
        assert_eq!(c.wait_ms(5, 15), 900_000, "2^10 s is past 15 minutes");
        assert_eq!(c.wait_ms(5, u64::MAX), 900_000);
        assert_eq!(c.wait_ms(0, 1000), 0, "0 = off");
    }

    #[tokio::test]
    async fn five_failures_make_the_sixth_attempt_wait_and_a_success_clears_the_user() {
        let t = LoginThrottle::new(&LoginThrottleConfig { per_address_failures: 3, ..LoginThrottleConfig::default() });
        let somchai = t.keys(" Somchai ", Some("192.0.2.1"));
        let no_address = t.keys("somchai", None);
        for i in 0..5 {
            assert!(t.check(&no_address, 10_000).await.is_ok(), "failure {i}");
            t.failed(&no_address, 10_000).await;
        }
        match t.check(&somchai, 10_500).await {
            Err(Refusal { error: AppError::RateLimited { scope, retry_after_secs }, first_of_its_wait }) => {
                assert_eq!((scope, retry_after_secs, first_of_its_wait), (USER_SCOPE, 1, true))
            }
            other => panic!("{other:?}"),
        }
        match t.check(&somchai, 10_900).await {
            Err(Refusal { first_of_its_wait, .. }) => assert!(!first_of_its_wait, "the same wait was refused already"),
            other => panic!("{other:?}"),
        }
        assert!(t.check(&somchai, 11_000).await.is_ok(), "the 1 s wait is over");
        t.failed(&somchai, 11_000).await;
        match t.check(&t.keys("SOMCHAI", None), 11_001).await {
            Err(Refusal { error: AppError::RateLimited { retry_after_secs, .. }, first_of_its_wait }) => {
                assert_eq!((retry_after_secs, first_of_its_wait), (2, true), "a new failure, a new wait")
            }
            other => panic!("{other:?}"),
        }
        t.succeeded(&somchai).await;
        assert!(t.check(&t.keys("somchai", None), 11_001).await.is_ok());
        // the address 192.0.2.1 failed once; two more (other names) reach its threshold of 3
        t.failed(&t.keys("a", Some("192.0.2.1")), 20_000).await;
        t.failed(&t.keys("b", Some("192.0.2.1")), 20_000).await;
        match t.check(&t.keys("c", Some("192.0.2.1")), 20_000).await {
            Err(Refusal { error: AppError::RateLimited { scope, .. }, .. }) => assert_eq!(scope, ADDRESS_SCOPE),
            other => panic!("{other:?}"),
        }
        // forgotten 15 minutes after the wait ended: the count starts again
        let later = 20_000 + 1000 + 15 * 60_000 + 1;
        assert!(t.check(&t.keys("c", Some("192.0.2.1")), later).await.is_ok());
        t.failed(&t.keys("c", Some("192.0.2.1")), later).await;
        assert!(t.check(&t.keys("d", Some("192.0.2.1")), later).await.is_ok(), "one failure after forgetting");
    }
}
