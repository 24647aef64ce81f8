//! A database of an earlier schema, migrated: what it holds reads back the same (a real SQLite file or MariaDB
//! database, the migrations run in two steps).

use std::sync::Arc;

use docnum::numbering::CounterId;
use docnum::receipt;
use docnum::server::audit::{self, AuditEntry, ChainHead, ADMIN_CHAIN, GENESIS};
use docnum::server::clock::Clock;
use docnum::server::config::LogConfig;
use docnum::server::db::Db;
use docnum::server::error::AppError;
use docnum::server::numbering::counter_tx::{self, admin::CounterWrite, Write};
use docnum::server::tlog::Log;
use sqlx::migrate::Migrator;

use crate::common::{use_mysql, MySqlTestDb};

/// The first migration of the counter's chain head in its own row.
const CHAIN_HEAD_IN_COUNTER: i64 = 20261127000008;

/// The migrations before `version`, run on `db`.
async fn migrate_before(db: &Db, version: i64) {
    let mut migrator: Migrator = if use_mysql() { sqlx::migrate!("./migrations/mysql") } else { sqlx::migrate!("./migrations/sqlite") };
    migrator.migrations = migrator.migrations.iter().filter(|m| m.version < version).cloned().collect::<Vec<_>>().into();
    let pool = if use_mysql() { &db.pool } else { &db.writer };
    migrator.run(pool).await.unwrap();
}

/// A database of its own (a SQLite file in the folder, or a MariaDB database dropped with its handle) at the schema
/// before migration `version`.
async fn earlier_schema(version: i64) -> (Db, Option<MySqlTestDb>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mysql = if use_mysql() { Some(MySqlTestDb::create().await) } else { None };
    let url = match &mysql {
        Some(m) => m.url.clone(),
        None => format!("sqlite://{}", dir.path().join("docnum.db").display()),
    };
    let db = Db::connect(&url).await.unwrap();
    migrate_before(&db, version).await;
    (db, mysql, dir)
}

fn entry(operation: &str, counter_id: Option<CounterId>, sequence: Option<i64>) -> AuditEntry {
    AuditEntry {
        operation: operation.into(),
        status: "SUCCESS".into(),
        counter_id,
        sequence,
        fallback_used: "NONE".into(),
        created_at: 1_750_000_000_000,
        ..Default::default()
    }
}

/// Rows appended to a chain whose head (in `audit_chains`, as the earlier schema kept every head) was `start`.
async fn append_old_style(db: &Db, chain_key: &str, start: &ChainHead, entries: &[AuditEntry]) -> ChainHead {
    let mut conn = db.pool.acquire().await.unwrap();
    let placed = audit::place(chain_key, start, entries);
    audit::insert_placed(&mut conn, &placed).await.unwrap();
    sqlx::query("DELETE FROM audit_chains WHERE chain_key = ?").bind(chain_key).execute(&mut *conn).await.unwrap();
    sqlx::query("INSERT INTO audit_chains (chain_key, head_hash, length) VALUES (?, ?, ?)")
        .bind(chain_key)
        .bind(placed.head.hash.clone())
        .bind(placed.head.length)
        .execute(&mut *conn)
        .await
        .unwrap();
    placed.head
}

#[tokio::test]
async fn counters_chain_heads_move_into_their_rows_and_every_chain_still_verifies() {
    let (db, mysql, _dir) = earlier_schema(CHAIN_HEAD_IN_COUNTER).await;

    // the earlier schema: two counters with chains (heads in audit_chains), one counter never audited, the admin chain
    let pool = &db.pool;
    sqlx::query("INSERT INTO projects (code, name, created_at) VALUES ('P1', 'Project', 0)").execute(pool).await.unwrap();
    sqlx::query("INSERT INTO correspondence_types (code, name, created_at) VALUES ('LET', 'Letter', 0)").execute(pool).await.unwrap();
    for (period, last) in [("YEAR_2568", 3), ("YEAR_2569", 1), ("YEAR_2570", 0)] {
        sqlx::query(
            "INSERT INTO counters (project_id, corr_type_id, period, last_number, max_number, version, created_at, updated_at) \
             SELECT p.id, t.id, ?, ?, 9999, ?, 0, 0 FROM projects p, correspondence_types t",
        )
        .bind(period)
        .bind(last)
        .bind(last)
        .execute(pool)
        .await
        .unwrap();
    }
    let ids: Vec<CounterId> = sqlx::query_scalar("SELECT id FROM counters ORDER BY period").fetch_all(pool).await.unwrap();
    let genesis = ChainHead { hash: GENESIS.into(), length: 0 };
    let first: Vec<AuditEntry> = (1..=3).map(|s| entry("RESERVE", Some(ids[0]), Some(s))).collect();
    let first_head = append_old_style(&db, &audit::counter_chain(ids[0]), &genesis, &first).await;
    let second_head = append_old_style(&db, &audit::counter_chain(ids[1]), &genesis, &[entry("RESERVE", Some(ids[1]), Some(1))]).await;
    let admin_head = append_old_style(&db, ADMIN_CHAIN, &genesis, &[entry("USER_CREATED", None, None)]).await;
    let heads_before: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_chains").fetch_one(pool).await.unwrap();
    assert_eq!(heads_before, 3);

    db.migrate().await.unwrap();

    let heads: Vec<(CounterId, String, i64)> =
        sqlx::query_as("SELECT id, chain_hash, chain_length FROM counters ORDER BY period").fetch_all(pool).await.unwrap();
    assert_eq!(heads, vec![(ids[0], first_head.hash.clone(), 3), (ids[1], second_head.hash.clone(), 1), (ids[2], GENESIS.to_string(), 0),]);
    let left: Vec<(String, String, i64)> =
        sqlx::query_as("SELECT chain_key, head_hash, length FROM audit_chains ORDER BY chain_key").fetch_all(pool).await.unwrap();
    assert_eq!(left, vec![(ADMIN_CHAIN.to_string(), admin_head.hash.clone(), 1)], "only the admin chain keeps its head there");
    let after = audit::verify(&db).await.unwrap();
    assert!(after.ok, "{:?}", after.problems);
    // every counter is a chain now, the one never audited as an empty one
    assert_eq!((after.chains, after.rows), (4, 5));

    // appending goes on from the head in the counter's row, moved with the counter and fenced by its length
    let mut tx = db.begin_write().await.unwrap();
    let locked = counter_tx::lock_counter(&mut tx, db.dialect, ids[0]).await.unwrap().unwrap();
    assert_eq!(locked.head, ChainHead { hash: first_head.hash.clone(), length: 3 });
    let write = |head: ChainHead| Write {
        counters: vec![CounterWrite {
            counter: locked.counter.row.clone(),
            chain: head,
            last_number: locked.counter.row.last_number,
            max_number: None,
            audits: vec![entry("CONFIRM", Some(ids[0]), Some(3))],
        }],
        ..Write::default()
    };
    counter_tx::apply(&mut tx, &write(locked.head.clone()), 1_750_000_000_000).await.unwrap();
    tx.commit().await.unwrap();
    let length: i64 = sqlx::query_scalar("SELECT chain_length FROM counters WHERE id = ?").bind(ids[0]).fetch_one(pool).await.unwrap();
    assert_eq!(length, 4);
    let mut tx = db.begin_write().await.unwrap();
    let stale = counter_tx::apply(&mut tx, &write(first_head.clone()), 1_750_000_000_000).await;
    assert!(matches!(stale, Err(AppError::VersionConflict(_))), "a head read before the append is refused: {stale:?}");
    tx.rollback().await.unwrap();
    // nor does a counter's chain move by the administrative path
    let mut tx = db.begin_write().await.unwrap();
    assert!(audit::append(&mut tx, db.dialect, &audit::counter_chain(ids[0]), &[entry("CONFIRM", Some(ids[0]), Some(3))]).await.is_err());
    tx.rollback().await.unwrap();
    let last = audit::verify(&db).await.unwrap();
    assert!(last.ok, "{:?}", last.problems);
    assert_eq!(last.rows, 6);
    drop(db);
    drop(mysql);
}

/// The first migration of the log's staged events in one row per transaction.
const LOG_STAGED: i64 = 20261203000053;

#[tokio::test]
async fn events_staged_one_per_row_move_over_in_order_and_enter_the_log() {
    let (db, mysql, _dir) = earlier_schema(LOG_STAGED).await;
    let pool = &db.pool;
    let counter = one_counter(&db, "คคง.", "LET").await;
    counter_audit(
        &db,
        counter,
        &[("RESERVE", Some("คคง.-0001-2569"), Some(1)), ("CONFIRM", Some("คคง.-0001-2569"), Some(1)), ("RESET_EXECUTE", None, None)],
    )
    .await;
    // the earlier schema: one staged row per event
    for (event, number, sequence, document) in [
        ("reserved", "คคง.-0001-2569", Some(1), None),
        ("confirmed", "คคง.-0001-2569", Some(1), Some("DOC \"1\"")),
        ("counter-reset", "-", None, None),
    ] {
        sqlx::query("INSERT INTO log_pending (event, number, counter_id, sequence, document_id, at) VALUES (?, ?, ?, ?, ?, ?)")
            .bind(event)
            .bind(number)
            .bind(counter)
            .bind(sequence)
            .bind(document)
            .bind(1_750_000_000_000i64)
            .execute(pool)
            .await
            .unwrap();
    }

    db.migrate().await.unwrap();

    let staged: Vec<Vec<u8>> = sqlx::query_scalar("SELECT events FROM log_staged ORDER BY id").fetch_all(pool).await.unwrap();
    let staged: Vec<serde_json::Value> = staged.iter().map(|json| serde_json::from_slice(json).unwrap()).collect();
    assert_eq!(
        staged,
        vec![
            serde_json::json!([{ "event": "reserved", "number": "คคง.-0001-2569", "counter": counter, "sequence": 1, "document": null, "at": 1_750_000_000_000i64 }]),
            serde_json::json!([{ "event": "confirmed", "number": "คคง.-0001-2569", "counter": counter, "sequence": 1, "document": "DOC \"1\"", "at": 1_750_000_000_000i64 }]),
            serde_json::json!([{ "event": "counter-reset", "number": "-", "counter": counter, "sequence": null, "document": null, "at": 1_750_000_000_000i64 }]),
        ]
    );
    // the sequencer reads them as its own
    let log = Log::new(db.clone(), Arc::new(Clock::system()), LogConfig::default()).unwrap();
    assert_eq!(log.integrate(200).await.unwrap(), 3);
    let logged: Vec<(String, String, String)> =
        bundled(&db).await.iter().map(|text| receipt::Entry::parse(text).unwrap()).map(|e| (e.event, e.number, e.project)).collect();
    assert_eq!(
        logged,
        vec![
            ("reserved".to_string(), "คคง.-0001-2569".to_string(), "คคง.".to_string()),
            ("confirmed".into(), "คคง.-0001-2569".into(), "คคง.".into()),
            ("counter-reset".into(), "-".into(), "คคง.".into()),
        ]
    );
    let document = format!("document-sha256 {}", docnum::server::tlog::document_sha256("DOC \"1\""));
    assert!(bundled(&db).await[1].contains(&document));
    // staged without their audit rows' places, they found them: one run of the counter
    assert_eq!(runs(&db).await, vec![(counter, 1, 3, 0, ranges(&[(1, 3)]))]);
    assert_eq!(sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM log_staged").fetch_one(pool).await.unwrap(), 0);
    drop(db);
    drop(mysql);
}

/// The one project, type and counter of a log test: the counter's id.
async fn one_counter(db: &Db, project: &str, type_code: &str) -> i64 {
    let pool = &db.pool;
    sqlx::query("INSERT INTO projects (code, name, created_at) VALUES (?, 'Project', 0)").bind(project).execute(pool).await.unwrap();
    sqlx::query("INSERT INTO correspondence_types (code, name, created_at) VALUES (?, 'Type', 0)").bind(type_code).execute(pool).await.unwrap();
    sqlx::query(
        "INSERT INTO counters (project_id, correspondence_type_id, period, last_number, max_number, version, created_at, updated_at) \
         SELECT p.id, t.id, 'YEAR_2569', 2, 9999, 2, 0, 0 FROM projects p, correspondence_types t",
    )
    .execute(pool)
    .await
    .unwrap();
    sqlx::query_scalar("SELECT id FROM counters").fetch_one(pool).await.unwrap()
}

/// Audit rows on a counter's chain from its start: `(operation, number, sequence)`.
async fn counter_audit(db: &Db, counter: i64, rows: &[(&str, Option<&str>, Option<i64>)]) {
    let entries: Vec<AuditEntry> = rows
        .iter()
        .map(|(op, number, sequence)| AuditEntry { document_number: number.map(str::to_string), ..entry(op, Some(CounterId(counter)), *sequence) })
        .collect();
    let chain = audit::counter_chain(CounterId(counter));
    let placed = audit::place(&chain, &ChainHead { hash: GENESIS.into(), length: 0 }, &entries);
    let mut conn = db.pool.acquire().await.unwrap();
    audit::insert_placed(&mut conn, &placed).await.unwrap();
}

/// The log's entries' texts, from its bundles.
async fn bundled(db: &Db) -> Vec<String> {
    let bundles: Vec<Vec<u8>> = sqlx::query_scalar("SELECT entries FROM log_bundles ORDER BY bundle").fetch_all(&db.pool).await.unwrap();
    let mut out = Vec::new();
    for bytes in bundles {
        let mut at = 0;
        while at < bytes.len() {
            let len = u16::from_be_bytes([bytes[at], bytes[at + 1]]) as usize;
            out.push(String::from_utf8(bytes[at + 2..at + 2 + len].to_vec()).unwrap());
            at += 2 + len;
        }
    }
    out
}

async fn runs(db: &Db) -> Vec<(i64, i64, i64, i64, Vec<u8>)> {
    sqlx::query_as("SELECT counter_id, first_chain, last_chain, first_idx, chain FROM log_runs ORDER BY first_idx").fetch_all(&db.pool).await.unwrap()
}

/// Chain positions as a run stores them: ranges of a big-endian start and length.
fn ranges(r: &[(i64, i64)]) -> Vec<u8> {
    r.iter().flat_map(|(start, len)| start.to_be_bytes().into_iter().chain(len.to_be_bytes())).collect()
}

/// The first migration of the log's bundles and runs.
const LOG_BUNDLES: i64 = 20261203000054;

#[tokio::test]
async fn entries_kept_one_per_row_move_into_bundles_and_runs() {
    let (db, mysql, _dir) = earlier_schema(LOG_BUNDLES).await;
    let pool = &db.pool;
    let counter = one_counter(&db, "LCBP3-C2", "RFA").await;
    // the chain: two numbers reserved, a reset asked for (no event of the log), the first confirmed
    counter_audit(
        &db,
        counter,
        &[
            ("RESERVE", Some("R-0001"), Some(1)),
            ("RESERVE", Some("R-0002"), Some(2)),
            ("RESET_REQUEST", None, None),
            ("CONFIRM", Some("R-0001"), Some(1)),
        ],
    )
    .await;
    // the earlier schema: an entry a row; the last one no audit row explains
    let logged = [("reserved", "R-0001", Some(1)), ("reserved", "R-0002", Some(2)), ("confirmed", "R-0001", Some(1)), ("voided", "R-0009", Some(9))];
    let mut texts = Vec::new();
    for (idx, (event, number, sequence)) in logged.into_iter().enumerate() {
        let text = receipt::Entry {
            number: number.into(),
            project: "LCBP3-C2".into(),
            type_code: "RFA".into(),
            event: event.into(),
            at: "2026-12-03T00:00:00.000Z".into(),
            sequence,
            document_sha256: None,
        }
        .to_text();
        sqlx::query(
            "INSERT INTO log_entries (idx, project_code, type_code, number, event, counter_id, sequence, body, created_at) \
             VALUES (?, 'LCBP3-C2', 'RFA', ?, ?, ?, ?, ?, 0)",
        )
        .bind(idx as i64)
        .bind(number)
        .bind(event)
        .bind(counter)
        .bind(sequence)
        .bind(text.clone().into_bytes())
        .execute(pool)
        .await
        .unwrap();
        texts.push(text);
    }
    sqlx::query("UPDATE log_state SET size = 4").execute(pool).await.unwrap();

    db.migrate().await.unwrap();
    let log = Log::new(db.clone(), Arc::new(Clock::system()), LogConfig::default()).unwrap();
    log.bundle_loose_entries().await.unwrap();

    assert_eq!(bundled(&db).await, texts, "the texts as they were, in their order");
    assert_eq!(sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM log_entries").fetch_one(pool).await.unwrap(), 0);
    // each entry found its audit row (the confirmation past the reset's request); the unexplained one is in no run
    assert_eq!(runs(&db).await, vec![(counter, 1, 4, 0, ranges(&[(1, 2), (4, 1)]))]);
    // done once
    log.bundle_loose_entries().await.unwrap();
    assert_eq!(bundled(&db).await.len(), 4);
    drop(db);
    drop(mysql);
}
