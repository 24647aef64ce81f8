//! The database handle: one `sqlx::Any` code path for SQLite (embedded default) and MariaDB, with the few
//! differences (write-transaction start, migrations, pool shape) decided here and nowhere else.

use std::str::FromStr;
use std::sync::Arc;

use crate::contract::messages::RequestDetail;
use crate::server::error::AppError;
use std::time::Duration;

use sqlx::any::{AnyArguments, AnyPoolOptions};
use sqlx::query::{Query, QueryAs, QueryScalar};
use sqlx::{Any, AnyPool, Executor, Transaction};

use primary::{refuse_read_only, Changes, Primary};

pub(crate) mod failure;
pub(crate) mod primary;
mod wal_writes;

pub(crate) use failure::{classify, is_connection_error, is_unique_violation, suspect_connections, suspecting_connections, DbFailure};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    MySql,
}

/// The SQL that differs between the two databases; store code asks here instead of branching itself.
impl Dialect {
    /// Appended to a `SELECT` that locks the rows it reads for the rest of the transaction: `FOR UPDATE` on
    /// MariaDB; nothing on SQLite, whose write transaction (`BEGIN IMMEDIATE`) already holds the one writer lock.
    pub(crate) fn for_update(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            Dialect::MySql => " FOR UPDATE",
        }
    }

    /// The audit chain key of a counter, from the SQL expression of its id: `audit::counter_chain` in SQL (a unit
    /// test holds the two together), so a project's audit rows are found by its counters' chains.
    pub(crate) fn counter_chain_key(self, id: &str) -> String {
        match self {
            Dialect::Sqlite => format!("('counter:' || {id})"),
            Dialect::MySql => format!("CONCAT('counter:', {id})"),
        }
    }

    /// Integer division of two integer expressions.
    pub(crate) fn int_div(self) -> &'static str {
        match self {
            Dialect::Sqlite => "/",
            Dialect::MySql => "DIV",
        }
    }

    /// Appended to a multi-row INSERT: a row whose unique key is taken already is left out, and no other failure is
    /// (not `INSERT OR IGNORE` / `INSERT IGNORE`, which would also swallow a failed check or foreign key).
    pub(crate) fn on_duplicate_key_do_nothing(self) -> &'static str {
        match self {
            Dialect::Sqlite => "ON CONFLICT DO NOTHING",
            Dialect::MySql => "ON DUPLICATE KEY UPDATE id = id",
        }
    }

    /// The same for a table whose key is `column`, not `id`.
    pub(crate) fn on_duplicate_do_nothing_keyed(self, column: &str) -> String {
        match self {
            Dialect::Sqlite => "ON CONFLICT DO NOTHING".into(),
            Dialect::MySql => format!("ON DUPLICATE KEY UPDATE {column} = {column}"),
        }
    }

    /// Adds a project's member organization (binds: project id, organization id) unless it is one already.
    pub(crate) fn insert_project_member_if_absent(self) -> &'static str {
        match self {
            Dialect::Sqlite => "INSERT OR IGNORE INTO project_organizations (project_id, org_id) VALUES (?, ?)",
            // not INSERT IGNORE: on MariaDB it would also swallow a foreign-key failure
            Dialect::MySql => "INSERT INTO project_organizations (project_id, org_id) VALUES (?, ?) ON DUPLICATE KEY UPDATE org_id = org_id",
        }
    }
}

#[derive(Clone)]
pub struct Db {
    /// Reads (and, on MariaDB, writes too).
    pub pool: AnyPool,
    /// Writes. On SQLite this pool has one connection: SQLite has one writer anyway, and queueing in the
    /// pool is far cheaper than "database is locked" retries between connections.
    pub writer: AnyPool,
    /// The committers' connections (`numbering::committer`). On MariaDB they run with autocommit off, so a
    /// batch's first statement opens its transaction: no `BEGIN` round trip in each batch (see `BatchTx`).
    /// On SQLite this is the single writer.
    pub counters: AnyPool,
    pub dialect: Dialect,
    /// The connection URL as used (`mysql:` for MariaDB; the primary's address at the start): the session store needs
    /// a typed pool of its own.
    pub url: String,
    /// Which MariaDB server takes the writes, and when that last changed (`primary`); nothing for SQLite.
    pub primary: Arc<Primary>,
}

/// SQLite: the WAL pages after which a commit copies the WAL into the database file itself, waiting for it.
/// The background checkpointer (`Db::checkpoint_in_background`) normally gets there long before; this only
/// bounds the WAL (≈ 40 MB) if it falls behind. At SQLite's default of 1,000 pages a spread group's commit
/// did it every fourth group or so.
const WAL_AUTOCHECKPOINT: &str = "PRAGMA wal_autocheckpoint = 10000";
/// How often the background checkpointer copies the committed WAL pages into the database file.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(250);

pub(crate) type Tx<'c> = Transaction<'c, Any>;
/// The connection a transaction runs on: store functions that run inside one take this, so they serve a
/// `Tx` (by deref) and a counter batch's `BatchTx` alike.
pub(crate) type Conn = sqlx::AnyConnection;
/// A write connection a counter worker keeps from one batch to the next (see `numbering::queue`).
pub(crate) type WriteConn = sqlx::pool::PoolConnection<Any>;

impl Db {
    /// The file of a SQLite database (None for MariaDB and an in-memory SQLite database).
    pub(crate) fn sqlite_file(&self) -> Option<std::path::PathBuf> {
        let rest = self.url.strip_prefix("sqlite://").or_else(|| self.url.strip_prefix("sqlite:"))?;
        let path = rest.split('?').next().unwrap_or_default();
        (self.dialect == Dialect::Sqlite && !path.is_empty() && !path.starts_with(":memory:")).then(|| std::path::PathBuf::from(path))
    }

    pub async fn connect(url: &str) -> Result<Db, sqlx::Error> {
        Db::connect_to(url, &[]).await
    }

    /// Like [`Db::connect`]; for MariaDB with `servers` (`host:port`, `DATABASE_SERVERS`) the service writes to whichever
    /// of them is the writable one, and follows it when another is promoted (`primary`).
    pub async fn connect_to(url: &str, servers: &[String]) -> Result<Db, sqlx::Error> {
        sqlx::any::install_default_drivers();
        let dialect = if url.starts_with("sqlite:") {
            Dialect::Sqlite
        } else if url.starts_with("mysql:") || url.starts_with("mariadb:") {
            Dialect::MySql
        } else {
            return Err(sqlx::Error::Configuration(format!("unsupported DATABASE_URL scheme: {}", crate::server::tls::redact(url)).into()));
        };
        let url = if dialect == Dialect::Sqlite { ensure_sqlite_create(url) } else { url.replacen("mariadb:", "mysql:", 1) };
        match dialect {
            Dialect::Sqlite => {
                let options = |max: u32| {
                    AnyPoolOptions::new()
                        .max_connections(max)
                        .min_connections(1)
                        .acquire_timeout(Duration::from_secs(30))
                        // a local file cannot be cut off: no liveness ping on every acquire
                        .test_before_acquire(false)
                        .after_connect(|conn, _| {
                            Box::pin(async move {
                                // WAL lets readers run beside the writer; FULL makes every commit durable.
                                conn.execute("PRAGMA journal_mode = WAL").await?;
                                conn.execute("PRAGMA synchronous = FULL").await?;
                                // what makes the WAL writes held by `wal_writes` safe: no frame outside a commit
                                conn.execute("PRAGMA cache_spill = OFF").await?;
                                // A statement that changes many rows inside a transaction keeps the pages it changes
                                // in a statement journal, to undo itself alone. Past 64 KiB SQLite spilled that to a temp
                                // file: a group's multi-row INSERTs made some 37 % of the server's pwrites there.
                                conn.execute("PRAGMA temp_store = MEMORY").await?;
                                conn.execute("PRAGMA foreign_keys = ON").await?;
                                conn.execute("PRAGMA busy_timeout = 10000").await?;
                                conn.execute(WAL_AUTOCHECKPOINT).await?;
                                Ok(())
                            })
                        })
                };
                let opened = match wal_writes::register() {
                    Ok(()) => with_sqlite_param(&url, "vfs", wal_writes::VFS_NAME),
                    // no `unix` VFS to wrap (another platform): SQLite's default, with two writes per WAL frame
                    Err(e) => {
                        tracing::warn!(error = %e, "SQLite's WAL is written frame by frame");
                        url.clone()
                    }
                };
                let writer = options(1).connect(&opened).await?;
                let pool = options(8).connect(&opened).await?;
                Ok(Db { pool, counters: writer.clone(), writer, dialect, url, primary: Primary::none() })
            }
            Dialect::MySql => {
                let options = sqlx::mysql::MySqlConnectOptions::from_str(&url)?;
                if options.get_database().is_none_or(str::is_empty) {
                    return Err(sqlx::Error::Configuration(
                        "DATABASE_URL for MariaDB must name a database: mysql://user:password@host:3306/<database>".into(),
                    ));
                }
                // a certificate that does not verify names the server (`tls`)
                let (primary, url) = Primary::find(&url, servers).await.map_err(|e| crate::server::tls::name_db_error(&url, e))?;
                let changes = primary.changes().clone();
                let pool = mysql_pool(&url, 32, Autocommit::On, &changes).await.map_err(|e| crate::server::tls::name_db_error(&url, e))?;
                // lazy: the server opens it again on the committers' thread (`counters_on`)
                let counters = mysql_pool_options(16, Autocommit::Off, &changes).connect_lazy(&counters_url(&url))?;
                primary.follow("main", pool.clone(), url.clone());
                primary.follow("counters", counters.clone(), counters_url(&url));
                primary.watch(&pool);
                Ok(Db { writer: pool.clone(), pool, counters, dialect, url, primary })
            }
        }
    }

    /// This handle with its MariaDB counter pool opened on another runtime (the committers' thread's), so that the
    /// committers' connections are driven by the runtime they run on. SQLite keeps its single writer connection: its
    /// I/O runs on a thread of its own anyway, and a second writer would only contend for the file lock.
    pub(crate) async fn counters_on(mut self, runtime: &tokio::runtime::Handle) -> Result<Db, sqlx::Error> {
        if self.dialect == Dialect::MySql {
            // the primary's address now, which may not be the one at the start
            let url = counters_url(&self.primary.url()?);
            let changes = self.primary.changes().clone();
            let opening = url.clone();
            self.counters = runtime
                .spawn(async move { mysql_pool(&opening, 16, Autocommit::Off, &changes).await })
                .await
                .map_err(|e| sqlx::Error::Configuration(format!("committers' thread stopped: {e}").into()))??;
            self.primary.follow("counters", self.counters.clone(), url);
        }
        Ok(self)
    }

    pub async fn migrate(&self) -> Result<(), sqlx::migrate::MigrateError> {
        match self.dialect {
            Dialect::Sqlite => sqlx::migrate!("./migrations/sqlite").run(&self.writer).await,
            Dialect::MySql => sqlx::migrate!("./migrations/mysql").run(&self.pool).await,
        }
    }

    /// A write transaction. On SQLite it takes the write lock up front (`BEGIN IMMEDIATE`), so a
    /// read-then-write transaction never fails half-way on lock upgrade when several processes share a file.
    pub async fn begin_write(&self) -> Result<Tx<'static>, sqlx::Error> {
        Transaction::begin(self.writer.acquire().await?, self.begin_statement()).await
    }

    /// A read transaction that sees one moment of the database, for checks that read it in many statements. The
    /// MariaDB sessions run READ COMMITTED (see `mysql_pool_options`), where each statement sees its own moment:
    /// this one transaction runs REPEATABLE READ, whose reads all come from the snapshot its first read takes.
    /// SQLite's read transactions see one snapshot anyway.
    pub(crate) async fn begin_snapshot(&self) -> Result<Tx<'static>, sqlx::Error> {
        let mut conn = self.pool.acquire().await?;
        if self.dialect == Dialect::MySql {
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ").await?;
        }
        Transaction::begin(conn, None).await
    }

    /// A counter batch's transaction on a connection of `counters` that the worker keeps.
    pub(crate) async fn begin_batch<'c>(&self, conn: &'c mut WriteConn) -> Result<BatchTx<'c>, sqlx::Error> {
        Ok(match self.dialect {
            Dialect::Sqlite => BatchTx::Explicit(Transaction::begin(&mut **conn, self.begin_statement()).await?),
            Dialect::MySql => BatchTx::Implicit(conn),
        })
    }

    /// How a write transaction starts: `BEGIN IMMEDIATE` on SQLite, the default `BEGIN` on MariaDB.
    fn begin_statement(&self) -> Option<std::borrow::Cow<'static, str>> {
        (self.dialect == Dialect::Sqlite).then_some(std::borrow::Cow::Borrowed("BEGIN IMMEDIATE"))
    }

    /// `?` placeholders for a multi-row INSERT: `(?, ?, ?), (?, ?, ?)`.
    pub fn row_placeholders(rows: usize, cols: usize) -> String {
        let one = format!("({})", vec!["?"; cols].join(", "));
        vec![one; rows].join(", ")
    }

    /// SQLite: copies committed WAL pages into the database file every `CHECKPOINT_EVERY`, on a reading
    /// connection beside the writer (a PASSIVE checkpoint waits for no reader or writer), so that commits do
    /// not carry the checkpoint. Ends when the pool is closed. Nothing to do on MariaDB.
    pub(crate) fn checkpoint_in_background(&self) {
        if self.dialect != Dialect::Sqlite {
            return;
        }
        let pool = self.pool.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(CHECKPOINT_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            while !pool.is_closed() {
                tick.tick().await;
                if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").fetch_all(&pool).await {
                    tracing::debug!(error = %e, "background checkpoint failed");
                }
            }
        });
    }

    pub(crate) async fn ping(&self) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT 1").execute(&self.pool).await.map(|_| ())
    }
}

/// How many items a statement over `n` items (an `IN (…)` list, a `CASE` arm each) is written for: `n` itself up
/// to 8, then rounded up to 12, 16, 24, 32, 48, 64…; the extra places repeat the last item, which changes nothing.
/// A statement text per group size would be prepared for each size, and push the others out of the driver's cache
/// of prepared statements (docs/benchmarks/mariadb.md).
pub(crate) fn padded_len(n: usize) -> usize {
    if n <= 8 {
        return n;
    }
    let power = n.next_power_of_two();
    if n <= power / 4 * 3 {
        power / 4 * 3
    } else {
        power
    }
}

/// `items` stretched to [`padded_len`] by repeating the last one.
pub(crate) fn padded<T>(items: &[T]) -> impl Iterator<Item = &T> + Clone {
    let extra = padded_len(items.len()) - items.len();
    items.iter().chain(std::iter::repeat_n(items.last(), extra).flatten())
}

/// A counter batch's transaction. On MariaDB's autocommit-off connections the first statement opens it
/// (`Implicit`), and `COMMIT` / `ROLLBACK` end it; a connection given back to the pool mid-transaction (a
/// panic) is rolled back on its way there. On SQLite it is a `BEGIN IMMEDIATE` transaction.
pub(crate) enum BatchTx<'c> {
    Explicit(Tx<'c>),
    Implicit(&'c mut Conn),
}

impl BatchTx<'_> {
    pub(crate) fn conn(&mut self) -> &mut Conn {
        match self {
            BatchTx::Explicit(tx) => tx,
            BatchTx::Implicit(conn) => conn,
        }
    }

    pub(crate) async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            BatchTx::Explicit(tx) => tx.commit().await,
            BatchTx::Implicit(conn) => conn.execute("COMMIT").await.map(|_| ()),
        }
    }

    pub(crate) async fn rollback(self) -> Result<(), sqlx::Error> {
        match self {
            BatchTx::Explicit(tx) => tx.rollback().await,
            BatchTx::Implicit(conn) => conn.execute("ROLLBACK").await.map(|_| ()),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Autocommit {
    On,
    Off,
}

/// The URL of the committers' MariaDB connections: prepared-statement caches of `COUNTER_STATEMENT_CACHE` instead
/// of sqlx's 100 (unless the URL sets one). A group writes its numbers and audit rows with one INSERT each, whose text
/// differs with the row count; with 100 places these pushed each other out, and about one statement in six was
/// prepared again, a round trip and a parse each (docs/benchmarks/mariadb.md). Only the committers hold these
/// connections, one each, so the server keeps a few hundred statements per committer (its limit,
/// `max_prepared_stmt_count`, is 16,382 by default).
fn counters_url(url: &str) -> String {
    if url.contains("statement-cache-capacity=") {
        return url.to_string();
    }
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}statement-cache-capacity={COUNTER_STATEMENT_CACHE}")
}

const COUNTER_STATEMENT_CACHE: usize = 400;

async fn mysql_pool(url: &str, max_connections: u32, autocommit: Autocommit, changes: &Arc<Changes>) -> Result<AnyPool, sqlx::Error> {
    mysql_pool_options(max_connections, autocommit, changes).connect(url).await
}

fn mysql_pool_options(max_connections: u32, autocommit: Autocommit, changes: &Arc<Changes>) -> AnyPoolOptions {
    let changes = changes.clone();
    AnyPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(Duration::from_secs(10))
        // sqlx pings every connection it hands out: one round trip in seven of a single caller's batch. A
        // connection reused within the second is alive; one idle for longer may have been cut and is still
        // checked, and so is every connection for a while after a connection error (a MariaDB restart kills
        // them all at once: without the ping each retry would draw another dead one). The check asks whether the
        // server went read-only (a demoted primary) in the same round trip a ping takes. A connection opened before
        // the primary changed is not used again at all (`primary`).
        .test_before_acquire(false)
        .before_acquire(move |conn, meta| {
            let changes = changes.clone();
            Box::pin(async move {
                if changes.opened_before_change(meta.age) {
                    return Ok(false);
                }
                if meta.idle_for > Duration::from_secs(1) || suspecting_connections() {
                    refuse_read_only(conn).await?;
                }
                Ok(true)
            })
        })
        .after_connect(move |conn, _| {
            Box::pin(async move {
                // docs/operations/README.md#failover: never a write to a read-only server (a replica, or a primary an operator demoted)
                refuse_read_only(conn).await?;
                // READ COMMITTED, not InnoDB's default REPEATABLE READ: under REPEATABLE READ the
                // batch's `SELECT … FOR UPDATE` of a counter that does not exist yet takes a gap lock,
                // and two workers creating two *different* new counters (a new year, a new pair of
                // parties) then deadlock on each other's INSERT (error 1213) — measured: 158 of 200
                // concurrent first reserves on distinct keys failed. READ COMMITTED takes no gap locks
                // for searches; the version fence (`UPDATE … WHERE version = ?`) reads the latest row
                // under either level, and the counter's row lock already orders its batches.
                conn.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED").await?;
                if autocommit == Autocommit::Off {
                    conn.execute("SET SESSION autocommit = 0").await?;
                }
                Ok(())
            })
        })
        .after_release(move |conn, _| {
            Box::pin(async move {
                // Only a batch that never finished (a panic) leaves a transaction open; the next user of the
                // connection must not commit it. An error here closes the connection instead.
                if autocommit == Autocommit::Off {
                    conn.execute("ROLLBACK").await?;
                }
                Ok(true)
            })
        })
}

fn ensure_sqlite_create(url: &str) -> String {
    with_sqlite_param(url, "mode", "rwc")
}

/// The SQLite URL with `name=value` added, unless it names `name` already; an in-memory database is left as it is (it
/// has no file to create, and no files for a VFS to write).
fn with_sqlite_param(url: &str, name: &str, value: &str) -> String {
    if url.contains(":memory:") || url.contains(&format!("{name}=")) {
        url.to_string()
    } else if url.contains('?') {
        format!("{url}&{name}={value}")
    } else {
        format!("{url}?{name}={value}")
    }
}

pub(crate) fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The last page a listing serves: past it the client is asking for rows no listing here holds (at 500 a page,
/// half a billion rows), so the answer is a clear 400 rather than an empty page.
pub(crate) const MAX_PAGE: u32 = 1_000_000;

/// A page of a listing as a client asked for it, made safe: the page at least 1 and at most [`MAX_PAGE`]
/// (400 beyond), the size within `1..=max_size` (`default_size` when absent), and the offset of its first row
/// computed without overflow.
pub(crate) fn paging(page: Option<u32>, size: Option<u32>, default_size: u32, max_size: u32) -> Result<(u32, u32, i64), AppError> {
    let page = page.unwrap_or(1).max(1);
    if page > MAX_PAGE {
        return Err(AppError::validation(RequestDetail::PageBeyondLast { max: &MAX_PAGE }));
    }
    let size = size.unwrap_or(default_size).clamp(1, max_size.max(1));
    Ok((page, size, (i64::from(page) - 1).saturating_mul(i64::from(size))))
}

pub fn ms_to_datetime(ms: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

/// A value bound to a `?` of a [`Conditions`] clause.
pub(crate) enum SqlValue {
    Int(i64),
    Text(String),
}

/// Ids bind as their integers.
macro_rules! id_values {
    ($($id:ty),*) => {$(
        impl From<$id> for SqlValue {
            fn from(id: $id) -> Self {
                SqlValue::Int(id.0)
            }
        }
    )*};
}
id_values!(
    crate::numbering::ProjectId,
    crate::numbering::CorrespondenceTypeId,
    crate::numbering::OrganizationId,
    crate::numbering::SubTypeId,
    crate::numbering::RfaTypeId,
    crate::numbering::DisciplineId,
    crate::numbering::ContractId,
    crate::numbering::CounterId,
    crate::contract::UserId,
    crate::contract::ApiTokenId,
    crate::contract::ErrorLogId
);

impl From<i64> for SqlValue {
    fn from(v: i64) -> Self {
        SqlValue::Int(v)
    }
}

impl From<String> for SqlValue {
    fn from(v: String) -> Self {
        SqlValue::Text(v)
    }
}

impl From<&str> for SqlValue {
    fn from(v: &str) -> Self {
        SqlValue::Text(v.to_string())
    }
}

/// A `WHERE` clause built from optional filters, with its values in placeholder order, so the same
/// filters can serve a count and a page (or an export) of one query.
pub(crate) struct Conditions {
    sql: String,
    values: Vec<SqlValue>,
}

impl Default for Conditions {
    fn default() -> Self {
        Conditions { sql: " WHERE 1 = 1".into(), values: Vec::new() }
    }
}

impl Conditions {
    /// Adds `AND clause`, binding `values` to its placeholders.
    pub(crate) fn and(&mut self, clause: &str, values: impl IntoIterator<Item = SqlValue>) -> &mut Self {
        self.sql.push_str(" AND ");
        self.sql.push_str(clause);
        self.values.extend(values);
        self
    }

    /// Adds `AND clause` with one value, when there is a value.
    pub(crate) fn and_if<V: Into<SqlValue>>(&mut self, clause: &str, value: Option<V>) -> &mut Self {
        if let Some(v) = value {
            self.and(clause, [v.into()]);
        }
        self
    }

    /// Adds `AND clause` where the clause's `{}` becomes one placeholder per id (`IN ({})`); no ids matches
    /// nothing (an empty scope sees no rows).
    pub(crate) fn and_in<Id: Copy + Into<SqlValue>>(&mut self, clause: &str, ids: &[Id]) -> &mut Self {
        if ids.is_empty() {
            return self.and("1 = 0", []);
        }
        let placeholders = vec!["?"; ids.len()].join(", ");
        self.and(&clause.replace("{}", &placeholders), ids.iter().map(|id| (*id).into()))
    }

    pub(crate) fn sql(&self) -> &str {
        &self.sql
    }

    /// Binds the values to a `query`, `query_as` or `query_scalar` of this clause.
    pub(crate) fn bind<'q, Q: BindValue<'q>>(&self, q: Q) -> Q {
        bind_values(q, &self.values)
    }
}

/// Binds values to a query's placeholders, in order.
pub(crate) fn bind_values<'q, Q: BindValue<'q>>(mut q: Q, values: &[SqlValue]) -> Q {
    for v in values {
        q = q.bind_value(v);
    }
    q
}

/// A query a [`Conditions`] value can be bound to.
pub(crate) trait BindValue<'q> {
    fn bind_value(self, v: &SqlValue) -> Self;
}

impl<'q> BindValue<'q> for Query<'q, Any, AnyArguments<'q>> {
    fn bind_value(self, v: &SqlValue) -> Self {
        match v {
            SqlValue::Int(i) => self.bind(*i),
            SqlValue::Text(t) => self.bind(t.clone()),
        }
    }
}

impl<'q, O> BindValue<'q> for QueryAs<'q, Any, O, AnyArguments<'q>> {
    fn bind_value(self, v: &SqlValue) -> Self {
        match v {
            SqlValue::Int(i) => self.bind(*i),
            SqlValue::Text(t) => self.bind(t.clone()),
        }
    }
}

impl<'q, O> BindValue<'q> for QueryScalar<'q, Any, O, AnyArguments<'q>> {
    fn bind_value(self, v: &SqlValue) -> Self {
        match v {
            SqlValue::Int(i) => self.bind(*i),
            SqlValue::Text(t) => self.bind(t.clone()),
        }
    }
}

/// The database's identity (migration 15): a random id made once, kept by backups and restores.
pub(crate) async fn identity(db: &Db) -> Result<String, sqlx::Error> {
    sqlx::query_scalar("SELECT id FROM database_identity").fetch_one(&db.pool).await
}

/// `docnum backup`: a consistent copy of a SQLite database into `file` (which must not exist), taken while the service
/// serves it: `VACUUM INTO` reads one snapshot in one read transaction, so the writers go on (WAL) and the copy holds
/// whole commits only. Returns the copy's size. MariaDB has its own tools (deploy/README.md, "Backups").
pub async fn backup(db: &Db, file: &std::path::Path) -> Result<u64, String> {
    if db.dialect != Dialect::Sqlite {
        return Err("docnum backup copies a SQLite database; for MariaDB use mariadb-backup or mariadb-dump --single-transaction (deploy/README.md, \"Backups\")".into());
    }
    if file.exists() {
        return Err(format!("{} exists already: a backup never overwrites a file", file.display()));
    }
    let target = file.to_str().ok_or_else(|| format!("{} is not a UTF-8 path", file.display()))?;
    sqlx::query("VACUUM INTO ?").bind(target).execute(&db.pool).await.map_err(|e| format!("backup into {}: {e}", file.display()))?;
    std::fs::metadata(file).map(|m| m.len()).map_err(|e| format!("{}: {e}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_over_n_items_are_written_for_a_few_sizes_repeating_the_last_item() {
        let sizes: Vec<usize> = (0..=70).map(padded_len).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
        assert_eq!(sizes, [0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 48, 64, 96]);
        for n in 0..=300 {
            assert!(padded_len(n) >= n && padded_len(n) <= (n * 3 / 2).max(8), "{n} → {}", padded_len(n));
        }
        assert_eq!(padded(&[1, 2, 3]).copied().collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(padded(&(1..=9).collect::<Vec<_>>()).copied().collect::<Vec<_>>(), [1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 9]);
        assert_eq!(padded::<i32>(&[]).count(), 0);
    }

    #[test]
    fn the_committers_connections_cache_more_prepared_statements_unless_the_url_says() {
        assert_eq!(counters_url("mysql://u@h/db"), "mysql://u@h/db?statement-cache-capacity=400");
        assert_eq!(counters_url("mysql://u@h/db?ssl-mode=DISABLED"), "mysql://u@h/db?ssl-mode=DISABLED&statement-cache-capacity=400");
        assert_eq!(counters_url("mysql://u@h/db?statement-cache-capacity=50"), "mysql://u@h/db?statement-cache-capacity=50");
    }

    #[tokio::test]
    async fn classify_tells_a_duplicate_from_other_failures() {
        let db = Db::connect("sqlite::memory:").await.unwrap();
        let mut conn = db.writer.acquire().await.unwrap();
        conn.execute("CREATE TABLE t (x INTEGER NOT NULL UNIQUE)").await.unwrap();
        conn.execute("INSERT INTO t (x) VALUES (1)").await.unwrap();
        let duplicate = conn.execute("INSERT INTO t (x) VALUES (1)").await.unwrap_err();
        assert_eq!(classify(&duplicate), DbFailure::UniqueViolation);
        // the error's report names the database's own message once
        let report = crate::server::error::AppError::from(duplicate).report();
        assert_eq!(report.matches("UNIQUE constraint failed").count(), 1, "{report}");
        let not_null = conn.execute("INSERT INTO t (x) VALUES (NULL)").await.unwrap_err();
        assert_eq!(classify(&not_null), DbFailure::Other);
        assert_eq!(classify(&sqlx::Error::PoolClosed), DbFailure::Connection);
        assert_eq!(classify(&sqlx::Error::RowNotFound), DbFailure::Other);
    }

    #[tokio::test]
    async fn sqlite_connections_write_wal_frames_only_in_a_commit_and_keep_statement_journals_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::connect(&format!("sqlite://{}", dir.path().join("t.db").display())).await.unwrap();
        for pool in [&db.writer, &db.pool] {
            let mut conn = pool.acquire().await.unwrap();
            // `wal_writes` holds a commit's frames: a spilled page would be held past a rollback
            let spill: i64 = sqlx::query_scalar("PRAGMA cache_spill").fetch_one(&mut *conn).await.unwrap();
            assert_eq!(spill, 0);
            let temp_store: i64 = sqlx::query_scalar("PRAGMA temp_store").fetch_one(&mut *conn).await.unwrap();
            assert_eq!(temp_store, 2, "MEMORY");
        }
        assert!(!db.url.contains("vfs="), "the session store's connections keep the plain VFS: {}", db.url);
    }

    #[test]
    fn paging_never_overflows_and_keeps_within_bounds() {
        assert_eq!(paging(None, None, 50, 500).unwrap(), (1, 50, 0));
        assert_eq!(paging(Some(0), Some(0), 50, 500).unwrap(), (1, 1, 0));
        assert_eq!(paging(Some(3), Some(10_000), 50, 500).unwrap(), (3, 500, 1000));
        assert_eq!(paging(Some(MAX_PAGE), Some(u32::MAX), 50, 500).unwrap(), (MAX_PAGE, 500, (i64::from(MAX_PAGE) - 1) * 500));
        for page in [MAX_PAGE + 1, 2_147_483_648, u32::MAX] {
            assert!(matches!(paging(Some(page), None, 50, 500), Err(AppError::Validation { .. })), "{page}");
        }
    }

    #[test]
    fn an_empty_scope_matches_nothing() {
        let mut c = Conditions::default();
        c.and_in::<i64>("project_id IN ({})", &[]);
        assert_eq!(c.sql(), " WHERE 1 = 1 AND 1 = 0");
        let mut c = Conditions::default();
        c.and_in("project_id IN ({})", &[3, 4]);
        assert_eq!(c.sql(), " WHERE 1 = 1 AND project_id IN (?, ?)");
        assert_eq!(c.values.len(), 2);
    }
}
