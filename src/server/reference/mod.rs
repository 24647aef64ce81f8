//! Reference data (projects, organizations, types, sub-types, RFA types, disciplines): storage, an
//! in-memory snapshot for the hot path, and the resolution of a numbering request's parts.

pub(crate) mod admin;
pub(crate) mod http;
pub(crate) mod store;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Mutex, RwLock};

use crate::contract::messages::ReferenceDetail;
use crate::contract::{ContractItem, OrgItem, ProjectItem, RefItem, ReferenceData, SubTypeItem};
use crate::numbering::normalize_code;
use crate::numbering::{ContractId, CorrespondenceTypeId, DisciplineId, OrganizationId, ProjectId, RfaTypeId, SubTypeId};
use crate::server::clock::Clock;
use crate::server::db::Db;
use crate::server::error::{echo, AppError};
use crate::server::templates::store::StoredTemplate;

/// The reference data and the current templates, read from the database as one snapshot.
pub async fn load_snapshot(db: &Db) -> Result<Snapshot, AppError> {
    let data = store::load_reference_data(db).await?;
    let templates = crate::server::templates::store::load_current(db).await?;
    Ok(Snapshot::build(data, templates))
}

/// What the catalog's services use (reference data, templates, workflow machines): the database, the clock and the
/// reference snapshot. A sub-state of the application's (`FromRef`).
pub(crate) struct Catalog {
    pub(crate) db: Db,
    pub(crate) clock: Arc<Clock>,
    pub(crate) reference: Arc<ReferenceCache>,
    /// The live screens' hub: template changes are announced there.
    pub(crate) events: Arc<crate::server::events::Events>,
}

/// Every reference list, as the pages read them (any logged-in caller).
pub(crate) async fn data_for(state: &Catalog, _caller: &crate::server::auth::Caller) -> Result<ReferenceData, AppError> {
    Ok(state.reference.get().await?.data.clone())
}

/// One reference list by its name in the API (`projects`, `organizations`, `correspondence-types`, `sub-types`,
/// `rfa-types`, `disciplines`, `contracts`), as JSON (any logged-in caller).
pub(crate) async fn list_for(state: &Catalog, _caller: &crate::server::auth::Caller, kind: &str) -> Result<serde_json::Value, AppError> {
    let snapshot = state.reference.get().await?;
    let d = &snapshot.data;
    let value = match kind {
        "projects" => serde_json::to_value::<&Vec<ProjectItem>>(&d.projects),
        "organizations" => serde_json::to_value::<&Vec<OrgItem>>(&d.organizations),
        "correspondence-types" => serde_json::to_value(&d.correspondence_types),
        "sub-types" => serde_json::to_value::<&Vec<SubTypeItem>>(&d.sub_types),
        "rfa-types" => serde_json::to_value(&d.rfa_types),
        "disciplines" => serde_json::to_value(&d.disciplines),
        "contracts" => serde_json::to_value::<&Vec<ContractItem>>(&d.contracts),
        other => return Err(AppError::not_found(ReferenceDetail::UnknownKind { kind: &other.chars().take(40).collect::<String>() })),
    };
    value.map_err(|e| AppError::internal_from("reference data to JSON", e))
}

/// Everything a request needs to resolve its parts, loaded at once (the tables are small).
#[derive(Debug, Default)]
pub struct Snapshot {
    pub data: ReferenceData,
    pub(crate) project_by_id: HashMap<ProjectId, usize>,
    pub(crate) project_by_code: HashMap<String, usize>,
    pub(crate) org_by_id: HashMap<OrganizationId, usize>,
    pub(crate) org_by_code: HashMap<String, usize>,
    pub(crate) members: HashSet<(ProjectId, OrganizationId)>,
    pub(crate) type_by_id: HashMap<CorrespondenceTypeId, usize>,
    pub(crate) type_by_code: HashMap<String, usize>,
    pub(crate) sub_by_id: HashMap<SubTypeId, usize>,
    pub(crate) sub_by_type_number: HashMap<(CorrespondenceTypeId, String), usize>,
    pub(crate) rfa_by_id: HashMap<RfaTypeId, usize>,
    pub(crate) rfa_by_code: HashMap<String, usize>,
    pub(crate) disc_by_id: HashMap<DisciplineId, usize>,
    pub(crate) disc_by_code: HashMap<String, usize>,
    pub(crate) contract_by_id: HashMap<ContractId, usize>,
    /// (project id, code) → contract
    pub(crate) contract_by_code: HashMap<(ProjectId, String), usize>,
    /// (project id, correspondence type id or 0 for the project default) → current template
    pub(crate) templates: HashMap<(ProjectId, CorrespondenceTypeId), StoredTemplate>,
}

fn index<T>(items: &[T], key: impl Fn(&T) -> String) -> HashMap<String, usize> {
    items.iter().enumerate().map(|(i, x)| (key(x), i)).collect()
}
fn index_id<T, Id: std::hash::Hash + Eq>(items: &[T], id: impl Fn(&T) -> Id) -> HashMap<Id, usize> {
    items.iter().enumerate().map(|(i, x)| (id(x), i)).collect()
}

impl Snapshot {
    pub(crate) fn build(data: ReferenceData, templates: Vec<StoredTemplate>) -> Snapshot {
        let members = data.projects.iter().flat_map(|p| p.member_org_ids.iter().map(move |o| (p.id, *o))).collect();
        Snapshot {
            project_by_id: index_id(&data.projects, |p| p.id),
            project_by_code: index(&data.projects, |p| p.code.clone()),
            org_by_id: index_id(&data.organizations, |o| o.id),
            org_by_code: index(&data.organizations, |o| o.code.clone()),
            members,
            type_by_id: index_id(&data.correspondence_types, |t| t.id),
            type_by_code: index(&data.correspondence_types, |t| t.code.clone()),
            sub_by_id: index_id(&data.sub_types, |s| s.id),
            sub_by_type_number: data.sub_types.iter().enumerate().map(|(i, s)| ((s.correspondence_type_id, s.sub_type_number.clone()), i)).collect(),
            rfa_by_id: index_id(&data.rfa_types, |t| t.id),
            rfa_by_code: index(&data.rfa_types, |t| t.code.clone()),
            disc_by_id: index_id(&data.disciplines, |d| d.id),
            disc_by_code: index(&data.disciplines, |d| d.code.clone()),
            contract_by_id: index_id(&data.contracts, |c| c.id),
            contract_by_code: data.contracts.iter().enumerate().map(|(i, c)| ((c.project_id, c.code.clone()), i)).collect(),
            templates: templates.into_iter().map(|t| ((t.project_id, t.correspondence_type_id.unwrap_or(CorrespondenceTypeId::NONE)), t)).collect(),
            data,
        }
    }

    pub fn project(&self, id: Option<ProjectId>, code: Option<&str>) -> Result<&ProjectItem, AppError> {
        pick(id, code, &self.project_by_id, &self.project_by_code, &self.data.projects, Part::Project)
    }
    pub fn correspondence_type(&self, id: Option<CorrespondenceTypeId>, code: Option<&str>) -> Result<&RefItem<CorrespondenceTypeId>, AppError> {
        pick(id, code, &self.type_by_id, &self.type_by_code, &self.data.correspondence_types, Part::CorrespondenceType)
    }
    pub fn org(&self, id: Option<OrganizationId>, code: Option<&str>, part: Part) -> Result<&OrgItem, AppError> {
        pick(id, code, &self.org_by_id, &self.org_by_code, &self.data.organizations, part)
    }
    pub(crate) fn rfa_type(&self, id: Option<RfaTypeId>, code: Option<&str>) -> Result<&RefItem<RfaTypeId>, AppError> {
        pick(id, code, &self.rfa_by_id, &self.rfa_by_code, &self.data.rfa_types, Part::RfaType)
    }
    pub(crate) fn discipline(&self, id: Option<DisciplineId>, code: Option<&str>) -> Result<&RefItem<DisciplineId>, AppError> {
        pick(id, code, &self.disc_by_id, &self.disc_by_code, &self.data.disciplines, Part::Discipline)
    }
    /// A sub-type by id, or by its number within the correspondence type.
    pub(crate) fn sub_type(
        &self,
        correspondence_type_id: CorrespondenceTypeId,
        id: Option<SubTypeId>,
        number: Option<&str>,
    ) -> Result<&SubTypeItem, AppError> {
        let found = match (id, number) {
            (Some(id), _) => self.sub_by_id.get(&id).map(|i| &self.data.sub_types[*i]),
            (None, Some(n)) => self.sub_by_type_number.get(&(correspondence_type_id, normalize_code(n))).map(|i| &self.data.sub_types[*i]),
            (None, None) => return Err(Part::SubType.missing()),
        };
        match found {
            Some(s) if s.correspondence_type_id == correspondence_type_id => Ok(s),
            Some(s) => Err(AppError::validation(ReferenceDetail::SubTypeOfOtherType { number: &s.sub_type_number })),
            None => Err(Part::SubType.unknown(&id.map(|i| i.to_string()).or(number.map(str::to_string)).unwrap_or_default())),
        }
    }
    /// The contract a request names, which must be an active contract of the project: by id, or by its code within
    /// the project. Unknown is a 404; another project's or an inactive one a 400.
    pub(crate) fn contract(&self, project: &ProjectItem, id: Option<ContractId>, code: Option<&str>) -> Result<&ContractItem, AppError> {
        let c = match (id, code) {
            (Some(id), _) => self.contract_by_id.get(&id).map(|i| &self.data.contracts[*i]).ok_or_else(|| Part::Contract.unknown(&id.to_string()))?,
            (None, Some(code)) => {
                let code = normalize_code(code);
                self.contract_in(project.id, &code)
                    .ok_or_else(|| AppError::not_found(ReferenceDetail::ContractByCode { contract: &echo(&code), project: &project.code }))?
            }
            (None, None) => return Err(AppError::validation(ReferenceDetail::ContractMissing { project: &project.code })),
        };
        if c.project_id != project.id {
            return Err(AppError::validation(ReferenceDetail::ContractOfOtherProject { contract: &c.code, project: &project.code }));
        }
        if !c.active {
            return Err(AppError::validation(ReferenceDetail::ContractInactive { contract: &c.code }));
        }
        Ok(c)
    }
    /// The project's contract with this (normalised) code, active or not.
    pub(crate) fn contract_in(&self, project_id: ProjectId, code: &str) -> Option<&ContractItem> {
        self.contract_by_code.get(&(project_id, code.to_string())).map(|i| &self.data.contracts[*i])
    }
    pub(crate) fn is_member(&self, project_id: ProjectId, org_id: OrganizationId) -> bool {
        self.members.contains(&(project_id, org_id))
    }
}

/// The parts of a numbering request, for messages that name the part.
#[derive(Clone, Copy, Debug)]
pub enum Part {
    Project,
    CorrespondenceType,
    Originator,
    Recipient,
    SubType,
    RfaType,
    Discipline,
    Contract,
}

impl Part {
    /// The part as a sentence names it, in each language.
    pub(crate) fn word(self) -> ReferenceDetail<'static> {
        match self {
            Part::Project => ReferenceDetail::KindProjects,
            Part::CorrespondenceType => ReferenceDetail::KindCorrespondenceTypes,
            Part::Originator => ReferenceDetail::PartOriginator,
            Part::Recipient => ReferenceDetail::PartRecipient,
            Part::SubType => ReferenceDetail::KindSubTypes,
            Part::RfaType => ReferenceDetail::KindRfaTypes,
            Part::Discipline => ReferenceDetail::KindDisciplines,
            Part::Contract => ReferenceDetail::KindContracts,
        }
    }
    /// The request's fields that name the part: by id, by code.
    pub(crate) fn fields(self) -> (&'static str, &'static str) {
        match self {
            Part::Project => ("projectId", "projectCode"),
            Part::CorrespondenceType => ("correspondenceTypeId", "correspondenceTypeCode"),
            Part::Originator => ("originatorOrgId", "originatorCode"),
            Part::Recipient => ("recipientOrgId", "recipientCode"),
            Part::SubType => ("subTypeId", "subTypeNumber"),
            Part::RfaType => ("rfaTypeId", "rfaTypeCode"),
            Part::Discipline => ("disciplineId", "disciplineCode"),
            Part::Contract => ("contractId", "contractCode"),
        }
    }
    pub(crate) fn missing(&self) -> AppError {
        let (id_field, code_field) = self.fields();
        AppError::validation(ReferenceDetail::PartMissing { part: &self.word(), id_field: &id_field, code_field: &code_field })
    }
    pub(crate) fn unknown(&self, value: &str) -> AppError {
        let (id_field, code_field) = self.fields();
        let (part, value) = (self.word(), echo(value));
        // well formed, but nothing of that id or code: not found (404), as an unknown id in a path is
        AppError::not_found(ReferenceDetail::PartUnknown { part: &part, value: &value, id_field: &id_field, code_field: &code_field })
    }
}

fn pick<'a, T, Id: std::hash::Hash + Eq + std::fmt::Display>(
    id: Option<Id>,
    code: Option<&str>,
    by_id: &HashMap<Id, usize>,
    by_code: &HashMap<String, usize>,
    items: &'a [T],
    part: Part,
) -> Result<&'a T, AppError> {
    match (id, code) {
        (Some(id), _) => by_id.get(&id).map(|i| &items[*i]).ok_or_else(|| part.unknown(&id.to_string())),
        (None, Some(code)) => {
            let code = normalize_code(code);
            by_code.get(&code).map(|i| &items[*i]).ok_or_else(|| part.unknown(&code))
        }
        (None, None) => Err(part.missing()),
    }
}

/// The snapshot, reloaded after local changes and at most `max_age` old otherwise (other instances may
/// have changed the data).
pub struct ReferenceCache {
    db: Db,
    current: RwLock<Loaded>,
    /// Reloads are numbered as they start (see `Loaded::keep_newer`).
    started: AtomicU64,
    max_age: Duration,
    /// Held by the one `get` that reloads an aged snapshot: under load every request in flight found it aged at
    /// once, and each read all the reference data again (64 reloads every 2 s at 64 callers; docs/benchmarks/http-path.md).
    aging: Mutex<()>,
}

/// A snapshot with when it was loaded and the number of the reload that read it.
struct Loaded {
    snapshot: Arc<Snapshot>,
    at: Instant,
    ticket: u64,
    /// The database's primary when it was read (`db::primary`): after a failover it is read again at once.
    primary: u64,
}

impl Loaded {
    /// Keeps the snapshot of the reload that started last. Reloads overlap: one that an aged `get` began just
    /// before a template was saved reads the old data, and may finish after the save's own reload; stored
    /// then, the old template would be served until the snapshot ages again. Returns the snapshot kept.
    fn keep_newer(&mut self, ticket: u64, snapshot: Arc<Snapshot>, primary: u64) -> Arc<Snapshot> {
        if ticket > self.ticket {
            *self = Loaded { snapshot, at: Instant::now(), ticket, primary };
        }
        self.snapshot.clone()
    }
}

impl ReferenceCache {
    pub async fn load(db: Db, max_age: Duration) -> Result<ReferenceCache, AppError> {
        let primary = db.primary.changes().generation();
        let snapshot = Arc::new(load_snapshot(&db).await?);
        let current = RwLock::new(Loaded { snapshot, at: Instant::now(), ticket: 0, primary });
        Ok(ReferenceCache { db, current, started: AtomicU64::new(0), max_age, aging: Mutex::new(()) })
    }

    pub async fn get(&self) -> Result<Arc<Snapshot>, AppError> {
        if let Some(snapshot) = self.fresh().await {
            return Ok(snapshot);
        }
        // one reload for all who found it aged: the others wait for it and take its snapshot
        let _aging = self.aging.lock().await;
        if let Some(snapshot) = self.fresh().await {
            return Ok(snapshot);
        }
        self.reload().await
    }

    async fn fresh(&self) -> Option<Arc<Snapshot>> {
        let current = self.current.read().await;
        (current.at.elapsed() < self.max_age && current.primary == self.db.primary.changes().generation()).then(|| current.snapshot.clone())
    }

    /// How many reloads have started since the cache was made.
    pub fn reloads(&self) -> u64 {
        self.started.load(Ordering::SeqCst)
    }

    /// Reads the reference data again; after a change, the snapshot returned has it.
    pub(crate) async fn reload(&self) -> Result<Arc<Snapshot>, AppError> {
        let ticket = self.started.fetch_add(1, Ordering::SeqCst) + 1;
        let primary = self.db.primary.changes().generation();
        let snapshot = Arc::new(load_snapshot(&self.db).await?);
        Ok(self.current.write().await.keep_newer(ticket, snapshot, primary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reload_that_started_earlier_never_replaces_one_that_started_later() {
        let (first, old, new) = (Arc::new(Snapshot::default()), Arc::new(Snapshot::default()), Arc::new(Snapshot::default()));
        let mut loaded = Loaded { snapshot: first, at: Instant::now(), ticket: 0, primary: 0 };
        // reload 1 (an aged get) reads the old data; reload 2 (after a save) reads the new data and finishes first
        assert!(Arc::ptr_eq(&loaded.keep_newer(2, new.clone(), 0), &new));
        let kept = loaded.keep_newer(1, old.clone(), 0);
        assert!(Arc::ptr_eq(&kept, &new), "the older reload's answer is the newer snapshot");
        assert!(Arc::ptr_eq(&loaded.snapshot, &new) && loaded.ticket == 2);
        // a later reload replaces it
        let later = Arc::new(Snapshot::default());
        assert!(Arc::ptr_eq(&loaded.keep_newer(3, later.clone(), 0), &later));
    }
}
