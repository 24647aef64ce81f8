//! The administrators' metrics summary (the requirements' `GET /document-numbering/metrics`): today's numbers per type,
//! lock waits, retries and fallbacks of today's number requests (Asia/Bangkok day), and the fullest counters of
//! the current period. A project admin sees their projects only. Prometheus scrapes `/metrics` for the rest.

use chrono::{Datelike, NaiveDate, NaiveTime, TimeZone};

use crate::contract::{IssuedToday, MetricsSummary, RequestTimings};
use crate::numbering::{CorrespondenceTypeId, ProjectId};
use crate::server::auth::Caller;
use crate::server::db::Conditions;
use crate::server::error::AppError;
use crate::server::numbering::Engine;

/// How many of the fullest counters the summary lists.
pub(crate) const FULLEST_COUNTERS: usize = 10;

/// The Bangkok day of `now`, and the epoch milliseconds of the midnight that began it (Asia/Bangkok keeps UTC+7
/// all year, so that midnight exists exactly once).
fn bangkok_day(now: chrono::DateTime<chrono::Utc>) -> (NaiveDate, i64) {
    let day = now.with_timezone(&chrono_tz::Asia::Bangkok).date_naive();
    let midnight = chrono_tz::Asia::Bangkok.from_local_datetime(&day.and_time(NaiveTime::MIN)).single();
    (day, midnight.map_or(now.timestamp_millis(), |t| t.timestamp_millis()))
}

pub(crate) async fn summary(s: &Engine, caller: &Caller) -> Result<MetricsSummary, AppError> {
    let scope = caller.admin_scope()?.map(<[ProjectId]>::to_vec);
    let now = s.clock.now();
    let (day, since) = bangkok_day(now);
    let snapshot = s.reference.get().await?;

    let mut numbers = Conditions::default();
    numbers.and("created_at >= ?", [since.into()]);
    if let Some(projects) = &scope {
        numbers.and_in("project_id IN ({})", projects);
    }
    let sql = format!("SELECT correspondence_type_id, COUNT(*) FROM document_numbers{} GROUP BY correspondence_type_id", numbers.sql());
    let per_type: Vec<(CorrespondenceTypeId, i64)> = numbers.bind(sqlx::query_as(&sql)).fetch_all(&s.db.pool).await?;
    let mut issued_today: Vec<IssuedToday> = per_type
        .into_iter()
        .map(|(type_id, count)| IssuedToday {
            correspondence_type_code: snapshot
                .correspondence_type(Some(type_id), None)
                .map(|t| t.code.clone())
                .unwrap_or_else(|_| type_id.to_string()),
            count,
        })
        .collect();
    issued_today.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.correspondence_type_code.cmp(&b.correspondence_type_code)));

    let mut requests = Conditions::default();
    requests.and("created_at >= ?", [since.into()]).and("operation IN ('RESERVE', 'GENERATE')", []);
    if let Some(projects) = &scope {
        requests.and_in("counter_id IN (SELECT id FROM counters WHERE project_id IN ({}))", projects);
    }
    // SUM is DECIMAL on MariaDB: cast back to an integer both databases hand over alike
    let sql = format!(
        "SELECT COUNT(*), CAST(COALESCE(SUM(lock_wait_ms), 0) AS SIGNED), CAST(COALESCE(MAX(lock_wait_ms), 0) AS SIGNED), \
         CAST(COALESCE(SUM(retry_count), 0) AS SIGNED), CAST(COALESCE(SUM(CASE WHEN fallback_used <> 'NONE' THEN 1 ELSE 0 END), 0) AS SIGNED) \
         FROM audit_log{}",
        requests.sql()
    );
    let (count, wait_sum, wait_max, retries, fallbacks): (i64, i64, i64, i64, i64) =
        requests.bind(sqlx::query_as(&sql)).fetch_one(&s.db.pool).await?;

    let mut fullest = super::counters(&s.db, &s.reference, caller, None, None, Some(day.year())).await?;
    fullest.sort_by(|a, b| b.utilization.total_cmp(&a.utilization));
    fullest.truncate(FULLEST_COUNTERS);

    Ok(MetricsSummary {
        day: day.to_string(),
        issued_today,
        requests_today: RequestTimings {
            count,
            lock_wait_avg_ms: if count > 0 { wait_sum as f64 / count as f64 } else { 0.0 },
            lock_wait_max_ms: wait_max,
            retries,
            fallbacks,
        },
        redis: match s.redis_up() {
            None => "not configured".into(),
            Some(true) => "up".into(),
            Some(false) => "down".into(),
        },
        fullest_counters: fullest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_day_begins_at_bangkok_midnight() {
        let at = |s: &str| s.parse::<chrono::DateTime<chrono::Utc>>().unwrap();
        // 2025-06-15 10:00 in Bangkok began at 2025-06-14 17:00 UTC
        let june_15: NaiveDate = "2025-06-15".parse().unwrap();
        assert_eq!(bangkok_day(at("2025-06-15T03:00:00Z")), (june_15, at("2025-06-14T17:00:00Z").timestamp_millis()));
        // 23:30 UTC is already the next day in Bangkok
        assert_eq!(bangkok_day(at("2025-06-15T23:30:00Z")), (june_15.succ_opt().unwrap(), at("2025-06-15T17:00:00Z").timestamp_millis()));
    }
}
