//! The numbering statistics of `/charts` and `GET /document-numbering/stats/…`: numbers issued per
//! Bangkok day and correspondence type, and the utilization of the current period's counters at the end of each day.
//! Both are read from `document_numbers` alone (grouped by day in SQL), so the numbering path keeps no books for
//! them. A project admin sees their projects only; staff and API tokens are refused, as on the counter browser.

use chrono::{DateTime, Duration, NaiveDate, NaiveTime, TimeZone, Utc};

use crate::contract::messages::AdminDetail;
use crate::contract::stats::{DEFAULT_STATS_COUNTERS, DEFAULT_STATS_DAYS, MAX_STATS_COUNTERS, MAX_STATS_DAYS};
use crate::contract::{CounterId, CounterSeries, DailyIssued, ProjectId, StatsQuery, TypeSeries, UtilizationHistory};
use crate::numbering::Period;
use crate::server::auth::Caller;
use crate::server::clock::Clock;
use crate::server::db::Db;
use crate::server::error::AppError;
use crate::server::reference::ReferenceCache;

/// A Bangkok day in epoch milliseconds: Asia/Bangkok has kept UTC+7 without daylight saving since 1920, so every
/// day since is this long and a day's number is plain division (`window` checks it against chrono-tz).
pub const DAY_MS: i64 = 86_400_000;

/// The `days` Bangkok days ending with the one `now` falls in, oldest first, and the epoch milliseconds at which the
/// first began.
pub fn window(now: DateTime<Utc>, days: u32) -> (Vec<NaiveDate>, i64) {
    let today = now.with_timezone(&chrono_tz::Asia::Bangkok).date_naive();
    let first = today - Duration::days(i64::from(days.max(1)) - 1);
    let dates: Vec<NaiveDate> = first.iter_days().take(days.max(1) as usize).collect();
    let start = chrono_tz::Asia::Bangkok
        .from_local_datetime(&first.and_time(NaiveTime::MIN))
        .single()
        .map_or_else(|| now.timestamp_millis() - i64::from(days) * DAY_MS, |t| t.timestamp_millis());
    (dates, start)
}

/// The index in the window of the day an instant (epoch ms) falls in; `None` before the window: what the SQL's day
/// bucket computes (`store::day_bucket`); the tests hold the day boundaries to it.
#[cfg(test)]
fn day_index(start: i64, at_ms: i64) -> Option<usize> {
    (at_ms >= start).then(|| ((at_ms - start) / DAY_MS) as usize)
}

/// Running maximum of the highest sequence per day: `before` is the highest before the window, `per_day` the highest
/// of each day that issued one (by day index); a day without a number keeps the day before's.
pub fn running_highest(days: usize, before: i64, per_day: &[(usize, i64)]) -> Vec<i64> {
    let mut highest = vec![0; days];
    let mut current = before;
    let mut found = per_day.to_vec();
    found.sort_unstable();
    let mut next = found.iter().peekable();
    for (day, value) in highest.iter_mut().enumerate() {
        while let Some((_, v)) = next.next_if(|(d, _)| *d == day) {
            current = current.max(*v);
        }
        *value = current;
    }
    highest
}

/// The window's days, the project filter and the caller's scope, checked: days 1..=366, a known project the caller
/// administers.
struct Asked {
    days: Vec<NaiveDate>,
    start: i64,
    project_id: Option<ProjectId>,
    scope: Option<Vec<ProjectId>>,
}

async fn asked(reference: &ReferenceCache, clock: &Clock, caller: &Caller, q: &StatsQuery) -> Result<Asked, AppError> {
    let scope = caller.admin_scope()?.map(<[ProjectId]>::to_vec);
    let days = q.days.unwrap_or(DEFAULT_STATS_DAYS);
    if !(1..=MAX_STATS_DAYS).contains(&days) {
        return Err(AppError::validation(AdminDetail::StatsDays { max: &MAX_STATS_DAYS }));
    }
    if let Some(p) = q.project_id {
        reference.get().await?.project(Some(p), None)?;
        caller.require_project_admin(p)?;
    }
    let (days, start) = window(clock.now(), days);
    Ok(Asked { days, start, project_id: q.project_id, scope })
}

fn day_texts(days: &[NaiveDate]) -> Vec<String> {
    days.iter().map(|d| d.format("%Y-%m-%d").to_string()).collect()
}

/// Numbers issued per Bangkok day and correspondence type over the last `days` days (default 90).
pub async fn daily(db: &Db, reference: &ReferenceCache, clock: &Clock, caller: &Caller, q: &StatsQuery) -> Result<DailyIssued, AppError> {
    let a = asked(reference, clock, caller, q).await?;
    let end = a.start + a.days.len() as i64 * DAY_MS;
    let rows = super::store::issued_per_day(db, a.start, end, DAY_MS, a.project_id, a.scope.as_deref()).await?;
    let snapshot = reference.get().await?;
    let mut types: Vec<TypeSeries> = Vec::new();
    for (type_id, day, count) in rows {
        let Some(day) = usize::try_from(day).ok().filter(|d| *d < a.days.len()) else { continue };
        let at = match types.iter().position(|t| t.correspondence_type_id == type_id) {
            Some(at) => at,
            None => {
                let known = snapshot.correspondence_type(Some(type_id), None).ok();
                types.push(TypeSeries {
                    correspondence_type_id: type_id,
                    correspondence_type_code: known.map_or_else(|| type_id.to_string(), |t| t.code.clone()),
                    correspondence_type_name: known.map(|t| t.name.clone()).unwrap_or_default(),
                    counts: vec![0; a.days.len()],
                });
                types.len() - 1
            }
        };
        types[at].counts[day] += count;
    }
    types.sort_by(|x, y| x.correspondence_type_code.cmp(&y.correspondence_type_code));
    Ok(DailyIssued { days: day_texts(&a.days), project_id: a.project_id, types })
}

/// The utilization of counters at the end of each of the last `days` days: one counter (`counterId`), or the fullest
/// `limit` (default 10) of the current period — this year's yearly counters, this month's monthly ones, this fiscal
/// year's (a fiscal year from October: `Period::current_keys`), contracts' and those that never reset.
pub async fn utilization(
    db: &Db,
    reference: &ReferenceCache,
    clock: &Clock,
    caller: &Caller,
    q: &StatsQuery,
) -> Result<UtilizationHistory, AppError> {
    let a = asked(reference, clock, caller, q).await?;
    let limit = q.limit.unwrap_or(DEFAULT_STATS_COUNTERS);
    if !(1..=MAX_STATS_COUNTERS).contains(&limit) {
        return Err(AppError::validation(AdminDetail::StatsLimit { max: &MAX_STATS_COUNTERS }));
    }
    let counters = match q.counter_id {
        Some(id) => {
            let counter = super::store::counter(db, id).await?.ok_or_else(|| super::counter_not_found(id))?;
            caller.require_project_admin(counter.key.project_id)?;
            if a.project_id.is_some_and(|p| p != counter.key.project_id) {
                return Err(super::counter_not_found(id));
            }
            vec![counter]
        }
        None => {
            let now = clock.now();
            let periods = Period::current_keys(now);
            super::store::fullest_counters(db, &periods, a.project_id, a.scope.as_deref(), i64::from(limit)).await?
        }
    };
    let end = a.start + a.days.len() as i64 * DAY_MS;
    let ids: Vec<CounterId> = counters.iter().map(|c| c.row.id).collect();
    let rows = super::store::highest_sequence_per_day(db, &ids, a.start, end, DAY_MS).await?;
    let snapshot = reference.get().await?;
    let series = counters
        .iter()
        .map(|c| {
            let mine = rows.iter().filter(|r| r.0 == c.row.id);
            let before = mine.clone().filter(|r| r.1 < 0).map(|r| r.2).max().unwrap_or(0);
            let per_day: Vec<(usize, i64)> = mine.filter(|r| r.1 >= 0).map(|r| (r.1 as usize, r.2)).collect();
            let last_sequences = running_highest(a.days.len(), before, &per_day);
            let utilization = last_sequences.iter().map(|v| if c.max_number > 0 { *v as f64 / c.max_number as f64 } else { 0.0 }).collect();
            CounterSeries { counter: super::counter_view(&snapshot, c), last_sequences, utilization }
        })
        .collect();
    Ok(UtilizationHistory { days: day_texts(&a.days), project_id: a.project_id, counters: series })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn the_window_ends_today_in_bangkok_and_begins_at_its_midnight() {
        let (days, start) = window(at("2025-06-15T03:00:00Z"), 90);
        assert_eq!(days.len(), 90);
        assert_eq!(days.last().unwrap().to_string(), "2025-06-15");
        assert_eq!(days[0].to_string(), "2025-03-18");
        assert_eq!(start, at("2025-03-17T17:00:00Z").timestamp_millis());
        // 23:30 UTC is the next day in Bangkok
        let (days, _) = window(at("2025-06-15T23:30:00Z"), 1);
        assert_eq!(days.iter().map(|d| d.to_string()).collect::<Vec<_>>(), ["2025-06-16"]);
    }

    #[test]
    fn every_day_of_a_leap_year_is_a_fixed_length_from_the_first() {
        // the SQL buckets by division by DAY_MS: each Bangkok midnight must be exactly that far from the window's start
        let (days, start) = window(at("2024-12-31T10:00:00Z"), 366);
        assert_eq!(days[0].to_string(), "2024-01-01");
        for (i, d) in days.iter().enumerate() {
            let midnight = chrono_tz::Asia::Bangkok.from_local_datetime(&d.and_time(NaiveTime::MIN)).single().unwrap();
            assert_eq!(midnight.timestamp_millis(), start + i as i64 * DAY_MS, "{d}");
        }
    }

    #[test]
    fn an_instant_falls_in_its_bangkok_day() {
        let (_, start) = window(at("2025-06-15T03:00:00Z"), 3); // 13, 14, 15 June
        assert_eq!(day_index(start, at("2025-06-12T16:59:59.999Z").timestamp_millis()), None);
        assert_eq!(day_index(start, at("2025-06-12T17:00:00Z").timestamp_millis()), Some(0));
        assert_eq!(day_index(start, at("2025-06-13T16:59:59.999Z").timestamp_millis()), Some(0));
        assert_eq!(day_index(start, at("2025-06-13T17:00:00Z").timestamp_millis()), Some(1));
        assert_eq!(day_index(start, at("2025-06-15T16:59:59Z").timestamp_millis()), Some(2));
    }

    #[test]
    fn the_highest_sequence_carries_over_days_without_numbers() {
        assert_eq!(running_highest(5, 0, &[]), [0, 0, 0, 0, 0]);
        assert_eq!(running_highest(5, 7, &[(3, 9), (1, 8)]), [7, 8, 8, 9, 9]);
        // a lower sequence later (after a reset) never lowers the highest issued
        assert_eq!(running_highest(4, 0, &[(0, 5), (2, 2), (2, 3)]), [5, 5, 5, 5]);
    }
}
