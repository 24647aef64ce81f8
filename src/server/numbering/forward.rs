//! One hot counter shared by several instances (docs/adr/0021-forwarding-to-the-lock-holder.md): a worker that
//! finds its counter's lock held by an instance that advertises where it serves it
//! (`lock::RedisLock::forwarding_as`) sends its batch there instead of waiting for the lock. The holder queues
//! those jobs on its own worker, which serves them in its batches under the lock it keeps, and answers each job
//! with its outcome. One holder, one stream of batches, no hand-overs.
//!
//! The wire: `POST /internal/forward`, the cluster secret in `x-docnum-cluster-secret`, a JSON body `{key, jobs}`
//! of the jobs as the forwarding instance resolved them (kind and caller, for the audit row); the answer is one
//! result per job, in order. Not part of the public API (not under `/api/v1`, not in the OpenAPI document);
//! without `CLUSTER_SECRET` the path is 404.

use std::time::Duration;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::counter_tx::{JobKind, Outcome};
use super::idempotency::Keyed;
use super::Numbering;
use crate::contract::messages::NumberingDetail;
use crate::numbering::CounterKey;
use crate::server::auth::Caller;
use crate::server::error::{echo, AppError, RemoteError};

/// Where a holder receives forwarded batches.
pub const PATH: &str = "/internal/forward";
/// The header that carries the cluster secret.
pub const SECRET_HEADER: &str = "x-docnum-cluster-secret";
/// The shortest `CLUSTER_SECRET` the server starts with.
pub const MIN_SECRET_CHARS: usize = 16;
/// The largest forwarded batch read (a job is about 1 KB, a batch at most `MAX_BATCH` jobs: 256 by default). A
/// bigger one is refused (413) before any job is queued, so its sender serves it itself.
pub const MAX_BATCH_BYTES: usize = 4 * 1024 * 1024;

#[derive(Serialize)]
struct Outgoing<'a> {
    key: &'a CounterKey,
    jobs: Vec<OutgoingJob<'a>>,
}

#[derive(Serialize)]
struct OutgoingJob<'a> {
    kind: &'a JobKind,
    caller: &'a Caller,
    /// Its `Idempotency-Key`: the holder stores it with the outcome, in the batch's transaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    keyed: Option<&'a Keyed>,
}

#[derive(Deserialize)]
struct Incoming {
    key: CounterKey,
    jobs: Vec<IncomingJob>,
}

#[derive(Deserialize)]
struct IncomingJob {
    kind: JobKind,
    caller: Caller,
    #[serde(default)]
    keyed: Option<Keyed>,
}

#[derive(Serialize, Deserialize)]
struct Answers {
    results: Vec<Result<Outcome, RemoteError>>,
}

/// Why a forwarded batch has no answers.
#[derive(Debug)]
pub(crate) enum Failed {
    /// The holder did not take the jobs (refused connection, refused request): serve them here.
    NotDelivered(String),
    /// Sent, but no answer came back: the jobs may have been served there, so they must not be served again here.
    Unanswered(String),
}

/// Sends batches to the holders of the counters' locks, over kept connections.
pub(crate) struct Forwarder {
    client: reqwest::Client,
    secret: String,
}

impl Forwarder {
    /// `patience`: how long to wait for a holder's answers (its lock wait and its commit).
    pub(crate) fn new(secret: String, patience: Duration) -> Result<Forwarder, AppError> {
        let client = reqwest::Client::builder()
            .timeout(patience)
            .connect_timeout(Duration::from_millis(500))
            .tcp_nodelay(true)
            .build()
            .map_err(|e| AppError::internal_from("the forwarding HTTP client", e))?;
        Ok(Forwarder { client, secret })
    }

    /// The holder's answer to each job, in order.
    pub(crate) async fn send(
        &self,
        holder: &str,
        key: &CounterKey,
        jobs: &[(&JobKind, &Caller, Option<&Keyed>)],
    ) -> Result<Vec<Result<Outcome, AppError>>, Failed> {
        let body = Outgoing { key, jobs: jobs.iter().map(|&(kind, caller, keyed)| OutgoingJob { kind, caller, keyed }).collect() };
        let body = serde_json::to_vec(&body).map_err(|e| Failed::NotDelivered(format!("the batch does not serialize: {e}")))?;
        let sent = self
            .client
            .post(format!("{holder}{PATH}"))
            .header(SECRET_HEADER, &self.secret)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await;
        let response = match sent {
            Ok(r) => r,
            Err(e) if e.is_connect() => return Err(Failed::NotDelivered(format!("{holder}: {e}"))),
            Err(e) => return Err(Failed::Unanswered(format!("{holder}: {e}"))),
        };
        let status = response.status();
        // the holder refuses a batch (4xx, or 503 while it stops) before it queues any of its jobs
        if status.is_client_error() || status == reqwest::StatusCode::SERVICE_UNAVAILABLE {
            return Err(Failed::NotDelivered(format!("{holder} answered {status}")));
        }
        if !status.is_success() {
            return Err(Failed::Unanswered(format!("{holder} answered {status}")));
        }
        let answers: Answers = response.json().await.map_err(|e| Failed::Unanswered(format!("{holder}: unreadable answers: {e}")))?;
        if answers.results.len() != jobs.len() {
            return Err(Failed::Unanswered(format!("{holder} answered {} of {} jobs", answers.results.len(), jobs.len())));
        }
        Ok(answers.results.into_iter().map(|r| r.map_err(AppError::Remote)).collect())
    }
}

/// Equal secrets, compared in constant time (their digests, so that the length does not show either).
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    let (a, b) = (Sha256::digest(given), Sha256::digest(expected));
    a.iter().zip(b.iter()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `POST /internal/forward`: another instance's batch for a counter this instance holds (or will hold: the jobs
/// join this instance's queue for the key, whatever its worker holds by then). The body is read only once the
/// secret has passed.
pub(crate) async fn receive(State(state): State<std::sync::Arc<Numbering>>, request: Request) -> Response {
    let Some(secret) = state.cluster_secret.as_deref() else {
        return AppError::not_found(NumberingDetail::ForwardingOff).into_response();
    };
    let given = request.headers().get(SECRET_HEADER).map(|v| v.as_bytes()).unwrap_or_default();
    if !same_secret(given, secret.as_bytes()) {
        return AppError::Unauthenticated.into_response();
    }
    let body = match read_body(request.into_body()).await {
        Ok(body) => body,
        Err(e) => return e.into_response(),
    };
    let batch: Incoming = match serde_json::from_slice(&body) {
        Ok(b) => b,
        Err(e) => return AppError::validation(NumberingDetail::ForwardedBatchInvalid { reason: &echo(&e.to_string()) }).into_response(),
    };
    // every issue of the batch is for the batch's counter: a job must not reach another counter's worker
    if batch.jobs.iter().any(|j| matches!(&j.kind, JobKind::Issue { req, .. } | JobKind::Block { req, .. } if req.key != batch.key)) {
        let reason = NumberingDetail::ForwardedIssueOfAnotherCounter;
        return AppError::validation(NumberingDetail::ForwardedBatchInvalid { reason: &reason }).into_response();
    }
    let jobs = batch.jobs.into_iter().map(|j| (j.kind, j.caller, j.keyed)).collect();
    match state.engine.serve_forwarded(batch.key, jobs).await {
        Ok(results) => Json(Answers { results: results.iter().map(|r| r.clone().map_err(|e| RemoteError::from(&e))).collect() }).into_response(),
        Err(e) => e.into_response(),
    }
}

/// The forwarded batch's bytes: 413 past [`MAX_BATCH_BYTES`], 400 when the body breaks off before its end (the
/// sender gave up; it is not too large).
async fn read_body(body: axum::body::Body) -> Result<axum::body::Bytes, AppError> {
    axum::body::to_bytes(body, MAX_BATCH_BYTES).await.map_err(|e| {
        if std::error::Error::source(&e).is_some_and(|inner| inner.is::<http_body_util::LengthLimitError>()) {
            AppError::PayloadTooLarge
        } else {
            AppError::validation(NumberingDetail::ForwardedBatchBrokeOff { reason: &echo(&e.to_string()) })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_body_over_the_limit_is_413_and_one_that_breaks_off_is_400() {
        let small = read_body(axum::body::Body::from("{}")).await.unwrap();
        assert_eq!(&small[..], b"{}");
        let big = read_body(axum::body::Body::from(vec![b' '; MAX_BATCH_BYTES + 1])).await.unwrap_err();
        assert!(matches!(big, AppError::PayloadTooLarge), "{big:?}");
        let parts: Vec<Result<&'static [u8], std::io::Error>> =
            vec![Ok(b"{\"key\":"), Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "the sender went away"))];
        let broken = read_body(axum::body::Body::from_stream(futures::stream::iter(parts))).await.unwrap_err();
        assert!(matches!(broken, AppError::Validation { .. }), "{broken:?}");
        assert_eq!(broken.into_response().status(), axum::http::StatusCode::BAD_REQUEST);
    }

    #[test]
    fn only_the_same_secret_passes() {
        assert!(same_secret(b"a-cluster-secret-1", b"a-cluster-secret-1"));
        assert!(!same_secret(b"a-cluster-secret-2", b"a-cluster-secret-1"));
        assert!(!same_secret(b"", b"a-cluster-secret-1"));
        assert!(!same_secret(b"a-cluster-secret-1 ", b"a-cluster-secret-1"));
    }

    #[test]
    fn an_error_crosses_with_its_code_message_reference_and_wait() {
        let e = AppError::LockTimeout { key: "k".into(), retry_after_secs: 3 };
        let back = AppError::Remote(serde_json::from_str(&serde_json::to_string(&RemoteError::from(&e)).unwrap()).unwrap());
        assert_eq!((back.code(), back.status(), back.retry_after()), (e.code(), e.status(), Some(3)));
        assert_eq!(back.message_th(), e.message_th());
        assert_eq!(back.log_type(), Some("LOCK_TIMEOUT"));
        let internal = AppError::internal("broken");
        let back = AppError::Remote(RemoteError::from(&internal));
        assert_eq!(back.reference(), internal.reference());
        assert_eq!(back.body().detail, None, "internals stay hidden on the way back too");
    }
}
