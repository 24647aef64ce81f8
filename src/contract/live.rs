//! What the live event stream (`GET /api/v1/events`, server-sent events) carries: one small JSON object per change,
//! enough for a page to know what to fetch again. Never the data itself beyond a counter's last number.

use serde::{Deserialize, Serialize};

use crate::numbering::{CorrespondenceTypeId, CounterId, DisciplineId, OrganizationId, ProjectId, RfaTypeId, SubTypeId};

/// The stream's path (under the REST API's prefix).
pub const EVENTS_PATH: &str = "/api/v1/events";

/// A change another tab or instance made. `kind` names it: `counter`, `reset`, `template`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum LiveEvent {
    /// A counter moved (numbers issued, a reset approved, an override): coalesced, the latest value only.
    #[serde(rename_all = "camelCase")]
    Counter {
        project_id: ProjectId,
        counter_id: CounterId,
        correspondence_type_id: CorrespondenceTypeId,
        /// The key's parts: 0 when the template does not show the part.
        originator_id: OrganizationId,
        recipient_id: OrganizationId,
        sub_type_id: SubTypeId,
        rfa_type_id: RfaTypeId,
        discipline_id: DisciplineId,
        /// The reset period (`YEAR_2568`, `ALL`…).
        period: String,
        last_number: i64,
    },
    /// A counter reset was requested, approved or rejected.
    #[serde(rename_all = "camelCase")]
    Reset { project_id: ProjectId, counter_id: CounterId, request_id: String, state: String },
    /// A template was saved, rolled back or retired: `correspondence_type_id` None is the project's default.
    #[serde(rename_all = "camelCase")]
    Template { project_id: ProjectId, correspondence_type_id: Option<CorrespondenceTypeId> },
}

#[cfg(test)]
impl LiveEvent {
    /// A counter event of a key that shows no party (type 1, period `ALL`), for tests.
    pub(crate) fn bare_counter(project_id: ProjectId, counter_id: CounterId, last_number: i64) -> LiveEvent {
        LiveEvent::Counter {
            project_id,
            counter_id,
            correspondence_type_id: CorrespondenceTypeId(1),
            originator_id: OrganizationId::NONE,
            recipient_id: OrganizationId::NONE,
            sub_type_id: SubTypeId::NONE,
            rfa_type_id: RfaTypeId::NONE,
            discipline_id: DisciplineId::NONE,
            period: "ALL".into(),
            last_number,
        }
    }
}

impl LiveEvent {
    pub fn project_id(&self) -> ProjectId {
        match self {
            LiveEvent::Counter { project_id, .. } | LiveEvent::Reset { project_id, .. } | LiveEvent::Template { project_id, .. } => *project_id,
        }
    }

    /// The SSE event name (`event:`), so a browser listens per kind.
    pub fn kind(&self) -> &'static str {
        match self {
            LiveEvent::Counter { .. } => "counter",
            LiveEvent::Reset { .. } => "reset",
            LiveEvent::Template { .. } => "template",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_small_json_named_by_kind() {
        let e = LiveEvent::Template { project_id: ProjectId(3), correspondence_type_id: None };
        assert_eq!(serde_json::to_string(&e).unwrap(), r#"{"kind":"template","projectId":3,"correspondenceTypeId":null}"#);
        let back: LiveEvent = serde_json::from_str(r#"{"kind":"reset","projectId":1,"counterId":2,"requestId":"x","state":"PENDING"}"#).unwrap();
        assert_eq!(back.kind(), "reset");
        assert_eq!(back.project_id(), ProjectId(1));
    }
}
