//! The counter key a template implies (docs/rules/numbering.md#counter-keys).

use serde::{Deserialize, Serialize};

use super::ids::{CorrespondenceTypeId, DisciplineId, OrganizationId, ProjectId, RfaTypeId, SubTypeId};
use super::period::Period;
use super::period_key::PeriodKey;
use super::template::KeyParts;

/// Ids of the parties of a request; a part the request does not supply may be 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PartIds {
    pub originator: OrganizationId,
    pub recipient: OrganizationId,
    pub sub_type: SubTypeId,
    pub rfa_type: RfaTypeId,
    pub discipline: DisciplineId,
}

/// Identifies one counter row. Parts the template does not show are 0 (never NULL), so the
/// counter is shared across them and two counters cannot render the same number.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CounterKey {
    pub project_id: ProjectId,
    /// `corr_type_id` in JSON: the name seven years of audit rows (and their hash chains) and the witnesses hold.
    #[serde(rename = "corr_type_id")]
    pub correspondence_type_id: CorrespondenceTypeId,
    pub originator_id: OrganizationId,
    pub recipient_id: OrganizationId,
    pub sub_type_id: SubTypeId,
    pub rfa_type_id: RfaTypeId,
    pub discipline_id: DisciplineId,
    pub period: PeriodKey,
}

impl CounterKey {
    pub fn new(project_id: ProjectId, correspondence_type_id: CorrespondenceTypeId, parts: KeyParts, ids: &PartIds, period: &Period) -> CounterKey {
        fn pick<T: Default>(shown: bool, id: T) -> T {
            if shown {
                id
            } else {
                T::default()
            }
        }
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
    use crate::numbering::ContractId;

    const IDS: PartIds = PartIds {
        originator: OrganizationId(11),
        recipient: OrganizationId(12),
        sub_type: SubTypeId(13),
        rfa_type: RfaTypeId(14),
        discipline: DisciplineId(15),
    };

    fn key(src: &str, scope: ResetScope) -> CounterKey {
        let t = Template::parse(src).unwrap();
        let period = Period::of(scope, 2025, 3, 10);
        CounterKey::new(ProjectId(1), CorrespondenceTypeId(2), t.key_parts(), &IDS, &period)
    }

    #[test]
    fn letter_key_has_originator_and_recipient() {
        let k = key(SYSTEM_DEFAULT_TEMPLATE, ResetScope::Yearly);
        assert_eq!((k.originator_id.0, k.recipient_id.0, k.sub_type_id.0, k.rfa_type_id.0, k.discipline_id.0), (11, 12, 0, 0, 0));
        assert_eq!(k.lock_name(), "docnum:1:2:11:12:0:0:0:YEAR_2025");
    }

    #[test]
    fn rfa_key_is_shared_by_originators() {
        let (src, scope) = system_default("RFA");
        let k = key(src, scope);
        assert_eq!((k.originator_id.0, k.recipient_id.0, k.sub_type_id.0, k.rfa_type_id.0, k.discipline_id.0), (0, 0, 0, 14, 15));
        assert_eq!(k.lock_name(), "docnum:1:2:0:0:0:14:15:NONE");
    }

    #[test]
    fn transmittal_key_adds_sub_type_and_monthly_period() {
        let k = key("{ORIGINATOR}-{RECIPIENT}-{SUB_TYPE}-{SEQ:4}-{MONTH}{YEAR:A.D.}", ResetScope::Monthly);
        assert_eq!((k.originator_id.0, k.recipient_id.0, k.sub_type_id.0, k.rfa_type_id.0, k.discipline_id.0), (11, 12, 13, 0, 0));
        assert_eq!(k.period.to_string(), "MONTH_2025_03");
    }

    #[test]
    fn a_contract_counter_is_keyed_by_its_contract() {
        let t = Template::parse("{PROJECT}-{CONTRACT}-{CORR_TYPE}-{SEQ:4}").unwrap();
        let key = |contract| {
            CounterKey::new(
                ProjectId(1),
                CorrespondenceTypeId(2),
                t.key_parts(),
                &IDS,
                &Period::of(ResetScope::Contract, 2025, 3, 10).of_contract(contract),
            )
        };
        assert_eq!(key(ContractId(7)).lock_name(), "docnum:1:2:0:0:0:0:0:CONTRACT_7");
        assert_ne!(key(ContractId(7)), key(ContractId(8)));
        // the contract is no part column: shown with another reset, one counter serves every contract
        let yearly = CounterKey::new(
            ProjectId(1),
            CorrespondenceTypeId(2),
            t.key_parts(),
            &IDS,
            &Period::of(ResetScope::Yearly, 2025, 3, 10).of_contract(ContractId(7)),
        );
        assert_eq!(yearly.period.to_string(), "YEAR_2025");
    }
}
