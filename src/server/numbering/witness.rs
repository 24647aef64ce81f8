//! Witnessed heads (SPEC §7, issue 36): each counter's head — its last number and its audit chain's length and hash —
//! is also recorded outside its database, so that a database found behind it issues nothing on that counter. A
//! restored backup, a failover to a replica that missed commits or a hand edit would otherwise hand out numbers that
//! callers already hold.
//!
//! - The record is a file (for SQLite: beside the database file, `<db>.witness`), JSON lines appended by a thread of
//!   its own after a batch commits and before its callers are answered: a process killed after that keeps it (the
//!   page cache is the kernel's); the thread syncs it to disk at most [`SYNC_EVERY`] later (a power cut may lose that
//!   much, which only weakens the witness, never raises a false alarm).
//! - The chain's length is what is compared: it grows with every change of the counter (a reset too, which lowers the
//!   last number), so a database whose length is below the witnessed one has lost changes; at the same length another
//!   hash means another history.
//! - A witness behind the database is normal (another process on the same file, a crash between commit and record).
//! - [`Witness::resume`] records a lower head on purpose: a super admin approved going on past the witnessed head.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use crate::numbering::CounterKey;
use crate::server::audit::ChainHead;

/// How long a written record may stay unsynced.
pub const SYNC_EVERY: Duration = Duration::from_millis(50);
/// Past this size the file is rewritten with one line per counter.
const COMPACT_AT_BYTES: u64 = 64 * 1024 * 1024;

/// A counter's head as witnessed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    pub last_number: i64,
    pub length: i64,
    pub hash: String,
}

impl Head {
    pub fn of(last_number: i64, chain: &ChainHead) -> Head {
        Head { last_number, length: chain.length, hash: chain.hash.clone() }
    }
}

#[derive(Serialize, Deserialize)]
struct Line {
    key: CounterKey,
    #[serde(flatten)]
    head: Head,
    /// A super admin's resume: this head replaces the witnessed one even though it is lower.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    resume: bool,
}

/// How a stored head compares with its witness.
#[derive(Debug, PartialEq, Eq)]
pub struct Behind {
    pub witnessed: Head,
    pub stored_length: i64,
}

type Heads = Arc<Mutex<HashMap<CounterKey, Head>>>;

/// A counter head record kept in a file, shared by the process's committers.
pub struct Witness {
    path: PathBuf,
    heads: Heads,
    writes: Mutex<mpsc::Sender<(Vec<u8>, oneshot::Sender<()>)>>,
}

impl std::fmt::Debug for Witness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Witness").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Witness {
    /// The witness file of a SQLite database: beside it, so a restore of the database file alone leaves it.
    pub fn beside(database_file: &Path) -> PathBuf {
        let mut name = database_file.as_os_str().to_owned();
        name.push(".witness");
        PathBuf::from(name)
    }

    /// Reads the file (created if missing), rewrites it with one line per counter, and starts its writer thread.
    pub fn open(path: PathBuf) -> std::io::Result<Arc<Witness>> {
        let heads = match std::fs::read(&path) {
            Ok(bytes) => read_lines(&bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => HashMap::new(),
            Err(e) => return Err(e),
        };
        write_compacted(&path, &heads)?;
        let file = std::fs::OpenOptions::new().append(true).open(&path)?;
        let heads: Heads = Arc::new(Mutex::new(heads));
        let (tx, rx) = mpsc::channel();
        let (thread_path, thread_heads) = (path.clone(), heads.clone());
        std::thread::Builder::new().name("witness".into()).spawn(move || writer(thread_path, file, thread_heads, rx))?;
        Ok(Arc::new(Witness { path, heads, writes: Mutex::new(tx) }))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The witnessed head of a counter, if any.
    pub fn witnessed(&self, key: &CounterKey) -> Option<Head> {
        self.heads.lock().unwrap().get(key).cloned()
    }

    /// Whether the database's head of `key` (its audit chain, as a batch read it) has everything witnessed.
    pub fn check(&self, key: &CounterKey, stored: &ChainHead) -> Result<(), Behind> {
        let heads = self.heads.lock().unwrap();
        match heads.get(key) {
            Some(w) if stored.length < w.length || (stored.length == w.length && stored.hash != w.hash) => {
                Err(Behind { witnessed: w.clone(), stored_length: stored.length })
            }
            _ => Ok(()),
        }
    }

    /// Records a committed head, before its callers are answered. A head older than the one witnessed (another
    /// process went further meanwhile) leaves the witness as it is.
    pub async fn record(&self, key: &CounterKey, head: Head) {
        {
            let mut heads = self.heads.lock().unwrap();
            if heads.get(key).is_some_and(|w| w.length >= head.length) {
                return;
            }
            heads.insert(key.clone(), head.clone());
        }
        self.write(Line { key: key.clone(), head, resume: false }).await;
    }

    /// Records the head a super admin's resume left, lower than the witnessed one.
    pub async fn resume(&self, key: &CounterKey, head: Head) {
        self.heads.lock().unwrap().insert(key.clone(), head.clone());
        self.write(Line { key: key.clone(), head, resume: true }).await;
    }

    async fn write(&self, line: Line) {
        let mut bytes = serde_json::to_vec(&line).expect("a witness line serializes");
        bytes.push(b'\n');
        let (done, written) = oneshot::channel();
        let sent = self.writes.lock().unwrap().send((bytes, done));
        if sent.is_ok() {
            let _ = written.await;
        }
    }
}

/// The heads of a witness file's lines: per counter the longest chain, unless a later resume replaced it. A line
/// cut short by a crash is skipped.
fn read_lines(bytes: &[u8]) -> HashMap<CounterKey, Head> {
    let mut heads: HashMap<CounterKey, Head> = HashMap::new();
    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let Ok(Line { key, head, resume }) = serde_json::from_slice::<Line>(line) else { continue };
        match heads.get(&key) {
            Some(w) if !resume && w.length >= head.length => {}
            _ => drop(heads.insert(key, head)),
        }
    }
    heads
}

/// Rewrites the file with one line per counter: to a temporary file, synced, renamed over it, the directory synced.
fn write_compacted(path: &Path, heads: &HashMap<CounterKey, Head>) -> std::io::Result<()> {
    let tmp = path.with_extension("witness.tmp");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    for (key, head) in heads {
        serde_json::to_writer(&mut out, &Line { key: key.clone(), head: head.clone(), resume: true })?;
        out.write_all(b"\n")?;
    }
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// The writer thread: writes what was sent (all that waits, in one call), answers, syncs within [`SYNC_EVERY`], and
/// compacts the file when it has grown past [`COMPACT_AT_BYTES`]. A failed write is logged; the batch it was for
/// has committed and is answered regardless (a witness that misses a head only protects less).
fn writer(path: PathBuf, mut file: std::fs::File, heads: Heads, rx: mpsc::Receiver<(Vec<u8>, oneshot::Sender<()>)>) {
    let mut dirty = false;
    let mut synced = Instant::now();
    loop {
        let first = match rx.recv_timeout(SYNC_EVERY) {
            Ok(w) => w,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if dirty {
                    sync(&file);
                    (dirty, synced) = (false, Instant::now());
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let mut bytes = first.0;
        let mut done = vec![first.1];
        while let Ok((more, d)) = rx.try_recv() {
            bytes.extend_from_slice(&more);
            done.push(d);
        }
        if let Err(e) = file.write_all(&bytes) {
            tracing::error!(error = %e, path = %path.display(), "witness write failed");
        }
        dirty = true;
        for d in done {
            let _ = d.send(());
        }
        if synced.elapsed() >= SYNC_EVERY {
            sync(&file);
            (dirty, synced) = (false, Instant::now());
        }
        if file.metadata().map(|m| m.len() > COMPACT_AT_BYTES).unwrap_or(false) {
            let snapshot = heads.lock().unwrap().clone();
            match write_compacted(&path, &snapshot).and_then(|()| std::fs::OpenOptions::new().append(true).open(&path)) {
                Ok(f) => file = f,
                Err(e) => tracing::error!(error = %e, path = %path.display(), "witness compaction failed"),
            }
        }
    }
    if dirty {
        sync(&file);
    }
}

fn sync(file: &std::fs::File) {
    if let Err(e) = file.sync_data() {
        tracing::error!(error = %e, "witness sync failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: i64) -> CounterKey {
        serde_json::from_value(serde_json::json!({
            "project_id": 1, "corr_type_id": n, "originator_id": 0, "recipient_id": 0, "sub_type_id": 0, "rfa_type_id": 0,
            "discipline_id": 0, "period": "YEAR_2026"
        }))
        .unwrap()
    }

    fn chain(length: i64, hash: &str) -> ChainHead {
        ChainHead { length, hash: hash.into() }
    }

    #[tokio::test]
    async fn a_database_behind_its_witness_is_found_and_a_resume_accepts_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = Witness::beside(&dir.path().join("docnum.db"));
        let w = Witness::open(path.clone()).unwrap();
        w.record(&key(1), Head::of(8, &chain(8, "h8"))).await;
        w.record(&key(1), Head::of(5, &chain(5, "h5"))).await; // an older head from another process: ignored
        assert_eq!(w.check(&key(1), &chain(8, "h8")), Ok(()));
        assert_eq!(w.check(&key(1), &chain(9, "h9")), Ok(()), "the database ahead of its witness is normal");
        assert_eq!(w.check(&key(2), &chain(1, "x")), Ok(()), "nothing witnessed");
        let behind = w.check(&key(1), &chain(3, "h3")).unwrap_err();
        assert_eq!((behind.witnessed.last_number, behind.stored_length), (8, 3));
        assert!(w.check(&key(1), &chain(8, "other")).is_err(), "another history of the same length");

        // a new process reads what this one wrote
        drop(w);
        let again = Witness::open(path.clone()).unwrap();
        assert_eq!(again.witnessed(&key(1)), Some(Head::of(8, &chain(8, "h8"))));
        again.resume(&key(1), Head::of(8, &chain(4, "h4"))).await;
        assert_eq!(again.check(&key(1), &chain(4, "h4")), Ok(()));
        drop(again);
        let third = Witness::open(path).unwrap();
        assert_eq!(third.witnessed(&key(1)), Some(Head::of(8, &chain(4, "h4"))), "the resume survives a restart");
    }

    #[test]
    fn a_line_cut_short_is_skipped() {
        let whole = serde_json::to_vec(&Line { key: key(1), head: Head::of(2, &chain(2, "a")), resume: false }).unwrap();
        let mut bytes = whole.clone();
        bytes.push(b'\n');
        bytes.extend_from_slice(&whole[..whole.len() / 2]);
        let heads = read_lines(&bytes);
        assert_eq!(heads.get(&key(1)).map(|h| h.length), Some(2));
    }
}
