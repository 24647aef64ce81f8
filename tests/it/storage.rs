//! The SQLite file: commits append to the WAL, and a background checkpointer — not the commits — copies the WAL
//! into the database file (`Db::checkpoint_in_background`).

use std::str::FromStr;
use std::time::Duration;

use reqwest::StatusCode;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::ConnectOptions;

use crate::common::{letter, use_mysql, TestApp};

/// Rows of `document_numbers` in the database file itself, the WAL left unread (an immutable connection); 0
/// while the file does not even have the table (the migrations are still in the WAL).
async fn numbers_in_the_file(path: &str) -> i64 {
    let mut conn = SqliteConnectOptions::from_str(&format!("sqlite://{path}")).unwrap().immutable(true).read_only(true).connect().await.unwrap();
    sqlx::query_scalar("SELECT COUNT(*) FROM document_numbers").fetch_one(&mut conn).await.unwrap_or(0)
}

#[tokio::test]
async fn the_background_checkpointer_copies_committed_numbers_into_the_database_file() {
    if use_mysql() {
        return; // MariaDB: no WAL of ours to checkpoint
    }
    let app = TestApp::spawn().await;
    app.state.spawn_background();
    for _ in 0..20 {
        let (status, body) = app.reserve(&letter()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let path = app.state.db.url.trim_start_matches("sqlite://").split('?').next().unwrap().to_string();
    // a commit checkpoints by itself only past 10,000 WAL pages: 20 numbers are far below
    let mut in_file = 0;
    for _ in 0..200 {
        in_file = numbers_in_the_file(&path).await;
        if in_file == 20 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(in_file, 20, "the 20 numbers reached the database file");
}

#[tokio::test]
async fn the_audit_search_by_number_prefix_uses_the_number_index() {
    if use_mysql() {
        return; // MariaDB's binary collation serves LIKE 'prefix%' from its index as it is
    }
    let app = TestApp::spawn().await;
    // the search's own filter (`audit::audit_filter`): a prefix, LIKE's wildcards escaped with '!'
    let rows: Vec<(i64, i64, i64, String)> =
        sqlx::query_as("EXPLAIN QUERY PLAN SELECT id FROM audit_log WHERE document_number LIKE ? ESCAPE '!' ORDER BY id DESC LIMIT 50")
            .bind("คคง.-สคฉ.3-00%")
            .fetch_all(&app.state.db.pool)
            .await
            .unwrap();
    let detail: Vec<&str> = rows.iter().map(|r| r.3.as_str()).collect();
    assert!(
        detail
            .iter()
            .any(|d| d.starts_with("SEARCH audit_log USING") && d.contains("INDEX idx_audit_number (document_number>? AND document_number<?)")),
        "{detail:?}"
    );
    // and the indexed search finds the numbers by their prefix
    for _ in 0..3 {
        let (status, body) = app.reserve(&letter()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let found: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE document_number LIKE ? ESCAPE '!'")
        .bind("คคง.-สคฉ.3-000%")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(found, 3);
}
