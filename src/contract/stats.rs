//! The numbering statistics: numbers issued per Bangkok day and correspondence type, and the
//! utilization of the current period's counters at the end of each day — what `/charts` draws and
//! `GET /document-numbering/stats/…` answers.

use serde::{Deserialize, Serialize};

use super::{CorrespondenceTypeId, CounterView, ProjectId};
use crate::numbering::CounterId;

/// Days a statistics answer covers unless asked otherwise.
pub const DEFAULT_STATS_DAYS: u32 = 90;
/// The most days one answer covers (a leap year).
pub const MAX_STATS_DAYS: u32 = 366;
/// Counters a utilization answer draws unless asked otherwise: the fullest of the current period.
pub const DEFAULT_STATS_COUNTERS: u32 = 10;
/// The most counters one utilization answer draws.
pub const MAX_STATS_COUNTERS: u32 = 50;

/// What a statistics answer covers: the last `days` Bangkok days ending today (default 90), of one project or of
/// every project the caller may see; for utilization, one counter or the fullest `limit` (default 10).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StatsQuery {
    pub days: Option<u32>,
    pub project_id: Option<ProjectId>,
    pub counter_id: Option<CounterId>,
    pub limit: Option<u32>,
}

/// Numbers issued (every status: a reservation takes its number for good) per Bangkok day and correspondence type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DailyIssued {
    /// The days, `YYYY-MM-DD` (A.D., Asia/Bangkok), oldest first; the last is today.
    pub days: Vec<String>,
    /// The project counted, or none: every project the caller may see.
    pub project_id: Option<ProjectId>,
    /// One series per type that issued a number in those days, by code.
    pub types: Vec<TypeSeries>,
}

/// One correspondence type's numbers per day, aligned with [`DailyIssued::days`] (0 on a day with none).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TypeSeries {
    pub correspondence_type_id: CorrespondenceTypeId,
    pub correspondence_type_code: String,
    pub correspondence_type_name: String,
    pub counts: Vec<i64>,
}

/// The utilization of counters at the end of each day: the highest sequence issued up to then ÷ the maximum.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UtilizationHistory {
    /// The days, `YYYY-MM-DD` (A.D., Asia/Bangkok), oldest first; the last is today.
    pub days: Vec<String>,
    pub project_id: Option<ProjectId>,
    /// The counters of the current period, fullest first (or the one asked for).
    pub counters: Vec<CounterSeries>,
}

/// One counter (as the counter browser shows it, today) and its values at the end of each day.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CounterSeries {
    pub counter: CounterView,
    /// The highest sequence issued up to the end of each day (0 before the first).
    pub last_sequences: Vec<i64>,
    /// `last_sequences` ÷ the counter's maximum, 0–1.
    pub utilization: Vec<f64>,
}
