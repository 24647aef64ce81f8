//! The service's clock. Production reads the system clock; tests and demos can move it (e.g. to B.E. 2568)
//! and it keeps running from there, so TTLs and expiry still behave.

use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, Duration, Utc};

#[derive(Debug, Default)]
pub struct Clock {
    offset_ms: AtomicI64,
}

impl Clock {
    pub fn system() -> Clock {
        Clock::default()
    }

    /// A clock that reads `start` now and advances in real time.
    pub fn starting_at(start: DateTime<Utc>) -> Clock {
        let clock = Clock::default();
        clock.set(start);
        clock
    }

    pub fn now(&self) -> DateTime<Utc> {
        Utc::now() + Duration::milliseconds(self.offset_ms.load(Ordering::Relaxed))
    }

    pub fn now_ms(&self) -> i64 {
        self.now().timestamp_millis()
    }

    pub fn set(&self, instant: DateTime<Utc>) {
        self.offset_ms.store((instant - Utc::now()).num_milliseconds(), Ordering::Relaxed);
    }

    pub fn advance(&self, by: Duration) {
        self.offset_ms.fetch_add(by.num_milliseconds(), Ordering::Relaxed);
    }
}
