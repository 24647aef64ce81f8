//! Argon2 password hashing, off the async runtime's worker threads.

use argon2::password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;

/// A valid Argon2 hash of a random password, verified against when a username is unknown.
pub const DUMMY_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$pVyqcD0WNrULjAvOu/Ti4d/DO0Xh0V1Ug/JDr3Rx1jM";

pub fn hash_blocking(password: &str) -> String {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default().hash_password(password.as_bytes(), &salt).expect("argon2 hashing with default parameters").to_string()
}

pub async fn hash(password: String) -> String {
    tokio::task::spawn_blocking(move || hash_blocking(&password)).await.expect("hashing task")
}

pub async fn verify(password: String, hash: String) -> bool {
    tokio::task::spawn_blocking(move || {
        PasswordHash::new(&hash).map(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok()).unwrap_or(false)
    })
    .await
    .unwrap_or(false)
}

/// A readable random password for the first super admin when none is configured.
pub fn generate() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut rng = rand::thread_rng();
    (0..20).map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char).collect()
}
