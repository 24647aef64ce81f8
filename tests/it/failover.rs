//! Database failover on MariaDB's own replication (docs/operations/README.md#failover): a primary and a semi-synchronous replica
//! configured by `deploy/mariadb/replication.cnf`, promoted and rejoined by the operator's scripts beside it. The
//! service is given both servers (`DATABASE_SERVERS`) and writes to the writable one; it never writes to a read-only
//! server, and it follows a promotion by itself. (Under load from three instances, with kill -9: scripts/cluster.sh.)

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use crate::support::{DocnumServer, MariaDbServer};
use docnum::server::db::Db;

async fn reserve(client: &reqwest::Client, base: &str, token: &str) -> (StatusCode, Value) {
    let r = client.post(format!("{base}/api/v1/document-numbering/reserve")).bearer_auth(token).json(&crate::common::letter()).send().await.unwrap();
    (r.status(), r.json().await.unwrap())
}

fn numbers_on(server: &MariaDbServer) -> Vec<String> {
    let listed = server.sql("SELECT number FROM docnum.document_numbers ORDER BY sequence");
    listed.lines().map(str::to_string).collect()
}

/// A gauge or counter of the instance's `/metrics` (no labels).
async fn metric(client: &reqwest::Client, base: &str, name: &str) -> f64 {
    let text = client.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} not exported"))
}

/// Waits (up to 10 s) until `metric` has `value`.
async fn metric_becomes(client: &reqwest::Client, base: &str, name: &str, value: f64) {
    for _ in 0..100 {
        if metric(client, base, name).await == value {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} did not become {value}: {}", metric(client, base, name).await);
}

#[tokio::test]
async fn the_service_follows_a_promoted_replica_and_never_writes_to_a_read_only_server() {
    if !MariaDbServer::available() {
        eprintln!("skipped: no mariadbd on this machine");
        return;
    }
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, mut b) = tokio::join!(MariaDbServer::create(dir_a.path()), MariaDbServer::create(dir_b.path()));
    // each in a tmpdir of its own: a starting server deletes the `#sql*` files of its tmpdir, so in a shared /tmp
    // one server's start broke the other's bootstrap ("Unknown table 'mysql.tmp_proxies_priv'")
    for (server, dir) in [(&a, &dir_a), (&b, &dir_b)] {
        assert_eq!(server.sql("SELECT @@tmpdir"), dir.path().join("tmp").display().to_string());
    }
    // a: the primary, as an operator makes one; the service's user has no global privilege, as deploy/README.md says
    a.sql("SET GLOBAL rpl_semi_sync_master_enabled = ON; SET GLOBAL read_only = OFF");
    a.sql(
        "CREATE DATABASE docnum CHARACTER SET utf8mb4;
         CREATE USER 'docnum'@'127.0.0.1' IDENTIFIED BY 'docnum-pass'; GRANT ALL ON docnum.* TO 'docnum'@'127.0.0.1';
         CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY 'repl-pass'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'",
    );
    let rejoin = |replica: &MariaDbServer, primary: &MariaDbServer| {
        let mut args =
            vec!["127.0.0.1".into(), replica.port.to_string(), "127.0.0.1".into(), primary.port.to_string(), "repl".into(), "repl-pass".into()];
        args.push("-uroot".into());
        MariaDbServer::operator("rejoin.sh", &args);
    };
    rejoin(&b, &a);

    // the replica named first: the service picks the writable server, not the first of the list
    let url = format!("mysql://docnum:docnum-pass@127.0.0.1:{}/docnum", b.port);
    let servers = format!("{},{}", b.address(), a.address());
    let env = [("DATABASE_SERVERS", servers.clone()), ("WITNESS_FILE", "off".to_string())];
    let client = reqwest::Client::builder().timeout(crate::common::REQUEST_TIMEOUT).build().unwrap();
    let server = DocnumServer::start(&url, &env);
    server.wait_healthy(&client).await;
    let db = Db::connect_to(&url, &[b.address(), a.address()]).await.unwrap();
    assert_eq!(db.primary.current(), Some(a.address().as_str()));
    let admin = docnum::server::auth::system::user_id(&db, "admin").await.unwrap().unwrap();
    let (_, token) = docnum::server::auth::system::create_token(&db, "failover", &[], admin, 0).await.unwrap();
    db.pool.close().await;
    db.counters.close().await;

    let mut received = Vec::new();
    for _ in 0..3 {
        let (s, r) = reserve(&client, &server.base, &token).await;
        assert_eq!(s, StatusCode::OK, "{r}");
        received.push(r["documentNumber"].as_str().unwrap().to_string());
    }
    assert_eq!(numbers_on(&a), received, "written to the primary");
    assert_eq!(metric(&client, &server.base, "docnum_database_writable").await, 1.0);

    // a planned switchover, step 1: the primary made read-only. The service writes nothing there: the database error
    // of docs/rules/api.md#errors after its retries (500 with a reference, in Thai), no row
    a.sql("SET GLOBAL read_only = ON");
    let (s, e) = reserve(&client, &server.base, &token).await;
    crate::common::assert_error(s, &e, 500, "DB_ERROR");
    assert!(e["ref"].as_str().is_some_and(|r| r.starts_with("ERR-")), "{e}");
    metric_becomes(&client, &server.base, "docnum_database_writable", 0.0).await;
    let (s, e) = reserve(&client, &server.base, &token).await;
    crate::common::assert_error(s, &e, 500, "DB_ERROR");
    assert_eq!(numbers_on(&a), received, "nothing written to the read-only server");

    // step 2: the replica promoted by the operator's script; the service follows it by itself
    MariaDbServer::operator("promote.sh", &["127.0.0.1".into(), b.port.to_string(), "-uroot".into()]);
    metric_becomes(&client, &server.base, "docnum_database_writable", 1.0).await;
    let (s, r) = reserve(&client, &server.base, &token).await;
    assert_eq!((s, &r["sequence"]), (StatusCode::OK, &serde_json::json!(4)), "{r}");
    received.push(r["documentNumber"].as_str().unwrap().to_string());
    assert_eq!(numbers_on(&b), received, "the new primary has every number");
    assert_eq!(numbers_on(&a), received[..3], "the old primary took no write");
    assert_eq!(metric(&client, &server.base, "docnum_database_primary_switches_total").await, 1.0);

    // the old primary rejoins as the new one's replica and catches up
    rejoin(&a, &b);
    let head = b.sql("SELECT @@gtid_binlog_pos");
    assert_eq!(a.sql(&format!("SELECT MASTER_GTID_WAIT('{head}', 60)")), "0");
    assert_eq!(numbers_on(&a), received);

    // and an unplanned failover back: the primary killed, the rejoined server promoted
    b.kill();
    MariaDbServer::operator("promote.sh", &["127.0.0.1".into(), a.port.to_string(), "-uroot".into()]);
    let mut answered = None;
    for _ in 0..100 {
        let (s, r) = reserve(&client, &server.base, &token).await;
        if s == StatusCode::OK {
            answered = Some(r);
            break;
        }
        crate::common::assert_error(s, &r, 500, "DB_ERROR");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let r = answered.expect("a number from the promoted server within 10 s");
    assert_eq!(r["sequence"], 5, "{r}");
    received.push(r["documentNumber"].as_str().unwrap().to_string());
    assert_eq!(numbers_on(&a), received, "every number once, none lost");
    assert_eq!(metric(&client, &server.base, "docnum_database_primary_switches_total").await, 2.0);
    // the killed primary comes back read-only (its crash recovery as a replica may drop a binlog tail: seen here, the
    // last number it committed), rejoins, and gets everything from the new primary
    b.start(&["--init-rpl-role=SLAVE"]).await;
    assert_eq!(b.sql("SELECT @@global.read_only"), "1");
    rejoin(&b, &a);
    let head = a.sql("SELECT @@gtid_binlog_pos");
    assert_eq!(b.sql(&format!("SELECT MASTER_GTID_WAIT('{head}', 60)")), "0");
    assert_eq!(numbers_on(&b), received);
    let (s, r) = reserve(&client, &server.base, &token).await;
    assert_eq!((s, &r["sequence"]), (StatusCode::OK, &serde_json::json!(6)), "{r}");
}
