//! The restore drill (docs/rules/numbering.md#what-is-never-done-twice): a backup taken while the service serves, numbers issued after it, the
//! database put back from the backup. The counter refuses to issue (503 `COUNTER_BEHIND_WITNESS`, an error-log row,
//! the metric) until a super admin resumes it past the witnessed head; then it goes on after the last number issued
//! before the restore — none issued twice — and `docnum check` finds the passed-over range explained.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::str::FromStr;

use reqwest::StatusCode;
use serde_json::{json, Value};
use sqlx::Row;

use crate::common::{eventually, use_mysql, MySqlTestDb};
use crate::support::DocnumServer;
use docnum::server::db::Db;

fn docnum(url: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_docnum")).args(args).env("DATABASE_URL", url).env("RUST_LOG", "warn").output().expect("run docnum")
}

/// The database of the drill, its backup and its restore, done the way deploy/README.md tells an operator.
enum Database {
    /// `docnum backup` while serving; the file copied back with the server stopped. The witness is beside the file.
    Sqlite { file: PathBuf },
    /// `mariadb-dump --single-transaction` while serving; the database dropped, created again and the dump loaded with
    /// the server stopped. The witness is `WITNESS_FILE` (one instance).
    MariaDb { db: MySqlTestDb, witness: PathBuf },
}

impl Database {
    async fn new(dir: &Path) -> Database {
        if use_mysql() {
            Database::MariaDb { db: MySqlTestDb::create().await, witness: dir.join("mariadb.witness") }
        } else {
            Database::Sqlite { file: dir.join("restored.db") }
        }
    }

    fn url(&self) -> String {
        match self {
            Database::Sqlite { file } => format!("sqlite://{}", file.display()),
            Database::MariaDb { db, .. } => db.url.clone(),
        }
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        match self {
            Database::Sqlite { .. } => Vec::new(),
            Database::MariaDb { witness, .. } => vec![("WITNESS_FILE", witness.display().to_string())],
        }
    }

    /// The client options of the `mariadb` tools for this database.
    fn cli_args(db: &MySqlTestDb) -> Vec<String> {
        let o = sqlx::mysql::MySqlConnectOptions::from_str(&db.url).unwrap();
        vec![format!("--host={}", o.get_host()), format!("--port={}", o.get_port()), format!("--user={}", o.get_username())]
    }

    fn backup(&self, to: &Path) {
        match self {
            Database::Sqlite { .. } => {
                let out = docnum(&self.url(), &["backup", to.to_str().unwrap()]);
                assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                let again = docnum(&self.url(), &["backup", to.to_str().unwrap()]);
                assert!(!again.status.success(), "a backup never overwrites a file");
            }
            Database::MariaDb { db, .. } => {
                let out = Command::new("mariadb-dump")
                    .args(Self::cli_args(db))
                    .args(["--single-transaction", "--routines", "--triggers", &db.name])
                    .stdout(std::fs::File::create(to).unwrap())
                    .output()
                    .expect("run mariadb-dump");
                assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            }
        }
    }

    fn restore(&self, from: &Path) {
        match self {
            Database::Sqlite { file } => {
                for suffix in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
                }
                std::fs::copy(from, file).unwrap();
            }
            Database::MariaDb { db, .. } => {
                let sql = format!("DROP DATABASE `{0}`; CREATE DATABASE `{0}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", db.name);
                let out = Command::new("mariadb").args(Self::cli_args(db)).args(["-e", &sql]).output().expect("run mariadb");
                assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                let out = Command::new("mariadb")
                    .args(Self::cli_args(db))
                    .arg(&db.name)
                    .stdin(Stdio::from(std::fs::File::open(from).unwrap()))
                    .output()
                    .expect("run mariadb");
                assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            }
        }
    }
}

async fn reserve(client: &reqwest::Client, base: &str, token: &str) -> (StatusCode, Value) {
    let body = crate::common::letter();
    let r = client.post(format!("{base}/api/v1/document-numbering/reserve")).bearer_auth(token).json(&body).send().await.unwrap();
    (r.status(), r.json().await.unwrap())
}

/// On SQLite; with `DOCNUM_TEST_DB=mysql` on MariaDB.
#[tokio::test]
async fn a_restored_database_issues_nothing_twice() {
    let dir = tempfile::tempdir().unwrap();
    let database = Database::new(dir.path()).await;
    let (url, env) = (database.url(), database.env());
    let client = reqwest::Client::builder().timeout(crate::common::REQUEST_TIMEOUT).cookie_store(true).build().unwrap();
    let mut server = DocnumServer::start(&url, &env);
    server.wait_healthy(&client).await;
    let db = Db::connect(&url).await.unwrap();
    let admin = docnum::server::auth::system::user_id(&db, "admin").await.unwrap().unwrap();
    let (_, token) = docnum::server::auth::system::create_token(&db, "drill", &[], admin, 0).await.unwrap();

    let mut issued = Vec::new();
    for _ in 0..3 {
        let (s, r) = reserve(&client, &server.base, &token).await;
        assert_eq!(s, StatusCode::OK, "{r}");
        issued.push(r["documentNumber"].as_str().unwrap().to_string());
    }
    // the backup, taken while the server serves
    let backup = dir.path().join("backup");
    database.backup(&backup);
    for _ in 0..5 {
        let (_, r) = reserve(&client, &server.base, &token).await;
        issued.push(r["documentNumber"].as_str().unwrap().to_string());
    }
    assert_eq!(issued.len(), 8);

    // the disaster: the database put back from the backup (its witness stays where it was)
    server.kill();
    db.pool.close().await;
    db.writer.close().await;
    db.counters.close().await;
    database.restore(&backup);
    let mut server = DocnumServer::start(&url, &env);
    server.wait_healthy(&client).await;
    let db = Db::connect(&url).await.unwrap();

    let (s, e) = reserve(&client, &server.base, &token).await;
    crate::common::assert_error(s, &e, 503, "COUNTER_BEHIND_WITNESS");
    let (s, e) = reserve(&client, &server.base, &token).await;
    assert_eq!((s, &e["code"]), (StatusCode::SERVICE_UNAVAILABLE, &json!("COUNTER_BEHIND_WITNESS")), "still refused: {e}");
    let on_record: i64 = sqlx::query("SELECT COUNT(*) FROM document_numbers").fetch_one(&db.pool).await.unwrap().get(0);
    assert_eq!(on_record, 3, "nothing issued from the restored counter");
    // the error log is written by a task of its own after the answer: its row comes soon, not with the answer
    eventually("an error-log row", std::time::Duration::from_secs(10), || async {
        let logged: i64 =
            sqlx::query("SELECT COUNT(*) FROM error_log WHERE error_type = 'COUNTER_BEHIND_WITNESS'").fetch_one(&db.pool).await.unwrap().get(0);
        logged >= 1
    })
    .await;
    let metrics = client.get(format!("{}/metrics", server.base)).send().await.unwrap().text().await.unwrap();
    let refusals: f64 =
        metrics.lines().find_map(|l| l.strip_prefix("docnum_counter_behind_witness_total ")).and_then(|v| v.trim().parse().ok()).expect("the metric");
    assert!(refusals >= 2.0, "{refusals}");

    // a super admin resumes it (an API token, or a staff member, may not)
    let counter_id: i64 = sqlx::query("SELECT id FROM counters").fetch_one(&db.pool).await.unwrap().get(0);
    let resume = format!("{}/api/v1/document-numbering/counters/{counter_id}/resume-past-witness", server.base);
    let body = json!({ "reason": "restored from the backup of this morning" });
    let r = client.post(&resume).bearer_auth(&token).json(&body).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let login = json!({ "username": "admin", "password": "test-admin-password" });
    let r = client.post(format!("{}/api/v1/auth/login", server.base)).json(&login).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = client.post(&resume).header("Origin", &server.base).json(&body).send().await.unwrap();
    let status = r.status();
    let resumed: Value = r.json().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{resumed}");
    assert_eq!((&resumed["previousLastNumber"], &resumed["lastNumber"], &resumed["skipped"]), (&json!(3), &json!(8), &json!(5)));
    let r = client.post(&resume).header("Origin", &server.base).json(&body).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::CONFLICT, "a counter no longer behind is not resumed again");

    // it goes on after the last number issued before the restore: none of the five is issued again
    let (s, r) = reserve(&client, &server.base, &token).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["sequence"], 9);
    assert!(!issued.contains(&r["documentNumber"].as_str().unwrap().to_string()));
    let state: String =
        sqlx::query("SELECT state FROM workflow_instances WHERE workflow_code = 'WITNESS_RESUME'").fetch_one(&db.pool).await.unwrap().get(0);
    assert_eq!(state, "RESUMED");

    // and the whole database checks out: the passed-over range is explained
    let out = docnum(&url, &["check"]);
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    server.terminate().await;
    // a restart keeps the resumed head: the counter issues on
    let server = DocnumServer::start(&url, &env);
    server.wait_healthy(&client).await;
    let (s, r) = reserve(&client, &server.base, &token).await;
    assert_eq!((s, &r["sequence"]), (StatusCode::OK, &json!(10)), "{r}");
}

/// Several instances share the witness in the lock's Redis servers (no file here): after a restore, an instance that
/// never issued on the counter — it has nothing of its own to compare with — still finds the database behind.
#[tokio::test]
async fn an_instance_that_never_issued_on_the_counter_finds_its_restored_database_behind() {
    let dir = tempfile::tempdir().unwrap();
    let database = Database::new(dir.path()).await;
    let redis = crate::support::RedisServer::start().await;
    let url = database.url();
    let env = [("REDIS_URLS", redis.url()), ("WITNESS_FILE", "off".to_string())];
    let client = reqwest::Client::builder().timeout(crate::common::REQUEST_TIMEOUT).cookie_store(true).build().unwrap();
    let mut a = DocnumServer::start(&url, &env);
    a.wait_healthy(&client).await;
    let db = Db::connect(&url).await.unwrap();
    let admin = docnum::server::auth::system::user_id(&db, "admin").await.unwrap().unwrap();
    let (_, token) = docnum::server::auth::system::create_token(&db, "drill", &[], admin, 0).await.unwrap();
    db.pool.close().await;
    db.writer.close().await;
    db.counters.close().await;
    for _ in 0..3 {
        assert_eq!(reserve(&client, &a.base, &token).await.0, StatusCode::OK);
    }
    let backup = dir.path().join("backup");
    database.backup(&backup);
    let mut after_backup = Vec::new();
    for _ in 0..5 {
        let (_, r) = reserve(&client, &a.base, &token).await;
        after_backup.push(r["documentNumber"].as_str().unwrap().to_string());
    }
    a.kill();
    database.restore(&backup);

    // another instance, which never issued a number
    let b = DocnumServer::start(&url, &env);
    b.wait_healthy(&client).await;
    let (s, e) = reserve(&client, &b.base, &token).await;
    crate::common::assert_error(s, &e, 503, "COUNTER_BEHIND_WITNESS");
    let login = json!({ "username": "admin", "password": "test-admin-password" });
    assert_eq!(client.post(format!("{}/api/v1/auth/login", b.base)).json(&login).send().await.unwrap().status(), StatusCode::OK);
    let db = Db::connect(&url).await.unwrap();
    let counter_id: i64 = sqlx::query("SELECT id FROM counters").fetch_one(&db.pool).await.unwrap().get(0);
    let resume = format!("{}/api/v1/document-numbering/counters/{counter_id}/resume-past-witness", b.base);
    let r = client.post(&resume).header("Origin", &b.base).json(&json!({ "reason": "restored from the backup" })).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK, "{}", r.text().await.unwrap());
    let (s, r) = reserve(&client, &b.base, &token).await;
    assert_eq!((s, &r["sequence"]), (StatusCode::OK, &json!(9)), "{r}");
    assert!(!after_backup.contains(&r["documentNumber"].as_str().unwrap().to_string()));
}
