//! Witnessed heads (docs/rules/numbering.md#what-is-never-done-twice): each counter's head — its last number and its audit chain's length and hash —
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
//! - Several instances (MariaDB with `REDIS_URLS`) share the witness in the lock's Redis servers ([`Shared`]): every
//!   head goes to each server (a script keeps the longest chain), and a counter read afresh from the database is
//!   compared with the longest head any server holds — so an instance that never wrote the lost commits still finds
//!   them missing. A server that does not answer within [`SHARED_TIMEOUT`] is passed over (the witness then protects
//!   less, it never refuses wrongly).

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
pub(crate) const SYNC_EVERY: Duration = Duration::from_millis(50);
/// Past this size the file is rewritten with one line per counter.
const COMPACT_AT_BYTES: u64 = 64 * 1024 * 1024;

/// A counter's head as witnessed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Head {
    pub(crate) last_number: i64,
    pub(crate) length: i64,
    pub(crate) hash: String,
}

impl Head {
    pub(crate) fn of(last_number: i64, chain: &ChainHead) -> Head {
        Head { last_number, length: chain.length, hash: chain.hash.clone() }
    }
}

/// The first line of a witness file: the database it witnesses (`db::identity`).
#[derive(Serialize, Deserialize)]
struct Header {
    database: String,
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
pub(crate) struct Behind {
    pub(crate) witnessed: Head,
    pub(crate) stored_length: i64,
}

type Heads = Arc<Mutex<HashMap<CounterKey, Head>>>;

/// How long a Redis server of the shared witness may take to answer.
pub(crate) const SHARED_TIMEOUT: Duration = Duration::from_millis(250);

type Writes = Mutex<mpsc::Sender<(Vec<u8>, oneshot::Sender<()>)>>;

/// The counters' witnessed heads: in memory for the process's committers, in a file and/or in Redis.
pub struct Witness {
    /// The file and its writer thread's queue.
    file: Option<(PathBuf, Writes)>,
    heads: Heads,
    shared: Option<Shared>,
}

impl std::fmt::Debug for Witness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Witness").field("file", &self.file.as_ref().map(|f| &f.0)).field("shared", &self.shared.is_some()).finish_non_exhaustive()
    }
}

impl Witness {
    /// The witness file of a SQLite database: beside it, so a restore of the database file alone leaves it.
    pub(crate) fn beside(database_file: &Path) -> PathBuf {
        let mut name = database_file.as_os_str().to_owned();
        name.push(".witness");
        PathBuf::from(name)
    }

    /// A witness of the database `database` (its identity) kept in `file` (read if it exists, rewritten with one line
    /// per counter, appended to by a thread of its own) and/or in the `shared` Redis servers. A file that witnessed
    /// another database (this one was made anew) is set aside as `<file>.<its database>`, and a new one begun.
    pub(crate) fn open(file: Option<PathBuf>, shared: Option<Shared>, database: &str) -> std::io::Result<Arc<Witness>> {
        let shared = shared.map(|s| Shared { prefix: format!("docnum:witness:{database}:"), ..s });
        let Some(path) = file else {
            return Ok(Arc::new(Witness { file: None, heads: Default::default(), shared }));
        };
        let heads = match std::fs::read(&path) {
            Ok(bytes) => match read_file(&bytes) {
                (Some(of), heads) if of == database => heads,
                (of, _) => {
                    let aside = PathBuf::from(format!("{}.{}", path.display(), of.as_deref().unwrap_or("unknown")));
                    tracing::warn!(file = %path.display(), aside = %aside.display(), "the witness file is of another database: set aside");
                    std::fs::rename(&path, aside)?;
                    HashMap::new()
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => HashMap::new(),
            Err(e) => return Err(e),
        };
        write_compacted(&path, database, &heads)?;
        let out = std::fs::OpenOptions::new().append(true).open(&path)?;
        let heads: Heads = Arc::new(Mutex::new(heads));
        let (tx, rx) = mpsc::channel();
        let (thread_path, thread_heads, database) = (path.clone(), heads.clone(), database.to_string());
        std::thread::Builder::new().name("witness".into()).spawn(move || writer(thread_path, database, out, thread_heads, rx))?;
        Ok(Arc::new(Witness { file: Some((path, Mutex::new(tx))), heads, shared }))
    }

    /// Whether the witness is shared by several instances (in Redis): a counter read afresh is then compared with
    /// the heads the others recorded ([`Witness::refresh`]).
    pub(crate) fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// Takes in the heads the other instances recorded for these counters (the longest of each).
    pub(crate) async fn refresh(&self, keys: &[&CounterKey]) {
        let Some(shared) = &self.shared else { return };
        if keys.is_empty() {
            return;
        }
        let found = shared.heads(keys).await;
        let mut heads = self.heads.lock().unwrap();
        for (key, head) in keys.iter().zip(found) {
            let Some(head) = head else { continue };
            if heads.get(*key).is_none_or(|w| w.length < head.length) {
                heads.insert((*key).clone(), head);
            }
        }
    }

    /// The witnessed head of a counter, if any.
    pub(crate) fn witnessed(&self, key: &CounterKey) -> Option<Head> {
        self.heads.lock().unwrap().get(key).cloned()
    }

    /// Whether the database's head of `key` (its audit chain, as a batch read it) has everything witnessed.
    pub(crate) fn check(&self, key: &CounterKey, stored: &ChainHead) -> Result<(), Behind> {
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
    pub(crate) async fn record(&self, key: &CounterKey, head: Head) {
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
    pub(crate) async fn resume(&self, key: &CounterKey, head: Head) {
        self.heads.lock().unwrap().insert(key.clone(), head.clone());
        self.write(Line { key: key.clone(), head, resume: true }).await;
    }

    async fn write(&self, line: Line) {
        let to_file = async {
            let Some((_, writes)) = &self.file else { return };
            let mut bytes = serde_json::to_vec(&line).expect("a witness line serializes");
            bytes.push(b'\n');
            let (done, written) = oneshot::channel();
            let sent = writes.lock().unwrap().send((bytes, done));
            if sent.is_ok() {
                let _ = written.await;
            }
        };
        let to_redis = async {
            if let Some(shared) = &self.shared {
                shared.record(&line).await;
            }
        };
        futures::join!(to_file, to_redis);
    }
}

/// The witness in Redis, shared by the instances: each counter's head under `docnum:witness:<counter>` on every
/// server of `REDIS_URLS` (the lock's), as `length:last:hash`; a script keeps the longest chain (a resume replaces it).
/// Make those servers durable (`appendonly yes`, `appendfsync always` or `everysec`; deploy/README.md).
pub(crate) struct Shared {
    servers: Vec<crate::server::kept_redis::KeptRedis>,
    /// `docnum:witness:<database identity>:`: the heads of one database (another deployment may share the servers).
    prefix: String,
}

/// Sets the head unless the one stored is at least as long (ARGV: length, last, hash, mode: `resume` replaces).
const RECORD: &str = r"
local cur = redis.call('GET', KEYS[1])
if cur and ARGV[4] ~= 'resume' then
  local len = tonumber(string.match(cur, '^(%d+):'))
  if len and len >= tonumber(ARGV[1]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. ARGV[2] .. ':' .. ARGV[3])
return 1
";

impl Shared {
    pub(crate) fn new(redis_urls: &[String]) -> redis::RedisResult<Shared> {
        let servers = redis_urls
            .iter()
            .map(|u| {
                crate::server::tls::redis_client(u)
                    .map(crate::server::kept_redis::KeptRedis::new)
                    .map_err(|e| redis::RedisError::from((redis::ErrorKind::InvalidClientConfig, "REDIS_URLS", e)))
            })
            .collect::<Result<_, _>>()?;
        Ok(Shared { servers, prefix: String::new() })
    }

    fn redis_key(&self, key: &CounterKey) -> String {
        format!("{}{}", self.prefix, key.lock_name())
    }

    async fn record(&self, line: &Line) {
        let script = redis::Script::new(RECORD);
        let key = self.redis_key(&line.key);
        let mode = if line.resume { "resume" } else { "max" };
        let writes = self.servers.iter().map(|server| {
            let (script, key) = (&script, &key);
            async move {
                if server.resting() {
                    return;
                }
                let done = tokio::time::timeout(SHARED_TIMEOUT, async {
                    let mut c = server.get().await?;
                    script.key(key).arg(line.head.length).arg(line.head.last_number).arg(&line.head.hash).arg(mode).invoke_async::<i64>(&mut c).await
                })
                .await;
                if !matches!(done, Ok(Ok(_))) {
                    tracing::warn!(counter = %key, "the shared witness did not take a head");
                    server.failed().await;
                }
            }
        });
        futures::future::join_all(writes).await;
    }

    /// The longest head each server holds of each counter.
    async fn heads(&self, keys: &[&CounterKey]) -> Vec<Option<Head>> {
        let names: Vec<String> = keys.iter().map(|k| self.redis_key(k)).collect();
        let reads = self.servers.iter().map(|server| {
            let names = &names;
            async move {
                if server.resting() {
                    return None;
                }
                let read = tokio::time::timeout(SHARED_TIMEOUT, async {
                    let mut c = server.get().await?;
                    redis::cmd("MGET").arg(names).query_async::<Vec<Option<String>>>(&mut c).await
                })
                .await;
                match read {
                    Ok(Ok(values)) => Some(values),
                    _ => {
                        server.failed().await;
                        None
                    }
                }
            }
        });
        let mut longest: Vec<Option<Head>> = vec![None; keys.len()];
        for values in futures::future::join_all(reads).await.into_iter().flatten() {
            for (slot, value) in longest.iter_mut().zip(values) {
                let Some(head) = value.as_deref().and_then(parse_shared) else { continue };
                if slot.as_ref().is_none_or(|h| h.length < head.length) {
                    *slot = Some(head);
                }
            }
        }
        longest
    }
}

/// `length:last:hash` as the shared witness stores a head.
fn parse_shared(value: &str) -> Option<Head> {
    let mut parts = value.splitn(3, ':');
    let length = parts.next()?.parse().ok()?;
    let last_number = parts.next()?.parse().ok()?;
    Some(Head { last_number, length, hash: parts.next()?.to_string() })
}

/// The database a witness file witnesses (its first line) and the heads of its other lines.
fn read_file(bytes: &[u8]) -> (Option<String>, HashMap<CounterKey, Head>) {
    let first = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
    let database = serde_json::from_slice::<Header>(first).ok().map(|h| h.database);
    (database, read_lines(bytes))
}

/// The heads of a witness file's lines: per counter the longest chain, unless a later resume replaced it. A line
/// cut short by a crash is skipped (and so is the header).
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

/// Rewrites the file with its header and one line per counter: to a temporary file, synced, renamed over it, the
/// directory synced.
fn write_compacted(path: &Path, database: &str, heads: &HashMap<CounterKey, Head>) -> std::io::Result<()> {
    let tmp = path.with_extension("witness.tmp");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    serde_json::to_writer(&mut out, &Header { database: database.to_string() })?;
    out.write_all(b"\n")?;
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
fn writer(path: PathBuf, database: String, mut file: std::fs::File, heads: Heads, rx: mpsc::Receiver<(Vec<u8>, oneshot::Sender<()>)>) {
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
            match write_compacted(&path, &database, &snapshot).and_then(|()| std::fs::OpenOptions::new().append(true).open(&path)) {
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
        let w = Witness::open(Some(path.clone()), None, "db-1").unwrap();
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
        let again = Witness::open(Some(path.clone()), None, "db-1").unwrap();
        assert_eq!(again.witnessed(&key(1)), Some(Head::of(8, &chain(8, "h8"))));
        again.resume(&key(1), Head::of(8, &chain(4, "h4"))).await;
        assert_eq!(again.check(&key(1), &chain(4, "h4")), Ok(()));
        drop(again);
        let third = Witness::open(Some(path.clone()), None, "db-1").unwrap();
        assert_eq!(third.witnessed(&key(1)), Some(Head::of(8, &chain(4, "h4"))), "the resume survives a restart");
        drop(third);
        // a database made anew at the same place is not compared with the old one's heads
        let other = Witness::open(Some(path.clone()), None, "db-2").unwrap();
        assert_eq!(other.witnessed(&key(1)), None);
        assert!(Path::new(&format!("{}.db-1", path.display())).exists(), "the old witness is set aside, not deleted");
    }

    #[test]
    fn a_shared_head_reads_back() {
        assert_eq!(parse_shared("12:9:ab:cd"), Some(Head { last_number: 9, length: 12, hash: "ab:cd".into() }));
        assert_eq!(parse_shared("x:9:h"), None);
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
