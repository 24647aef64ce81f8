//! The append-only audit trail. Rows are chained by hash per chain: one chain per counter (extended
//! inside the counter's own batch transaction, so it never serializes unrelated counters) and one for
//! administrative changes. The head of a counter's chain is kept in the counter's own row (`chain_hash`,
//! `chain_length`: the batch moves both in one row), the heads of the others in `audit_chains`; either is
//! updated with a length check so that two writers can never fork a chain. `verify` recomputes every hash.

use crate::server::db::{classify, Conditions, Conn, Db, DbFailure, Dialect, Tx};
use crate::server::error::AppError;
use serde::Serialize;
use sha2::{Digest, Sha256};

pub const GENESIS: &str = "GENESIS";
pub const ADMIN_CHAIN: &str = "admin";

const COUNTER_CHAIN_PREFIX: &str = "counter:";

/// A counter's chain: its head is kept in the counter's own row.
pub fn counter_chain(counter_id: CounterId) -> String {
    format!("{COUNTER_CHAIN_PREFIX}{counter_id}")
}

/// One audit row's content (everything but its place in the chain). Field order is part of the hash.
#[derive(Clone, Debug, Default, Serialize, PartialEq, sqlx::FromRow)]
pub struct AuditEntry {
    pub operation: String,
    pub status: String,
    pub document_number: Option<String>,
    pub counter_id: Option<CounterId>,
    pub sequence: Option<i64>,
    pub counter_key: Option<String>,
    pub template_used: Option<String>,
    pub reservation_token: Option<String>,
    pub document_id: Option<String>,
    pub user_id: Option<UserId>,
    pub username: Option<String>,
    pub ip_address: Option<String>,
    pub user_agent: Option<String>,
    pub retry_count: i64,
    pub lock_wait_ms: i64,
    pub total_ms: i64,
    pub fallback_used: String,
    pub old_value: Option<String>,
    pub new_value: Option<String>,
    pub metadata: Option<String>,
    pub created_at: i64,
}

const COLUMNS: &str = "operation, status, document_number, counter_id, sequence, counter_key, template_used, \
    reservation_token, document_id, user_id, username, ip_address, user_agent, retry_count, lock_wait_ms, \
    total_ms, fallback_used, old_value, new_value, metadata, created_at";

fn row_hash(prev_hash: &str, chain_key: &str, chain_seq: i64, entry: &AuditEntry) -> String {
    let mut h = Sha256::new();
    h.update(prev_hash.as_bytes());
    h.update(b"\n");
    h.update(chain_key.as_bytes());
    h.update(b"\n");
    h.update(chain_seq.to_string().as_bytes());
    h.update(b"\n");
    h.update(serde_json::to_vec(entry).unwrap_or_default());
    hex::encode(h.finalize())
}

/// Where a chain ends: the hash of its last row and how many rows it has.
#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
pub struct ChainHead {
    pub hash: String,
    pub length: i64,
}

/// Appends entries to a chain other than a counter's (the administrative one) inside the caller's transaction.
/// Fails with `VersionConflict` (and so rolls the caller back for a retry) if another writer extended the chain
/// meanwhile. A counter's chain moves only with its counter, in one fenced UPDATE (`counter_tx`).
pub async fn append(tx: &mut Tx<'_>, dialect: Dialect, chain_key: &str, entries: &[AuditEntry]) -> Result<(), AppError> {
    if chain_key.starts_with(COUNTER_CHAIN_PREFIX) {
        return Err(AppError::internal(format!("audit chain {chain_key} moves with its counter (counter_tx::apply)")));
    }
    let start = chain_head(tx, dialect, chain_key).await?;
    if entries.is_empty() {
        return Ok(());
    }
    let placed = place(chain_key, &start, entries);
    insert_placed(tx, &placed).await?;
    move_head(tx, &placed).await
}

fn lost_race(e: sqlx::Error, chain_key: &str) -> AppError {
    match classify(&e) {
        DbFailure::UniqueViolation | DbFailure::RetryableConflict => AppError::VersionConflict(chain_key.to_string()),
        _ => e.into(),
    }
}

/// The head of a chain kept in `audit_chains` (every one but the counters'), created at GENESIS on first use.
async fn chain_head(tx: &mut Conn, dialect: Dialect, chain_key: &str) -> Result<ChainHead, AppError> {
    // MariaDB: lock the head so concurrent writers of one chain queue here instead of colliding on the
    // (chain_key, chain_seq) key; SQLite's write transaction is already exclusive.
    let head = sqlx::query_as(&format!("SELECT head_hash AS hash, length FROM audit_chains WHERE chain_key = ?{}", dialect.for_update()))
        .bind(chain_key)
        .fetch_optional(&mut *tx)
        .await?;
    Ok(match head {
        Some(head) => head,
        None => {
            sqlx::query("INSERT INTO audit_chains (chain_key, head_hash, length) VALUES (?, ?, 0)")
                .bind(chain_key)
                .bind(GENESIS)
                .execute(&mut *tx)
                .await
                .map_err(|e| lost_race(e, chain_key))?;
            ChainHead { hash: GENESIS.to_string(), length: 0 }
        }
    })
}

/// Entries given their places on a chain: sequence numbers and hashes, computed before anything is
/// written so the new head can travel in the same statement as other updates (the counter batch does).
pub struct Placed<'a> {
    pub(crate) chain_key: &'a str,
    pub(crate) start: ChainHead,
    pub head: ChainHead,
    entries: &'a [AuditEntry],
    links: Vec<(String, String)>,
}

impl Placed<'_> {
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

pub fn place<'a>(chain_key: &'a str, start: &ChainHead, entries: &'a [AuditEntry]) -> Placed<'a> {
    let mut prev = start.hash.clone();
    let mut links = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let hash = row_hash(&prev, chain_key, start.length + 1 + i as i64, e);
        links.push((std::mem::replace(&mut prev, hash.clone()), hash));
    }
    let head = ChainHead { hash: prev, length: start.length + entries.len() as i64 };
    Placed { chain_key, start: start.clone(), head, entries, links }
}

/// Inserts the placed rows (not the head: see `move_head`).
pub async fn insert_placed(tx: &mut Conn, placed: &Placed<'_>) -> Result<(), AppError> {
    insert_placed_many(tx, &[placed]).await
}

/// Inserts the placed rows of several chains in as few statements as the bound-parameter limit allows (a
/// group of counter batches: one statement for all their audit rows).
pub(crate) async fn insert_placed_many(tx: &mut Conn, placed: &[&Placed<'_>]) -> Result<(), AppError> {
    // SQLite allows 32766 bound parameters per statement; 25 per row keeps chunks of 500 rows well inside.
    const ROWS: usize = 500;
    let rows: Vec<(&Placed<'_>, usize)> = placed.iter().flat_map(|p| (0..p.entries.len()).map(move |at| (*p, at))).collect();
    for chunk in rows.chunks(ROWS) {
        let sql =
            format!("INSERT INTO audit_log (chain_key, chain_seq, prev_hash, hash, {COLUMNS}) VALUES {}", Db::row_placeholders(chunk.len(), 25));
        let mut q = sqlx::query(&sql);
        for &(placed, at) in chunk {
            let e = &placed.entries[at];
            let (prev, hash) = &placed.links[at];
            q = q
                .bind(placed.chain_key.to_string())
                .bind(placed.start.length + 1 + at as i64)
                .bind(prev.clone())
                .bind(hash.clone())
                .bind(e.operation.clone())
                .bind(e.status.clone())
                .bind(e.document_number.clone())
                .bind(e.counter_id)
                .bind(e.sequence)
                .bind(e.counter_key.clone())
                .bind(e.template_used.clone())
                .bind(e.reservation_token.clone())
                .bind(e.document_id.clone())
                .bind(e.user_id)
                .bind(e.username.clone())
                .bind(e.ip_address.clone())
                .bind(e.user_agent.clone())
                .bind(e.retry_count)
                .bind(e.lock_wait_ms)
                .bind(e.total_ms)
                .bind(e.fallback_used.clone())
                .bind(e.old_value.clone())
                .bind(e.new_value.clone())
                .bind(e.metadata.clone())
                .bind(e.created_at);
        }
        let first_chain = chunk.first().map(|(p, _)| p.chain_key).unwrap_or_default();
        q.execute(&mut *tx).await.map_err(|e| lost_race(e, first_chain))?;
    }
    Ok(())
}

/// Moves the chain's head from `start` to `head`; refuses (VersionConflict) if another writer moved it.
async fn move_head(tx: &mut Tx<'_>, placed: &Placed<'_>) -> Result<(), AppError> {
    match try_move_head(tx, placed).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(AppError::VersionConflict(placed.chain_key.to_string())),
        Err(e) => Err(lost_race(e, placed.chain_key)),
    }
}

/// The head move fenced by the chain's length: false means another writer moved it since `start`.
async fn try_move_head(tx: &mut Conn, placed: &Placed<'_>) -> Result<bool, sqlx::Error> {
    let q = sqlx::query("UPDATE audit_chains SET head_hash = ?, length = ? WHERE chain_key = ? AND length = ?")
        .bind(placed.head.hash.clone())
        .bind(placed.head.length)
        .bind(placed.chain_key)
        .bind(placed.start.length);
    Ok(q.execute(&mut *tx).await?.rows_affected() == 1)
}

/// A stored audit row: its place in the chain and its content.
#[derive(sqlx::FromRow)]
struct ChainLink {
    chain_seq: i64,
    prev_hash: String,
    hash: String,
    #[sqlx(flatten)]
    entry: AuditEntry,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    pub chains: i64,
    pub rows: i64,
    pub ok: bool,
    /// Human-readable descriptions of every break found.
    pub problems: Vec<String>,
}

/// Recomputes every chain: each row's hash, its link to the previous row, gap-free sequence numbers,
/// and that the recorded head matches the last row (so a deleted tail is noticed too).
pub async fn verify(db: &Db) -> Result<VerifyReport, AppError> {
    let mut snapshot = db.begin_snapshot().await?;
    verify_in(&mut snapshot).await
}

/// [`verify`] inside the caller's transaction. Heads and rows must come from one snapshot: read apart, a row
/// appended between the two reads looks like a chain longer than its head.
pub(crate) async fn verify_in(conn: &mut Conn) -> Result<VerifyReport, AppError> {
    let mut report = VerifyReport { ok: true, ..Default::default() };
    let mut heads: Vec<(String, String, i64)> =
        sqlx::query_as("SELECT chain_key, head_hash, length FROM audit_chains ORDER BY chain_key").fetch_all(&mut *conn).await?;
    let counters: Vec<(CounterId, String, i64)> =
        sqlx::query_as("SELECT id, chain_hash, chain_length FROM counters ORDER BY id").fetch_all(&mut *conn).await?;
    heads.extend(counters.into_iter().map(|(id, hash, length)| (counter_chain(id), hash, length)));
    for (chain_key, head_hash, length) in heads {
        report.chains += 1;
        let mut prev = GENESIS.to_string();
        let mut expected_seq = 0i64;
        let mut after = 0i64;
        loop {
            let rows: Vec<ChainLink> = sqlx::query_as(&format!(
                "SELECT chain_seq, prev_hash, hash, {COLUMNS} FROM audit_log WHERE chain_key = ? AND chain_seq > ? ORDER BY chain_seq LIMIT 5000"
            ))
            .bind(&chain_key)
            .bind(after)
            .fetch_all(&mut *conn)
            .await?;
            if rows.is_empty() {
                break;
            }
            for ChainLink { chain_seq: seq, prev_hash: stored_prev, hash: stored_hash, entry } in rows {
                expected_seq += 1;
                if seq != expected_seq {
                    report.problems.push(format!("{chain_key}: row {expected_seq} missing (next is {seq})"));
                    expected_seq = seq;
                }
                if stored_prev != prev {
                    report.problems.push(format!("{chain_key}#{seq}: link to previous row broken"));
                }
                if row_hash(&stored_prev, &chain_key, seq, &entry) != stored_hash {
                    report.problems.push(format!("{chain_key}#{seq}: content does not match its hash"));
                }
                // the gap check and the counter's history read a counter's rows from its own chain only
                if let Some(counter_id) = entry.counter_id.filter(|id| chain_key != counter_chain(*id)) {
                    report.problems.push(format!("{chain_key}#{seq}: names counter {counter_id} but is not on its chain"));
                }
                prev = stored_hash;
                after = seq;
                report.rows += 1;
            }
        }
        if expected_seq != length || prev != head_hash {
            report.problems.push(format!("{chain_key}: head records {length} rows, found {expected_seq}"));
        }
    }
    report.ok = report.problems.is_empty();
    Ok(report)
}

/// Per counter, the sequences in 1..=last_number that neither an issued number nor an audit row
/// accounts for. Empty means the counter's sequence has no unexplained gap (docs/rules/numbering.md#what-is-never-done-twice).
pub async fn unexplained_gaps(db: &Db) -> Result<Vec<(CounterId, Vec<i64>)>, AppError> {
    let mut snapshot = db.begin_snapshot().await?;
    unexplained_gaps_in(&mut snapshot).await
}

/// [`unexplained_gaps`] inside the caller's transaction, so that heads and rows come from one snapshot.
pub(crate) async fn unexplained_gaps_in(conn: &mut Conn) -> Result<Vec<(CounterId, Vec<i64>)>, AppError> {
    let counters: Vec<(CounterId, i64)> = sqlx::query_as("SELECT id, last_number FROM counters ORDER BY id").fetch_all(&mut *conn).await?;
    let mut gaps = Vec::new();
    for (id, last) in counters {
        let mut seen = vec![false; last.max(0) as usize + 1];
        // The numbers first, from their unique key alone. Only a counter with sequences they leave open reads its
        // audit rows (on its own chain, found by the chain's unique key): a whole chain read row by row took seconds
        // for a counter of 300,000 numbers, and a counter without gaps needs none of it.
        let numbers = sqlx::query_scalar("SELECT sequence FROM document_numbers WHERE counter_id = ?").bind(id).fetch_all(&mut *conn).await?;
        mark_seen(&mut seen, numbers);
        if seen.iter().skip(1).any(|s| !s) {
            mark_seen(
                &mut seen,
                sqlx::query_scalar("SELECT sequence FROM audit_log WHERE chain_key = ? AND counter_id = ? AND sequence IS NOT NULL")
                    .bind(counter_chain(id))
                    .bind(id)
                    .fetch_all(&mut *conn)
                    .await?,
            );
        }
        let missing: Vec<i64> = (1..=last).filter(|s| !seen[*s as usize]).collect();
        if !missing.is_empty() {
            gaps.push((id, missing));
        }
    }
    Ok(gaps)
}

/// Marks the sequences in `1..seen.len()` as accounted for.
fn mark_seen(seen: &mut [bool], sequences: Vec<i64>) {
    for s in sequences {
        if let Some(slot) = usize::try_from(s).ok().filter(|&s| s >= 1).and_then(|s| seen.get_mut(s)) {
            *slot = true;
        }
    }
}

use crate::contract::{AuditPage, AuditQuery, AuditRow, CounterId, ProjectId, UserId};

/// The filters of an audit query kept to `projects` (None: every row; shared by the page and the CSV export): the
/// rows on the chains of those projects' counters, so rows of no counter (the `admin` chain) only when None.
fn scoped_filter(projects: Option<&[ProjectId]>, q: &AuditQuery, dialect: Dialect) -> Conditions {
    let mut filter = audit_filter(q, dialect);
    if let Some(projects) = projects {
        filter.and_in(&project_chains(dialect, "IN ({})"), projects);
    }
    filter
}

/// The rows on the chains of the counters whose `project_id` meets `projects` (`= ?`, `IN ({})`): a project's audit
/// rows are on its counters' chains, found through the chain's unique key (there is no index on `counter_id`).
fn project_chains(dialect: Dialect, projects: &str) -> String {
    format!("chain_key IN (SELECT {} FROM counters WHERE project_id {projects})", dialect.counter_chain_key("id"))
}

/// The filters of an audit query (shared by the page and the CSV export).
fn audit_filter(q: &AuditQuery, dialect: Dialect) -> Conditions {
    let text = |v: &Option<String>| v.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
    let mut c = Conditions::default();
    c.and_if("created_at >= ?", q.from.map(|t| t.timestamp_millis()))
        .and_if("created_at < ?", q.to.map(|t| t.timestamp_millis()))
        .and_if("username = ?", text(&q.user))
        .and_if("operation = ?", text(&q.operation).map(|op| op.to_ascii_uppercase()))
        // a prefix match; LIKE's own wildcards in the input are taken literally
        // (`!` as the escape character: a backslash means different things to SQLite and MariaDB)
        .and_if(
            "document_number LIKE ? ESCAPE '!'",
            text(&q.number).map(|n| format!("{}%", n.replace('!', "!!").replace('%', "!%").replace('_', "!_"))),
        )
        .and_if(&project_chains(dialect, "= ?"), q.project_id);
    c
}

const SEARCH_COLUMNS: &str = "id, created_at, operation, status, document_number, sequence, counter_id, document_id, username, \
    ip_address, fallback_used, old_value, new_value, metadata, counter_key, template_used, user_agent, retry_count, lock_wait_ms, total_ms";

/// One row of an audit search as stored (times in epoch milliseconds).
#[derive(sqlx::FromRow)]
struct StoredAuditRow {
    id: i64,
    created_at: i64,
    operation: String,
    status: String,
    document_number: Option<String>,
    sequence: Option<i64>,
    counter_id: Option<CounterId>,
    document_id: Option<String>,
    username: Option<String>,
    ip_address: Option<String>,
    fallback_used: String,
    old_value: Option<String>,
    new_value: Option<String>,
    metadata: Option<String>,
    counter_key: Option<String>,
    template_used: Option<String>,
    user_agent: Option<String>,
    retry_count: i64,
    lock_wait_ms: i64,
    total_ms: i64,
}

impl From<StoredAuditRow> for AuditRow {
    fn from(r: StoredAuditRow) -> AuditRow {
        AuditRow {
            id: r.id.into(),
            created_at: crate::server::db::ms_to_datetime(r.created_at),
            operation: r.operation,
            status: r.status,
            document_number: r.document_number,
            sequence: r.sequence,
            counter_id: r.counter_id,
            document_id: r.document_id,
            user: r.username,
            ip_address: r.ip_address,
            fallback_used: r.fallback_used,
            old_value: r.old_value,
            new_value: r.new_value,
            metadata: r.metadata,
            counter_key: r.counter_key,
            counter: None,
            template_used: r.template_used,
            user_agent: r.user_agent,
            retry_count: r.retry_count,
            lock_wait_ms: r.lock_wait_ms,
            total_ms: r.total_ms,
        }
    }
}

pub(crate) const MAX_PAGE_SIZE: u32 = 500;
/// The CSV export stops here; narrow the filters for more.
pub(crate) const MAX_EXPORT_ROWS: i64 = 100_000;

/// One page of audit rows matching the filters, newest first, with the total count; kept to `projects` (None: all).
pub(crate) async fn search(db: &Db, projects: Option<&[ProjectId]>, q: &AuditQuery) -> Result<AuditPage, AppError> {
    let filter = scoped_filter(projects, q, db.dialect);
    let (page, size, offset) = crate::server::db::paging(q.page, q.page_size, 50, MAX_PAGE_SIZE)?;
    let count_sql = format!("SELECT COUNT(*) FROM audit_log{}", filter.sql());
    let total: i64 = filter.bind(sqlx::query_scalar(&count_sql)).fetch_one(&db.pool).await?;
    let rows_sql = format!("SELECT {SEARCH_COLUMNS} FROM audit_log{} ORDER BY id DESC LIMIT ? OFFSET ?", filter.sql());
    let rows = filter
        .bind(sqlx::query_as::<_, StoredAuditRow>(&rows_sql))
        .bind(i64::from(size))
        .bind(offset)
        .fetch_all(&db.pool)
        .await?
        .into_iter()
        .map(AuditRow::from)
        .collect();
    Ok(AuditPage { rows, total, page, page_size: size })
}

/// All matching rows (oldest first, at most MAX_EXPORT_ROWS) as CSV with a header line; kept to `projects` (None: all).
pub(crate) async fn export_csv(db: &Db, projects: Option<&[ProjectId]>, q: &AuditQuery) -> Result<String, AppError> {
    let filter = scoped_filter(projects, q, db.dialect);
    let sql = format!("SELECT {SEARCH_COLUMNS} FROM audit_log{} ORDER BY id LIMIT {MAX_EXPORT_ROWS}", filter.sql());
    let rows: Vec<StoredAuditRow> = filter.bind(sqlx::query_as(&sql)).fetch_all(&db.pool).await?;
    let mut out = csv::Writer::from_writer(Vec::new());
    let csv_err = |e: csv::Error| AppError::internal_from("csv", e);
    // every cell through `csv_cell` (ids and sequences are never negative, so numbers pass unchanged)
    out.write_record([
        "id",
        "created_at",
        "operation",
        "status",
        "document_number",
        "sequence",
        "counter_id",
        "document_id",
        "user",
        "ip_address",
        "fallback_used",
        "old_value",
        "new_value",
        "metadata",
        "counter_key",
        "template_used",
        "user_agent",
        "retry_count",
        "lock_wait_ms",
        "total_ms",
    ])
    .map_err(csv_err)?;
    for r in rows.into_iter().map(AuditRow::from) {
        let opt = |v: Option<String>| v.unwrap_or_default();
        out.write_record(
            [
                r.id.to_string(),
                r.created_at.to_rfc3339(),
                r.operation,
                r.status,
                opt(r.document_number),
                r.sequence.map(|s| s.to_string()).unwrap_or_default(),
                r.counter_id.map(|s| s.to_string()).unwrap_or_default(),
                opt(r.document_id),
                opt(r.user),
                opt(r.ip_address),
                r.fallback_used,
                opt(r.old_value),
                opt(r.new_value),
                opt(r.metadata),
                opt(r.counter_key),
                opt(r.template_used),
                opt(r.user_agent),
                r.retry_count.to_string(),
                r.lock_wait_ms.to_string(),
                r.total_ms.to_string(),
            ]
            .iter()
            .map(|cell| csv_cell(cell).into_owned()),
        )
        .map_err(csv_err)?;
    }
    let bytes = out.into_inner().map_err(|e| AppError::internal_from("csv", e.into_error()))?;
    // a UTF-8 byte-order mark, so spreadsheet programs read the Thai text correctly
    Ok(format!("\u{feff}{}", String::from_utf8_lossy(&bytes)))
}

/// A CSV cell a spreadsheet program will not run (docs/rules/api.md#web-app): text beginning with `=`, `+`, `-`, `@`, a tab or a
/// carriage return gets a `'` in front, so it shows as text instead of being evaluated as a formula.
pub(crate) fn csv_cell(cell: &str) -> std::borrow::Cow<'_, str> {
    match cell.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{cell}").into(),
        _ => cell.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::csv_cell;
    use crate::numbering::CounterId;

    #[tokio::test]
    async fn the_counter_chain_key_in_sql_is_the_one_the_audit_log_writes() {
        let db = crate::server::db::Db::connect("sqlite::memory:").await.unwrap();
        let sql = format!("SELECT {}", crate::server::db::Dialect::Sqlite.counter_chain_key("?"));
        let key: String = sqlx::query_scalar(&sql).bind(42_i64).fetch_one(&db.pool).await.unwrap();
        assert_eq!(key, super::counter_chain(CounterId(42)));
        assert_eq!(crate::server::db::Dialect::MySql.counter_chain_key("c.id"), "CONCAT('counter:', c.id)");
    }

    #[test]
    fn csv_cells_that_a_spreadsheet_would_evaluate_are_prefixed() {
        for (cell, safe) in [
            ("=1+1", "'=1+1"),
            ("=HYPERLINK(\"http://x\",\"y\")", "'=HYPERLINK(\"http://x\",\"y\")"),
            ("+66 2 123", "'+66 2 123"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
        ] {
            assert_eq!(csv_cell(cell), safe);
        }
        for cell in ["", "LCBP3-RFI-0001", "คคง.-ผรม.2-0001-2568", "12", "2025-06-15T03:00:00+00:00", " =1", "a=1", "'=1"] {
            assert_eq!(csv_cell(cell), cell);
        }
    }
}
