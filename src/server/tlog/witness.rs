//! `docnum witness`: a C2SP tlog-witness for the numbers' log (or any log of signed-note checkpoints). It keeps, per
//! log origin, the size and root of the newest checkpoint it cosigned, and cosigns a new one only with a consistency
//! proof from that: a log that rewrote its history, or shows another history to someone else, cannot get both
//! cosigned. No database: its state is one small file, replaced atomically, so another organisation can run it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use base64::prelude::{Engine as _, BASE64_STANDARD};
use signed_note::{Note, NoteError, StandardVerifier, VerifierList};
use tlog_tiles::{Checkpoint, Hash, EMPTY_HASH};

use crate::contract::messages::{Detail, LogDetail};
use crate::receipt;
use crate::receipt::cosignature::CosignatureSigner;

/// The largest request: a checkpoint with a few signatures and 63 proof hashes fit many times over.
const MAX_BODY: usize = 64 * 1024;
/// A consistency proof of a tree of 2^63 entries has fewer lines.
const MAX_PROOF_LINES: usize = 63;

/// The witness's settings.
#[derive(Clone, Debug)]
pub struct WitnessConfig {
    /// Its private key's text (`docnum witness-keygen`); the key's name is the witness's name.
    pub signing_key: String,
    /// The logs it cosigns: their verifier keys (the key's name is the log's origin).
    pub logs: Vec<String>,
    /// Where it keeps each log's size and root.
    pub state_file: PathBuf,
}

/// A log's newest cosigned tree.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tree {
    pub size: u64,
    /// Base64 of the root hash.
    pub root: String,
}

pub struct Witness {
    signer: CosignatureSigner,
    logs: BTreeMap<String, StandardVerifier>,
    state_file: PathBuf,
    /// One request at a time changes the state: a check and its write are one step.
    state: tokio::sync::Mutex<BTreeMap<String, Tree>>,
}

/// Why a checkpoint is not cosigned: the status the protocol gives each case, and what to tell the caller.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    Malformed(Malformation),
    UnknownLog,
    Signature,
    /// The old size is not the size the witness knows: the size it knows.
    Conflict(u64),
    Proof,
    Storage(String),
}

/// What is wrong with a request that does not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformation {
    NotUtf8,
    NoBlankLine,
    NoOldLine,
    OldNotDecimal,
    ProofNotBase64,
    ProofNotHash,
    TooManyProofLines,
    NotSignedNote,
    NotCheckpoint,
    OldBeyondCheckpoint,
}

impl Malformation {
    fn detail(self) -> LogDetail<'static> {
        match self {
            Malformation::NotUtf8 => LogDetail::BodyNotUtf8,
            Malformation::NoBlankLine => LogDetail::NoBlankLine,
            Malformation::NoOldLine => LogDetail::FirstLineNotOld,
            Malformation::OldNotDecimal => LogDetail::OldSizeNotDecimal,
            Malformation::ProofNotBase64 => LogDetail::ProofLineNotBase64,
            Malformation::ProofNotHash => LogDetail::ProofLineNotHash,
            Malformation::TooManyProofLines => LogDetail::TooManyProofLines,
            Malformation::NotSignedNote => LogDetail::NotSignedNote,
            Malformation::NotCheckpoint => LogDetail::NoteNotCheckpoint,
            Malformation::OldBeyondCheckpoint => LogDetail::OldSizeBeyondCheckpoint,
        }
    }
}

/// A refusal's text: the witness knows no caller's language, so Thai, then the English in parentheses.
fn in_both(detail: LogDetail<'_>) -> String {
    let (th, en) = detail.both();
    format!("{th} ({en})")
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let (status, text) = match self {
            Refused::Conflict(size) => {
                return (StatusCode::CONFLICT, [(header::CONTENT_TYPE, "text/x.tlog.size")], format!("{size}\n")).into_response()
            }
            Refused::Malformed(what) => (StatusCode::BAD_REQUEST, in_both(LogDetail::MalformedRequest { what: &what.detail() })),
            Refused::UnknownLog => (StatusCode::NOT_FOUND, in_both(LogDetail::UnknownLog)),
            Refused::Signature => (StatusCode::FORBIDDEN, in_both(LogDetail::NotSignedByLog)),
            Refused::Proof => (StatusCode::UNPROCESSABLE_ENTITY, in_both(LogDetail::InconsistentCheckpoint)),
            Refused::Storage(e) => {
                tracing::error!(error = %e, "witness: its state could not be written");
                (StatusCode::INTERNAL_SERVER_ERROR, in_both(LogDetail::StateNotStored))
            }
        };
        (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], format!("{text}\n")).into_response()
    }
}

/// A new witness key: (its private key's text, its verifier key).
pub fn generate_key(name: &str) -> Result<(String, String), String> {
    let seed: [u8; 32] = rand::random();
    CosignatureSigner::generate(name, seed).map_err(|_| format!("{name:?} is not a valid witness name (no spaces, no '+')"))
}

impl Witness {
    /// Reads its key and its state (none yet: an empty state).
    pub fn open(config: &WitnessConfig) -> Result<Witness, String> {
        let signer =
            CosignatureSigner::new(&config.signing_key).map_err(|_| "WITNESS_KEY_FILE: not a witness key (docnum witness-keygen)".to_string())?;
        let mut logs = BTreeMap::new();
        for vkey in &config.logs {
            let v = StandardVerifier::new(vkey.trim()).map_err(|e| format!("WITNESS_LOGS: {vkey:?}: {e}"))?;
            logs.insert(signed_note::Verifier::name(&v).to_string(), v);
        }
        if logs.is_empty() {
            return Err("WITNESS_LOGS: no log to witness".into());
        }
        let state = read_state(&config.state_file)?;
        Ok(Witness { signer, logs, state_file: config.state_file.clone(), state: tokio::sync::Mutex::new(state) })
    }

    pub fn name(&self) -> &str {
        self.signer.name()
    }

    pub fn vkey(&self) -> String {
        self.signer.vkey()
    }

    /// The tree it last cosigned for a log.
    pub async fn tree(&self, origin: &str) -> Option<Tree> {
        self.state.lock().await.get(origin).cloned()
    }

    /// The protocol's checks, in its order; the cosignature line once the new tree is stored.
    pub async fn add_checkpoint(&self, body: &[u8]) -> Result<String, Refused> {
        let body = std::str::from_utf8(body).map_err(|_| Refused::Malformed(Malformation::NotUtf8))?;
        let (head, note_text) = body.split_once("\n\n").ok_or(Refused::Malformed(Malformation::NoBlankLine))?;
        let mut lines = head.split('\n');
        let old = lines.next().and_then(|l| l.strip_prefix("old ")).ok_or(Refused::Malformed(Malformation::NoOldLine))?;
        let old = decimal(old).ok_or(Refused::Malformed(Malformation::OldNotDecimal))?;
        let proof = lines
            .map(|l| {
                let bytes = BASE64_STANDARD.decode(l).map_err(|_| Refused::Malformed(Malformation::ProofNotBase64))?;
                Ok(Hash(bytes.try_into().map_err(|_| Refused::Malformed(Malformation::ProofNotHash))?))
            })
            .collect::<Result<Vec<Hash>, Refused>>()?;
        if proof.len() > MAX_PROOF_LINES {
            return Err(Refused::Malformed(Malformation::TooManyProofLines));
        }
        let note = Note::from_bytes(note_text.as_bytes()).map_err(|_| Refused::Malformed(Malformation::NotSignedNote))?;
        let cp = Checkpoint::from_bytes(note.text()).map_err(|_| Refused::Malformed(Malformation::NotCheckpoint))?;
        let log = self.logs.get(cp.origin()).ok_or(Refused::UnknownLog)?;
        match note.verify(&VerifierList::new(vec![Box::new(log.clone())])) {
            Ok(_) => {}
            Err(NoteError::MalformedNote) => return Err(Refused::Malformed(Malformation::NotSignedNote)),
            Err(_) => return Err(Refused::Signature),
        }
        if old > cp.size() {
            return Err(Refused::Malformed(Malformation::OldBeyondCheckpoint));
        }
        let mut state = self.state.lock().await;
        let known = state.get(cp.origin()).cloned();
        let known_size = known.as_ref().map_or(0, |t| t.size);
        if old != known_size {
            return Err(Refused::Conflict(known_size));
        }
        if cp.size() == 0 {
            if !proof.is_empty() || *cp.hash() != EMPTY_HASH {
                return Err(Refused::Proof);
            }
        } else if old == 0 {
            if !proof.is_empty() {
                return Err(Refused::Proof);
            }
        } else {
            let known_root = known.as_ref().and_then(|t| BASE64_STANDARD.decode(&t.root).ok()).and_then(|r| r.try_into().ok()).map(Hash);
            let known_root = known_root.ok_or_else(|| Refused::Storage(format!("the stored root of {} does not read", cp.origin())))?;
            // the same size needs the same root and no proof; a larger one the proof from the known tree
            receipt::check_consistency(&proof, cp.size(), *cp.hash(), old, known_root).map_err(|_| Refused::Proof)?;
        }
        let tree = Tree { size: cp.size(), root: BASE64_STANDARD.encode(cp.hash().0) };
        if known.as_ref() != Some(&tree) {
            let mut next = state.clone();
            next.insert(cp.origin().to_string(), tree);
            write_state(&self.state_file, &next).await.map_err(Refused::Storage)?;
            *state = next;
        }
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        Ok(self.signer.sign(now, note.text()))
    }
}

/// A size as the protocol writes it: decimal digits, no leading zero.
fn decimal(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0')) {
        return None;
    }
    s.parse().ok()
}

fn read_state(path: &Path) -> Result<BTreeMap<String, Tree>, String> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| format!("WITNESS_STATE_FILE {}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(format!("WITNESS_STATE_FILE {}: {e}", path.display())),
    }
}

/// Writes the state beside the file, flushes it, then renames it over: a crash leaves the old state or the new one.
async fn write_state(path: &Path, state: &BTreeMap<String, Tree>) -> Result<(), String> {
    let shown = path.display().to_string();
    let path = path.to_path_buf();
    let bytes = serde_json::to_vec_pretty(state).map_err(|e| e.to_string())?;
    tokio::task::spawn_blocking(move || -> std::io::Result<()> {
        use std::io::Write as _;
        let tmp = path.with_extension("tmp");
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| format!("{shown}: {e}"))
}

/// `POST /add-checkpoint`.
pub fn router(witness: Arc<Witness>) -> Router {
    Router::new().route("/add-checkpoint", post(add_checkpoint)).layer(DefaultBodyLimit::max(MAX_BODY)).with_state(witness)
}

async fn add_checkpoint(State(witness): State<Arc<Witness>>, body: Bytes) -> Response {
    match witness.add_checkpoint(&body).await {
        Ok(line) => (StatusCode::OK, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], line).into_response(),
        Err(refused) => {
            if matches!(refused, Refused::Proof | Refused::Signature) {
                tracing::warn!(?refused, "witness: a checkpoint refused");
            }
            refused.into_response()
        }
    }
}

/// Serves the witness until the process is stopped.
pub async fn serve(config: WitnessConfig, listener: tokio::net::TcpListener) -> Result<(), String> {
    let witness = Arc::new(Witness::open(&config)?);
    tracing::info!(name = witness.name(), vkey = %witness.vkey(), logs = ?witness.logs.keys().collect::<Vec<_>>(), "witness listening");
    axum::serve(listener, router(witness)).await.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::decimal;

    #[test]
    fn sizes_have_one_spelling() {
        assert_eq!(decimal("0"), Some(0));
        assert_eq!(decimal("120"), Some(120));
        for bad in ["", "01", "+1", "-1", " 1", "1 ", "x"] {
            assert_eq!(decimal(bad), None, "{bad:?}");
        }
    }
}
