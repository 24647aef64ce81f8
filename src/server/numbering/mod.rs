//! The numbering engine (docs/rules/numbering.md): resolves a request to a template and a counter key, and serves
//! preview / reserve / generate / confirm / cancel / expiry. Every operation that changes a counter's
//! numbers goes through that counter's in-process queue (`queue`), which serves all waiting requests in
//! one lock hold and one transaction (`counter_tx`: read, a pure plan, apply); the version check and the
//! unique constraint are the last guards.

pub(crate) mod blocks;
pub mod check;
pub mod committer;
pub mod counter_tx;
pub(crate) mod forms;
pub mod forward;
pub(crate) mod http;
pub(crate) mod idempotency;
pub mod lock;
pub mod queue;
pub(crate) mod store;
pub(crate) mod witness;

use futures::StreamExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::contract::messages::{AllOf, NumberingDetail};
use crate::contract::{
    BlockResult, GenerateResult, NumberRequest, PreviewResult, ProjectItem, ReservationResult, StatusResult, MAX_BLOCK, MAX_BLOCK_HOLD_DAYS,
    MIN_BLOCK,
};
use crate::numbering::{
    bangkok_date, parse_rev, BackdateError, ContractId, CounterKey, DocumentId, DocumentIdError, OrganizationId, PartIds, Period, ProjectId,
    RenderValues, ResetScope, Template, MAX_DOCUMENT_ID_CHARS,
};
use crate::server::auth::rate_limit::NumberRateLimiter;
use crate::server::auth::Caller;
use crate::server::clock::Clock;
use crate::server::db::{ms_to_datetime, Db};
use crate::server::error::{echo, AppError};
use crate::server::errors_log::ErrorLog;
use crate::server::metrics;
use crate::server::reference::{Part, ReferenceCache, Snapshot};
use crate::server::templates;

use crate::numbering::CorrespondenceTypeId;
use counter_tx::{Lifecycle, State};
use idempotency::{IdempotencyKey, Keyed};
use queue::{JobKind, Outcome, Queues};

/// A numbering request with every part resolved, its template chosen and its counter key computed. It travels
/// as it is to a counter's lock holder (`forward`): the holder issues what this instance resolved.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Resolved {
    pub(crate) project_id: ProjectId,
    pub(crate) project_code: String,
    pub(crate) correspondence_type_id: CorrespondenceTypeId,
    pub(crate) correspondence_type_code: String,
    pub(crate) template: Template,
    pub(crate) reset_scope: ResetScope,
    pub(crate) originator: String,
    pub(crate) recipient: String,
    pub(crate) sub_type: String,
    pub(crate) rfa_type: String,
    pub(crate) discipline: String,
    /// The contract's code (`{CONTRACT}`); empty when the template neither shows nor counts by a contract.
    #[serde(default)]
    pub(crate) contract: String,
    pub(crate) revision: String,
    pub key: CounterKey,
    pub(crate) period: Period,
    /// The reason of a super admin's number in an earlier, closed period
    /// (docs/rules/numbering.md#reset-scopes-and-periods back-dating); None: today's period.
    #[serde(default)]
    pub(crate) backdated: Option<String>,
}

impl Resolved {
    pub(crate) fn render(&self, sequence: u64) -> String {
        self.template.render(&RenderValues {
            project: &self.project_code,
            originator: &self.originator,
            recipient: &self.recipient,
            correspondence_type: &self.correspondence_type_code,
            sub_type: &self.sub_type,
            rfa_type: &self.rfa_type,
            discipline: &self.discipline,
            contract: &self.contract,
            seq: sequence,
            year: self.period.year,
            month: self.period.month,
            fiscal_year: self.period.fiscal_year,
            rev: &self.revision,
        })
    }
}

/// Resolves a request against the reference data at instant `now`
/// (docs/rules/numbering.md#which-template-numbers-a-request resolution order, §4 key).
pub fn resolve(snapshot: &Snapshot, req: &NumberRequest, now: DateTime<Utc>) -> Result<Resolved, AppError> {
    resolve_within(snapshot, req, now, &|_| true)
}

/// As `resolve`, for a caller who may number only in the projects `allowed` says: a project derived from the
/// originator is chosen among those alone (and a refusal names no other).
pub fn resolve_within(
    snapshot: &Snapshot,
    req: &NumberRequest,
    now: DateTime<Utc>,
    allowed: &dyn Fn(ProjectId) -> bool,
) -> Result<Resolved, AppError> {
    let project = project_for(snapshot, req, allowed)?;
    if !project.active {
        return Err(AppError::validation(NumberingDetail::ProjectInactive { project: &project.code }));
    }
    let correspondence_type = snapshot.correspondence_type(req.correspondence_type_id, req.correspondence_type_code.as_deref())?;
    let chosen = templates::resolve(snapshot, project.id, correspondence_type.id);
    let template = Template::parse(&chosen.template)
        .map_err(|errors| AppError::invalid_format(NumberingDetail::StoredTemplateInvalid { template: &chosen.template, errors: &AllOf(&errors) }))?;
    let parts = template.key_parts();
    let mut ids = PartIds::default();
    let member = |id: OrganizationId, code: &str, part: NumberingDetail<'_>| -> Result<(), AppError> {
        if snapshot.is_member(project.id, id) {
            Ok(())
        } else {
            Err(AppError::validation(NumberingDetail::NotProjectMember { part: &part, code: &code, project: &project.code }))
        }
    };
    let mut originator = String::new();
    if parts.originator {
        let o = snapshot.org(req.originator_org_id, req.originator_code.as_deref(), Part::Originator)?;
        member(o.id, &o.code, NumberingDetail::PartOriginator)?;
        ids.originator = o.id;
        originator = o.code.clone();
    }
    let (recipient_id, recipient_code) = main_recipient(req)?;
    let mut recipient = String::new();
    if parts.recipient {
        let o = snapshot.org(recipient_id, recipient_code, Part::Recipient)?;
        member(o.id, &o.code, NumberingDetail::PartRecipient)?;
        ids.recipient = o.id;
        recipient = o.code.clone();
    }
    let mut sub_type = String::new();
    if parts.sub_type {
        let s = snapshot.sub_type(correspondence_type.id, req.sub_type_id, req.sub_type_number.as_deref())?;
        ids.sub_type = s.id;
        sub_type = s.sub_type_number.clone();
    }
    let mut rfa_type = String::new();
    if parts.rfa_type {
        let r = snapshot.rfa_type(req.rfa_type_id, req.rfa_type_code.as_deref())?;
        ids.rfa_type = r.id;
        rfa_type = r.code.clone();
    }
    let mut discipline = String::new();
    if parts.discipline {
        let d = snapshot.discipline(req.discipline_id, req.discipline_code.as_deref())?;
        ids.discipline = d.id;
        discipline = d.code.clone();
    }
    // a contract counter's period is the contract, so the contract is needed whether the template shows it or not
    let (mut contract, mut contract_id) = (String::new(), ContractId::default());
    if template.shows_contract() || chosen.reset_scope == ResetScope::Contract {
        let c = snapshot.contract(project, req.contract_id, req.contract_code.as_deref())?;
        contract_id = c.id;
        contract = c.code.clone();
    }
    let revision = match req.revision.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => "A".to_string(),
        Some(r) => {
            let r = r.to_ascii_uppercase();
            parse_rev(&r).ok_or_else(|| AppError::validation(NumberingDetail::RevisionInvalid { given: &echo(&r) }))?;
            r
        }
    };
    let (year, _) = bangkok_date(now);
    let current = Period::at_in(chosen.reset_scope, now, project.fiscal_year_first_month).of_contract(contract_id);
    let (period, backdated) = match (req.year, req.backdate_reason.as_deref()) {
        (Some(asked), Some(reason)) => (backdated_period(&current, asked, project.fiscal_year_first_month)?, Some(backdate_reason(reason)?)),
        (None, Some(_)) => return Err(AppError::validation(NumberingDetail::BackdateWithoutYear)),
        (Some(asked), None) if asked != year && asked != year + 543 => {
            return Err(AppError::validation(NumberingDetail::YearNotCurrent { asked: &asked, year: &year, year_be: &(year + 543) }));
        }
        _ => (current, None),
    };
    let key = CounterKey::new(project.id, correspondence_type.id, parts, &ids, &period);
    Ok(Resolved {
        project_id: project.id,
        project_code: project.code.clone(),
        correspondence_type_id: correspondence_type.id,
        correspondence_type_code: correspondence_type.code.clone(),
        template,
        reset_scope: chosen.reset_scope,
        originator,
        recipient,
        sub_type,
        rfa_type,
        discipline,
        contract,
        revision,
        key,
        period,
        backdated,
    })
}

/// The request's project: the one it names; or, when it names none but an originator, the one active project that
/// organisation belongs to among those `allowed` (a DMS that knows only the sender). None or several is a 400 that
/// names the choices.
fn project_for<'a>(snapshot: &'a Snapshot, req: &NumberRequest, allowed: &dyn Fn(ProjectId) -> bool) -> Result<&'a ProjectItem, AppError> {
    let names_project = req.project_id.is_some() || req.project_code.is_some();
    let names_originator = req.originator_org_id.is_some() || req.originator_code.is_some();
    if names_project || !names_originator {
        return snapshot.project(req.project_id, req.project_code.as_deref());
    }
    let org = snapshot.org(req.originator_org_id, req.originator_code.as_deref(), Part::Originator)?;
    let mut choices: Vec<&ProjectItem> =
        snapshot.data.projects.iter().filter(|p| p.active && snapshot.is_member(p.id, org.id) && allowed(p.id)).collect();
    choices.sort_by(|a, b| a.code.cmp(&b.code));
    if let [only] = choices.as_slice() {
        return Ok(only);
    }
    const SHOWN: usize = 10;
    let mut codes = choices.iter().take(SHOWN).map(|p| p.code.as_str()).collect::<Vec<_>>().join(", ");
    if choices.len() > SHOWN {
        codes.push_str(", …");
    }
    Err(if choices.is_empty() {
        AppError::validation(NumberingDetail::OriginatorInNoProject { originator: &org.code })
    } else {
        AppError::validation(NumberingDetail::OriginatorInSeveralProjects { originator: &org.code, projects: &codes })
    })
}

/// An addressee of `recipients`: a main recipient (`TO`, also when absent) or a copy (`CC`), in any case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AddresseeRole {
    To,
    Copy,
}

impl AddresseeRole {
    fn of(position: usize, asked: Option<&str>) -> Result<AddresseeRole, AppError> {
        match asked.map(str::to_ascii_uppercase).as_deref() {
            None | Some("TO") => Ok(AddresseeRole::To),
            Some("CC") => Ok(AddresseeRole::Copy),
            Some(other) => {
                let other: String = other.chars().take(20).collect();
                Err(AppError::validation(NumberingDetail::RecipientTypeUnknown { item: &(position + 1), given: &other }))
            }
        }
    }
}

/// The main recipient a request names: `recipientOrgId`/`recipientCode`, or the first `TO` of `recipients` by sort
/// order (an addressee without one takes its position in the list; a tie keeps the list's order).
fn main_recipient(req: &NumberRequest) -> Result<(Option<OrganizationId>, Option<&str>), AppError> {
    let Some(addressees) = &req.recipients else {
        return Ok((req.recipient_org_id, req.recipient_code.as_deref()));
    };
    if req.recipient_org_id.is_some() || req.recipient_code.is_some() {
        return Err(AppError::validation(NumberingDetail::RecipientsTwoWays));
    }
    if addressees.len() > crate::contract::MAX_ADDRESSEES {
        return Err(AppError::validation(NumberingDetail::TooManyRecipients { max: &crate::contract::MAX_ADDRESSEES }));
    }
    let mut main: Option<(i64, &crate::contract::Addressee)> = None;
    for (position, addressee) in addressees.iter().enumerate() {
        if addressee.organization_id.is_none() && addressee.organization_code.is_none() {
            return Err(AppError::validation(NumberingDetail::RecipientWithoutOrganization { item: &(position + 1) }));
        }
        if AddresseeRole::of(position, addressee.recipient_type.as_deref())? == AddresseeRole::Copy {
            continue;
        }
        let order = addressee.sort_order.unwrap_or(position as i64);
        if main.is_none_or(|(first, _)| order < first) {
            main = Some((order, addressee));
        }
    }
    Ok(main.map_or((None, None), |(_, a)| (a.organization_id, a.organization_code.as_deref())))
}

/// The earlier period a back-dated request names, or the 400 that says why it cannot be.
fn backdated_period(current: &Period, asked: i32, first_month: u32) -> Result<Period, AppError> {
    current.earlier(asked, first_month).map_err(|e| match e {
        BackdateError::NotByYear(scope) => AppError::validation(NumberingDetail::BackdateNotByYear { scope: &scope }),
        BackdateError::NotEarlier { asked, current } => {
            AppError::validation(NumberingDetail::BackdateNotEarlier { asked: &asked, current: &current, current_be: &(current + 543) })
        }
    })
}

fn backdate_reason(reason: &str) -> Result<String, AppError> {
    if reason.chars().count() > MAX_REASON_CHARS || reason.chars().any(char::is_control) {
        return Err(AppError::validation(NumberingDetail::BackdateReasonTooLong { max: &MAX_REASON_CHARS }));
    }
    Ok(reason.to_string())
}

#[derive(Clone, Debug)]
pub(crate) struct EngineConfig {
    pub(crate) reservation_ttl: Duration,
    /// How many waiting requests one counter's batch serves at most.
    pub(crate) max_batch: usize,
    /// MariaDB committers, each serving many counters' batches per transaction (SQLite: always one).
    pub(crate) committers: usize,
    /// The cluster secret, when batches go to the instance holding their counter's lock (`forward`); the lock
    /// must advertise this instance too (`lock::RedisLock::forwarding_as`).
    pub(crate) forward_secret: Option<String>,
    /// Where the counters' heads are witnessed outside the database (docs/rules/numbering.md#what-is-never-done-twice); None: not witnessed.
    pub(crate) witness: Option<Arc<witness::Witness>>,
    /// The live screens' hub (`events`); None: nothing announced.
    pub(crate) events: Option<Arc<crate::server::events::Events>>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            reservation_ttl: Duration::from_secs(300),
            max_batch: 256,
            committers: committer::DEFAULT_COMMITTERS,
            forward_secret: None,
            witness: None,
            events: None,
        }
    }
}

pub struct Engine {
    pub(crate) db: Db,
    pub(crate) clock: Arc<Clock>,
    pub(crate) reference: Arc<ReferenceCache>,
    /// Every number's lifecycle (the `NUMBER` workflow's rows), loaded once.
    pub lifecycle: Arc<Lifecycle>,
    pub(crate) errors: ErrorLog,
    pub(crate) config: EngineConfig,
    queues: Arc<Queues>,
    /// The `Idempotency-Key`s being served in this instance.
    in_flight: Arc<idempotency::InFlight>,
}

/// What a request's `Idempotency-Key` makes of it: the answer stored for it, or a request to serve — with its key
/// claimed in this instance until it is answered, or (None) without a key.
pub(crate) enum Keying<T> {
    Replay(T),
    Fresh(Option<(Keyed, idempotency::Claim)>),
}

const MAX_REASON_CHARS: usize = 500;

/// What a block asks beside the reservation's request (`reserve-block`).
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockAsk {
    pub(crate) count: i64,
    pub(crate) hold_until: Option<DateTime<Utc>>,
    pub(crate) holder: Option<String>,
}

const MAX_HOLDER_CHARS: usize = 200;

impl BlockAsk {
    /// The count, the hold in ms from `now_ms`, and the holder, or the 400 saying which is out of bounds.
    fn check(&self, now_ms: i64, ttl: Duration) -> Result<(u32, i64, Option<String>), AppError> {
        let count = u32::try_from(self.count)
            .ok()
            .filter(|c| (MIN_BLOCK..=MAX_BLOCK).contains(c))
            .ok_or_else(|| AppError::validation(NumberingDetail::BlockCountOutOfRange { min: &MIN_BLOCK, max: &MAX_BLOCK, given: &self.count }))?;
        let ttl_ms = match self.hold_until {
            None => ttl.as_millis() as i64,
            Some(until) => {
                let ms = until.timestamp_millis() - now_ms;
                if ms <= 0 || ms > MAX_BLOCK_HOLD_DAYS * 86_400_000 {
                    return Err(AppError::validation(NumberingDetail::BlockHoldOutOfRange { days: &MAX_BLOCK_HOLD_DAYS }));
                }
                ms
            }
        };
        let holder = self.holder.as_deref().map(str::trim).filter(|h| !h.is_empty());
        if let Some(h) = holder {
            if h.chars().count() > MAX_HOLDER_CHARS || h.chars().any(char::is_control) {
                return Err(AppError::validation(NumberingDetail::BlockHolderTooLong { max: &MAX_HOLDER_CHARS }));
            }
        }
        Ok((count, ttl_ms, holder.map(str::to_string)))
    }
}

/// Reservations an expiry sweep cancels at once, and how many such chunks one sweep takes at most.
const EXPIRY_CHUNK: i64 = 250;
const EXPIRY_MAX_CHUNKS: usize = 40;
/// Expiry cancels a sweep has on their way at once.
const EXPIRY_IN_FLIGHT: usize = 16;

impl Engine {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        db: Db,
        clock: Arc<Clock>,
        reference: Arc<ReferenceCache>,
        lifecycle: Arc<Lifecycle>,
        errors: ErrorLog,
        config: EngineConfig,
        lock: lock::CounterLock,
        threads: Option<queue::CounterThreads>,
    ) -> Result<Arc<Engine>, AppError> {
        let mut queues = Queues::new(db.clone(), clock.clone(), lifecycle.clone(), &config, lock, threads);
        if let Some(secret) = &config.forward_secret {
            // the holder may wait for its lock before it serves the batch
            let patience = queues.lock.max_wait() + Duration::from_secs(5);
            queues = queues.forwarding(forward::Forwarder::new(secret.clone(), patience)?);
        }
        Ok(Arc::new(Engine { db, clock, reference, lifecycle, errors, config, queues: Arc::new(queues), in_flight: Default::default() }))
    }

    /// Serves the jobs another instance forwarded for `key` (`forward`): each joins this instance's queue, in order.
    pub(crate) async fn serve_forwarded(
        &self,
        key: CounterKey,
        jobs: Vec<(JobKind, Caller, Option<Keyed>)>,
    ) -> Result<Vec<Result<Outcome, AppError>>, AppError> {
        if self.queues.closing() {
            return Err(AppError::LockTimeout { key: key.lock_name(), retry_after_secs: 1 });
        }
        metrics::forwarded("received", jobs.len());
        let queued = jobs.into_iter().map(|(kind, caller, keyed)| self.queues.submit_forwarded(key.clone(), kind, caller, keyed));
        Ok(futures::future::join_all(queued).await)
    }

    /// Redis reachability as the lock sees it (None: no Redis configured).
    pub fn redis_up(&self) -> Option<bool> {
        self.queues.lock.redis_up()
    }

    /// Per correspondence type, the highest `last_number / max_number` over the counters of the current period (this
    /// year's yearly counters, this month's monthly ones, and counters that never reset, contracts' too), as a ratio 0..1: the
    /// `/metrics` gauge. One grouped query; rows = number of types.
    pub(crate) async fn sequence_utilization(&self) -> Result<Vec<(String, f64)>, sqlx::Error> {
        let now = self.clock.now();
        let periods = Period::current_keys(now);
        store::max_utilization_by_type(&self.db, &periods).await
    }

    /// Lets every counter lock go before the process exits (see `Queues::close`).
    pub(crate) async fn stop(&self) {
        self.queues.close(Duration::from_secs(2)).await;
    }

    /// At the stop's deadline, with requests still in flight: the lingering workers let their locks go as in `stop`
    /// (for a moment only), then every Redis lock still held goes too — a batch stuck under one would otherwise
    /// make the other instances wait out its TTL.
    pub(crate) async fn stop_now(&self) {
        self.queues.close(Duration::from_millis(300)).await;
        self.queues.lock.release_all().await;
    }

    async fn resolve_for(&self, caller: &Caller, req: &NumberRequest) -> Result<Resolved, AppError> {
        let snapshot = self.reference.get().await?;
        let resolved = resolve_within(&snapshot, req, self.clock.now(), &|project_id| caller.may_number(project_id))?;
        caller.require_numbering(resolved.project_id)?;
        if let Some(reason) = &resolved.backdated {
            caller.require_super_admin()?;
            tracing::info!(who = %caller.display_name(), period = %resolved.key.period, reason = %reason, "back-dated number asked for");
        }
        Ok(resolved)
    }

    /// Records errors worth an operator's attention (with the project of the request, when known), then hands
    /// the error back.
    fn logged<T>(
        &self,
        caller: &Caller,
        project_id: Option<ProjectId>,
        context: impl FnOnce() -> serde_json::Value,
        result: Result<T, AppError>,
    ) -> Result<T, AppError> {
        if let Err(e) = &result {
            self.errors.record_in(e, &caller.who(), project_id, context());
        }
        result
    }

    /// The project of a reservation token, when the error is one the log keeps and the project is not known yet.
    async fn project_of_token<T>(&self, known: Option<ProjectId>, token: &str, result: &Result<T, AppError>) -> Option<ProjectId> {
        match result {
            Err(e) if known.is_none() && e.log_type().is_some() => {
                let token = check_token(token).ok()?;
                store::counter_key_of_token(&self.db, &token).await.ok().flatten().map(|k| k.project_id)
            }
            _ => known,
        }
    }

    /// The project a request names, when it names one that exists (for the error log).
    async fn project_of(&self, req: &NumberRequest) -> Option<ProjectId> {
        let snapshot = self.reference.get().await.ok()?;
        snapshot.project(req.project_id, req.project_code.as_deref()).ok().map(|p| p.id)
    }

    /// The readiness probe's preview (docs/operations/README.md#metrics-and-alerts `/health/ready`): the next number of the first active project's
    /// first type, through the same resolution and counter read as a real preview, without logging or taking
    /// anything. `Ok(None)` when there is nothing to preview yet (no active project or type) or the data
    /// cannot form a request (a project without members): the service is still able to number. A failure of
    /// the database or the engine itself is the error.
    pub(crate) async fn probe_preview(&self) -> Result<Option<String>, AppError> {
        let snapshot = self.reference.get().await?;
        let d = &snapshot.data;
        let (Some(project), Some(correspondence_type)) = (d.projects.iter().find(|p| p.active), d.correspondence_types.first()) else {
            return Ok(None);
        };
        let mut members = project.member_org_ids.iter().copied();
        let originator = members.next();
        let req = NumberRequest {
            project_id: Some(project.id),
            correspondence_type_id: Some(correspondence_type.id),
            originator_org_id: originator,
            recipient_org_id: members.next().or(originator),
            sub_type_id: d.sub_types.iter().find(|s| s.correspondence_type_id == correspondence_type.id).map(|s| s.id),
            rfa_type_id: d.rfa_types.first().map(|r| r.id),
            discipline_id: d.disciplines.first().map(|x| x.id),
            contract_id: d.contracts.iter().find(|c| c.project_id == project.id && c.active).map(|c| c.id),
            ..Default::default()
        };
        let resolved = match resolve(&snapshot, &req, self.clock.now()) {
            Ok(r) => r,
            Err(e) if e.code().http_status() < 500 => return Ok(None),
            Err(e) => return Err(e),
        };
        let next = store::last_number(&self.db, &resolved.key).await? as u64 + 1;
        Ok(Some(resolved.render(next.min(resolved.template.max_seq()))))
    }

    /// Whether a quorum of the lock's Redis servers answers now (a PING each); None without Redis.
    pub(crate) async fn redis_reachable(&self) -> Option<bool> {
        self.queues.lock.redis_reachable().await
    }

    /// The next number for a request, without consuming it.
    pub(crate) async fn preview(&self, caller: &Caller, req: &NumberRequest) -> Result<PreviewResult, AppError> {
        let result = async {
            let r = self.resolve_for(caller, req).await?;
            let next = store::last_number(&self.db, &r.key).await? as u64 + 1;
            if next > r.template.max_seq() {
                return Err(AppError::SequenceExhausted { max: r.template.max_seq() });
            }
            Ok(PreviewResult { document_number: r.render(next), sequence: next, template: r.template.source().to_string(), reserved: false })
        }
        .await;
        let project = if result.is_err() { self.project_of(req).await } else { None };
        self.logged(caller, project, || serde_json::json!({"operation": "PREVIEW", "request": req}), result)
    }

    pub(crate) async fn reserve(&self, caller: &Caller, req: &NumberRequest, key: Option<&IdempotencyKey>) -> Result<ReservationResult, AppError> {
        let result = async {
            let (keyed, _claim) = match self.keying(caller, key, "RESERVE", req).await? {
                Keying::Replay(outcome) => return self.reservation(caller, outcome),
                Keying::Fresh(fresh) => fresh.unzip(),
            };
            let r = self.resolve_for(caller, req).await?;
            let key = r.key.clone();
            let kind = JobKind::Issue { req: Arc::new(r), ttl_ms: self.config.reservation_ttl.as_millis() as i64, document_id: None };
            let outcome = self.queues.submit(key, kind, caller.clone(), keyed).await?;
            self.reservation(caller, outcome)
        }
        .await;
        let project = if result.is_err() { self.project_of(req).await } else { None };
        self.logged(caller, project, || serde_json::json!({"operation": "RESERVE", "request": req}), result)
    }

    /// `count` contiguous numbers of one counter, reserved by one job of its batch (one commit), held until `hold_until`
    /// (default: the reservation TTL; at most 30 days), for `holder`.
    pub(crate) async fn reserve_block(
        &self,
        caller: &Caller,
        req: &NumberRequest,
        block: &BlockAsk,
        key: Option<&IdempotencyKey>,
    ) -> Result<BlockResult, AppError> {
        let result = async {
            let now = self.clock.now_ms();
            let (count, ttl_ms, holder) = block.check(now, self.config.reservation_ttl)?;
            let request = serde_json::json!({ "request": req, "count": count, "holdUntil": block.hold_until, "holder": holder });
            let (keyed, _claim) = match self.keying(caller, key, "RESERVE_BLOCK", &request).await? {
                Keying::Replay(outcome) => return self.block_answer(caller, outcome),
                Keying::Fresh(fresh) => fresh.unzip(),
            };
            let r = self.resolve_for(caller, req).await?;
            let key = r.key.clone();
            let block = counter_tx::plan::Block { id: uuid::Uuid::new_v4().to_string(), count, holder };
            let kind = JobKind::Block { req: Arc::new(r), ttl_ms, block };
            let outcome = self.queues.submit(key, kind, caller.clone(), keyed).await?;
            self.block_answer(caller, outcome)
        }
        .await;
        let project = if result.is_err() { self.project_of(req).await } else { None };
        self.logged(caller, project, || serde_json::json!({"operation": "RESERVE_BLOCK", "request": req}), result)
    }

    fn block_answer(&self, caller: &Caller, outcome: Outcome) -> Result<BlockResult, AppError> {
        let Outcome::Block { id, holder, numbers } = outcome else { return Err(AppError::internal("a block answered with one number")) };
        let numbers = numbers.into_iter().map(|o| self.reservation(caller, o)).collect::<Result<Vec<_>, _>>()?;
        Ok(BlockResult { block_id: id, holder, numbers })
    }

    fn reservation(&self, caller: &Caller, outcome: Outcome) -> Result<ReservationResult, AppError> {
        match outcome {
            Outcome::Issued { number, sequence, token, expires_at, created_at } => {
                let expires_at = expires_at.unwrap_or_default();
                let token = token.unwrap_or_default();
                Ok(ReservationResult {
                    workflow: Some(self.lifecycle.context(&token, State::Reserved, created_at, caller)),
                    token,
                    document_number: number,
                    sequence: sequence as u64,
                    expires_at: ms_to_datetime(expires_at),
                    ttl_seconds: ((expires_at - self.clock.now_ms()) / 1000).max(0),
                })
            }
            _ => Err(AppError::internal("reserve answered with a status")),
        }
    }

    /// Reserve + confirm in one step for a document; asking again for the same document returns its number.
    pub(crate) async fn generate(
        &self,
        caller: &Caller,
        document_id: &str,
        req: &NumberRequest,
        key: Option<&IdempotencyKey>,
    ) -> Result<GenerateResult, AppError> {
        let result = async {
            let document_id = check_document_id(document_id)?;
            let request = serde_json::json!({ "documentId": document_id.as_str(), "request": req });
            let (keyed, _claim) = match self.keying(caller, key, "GENERATE", &request).await? {
                Keying::Replay(outcome) => return self.generated(caller, outcome),
                Keying::Fresh(fresh) => fresh.unzip(),
            };
            let r = self.resolve_for(caller, req).await?;
            let key = r.key.clone();
            let kind = JobKind::Issue { req: Arc::new(r), ttl_ms: 0, document_id: Some(document_id) };
            let outcome = self.queues.submit(key, kind, caller.clone(), keyed).await?;
            self.generated(caller, outcome)
        }
        .await;
        let project = if result.is_err() { self.project_of(req).await } else { None };
        self.logged(caller, project, || serde_json::json!({"operation": "GENERATE", "documentId": document_id, "request": req}), result)
    }

    fn generated(&self, caller: &Caller, outcome: Outcome) -> Result<GenerateResult, AppError> {
        match outcome {
            // no reservation: the number names its own instance
            Outcome::Issued { number, created_at, .. } => Ok(GenerateResult {
                workflow: Some(self.lifecycle.context(&number, State::Confirmed, created_at, caller)),
                document_number: number,
                generated_at: ms_to_datetime(created_at),
            }),
            _ => Err(AppError::internal("generate answered with a status")),
        }
    }

    /// What a request's `Idempotency-Key` makes of it (module `idempotency`): a key stored for this request answers
    /// with its answer (`T`: the batch's `Outcome`, or an administrative write's result), one stored for another
    /// request is 422, one in flight here is 409. Reserve, generate, confirm and cancel ask it here; revise and
    /// void-and-replace in `admin_ops`, which store their key in their own transaction.
    pub(crate) async fn keying<T: serde::de::DeserializeOwned>(
        &self,
        caller: &Caller,
        key: Option<&IdempotencyKey>,
        operation: &str,
        request: &impl serde::Serialize,
    ) -> Result<Keying<T>, AppError> {
        let Some(key) = key else { return Ok(Keying::Fresh(None)) };
        let keyed = Keyed::new(caller, key, operation, request);
        let claim = self.in_flight.claim(&keyed)?;
        match idempotency::stored(&self.db, &keyed, self.clock.now_ms()).await? {
            None => Ok(Keying::Fresh(Some((keyed, claim)))),
            Some(stored) => Ok(Keying::Replay(idempotency::read_answer(&keyed, stored)?)),
        }
    }

    pub(crate) async fn confirm(
        &self,
        caller: &Caller,
        token: &str,
        document_id: &str,
        key: Option<&IdempotencyKey>,
    ) -> Result<StatusResult, AppError> {
        let mut project = None;
        let result = async {
            let token = check_token(token)?;
            let document_id = check_document_id(document_id)?;
            let request = serde_json::json!({ "token": token, "documentId": document_id.as_str() });
            let (keyed, _claim) = match self.keying(caller, key, "CONFIRM", &request).await? {
                Keying::Replay(outcome) => return self.status_answer(outcome, caller, &token),
                Keying::Fresh(fresh) => fresh.unzip(),
            };
            let key = self.key_of_token(&token).await?;
            project = Some(key.project_id);
            caller.require_numbering(key.project_id)?;
            self.status_job(key, JobKind::Confirm { token: token.clone(), document_id }, caller, &token, keyed).await
        }
        .await;
        let project = self.project_of_token(project, token, &result).await;
        self.logged(caller, project, || serde_json::json!({"operation": "CONFIRM", "token": token, "documentId": document_id}), result)
    }

    pub(crate) async fn cancel(
        &self,
        caller: &Caller,
        token: &str,
        reason: Option<&str>,
        key: Option<&IdempotencyKey>,
    ) -> Result<StatusResult, AppError> {
        let mut project = None;
        let result = async {
            let token = check_token(token)?;
            let reason = reason.map(str::trim).filter(|r| !r.is_empty()).map(str::to_string);
            if reason.as_ref().is_some_and(|r| r.chars().count() > MAX_REASON_CHARS) {
                return Err(AppError::validation(NumberingDetail::CancelReasonTooLong { max: &MAX_REASON_CHARS }));
            }
            let request = serde_json::json!({ "token": token, "reason": reason });
            let (keyed, _claim) = match self.keying(caller, key, "CANCEL", &request).await? {
                Keying::Replay(outcome) => return self.status_answer(outcome, caller, &token),
                Keying::Fresh(fresh) => fresh.unzip(),
            };
            let key = self.key_of_token(&token).await?;
            project = Some(key.project_id);
            caller.require_numbering(key.project_id)?;
            self.status_job(key, JobKind::Cancel { token: token.clone(), reason, expiry: false }, caller, &token, keyed).await
        }
        .await;
        let project = self.project_of_token(project, token, &result).await;
        self.logged(caller, project, || serde_json::json!({"operation": "CANCEL", "token": token}), result)
    }

    /// Cancels reservations past their TTL (reason: expired). Returns how many were cancelled.
    pub async fn expire_due(&self) -> Result<usize, AppError> {
        let system = Caller::system();
        let mut expired = 0;
        // Everything due goes, a chunk at a time: a sweep that took a fixed 1,000 fell behind under sustained load
        // (the soak: 160 expiries/s against 100/s), and one large burst of cancels made the counters' queues wait
        // behind it (p99 from 9 to 200–400 ms). A chunk that expires nothing ends the sweep (what is left failed, and
        // the next sweep tries it again).
        for _ in 0..EXPIRY_MAX_CHUNKS {
            let due = store::due_reservations(&self.db, self.clock.now_ms(), EXPIRY_CHUNK).await?;
            let taken = due.len();
            let jobs = due.into_iter().map(|(token, key)| {
                let system = system.clone();
                async move { self.queues.submit(key, JobKind::Cancel { token, reason: Some("expired".into()), expiry: true }, system, None).await }
            });
            // a few at a time, so they ride along in the commit groups of the live traffic instead of forming one large
            // group that every reserve behind it waits for (the soak: p99 5–7 → 30 ms with the whole chunk at once)
            let outcomes: Vec<_> = futures::stream::iter(jobs).buffer_unordered(EXPIRY_IN_FLIGHT).collect().await;
            let changed = outcomes.iter().filter(|r| matches!(r, Ok(Outcome::Status { changed: true, .. }))).count();
            expired += changed;
            if taken < EXPIRY_CHUNK as usize || changed == 0 {
                break;
            }
        }
        Ok(expired)
    }

    async fn key_of_token(&self, token: &str) -> Result<CounterKey, AppError> {
        store::counter_key_of_token(&self.db, token).await?.ok_or_else(|| counter_tx::plan::reservation_not_found(token))
    }

    async fn status_job(&self, key: CounterKey, kind: JobKind, caller: &Caller, token: &str, keyed: Option<Keyed>) -> Result<StatusResult, AppError> {
        let outcome = self.queues.submit(key, kind, caller.clone(), keyed).await?;
        self.status_answer(outcome, caller, token)
    }

    fn status_answer(&self, outcome: Outcome, caller: &Caller, token: &str) -> Result<StatusResult, AppError> {
        match outcome {
            Outcome::Status { number, status, state, at, .. } => {
                Ok(StatusResult { document_number: number, status, workflow: Some(self.lifecycle.context(token, state, at, caller)) })
            }
            _ => Err(AppError::internal("status job answered with a number")),
        }
    }
}

// ---- the service path of the entry points (REST and the form): rate limit, engine, generation histogram ----

/// What the numbering requests use: the engine, the rate limits of new numbers and of the light requests (preview,
/// confirm, cancel), and the secret of batches forwarded by the other instances. A sub-state of the application's
/// (`FromRef`).
pub(crate) struct Numbering {
    pub(crate) engine: Arc<Engine>,
    pub(crate) limits: Arc<NumberRateLimiter>,
    pub(crate) light_limits: Arc<NumberRateLimiter>,
    /// `CLUSTER_SECRET`: None = forwarded batches are refused (`forward::receive`).
    pub(crate) cluster_secret: Option<String>,
}

/// Reserve as every entry point calls it: the caller's rate limit, the engine, then the generation histogram
/// (latency and outcome, labelled by the request's type), so the form and REST count alike.
pub(crate) async fn reserve(
    state: &Numbering,
    caller: &Caller,
    req: &NumberRequest,
    key: Option<&IdempotencyKey>,
) -> Result<ReservationResult, AppError> {
    state.limits.check(caller).await?;
    let started = Instant::now();
    let result = state.engine.reserve(caller, req, key).await;
    record_generation(state, req, &result, started).await;
    result
}

/// A block of numbers as every entry point calls it: the caller's rate limit (one request), then the engine.
pub(crate) async fn reserve_block(
    state: &Numbering,
    caller: &Caller,
    req: &NumberRequest,
    block: &BlockAsk,
    key: Option<&IdempotencyKey>,
) -> Result<BlockResult, AppError> {
    state.limits.check(caller).await?;
    state.engine.reserve_block(caller, req, block, key).await
}

/// Preview as every entry point calls it: the caller's limit for requests that take no new number (their own,
/// more generous bucket: `RateLimits::light_factor`), then the engine.
pub(crate) async fn preview(state: &Numbering, caller: &Caller, req: &NumberRequest) -> Result<PreviewResult, AppError> {
    state.light_limits.check(caller).await?;
    state.engine.preview(caller, req).await
}

/// Confirm as every entry point calls it: the caller's limit (see [`preview`]), then the engine.
pub(crate) async fn confirm(
    state: &Numbering,
    caller: &Caller,
    token: &str,
    document_id: &str,
    key: Option<&IdempotencyKey>,
) -> Result<StatusResult, AppError> {
    state.light_limits.check(caller).await?;
    state.engine.confirm(caller, token, document_id, key).await
}

/// Cancel as every entry point calls it: the caller's limit (see [`preview`]), then the engine.
pub(crate) async fn cancel(
    state: &Numbering,
    caller: &Caller,
    token: &str,
    reason: Option<&str>,
    key: Option<&IdempotencyKey>,
) -> Result<StatusResult, AppError> {
    state.light_limits.check(caller).await?;
    state.engine.cancel(caller, token, reason, key).await
}

/// Generate (reserve + confirm for a document) as every entry point calls it; see [`reserve`].
pub(crate) async fn generate(
    state: &Numbering,
    caller: &Caller,
    document_id: &str,
    req: &NumberRequest,
    key: Option<&IdempotencyKey>,
) -> Result<GenerateResult, AppError> {
    state.limits.check(caller).await?;
    let started = Instant::now();
    let result = state.engine.generate(caller, document_id, req, key).await;
    record_generation(state, req, &result, started).await;
    result
}

async fn record_generation<T>(state: &Numbering, req: &NumberRequest, result: &Result<T, AppError>, started: Instant) {
    let type_code = type_label(state, req).await;
    metrics::generation(&type_code, metrics::status_of(result), started.elapsed());
}

/// The correspondence type of a request as a metrics label: its code in the reference data, or `unknown`
/// (never the raw input, so the label's values stay bounded).
async fn type_label(s: &Numbering, req: &NumberRequest) -> String {
    match s.engine.reference.get().await {
        Ok(snapshot) => snapshot
            .correspondence_type(req.correspondence_type_id, req.correspondence_type_code.as_deref())
            .map(|t| t.code.clone())
            .unwrap_or_else(|_| metrics::UNKNOWN.to_string()),
        Err(_) => metrics::UNKNOWN.to_string(),
    }
}

/// A reservation token as `reserve` answers it: a UUID in its hyphenated form (what the OpenAPI document's pattern
/// says), any case.
fn check_token(token: &str) -> Result<String, AppError> {
    let hyphenated = token.len() == 36;
    uuid::Uuid::try_parse(token)
        .ok()
        .filter(|_| hyphenated)
        .map(|u| u.to_string())
        .ok_or_else(|| AppError::validation(NumberingDetail::TokenMalformed { given: &echo(token) }))
}

fn check_document_id(document_id: &str) -> Result<DocumentId, AppError> {
    DocumentId::parse(document_id).map_err(|e| match e {
        DocumentIdError::Empty => AppError::validation(NumberingDetail::DocumentIdMissing),
        DocumentIdError::TooLong | DocumentIdError::Control => {
            AppError::validation(NumberingDetail::DocumentIdTooLong { max: &MAX_DOCUMENT_ID_CHARS })
        }
    })
}
