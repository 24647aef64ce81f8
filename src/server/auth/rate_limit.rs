//! Limits on number requests (SPEC §8): per user, per IP and global for people; per token for machine
//! clients. A limit of 0 switches it off. Exceeding one answers 429 with `Retry-After`.

use std::num::NonZeroU32;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, DefaultDirectRateLimiter, Quota, RateLimiter};

use super::{Caller, Principal};
use crate::server::error::AppError;

#[derive(Clone, Debug)]
pub struct RateLimits {
    pub per_user_per_min: u32,
    pub per_ip_per_min: u32,
    pub global_per_min: u32,
    pub per_token_per_min: u32,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits { per_user_per_min: 10, per_ip_per_min: 50, global_per_min: 5000, per_token_per_min: 6000 }
    }
}

pub struct NumberRateLimiter {
    user: Option<DefaultKeyedRateLimiter<i64>>,
    ip: Option<DefaultKeyedRateLimiter<String>>,
    global: Option<DefaultDirectRateLimiter>,
    token: Option<DefaultKeyedRateLimiter<i64>>,
}


fn quota(per_min: u32) -> Option<Quota> {
    NonZeroU32::new(per_min).map(Quota::per_minute)
}

impl NumberRateLimiter {
    pub fn new(limits: &RateLimits) -> Self {
        NumberRateLimiter {
            user: quota(limits.per_user_per_min).map(RateLimiter::keyed),
            ip: quota(limits.per_ip_per_min).map(RateLimiter::keyed),
            global: quota(limits.global_per_min).map(RateLimiter::direct),
            token: quota(limits.per_token_per_min).map(RateLimiter::keyed),
        }
    }

    /// Takes one request from every limit that applies to the caller.
    pub fn check(&self, caller: &Caller) -> Result<(), AppError> {
        let now = DefaultClock::default().now();
        let refuse = |scope: &'static str, wait: std::time::Duration| AppError::RateLimited {
            scope,
            retry_after_secs: wait.as_secs() + 1,
        };
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
