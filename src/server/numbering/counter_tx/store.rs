//! SQL of the counter transactions: the counter row (read locked, created at first use), its fenced move
//! (`UPDATE counters … WHERE id = ? AND version = ? AND chain_length = ?`: the audit chain's head is in the
//! row), and every write of `document_numbers`: the batch INSERT, status changes, a reset's releases. Rows are read by
//! column name into `FromRow` structs.

use std::collections::HashMap;

use crate::contract::{
    ApiTokenId, CorrespondenceTypeId, CounterId, DisciplineId, NumberId, NumberStatus, OrganizationId, ProjectId, ResetRequestId, RfaTypeId,
    SubTypeId, UserId,
};
use crate::numbering::{CounterKey, PeriodKey};
use crate::server::audit;
use crate::server::db::{bind_values, padded, BindValue, Conn, Db, Dialect, SqlValue};

/// `WHERE` of a counter looked up by its key; bind the key with [`bind_key`].
pub(crate) const KEY_WHERE: &str = "project_id = ? AND correspondence_type_id = ? AND originator_id = ? AND recipient_id = ? \
    AND sub_type_id = ? AND rfa_type_id = ? AND discipline_id = ? AND period = ?";

/// Binds a counter key to the placeholders of [`KEY_WHERE`] (or of the key columns of an INSERT), in order.
pub(crate) fn bind_key<'q, Q: BindValue<'q>>(q: Q, key: &CounterKey) -> Q {
    bind_values(q, &key_values(key))
}

/// A new counter's row (bind its key, then `max_number` and the time twice): at 0, its chain at the column defaults.
const NEW_COUNTER_INSERT: &str = "INSERT INTO counters (project_id, correspondence_type_id, originator_id, recipient_id, sub_type_id, \
    rfa_type_id, discipline_id, period, last_number, max_number, version, created_at, updated_at) VALUES";
const NEW_COUNTER_ROW: &str = "(?, ?, ?, ?, ?, ?, ?, ?, 0, ?, 0, ?, ?)";

/// The key columns of a counter, the one place they are read (flattened into the rows that carry them).
#[derive(Clone, Debug, sqlx::FromRow, serde::Deserialize)]
pub(crate) struct KeyRow {
    pub(crate) project_id: ProjectId,
    pub(crate) correspondence_type_id: CorrespondenceTypeId,
    pub(crate) originator_id: OrganizationId,
    pub(crate) recipient_id: OrganizationId,
    pub(crate) sub_type_id: SubTypeId,
    pub(crate) rfa_type_id: RfaTypeId,
    pub(crate) discipline_id: DisciplineId,
    #[sqlx(try_from = "String")]
    pub(crate) period: PeriodKey,
}

impl From<KeyRow> for CounterKey {
    fn from(k: KeyRow) -> CounterKey {
        CounterKey {
            project_id: k.project_id,
            correspondence_type_id: k.correspondence_type_id,
            originator_id: k.originator_id,
            recipient_id: k.recipient_id,
            sub_type_id: k.sub_type_id,
            rfa_type_id: k.rfa_type_id,
            discipline_id: k.discipline_id,
            period: k.period,
        }
    }
}

/// A counter's value and version: what a counter transaction reads, and fences its write with.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow, serde::Deserialize)]
pub struct CounterRow {
    pub id: CounterId,
    pub last_number: i64,
    pub version: i64,
}

/// A whole counter row.
#[derive(Clone, Debug)]
pub struct Counter {
    pub row: CounterRow,
    pub key: CounterKey,
    pub max_number: i64,
    pub updated_at: i64,
}

/// The columns of [`CounterRecord`].
pub(crate) const COUNTER_COLUMNS: &str =
    "id, project_id, correspondence_type_id, originator_id, recipient_id, sub_type_id, rfa_type_id, discipline_id, \
    period, last_number, max_number, version, updated_at";

/// A counter row as read: by column name from the database, or from a JSON object of the same names.
#[derive(sqlx::FromRow, serde::Deserialize)]
pub(crate) struct CounterRecord {
    #[sqlx(flatten)]
    #[serde(flatten)]
    row: CounterRow,
    #[sqlx(flatten)]
    #[serde(flatten)]
    key: KeyRow,
    max_number: i64,
    updated_at: i64,
}

impl From<CounterRecord> for Counter {
    fn from(r: CounterRecord) -> Counter {
        Counter { row: r.row, key: r.key.into(), max_number: r.max_number, updated_at: r.updated_at }
    }
}

/// The counter row of `key` with its audit chain's head, created at 0 (and the chain at GENESIS) on first use (a
/// new year simply gets a new row). On MariaDB the row is read `FOR UPDATE` on every path (distributed lock or
/// fallback alike), so two paths can never take row locks in different orders; SQLite's write transaction is
/// already exclusive.
pub async fn load_or_create_counter(
    tx: &mut Conn,
    dialect: Dialect,
    key: &CounterKey,
    max_number: i64,
    now_ms: i64,
) -> Result<(CounterRow, audit::ChainHead), sqlx::Error> {
    let sql = format!("SELECT id, last_number, version, chain_hash, chain_length FROM counters WHERE {KEY_WHERE}{}", dialect.for_update());
    if let Some(row) = bind_key(sqlx::query_as::<_, CounterAndHead>(&sql), key).fetch_optional(&mut *tx).await? {
        return Ok((row.row, audit::ChainHead { hash: row.chain_hash, length: row.chain_length }));
    }
    let sql = format!("{NEW_COUNTER_INSERT} {NEW_COUNTER_ROW} RETURNING id");
    let id = bind_key(sqlx::query_scalar::<_, CounterId>(&sql), key).bind(max_number).bind(now_ms).bind(now_ms).fetch_one(&mut *tx).await?;
    Ok((CounterRow { id, last_number: 0, version: 0 }, audit::ChainHead { hash: audit::GENESIS.to_string(), length: 0 }))
}

#[derive(sqlx::FromRow)]
struct CounterAndHead {
    #[sqlx(flatten)]
    row: CounterRow,
    chain_hash: String,
    chain_length: i64,
}

/// The counter row by id, locked as the batch locks it (`FOR UPDATE` on MariaDB; SQLite's write transaction
/// is already exclusive), so administrative operations and the per-counter batches take turns on the row.
/// With it comes its audit chain's head, so the operation appends to the chain without reading the row again.
pub async fn lock_counter(tx: &mut Conn, dialect: Dialect, id: CounterId) -> Result<Option<(Counter, audit::ChainHead)>, sqlx::Error> {
    let sql = format!("SELECT {COUNTER_COLUMNS}, chain_hash AS head_hash, chain_length AS length FROM counters WHERE id = ?{}", dialect.for_update());
    Ok(sqlx::query_as::<_, LockedRow>(&sql).bind(id).fetch_optional(&mut *tx).await?.map(LockedRow::split))
}

/// Several counters by id with their audit chain heads (kept in the counter's row), in one statement, locked as
/// [`lock_counter`] locks them (a group of batches); ids without a counter row are missing from the answer.
pub async fn lock_counters_and_heads(
    tx: &mut Conn,
    dialect: Dialect,
    ids: &[CounterId],
) -> Result<HashMap<CounterId, (Counter, audit::ChainHead)>, sqlx::Error> {
    let mut rows = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let chunk: Vec<SqlValue> = padded(chunk).map(|id| SqlValue::from(*id)).collect();
        let read = read_locked(tx, dialect, &format!("id IN ({})", vec!["?"; chunk.len()].join(", ")), &chunk).await?;
        rows.extend(read.into_iter().map(|(counter, head)| (counter.row.id, (counter, head))));
    }
    Ok(rows)
}

/// Counters by key with their audit chain heads, locked as [`lock_counters_and_heads`] locks them, each created at 0
/// (its chain at GENESIS) where it has no row yet (a new key, a new year): one INSERT and one read for all of them,
/// where [`load_or_create_counter`] takes two statements a key. On MariaDB the keys are written and read in one order
/// (sorted), so two groups take the rows' locks in the same order.
pub async fn lock_or_create_counters(
    tx: &mut Conn,
    dialect: Dialect,
    keys: &[(&CounterKey, i64)],
    now_ms: i64,
) -> Result<HashMap<CounterKey, (Counter, audit::ChainHead)>, sqlx::Error> {
    let mut sorted: Vec<(&CounterKey, i64)> = keys.to_vec();
    sorted.sort();
    let mut rows = HashMap::with_capacity(keys.len());
    for chunk in sorted.chunks(100) {
        // written for `padded_len` keys, the last one repeated: its second row is a duplicate key, which inserts nothing
        let written: Vec<&(&CounterKey, i64)> = padded(chunk).collect();
        let insert = format!("{NEW_COUNTER_INSERT} {} {}", vec![NEW_COUNTER_ROW; written.len()].join(", "), dialect.on_duplicate_key_do_nothing());
        let mut q = sqlx::query(&insert);
        for (key, max_number) in &written {
            q = bind_key(q, key).bind(*max_number).bind(now_ms).bind(now_ms);
        }
        q.execute(&mut *tx).await?;
        let values: Vec<SqlValue> = written.iter().flat_map(|(key, _)| key_values(key)).collect();
        let within = vec![format!("({KEY_WHERE})"); written.len()].join(" OR ");
        for (counter, head) in read_locked(tx, dialect, &within, &values).await? {
            rows.insert(counter.key.clone(), (counter, head));
        }
    }
    Ok(rows)
}

/// A counter key's values in the order of [`KEY_WHERE`].
fn key_values(key: &CounterKey) -> [SqlValue; 8] {
    [
        SqlValue::Int(key.project_id.into()),
        SqlValue::Int(key.correspondence_type_id.into()),
        SqlValue::Int(key.originator_id.into()),
        SqlValue::Int(key.recipient_id.into()),
        SqlValue::Int(key.sub_type_id.into()),
        SqlValue::Int(key.rfa_type_id.into()),
        SqlValue::Int(key.discipline_id.into()),
        SqlValue::Text(key.period.to_string()),
    ]
}

/// The counters `WHERE {condition}` with their chain heads, locked (`FOR UPDATE` on MariaDB).
async fn read_locked(tx: &mut Conn, dialect: Dialect, condition: &str, values: &[SqlValue]) -> Result<Vec<(Counter, audit::ChainHead)>, sqlx::Error> {
    // (name, column) of every field of a `LockedRow`
    let columns: Vec<(&str, &str)> =
        COUNTER_COLUMNS.split(", ").map(|c| (c, c)).chain([("head_hash", "chain_hash"), ("length", "chain_length")]).collect();
    let within = format!("FROM counters WHERE {condition}");
    let read: Vec<LockedRow> = match dialect {
        // One row for the whole group, a JSON array of the rows as objects of the same column names: sqlx hands each
        // row over from its SQLite thread on its own, a wake-up of this task each, and this read took 0.6 ms for a
        // group of 30 counters (0.2 ms as one row; docs/benchmarks/spread-load.md). MariaDB's rows come off the socket
        // together.
        Dialect::Sqlite => {
            let fields: Vec<String> = columns.iter().map(|(name, column)| format!("'{name}', {column}")).collect();
            let sql = format!("SELECT json_group_array(json_object({})) {within}", fields.join(", "));
            let text = bind_values(sqlx::query_scalar::<_, String>(&sql), values).fetch_one(&mut *tx).await?;
            serde_json::from_str(&text).map_err(|e| sqlx::Error::Decode(e.into()))?
        }
        Dialect::MySql => {
            let select: Vec<String> = columns.iter().map(|(name, column)| format!("{column} AS {name}")).collect();
            let sql = format!("SELECT {} {within}{}", select.join(", "), dialect.for_update());
            bind_values(sqlx::query_as::<_, LockedRow>(&sql), values).fetch_all(&mut *tx).await?
        }
    };
    Ok(read.into_iter().map(LockedRow::split).collect())
}

/// A row of [`read_locked`]: by column name from MariaDB, by the same names from SQLite's JSON objects.
#[derive(sqlx::FromRow, serde::Deserialize)]
struct LockedRow {
    #[sqlx(flatten)]
    #[serde(flatten)]
    counter: CounterRecord,
    head_hash: String,
    length: i64,
}

impl LockedRow {
    fn split(self) -> (Counter, audit::ChainHead) {
        (Counter::from(self.counter), audit::ChainHead { hash: self.head_hash, length: self.length })
    }
}

/// A counter's move, in a batch or a group: to `last_number` from the version it was read at, its audit chain's head with it.
pub(crate) struct CounterMove<'a> {
    pub(crate) counter: &'a CounterRow,
    pub(crate) last_number: i64,
    /// None keeps the recorded maximum.
    pub(crate) max_number: Option<i64>,
    /// The chain's rows placed after its head as read (none: the head stays, and is still fenced).
    pub(crate) chain: &'a audit::Placed<'a>,
}

/// Moves counters on with their audit chains' heads, in the counters' own rows and in one statement, each row fenced
/// by its own version and chain length: false unless every one of them moved.
pub(crate) async fn advance_counters_and_chains(tx: &mut Conn, moves: &[CounterMove<'_>], now_ms: i64) -> Result<bool, sqlx::Error> {
    match moves {
        [] => return Ok(true),
        // a hot counter's batch: the plain statement, without a CASE per column
        [one] => return advance_counter_and_chain(tx, one, now_ms).await,
        _ => {}
    }
    // written for `padded_len` counters, the last one repeated (see `padded`): rows_affected counts each row once
    let written: Vec<&CounterMove<'_>> = padded(moves).collect();
    let cases = vec!["WHEN ? THEN ?"; written.len()].join(" ");
    let max_cases = vec!["WHEN ? THEN COALESCE(?, max_number)"; written.len()].join(" ");
    let sql = format!(
        "UPDATE counters SET last_number = CASE id {cases} END, max_number = CASE id {max_cases} END, version = version + 1, updated_at = ?, \
             chain_hash = CASE id {cases} END, chain_length = CASE id {cases} END \
         WHERE id IN ({}) AND version = CASE id {cases} END AND chain_length = CASE id {cases} END",
        vec!["?"; written.len()].join(", ")
    );
    let mut q = sqlx::query(&sql);
    for m in &written {
        q = q.bind(m.counter.id).bind(m.last_number);
    }
    for m in &written {
        q = q.bind(m.counter.id).bind(m.max_number);
    }
    q = q.bind(now_ms);
    for m in &written {
        q = q.bind(m.counter.id).bind(m.chain.head.hash.clone());
    }
    for m in &written {
        q = q.bind(m.counter.id).bind(m.chain.head.length);
    }
    for m in &written {
        q = q.bind(m.counter.id);
    }
    for m in &written {
        q = q.bind(m.counter.id).bind(m.counter.version);
    }
    for m in &written {
        q = q.bind(m.counter.id).bind(m.chain.start.length);
    }
    Ok(q.execute(&mut *tx).await?.rows_affected() == moves.len() as u64)
}

async fn advance_counter_and_chain(tx: &mut Conn, one: &CounterMove<'_>, now_ms: i64) -> Result<bool, sqlx::Error> {
    let CounterMove { counter, last_number, max_number, chain } = *one;
    let r = sqlx::query(
        "UPDATE counters SET last_number = ?, max_number = COALESCE(?, max_number), version = version + 1, updated_at = ?, \
             chain_hash = ?, chain_length = ? \
         WHERE id = ? AND version = ? AND chain_length = ?",
    )
    .bind(last_number)
    .bind(max_number)
    .bind(now_ms)
    .bind(chain.head.hash.clone())
    .bind(chain.head.length)
    .bind(counter.id)
    .bind(counter.version)
    .bind(chain.start.length)
    .execute(&mut *tx)
    .await?;
    Ok(r.rows_affected() == 1)
}

/// A number handed out, as it is inserted.
#[derive(Clone, Debug, PartialEq)]
pub struct NewNumber {
    pub counter_id: CounterId,
    pub project_id: ProjectId,
    pub correspondence_type_id: CorrespondenceTypeId,
    pub sequence: i64,
    pub revision: String,
    pub number: String,
    pub template: String,
    pub status: NumberStatus,
    pub token: Option<String>,
    pub document_id: Option<String>,
    pub user_id: Option<UserId>,
    pub api_token_id: Option<ApiTokenId>,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub confirmed_at: Option<i64>,
    /// The block it was reserved in (`reserve-block`), and whom the block is for.
    pub block_id: Option<String>,
    pub block_holder: Option<String>,
}

pub async fn insert_numbers(tx: &mut Conn, rows: &[NewNumber]) -> Result<(), sqlx::Error> {
    for chunk in rows.chunks(1000) {
        let sql = format!(
            "INSERT INTO document_numbers (counter_id, project_id, correspondence_type_id, sequence, revision, number, template, status, token, \
             document_id, user_id, api_token_id, created_at, expires_at, confirmed_at, block_id, block_holder) VALUES {}",
            Db::row_placeholders(chunk.len(), 17)
        );
        let mut q = sqlx::query(&sql);
        for n in chunk {
            q = q
                .bind(n.counter_id)
                .bind(n.project_id)
                .bind(n.correspondence_type_id)
                .bind(n.sequence)
                .bind(n.revision.clone())
                .bind(n.number.clone())
                .bind(n.template.clone())
                .bind(n.status.as_str())
                .bind(n.token.clone())
                .bind(n.document_id.clone())
                .bind(n.user_id)
                .bind(n.api_token_id)
                .bind(n.created_at)
                .bind(n.expires_at)
                .bind(n.confirmed_at)
                .bind(n.block_id.clone())
                .bind(n.block_holder.clone());
        }
        q.execute(&mut *tx).await?;
    }
    Ok(())
}

/// Which of `numbers` already exist in the uniqueness scope (project, type).
pub(crate) async fn existing_numbers(
    tx: &mut Conn,
    project_id: ProjectId,
    correspondence_type_id: CorrespondenceTypeId,
    numbers: &[String],
) -> Result<Vec<String>, sqlx::Error> {
    let mut found = Vec::new();
    for chunk in numbers.chunks(500) {
        let sql = format!(
            "SELECT number FROM document_numbers WHERE project_id = ? AND correspondence_type_id = ? AND number IN ({})",
            vec!["?"; chunk.len()].join(", ")
        );
        let mut q = sqlx::query_scalar::<_, String>(&sql).bind(project_id).bind(correspondence_type_id);
        for n in chunk {
            q = q.bind(n.clone());
        }
        found.extend(q.fetch_all(&mut *tx).await?);
    }
    Ok(found)
}

/// A `status` column read back (the schema allows only the four statuses).
pub(crate) fn status_of(text: &str) -> Result<NumberStatus, sqlx::Error> {
    NumberStatus::parse(text).ok_or_else(|| sqlx::Error::Decode(format!("unknown number status '{text}'").into()))
}

/// A number as stored, for confirm / cancel / expiry decisions.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct NumberRow {
    pub(crate) id: NumberId,
    pub(crate) number: String,
    pub(crate) sequence: i64,
    pub(crate) template: String,
    pub(crate) status: NumberStatus,
    pub(crate) token: Option<String>,
    pub(crate) document_id: Option<String>,
    pub(crate) expires_at: Option<i64>,
    pub(crate) cancel_reason: Option<String>,
    /// When its state last changed (ms): cancelled, else confirmed, else issued.
    pub(crate) changed_at: i64,
    /// Reserved in a block: it expires as `block expired`.
    pub(crate) in_block: bool,
}

const NUMBER_COLUMNS: &str =
    "id, number, sequence, template, status, token, document_id, expires_at, cancel_reason, COALESCE(cancelled_at, confirmed_at, created_at) AS changed_at, \
     CASE WHEN block_id IS NULL THEN 0 ELSE 1 END AS in_block";

#[derive(sqlx::FromRow)]
struct NumberRecord {
    id: NumberId,
    number: String,
    sequence: i64,
    template: String,
    status: String,
    token: Option<String>,
    document_id: Option<String>,
    expires_at: Option<i64>,
    cancel_reason: Option<String>,
    changed_at: i64,
    in_block: i64,
}

impl TryFrom<NumberRecord> for NumberRow {
    type Error = sqlx::Error;
    fn try_from(r: NumberRecord) -> Result<NumberRow, sqlx::Error> {
        Ok(NumberRow {
            status: status_of(&r.status)?,
            id: r.id,
            number: r.number,
            sequence: r.sequence,
            template: r.template,
            token: r.token,
            document_id: r.document_id,
            expires_at: r.expires_at,
            cancel_reason: r.cancel_reason,
            changed_at: r.changed_at,
            in_block: r.in_block != 0,
        })
    }
}

pub(crate) async fn numbers_by_token(tx: &mut Conn, counter_id: CounterId, tokens: &[String]) -> Result<HashMap<String, NumberRow>, sqlx::Error> {
    let mut found = HashMap::new();
    for chunk in tokens.chunks(500) {
        let sql = format!("SELECT {NUMBER_COLUMNS} FROM document_numbers WHERE counter_id = ? AND token IN ({})", vec!["?"; chunk.len()].join(", "));
        let mut q = sqlx::query_as::<_, NumberRecord>(&sql).bind(counter_id);
        for t in chunk {
            q = q.bind(t.clone());
        }
        for r in q.fetch_all(&mut *tx).await? {
            let row = NumberRow::try_from(r)?;
            if let Some(t) = row.token.clone() {
                found.insert(t, row);
            }
        }
    }
    Ok(found)
}

/// Numbers already confirmed for these document ids in (project, type): `generate` is idempotent per document.
pub(crate) async fn confirmed_for_documents(
    tx: &mut Conn,
    project_id: ProjectId,
    correspondence_type_id: CorrespondenceTypeId,
    document_ids: &[String],
) -> Result<HashMap<String, NumberRow>, sqlx::Error> {
    let mut found = HashMap::new();
    for chunk in document_ids.chunks(500) {
        let sql = format!(
            "SELECT {NUMBER_COLUMNS} FROM document_numbers WHERE project_id = ? AND correspondence_type_id = ? AND status = 'CONFIRMED' AND document_id IN ({})",
            vec!["?"; chunk.len()].join(", ")
        );
        let mut q = sqlx::query_as::<_, NumberRecord>(&sql).bind(project_id).bind(correspondence_type_id);
        for d in chunk {
            q = q.bind(d.clone());
        }
        for r in q.fetch_all(&mut *tx).await? {
            let row = NumberRow::try_from(r)?;
            if let Some(d) = row.document_id.clone() {
                found.insert(d, row);
            }
        }
    }
    Ok(found)
}

/// A number's change of status (confirm, cancel, expiry, void); `None` fields keep their stored value.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusChange {
    pub(crate) id: NumberId,
    pub(crate) status: NumberStatus,
    pub(crate) document_id: Option<String>,
    pub(crate) confirmed_at: Option<i64>,
    pub(crate) cancelled_at: Option<i64>,
    pub(crate) cancel_reason: Option<String>,
}

pub(crate) async fn apply_status_changes(tx: &mut Conn, changes: &[StatusChange]) -> Result<(), sqlx::Error> {
    for c in changes {
        sqlx::query(
            "UPDATE document_numbers SET status = ?, document_id = COALESCE(?, document_id), confirmed_at = COALESCE(?, confirmed_at), \
             cancelled_at = COALESCE(?, cancelled_at), cancel_reason = COALESCE(?, cancel_reason) WHERE id = ?",
        )
        .bind(c.status.as_str())
        .bind(c.document_id.clone())
        .bind(c.confirmed_at)
        .bind(c.cancelled_at)
        .bind(c.cancel_reason.clone())
        .bind(c.id)
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

/// A number as stored, for revise / void / release.
#[derive(Clone, Debug)]
pub(crate) struct StoredNumber {
    pub(crate) id: NumberId,
    pub(crate) counter_id: CounterId,
    pub(crate) sequence: i64,
    pub(crate) revision: String,
    pub(crate) number: String,
    pub(crate) template: String,
    pub(crate) status: NumberStatus,
    pub(crate) token: Option<String>,
    pub(crate) document_id: Option<String>,
}

/// The columns of [`StoredRecord`].
pub(crate) const STORED_COLUMNS: &str = "id, counter_id, sequence, revision, number, template, status, token, document_id";

#[derive(sqlx::FromRow)]
pub(crate) struct StoredRecord {
    id: NumberId,
    counter_id: CounterId,
    sequence: i64,
    revision: String,
    number: String,
    template: String,
    status: String,
    token: Option<String>,
    document_id: Option<String>,
}

impl TryFrom<StoredRecord> for StoredNumber {
    type Error = sqlx::Error;
    fn try_from(r: StoredRecord) -> Result<StoredNumber, sqlx::Error> {
        Ok(StoredNumber {
            status: status_of(&r.status)?,
            id: r.id,
            counter_id: r.counter_id,
            sequence: r.sequence,
            revision: r.revision,
            number: r.number,
            template: r.template,
            token: r.token,
            document_id: r.document_id,
        })
    }
}

/// The numbers of a counter above `above`, by sequence and revision.
pub(crate) async fn numbers_above(tx: &mut Conn, counter_id: CounterId, above: i64) -> Result<Vec<StoredNumber>, sqlx::Error> {
    let sql = format!("SELECT {STORED_COLUMNS} FROM document_numbers WHERE counter_id = ? AND sequence > ? ORDER BY sequence, revision");
    sqlx::query_as::<_, StoredRecord>(&sql).bind(counter_id).bind(above).fetch_all(&mut *tx).await?.into_iter().map(StoredNumber::try_from).collect()
}

/// Moves the numbers of a counter above `above` (none of them confirmed: the plan checked) out of
/// `document_numbers` into `released_numbers`: copied first, then deleted, in the caller's transaction. How many
/// it moved.
pub(crate) async fn release_above(
    tx: &mut Conn,
    counter_id: CounterId,
    above: i64,
    reset_request_id: ResetRequestId,
    now_ms: i64,
) -> Result<u64, sqlx::Error> {
    sqlx::query(
        "INSERT INTO released_numbers (original_id, counter_id, project_id, correspondence_type_id, sequence, revision, number, template, status, token, \
         document_id, user_id, api_token_id, created_at, expires_at, confirmed_at, cancelled_at, cancel_reason, reset_request_id, released_at) \
         SELECT id, counter_id, project_id, correspondence_type_id, sequence, revision, number, template, status, token, document_id, user_id, api_token_id, \
         created_at, expires_at, confirmed_at, cancelled_at, cancel_reason, ?, ? FROM document_numbers WHERE counter_id = ? AND sequence > ?",
    )
    .bind(reset_request_id)
    .bind(now_ms)
    .bind(counter_id)
    .bind(above)
    .execute(&mut *tx)
    .await?;
    let deleted =
        sqlx::query("DELETE FROM document_numbers WHERE counter_id = ? AND sequence > ?").bind(counter_id).bind(above).execute(&mut *tx).await?;
    Ok(deleted.rows_affected())
}
