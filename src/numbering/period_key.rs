//! A counter's period as stored in its row (`YEAR_2025`, `MONTH_2025_01`, `NONE`, `FY_2570`, `CONTRACT_12`), parsed
//! once.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::ids::ContractId;
use super::period::{Period, ResetScope};

/// Ordered as the enum is declared (any one order serves: keys are sorted only so that every instance locks rows in the
/// same order). Written and read as its text, in JSON as in the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PeriodKey {
    Year(i32),
    Month(i32, u32),
    /// A counter that never resets: one key, whatever the year.
    None,
    /// A fiscal year by the A.D. year in which it ends; its text names the B.E. year (`FY_2570` = 2027).
    FiscalYear(i32),
    /// A contract's own sequence, by the contract's id: never resets.
    Contract(ContractId),
}

impl PeriodKey {
    /// The key of a period: the same text as [`Period::key`].
    pub fn of(p: &Period) -> PeriodKey {
        match p.scope {
            ResetScope::Yearly => PeriodKey::Year(p.year),
            ResetScope::Monthly => PeriodKey::Month(p.year, p.month),
            ResetScope::None => PeriodKey::None,
            ResetScope::FiscalYear => PeriodKey::FiscalYear(p.fiscal_year),
            ResetScope::Contract => PeriodKey::Contract(p.contract_id),
        }
    }

    /// Reads a stored period; only the exact text `Period::key` writes is accepted.
    pub fn parse(text: &str) -> Option<PeriodKey> {
        let mut parts = text.split('_');
        let key = match (parts.next()?, parts.next(), parts.next(), parts.next()) {
            ("NONE", None, None, None) => PeriodKey::None,
            ("YEAR", Some(y), None, None) => PeriodKey::Year(y.parse().ok()?),
            ("FY", Some(y), None, None) => PeriodKey::FiscalYear(y.parse::<i32>().ok()?.checked_sub(543)?),
            ("CONTRACT", Some(id), None, None) => PeriodKey::Contract(ContractId(id.parse().ok().filter(|id| *id > 0)?)),
            ("MONTH", Some(y), Some(m), None) => PeriodKey::Month(y.parse().ok()?, m.parse().ok().filter(|m| (1..=12).contains(m))?),
            _ => return Option::None,
        };
        (key.to_string() == text).then_some(key)
    }

    pub fn scope(&self) -> ResetScope {
        match self {
            PeriodKey::Year(_) => ResetScope::Yearly,
            PeriodKey::Month(..) => ResetScope::Monthly,
            PeriodKey::None => ResetScope::None,
            PeriodKey::FiscalYear(_) => ResetScope::FiscalYear,
            PeriodKey::Contract(_) => ResetScope::Contract,
        }
    }

    /// The A.D. calendar year the key names (none for a counter that never resets or a fiscal year, which spans two).
    pub fn year(&self) -> Option<i32> {
        match self {
            PeriodKey::Year(y) | PeriodKey::Month(y, _) => Some(*y),
            PeriodKey::None | PeriodKey::FiscalYear(_) | PeriodKey::Contract(_) => Option::None,
        }
    }

    /// The id of the contract the key names (contract counters only).
    pub fn contract_id(&self) -> Option<ContractId> {
        match self {
            PeriodKey::Contract(id) => Some(*id),
            _ => Option::None,
        }
    }

    /// The A.D. year in which the fiscal year the key names ends (fiscal-year counters only).
    pub fn fiscal_year(&self) -> Option<i32> {
        match self {
            PeriodKey::FiscalYear(y) => Some(*y),
            _ => Option::None,
        }
    }

    /// The month the key names (monthly counters only).
    pub fn month(&self) -> Option<u32> {
        match self {
            PeriodKey::Month(_, m) => Some(*m),
            _ => Option::None,
        }
    }
}

impl TryFrom<String> for PeriodKey {
    type Error = UnknownPeriod;
    fn try_from(text: String) -> Result<PeriodKey, UnknownPeriod> {
        PeriodKey::parse(&text).ok_or(UnknownPeriod(text))
    }
}

/// A stored period that is not one [`PeriodKey`] writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPeriod(pub String);

impl fmt::Display for UnknownPeriod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a counter period: {:?}", self.0)
    }
}

impl std::error::Error for UnknownPeriod {}

impl Serialize for PeriodKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PeriodKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PeriodKey, D::Error> {
        PeriodKey::try_from(String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for PeriodKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeriodKey::Year(y) => write!(f, "YEAR_{y}"),
            PeriodKey::Month(y, m) => write!(f, "MONTH_{y}_{m:02}"),
            PeriodKey::None => f.write_str("NONE"),
            PeriodKey::FiscalYear(y) => write!(f, "FY_{}", y + 543),
            PeriodKey::Contract(id) => write!(f, "CONTRACT_{id}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_period_key_writes() {
        for scope in [ResetScope::Yearly, ResetScope::Monthly, ResetScope::None, ResetScope::FiscalYear, ResetScope::Contract] {
            let p = Period::of(scope, 2025, 3, 10).of_contract(ContractId(7));
            let k = PeriodKey::of(&p);
            assert_eq!(k.to_string(), p.key());
            assert_eq!(PeriodKey::parse(&p.key()), Some(k));
            assert_eq!(k.scope(), scope);
        }
    }

    #[test]
    fn json_holds_the_text() {
        let k = PeriodKey::Month(2025, 3);
        assert_eq!(serde_json::to_string(&k).unwrap(), "\"MONTH_2025_03\"");
        assert_eq!(serde_json::from_str::<PeriodKey>("\"FY_2570\"").unwrap(), PeriodKey::FiscalYear(2027));
        assert!(serde_json::from_str::<PeriodKey>("\"MONTH_2025_3\"").is_err());
        assert_eq!(PeriodKey::try_from("YEAR_x".to_string()), Err(UnknownPeriod("YEAR_x".into())));
    }

    #[test]
    fn reads_year_and_month() {
        assert_eq!(PeriodKey::parse("YEAR_2025").map(|k| (k.year(), k.month())), Some((Some(2025), None)));
        assert_eq!(PeriodKey::parse("MONTH_2026_01").map(|k| (k.year(), k.month())), Some((Some(2026), Some(1))));
        assert_eq!(PeriodKey::parse("NONE").map(|k| (k.year(), k.month())), Some((None, None)));
        assert_eq!(PeriodKey::parse("FY_2570").map(|k| (k.fiscal_year(), k.year(), k.month())), Some((Some(2027), None, None)));
        assert_eq!(
            PeriodKey::parse("CONTRACT_12").map(|k| (k.contract_id(), k.year(), k.scope())),
            Some((Some(ContractId(12)), None, ResetScope::Contract))
        );
        assert_eq!(PeriodKey::parse("YEAR_2025").and_then(|k| k.contract_id()), None);
    }

    #[test]
    fn refuses_other_text() {
        for bad in [
            "",
            "YEAR",
            "YEAR_",
            "YEAR_x",
            "MONTH_2025",
            "MONTH_2025_1",
            "MONTH_2025_13",
            "MONTH_2025_00",
            "NONE_2025",
            "year_2025",
            "YEAR_2025_01",
            "FY",
            "FY_",
            "FY_+2570",
            "FY_2570_10",
            "fy_2570",
            "FY_02570",
            "CONTRACT",
            "CONTRACT_",
            "CONTRACT_x",
            "CONTRACT_0",
            "CONTRACT_012",
            "CONTRACT_-3",
            "CONTRACT_+3",
            "CONTRACT_1_2",
            "contract_12",
            "CONTRACT_99999999999999999999",
        ] {
            assert_eq!(PeriodKey::parse(bad), None, "{bad}");
        }
    }
}
