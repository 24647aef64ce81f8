//! Reset periods (SPEC §4), computed in Asia/Bangkok time.

use chrono::{DateTime, Datelike, Utc};
use serde::{Deserialize, Serialize};

/// When a counter starts again at 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub enum ResetScope {
    #[default]
    Yearly,
    Monthly,
    /// Never resets: one project-long sequence.
    None,
}

impl ResetScope {
    pub fn as_str(&self) -> &'static str {
        match self {
            ResetScope::Yearly => "YEARLY",
            ResetScope::Monthly => "MONTHLY",
            ResetScope::None => "NONE",
        }
    }

    pub fn parse(s: &str) -> Option<ResetScope> {
        match s.trim().to_ascii_uppercase().as_str() {
            "YEARLY" => Some(ResetScope::Yearly),
            "MONTHLY" => Some(ResetScope::Monthly),
            "NONE" => Some(ResetScope::None),
            _ => Option::None,
        }
    }
}

impl std::fmt::Display for ResetScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A.D. year and month (1–12) of `instant` on the Bangkok calendar.
pub fn bangkok_date(instant: DateTime<Utc>) -> (i32, u32) {
    let local = instant.with_timezone(&chrono_tz::Asia::Bangkok);
    (local.year(), local.month())
}

/// The counter period of an instant. `year`/`month` are kept for every scope because
/// `{YEAR}`/`{MONTH}` render the issue date even when the counter never resets.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Period {
    pub scope: ResetScope,
    pub year: i32,
    pub month: u32,
}

impl Period {
    pub fn at(scope: ResetScope, instant: DateTime<Utc>) -> Period {
        let (year, month) = bangkok_date(instant);
        Period { scope, year, month }
    }

    /// The period as stored in the counter row: `YEAR_2025`, `MONTH_2025_01` or `NONE`
    /// (all never-resetting periods share one key, whatever the year).
    pub fn key(&self) -> String {
        match self.scope {
            ResetScope::Yearly => format!("YEAR_{}", self.year),
            ResetScope::Monthly => format!("MONTH_{}_{:02}", self.year, self.month),
            ResetScope::None => "NONE".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap()
    }

    #[test]
    fn bangkok_is_utc_plus_7() {
        assert_eq!(bangkok_date(utc(2025, 12, 31, 17, 30, 0)), (2026, 1));
        assert_eq!(bangkok_date(utc(2025, 12, 31, 16, 59, 59)), (2025, 12));
        assert_eq!(bangkok_date(utc(2025, 1, 31, 17, 0, 0)), (2025, 2));
    }

    #[test]
    fn new_year_in_bangkok_is_a_new_period() {
        let p = Period::at(ResetScope::Yearly, utc(2025, 12, 31, 17, 30, 0));
        assert_eq!(p.key(), "YEAR_2026");
        assert_eq!(p.year + 543, 2569);
        let m = Period::at(ResetScope::Monthly, utc(2025, 12, 31, 17, 30, 0));
        assert_eq!(m.key(), "MONTH_2026_01");
        assert_eq!(Period::at(ResetScope::Monthly, utc(2025, 11, 15, 0, 0, 0)).key(), "MONTH_2025_11");
    }

    #[test]
    fn none_scope_shares_one_key_but_keeps_the_date() {
        let a = Period::at(ResetScope::None, utc(2025, 6, 1, 0, 0, 0));
        let b = Period::at(ResetScope::None, utc(2026, 6, 1, 0, 0, 0));
        assert_eq!((a.key(), b.key()), ("NONE".to_string(), "NONE".to_string()));
        assert_eq!((a.year, b.year), (2025, 2026));
    }

    #[test]
    fn scope_text_round_trips() {
        for s in [ResetScope::Yearly, ResetScope::Monthly, ResetScope::None] {
            assert_eq!(ResetScope::parse(s.as_str()), Some(s));
            assert_eq!(ResetScope::parse(&s.as_str().to_lowercase()), Some(s));
        }
        assert_eq!(ResetScope::parse("YEAR"), None);
        assert_eq!(ResetScope::default(), ResetScope::Yearly);
    }
}
