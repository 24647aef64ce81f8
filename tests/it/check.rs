//! The whole-database check (`docnum check`) on a live database: numbers are issued, cancelled and expired by the
//! sweep while it reads, and every report must still be clean. Read statement by statement, a chain's head read before a
//! row is appended and its rows read after look like a broken chain; one snapshot sees one moment.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use docnum::server::numbering::check;
use reqwest::StatusCode;
use serde_json::json;

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn check_reads_one_moment_of_a_live_database() {
    let app = Arc::new(TestApp::spawn().await);
    let stop = Arc::new(AtomicBool::new(false));
    let issued = Arc::new(AtomicUsize::new(0));
    let mut writers = Vec::new();
    for (w, recipient) in RECIPIENTS.into_iter().enumerate() {
        let (app, stop, issued) = (app.clone(), stop.clone(), issued.clone());
        writers.push(tokio::spawn(async move {
            let mut n = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let (s, r) = app.reserve(&letter_to(recipient)).await;
                assert_eq!(s, StatusCode::OK, "{r}");
                n += 1;
                // every third is cancelled: a gap the audit log must explain, as an expiry sweep's would be
                if (n + w).is_multiple_of(3) {
                    let (s, c) = app.post_json("/api/v1/document-numbering/cancel", &json!({ "token": r["token"] })).await;
                    assert_eq!(s, StatusCode::OK, "{c}");
                }
                issued.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    // and the expiry sweep, as in the million-number run's false alarm: the reservations left open pass their time
    // and are cancelled while the check reads
    let sweeper = {
        let (app, stop) = (app.clone(), stop.clone());
        tokio::spawn(async move {
            let mut expired = 0;
            while !stop.load(Ordering::Relaxed) {
                app.clock.advance(chrono::Duration::seconds(301));
                expired += app.state.engine().expire_due().await.unwrap();
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            expired
        })
    };
    let mut reports = 0;
    while reports < 25 {
        let before = issued.load(Ordering::Relaxed);
        let report = check::check(&app.state.db, &[]).await.unwrap();
        assert!(report.ok, "check {reports} of a live database: {:?}", report.problems);
        assert_eq!((report.duplicates, report.unexplained_gaps, report.audit_ok), (0, 0, true));
        // only checks that overlapped writes count: the race needs a write while the check reads
        if issued.load(Ordering::Relaxed) > before {
            reports += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    let expired = sweeper.await.unwrap();
    let last = check::check(&app.state.db, &[]).await.unwrap();
    assert!(last.ok, "{:?}", last.problems);
    let total = issued.load(Ordering::Relaxed) as i64;
    assert!(last.numbers >= total, "{} numbers on record, {total} issued", last.numbers);
    assert!(last.cancelled > 0, "the writers cancelled some");
    assert!(expired > 0, "the sweep expired some while the checks read");
}

/// The gap check reads a counter's audit rows only where its numbers leave sequences open: a sequence that neither a
/// number nor an audit row accounts for is reported. (Sequences that only audit rows explain — an override's skipped
/// ones — pass: `admin_ops`, the override test's closing check.)
#[tokio::test]
async fn check_reports_a_gap_that_neither_a_number_nor_an_audit_row_explains() {
    let app = TestApp::spawn().await;
    for _ in 0..3 {
        let (s, r) = app.reserve(&letter()).await;
        assert_eq!(s, StatusCode::OK, "{r}");
    }
    let clean = check::check(&app.state.db, &[]).await.unwrap();
    assert_eq!((clean.numbers, clean.unexplained_gaps), (3, 0), "{clean:?}");
    // two sequences pass with neither a number nor an audit row, as a write lost outside the service would leave them
    sqlx::query("UPDATE counters SET last_number = last_number + 2").execute(&app.state.db.writer).await.unwrap();
    let gaps = docnum::server::audit::unexplained_gaps(&app.state.db).await.unwrap();
    assert_eq!(gaps.iter().map(|(_, g)| g.clone()).collect::<Vec<_>>(), [vec![4, 5]]);
    let report = check::check(&app.state.db, &[]).await.unwrap();
    assert_eq!((report.unexplained_gaps, report.ok), (2, false), "{report:?}");
}
