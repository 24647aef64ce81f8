//! Retries that cannot take a second number (docs/rules/api.md#idempotency-keys; the IETF httpapi `Idempotency-Key` draft). Reserve,
//! generate, confirm, cancel, revise and void-and-replace accept an `Idempotency-Key` header. The key, the
//! request's fingerprint and the answer are stored **in the transaction that writes the number** (the counter
//! batch's, or the administrative write's), so whatever committed the number committed its key: a retry after a
//! timeout, a `kill -9`, a restart, another instance or a database failover finds it and gets the same answer.
//!
//! - Keys are scoped to their sender (a user, or an API token): one caller cannot read another's answers.
//! - The same key with the same request within [`KEY_LIFETIME_MS`] → the stored answer, nothing written.
//! - The same key with another request (or operation) → 422 `IDEMPOTENCY_KEY_REUSED`.
//! - The same key while its first request is still being served → 409 `IDEMPOTENCY_IN_PROGRESS` (the draft's
//!   answer), here in this instance ([`InFlight`]); inside one batch the plan answers a repeat with the first's
//!   outcome; across instances the key's primary key refuses the second insert, and the retry reads the first.
//! - Only successes are stored: a refused request changed nothing, and its retry is decided afresh.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::contract::messages::NumberingDetail;
use crate::contract::ErrorCode;
use crate::server::auth::{Caller, Principal};
use crate::server::db::failure::{classify, DbFailure};
use crate::server::db::{Conn, Db};
use crate::server::error::{echo, AppError};

/// The request header.
pub(crate) const HEADER: &str = "Idempotency-Key";
/// How long a key answers with its first outcome (docs/rules/api.md#idempotency-keys: 24 h); retention prunes it after that.
pub(crate) const KEY_LIFETIME_MS: i64 = 24 * 3_600_000;
/// The longest key accepted, in characters (visible ASCII only).
pub(crate) const MAX_KEY_CHARS: usize = 255;

/// An `Idempotency-Key` header as sent: 1–255 visible ASCII characters (no space, no double quote), optionally written as the draft's
/// structured-field string (in double quotes, which are not part of the key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IdempotencyKey(String);

impl IdempotencyKey {
    #[cfg(test)]
    fn as_str(&self) -> &str {
        &self.0
    }

    pub(crate) fn parse(raw: &str) -> Result<IdempotencyKey, AppError> {
        let raw = raw.trim();
        let inner = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')).unwrap_or(raw);
        let ok = !inner.is_empty() && inner.len() <= MAX_KEY_CHARS && inner.bytes().all(|b| (0x21..0x7f).contains(&b) && b != b'"');
        if ok {
            Ok(IdempotencyKey(inner.to_string()))
        } else {
            Err(malformed())
        }
    }
}

fn malformed() -> AppError {
    AppError::validation(NumberingDetail::IdempotencyKeyMalformed { max: &MAX_KEY_CHARS })
}

/// The `Idempotency-Key` header as the OpenAPI document states it: the operations that take it list
/// `params(KeyParam)`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
pub(crate) struct KeyParam {
    /// Makes a retry safe: the same key with the same request within 24 h answers as the first request did (the
    /// same number), even after a restart or from another instance; with another request it is 422, and while the
    /// first is still being served 409. Keys are per caller; use a new one (a UUID) for each new request.
    #[param(rename = "Idempotency-Key", pattern = r#"^("[!#-~]{1,255}"|[!#-~]{1,255})$"#, min_length = 1, max_length = 257)]
    #[allow(dead_code)] // read by `KeyHeader`; here for the document only
    idempotency_key: Option<String>,
}

/// The optional `Idempotency-Key` header of a REST request; a malformed one is a 400 before anything runs.
pub(crate) struct KeyHeader(pub(crate) Option<IdempotencyKey>);

impl<S: Send + Sync> FromRequestParts<S> for KeyHeader {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, AppError> {
        let mut values = parts.headers.get_all(HEADER).iter();
        let Some(value) = values.next() else { return Ok(KeyHeader(None)) };
        if values.next().is_some() {
            return Err(AppError::validation(NumberingDetail::IdempotencyKeyTwice));
        }
        let text = value.to_str().map_err(|_| malformed())?;
        IdempotencyKey::parse(text).map(|k| KeyHeader(Some(k)))
    }
}

/// A keyed request as the transaction stores it: who sent the key, the key, what was asked.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Keyed {
    /// `user:<id>` or `token:<id>`.
    pub(crate) scope: String,
    pub(crate) key: String,
    /// SHA-256 (hex) of the operation and the request as the server read it (so spacing and field order of the
    /// JSON do not matter; the two request shapes of docs/rules/api.md#the-request-body-and-its-leniency are one request).
    pub(crate) fingerprint: String,
    pub(crate) operation: String,
}

impl Keyed {
    pub(crate) fn new(caller: &Caller, key: &IdempotencyKey, operation: &str, request: &impl Serialize) -> Keyed {
        let scope = match &caller.principal {
            Principal::User(u) => format!("user:{}", u.id),
            Principal::Token { id, .. } => format!("token:{id}"),
        };
        let mut hash = Sha256::new();
        hash.update(operation.as_bytes());
        hash.update([0]);
        hash.update(serde_json::to_vec(request).unwrap_or_default());
        Keyed { scope, key: key.0.clone(), fingerprint: hex::encode(hash.finalize()), operation: operation.to_string() }
    }

    /// The row that records this key with its answer.
    pub(crate) fn answered(&self, answer: &impl Serialize, now: i64) -> NewKey {
        NewKey { keyed: self.clone(), answer: serde_json::to_string(answer).unwrap_or_default(), created_at: now }
    }

    /// What a stored key answers this request: its answer when it was made for the same request, else 422.
    pub(crate) fn replay(&self, stored: Stored) -> Result<String, AppError> {
        if stored.fingerprint == self.fingerprint {
            Ok(stored.answer)
        } else {
            Err(reused(&self.key))
        }
    }
}

/// The same key sent with another request.
pub(crate) fn reused(key: &str) -> AppError {
    AppError::conflict(ErrorCode::IdempotencyKeyReused, NumberingDetail::IdempotencyKeyReused { key: &echo(key) })
}

/// The same key while its first request is still being served.
pub(crate) fn in_progress(key: &str) -> AppError {
    AppError::conflict(ErrorCode::IdempotencyInProgress, NumberingDetail::IdempotencyKeyInProgress { key: &echo(key) })
}

/// A key to store in the transaction, with its answer (JSON).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct NewKey {
    pub(crate) keyed: Keyed,
    pub(crate) answer: String,
    pub(crate) created_at: i64,
}

/// A stored key: the request it was made for and its answer (JSON).
#[derive(Debug, sqlx::FromRow)]
pub(crate) struct Stored {
    pub(crate) fingerprint: String,
    pub(crate) answer: String,
}

/// The stored key of this request, if one younger than [`KEY_LIFETIME_MS`] exists. An older one is deleted here
/// (retention would have): the key starts again. One read when there is none, as for every first request.
pub(crate) async fn stored(db: &Db, keyed: &Keyed, now: i64) -> Result<Option<Stored>, AppError> {
    let cutoff = now - KEY_LIFETIME_MS;
    let found: Option<(String, String, i64)> =
        sqlx::query_as("SELECT fingerprint, answer, created_at FROM idempotency_keys WHERE scope = ? AND idem_key = ?")
            .bind(&keyed.scope)
            .bind(&keyed.key)
            .fetch_optional(&db.pool)
            .await?;
    match found {
        Some((fingerprint, answer, created_at)) if created_at > cutoff => Ok(Some(Stored { fingerprint, answer })),
        Some(_) => {
            sqlx::query("DELETE FROM idempotency_keys WHERE scope = ? AND idem_key = ? AND created_at <= ?")
                .bind(&keyed.scope)
                .bind(&keyed.key)
                .bind(cutoff)
                .execute(&db.writer)
                .await?;
            Ok(None)
        }
        None => Ok(None),
    }
}

/// The same inside a transaction (the retry of a write whose key was stored meanwhile by another instance).
pub(crate) async fn stored_in(tx: &mut Conn, keyed: &Keyed, now: i64) -> Result<Option<Stored>, sqlx::Error> {
    sqlx::query_as::<_, Stored>("SELECT fingerprint, answer FROM idempotency_keys WHERE scope = ? AND idem_key = ? AND created_at > ?")
        .bind(&keyed.scope)
        .bind(&keyed.key)
        .bind(now - KEY_LIFETIME_MS)
        .fetch_optional(&mut *tx)
        .await
}

/// For a write outside the counter batch (revise, void-and-replace), inside its transaction: the answer another
/// instance stored for the key since [`stored`] was asked.
pub(crate) async fn answer_in<T: serde::de::DeserializeOwned>(tx: &mut Conn, keyed: &Keyed, now: i64) -> Result<Option<T>, AppError> {
    stored_in(tx, keyed, now).await?.map(|s| read_answer(keyed, s)).transpose()
}

/// A stored answer read back as the type its operation answers (422 when it was stored for another request).
pub(crate) fn read_answer<T: serde::de::DeserializeOwned>(keyed: &Keyed, stored: Stored) -> Result<T, AppError> {
    let answer = keyed.replay(stored)?;
    serde_json::from_str(&answer).map_err(|e| AppError::internal(format!("stored idempotent answer of {} unreadable: {e}", keyed.operation)))
}

/// Inserts keys with their answers, in the caller's transaction. A key stored meanwhile (another instance served
/// the same key) fails it with a unique violation.
pub(crate) async fn insert(tx: &mut Conn, keys: &[NewKey]) -> Result<(), sqlx::Error> {
    // a group of many keyed batches stays under SQLite's limit of bound values per statement
    for chunk in keys.chunks(500) {
        let rows = vec!["(?, ?, ?, ?, ?, ?)"; chunk.len()].join(", ");
        let sql = format!("INSERT INTO idempotency_keys (scope, idem_key, fingerprint, operation, answer, created_at) VALUES {rows}");
        let mut q = sqlx::query(&sql);
        for k in chunk {
            q = q.bind(&k.keyed.scope).bind(&k.keyed.key).bind(&k.keyed.fingerprint).bind(&k.keyed.operation).bind(&k.answer).bind(k.created_at);
        }
        q.execute(&mut *tx).await?;
    }
    Ok(())
}

/// [`insert`] for an administrative write: a key stored meanwhile is a lost race (the write's retry then finds it).
pub(crate) async fn insert_one(tx: &mut Conn, key: &NewKey) -> Result<(), AppError> {
    insert(tx, std::slice::from_ref(key)).await.map_err(|e| match classify(&e) {
        DbFailure::UniqueViolation | DbFailure::RetryableConflict => AppError::VersionConflict(format!("{HEADER} stored meanwhile")),
        _ => e.into(),
    })
}

/// The keys being served in this instance: a second request with a key in flight is answered 409 at once instead
/// of racing the first into the database.
#[derive(Default)]
pub struct InFlight(Mutex<HashSet<(String, String)>>);

/// A key's place in [`InFlight`], given back when dropped (the request answered, or its caller gone).
pub(crate) struct Claim {
    set: Arc<InFlight>,
    id: (String, String),
}

impl InFlight {
    pub(crate) fn claim(self: &Arc<Self>, keyed: &Keyed) -> Result<Claim, AppError> {
        let id = (keyed.scope.clone(), keyed.key.clone());
        if !self.0.lock().unwrap().insert(id.clone()) {
            return Err(in_progress(&keyed.key));
        }
        Ok(Claim { set: self.clone(), id })
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.set.0.lock().unwrap().remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_visible_ascii_and_may_be_quoted() {
        assert_eq!(IdempotencyKey::parse("abc-123").unwrap().as_str(), "abc-123");
        assert_eq!(IdempotencyKey::parse("\"8e03978e-40d5-43e8-bc93-6894a57f9324\"").unwrap().as_str(), "8e03978e-40d5-43e8-bc93-6894a57f9324");
        assert_eq!(IdempotencyKey::parse(&"k".repeat(255)).unwrap().as_str().len(), 255);
        for bad in ["", "\"\"", "ก", "a b", "a\u{7}b", "\"a\"b\"", &"k".repeat(256)] {
            assert!(IdempotencyKey::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_fingerprint_is_of_the_operation_and_the_request_as_read() {
        let caller = Caller::system();
        let key = IdempotencyKey::parse("k1").unwrap();
        let a = Keyed::new(&caller, &key, "RESERVE", &serde_json::json!({"a": 1, "b": 2}));
        let b = Keyed::new(&caller, &key, "RESERVE", &serde_json::json!({"b": 2, "a": 1}));
        let other_op = Keyed::new(&caller, &key, "GENERATE", &serde_json::json!({"a": 1, "b": 2}));
        let other_body = Keyed::new(&caller, &key, "RESERVE", &serde_json::json!({"a": 1, "b": 3}));
        assert_eq!(a.fingerprint, b.fingerprint);
        assert_ne!(a.fingerprint, other_op.fingerprint);
        assert_ne!(a.fingerprint, other_body.fingerprint);
        let stored = |k: &Keyed| Stored { fingerprint: k.fingerprint.clone(), answer: "{\"n\":1}".into() };
        assert_eq!(a.replay(stored(&b)).unwrap(), "{\"n\":1}");
        assert_eq!(a.replay(stored(&other_body)).unwrap_err().code(), ErrorCode::IdempotencyKeyReused);
    }

    #[test]
    fn a_key_in_flight_is_refused_until_its_claim_goes() {
        let set = Arc::new(InFlight::default());
        let keyed = Keyed::new(&Caller::system(), &IdempotencyKey::parse("k").unwrap(), "RESERVE", &1);
        let claim = set.claim(&keyed).unwrap();
        assert_eq!(set.claim(&keyed).err().unwrap().code(), ErrorCode::IdempotencyInProgress);
        drop(claim);
        assert!(set.claim(&keyed).is_ok());
    }
}
