//! Reference-data admin (docs/rules/numbering.md#reference-data-and-codes,
//! docs/rules/api.md#the-numbering-endpoints; super admins): create and edit projects, organizations, correspondence
//! types, sub-types, RFA types and disciplines, one at a time or as a whole JSON document (upsert by code, all
//! or nothing, with a per-row report and a dry run). Codes are checked by `numbering::validate_code` and are
//! the identity of an item: once created a code is never changed and nothing is deleted, so every issued
//! number keeps pointing at what it was issued for; names, roles, membership and a project's `active` flag
//! can be edited (an inactive project issues no new numbers). Every change appends an audit row to the
//! `admin` chain, and the reference snapshot is reloaded after a commit so the next request sees it.

use serde_json::{json, Value};

use super::store::{self, ItemDetail};
use crate::contract::import::{
    CodeNameInput, ContractInput, ImportReport, ImportRowReport, OrganizationInput, ProjectInput, ReferenceDocument, SubTypeInput,
};
use crate::contract::messages::ReferenceDetail;
use crate::contract::{CorrespondenceTypeId, OrganizationId, ProjectId};
use crate::numbering::{validate_code, CodeKind, DEFAULT_FISCAL_FIRST_MONTH};
use crate::server::audit::{self, AuditEntry, ADMIN_CHAIN};
use crate::server::auth::Caller;
use crate::server::db::{is_unique_violation, Dialect, Tx};
use crate::server::error::{echo, AppError, ErrorCode};
use crate::server::reference::Catalog;

/// Most items one reference document may hold.
pub(crate) const MAX_ITEMS: usize = 10_000;
/// Largest reference document, in bytes.
pub(crate) const MAX_BYTES: usize = 1024 * 1024;
const MAX_NAME_CHARS: usize = super::store::MAX_NAME_CHARS;

pub(crate) use super::store::Kind;

/// One item of any kind, as given.
#[derive(Clone, Debug)]
pub(crate) enum Item {
    Project(ProjectInput),
    Organization(OrganizationInput),
    Named(Kind, CodeNameInput),
    SubType(SubTypeInput),
    Contract(ContractInput),
}

impl Item {
    fn kind(&self) -> Kind {
        match self {
            Item::Project(_) => Kind::Projects,
            Item::Organization(_) => Kind::Organizations,
            Item::Named(k, _) => *k,
            Item::SubType(_) => Kind::SubTypes,
            Item::Contract(_) => Kind::Contracts,
        }
    }
    /// How the item is named in reports: its code (a sub-type: type code / number).
    fn label(&self) -> String {
        let s = match self {
            Item::Project(p) => p.code.clone(),
            Item::Organization(o) => o.code.clone(),
            Item::Named(_, n) => n.code.clone(),
            Item::SubType(s) => format!("{}/{}", s.correspondence_type_code.trim(), s.sub_type_number.trim()),
            Item::Contract(c) => format!("{}/{}", c.project_code.trim(), c.code.trim()),
        };
        echo(&s)
    }
    /// Reads one item of `kind` from a JSON body (unknown fields and wrong types are a 400).
    pub(crate) fn from_json(kind: Kind, body: Value) -> Result<Item, AppError> {
        let bad =
            |e: serde_json::Error| AppError::validation(ReferenceDetail::ItemShape { reason: &e.to_string().chars().take(120).collect::<String>() });
        Ok(match kind {
            Kind::Projects => Item::Project(serde_json::from_value(body).map_err(bad)?),
            Kind::Organizations => Item::Organization(serde_json::from_value(body).map_err(bad)?),
            Kind::SubTypes => Item::SubType(serde_json::from_value(body).map_err(bad)?),
            Kind::Contracts => Item::Contract(serde_json::from_value(body).map_err(bad)?),
            k => Item::Named(k, serde_json::from_value(body).map_err(bad)?),
        })
    }
}

/// How an item is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Create it, or update the item with that code (the JSON import).
    Upsert,
    /// Create it; an existing code is a 409.
    Create,
    /// Update the item with this id; its code (a sub-type: its type and number) must stay the same.
    Update(i64),
}

/// What writing an item did.
struct Change {
    action: &'static str,
    id: i64,
    old: Option<Value>,
    new: Value,
}

/// Who may write items of `kind`: super admins; a project's contracts also its project admins (checked again, per
/// project, when the item is written).
fn require_writer(caller: &Caller, kind: Kind) -> Result<(), AppError> {
    if kind == Kind::Contracts {
        caller.require_admin().map(|_| ())
    } else {
        caller.require_super_admin().map(|_| ())
    }
}

/// `POST /reference/{kind}` and `PUT /reference/{kind}/{id}`: one item. Returns the item's id and what was done.
pub(crate) async fn save_item(s: &Catalog, caller: &Caller, item: Item, mode: Mode) -> Result<(i64, &'static str), AppError> {
    require_writer(caller, item.kind())?;
    let now = s.clock.now_ms();
    let mut tx = s.db.begin_write().await?;
    let change = write_item(&mut tx, s.db.dialect, caller, &item, mode).await?;
    if change.action != "UNCHANGED" {
        audit::append(&mut tx, s.db.dialect, ADMIN_CHAIN, &[audit_entry(caller, &item, &change, now, None)]).await?;
    }
    tx.commit().await?;
    s.reference.reload().await?;
    Ok((change.id, change.action))
}

/// One item of `kind` from its JSON (super admins, and for contracts project admins; checked before the body is
/// read): created (`id` None) or edited.
pub(crate) async fn save_json(s: &Catalog, caller: &Caller, kind: &str, id: Option<i64>, body: Value) -> Result<(i64, &'static str), AppError> {
    let kind = Kind::parse(kind)?;
    require_writer(caller, kind)?;
    let item = Item::from_json(kind, body)?;
    let mode = match id {
        Some(id) => Mode::Update(id),
        None => Mode::Create,
    };
    save_item(s, caller, item, mode).await
}

/// A reference document as JSON text (super admins; at most [`MAX_BYTES`]), parsed and imported.
pub(crate) async fn import_text(s: &Catalog, caller: &Caller, text: &str, dry_run: bool) -> Result<ImportReport, AppError> {
    caller.require_super_admin()?;
    if text.len() > MAX_BYTES {
        return Err(AppError::PayloadTooLarge);
    }
    import_document(s, caller, parse_document(text)?, dry_run).await
}

/// A reference document from JSON text; errors name the line and column.
pub(crate) fn parse_document(text: &str) -> Result<ReferenceDocument, AppError> {
    serde_json::from_str::<ReferenceDocument>(text).map_err(|e| {
        let reason = e.to_string().chars().take(160).collect::<String>();
        AppError::validation(ReferenceDetail::DocumentJson { line: &e.line(), column: &e.column(), reason: &reason })
    })
}

/// `POST /reference/import`: a whole document, every item created or updated by its code, in one transaction;
/// committed only when every item is ok and it is not a dry run.
pub(crate) async fn import_document(s: &Catalog, caller: &Caller, doc: ReferenceDocument, dry_run: bool) -> Result<ImportReport, AppError> {
    caller.require_super_admin()?;
    if doc.is_empty() {
        return Err(AppError::validation(ReferenceDetail::DocumentEmpty));
    }
    if doc.len() > MAX_ITEMS {
        return Err(AppError::validation(ReferenceDetail::DocumentTooLarge { max: &MAX_ITEMS }));
    }
    // dependency order: organizations and types before the projects and sub-types that name them
    let mut items: Vec<(usize, Item)> = Vec::with_capacity(doc.len());
    items.extend(doc.organizations.into_iter().enumerate().map(|(i, x)| (i + 1, Item::Organization(x))));
    items.extend(doc.correspondence_types.into_iter().enumerate().map(|(i, x)| (i + 1, Item::Named(Kind::CorrespondenceTypes, x))));
    items.extend(doc.sub_types.into_iter().enumerate().map(|(i, x)| (i + 1, Item::SubType(x))));
    items.extend(doc.rfa_types.into_iter().enumerate().map(|(i, x)| (i + 1, Item::Named(Kind::RfaTypes, x))));
    items.extend(doc.disciplines.into_iter().enumerate().map(|(i, x)| (i + 1, Item::Named(Kind::Disciplines, x))));
    items.extend(doc.projects.into_iter().enumerate().map(|(i, x)| (i + 1, Item::Project(x))));
    // contracts after the projects they belong to
    items.extend(doc.contracts.into_iter().enumerate().map(|(i, x)| (i + 1, Item::Contract(x))));

    let now = s.clock.now_ms();
    let mut tx = s.db.begin_write().await?;
    let mut rows = Vec::with_capacity(items.len());
    let mut entries = Vec::new();
    let mut seen: std::collections::HashMap<(Kind, String), usize> = std::collections::HashMap::new();
    for (row, item) in &items {
        let identity = (item.kind(), identity(item));
        let outcome = match seen.get(&identity) {
            Some(first) => Err(repeated(item, *first)),
            None => {
                seen.insert(identity, *row);
                write_item(&mut tx, s.db.dialect, caller, item, Mode::Upsert).await
            }
        };
        // a database failure may have ended the transaction on the server: stop, never write more items in it
        if let Err(AppError::Database { .. } | AppError::Internal { .. } | AppError::VersionConflict(_)) = &outcome {
            let _ = tx.rollback().await;
            return outcome.map(|_| ImportReport::new(dry_run, Vec::new()));
        }
        let (ok, action, message, detail, code) = match &outcome {
            Ok(c) => (true, Some(c.action.to_string()), None, None, None),
            Err(e) => (false, None, Some(e.message_th()), Some(e.to_string()), Some(e.code().code().to_string())),
        };
        if let Ok(c) = &outcome {
            if c.action != "UNCHANGED" {
                entries.push(audit_entry(caller, item, c, now, Some("JSON_IMPORT")));
            }
        }
        rows.push(ImportRowReport {
            row: *row,
            kind: item.kind().section().into(),
            key: Some(item.label()),
            action,
            ok,
            message,
            detail,
            code,
            counter_id: None,
            last_number: None,
        });
    }
    let mut report = ImportReport::new(dry_run, rows);
    if dry_run || report.error_rows > 0 {
        tx.rollback().await?;
        return Ok(report);
    }
    if !entries.is_empty() {
        audit::append(&mut tx, s.db.dialect, ADMIN_CHAIN, &entries).await?;
    }
    tx.commit().await?;
    s.reference.reload().await?;
    report.applied = true;
    Ok(report)
}

fn identity(item: &Item) -> String {
    let n = crate::numbering::normalize_code;
    match item {
        Item::Project(p) => n(&p.code),
        Item::Organization(o) => n(&o.code),
        Item::Named(_, x) => n(&x.code),
        Item::SubType(x) => format!("{}\u{0}{}", n(&x.correspondence_type_code), x.sub_type_number.trim()),
        Item::Contract(x) => format!("{}\u{0}{}", n(&x.project_code), n(&x.code)),
    }
}

fn audit_entry(caller: &Caller, item: &Item, c: &Change, now: i64, via: Option<&str>) -> AuditEntry {
    AuditEntry {
        operation: format!("REFERENCE_{}", c.action),
        status: "SUCCESS".into(),
        old_value: c.old.as_ref().map(Value::to_string),
        new_value: Some(c.new.to_string()),
        metadata: Some(json!({ "kind": item.kind().section(), "id": c.id, "code": item.label(), "via": via }).to_string()),
        ..caller.audit_base(now)
    }
}

// ---- checks ----

fn name(raw: &str) -> Result<String, AppError> {
    let n = raw.trim();
    if n.is_empty() || n.chars().count() > MAX_NAME_CHARS || n.chars().any(char::is_control) {
        return Err(AppError::validation(ReferenceDetail::NameLength { max: &MAX_NAME_CHARS }));
    }
    Ok(n.to_string())
}

fn code(kind: CodeKind, raw: &str) -> Result<String, AppError> {
    validate_code(kind, raw).map_err(AppError::validation)
}

fn fiscal_first_month(m: u32) -> Result<i64, AppError> {
    if (1..=12).contains(&m) {
        Ok(m.into())
    } else {
        Err(AppError::validation(ReferenceDetail::FiscalFirstMonth { month: &m }))
    }
}

fn role(raw: &str) -> Result<String, AppError> {
    let role = raw.trim().to_ascii_uppercase();
    if ["OWNER", "CONSULTANT", "CONTRACTOR", "OTHER"].contains(&role.as_str()) {
        Ok(role)
    } else {
        Err(AppError::validation(ReferenceDetail::OrganizationRole))
    }
}

fn sub_type_number(raw: &str) -> Result<String, AppError> {
    let number = raw.trim().to_string();
    if number.is_empty() || number.len() > 5 || !number.chars().all(|c| c.is_ascii_digit()) {
        return Err(AppError::validation(ReferenceDetail::SubTypeNumber));
    }
    Ok(number)
}

/// The item repeats the one of its section at `first`.
fn repeated(item: &Item, first: usize) -> AppError {
    AppError::validation(ReferenceDetail::RepeatedItem { kind: &item.kind().word(), label: &item.label(), first: &first })
}

fn exists(kind: Kind, label: &str) -> AppError {
    AppError::conflict(ErrorCode::AlreadyExists, ReferenceDetail::Exists { kind: &kind.word(), label: &label })
}

/// No item of `kind` has this id.
fn missing_id(kind: Kind, id: i64) -> AppError {
    AppError::not_found(ReferenceDetail::ItemById { kind: &kind.word(), id: &id })
}

/// No item of `kind` has this code (named by its first 40 characters).
fn missing_code(kind: Kind, code: &str) -> AppError {
    AppError::not_found(ReferenceDetail::ItemByCode { kind: &kind.word(), code: &code.chars().take(40).collect::<String>() })
}

fn code_is_fixed(kind: Kind, stored: &str) -> AppError {
    AppError::conflict(ErrorCode::CodeImmutable, ReferenceDetail::CodeFixed { kind: &kind.word(), stored: &stored })
}

fn unique(kind: Kind, label: &str) -> impl Fn(sqlx::Error) -> AppError + '_ {
    move |e| if is_unique_violation(&e) { exists(kind, label) } else { e.into() }
}

// ---- writes (inside the caller's transaction) ----

/// The stored row with this code (or id): (id, code, the item's current values as JSON).
async fn find(tx: &mut Tx<'_>, kind: Kind, by_id: Option<i64>, code: &str) -> Result<Option<(i64, String, Value)>, AppError> {
    let Some(r) = store::find_item(tx, kind, by_id, code).await? else { return Ok(None) };
    let (id, code, name) = (r.id, r.code, r.name);
    let current = match r.detail {
        ItemDetail::Project { active, fiscal_year_first_month } => {
            json!({ "code": code, "name": name, "active": active, "fiscalYearFirstMonth": fiscal_year_first_month })
        }
        ItemDetail::Organization { role } => json!({ "code": code, "name": name, "role": role }),
        ItemDetail::SubType { correspondence_type_id, sub_type_number } => {
            json!({ "code": code, "name": name, "corrTypeId": correspondence_type_id, "subTypeNumber": sub_type_number })
        }
        ItemDetail::Plain => json!({ "code": code, "name": name }),
    };
    Ok(Some((id, code, current)))
}

async fn write_item(tx: &mut Tx<'_>, dialect: Dialect, caller: &Caller, item: &Item, mode: Mode) -> Result<Change, AppError> {
    let kind = item.kind();
    let by_id = match mode {
        Mode::Update(id) => Some(id),
        _ => None,
    };
    match item {
        Item::Contract(x) => write_contract(tx, caller, x, mode).await,
        Item::Project(p) => {
            let code = code(CodeKind::Project, &p.code)?;
            let name = name(&p.name)?;
            let members = match &p.members {
                None => None,
                Some(codes) => Some(org_ids(tx, codes).await?),
            };
            let found = located(tx, kind, by_id, &code, mode).await?;
            let active = p.active.unwrap_or(match &found {
                Some((_, _, cur)) => cur["active"].as_bool().unwrap_or(true),
                None => true,
            });
            let first_month = match (p.fiscal_year_first_month, &found) {
                (Some(m), _) => fiscal_first_month(m)?,
                (None, Some((_, _, cur))) => cur["fiscalYearFirstMonth"].as_i64().unwrap_or(DEFAULT_FISCAL_FIRST_MONTH.into()),
                (None, None) => DEFAULT_FISCAL_FIRST_MONTH.into(),
            };
            let (id, action, old) = match found {
                None => {
                    let id = store::insert_project(tx, &code, &name, active, first_month).await.map_err(unique(kind, &code))?;
                    (id, "CREATE", None)
                }
                Some((id, _, cur)) => {
                    let mut old = cur.clone();
                    old["members"] = json!(member_ids(tx, ProjectId(id)).await?);
                    let changed = cur["name"] != json!(name) || cur["active"] != json!(active) || cur["fiscalYearFirstMonth"] != json!(first_month);
                    if changed {
                        store::update_project(tx, id, &name, active, first_month).await?;
                    }
                    (id, if changed { "UPDATE" } else { "UNCHANGED" }, Some(old))
                }
            };
            let mut action = action;
            if let Some(want) = &members {
                let have = member_ids(tx, ProjectId(id)).await?;
                if &have != want {
                    store::replace_project_members(tx, ProjectId(id), want).await?;
                    if action == "UNCHANGED" {
                        action = "UPDATE";
                    }
                }
            }
            let _ = dialect;
            let new = json!({ "code": code, "name": name, "active": active, "fiscalYearFirstMonth": first_month, "members": member_ids(tx, ProjectId(id)).await? });
            Ok(Change { action, id, old, new })
        }
        Item::Organization(o) => {
            let code = code(CodeKind::Party, &o.code)?;
            let name = name(&o.name)?;
            let role = role(&o.role)?;
            let new = json!({ "code": code, "name": name, "role": role });
            match located(tx, kind, by_id, &code, mode).await? {
                None => {
                    let id = store::insert_organization(tx, &code, &name, &role).await.map_err(unique(kind, &code))?;
                    Ok(Change { action: "CREATE", id, old: None, new })
                }
                Some((id, _, cur)) if cur == new => Ok(Change { action: "UNCHANGED", id, old: Some(cur), new }),
                Some((id, _, cur)) => {
                    store::update_organization(tx, id, &name, &role).await?;
                    Ok(Change { action: "UPDATE", id, old: Some(cur), new })
                }
            }
        }
        Item::Named(kind, x) => {
            let kind = *kind;
            let code = code(CodeKind::Party, &x.code)?;
            let name = name(&x.name)?;
            let new = json!({ "code": code, "name": name });
            match located(tx, kind, by_id, &code, mode).await? {
                None => {
                    let id = store::insert_named_item(tx, kind, &code, &name).await.map_err(unique(kind, &code))?;
                    Ok(Change { action: "CREATE", id, old: None, new })
                }
                Some((id, _, cur)) if cur == new => Ok(Change { action: "UNCHANGED", id, old: Some(cur), new }),
                Some((id, _, cur)) => {
                    store::rename_named_item(tx, kind, id, &name).await?;
                    Ok(Change { action: "UPDATE", id, old: Some(cur), new })
                }
            }
        }
        Item::SubType(x) => {
            let type_code = crate::numbering::normalize_code(&x.correspondence_type_code);
            let correspondence_type_id: CorrespondenceTypeId = match store::correspondence_type_id_by_code(tx, &type_code).await? {
                Some(id) => CorrespondenceTypeId(id),
                None => return Err(missing_code(Kind::CorrespondenceTypes, &type_code)),
            };
            let number = sub_type_number(&x.sub_type_number)?;
            let code = code(CodeKind::Party, &x.code)?;
            let name = name(&x.name)?;
            let label = format!("{type_code}/{number}");
            let found = match by_id {
                Some(id) => match find(tx, kind, Some(id), "").await? {
                    None => return Err(missing_id(kind, id)),
                    Some((_, _, cur)) if cur["corrTypeId"] != json!(correspondence_type_id) || cur["subTypeNumber"] != json!(number) => {
                        return Err(AppError::conflict(ErrorCode::CodeImmutable, ReferenceDetail::SubTypeFixed))
                    }
                    Some(found) => Some(found),
                },
                None => match store::sub_type_id_by_number(tx, correspondence_type_id, &number).await? {
                    Some(id) => find(tx, kind, Some(id), "").await?,
                    None => None,
                },
            };
            if mode == Mode::Create && found.is_some() {
                return Err(exists(kind, &label));
            }
            let new = json!({ "code": code, "name": name, "corrTypeId": correspondence_type_id, "subTypeNumber": number });
            match found {
                None => {
                    let id = store::insert_sub_type(tx, correspondence_type_id, &number, &code, &name).await.map_err(unique(kind, &label))?;
                    Ok(Change { action: "CREATE", id, old: None, new })
                }
                Some((id, _, cur)) if cur == new => Ok(Change { action: "UNCHANGED", id, old: Some(cur), new }),
                Some((id, _, cur)) => {
                    store::update_sub_type(tx, id, &code, &name).await.map_err(unique(kind, &label))?;
                    Ok(Change { action: "UPDATE", id, old: Some(cur), new })
                }
            }
        }
    }
}

/// A contract: its project and code are its identity; a project admin writes only their projects' contracts.
async fn write_contract(tx: &mut Tx<'_>, caller: &Caller, x: &ContractInput, mode: Mode) -> Result<Change, AppError> {
    let kind = Kind::Contracts;
    let project_code = crate::numbering::normalize_code(&x.project_code);
    let project_id = match store::project_id_by_code(tx, &project_code).await? {
        Some(id) => id,
        None => return Err(missing_code(Kind::Projects, &project_code)),
    };
    caller.require_project_admin(project_id)?;
    let code = code(CodeKind::Party, &x.code)?;
    let name = name(&x.name)?;
    let label = format!("{project_code}/{code}");
    let found = match mode {
        Mode::Update(id) => match store::find_contract(tx, Some(id), ProjectId::NONE, "").await? {
            None => return Err(missing_id(kind, id)),
            Some(c) if c.project_id != project_id || c.code != code => {
                // the stored contract is only disclosed to who administers its project
                caller.require_project_admin(c.project_id)?;
                let stored = store::project_code_by_id(tx, c.project_id).await?.unwrap_or_default();
                return Err(code_is_fixed(kind, &format!("{stored}/{}", c.code)));
            }
            found => found,
        },
        Mode::Create => match store::find_contract(tx, None, project_id, &code).await? {
            Some(_) => return Err(exists(kind, &label)),
            None => None,
        },
        Mode::Upsert => store::find_contract(tx, None, project_id, &code).await?,
    };
    let active = x.active.unwrap_or(found.as_ref().is_none_or(|c| c.active != 0));
    let new = json!({ "projectId": project_id, "code": code, "name": name, "active": active });
    match found {
        None => {
            let id = store::insert_contract(tx, project_id, &code, &name, active).await.map_err(unique(kind, &label))?;
            Ok(Change { action: "CREATE", id, old: None, new })
        }
        Some(c) => {
            let cur = json!({ "projectId": c.project_id, "code": c.code, "name": c.name, "active": c.active != 0 });
            if cur == new {
                return Ok(Change { action: "UNCHANGED", id: c.id, old: Some(cur), new });
            }
            store::update_contract(tx, c.id, &name, active).await?;
            Ok(Change { action: "UPDATE", id: c.id, old: Some(cur), new })
        }
    }
}

/// The stored item a write applies to, by the mode's rules (sub-types are handled by their own identity).
async fn located(tx: &mut Tx<'_>, kind: Kind, by_id: Option<i64>, code: &str, mode: Mode) -> Result<Option<(i64, String, Value)>, AppError> {
    match mode {
        Mode::Update(id) => match find(tx, kind, by_id, code).await? {
            None => Err(missing_id(kind, id)),
            Some((_, stored, _)) if stored != code => Err(code_is_fixed(kind, &stored)),
            found => Ok(found),
        },
        Mode::Create => match find(tx, kind, None, code).await? {
            Some(_) => Err(exists(kind, code)),
            None => Ok(None),
        },
        Mode::Upsert => find(tx, kind, None, code).await,
    }
}

async fn org_ids(tx: &mut Tx<'_>, codes: &[String]) -> Result<Vec<OrganizationId>, AppError> {
    let mut ids = Vec::with_capacity(codes.len());
    for raw in codes {
        let code = crate::numbering::normalize_code(raw);
        match store::organization_id_by_code(tx, &code).await? {
            Some(id) => ids.push(id),
            None => return Err(AppError::not_found(ReferenceDetail::UnknownMember { code: &code.chars().take(40).collect::<String>() })),
        }
    }
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

async fn member_ids(tx: &mut Tx<'_>, project_id: ProjectId) -> Result<Vec<OrganizationId>, AppError> {
    Ok(store::project_member_ids(tx, project_id).await?)
}
