//! Commits shared across counters (`numbering::committer`), on the real database: one transaction serves the
//! batches of several counters; a counter whose version check fails inside it is rolled back alone, the others'
//! callers get their committed numbers, and the failed counter's callers get theirs after the retry. A group is
//! served together (one statement per kind for all its counters) and, when one of its statements fails, batch by
//! batch behind savepoints.

use std::sync::Arc;
use std::time::{Duration, Instant};

use docnum::contract::{ApiTokenId, CorrespondenceTypeId, CounterId, NumberRequest, ProjectId};
use docnum::server::audit;
use docnum::server::auth::Caller;
use docnum::server::db::Dialect;
use docnum::server::numbering::committer::{Committers, Work};
use docnum::server::numbering::counter_tx::{store, Known};
use docnum::server::numbering::queue::{JobKind, Outcome};
use docnum::server::numbering::{check, resolve, Resolved};
use serde_json::json;
use sqlx::{Connection, Executor};

use crate::common::TestApp;

async fn letter_to(app: &TestApp, recipient: &str) -> Arc<Resolved> {
    counters_of(app, &["LETTER"], &[recipient]).await.remove(0)
}

/// The counters of LCBP3 from คคง. for every type and recipient given, type by type.
async fn counters_of(app: &TestApp, types: &[&str], recipients: &[&str]) -> Vec<Arc<Resolved>> {
    let snapshot = app.state.reference().get().await.unwrap();
    let mut counters = Vec::new();
    for ty in types {
        for recipient in recipients {
            let req: NumberRequest = serde_json::from_value(json!({
                "projectCode": "LCBP3", "correspondenceTypeCode": ty, "originatorCode": "คคง.", "recipientCode": recipient
            }))
            .unwrap();
            counters.push(Arc::new(resolve(&snapshot, &req, app.clock.now()).unwrap()));
        }
    }
    counters
}

fn reserve(r: &Arc<Resolved>) -> Vec<Work> {
    vec![Work {
        kind: JobKind::Issue { req: r.clone(), ttl_ms: 300_000, document_id: None },
        caller: Caller::system(),
        enqueued: Instant::now(),
        keyed: None,
    }]
}

/// Serves one reserve on `r`'s counter with `known` as the worker's memory and returns the number.
async fn serve(committers: &Arc<Committers>, r: &Arc<Resolved>, known: &mut Option<Known>) -> String {
    let mut results = committers.serve(&r.key, reserve(r), 0, "NONE", known).await;
    assert_eq!(results.len(), 1);
    match results.remove(0) {
        Ok(Outcome::Issued { number, .. }) => number,
        other => panic!("expected a number, got {other:?}"),
    }
}

/// Waits (bounded) until the committers have taken `n` batches into transactions since they started.
async fn until_taken(committers: &Committers, n: u64) {
    for _ in 0..2_000 {
        if committers.stats().taken == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("committers never took {n} batches (took {})", committers.stats().taken);
}

/// Waits (bounded) until the committers hold `n` batches not yet taken into a transaction.
async fn until_waiting(committers: &Committers, n: usize) {
    for _ in 0..2_000 {
        if committers.waiting() == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("committers never had {n} batches waiting (have {})", committers.waiting());
}

#[tokio::test]
async fn a_group_with_one_stale_counter_commits_the_others_and_the_stale_one_after_its_retry() {
    let app = TestApp::spawn().await;
    let db = app.state.db.clone();
    // one committer, so that every batch below shares its transactions
    let committers = Arc::new(Committers::new(db.clone(), app.clock.clone(), app.state.engine().lifecycle.clone(), 1, None, None));
    let (a, b, c, x) =
        (letter_to(&app, "สคฉ.3").await, letter_to(&app, "กทท.").await, letter_to(&app, "ผรม.1").await, letter_to(&app, "ผรม.2").await);

    // A's worker remembers its counter after one number; another process then moves it (a second number)
    let mut stale = None;
    assert_eq!(serve(&committers, &a, &mut stale).await, "คคง.-สคฉ.3-0001-2568");
    assert_eq!(serve(&committers, &a, &mut None).await, "คคง.-สคฉ.3-0002-2568");
    assert!(stale.is_some());
    assert_eq!(serve(&committers, &x, &mut None).await, "คคง.-ผรม.2-0001-2568");
    let before = committers.stats();

    // Another writer holds the database (SQLite) or X's counter row (MariaDB): the committer's transaction for
    // X waits, and the batches of A, B and C queue up behind it, to be served together in the next one.
    let mut blocker = block(&db, counter_id(&db, "คคง.-ผรม.2").await).await;
    let spawn = |r: Arc<Resolved>, mut known: Option<Known>| {
        let committers = committers.clone();
        tokio::spawn(async move { serve(&committers, &r, &mut known).await })
    };
    let x_task = spawn(x.clone(), None);
    until_taken(&committers, before.taken + 1).await; // the committer took X and waits for the database
    let a_task = spawn(a.clone(), stale);
    let b_task = spawn(b.clone(), None);
    let c_task = spawn(c.clone(), None);
    until_waiting(&committers, 3).await;
    blocker.execute("COMMIT").await.unwrap();

    // every caller has a committed number: B and C from the shared transaction, A after its retry
    assert_eq!(x_task.await.unwrap(), "คคง.-ผรม.2-0002-2568");
    assert_eq!(b_task.await.unwrap(), "คคง.-กทท.-0001-2568");
    assert_eq!(c_task.await.unwrap(), "คคง.-ผรม.1-0001-2568");
    assert_eq!(a_task.await.unwrap(), "คคง.-สคฉ.3-0003-2568");

    let after = committers.stats();
    assert_eq!(after.isolated_failures - before.isolated_failures, 1, "A's version check failed inside the shared group: {after:?}");
    assert_eq!(after.regrouped, before.regrouped, "the transaction itself was never lost");
    assert_eq!(after.together - before.together, 1, "{{A, B, C}} was read and written together, A failing alone: {after:?}");
    // X alone, then {A (rolled back), B, C}, then A's retry
    assert_eq!(after.groups - before.groups, 3, "{before:?} → {after:?}");
    assert_eq!(after.batches - before.batches, 4, "X, B, C and A's retry committed: {after:?}");

    // on record: each number once, no gap, the audit chains intact
    let report = check::check(&db, &[]).await.unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!((report.numbers, report.duplicates, report.unexplained_gaps), (7, 0, 0), "{report:?}");
}

async fn counter_id(db: &docnum::server::db::Db, prefix: &str) -> CounterId {
    let number: String = format!("{prefix}-0001-2568");
    sqlx::query_scalar::<_, CounterId>("SELECT counter_id FROM document_numbers WHERE number = ?").bind(number).fetch_one(&db.pool).await.unwrap()
}

/// Holds the database (SQLite) or one counter's row (MariaDB) in a transaction of another connection, so that
/// the committer's next transaction waits and the batches handed over meanwhile queue up into one group.
async fn block(db: &docnum::server::db::Db, counter: CounterId) -> sqlx::AnyConnection {
    let mut blocker = sqlx::AnyConnection::connect(&db.url).await.unwrap();
    blocker.execute(if db.dialect == Dialect::Sqlite { "BEGIN IMMEDIATE" } else { "BEGIN" }).await.unwrap();
    if db.dialect == Dialect::MySql {
        sqlx::query(&format!("SELECT id FROM counters WHERE id = {counter} FOR UPDATE")).fetch_all(&mut blocker).await.unwrap();
    }
    blocker
}

#[tokio::test]
async fn a_number_taken_already_inside_a_group_served_together_fails_alone_and_the_others_commit() {
    let app = TestApp::spawn().await;
    let db = app.state.db.clone();
    let committers = Arc::new(Committers::new(db.clone(), app.clock.clone(), app.state.engine().lifecycle.clone(), 1, None, None));
    let (b, c, x) = (letter_to(&app, "กทท.").await, letter_to(&app, "ผรม.1").await, letter_to(&app, "ผรม.2").await);
    assert_eq!(serve(&committers, &b, &mut None).await, "คคง.-กทท.-0001-2568");
    assert_eq!(serve(&committers, &c, &mut None).await, "คคง.-ผรม.1-0001-2568");
    assert_eq!(serve(&committers, &x, &mut None).await, "คคง.-ผรม.2-0001-2568");
    // B's next rendering exists already (registered by hand on another counter, say)
    let x_counter = counter_id(&db, "คคง.-ผรม.2").await;
    sqlx::query(
        "INSERT INTO document_numbers (counter_id, project_id, correspondence_type_id, sequence, revision, number, template, status, created_at) \
         SELECT counter_id, project_id, correspondence_type_id, 900, 'A', 'คคง.-กทท.-0002-2568', template, 'CONFIRMED', created_at FROM document_numbers WHERE number = ?",
    )
    .bind("คคง.-ผรม.2-0001-2568")
    .execute(&db.pool)
    .await
    .unwrap();
    let before = committers.stats();

    let mut blocker = block(&db, x_counter).await;
    let spawn = |r: Arc<Resolved>| {
        let committers = committers.clone();
        tokio::spawn(async move { committers.serve(&r.key, reserve(&r), 0, "NONE", &mut None).await.remove(0) })
    };
    let x_task = spawn(x.clone());
    until_taken(&committers, before.taken + 1).await;
    let b_task = spawn(b.clone());
    let c_task = spawn(c.clone());
    until_waiting(&committers, 2).await;
    blocker.execute("COMMIT").await.unwrap();

    let number = |r: Result<Outcome, _>| match r {
        Ok(Outcome::Issued { number, .. }) => number,
        other => panic!("expected a number, got {other:?}"),
    };
    assert_eq!(number(x_task.await.unwrap()), "คคง.-ผรม.2-0002-2568");
    assert_eq!(number(c_task.await.unwrap()), "คคง.-ผรม.1-0002-2568");
    match b_task.await.unwrap() {
        Err(e) => assert_eq!(e.code(), docnum::contract::ErrorCode::DuplicateNumber, "{e:?}"),
        other => panic!("B's rendering exists: expected NB005, got {other:?}"),
    }
    let after = committers.stats();
    assert_eq!(after.together, before.together, "the group's INSERT failed: nothing of it was committed together");
    assert_eq!(after.isolated_failures - before.isolated_failures, 1, "B failed alone behind its savepoint: {after:?}");

    // B's sequence 2 stays consumed and its audit row says why; the next number is 0003
    assert_eq!(serve(&committers, &b, &mut None).await, "คคง.-กทท.-0003-2568");
    let failed: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE status = 'FAILED' AND sequence = 2 AND document_number = ?")
        .bind("คคง.-กทท.-0002-2568")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(failed, 1, "the consumed sequence has its FAILED audit row");
}

#[tokio::test]
async fn a_group_served_together_confirms_issues_on_a_new_counter_and_on_a_known_one() {
    let app = TestApp::spawn().await;
    let db = app.state.db.clone();
    let committers = Arc::new(Committers::new(db.clone(), app.clock.clone(), app.state.engine().lifecycle.clone(), 1, None, None));
    let (b, c, n, x) =
        (letter_to(&app, "กทท.").await, letter_to(&app, "ผรม.1").await, letter_to(&app, "ผรม.2").await, letter_to(&app, "สคฉ.3").await);
    // B has a reservation to confirm; C and X are known to the committers; N is used for the first time below
    let token = match committers.serve(&b.key, reserve(&b), 0, "NONE", &mut None).await.remove(0) {
        Ok(Outcome::Issued { token: Some(token), .. }) => token,
        other => panic!("expected a reservation, got {other:?}"),
    };
    assert_eq!(serve(&committers, &c, &mut None).await, "คคง.-ผรม.1-0001-2568");
    assert_eq!(serve(&committers, &x, &mut None).await, "คคง.-สคฉ.3-0001-2568");
    let before = committers.stats();

    let mut blocker = block(&db, counter_id(&db, "คคง.-สคฉ.3").await).await;
    let x_task = {
        let (committers, x) = (committers.clone(), x.clone());
        tokio::spawn(async move { serve(&committers, &x, &mut None).await })
    };
    until_taken(&committers, before.taken + 1).await;
    let confirm = vec![Work {
        kind: JobKind::Confirm { token, document_id: docnum::numbering::DocumentId::parse("DOC-42").unwrap() },
        caller: Caller::system(),
        enqueued: Instant::now(),
        keyed: None,
    }];
    let b_task = {
        let (committers, b) = (committers.clone(), b.clone());
        tokio::spawn(async move { committers.serve(&b.key, confirm, 0, "NONE", &mut None).await.remove(0) })
    };
    let spawn = |r: Arc<Resolved>| {
        let committers = committers.clone();
        tokio::spawn(async move { serve(&committers, &r, &mut None).await })
    };
    let (c_task, n_task) = (spawn(c.clone()), spawn(n.clone()));
    until_waiting(&committers, 3).await;
    blocker.execute("COMMIT").await.unwrap();

    assert_eq!(x_task.await.unwrap(), "คคง.-สคฉ.3-0002-2568");
    match b_task.await.unwrap() {
        Ok(Outcome::Status { number, status, changed, .. }) => {
            assert_eq!((number.as_str(), status, changed), ("คคง.-กทท.-0001-2568", docnum::contract::NumberStatus::Confirmed, true))
        }
        other => panic!("expected the confirmation, got {other:?}"),
    }
    assert_eq!(c_task.await.unwrap(), "คคง.-ผรม.1-0002-2568");
    assert_eq!(n_task.await.unwrap(), "คคง.-ผรม.2-0001-2568");
    let after = committers.stats();
    assert_eq!(after.together - before.together, 1, "{{B, C, N}} was served together: {after:?}");
    assert_eq!(after.isolated_failures, before.isolated_failures, "{after:?}");

    let stored: (String, Option<String>) = sqlx::query_as("SELECT status, document_id FROM document_numbers WHERE number = ?")
        .bind("คคง.-กทท.-0001-2568")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(stored, ("CONFIRMED".to_string(), Some("DOC-42".to_string())));
    let report = check::check(&db, &[]).await.unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!((report.numbers, report.duplicates, report.unexplained_gaps), (6, 0, 0), "{report:?}");
}

/// A group reads its counters and their chain heads in one statement (on SQLite as one row, a JSON array): each
/// as a counter's own reads find it, and an id without a counter is left out.
#[tokio::test]
async fn a_group_reads_each_counter_and_chain_head_as_stored() {
    let app = TestApp::spawn().await;
    let db = app.state.db.clone();
    let committers = Arc::new(Committers::new(db.clone(), app.clock.clone(), app.state.engine().lifecycle.clone(), 1, None, None));
    let (c, x) = (letter_to(&app, "ผรม.1").await, letter_to(&app, "สคฉ.3").await);
    for r in [&c, &c, &x] {
        serve(&committers, r, &mut None).await;
    }
    let (c_id, x_id) = (counter_id(&db, "คคง.-ผรม.1").await, counter_id(&db, "คคง.-สคฉ.3").await);

    let mut tx = db.begin_write().await.unwrap();
    let read = store::lock_counters_and_heads(&mut tx, db.dialect, &[x_id, CounterId(999_999), c_id]).await.unwrap();
    assert_eq!(read.len(), 2, "the unknown id is left out");
    for (id, last_number) in [(c_id, 2), (x_id, 1)] {
        let (counter, head) = &read[&id];
        let (alone, alone_head) = store::lock_counter(&mut tx, db.dialect, id).await.unwrap().unwrap();
        assert_eq!((&counter.row, head), (&alone.row, &alone_head));
        assert_eq!(counter.row.last_number, last_number);
        assert_eq!((&counter.key, counter.max_number, counter.updated_at), (&alone.key, alone.max_number, alone.updated_at));
        assert_eq!(counter.key.period.to_string(), "YEAR_2025", "a text column read back");
        let stored: (String, i64) =
            sqlx::query_as("SELECT chain_hash, chain_length FROM counters WHERE id = ?").bind(id).fetch_one(&mut *tx).await.unwrap();
        assert_eq!((head.hash.clone(), head.length), stored);
        assert_eq!(head.length, last_number, "one audit row per number");
    }
    tx.rollback().await.unwrap();
}

/// On SQLite a committer keeps the single writer connection from one group to the next while groups follow each
/// other, and gives it back within `HOLD_WRITER_AT_MOST`: another write (a template save, the expiry sweep) gets
/// its turn while numbers keep being issued, instead of waiting for the load to stop. On MariaDB the write has
/// connections of its own; the test runs there too.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn another_write_gets_its_turn_while_groups_keep_coming() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let app = TestApp::spawn().await;
    let db = app.state.db.clone();
    let committers = Arc::new(Committers::new(db.clone(), app.clock.clone(), app.state.engine().lifecycle.clone(), 1, None, None));
    // one task per counter (a counter has one worker at a time): 8 types × 4 recipients
    let types = ["LETTER", "MEMO", "RFI", "EMAIL", "MOM", "INSTRUCTION", "NOTICE", "OTHER"];
    let counters = counters_of(&app, &types, &["สคฉ.3", "กทท.", "ผรม.1", "ผรม.2"]).await;
    let (stop, issued) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU64::new(0)));
    let loaders: Vec<_> = counters
        .into_iter()
        .map(|r| {
            let (committers, stop, issued) = (committers.clone(), stop.clone(), issued.clone());
            tokio::spawn(async move {
                let mut known = None;
                while !stop.load(Ordering::Relaxed) {
                    serve(&committers, &r, &mut known).await;
                    issued.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    while issued.load(Ordering::Relaxed) < 200 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    // a write of another kind, on the writer the committer uses: it must not wait for the load to end
    let write = async {
        let mut tx = db.begin_write().await.unwrap();
        sqlx::query("UPDATE projects SET name = name WHERE code = 'LCBP3'").execute(&mut *tx).await.unwrap();
        tx.commit().await.unwrap();
    };
    tokio::time::timeout(Duration::from_secs(20), write).await.expect("the other write waited for the load to stop");
    let at_write = issued.load(Ordering::Relaxed);
    // the load was still running: numbers keep coming after the write
    while issued.load(Ordering::Relaxed) < at_write + 100 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for l in loaders {
        l.await.unwrap();
    }
    let stats = committers.stats();
    assert!(stats.batches > stats.groups, "the loaders' batches shared groups: {stats:?}");
    let report = check::check(&db, &[]).await.unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!((report.numbers, report.duplicates, report.unexplained_gaps), (issued.load(Ordering::Relaxed) as i64, 0, 0), "{report:?}");
}

/// Ten counters in one group: its statements are written for twelve (the place count is rounded up, so that a few
/// statement texts serve every group size), the two extra places repeat the last counter and change nothing. The
/// group is still served together, and each counter moves once.
#[tokio::test]
async fn a_group_of_ten_counters_is_served_together_each_counter_moving_once() {
    let app = TestApp::spawn().await;
    let db = app.state.db.clone();
    let committers = Arc::new(Committers::new(db.clone(), app.clock.clone(), app.state.engine().lifecycle.clone(), 1, None, None));
    let counters = counters_of(&app, &["LETTER", "MEMO", "RFI"], &["สคฉ.3", "กทท.", "ผรม.1", "ผรม.2"]).await;
    let (x, group) = (counters[11].clone(), &counters[..10]);
    // each counter once, alone, so that every one of them exists and the group's reads find them
    let mut first = Vec::new();
    for r in group.iter().chain([&x]) {
        first.push(serve(&committers, r, &mut None).await);
    }
    let before = committers.stats();
    let mut blocker = block(&db, id_of(&db, &x).await).await;
    let x_task = {
        let (committers, x) = (committers.clone(), x.clone());
        tokio::spawn(async move { serve(&committers, &x, &mut None).await })
    };
    until_taken(&committers, before.taken + 1).await;
    let tasks: Vec<_> = group
        .iter()
        .map(|r| {
            let (committers, r) = (committers.clone(), r.clone());
            tokio::spawn(async move { serve(&committers, &r, &mut None).await })
        })
        .collect();
    until_waiting(&committers, 10).await;
    blocker.execute("COMMIT").await.unwrap();

    assert!(x_task.await.unwrap().ends_with("-0002-2568"));
    for (task, first) in tasks.into_iter().zip(&first) {
        let second = task.await.unwrap();
        assert_eq!(second, first.replace("-0001-", "-0002-"), "each counter of the group moved from 1 to 2");
    }
    let after = committers.stats();
    assert_eq!(after.together - before.together, 1, "the ten were served together: {after:?}");
    assert_eq!(after.batches - before.batches, 11, "{after:?}");
    assert_eq!(after.isolated_failures, before.isolated_failures, "{after:?}");
    for r in group {
        let id = id_of(&db, r).await;
        let version: i64 = sqlx::query_scalar("SELECT version FROM counters WHERE id = ?").bind(id).fetch_one(&db.pool).await.unwrap();
        assert_eq!(version, 2, "moved once per number, the repeated places moved nothing more");
    }
    let report = check::check(&db, &[]).await.unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!((report.numbers, report.duplicates, report.unexplained_gaps), (22, 0, 0), "{report:?}");
}

/// A group's numbers and audit rows, each kind with one multi-row INSERT: what is read back is what was written, to
/// the character and to the largest integer, NULLs as NULLs, rows in their order, and the audit hashes (computed from
/// the values before writing) verify against the stored rows.
#[tokio::test]
async fn numbers_and_audit_rows_read_back_exactly_as_written() {
    let app = TestApp::spawn().await;
    let db = app.state.db.clone();
    let awkward = "คคง.-\"quoted\" \\ back'slash\n新 😀 \u{1}".to_string();
    let mut tx = db.begin_write().await.unwrap();
    let (counter, _) = store::load_or_create_counter(&mut tx, db.dialect, &letter_to(&app, "ผรม.1").await.key, 9999, 1).await.unwrap();
    let rows = vec![
        store::NewNumber {
            sequence: i64::MAX,
            number: awkward.clone(),
            document_id: Some(awkward.clone()),
            api_token_id: Some(ApiTokenId(i64::MIN)),
            created_at: 1_795_705_991_723,
            confirmed_at: Some(0),
            ..rows_template(counter.id)
        },
        store::NewNumber { sequence: 1, number: "second".into(), document_id: None, token: Some("t-1".into()), ..rows_template(counter.id) },
    ];
    store::insert_numbers(&mut tx, &rows).await.unwrap();
    let entries = vec![
        audit::AuditEntry {
            operation: "RESERVE".into(),
            status: "RESERVED".into(),
            document_number: Some(awkward.clone()),
            metadata: Some(r#"{"note":"a \"quoted\" JSON text"}"#.into()),
            sequence: Some(i64::MAX),
            created_at: 7,
            ..Default::default()
        },
        audit::AuditEntry { operation: "CANCEL".into(), status: "CANCELLED".into(), user_agent: Some(awkward.clone()), ..Default::default() },
    ];
    audit::append(&mut tx, db.dialect, "json-test", &entries).await.unwrap();
    tx.commit().await.unwrap();

    type Stored = (i64, String, Option<String>, Option<String>, Option<i64>, Option<i64>, Option<i64>, String);
    let stored: Vec<Stored> = sqlx::query_as(
        "SELECT sequence, number, document_id, token, api_token_id, expires_at, confirmed_at, status FROM document_numbers \
         WHERE counter_id = ? ORDER BY id",
    )
    .bind(counter.id)
    .fetch_all(&db.pool)
    .await
    .unwrap();
    assert_eq!(
        stored,
        vec![
            (i64::MAX, awkward.clone(), Some(awkward.clone()), None, Some(i64::MIN), None, Some(0), "RESERVED".into()),
            (1, "second".into(), None, Some("t-1".into()), None, None, None, "RESERVED".into()),
        ]
    );
    type AuditStored = (i64, Option<String>, Option<String>, Option<String>, Option<i64>);
    let audit_rows: Vec<AuditStored> =
        sqlx::query_as("SELECT chain_seq, document_number, user_agent, metadata, sequence FROM audit_log WHERE chain_key = 'json-test' ORDER BY id")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert_eq!(
        audit_rows,
        vec![(1, Some(awkward.clone()), None, entries[0].metadata.clone(), Some(i64::MAX)), (2, None, Some(awkward.clone()), None, None),],
        "in the array's order, each value as written"
    );
    let report = audit::verify(&db).await.unwrap();
    assert!(report.ok, "{report:?}");
}

/// The id of `r`'s counter (which exists).
async fn id_of(db: &docnum::server::db::Db, r: &Resolved) -> CounterId {
    let mut tx = db.begin_write().await.unwrap();
    let id = store::load_or_create_counter(&mut tx, db.dialect, &r.key, 9999, 0).await.unwrap().0.id;
    tx.rollback().await.unwrap();
    id
}

/// A reserved number of `counter_id`, for a test to fill in what it is about.
fn rows_template(counter_id: CounterId) -> store::NewNumber {
    store::NewNumber {
        counter_id,
        project_id: ProjectId(1),
        correspondence_type_id: CorrespondenceTypeId(1),
        sequence: 0,
        revision: "A".into(),
        number: String::new(),
        template: "{SEQ:4}".into(),
        status: docnum::contract::NumberStatus::Reserved,
        token: None,
        document_id: None,
        user_id: None,
        api_token_id: None,
        created_at: 1,
        expires_at: None,
        confirmed_at: None,
        block_id: None,
        block_holder: None,
    }
}

/// Counters a group meets for the first time are found or created together (`store::lock_or_create_counters`, one
/// INSERT and one read for all of them): one that exists keeps its row and state, new ones start at 0 with their
/// chain at GENESIS, a key asked for twice is one row, and asking again creates nothing.
#[tokio::test]
async fn counters_first_met_in_a_group_are_found_or_created_together() {
    let app = TestApp::spawn().await;
    let existing = letter_to(&app, "สคฉ.3").await;
    let (status, body) = app.reserve(&crate::common::letter_to("สคฉ.3")).await;
    assert!(status.is_success(), "{body}");
    let mut keys = vec![existing.key.clone()];
    for period in ["YEAR_2031", "YEAR_2032", "YEAR_2033"] {
        keys.push(docnum::numbering::CounterKey { period: docnum::numbering::PeriodKey::parse(period).unwrap(), ..existing.key.clone() });
    }
    let wanted: Vec<(&docnum::numbering::CounterKey, i64)> = keys.iter().chain([&keys[3]]).map(|k| (k, 9_999)).collect();
    let dialect = app.state.db.dialect;
    let now = app.clock.now().timestamp_millis();

    let mut tx = app.state.db.begin_write().await.unwrap();
    let found = store::lock_or_create_counters(&mut tx, dialect, &wanted, now).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(found.len(), 4);
    let (old, head) = &found[&keys[0]];
    assert_eq!(old.row.last_number, 1, "the existing counter keeps its state");
    assert!(head.length >= 1 && head.hash != audit::GENESIS, "{head:?}");
    for key in &keys[1..] {
        let (counter, head) = &found[key];
        assert_eq!((counter.row.last_number, counter.row.version, counter.max_number), (0, 0, 9_999), "{key:?}");
        assert_eq!((head.hash.as_str(), head.length), (audit::GENESIS, 0), "{key:?}");
    }

    let mut tx = app.state.db.begin_write().await.unwrap();
    let again = store::lock_or_create_counters(&mut tx, dialect, &wanted, now).await.unwrap();
    tx.commit().await.unwrap();
    for key in &keys {
        assert_eq!(again[key].0.row.id, found[key].0.row.id, "{key:?}");
    }
    let k = &existing.key;
    let rows: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM counters WHERE project_id = ? AND correspondence_type_id = ? AND originator_id = ? AND recipient_id = ?",
    )
    .bind(k.project_id)
    .bind(k.correspondence_type_id)
    .bind(k.originator_id)
    .bind(k.recipient_id)
    .fetch_one(&app.state.db.pool)
    .await
    .unwrap();
    assert_eq!(rows, 4);
}
