//! The one retry loop.

use super::AppError;

/// How an operation that failed is tried again: how many more times, and the pause before each try. Every retry of
/// the service takes its policy from here: the counter transaction's lost races ([`Retry::run`] for the
/// administrative writes, [`Retry::pause_before`] in the committers' batch loop, which threads its attempt through
/// a committer and so cannot hand over a closure), the committers' lost connections, the template store and the
/// retention job's audit row.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Retry {
    /// Tries after the first.
    pub(crate) times: u32,
    pub(crate) pause: Pause,
}

/// The pause before try `n` (from 1) after the first.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Pause {
    /// At once.
    None,
    /// A random pause of 1 to `ms × n` ms, so racers part.
    Jitter(u64),
    /// `ms`, then twice that, and so on: a lost connection given time to come back.
    Doubling(u64),
}

impl Retry {
    /// The pause before the next try when `tried` retries have been made already; None when none is left.
    pub(crate) fn pause_before(self, tried: u32) -> Option<std::time::Duration> {
        if tried >= self.times {
            return None;
        }
        let n = u64::from(tried) + 1;
        let ms = match self.pause {
            Pause::None => 0,
            Pause::Jitter(ms) if ms > 0 => rand::Rng::gen_range(&mut rand::thread_rng(), 1..=ms * n),
            Pause::Jitter(_) => 0,
            Pause::Doubling(ms) => ms.saturating_mul(1 << tried.min(16)),
        };
        Some(std::time::Duration::from_millis(ms))
    }

    /// Runs `op` until it succeeds, fails with an error that `retryable` refuses, or has been tried `times` more.
    pub(crate) async fn run<T, F, Fut>(self, retryable: impl Fn(&AppError) -> bool, mut op: F) -> Result<T, AppError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, AppError>>,
    {
        let mut tried = 0;
        loop {
            match op().await {
                Err(e) if retryable(&e) => match self.pause_before(tried) {
                    Some(pause) => {
                        tried += 1;
                        if !pause.is_zero() {
                            tokio::time::sleep(pause).await;
                        }
                    }
                    None => return Err(e),
                },
                other => return other,
            }
        }
    }
}

/// Whether an error is a lost race: a version conflict (the store maps the database's own to it).
pub(crate) fn is_lost_race(e: &AppError) -> bool {
    matches!(e, AppError::VersionConflict(_))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    #[test]
    fn a_retry_policy_allows_its_tries_and_pauses_as_it_says() {
        let doubling = Retry { times: 3, pause: Pause::Doubling(100) };
        let pauses: Vec<_> = (0..5).map(|tried| doubling.pause_before(tried)).collect();
        let ms = |n| Some(Duration::from_millis(n));
        assert_eq!(pauses, vec![ms(100), ms(200), ms(400), None, None]);
        let at_once = Retry { times: 2, pause: Pause::None };
        assert_eq!((0..3).map(|t| at_once.pause_before(t)).collect::<Vec<_>>(), vec![ms(0), ms(0), None]);
        for tried in 0..4 {
            let p = Retry { times: 4, pause: Pause::Jitter(5) }.pause_before(tried).unwrap();
            assert!((1..=5 * (u64::from(tried) + 1)).contains(&(p.as_millis() as u64)), "{p:?} before try {tried}");
        }
    }

    #[tokio::test]
    async fn run_stops_after_its_tries_and_returns_the_last_error() {
        let tries = std::sync::atomic::AtomicU32::new(0);
        let out: Result<(), AppError> = Retry { times: 2, pause: Pause::None }
            .run(is_lost_race, || async {
                tries.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Err(AppError::VersionConflict("k".into()))
            })
            .await;
        assert!(matches!(out, Err(AppError::VersionConflict(_))));
        assert_eq!(tries.into_inner(), 3, "the first try and two more");
    }
}
