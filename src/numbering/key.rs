//! The counter key a template implies (docs/rules/numbering.md#counter-keys).

use serde::{Deserialize, Serialize};

use super::period::Period;
use super::period_key::PeriodKey;
use super::template::KeyParts;

/// Ids of the parties of a request; a part the request does not supply may be 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PartIds {
    pub originator: i64,
    pub recipient: i64,
    pub sub_type: i64,
    pub rfa_type: i64,
    pub discipline: i64,
}

/// Identifies one counter row. Parts the template does not show are 0 (never NULL), so the
/// counter is shared across them and two counters cannot render the same number.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CounterKey {
    pub project_id: i64,
    /// `corr_type_id` in JSON: the name seven years of audit rows (and their hash chains) and the witnesses hold.
    #[serde(rename = "corr_type_id")]
    pub correspondence_type_id: i64,
    pub originator_id: i64,
    pub recipient_id: i64,
    pub sub_type_id: i64,
    pub rfa_type_id: i64,
    pub discipline_id: i64,
    pub period: PeriodKey,
}

impl CounterKey {
    pub fn new(project_id: i64, correspondence_type_id: i64, parts: KeyParts, ids: &PartIds, period: &Period) -> CounterKey {
        let pick = |shown: bool, id: i64| if shown { id } else { 0 };
        CounterKey {
            project_id,
            correspondence_type_id,
            originator_id: pick(parts.originator, ids.originator),
            recipient_id: pick(parts.recipient, ids.recipient),
            sub_type_id: pick(parts.sub_type, ids.sub_type),
            rfa_type_id: pick(parts.rfa_type, ids.rfa_type),
            discipline_id: pick(parts.discipline, ids.discipline),
            period: PeriodKey::of(period),
        }
    }

    /// Name of the distributed / in-process lock for this counter.
    pub fn lock_name(&self) -> String {
        format!(
            "docnum:{}:{}:{}:{}:{}:{}:{}:{}",
            self.project_id,
            self.correspondence_type_id,
            self.originator_id,
            self.recipient_id,
            self.sub_type_id,
            self.rfa_type_id,
            self.discipline_id,
            self.period
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::{system_default, ResetScope, Template, SYSTEM_DEFAULT_TEMPLATE};
    use super::*;

    const IDS: PartIds = PartIds { originator: 11, recipient: 12, sub_type: 13, rfa_type: 14, discipline: 15 };

    fn key(src: &str, scope: ResetScope) -> CounterKey {
        let t = Template::parse(src).unwrap();
        let period = Period::of(scope, 2025, 3, 10);
        CounterKey::new(1, 2, t.key_parts(), &IDS, &period)
    }

    #[test]
    fn letter_key_has_originator_and_recipient() {
        let k = key(SYSTEM_DEFAULT_TEMPLATE, ResetScope::Yearly);
        assert_eq!((k.originator_id, k.recipient_id, k.sub_type_id, k.rfa_type_id, k.discipline_id), (11, 12, 0, 0, 0));
        assert_eq!(k.lock_name(), "docnum:1:2:11:12:0:0:0:YEAR_2025");
    }

    #[test]
    fn rfa_key_is_shared_by_originators() {
        let (src, scope) = system_default("RFA");
        let k = key(src, scope);
        assert_eq!((k.originator_id, k.recipient_id, k.sub_type_id, k.rfa_type_id, k.discipline_id), (0, 0, 0, 14, 15));
        assert_eq!(k.lock_name(), "docnum:1:2:0:0:0:14:15:NONE");
    }

    #[test]
    fn transmittal_key_adds_sub_type_and_monthly_period() {
        let k = key("{ORIGINATOR}-{RECIPIENT}-{SUB_TYPE}-{SEQ:4}-{MONTH}{YEAR:A.D.}", ResetScope::Monthly);
        assert_eq!((k.originator_id, k.recipient_id, k.sub_type_id, k.rfa_type_id, k.discipline_id), (11, 12, 13, 0, 0));
        assert_eq!(k.period.to_string(), "MONTH_2025_03");
    }

    #[test]
    fn a_contract_counter_is_keyed_by_its_contract() {
        let t = Template::parse("{PROJECT}-{CONTRACT}-{CORR_TYPE}-{SEQ:4}").unwrap();
        let key = |contract| CounterKey::new(1, 2, t.key_parts(), &IDS, &Period::of(ResetScope::Contract, 2025, 3, 10).of_contract(contract));
        assert_eq!(key(7).lock_name(), "docnum:1:2:0:0:0:0:0:CONTRACT_7");
        assert_ne!(key(7), key(8));
        // the contract is no part column: shown with another reset, one counter serves every contract
        let yearly = CounterKey::new(1, 2, t.key_parts(), &IDS, &Period::of(ResetScope::Yearly, 2025, 3, 10).of_contract(7));
        assert_eq!(yearly.period.to_string(), "YEAR_2025");
    }
}
