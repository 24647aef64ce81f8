//! The log's witnesses (`LOG_WITNESSES`): each new checkpoint is offered to every witness with the consistency proof
//! from the last tree that witness cosigned (C2SP tlog-witness); its cosignature is added to the stored note, which
//! `/log/checkpoint` and the receipts then carry. A background task, never on the numbering path: a witness that is
//! slow or gone delays nothing but its own cosignature.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::prelude::{Engine as _, BASE64_STANDARD};
use signed_note::Note;

use super::{sql, store, Log};
use crate::receipt::cosignature::CosignatureVerifier;
use crate::server::config::LogWitness;
use crate::server::error::AppError;
use crate::server::metrics;

/// The longest wait between offers to a witness that cannot be reached.
const MAX_BACKOFF: Duration = Duration::from_secs(300);
/// How often the newest checkpoint is looked at when no new one was signed here (another instance may sign).
const POLL: Duration = Duration::from_secs(1);

struct Peer {
    verifier: CosignatureVerifier,
    url: String,
    state: tokio::sync::Mutex<PeerState>,
}

#[derive(Default)]
struct PeerState {
    /// The tree size the witness last cosigned, as far as this instance knows.
    known: Option<u64>,
    /// The checkpoint size already settled with this witness (cosigned or refused): not offered again.
    settled: Option<u64>,
    failures: u32,
    retry_at: Option<Instant>,
}

/// What one offer came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Cosigned {
        time: u64,
    },
    /// The witness refused the checkpoint (a 4xx other than a size it then took): the status and its text.
    Refused {
        status: u16,
        text: String,
    },
    /// No answer (or a 5xx): offered again after a wait.
    Failed {
        error: String,
    },
}

pub struct Collector {
    log: Arc<Log>,
    client: reqwest::Client,
    peers: Vec<Peer>,
}

impl Collector {
    pub fn new(log: Arc<Log>, witnesses: &[LogWitness], timeout: Duration) -> Result<Collector, AppError> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| AppError::internal(format!("LOG_WITNESSES: {e}")))?;
        let peers = witnesses
            .iter()
            .map(|w| {
                let verifier =
                    CosignatureVerifier::new(&w.vkey).map_err(|_| AppError::internal(format!("LOG_WITNESSES: {:?} is not a witness key", w.vkey)))?;
                metrics::log_witness_known(verifier.name());
                Ok(Peer { verifier, url: w.url.clone(), state: tokio::sync::Mutex::default() })
            })
            .collect::<Result<Vec<_>, AppError>>()?;
        Ok(Collector { log, client, peers })
    }

    /// Offers each new checkpoint to every witness, as it is signed here or found stored.
    pub fn spawn(self: Arc<Self>) {
        tokio::spawn(async move {
            loop {
                let _ = tokio::time::timeout(POLL, self.log.signed.notified()).await;
                if let Err(e) = self.round().await {
                    tracing::warn!(error = %e.report(), "transparency log: offering the checkpoint to the witnesses failed");
                }
            }
        });
    }

    /// One offer of the newest checkpoint to each witness that has not settled it.
    pub async fn round(&self) -> Result<Vec<Option<Outcome>>, AppError> {
        let Some((size, note, _)) = store::latest_checkpoint(&self.log.db).await.map_err(sql)? else { return Ok(Vec::new()) };
        let size = size as u64;
        Ok(futures::future::join_all(self.peers.iter().map(|p| self.offer(p, size, &note))).await)
    }

    /// Offers the checkpoint `size` to one witness, unless settled already or waiting after a failure.
    async fn offer(&self, peer: &Peer, size: u64, note: &str) -> Option<Outcome> {
        let mut state = peer.state.lock().await;
        if state.settled == Some(size) || state.retry_at.is_some_and(|at| Instant::now() < at) {
            return None;
        }
        let body = Note::from_bytes(note.as_bytes()).ok()?.text().to_vec();
        let name = peer.verifier.name().to_string();
        if note.lines().any(|l| peer.verifier.check_line(&body, l).flatten().is_some()) {
            (state.settled, state.known) = (Some(size), Some(size));
            return None;
        }
        match self.ask(peer, &mut state, size, note, &body).await {
            Ok(outcome) => {
                (state.failures, state.retry_at, state.settled) = (0, None, Some(size));
                metrics::log_witness_unanswered(&name, 0);
                if let Outcome::Refused { status, text } = &outcome {
                    metrics::log_witness_refused(&name);
                    tracing::error!(witness = %name, size, status, text = %text.trim(), "transparency log: a witness refused the checkpoint");
                }
                Some(outcome)
            }
            Err(e) => {
                state.failures = state.failures.saturating_add(1);
                metrics::log_witness_unanswered(&name, state.failures);
                let wait = Duration::from_secs(1u64 << state.failures.min(9)).min(MAX_BACKOFF);
                state.retry_at = Some(Instant::now() + wait);
                tracing::warn!(witness = %name, size, error = %e, retry_in_s = wait.as_secs(), "transparency log: a witness did not answer");
                Some(Outcome::Failed { error: e })
            }
        }
    }

    /// The add-checkpoint calls for one checkpoint: a 409's size is taken once or twice, then it is a refusal.
    async fn ask(&self, peer: &Peer, state: &mut PeerState, size: u64, note: &str, body: &[u8]) -> Result<Outcome, String> {
        for _ in 0..3 {
            let old = state.known.unwrap_or(0);
            if old > size {
                return Ok(Outcome::Refused {
                    status: 409,
                    text: format!("the witness cosigned a tree of {old} entries; this checkpoint has {size}"),
                });
            }
            let proof = if old == 0 || old == size {
                Vec::new()
            } else {
                match self.log.consistency(size, old).await {
                    Ok(Some(p)) => p,
                    Ok(None) => return Err(format!("no consistency proof from {old} to {size}: hashes missing")),
                    Err(e) => return Err(e.report()),
                }
            };
            let mut request = format!("old {old}\n");
            for h in &proof {
                request.push_str(&BASE64_STANDARD.encode(h.0));
                request.push('\n');
            }
            request.push('\n');
            request.push_str(note);
            let answer = self
                .client
                .post(format!("{}/add-checkpoint", peer.url))
                .header(reqwest::header::CONTENT_TYPE, "text/plain; charset=utf-8")
                .body(request)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let status = answer.status();
            let is_size = answer.headers().get(reqwest::header::CONTENT_TYPE).is_some_and(|v| v.as_bytes() == b"text/x.tlog.size");
            let text = answer.text().await.map_err(|e| e.to_string())?;
            if status == reqwest::StatusCode::OK {
                let Some((line, time)) = text.lines().find_map(|l| Some((l, peer.verifier.check_line(body, l)??))) else {
                    return Ok(Outcome::Refused { status: 200, text: "no cosignature of its key that verifies".into() });
                };
                self.store(peer, size, line).await.map_err(|e| e.report())?;
                state.known = Some(size);
                return Ok(Outcome::Cosigned { time });
            }
            if status == reqwest::StatusCode::CONFLICT && is_size {
                let Some(known) = text.strip_suffix('\n').and_then(|t| t.parse::<u64>().ok()) else {
                    return Ok(Outcome::Refused { status: 409, text });
                };
                state.known = Some(known);
                continue;
            }
            if status.is_client_error() {
                return Ok(Outcome::Refused { status: status.as_u16(), text });
            }
            return Err(format!("{status}: {}", text.trim()));
        }
        Ok(Outcome::Refused { status: 409, text: "the witness's size kept changing".into() })
    }

    /// Adds the cosignature line to the stored note (replacing an older one of the same key), unless another
    /// instance changed the note meanwhile: then again on its newer text.
    async fn store(&self, peer: &Peer, size: u64, line: &str) -> Result<(), AppError> {
        for _ in 0..5 {
            let Some(old) = store::checkpoint_note(&self.log.db, size as i64).await.map_err(sql)? else { return Ok(()) };
            let body = Note::from_bytes(old.as_bytes()).map_err(|e| AppError::internal(format!("checkpoint note: {e}")))?.text().to_vec();
            let mut new = String::with_capacity(old.len() + line.len() + 1);
            for l in old.split_inclusive('\n') {
                if peer.verifier.check_line(&body, l).is_none() || !l.starts_with("— ") {
                    new.push_str(l);
                }
            }
            new.push_str(line);
            new.push('\n');
            if store::replace_note(&self.log.db, size as i64, &old, &new).await.map_err(sql)? {
                return Ok(());
            }
        }
        Err(AppError::internal("transparency log: the checkpoint's note kept changing while a cosignature was added"))
    }
}
