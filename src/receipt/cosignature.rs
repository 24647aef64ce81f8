//! C2SP tlog-cosignature (`cosignature/v1`): a witness's Ed25519 signature over a checkpoint and the time it saw
//! it. A cosignature is a signed-note line `— <witness> base64(key id ‖ timestamp ‖ signature)`; the key id is that of
//! the key with algorithm byte 0x04, so a cosignature never verifies as the log's own signature. Pure: the browser
//! checks cosignatures too.

use base64::prelude::{Engine as _, BASE64_STANDARD};
use ed25519_dalek::{Signer as _, SigningKey, Verifier as _, VerifyingKey};

use super::Refusal;

/// The algorithm byte of a cosignature/v1 key.
pub const ALG_COSIGNATURE_V1: u8 = 0x04;

/// What a witness signs: the header, the time, then the checkpoint's text.
pub fn message(timestamp: u64, checkpoint_body: &[u8]) -> Vec<u8> {
    let mut m = format!("cosignature/v1\ntime {timestamp}\n").into_bytes();
    m.extend_from_slice(checkpoint_body);
    m
}

fn key_id(name: &str, key: &VerifyingKey) -> u32 {
    let mut encoded = vec![ALG_COSIGNATURE_V1];
    encoded.extend_from_slice(key.as_bytes());
    signed_note::key_id(name, &encoded)
}

/// A witness's verifier key: `<name>+<key id>+base64(0x04 ‖ public key)`.
pub fn vkey(name: &str, key: &VerifyingKey) -> String {
    let mut encoded = vec![ALG_COSIGNATURE_V1];
    encoded.extend_from_slice(key.as_bytes());
    format!("{name}+{:08x}+{}", key_id(name, key), BASE64_STANDARD.encode(encoded))
}

/// Splits `<name>+<id>+<base64>` into its parts, checking the name, the algorithm byte and the id.
fn parse_key(name: &str, id16: &str, key64: &str, len: usize) -> Option<(u32, Vec<u8>)> {
    if !signed_note::is_key_name_valid(name) || id16.len() != 8 {
        return None;
    }
    let id = u32::from_str_radix(id16, 16).ok()?;
    let key = BASE64_STANDARD.decode(key64).ok()?;
    (key.len() == len + 1 && key[0] == ALG_COSIGNATURE_V1).then(|| (id, key[1..].to_vec()))
}

/// A witness's public key, to check its cosignatures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CosignatureVerifier {
    name: String,
    id: u32,
    key: VerifyingKey,
}

impl CosignatureVerifier {
    pub fn new(vkey: &str) -> Result<CosignatureVerifier, Refusal> {
        let mut parts = vkey.trim().splitn(3, '+');
        let (name, id16, key64) = (parts.next().ok_or(Refusal::Key)?, parts.next().ok_or(Refusal::Key)?, parts.next().ok_or(Refusal::Key)?);
        let (id, key) = parse_key(name, id16, key64, 32).ok_or(Refusal::Key)?;
        let key = VerifyingKey::from_bytes(&key.try_into().map_err(|_| Refusal::Key)?).map_err(|_| Refusal::Key)?;
        if key_id(name, &key) != id {
            return Err(Refusal::Key);
        }
        Ok(CosignatureVerifier { name: name.to_string(), id, key })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn key_id(&self) -> u32 {
        self.id
    }

    /// The verifier key's text.
    pub fn vkey(&self) -> String {
        vkey(&self.name, &self.key)
    }

    /// Checks a cosignature's bytes (timestamp ‖ signature, without the key id) over a checkpoint's text; its time
    /// when it verifies.
    pub fn verify(&self, checkpoint_body: &[u8], sig: &[u8]) -> Option<u64> {
        let (time, sig) = sig.split_first_chunk::<8>()?;
        let sig = ed25519_dalek::Signature::from_slice(sig).ok()?;
        let time = u64::from_be_bytes(*time);
        self.key.verify(&message(time, checkpoint_body), &sig).ok().map(|()| time)
    }

    /// Reads a signature line of this witness (`— <name> <base64>`): None when it is another signer's; Some(None)
    /// when it is this key's but does not verify; Some(Some(time)) when it does.
    pub fn check_line(&self, checkpoint_body: &[u8], line: &str) -> Option<Option<u64>> {
        let (name, b64) = line.trim_end_matches('\n').strip_prefix("— ")?.split_once(' ')?;
        if name != self.name {
            return None;
        }
        let bytes = BASE64_STANDARD.decode(b64).ok()?;
        let (id, sig) = bytes.split_first_chunk::<4>()?;
        if u32::from_be_bytes(*id) != self.id {
            return None;
        }
        Some(self.verify(checkpoint_body, sig))
    }
}

/// A witness's private key: `PRIVATE+KEY+<name>+<key id>+base64(0x04 ‖ Ed25519 seed)`, the signed-note signer
/// key's shape with the cosignature algorithm byte.
pub struct CosignatureSigner {
    name: String,
    id: u32,
    key: SigningKey,
}

impl CosignatureSigner {
    pub fn new(skey: &str) -> Result<CosignatureSigner, Refusal> {
        let rest = skey.trim().strip_prefix("PRIVATE+KEY+").ok_or(Refusal::Key)?;
        let mut parts = rest.splitn(3, '+');
        let (name, id16, key64) = (parts.next().ok_or(Refusal::Key)?, parts.next().ok_or(Refusal::Key)?, parts.next().ok_or(Refusal::Key)?);
        let (id, seed) = parse_key(name, id16, key64, 32).ok_or(Refusal::Key)?;
        let key = SigningKey::from_bytes(&seed.try_into().map_err(|_| Refusal::Key)?);
        if key_id(name, &key.verifying_key()) != id {
            return Err(Refusal::Key);
        }
        Ok(CosignatureSigner { name: name.to_string(), id, key })
    }

    /// A new key from 32 random bytes: (its private key's text, its verifier key).
    pub fn generate(name: &str, seed: [u8; 32]) -> Result<(String, String), Refusal> {
        if !signed_note::is_key_name_valid(name) {
            return Err(Refusal::Key);
        }
        let key = SigningKey::from_bytes(&seed);
        let mut encoded = vec![ALG_COSIGNATURE_V1];
        encoded.extend_from_slice(&seed);
        let skey = format!("PRIVATE+KEY+{name}+{:08x}+{}", key_id(name, &key.verifying_key()), BASE64_STANDARD.encode(encoded));
        Ok((skey, vkey(name, &key.verifying_key())))
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn vkey(&self) -> String {
        vkey(&self.name, &self.key.verifying_key())
    }

    /// The cosignature line of a checkpoint's text at `timestamp` (Unix seconds), newline included.
    pub fn sign(&self, timestamp: u64, checkpoint_body: &[u8]) -> String {
        let sig = self.key.sign(&message(timestamp, checkpoint_body));
        let mut bytes = self.id.to_be_bytes().to_vec();
        bytes.extend_from_slice(&timestamp.to_be_bytes());
        bytes.extend_from_slice(&sig.to_bytes());
        format!("— {} {}\n", self.name, BASE64_STANDARD.encode(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &[u8] = b"numbers.example/log\n3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n";

    #[test]
    fn a_cosignature_verifies_with_its_key_only_and_tells_its_time() {
        let (skey, vkey) = CosignatureSigner::generate("witness.example/w1", [7; 32]).unwrap();
        let signer = CosignatureSigner::new(&skey).unwrap();
        assert_eq!(signer.vkey(), vkey);
        let verifier = CosignatureVerifier::new(&vkey).unwrap();
        let line = signer.sign(1_700_000_000, BODY);
        assert!(line.starts_with("— witness.example/w1 "), "{line}");
        assert_eq!(verifier.check_line(BODY, &line), Some(Some(1_700_000_000)));
        // another checkpoint, another key of the same name, another name
        assert_eq!(verifier.check_line(&BODY[1..], &line), Some(None));
        let (_, other) = CosignatureSigner::generate("witness.example/w1", [8; 32]).unwrap();
        assert_eq!(CosignatureVerifier::new(&other).unwrap().check_line(BODY, &line), None);
        assert_eq!(CosignatureVerifier::new(&vkey.replacen("w1+", "w2+", 1)).map(|_| ()), Err(Refusal::Key));
        // the time is signed: a changed time does not verify
        let b64 = line.trim_end().rsplit(' ').next().unwrap();
        let mut bytes = BASE64_STANDARD.decode(b64).unwrap();
        bytes[11] ^= 1;
        let changed = format!("— witness.example/w1 {}\n", BASE64_STANDARD.encode(bytes));
        assert_eq!(verifier.check_line(BODY, &changed), Some(None));
    }

    #[test]
    fn a_log_key_is_not_a_witness_key() {
        // the log's kind of key (algorithm 0x01)
        let log_vkey = signed_note::new_ed25519_verifier_key("numbers.example/log", &SigningKey::from_bytes(&[3; 32]).verifying_key());
        assert_eq!(CosignatureVerifier::new(&log_vkey), Err(Refusal::Key));
        assert_eq!(CosignatureSigner::generate("has space", [1; 32]).map(|_| ()), Err(Refusal::Key));
    }
}
