//! Reset periods (docs/rules/numbering.md#reset-scopes-and-periods), computed in Asia/Bangkok time.

use chrono::{DateTime, Datelike, Utc};
use serde::{Deserialize, Serialize};

use super::ids::ContractId;

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
    /// The Thai government budget year: from the project's first month to the day before it a year later.
    FiscalYear,
    /// Never resets, one sequence per contract of the project: the period names the contract (`CONTRACT_<id>`).
    Contract,
}

/// The first month of a fiscal year when the project sets none: the Thai government's 1 October.
pub const DEFAULT_FISCAL_FIRST_MONTH: u32 = 10;

impl ResetScope {
    pub fn as_str(&self) -> &'static str {
        match self {
            ResetScope::Yearly => "YEARLY",
            ResetScope::Monthly => "MONTHLY",
            ResetScope::None => "NONE",
            ResetScope::FiscalYear => "FISCAL_YEAR",
            ResetScope::Contract => "CONTRACT",
        }
    }

    pub fn parse(s: &str) -> Option<ResetScope> {
        match s.trim().to_ascii_uppercase().as_str() {
            "YEARLY" => Some(ResetScope::Yearly),
            "MONTHLY" => Some(ResetScope::Monthly),
            "NONE" => Some(ResetScope::None),
            "FISCAL_YEAR" => Some(ResetScope::FiscalYear),
            "CONTRACT" => Some(ResetScope::Contract),
            _ => Option::None,
        }
    }
}

/// Why an earlier period cannot be numbered in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackdateError {
    /// Only calendar and fiscal years close; a monthly or never-resetting counter has no earlier year to continue.
    NotByYear(ResetScope),
    /// The year asked for is the current period or later.
    NotEarlier { asked: i32, current: i32 },
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

/// The A.D. year in which the fiscal year holding (`year`, `month`) ends, for a fiscal year that starts in
/// `first_month` (1–12; out of range is read as October). FY 2570 (= A.D. 2027) runs Oct 2026 – Sep 2027.
pub fn fiscal_year(year: i32, month: u32, first_month: u32) -> i32 {
    let first = if (1..=12).contains(&first_month) { first_month } else { DEFAULT_FISCAL_FIRST_MONTH };
    if first > 1 && month >= first {
        year + 1
    } else {
        year
    }
}

/// The counter period of an instant. `year`/`month`/`fiscal_year` are kept for every scope because
/// `{YEAR}`/`{MONTH}`/`{FY}` render the issue date even when the counter does not reset by them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Period {
    pub scope: ResetScope,
    pub year: i32,
    pub month: u32,
    /// A.D. year in which the fiscal year ends.
    pub fiscal_year: i32,
    /// The contract whose sequence a `CONTRACT` counter is (0 until the request's contract is known; unused by the
    /// other scopes).
    #[serde(default)]
    pub contract_id: ContractId,
}

impl Period {
    /// The period of `instant` with fiscal years starting in October.
    pub fn at(scope: ResetScope, instant: DateTime<Utc>) -> Period {
        Period::at_in(scope, instant, DEFAULT_FISCAL_FIRST_MONTH)
    }

    /// The period of `instant` for a project whose fiscal year starts in `first_month`.
    pub fn at_in(scope: ResetScope, instant: DateTime<Utc>, first_month: u32) -> Period {
        let (year, month) = bangkok_date(instant);
        Period::of(scope, year, month, first_month)
    }

    pub fn of(scope: ResetScope, year: i32, month: u32, first_month: u32) -> Period {
        Period { scope, year, month, fiscal_year: fiscal_year(year, month, first_month), contract_id: ContractId::NONE }
    }

    /// The same period for the request's contract: a `CONTRACT` counter's key names it.
    pub fn of_contract(self, contract_id: ContractId) -> Period {
        Period { contract_id, ..self }
    }

    /// The earlier period `asked` names (A.D., or B.E. above 2400): a closed calendar year of a yearly counter, or a
    /// closed fiscal year (by the year it ends in) of a fiscal-year counter. A back-dated number is dated in the last
    /// month of that period.
    pub fn earlier(&self, asked: i32, first_month: u32) -> Result<Period, BackdateError> {
        let ad = if asked > 2400 { asked - 543 } else { asked };
        let first = if (1..=12).contains(&first_month) { first_month } else { DEFAULT_FISCAL_FIRST_MONTH };
        let (current, last_month) = match self.scope {
            ResetScope::Yearly => (self.year, 12),
            ResetScope::FiscalYear => (self.fiscal_year, if first > 1 { first - 1 } else { 12 }),
            scope => return Err(BackdateError::NotByYear(scope)),
        };
        if ad >= current {
            return Err(BackdateError::NotEarlier { asked, current });
        }
        Ok(Period::of(self.scope, ad, last_month, first))
    }

    /// The keys of the current period of every scope at `instant` (fiscal years starting in October): what
    /// "the counters in use now" means to the gauges.
    pub fn current_keys(instant: DateTime<Utc>) -> [String; 4] {
        [ResetScope::Yearly, ResetScope::Monthly, ResetScope::None, ResetScope::FiscalYear].map(|s| Period::at(s, instant).key())
    }

    /// The period as stored in the counter row: `YEAR_2025`, `MONTH_2025_01`, `FY_2570`, `NONE` (all never-resetting
    /// periods share one key, whatever the year) or `CONTRACT_12` (a contract's own sequence, by the contract's id).
    pub fn key(&self) -> String {
        match self.scope {
            ResetScope::Yearly => format!("YEAR_{}", self.year),
            ResetScope::Monthly => format!("MONTH_{}_{:02}", self.year, self.month),
            ResetScope::None => "NONE".to_string(),
            ResetScope::FiscalYear => format!("FY_{}", self.fiscal_year + 543),
            ResetScope::Contract => format!("CONTRACT_{}", self.contract_id),
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

    fn bangkok_ms(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32, ms: u32) -> DateTime<Utc> {
        chrono_tz::Asia::Bangkok.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap().with_timezone(&Utc) + chrono::Duration::milliseconds(ms.into())
    }

    #[test]
    fn fiscal_year_turns_on_1_october_in_bangkok() {
        let last = Period::at(ResetScope::FiscalYear, bangkok_ms(2026, 9, 30, 23, 59, 59, 999));
        let first = Period::at(ResetScope::FiscalYear, bangkok_ms(2026, 10, 1, 0, 0, 0, 0));
        assert_eq!((last.key(), last.fiscal_year, last.year, last.month), ("FY_2569".to_string(), 2026, 2026, 9));
        assert_eq!((first.key(), first.fiscal_year, first.year, first.month), ("FY_2570".to_string(), 2027, 2026, 10));
        // 1 Oct 00:00 Bangkok is still 30 Sep in UTC
        assert_eq!(bangkok_ms(2026, 10, 1, 0, 0, 0, 0), utc(2026, 9, 30, 17, 0, 0));
        // the whole of FY 2570 is one period, to 30 Sep 2027
        assert_eq!(Period::at(ResetScope::FiscalYear, bangkok_ms(2027, 9, 30, 23, 59, 59, 999)).key(), "FY_2570");
        assert_eq!(Period::at(ResetScope::FiscalYear, bangkok_ms(2027, 1, 1, 0, 0, 0, 0)).key(), "FY_2570");
        assert_eq!(Period::at(ResetScope::FiscalYear, bangkok_ms(2027, 10, 1, 0, 0, 0, 0)).key(), "FY_2571");
        // the other scopes still know the fiscal year (for {FY:BE} in a yearly template)
        assert_eq!(Period::at(ResetScope::Yearly, bangkok_ms(2026, 11, 28, 12, 0, 0, 0)).fiscal_year, 2027);
    }

    #[test]
    fn fiscal_year_with_another_first_month() {
        // a project whose year starts on 1 April: FY 2570 = Apr 2026 – Mar 2027
        let april = |y, mo, d, h, mi, s, ms| Period::at_in(ResetScope::FiscalYear, bangkok_ms(y, mo, d, h, mi, s, ms), 4);
        assert_eq!(april(2026, 3, 31, 23, 59, 59, 999).key(), "FY_2569");
        assert_eq!(april(2026, 4, 1, 0, 0, 0, 0).key(), "FY_2570");
        assert_eq!(april(2027, 3, 31, 23, 59, 59, 999).key(), "FY_2570");
        // October is not a boundary there
        assert_eq!(april(2026, 9, 30, 23, 59, 59, 999).key(), april(2026, 10, 1, 0, 0, 0, 0).key());
        // a year starting in January is the calendar year
        let january = |instant| Period::at_in(ResetScope::FiscalYear, instant, 1);
        assert_eq!(january(bangkok_ms(2026, 12, 31, 23, 59, 59, 999)).key(), "FY_2569");
        assert_eq!(january(bangkok_ms(2027, 1, 1, 0, 0, 0, 0)).key(), "FY_2570");
        // out of range reads as October
        assert_eq!(fiscal_year(2026, 10, 0), 2027);
        assert_eq!(fiscal_year(2026, 10, 13), 2027);
    }

    #[test]
    fn an_earlier_closed_year_is_its_own_period() {
        let now = bangkok_ms(2026, 11, 28, 12, 0, 0, 0);
        let fy = Period::at(ResetScope::FiscalYear, now);
        // FY 2569 closed on 30 Sep 2026: B.E. or A.D., dated in its last month
        for asked in [2569, 2026] {
            let p = fy.earlier(asked, 10).unwrap();
            assert_eq!((p.key(), p.year, p.month, p.fiscal_year), ("FY_2569".to_string(), 2026, 9, 2026));
        }
        assert_eq!(fy.earlier(2570, 10), Err(BackdateError::NotEarlier { asked: 2570, current: 2027 }));
        assert_eq!(fy.earlier(2571, 10), Err(BackdateError::NotEarlier { asked: 2571, current: 2027 }));
        // a fiscal year from April: FY 2569 ended in March 2026
        let april = Period::at_in(ResetScope::FiscalYear, now, 4);
        assert_eq!(april.earlier(2569, 4).map(|p| (p.key(), p.year, p.month)), Ok(("FY_2569".to_string(), 2026, 3)));
        let year = Period::at(ResetScope::Yearly, now);
        assert_eq!(year.earlier(2568, 10).map(|p| (p.key(), p.month)), Ok(("YEAR_2025".to_string(), 12)));
        assert_eq!(year.earlier(2569, 10), Err(BackdateError::NotEarlier { asked: 2569, current: 2026 }));
        assert_eq!(Period::at(ResetScope::Monthly, now).earlier(2568, 10), Err(BackdateError::NotByYear(ResetScope::Monthly)));
        assert_eq!(Period::at(ResetScope::None, now).earlier(2568, 10), Err(BackdateError::NotByYear(ResetScope::None)));
        assert_eq!(Period::at(ResetScope::Contract, now).earlier(2568, 10), Err(BackdateError::NotByYear(ResetScope::Contract)));
    }

    #[test]
    fn a_contract_period_is_the_contract_whatever_the_date() {
        let a = Period::at(ResetScope::Contract, utc(2025, 6, 1, 0, 0, 0)).of_contract(ContractId(12));
        let b = Period::at(ResetScope::Contract, utc(2031, 1, 1, 0, 0, 0)).of_contract(ContractId(12));
        assert_eq!((a.key(), b.key()), ("CONTRACT_12".to_string(), "CONTRACT_12".to_string()));
        assert_eq!(Period::at(ResetScope::Contract, utc(2025, 6, 1, 0, 0, 0)).of_contract(ContractId(13)).key(), "CONTRACT_13");
        // the date is kept for {YEAR:B.E.} in a contract template
        assert_eq!((a.year, b.year), (2025, 2031));
        // the contract means nothing to the other scopes
        assert_eq!(Period::at(ResetScope::Yearly, utc(2025, 6, 1, 0, 0, 0)).of_contract(ContractId(12)).key(), "YEAR_2025");
    }

    #[test]
    fn scope_text_round_trips() {
        for s in [ResetScope::Yearly, ResetScope::Monthly, ResetScope::None, ResetScope::FiscalYear, ResetScope::Contract] {
            assert_eq!(ResetScope::parse(s.as_str()), Some(s));
            assert_eq!(ResetScope::parse(&s.as_str().to_lowercase()), Some(s));
        }
        assert_eq!(ResetScope::parse("YEAR"), None);
        assert_eq!(ResetScope::default(), ResetScope::Yearly);
    }
}
