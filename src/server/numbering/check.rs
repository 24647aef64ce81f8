//! A whole-database check of the promises of docs/rules/numbering.md#what-is-never-done-twice: no number twice, no unexplained gap, an intact
//! audit trail, and (for fault tests) every number a caller received still on record.

use std::collections::HashSet;

use serde::Serialize;

use crate::server::audit;
use crate::server::db::{Conn, Db};
use crate::server::error::AppError;
use crate::server::tlog;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckReport {
    pub(crate) counters: i64,
    pub numbers: i64,
    pub(crate) confirmed: i64,
    pub(crate) reserved: i64,
    pub cancelled: i64,
    pub duplicates: i64,
    pub unexplained_gaps: i64,
    pub(crate) audit_rows: i64,
    pub audit_ok: bool,
    pub(crate) received_checked: usize,
    pub(crate) received_missing: usize,
    /// The transparency log against the audit rows, and its tree against its entries and checkpoints.
    pub transparency_log: tlog::LogCheck,
    pub ok: bool,
    pub problems: Vec<String>,
}

async fn count(conn: &mut Conn, sql: &str) -> Result<i64, AppError> {
    Ok(sqlx::query_scalar::<_, i64>(sql).fetch_one(&mut *conn).await?)
}

/// Every read runs in one transaction, so the check sees one moment of a live database: read apart, a
/// reservation expired or a number issued between two reads looks like a gap or a broken chain.
pub async fn check(db: &Db, received: &[String]) -> Result<CheckReport, AppError> {
    let mut snapshot = db.begin_snapshot().await?;
    let conn = &mut *snapshot;
    let mut problems = Vec::new();
    let duplicates = count(
        conn,
        "SELECT COUNT(*) FROM (SELECT project_id, correspondence_type_id, number FROM document_numbers GROUP BY project_id, correspondence_type_id, number HAVING COUNT(*) > 1) d",
    )
    .await?;
    if duplicates > 0 {
        problems.push(format!("{duplicates} numbers issued more than once"));
    }
    let gaps = audit::unexplained_gaps_in(conn).await?;
    let unexplained: i64 = gaps.iter().map(|(_, g)| g.len() as i64).sum();
    for (counter, missing) in gaps.iter().take(10) {
        problems.push(format!("counter {counter}: sequences without a record {:?}", &missing[..missing.len().min(10)]));
    }
    let verify = audit::verify_in(conn).await?;
    problems.extend(verify.problems.iter().take(10).cloned());
    let mut missing = 0;
    if !received.is_empty() {
        let on_record: HashSet<String> =
            sqlx::query_scalar::<_, String>("SELECT number FROM document_numbers").fetch_all(&mut *conn).await?.into_iter().collect();
        for n in received {
            if !on_record.contains(n) {
                missing += 1;
                if missing <= 10 {
                    problems.push(format!("a caller received {n}, which is not on record"));
                }
            }
        }
    }
    let transparency_log = tlog::check_in(conn).await?;
    problems.extend(transparency_log.problems.iter().cloned());
    Ok(CheckReport {
        counters: count(conn, "SELECT COUNT(*) FROM counters").await?,
        numbers: count(conn, "SELECT COUNT(*) FROM document_numbers").await?,
        confirmed: count(conn, "SELECT COUNT(*) FROM document_numbers WHERE status = 'CONFIRMED'").await?,
        reserved: count(conn, "SELECT COUNT(*) FROM document_numbers WHERE status = 'RESERVED'").await?,
        cancelled: count(conn, "SELECT COUNT(*) FROM document_numbers WHERE status = 'CANCELLED'").await?,
        duplicates,
        unexplained_gaps: unexplained,
        audit_rows: verify.rows,
        audit_ok: verify.ok,
        received_checked: received.len(),
        received_missing: missing,
        transparency_log,
        ok: problems.is_empty(),
        problems,
    })
}
