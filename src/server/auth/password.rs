//! Argon2 password hashing, off the async runtime's worker threads, with bounded concurrency.
//!
//! Each Argon2 computation (the `argon2` crate's defaults: m = 19 MiB, t = 2) allocates 19 MiB. A flood of logins
//! must not run hundreds of them at once, so every hash and verification takes a permit of one process-wide
//! semaphore first: [`configure`] sizes it at start (`ARGON2_CONCURRENCY`; default the machine's available
//! parallelism: more would only queue on the cores anyway). Callers wait for a permit in the async runtime, not
//! on a blocking thread. The permit moves into the blocking task, so a request abandoned by its client still holds
//! it until its computation has ended.

use std::sync::{Arc, OnceLock};

use argon2::password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A valid Argon2 hash of a random password, verified against when a username is unknown.
pub(crate) const DUMMY_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$pVyqcD0WNrULjAvOu/Ti4d/DO0Xh0V1Ug/JDr3Rx1jM";

/// The semaphore and its size.
struct Gate {
    permits: Arc<Semaphore>,
    size: usize,
}

static GATE: OnceLock<Gate> = OnceLock::new();

/// The machine's available parallelism (at least 1): the default number of Argon2 computations at once.
pub fn default_concurrency() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2)
}

/// Sizes the semaphore (0 = [`default_concurrency`]). The first call wins (one process, one bound: tests start
/// many services in one process); returns the size in force.
pub(crate) fn configure(permits: usize) -> usize {
    let size = if permits == 0 { default_concurrency() } else { permits };
    GATE.get_or_init(|| Gate { permits: Arc::new(Semaphore::new(size)), size }).size
}

fn gate() -> &'static Gate {
    GATE.get_or_init(|| {
        let size = default_concurrency();
        Gate { permits: Arc::new(Semaphore::new(size)), size }
    })
}

/// A permit to run one Argon2 computation; waits while all are taken.
pub(crate) async fn permit() -> OwnedSemaphorePermit {
    gate().permits.clone().acquire_owned().await.expect("the Argon2 semaphore is never closed")
}

pub(crate) fn hash_blocking(password: &str) -> String {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default().hash_password(password.as_bytes(), &salt).expect("argon2 hashing with default parameters").to_string()
}

fn verify_blocking(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash).map(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok()).unwrap_or(false)
}

pub async fn hash(password: String) -> String {
    let permit = permit().await;
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        hash_blocking(&password)
    })
    .await
    .expect("hashing task")
}

pub(crate) async fn verify(password: String, hash: String) -> bool {
    verify_holding(permit().await, password, hash).await
}

/// Verifies with a permit the caller already holds (login checks its throttle once more after the wait for one).
pub(crate) async fn verify_holding(permit: OwnedSemaphorePermit, password: String, hash: String) -> bool {
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        verify_blocking(&password, &hash)
    })
    .await
    .unwrap_or(false)
}

/// A readable random password for the first super admin when none is configured.
pub(crate) fn generate() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut rng = rand::thread_rng();
    (0..20).map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char).collect()
}
