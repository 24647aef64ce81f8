//! Secrets at rest: the webhooks' signing secrets are stored sealed with `SECRETS_KEY` (AES-256-GCM, a random
//! 96-bit nonce per value). A sealed value reads `enc:v1:<base64 of nonce ‖ ciphertext ‖ tag>`; the version lets
//! a later key or algorithm sit beside it. A value without the prefix is a secret stored before sealing: it is
//! still read, and sealed when the instance starts with a key (`notifications::seal_stored_secrets`).

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use rand::RngCore;
use std::sync::Arc;

/// What a sealed value starts with.
pub const SEALED_PREFIX: &str = "enc:v1:";

/// `SECRETS_KEY`: 32 bytes, written as 64 hex digits or as base64 (`openssl rand -base64 32`). Never printed.
#[derive(Clone)]
pub struct SecretsKey(Arc<[u8; 32]>);

impl std::fmt::Debug for SecretsKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretsKey(***)")
    }
}

impl PartialEq for SecretsKey {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Eq for SecretsKey {}

impl SecretsKey {
    /// Reads the key's text; the error never repeats it.
    pub fn parse(text: &str) -> Result<SecretsKey, String> {
        let text = text.trim();
        let bytes = if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            hex::decode(text).ok()
        } else {
            base64::engine::general_purpose::STANDARD.decode(text).ok()
        };
        match bytes.and_then(|b| <[u8; 32]>::try_from(b).ok()) {
            Some(key) => Ok(SecretsKey(Arc::new(key))),
            None => Err("SECRETS_KEY must be 32 bytes: 64 hex digits, or base64 (openssl rand -base64 32)".into()),
        }
    }

    fn cipher(&self) -> Aes256Gcm {
        let key: &[u8; 32] = &self.0;
        Aes256Gcm::new(key.into())
    }

    /// `plain` sealed: `enc:v1:` and the base64 of a fresh nonce, the ciphertext and its tag.
    pub fn seal(&self, plain: &str) -> String {
        let mut nonce = [0u8; 12];
        rand::thread_rng().fill_bytes(&mut nonce);
        let sealed = self.cipher().encrypt(Nonce::from_slice(&nonce), plain.as_bytes()).expect("AES-GCM seals any length a secret has");
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        format!("{SEALED_PREFIX}{}", base64::engine::general_purpose::STANDARD.encode(out))
    }
}

/// Whether a stored value is sealed.
pub fn is_sealed(stored: &str) -> bool {
    stored.starts_with(SEALED_PREFIX)
}

/// The secret of a stored value: a sealed one opened with `key`, a plain one as it is. The error names no part of
/// the value.
pub fn open(key: Option<&SecretsKey>, stored: &str) -> Result<String, String> {
    let Some(body) = stored.strip_prefix(SEALED_PREFIX) else { return Ok(stored.to_string()) };
    let key = key.ok_or("a sealed secret, and no SECRETS_KEY to open it")?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(body).map_err(|_| "a sealed secret that is not base64")?;
    if bytes.len() < 12 + 16 {
        return Err("a sealed secret too short to be one".into());
    }
    let (nonce, sealed) = bytes.split_at(12);
    let plain =
        key.cipher().decrypt(Nonce::from_slice(nonce), sealed).map_err(|_| "a sealed secret that SECRETS_KEY does not open (another key?)")?;
    String::from_utf8(plain).map_err(|_| "a sealed secret that is not text".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> SecretsKey {
        SecretsKey::parse(&hex::encode([byte; 32])).unwrap()
    }

    #[test]
    fn a_sealed_secret_opens_with_its_key_only() {
        let k = key(7);
        let sealed = k.seal("receiver-secret-0123456789");
        assert!(is_sealed(&sealed) && !sealed.contains("receiver-secret"), "{sealed}");
        assert_ne!(sealed, k.seal("receiver-secret-0123456789"), "a fresh nonce each time");
        assert_eq!(open(Some(&k), &sealed).unwrap(), "receiver-secret-0123456789");
        assert!(open(Some(&key(8)), &sealed).unwrap_err().contains("does not open"));
        assert!(open(None, &sealed).is_err());
        let mut tampered = sealed.clone();
        let at = sealed.len() - 6;
        tampered.replace_range(at..at + 1, if &sealed[at..at + 1] == "A" { "B" } else { "A" });
        assert!(open(Some(&k), &tampered).is_err(), "the tag guards the value");
    }

    #[test]
    fn a_plain_secret_is_read_as_it_is() {
        assert_eq!(open(None, "plain-secret-from-before").unwrap(), "plain-secret-from-before");
        assert_eq!(open(Some(&key(1)), "plain-secret-from-before").unwrap(), "plain-secret-from-before");
    }

    #[test]
    fn the_key_is_hex_or_base64_of_32_bytes_and_never_shown() {
        let b64 = base64::engine::general_purpose::STANDARD.encode([9u8; 32]);
        assert_eq!(SecretsKey::parse(&b64).unwrap(), key(9));
        let err = SecretsKey::parse("too-short-key-value").unwrap_err();
        assert!(!err.contains("too-short"), "{err}");
        assert_eq!(format!("{:?}", key(9)), "SecretsKey(***)");
    }
}
