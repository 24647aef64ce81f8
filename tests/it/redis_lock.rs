//! The distributed lock against real Redis servers: Redlock when Redis answers, the database-lock fallback
//! (recorded as DB_LOCK in the audit rows) when it does not, back to Redis when it returns, a Redlock quorum
//! that survives one dead server, NB003 when another holder keeps the lock past the bounded wait, and
//! rate limits shared by instances.

use crate::common::*;
use crate::support::*;
use docnum::contract::UserId;
use reqwest::StatusCode;
use serde_json::json;

async fn fallbacks(app: &TestApp) -> (i64, i64) {
    (
        app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'RESERVE' AND fallback_used = 'NONE'").await,
        app.count("SELECT COUNT(*) FROM audit_log WHERE operation = 'RESERVE' AND fallback_used = 'DB_LOCK'").await,
    )
}

async fn reserve_ok(app: &TestApp, n: usize) {
    for _ in 0..n {
        let (s, b) = app.reserve(&letter()).await;
        assert_eq!(s, StatusCode::OK, "{b}");
    }
}

#[tokio::test]
async fn numbers_keep_coming_when_redis_dies_and_redis_is_used_again_when_it_returns() {
    let mut redis = RedisServer::start().await;
    let port = redis.port;
    let app = TestApp::spawn_with(Options { redis_urls: vec![redis.url()], ..Options::default() }).await;

    reserve_ok(&app, 5).await;
    assert_eq!(fallbacks(&app).await, (5, 0), "Redlock used while Redis answers");

    redis.kill();
    // a lock taken before the kill may still be kept for a few milliseconds (it stays valid until its TTL);
    // the requests below come after the worker has let it go
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    reserve_ok(&app, 5).await;
    assert_eq!(fallbacks(&app).await, (5, 5), "database lock while Redis is down");
    let health: serde_json::Value = app.client.get(app.url("/health")).send().await.unwrap().json().await.unwrap();
    assert_eq!(health["redis"], "down (database-lock fallback)");
    assert_eq!(health["status"], "ok");

    let _redis = RedisServer::start_on(port).await;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await; // the once-a-second probe
    reserve_ok(&app, 3).await;
    let (normal, fallback) = fallbacks(&app).await;
    assert_eq!(fallback, 5);
    assert_eq!(normal, 8, "back on Redis by itself");

    let (_, last) = app.reserve(&letter()).await;
    assert_eq!(last["sequence"], 14, "one contiguous run across the outage");
    assert!(docnum::server::audit::unexplained_gaps(&app.state.db).await.unwrap().is_empty());
    assert!(docnum::server::audit::verify(&app.state.db).await.unwrap().ok);
}

#[tokio::test]
async fn a_quorum_of_three_survives_one_dead_server() {
    let mut a = RedisServer::start().await;
    let b = RedisServer::start().await;
    let c = RedisServer::start().await;
    let app = TestApp::spawn_with(Options { redis_urls: vec![a.url(), b.url(), c.url()], ..Options::default() }).await;
    reserve_ok(&app, 3).await;
    a.kill();
    reserve_ok(&app, 3).await;
    assert_eq!(fallbacks(&app).await, (6, 0), "two of three is still a quorum");
}

#[tokio::test]
async fn a_lock_held_elsewhere_past_the_wait_answers_503_nb003_with_retry_after() {
    let redis = RedisServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite://{}", dir.path().join("locked.db").display());
    let server =
        DocnumServer::start(&db_url, &[("REDIS_URLS", redis.url()), ("LOCK_MAX_WAIT_MS", "400".into()), ("LOCK_RETRY_BASE_MS", "20".into())]);
    let client = reqwest::Client::new();
    server.wait_healthy(&client).await;
    let db = docnum::server::db::Db::connect(&db_url).await.unwrap();
    let (_, token) = docnum::server::auth::system::create_token(&db, "t", &[], UserId(1), 0).await.unwrap();

    // another instance holds the LETTER คคง.→สคฉ.3 counter of LCBP3 (ids from the demo data order)
    let snapshot = docnum::server::reference::load_snapshot(&db).await.unwrap();
    let p = snapshot.project(None, Some("LCBP3")).unwrap().id;
    let t = snapshot.correspondence_type(None, Some("LETTER")).unwrap().id;
    let o = snapshot.org(None, Some("คคง."), docnum::server::reference::Part::Originator).unwrap().id;
    let r = snapshot.org(None, Some("สคฉ.3"), docnum::server::reference::Part::Recipient).unwrap().id;
    let name = format!("docnum:{p}:{t}:{o}:{r}:0:0:0:YEAR_2025");
    let mut con = redis.connection().await;
    let _: () = redis::cmd("SET").arg(&name).arg("someone-else").arg("PX").arg(60_000).query_async(&mut con).await.unwrap();

    let resp = client.post(format!("{}/api/v1/document-numbering/reserve", server.base)).bearer_auth(&token).json(&letter()).send().await.unwrap();
    let retry_after = resp.headers().get("retry-after").map(|v| v.to_str().unwrap().to_string());
    let status = resp.status();
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_error(status, &body, 503, "NB003");
    assert_eq!(body["message"], "ระบบกำลังยุ่ง กรุณาลองใหม่ภายหลัง");
    assert_eq!(retry_after.as_deref(), Some("1"));
    use sqlx::Row;
    let issued: i64 = sqlx::query("SELECT COUNT(*) FROM document_numbers").fetch_one(&db.pool).await.unwrap().get(0);
    assert_eq!(issued, 0, "contention did not fall back to the database lock");

    // when the holder lets go, numbering resumes
    let _: () = redis::cmd("DEL").arg(&name).query_async(&mut con).await.unwrap();
    let resp =
        client.post(format!("{}/api/v1/document-numbering/reserve", server.base)).bearer_auth(&token).json(&json!(letter())).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
}

#[tokio::test]
async fn rate_limits_are_shared_by_instances_through_redis() {
    let redis = RedisServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite://{}", dir.path().join("limits.db").display());
    let env = [("REDIS_URLS", redis.url()), ("RATE_LIMIT_TOKEN_PER_MIN", "5".to_string())];
    let client = reqwest::Client::new();
    let a = DocnumServer::start(&db_url, &env);
    a.wait_healthy(&client).await;
    let b = DocnumServer::start(&db_url, &env);
    b.wait_healthy(&client).await;
    let db = docnum::server::db::Db::connect(&db_url).await.unwrap();
    let (_, token) = docnum::server::auth::system::create_token(&db, "limited", &[], UserId(1), 0).await.unwrap();
    // the shared counts live in one-minute windows: start well inside one
    let into_minute = chrono::Utc::now().timestamp_millis() % 60_000;
    if into_minute > 55_000 {
        tokio::time::sleep(std::time::Duration::from_millis((60_000 - into_minute + 200) as u64)).await;
    }
    let mut statuses = Vec::new();
    for i in 0..6 {
        let base = if i % 2 == 0 { &a.base } else { &b.base };
        let r = client.post(format!("{base}/api/v1/document-numbering/reserve")).bearer_auth(&token).json(&letter()).send().await.unwrap();
        statuses.push(r.status().as_u16());
    }
    assert_eq!(statuses, [200, 200, 200, 200, 200, 429], "five per minute for the token across both instances");

    // the counts go through one kept connection per instance, not a new connection per request
    let mut con = redis::Client::open(redis.url()).unwrap().get_multiplexed_async_connection().await.unwrap();
    // Each instance sends its live events a moment after its first number (`events::COALESCE`) on a connection made
    // then: counted during the ten requests, that one made this test fail on a loaded machine.
    publishers_connected(&con, 2).await;
    let connections =
        |info: String| -> u64 { info.lines().find_map(|l| l.strip_prefix("total_connections_received:")).unwrap().trim().parse().unwrap() };
    let before = connections(redis::cmd("INFO").arg("stats").query_async(&mut con).await.unwrap());
    for _ in 0..10 {
        let r = client.post(format!("{}/api/v1/document-numbering/reserve", a.base)).bearer_auth(&token).json(&letter()).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    }
    let after = connections(redis::cmd("INFO").arg("stats").query_async(&mut con).await.unwrap());
    assert_eq!(after - before, 0, "no new Redis connection for ten more requests");
}

#[tokio::test]
async fn a_stopped_instance_leaves_no_counter_lock_behind() {
    let redis = RedisServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite://{}", dir.path().join("stop.db").display());
    let client = reqwest::Client::new();
    let db = docnum::server::db::Db::connect(&db_url).await.unwrap();
    let mut con = redis::Client::open(redis.url()).unwrap().get_multiplexed_async_connection().await.unwrap();
    for round in 0..3 {
        let mut server = DocnumServer::start(&db_url, &[("REDIS_URLS", redis.url())]);
        server.wait_healthy(&client).await;
        let (_, token) = docnum::server::auth::system::create_token(&db, &format!("stop-{round}"), &[], UserId(1), 0).await.unwrap();
        let r = client.post(format!("{}/api/v1/document-numbering/reserve", server.base)).bearer_auth(&token).json(&letter()).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        // at once, while the worker still keeps the counter's lock for a next request
        let status = server.terminate().await;
        assert!(status.success(), "a clean exit on SIGTERM: {status}");
        let keys: Vec<String> = redis::cmd("KEYS").arg("docnum:*").query_async(&mut con).await.unwrap();
        // the witness's heads stay, as they must (docs/rules/numbering.md#what-is-never-done-twice); the locks and their wait markers go
        let locks: Vec<&String> = keys.iter().filter(|k| !k.ends_with(":wanted") && !k.starts_with("docnum:witness:")).collect();
        assert!(locks.is_empty(), "round {round}: locks left in Redis after the stop: {locks:?}");
    }
}

/// Waits (at most 10 s) until `n` connections of a Redis server have sent PUBLISH (one per instance with live events).
async fn publishers_connected(con: &redis::aio::MultiplexedConnection, n: usize) {
    eventually(&format!("{n} instances publishing their live events to Redis"), std::time::Duration::from_secs(10), || async {
        let clients: String = redis::cmd("CLIENT").arg("LIST").query_async(&mut con.clone()).await.unwrap();
        clients.lines().filter(|l| l.split(' ').any(|f| f == "cmd=publish")).count() >= n
    })
    .await;
}

/// The counter locks (not the wait markers) in a Redis server.
async fn lock_keys(con: &mut redis::aio::MultiplexedConnection) -> Vec<String> {
    let keys: Vec<String> = redis::cmd("KEYS").arg("docnum:*").query_async(con).await.unwrap();
    keys.into_iter().filter(|k| !k.ends_with(":wanted") && !k.starts_with("docnum:witness:")).collect()
}

/// docs/operations/README.md#deployment-modes: a stop past its deadline lets go of every Redis lock it holds, a stuck batch's included — or the other
/// instances wait out its TTL for that counter. Here the batch waits for SQLite's write lock (another connection
/// holds it) while it holds its counter's Redis lock; SIGTERM with a grace time of 2 s ends the process within
/// 4 s, and it leaves no lock behind.
#[tokio::test]
async fn a_stop_past_its_deadline_lets_go_of_a_stuck_batchs_lock() {
    use sqlx::Connection;
    let redis = RedisServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite://{}", dir.path().join("stuck.db").display());
    let client = reqwest::Client::builder().timeout(std::time::Duration::from_secs(30)).build().unwrap();
    let grace = std::time::Duration::from_secs(2);
    let mut server = DocnumServer::start(&db_url, &[("REDIS_URLS", redis.url()), ("SHUTDOWN_GRACE_SECS", grace.as_secs().to_string())]);
    server.wait_healthy(&client).await;
    let db = docnum::server::db::Db::connect(&db_url).await.unwrap();
    let (_, token) = docnum::server::auth::system::create_token(&db, "stuck", &[], UserId(1), 0).await.unwrap();
    let mut con = redis.connection().await;

    let mut writer = sqlx::SqliteConnection::connect(&db_url).await.unwrap();
    sqlx::query("BEGIN IMMEDIATE").execute(&mut writer).await.unwrap();
    let reserve = tokio::spawn(client.post(format!("{}/api/v1/document-numbering/reserve", server.base)).bearer_auth(&token).json(&letter()).send());
    let mut held = Vec::new();
    for _ in 0..100 {
        held = lock_keys(&mut con).await;
        if !held.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(held.len(), 1, "the batch waits for the database holding its counter's lock: {held:?}");

    let (status, took) = server.terminate_within(grace + std::time::Duration::from_secs(10)).await;
    assert_eq!(status.code(), Some(1), "a stop past its deadline exits non-zero");
    assert!(took <= grace + std::time::Duration::from_secs(2), "ended within the grace time plus 2 s ({took:?})");
    let left = lock_keys(&mut con).await;
    assert!(left.is_empty(), "locks left in Redis by the stop, to wait out their TTL: {left:?}");
    reserve.abort();
    sqlx::query("ROLLBACK").execute(&mut writer).await.unwrap();
    use sqlx::Row;
    let issued: i64 = sqlx::query("SELECT COUNT(*) FROM document_numbers").fetch_one(&db.pool).await.unwrap().get(0);
    assert_eq!(issued, 0, "the stuck batch did not commit");
}

/// docs/rules/numbering.md#audit-and-retention: a Redis outage is one REDIS_ERROR row, however many requests fall
/// back meanwhile; its end resolves it.
#[tokio::test]
async fn stopping_redis_under_load_writes_exactly_one_redis_error_row() {
    let mut redis = RedisServer::start().await;
    let port = redis.port;
    let app = std::sync::Arc::new(TestApp::spawn_with(Options { redis_urls: vec![redis.url()], ..Options::default() }).await);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load: Vec<_> = (0..8)
        .map(|i| {
            let (app, stop) = (app.clone(), stop.clone());
            tokio::spawn(async move {
                let mut taken = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let (s, b) = app.reserve(&letter_to(RECIPIENTS[i % RECIPIENTS.len()])).await;
                    assert_eq!(s, StatusCode::OK, "{b}");
                    taken += 1;
                }
                taken
            })
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    redis.kill();
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let _redis = RedisServer::start_on(port).await;
    for _ in 0..100 {
        if app.state.engine().redis_up() == Some(true) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(app.state.engine().redis_up(), Some(true), "back on Redis");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut taken = 0;
    for task in load {
        taken += task.await.unwrap();
    }
    let (_, fallback) = fallbacks(&app).await;
    assert!(fallback > 1, "several requests fell back during the outage: {fallback} of {taken}");
    // the rows are written off the request path
    let mut rows = (0, 0);
    for _ in 0..50 {
        rows = (
            app.count("SELECT COUNT(*) FROM error_log WHERE error_type = 'REDIS_ERROR'").await,
            app.count("SELECT COUNT(*) FROM error_log WHERE error_type = 'REDIS_ERROR' AND resolved_at IS NOT NULL").await,
        );
        if rows == (1, 1) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(rows, (1, 1), "one REDIS_ERROR row for the outage, resolved at its end");
}

/// How many `SET` commands a server has executed since it started.
async fn sets_executed(server: &RedisServer) -> u64 {
    let info: String = redis::cmd("INFO").arg("commandstats").query_async(&mut server.connection().await).await.unwrap();
    info.lines().find_map(|l| l.strip_prefix("cmdstat_set:calls=")).map(|rest| rest.split(',').next().unwrap().parse().unwrap()).unwrap_or(0)
}

#[tokio::test]
async fn a_stalled_server_is_left_out_while_the_others_are_a_majority_of_all() {
    use docnum::server::numbering::lock::{CounterLock, Held, LockConfig, RedisLock};
    let servers = [RedisServer::start().await, RedisServer::start().await, RedisServer::start().await];
    let urls: Vec<String> = servers.iter().map(RedisServer::url).collect();
    let redis = std::sync::Arc::new(RedisLock::new(&urls, LockConfig::default()).unwrap());
    let lock = CounterLock::Redis(redis.clone());
    let held = lock.acquire("stall-test").await.unwrap();
    lock.release(held).await;
    let before = sets_executed(&servers[2]).await;
    assert_eq!(redis.left_out(), None);

    // stalled, not gone: connections stay open and every command waits (for redis-rs's 500 ms response timeout)
    servers[2].signal("-STOP");
    for _ in 0..20 {
        let held = lock.acquire("stall-test").await.unwrap();
        assert!(matches!(held, Held::Redis { .. }), "two of three answer: the Redis lock, not the fallback");
        lock.release(held).await;
    }
    assert_eq!(redis.left_out(), Some(2));
    assert!(redis.reachable().await, "two of three answer: a quorum");
    servers[2].signal("-CONT");
    // what was sent to it while stalled runs now: only the attempt that found it out
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let sent_while_stalled = sets_executed(&servers[2]).await - before;
    assert!(sent_while_stalled <= 1, "{sent_while_stalled} of 20 lock attempts waited on the stalled server");

    // asked again after a second, it answers: locks are taken on all three again
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let held = lock.acquire("stall-test").await.unwrap();
    lock.release(held).await;
    assert_eq!(redis.left_out(), None);
}

#[tokio::test]
async fn with_the_first_server_dead_a_waiting_instance_still_finds_the_lock_holder() {
    use docnum::server::numbering::lock::{Acquired, CounterLock, Held, LockConfig, RedisLock};
    let mut servers = [RedisServer::start().await, RedisServer::start().await, RedisServer::start().await];
    let urls: Vec<String> = servers.iter().map(RedisServer::url).collect();
    // a waiter that does not find the holder gives up quickly instead of waiting out the holder's TTL
    let config = LockConfig { max_wait: std::time::Duration::from_millis(300), ..LockConfig::default() };
    let instance = |me: &str| CounterLock::Redis(std::sync::Arc::new(RedisLock::new(&urls, config.clone()).unwrap().forwarding_as(me.into())));
    let (a, b) = (instance("http://a.test"), instance("http://b.test"));
    // the first server held the markers (holders, wait markers) alone: its death sent every waiter to the lock
    servers[0].kill();
    for k in 0..5 {
        let name = format!("first-server-dead-{k}");
        let Ok(Acquired::Lock(held)) = a.acquire_or_find(&name, true).await else { panic!("{name}: nobody holds it yet") };
        assert!(matches!(held, Held::Redis { .. }), "two of three answer: the Redis lock, not the fallback");
        match b.acquire_or_find(&name, true).await {
            Ok(Acquired::HeldBy(at)) => assert_eq!(at, "http://a.test"),
            Ok(Acquired::Lock(_)) => panic!("{name}: taken while another instance holds it"),
            Err(e) => panic!("{name}: the holder was not found, the lock waited for: {e}"),
        }
        a.release(held).await;
    }
}
