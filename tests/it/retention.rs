//! Retention (docs/operations/README.md#retention): a prune removes exactly what has aged out — login attempts, resolved error-log rows, expired
//! sessions — and nothing else; a dry run counts the same rows and removes none; each real run is an `admin` audit
//! row with its counts, and the chains still verify; instances sharing a database run each day's prune once.

use std::process::Command;
use std::str::FromStr;
use std::time::Duration;

use docnum::server::audit;
use docnum::server::db::{ms_to_datetime, Db, Dialect};
use docnum::server::retention::{self, PruneCounts, RetentionConfig};
use reqwest::StatusCode;
use serde_json::{json, Value};
use tower_sessions::cookie::time::OffsetDateTime;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::SessionStore;
use tower_sessions_sqlx_store::{MySqlStore, SqliteStore};

use crate::common::{letter, TestApp};

const DAY_MS: i64 = 86_400_000;

/// What [`seed`] puts in that a prune at the seeding time removes, with the default limits (180 and 365 days).
const AGED: PruneCounts = PruneCounts {
    login_attempts: 3,
    resolved_errors: 2,
    expired_sessions: 2,
    idempotency_keys: 2,
    delivered_notifications: 0,
    notification_events: 0,
};

/// The tables no prune may touch, and some more.
const NEVER_PRUNED: [&str; 8] = [
    "audit_log",
    "document_numbers",
    "numbering_templates",
    "numbering_template_versions",
    "workflow_instances",
    "workflow_events",
    "counters",
    "users",
];

async fn count(db: &Db, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(&db.pool).await.unwrap()
}

async fn rows_of(db: &Db, tables: &[&str]) -> Vec<(String, i64)> {
    let mut rows = Vec::new();
    for t in tables {
        rows.push((t.to_string(), count(db, &format!("SELECT COUNT(*) FROM {t}")).await));
    }
    rows
}

async fn prune_rows(db: &Db) -> i64 {
    count(db, "SELECT COUNT(*) FROM audit_log WHERE operation = 'PRUNE'").await
}

/// The session store the server uses (`run::app`), on `db`'s database.
async fn session_store(db: &Db) -> Box<dyn SessionStore> {
    match db.dialect {
        Dialect::Sqlite => Box::new(SqliteStore::new(sqlx::SqlitePool::connect(&db.url).await.unwrap())),
        Dialect::MySql => {
            let options = sqlx::mysql::MySqlConnectOptions::from_str(&db.url).unwrap();
            let database = options.get_database().unwrap().to_string();
            let pool = sqlx::MySqlPool::connect_with(options).await.unwrap();
            Box::new(MySqlStore::new(pool).with_schema_name(database).unwrap())
        }
    }
}

/// Rows on either side of every limit at `now_ms`: login attempts 400, 181, 181 (aged), 179 and 1 day old; errors
/// resolved 700 and 366 (aged) and 364 days ago, two unresolved of 1,000 days; sessions expired an hour and 30 days
/// ago, one expiring tomorrow; idempotency keys 48 and 25 (aged), 23 and 1 hours old.
async fn seed(db: &Db, now_ms: i64) {
    for (i, hours) in [48, 25, 23, 1].into_iter().enumerate() {
        sqlx::query("INSERT INTO idempotency_keys (scope, idem_key, fingerprint, operation, answer, created_at) VALUES ('user:1', ?, 'f', 'RESERVE', '{}', ?)")
            .bind(format!("seeded-{i}"))
            .bind(now_ms - hours * 3_600_000)
            .execute(&db.writer)
            .await
            .unwrap();
    }
    for days in [400, 181, 181, 179, 1] {
        sqlx::query("INSERT INTO login_attempts (created_at, username, outcome) VALUES (?, 'somchai', 'WRONG_PASSWORD')")
            .bind(now_ms - days * DAY_MS)
            .execute(&db.writer)
            .await
            .unwrap();
    }
    for (created_days, resolved_days) in [(800, Some(700)), (400, Some(366)), (365, Some(364)), (1000, None), (1000, None)] {
        sqlx::query("INSERT INTO error_log (error_type, code, message, created_at, resolved_at) VALUES ('DB_ERROR', 'NB500', 'seeded', ?, ?)")
            .bind(now_ms - created_days * DAY_MS)
            .bind(resolved_days.map(|d: i64| now_ms - d * DAY_MS))
            .execute(&db.writer)
            .await
            .unwrap();
    }
    let store = session_store(db).await;
    for expiry_ms in [now_ms - 3_600_000, now_ms - 30 * DAY_MS, now_ms + DAY_MS] {
        let expiry_date = OffsetDateTime::from_unix_timestamp_nanos(i128::from(expiry_ms) * 1_000_000).unwrap();
        store.save(&Record { id: Id::default(), data: Default::default(), expiry_date }).await.unwrap();
    }
}

/// The sessions' table as the store names it.
fn sessions_table(db: &Db) -> &'static str {
    match db.dialect {
        Dialect::Sqlite => "tower_sessions",
        Dialect::MySql => "session",
    }
}

#[tokio::test]
async fn a_dry_run_counts_exactly_what_a_prune_deletes_and_nothing_else_goes() {
    let app = TestApp::spawn().await;
    let db = &app.state.db;
    let now = app.clock.now_ms();
    // numbers and their audit rows older than every limit: never pruned
    app.clock.set(ms_to_datetime(now - 800 * DAY_MS));
    for _ in 0..2 {
        let (s, body) = app.reserve(&letter()).await;
        assert_eq!(s, StatusCode::OK, "{body}");
    }
    app.clock.set(ms_to_datetime(now));
    seed(db, now).await;
    let sessions = sessions_table(db);
    let prunable = ["login_attempts", "error_log", sessions, "idempotency_keys"];
    let (kept, before) = (rows_of(db, &NEVER_PRUNED).await, rows_of(db, &prunable).await);
    assert!(kept[1].1 >= 2, "the old numbers are there: {kept:?}");

    let config = RetentionConfig::default();
    let dry = retention::count(db, now, &config).await.unwrap();
    assert!(dry.dry_run);
    assert_eq!(dry.counts, AGED);
    assert_eq!(rows_of(db, &prunable).await, before, "a dry run deletes nothing");
    assert_eq!(rows_of(db, &NEVER_PRUNED).await, kept, "nor audits anything");
    // the limits are settings
    let tighter = RetentionConfig { login_attempts_days: 30, resolved_errors_days: 30, ..Default::default() };
    assert_eq!(
        retention::count(db, now, &tighter).await.unwrap().counts,
        PruneCounts { login_attempts: 4, resolved_errors: 3, expired_sessions: 2, idempotency_keys: 2, ..PruneCounts::default() }
    );

    let done = retention::prune(db, now, &config, "cli").await.unwrap();
    assert!(!done.dry_run);
    assert_eq!(done.counts, AGED);
    let after: Vec<i64> = rows_of(db, &prunable).await.into_iter().map(|(_, n)| n).collect();
    let expected: Vec<i64> = before.iter().zip([3, 2, 2, 2]).map(|((_, n), gone)| n - gone).collect();
    assert_eq!(after, expected);
    assert_eq!(count(db, "SELECT COUNT(*) FROM login_attempts").await, 2, "179 and 1 day old stay");
    assert_eq!(count(db, "SELECT COUNT(*) FROM error_log WHERE resolved_at IS NULL").await, 2, "unresolved errors stay, however old");
    assert_eq!(count(db, &format!("SELECT COUNT(*) FROM {sessions}")).await, before[2].1 - 2, "the live session stays");
    let mut expected_kept = kept.clone();
    expected_kept[0].1 += 1; // the PRUNE row
    assert_eq!(rows_of(db, &NEVER_PRUNED).await, expected_kept);

    // the run's audit row: on the admin chain, by `cli`, with its counts
    let (chain, username, status, new_value, metadata): (String, String, String, String, String) =
        sqlx::query_as("SELECT chain_key, username, status, new_value, metadata FROM audit_log WHERE operation = 'PRUNE'")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!((chain.as_str(), username.as_str(), status.as_str()), ("admin", "cli", "SUCCESS"));
    assert_eq!(
        serde_json::from_str::<Value>(&new_value).unwrap(),
        json!({ "loginAttempts": 3, "resolvedErrors": 2, "expiredSessions": 2, "idempotencyKeys": 2, "deliveredNotifications": 0, "notificationEvents": 0 })
    );
    let metadata: Value = serde_json::from_str(&metadata).unwrap();
    assert_eq!(
        metadata["limits"],
        json!({ "loginAttemptsDays": 180, "resolvedErrorsDays": 365, "idempotencyKeysHours": 24, "notificationsDays": 30 }),
        "{metadata}"
    );
    let verified = audit::verify(db).await.unwrap();
    assert!(verified.ok, "{:?}", verified.problems);

    // a second run finds nothing, and says so on the chain too
    assert_eq!(retention::prune(db, now, &config, "cli").await.unwrap().counts, PruneCounts::default());
    assert_eq!(prune_rows(db).await, 2);
    assert!(audit::verify(db).await.unwrap().ok);
}

#[tokio::test]
async fn a_backlog_larger_than_a_chunk_goes_whole() {
    let app = TestApp::spawn().await;
    let db = &app.state.db;
    let now = app.clock.now_ms();
    let backlog = 2 * retention::store::CHUNK as i64 + 345;
    for first in (0..backlog).step_by(500) {
        let rows = (backlog - first).min(500) as usize;
        let sql = format!("INSERT INTO login_attempts (created_at, username, outcome) VALUES {}", Db::row_placeholders(rows, 3));
        let mut insert = sqlx::query(&sql);
        for i in 0..rows as i64 {
            insert = insert.bind(now - 200 * DAY_MS - first - i).bind("somchai").bind("WRONG_PASSWORD");
        }
        insert.execute(&db.writer).await.unwrap();
    }
    assert_eq!(retention::count(db, now, &RetentionConfig::default()).await.unwrap().counts.login_attempts, backlog as u64);
    let done = retention::prune(db, now, &RetentionConfig::default(), "cli").await.unwrap();
    assert_eq!(done.counts.login_attempts, backlog as u64);
    assert_eq!(count(db, "SELECT COUNT(*) FROM login_attempts").await, 0);
}

#[tokio::test]
async fn instances_sharing_the_database_run_each_days_prune_once() {
    let app = TestApp::spawn().await;
    let now = app.clock.now_ms();
    seed(&app.state.db, now).await;
    // the other instances: connections of their own to the same database
    let mut instances = vec![app.state.db.clone()];
    for _ in 0..3 {
        instances.push(Db::connect(&app.state.db.url).await.unwrap());
    }
    let config = RetentionConfig::default();
    let claims = |at_ms: i64| {
        let config = config.clone();
        let instances = instances.clone();
        async move {
            let runs = instances.iter().enumerate().map(|(i, db)| {
                let config = config.clone();
                async move { retention::run_if_due(db, at_ms, &config, &format!("instance-{i}")).await.unwrap() }
            });
            futures::future::join_all(runs).await.into_iter().flatten().collect::<Vec<_>>()
        }
    };

    let ran = claims(now).await;
    assert_eq!(ran.len(), 1, "{ran:?}");
    assert_eq!(ran[0].counts, AGED);
    assert_eq!(prune_rows(&app.state.db).await, 1);
    // later that day it is not due on any of them
    assert!(claims(now + 23 * 3_600_000).await.is_empty());
    // a day on, one of them runs it again: only the idempotency keys that were 23 and 1 hours old have aged since
    let ran = claims(now + DAY_MS).await;
    assert_eq!(ran.len(), 1, "{ran:?}");
    assert_eq!(ran[0].counts, PruneCounts { idempotency_keys: 2, ..PruneCounts::default() });
    assert_eq!(prune_rows(&app.state.db).await, 2);
    let (next_run_at, claimed_by): (i64, String) =
        sqlx::query_as("SELECT next_run_at, claimed_by FROM job_runs WHERE name = 'prune'").fetch_one(&app.state.db.pool).await.unwrap();
    assert_eq!(next_run_at, now + 2 * DAY_MS);
    assert!(claimed_by.starts_with("instance-"), "{claimed_by}");
    assert_eq!(count(&app.state.db, "SELECT COUNT(*) FROM audit_log WHERE operation = 'PRUNE' AND username = 'system'").await, 2);
    assert!(audit::verify(&app.state.db).await.unwrap().ok);
}

#[tokio::test]
async fn the_server_prunes_in_the_background() {
    let app = TestApp::spawn().await;
    seed(&app.state.db, app.clock.now_ms()).await;
    app.state.spawn_background();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while prune_rows(&app.state.db).await == 0 {
        assert!(std::time::Instant::now() < deadline, "no prune within a minute of the start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (username, new_value): (String, String) =
        sqlx::query_as("SELECT username, new_value FROM audit_log WHERE operation = 'PRUNE'").fetch_one(&app.state.db.pool).await.unwrap();
    assert_eq!(username, "system");
    assert_eq!(
        serde_json::from_str::<Value>(&new_value).unwrap(),
        json!({ "loginAttempts": 3, "resolvedErrors": 2, "expiredSessions": 2, "idempotencyKeys": 2, "deliveredNotifications": 0, "notificationEvents": 0 })
    );
}

/// `docnum prune` with `args` and `env` on the SQLite file `url`: its JSON answer.
fn docnum_prune(url: &str, args: &[&str], env: &[(&str, &str)]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_docnum"))
        .arg("prune")
        .args(args)
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "warn")
        .envs(env.iter().copied())
        .output()
        .expect("run docnum");
    assert!(out.status.success(), "docnum prune {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[tokio::test]
async fn docnum_prune_prints_the_counts_and_a_dry_run_deletes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("prune.db").display());
    let db = Db::connect(&url).await.unwrap();
    db.migrate().await.unwrap();
    // the sessions' table, as a server's first start creates it
    SqliteStore::new(sqlx::SqlitePool::connect(&db.url).await.unwrap()).migrate().await.unwrap();
    seed(&db, chrono::Utc::now().timestamp_millis()).await;
    let prunable = ["login_attempts", "error_log", "tower_sessions", "idempotency_keys"];
    let before = rows_of(&db, &prunable).await;

    let dry = docnum_prune(&url, &["--dry-run"], &[]);
    assert_eq!(
        (&dry["dryRun"], &dry["loginAttempts"], &dry["resolvedErrors"], &dry["expiredSessions"], &dry["idempotencyKeys"]),
        (&json!(true), &json!(3), &json!(2), &json!(2), &json!(2)),
        "{dry}"
    );
    assert!(dry["before"]["loginAttempts"].is_string(), "{dry}");
    // the limits as flags and as environment variables
    let tighter = docnum_prune(&url, &["--dry-run", "--login-attempts-days", "30"], &[("RETENTION_RESOLVED_ERRORS_DAYS", "30")]);
    assert_eq!((&tighter["loginAttempts"], &tighter["resolvedErrors"]), (&json!(4), &json!(3)), "{tighter}");
    assert_eq!(rows_of(&db, &prunable).await, before, "a dry run deletes nothing");
    assert_eq!(prune_rows(&db).await, 0, "and audits nothing");

    let done = docnum_prune(&url, &[], &[]);
    assert_eq!(
        (&done["dryRun"], &done["loginAttempts"], &done["resolvedErrors"], &done["expiredSessions"], &done["idempotencyKeys"]),
        (&json!(false), &json!(3), &json!(2), &json!(2), &json!(2)),
        "{done}"
    );
    assert_eq!(rows_of(&db, &prunable).await.into_iter().map(|(_, n)| n).collect::<Vec<_>>(), vec![2, 3, 1, 2]);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM audit_log WHERE operation = 'PRUNE' AND username = 'cli'").await, 1);
    assert!(audit::verify(&db).await.unwrap().ok);
}
