//! SQL for reference data.

use crate::contract::messages::ReferenceDetail;
use crate::contract::{ContractItem, OrgItem, ProjectItem, RefItem, ReferenceData, SubTypeItem};
use crate::numbering::{validate_code, CodeKind, DEFAULT_FISCAL_FIRST_MONTH};
use crate::numbering::{ContractId, CorrespondenceTypeId, DisciplineId, OrganizationId, ProjectId, RfaTypeId, SubTypeId};
use crate::server::db::{classify, now_ms, Db, DbFailure, Tx};
use crate::server::error::{AppError, ErrorCode};

/// The kinds of reference data: the `{kind}` of `/api/v1/reference/{kind}` (its OpenAPI schema too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Kind {
    Projects,
    Organizations,
    CorrespondenceTypes,
    SubTypes,
    RfaTypes,
    Disciplines,
    Contracts,
}

impl Kind {
    pub(crate) fn parse(s: &str) -> Result<Kind, AppError> {
        Ok(match s {
            "projects" => Kind::Projects,
            "organizations" => Kind::Organizations,
            "correspondence-types" => Kind::CorrespondenceTypes,
            "sub-types" => Kind::SubTypes,
            "rfa-types" => Kind::RfaTypes,
            "disciplines" => Kind::Disciplines,
            "contracts" => Kind::Contracts,
            other => return Err(AppError::not_found(ReferenceDetail::UnknownKind { kind: &other.chars().take(40).collect::<String>() })),
        })
    }
    /// The section name in a reference document (and in reports).
    pub(crate) fn section(self) -> &'static str {
        match self {
            Kind::Projects => "projects",
            Kind::Organizations => "organizations",
            Kind::CorrespondenceTypes => "correspondenceTypes",
            Kind::SubTypes => "subTypes",
            Kind::RfaTypes => "rfaTypes",
            Kind::Disciplines => "disciplines",
            Kind::Contracts => "contracts",
        }
    }
    /// One item of the kind as a sentence names it, in each language.
    pub(crate) fn word(self) -> ReferenceDetail<'static> {
        match self {
            Kind::Projects => ReferenceDetail::KindProjects,
            Kind::Organizations => ReferenceDetail::KindOrganizations,
            Kind::CorrespondenceTypes => ReferenceDetail::KindCorrespondenceTypes,
            Kind::SubTypes => ReferenceDetail::KindSubTypes,
            Kind::RfaTypes => ReferenceDetail::KindRfaTypes,
            Kind::Disciplines => ReferenceDetail::KindDisciplines,
            Kind::Contracts => ReferenceDetail::KindContracts,
        }
    }
}

pub(crate) async fn load_reference_data(db: &Db) -> Result<ReferenceData, AppError> {
    let members: Vec<(ProjectId, OrganizationId)> =
        sqlx::query_as("SELECT project_id, org_id FROM project_organizations ORDER BY org_id").fetch_all(&db.pool).await?;
    let projects: Vec<(ProjectId, String, String, i64, i64)> =
        sqlx::query_as("SELECT id, code, name, active, fiscal_year_first_month FROM projects ORDER BY code").fetch_all(&db.pool).await?;
    let projects = projects
        .into_iter()
        .map(|(id, code, name, active, first_month)| ProjectItem {
            id,
            code,
            name,
            active: active != 0,
            member_org_ids: members.iter().filter(|(p, _)| *p == id).map(|(_, o)| *o).collect(),
            fiscal_year_first_month: u32::try_from(first_month).unwrap_or(DEFAULT_FISCAL_FIRST_MONTH),
        })
        .collect();
    let organizations: Vec<(OrganizationId, String, String, String)> =
        sqlx::query_as("SELECT id, code, name, role FROM organizations ORDER BY id").fetch_all(&db.pool).await?;
    let organizations = organizations.into_iter().map(|(id, code, name, role)| OrgItem { id, code, name, role }).collect();
    let sub_types: Vec<(SubTypeId, CorrespondenceTypeId, String, String, String)> = sqlx::query_as(
        "SELECT id, correspondence_type_id, sub_type_number, code, name FROM sub_types ORDER BY correspondence_type_id, sub_type_number",
    )
    .fetch_all(&db.pool)
    .await?;
    let sub_types = sub_types
        .into_iter()
        .map(|(id, correspondence_type_id, sub_type_number, code, name)| SubTypeItem { id, correspondence_type_id, sub_type_number, code, name })
        .collect();
    let contracts: Vec<(ContractId, ProjectId, String, String, i64)> =
        sqlx::query_as("SELECT id, project_id, code, name, active FROM contracts ORDER BY project_id, code").fetch_all(&db.pool).await?;
    let contracts =
        contracts.into_iter().map(|(id, project_id, code, name, active)| ContractItem { id, project_id, code, name, active: active != 0 }).collect();
    Ok(ReferenceData {
        contracts,
        projects,
        organizations,
        correspondence_types: ref_items(db, "SELECT id, code, name FROM correspondence_types ORDER BY id").await?,
        sub_types,
        rfa_types: ref_items(db, "SELECT id, code, name FROM rfa_types ORDER BY id").await?,
        disciplines: ref_items(db, "SELECT id, code, name FROM disciplines ORDER BY id").await?,
    })
}

async fn ref_items<Id: From<i64>>(db: &Db, sql: &'static str) -> Result<Vec<RefItem<Id>>, AppError> {
    let rows: Vec<(i64, String, String)> = sqlx::query_as(sql).fetch_all(&db.pool).await?;
    Ok(rows.into_iter().map(|(id, code, name)| RefItem { id: Id::from(id), code, name }).collect())
}

pub(crate) const MAX_NAME_CHARS: usize = 200;

fn name(raw: &str) -> Result<String, AppError> {
    let n = raw.trim();
    if n.is_empty() || n.chars().count() > MAX_NAME_CHARS {
        return Err(AppError::validation(ReferenceDetail::NameLength { max: &MAX_NAME_CHARS }));
    }
    Ok(n.to_string())
}

fn code(kind: CodeKind, raw: &str) -> Result<String, AppError> {
    validate_code(kind, raw).map_err(AppError::validation)
}

fn conflict_on_duplicate(e: sqlx::Error, kind: Kind, value: &str) -> AppError {
    match classify(&e) {
        DbFailure::UniqueViolation => AppError::conflict(ErrorCode::AlreadyExists, ReferenceDetail::Exists { kind: &kind.word(), label: &value }),
        _ => e.into(),
    }
}

async fn insert_returning_id<'q>(
    db: &Db,
    query: sqlx::query::QueryScalar<'q, sqlx::Any, i64, sqlx::any::AnyArguments<'q>>,
    kind: Kind,
    value: &str,
) -> Result<i64, AppError> {
    query.fetch_one(&db.writer).await.map_err(|e| conflict_on_duplicate(e, kind, value))
}

pub(crate) async fn create_project(db: &Db, raw_code: &str, name_raw: &str, active: bool) -> Result<ProjectId, AppError> {
    let code = code(CodeKind::Project, raw_code)?;
    let q = sqlx::query_scalar("INSERT INTO projects (code, name, active, created_at) VALUES (?, ?, ?, ?) RETURNING id")
        .bind(code.clone())
        .bind(name(name_raw)?)
        .bind(active as i64)
        .bind(now_ms());
    insert_returning_id(db, q, Kind::Projects, &code).await.map(ProjectId)
}

pub(crate) async fn create_organization(db: &Db, raw_code: &str, name_raw: &str, role: &str) -> Result<OrganizationId, AppError> {
    let code = code(CodeKind::Party, raw_code)?;
    let role = role.trim().to_ascii_uppercase();
    if !["OWNER", "CONSULTANT", "CONTRACTOR", "OTHER"].contains(&role.as_str()) {
        return Err(AppError::validation(ReferenceDetail::OrganizationRole));
    }
    let q = sqlx::query_scalar("INSERT INTO organizations (code, name, role, created_at) VALUES (?, ?, ?, ?) RETURNING id")
        .bind(code.clone())
        .bind(name(name_raw)?)
        .bind(role)
        .bind(now_ms());
    insert_returning_id(db, q, Kind::Organizations, &code).await.map(OrganizationId)
}

pub(crate) async fn add_member(db: &Db, project_id: ProjectId, org_id: OrganizationId) -> Result<(), AppError> {
    sqlx::query(db.dialect.insert_project_member_if_absent()).bind(project_id).bind(org_id).execute(&db.writer).await?;
    Ok(())
}

pub(crate) async fn create_correspondence_type(db: &Db, raw_code: &str, name_raw: &str) -> Result<CorrespondenceTypeId, AppError> {
    let code = code(CodeKind::Party, raw_code)?;
    let q = sqlx::query_scalar("INSERT INTO correspondence_types (code, name, created_at) VALUES (?, ?, ?) RETURNING id")
        .bind(code.clone())
        .bind(name(name_raw)?)
        .bind(now_ms());
    insert_returning_id(db, q, Kind::CorrespondenceTypes, &code).await.map(CorrespondenceTypeId)
}

pub(crate) async fn create_sub_type(
    db: &Db,
    correspondence_type_id: CorrespondenceTypeId,
    number: &str,
    raw_code: &str,
    name_raw: &str,
) -> Result<SubTypeId, AppError> {
    let number = number.trim().to_string();
    if number.is_empty() || number.len() > 5 || !number.chars().all(|c| c.is_ascii_digit()) {
        return Err(AppError::validation(ReferenceDetail::SubTypeNumber));
    }
    let code = code(CodeKind::Party, raw_code)?;
    let q = sqlx::query_scalar("INSERT INTO sub_types (correspondence_type_id, sub_type_number, code, name) VALUES (?, ?, ?, ?) RETURNING id")
        .bind(correspondence_type_id)
        .bind(number.clone())
        .bind(code)
        .bind(name(name_raw)?);
    insert_returning_id(db, q, Kind::SubTypes, &number).await.map(SubTypeId)
}

pub(crate) async fn create_rfa_type(db: &Db, raw_code: &str, name_raw: &str) -> Result<RfaTypeId, AppError> {
    let code = code(CodeKind::Party, raw_code)?;
    let q = sqlx::query_scalar("INSERT INTO rfa_types (code, name) VALUES (?, ?) RETURNING id").bind(code.clone()).bind(name(name_raw)?);
    insert_returning_id(db, q, Kind::RfaTypes, &code).await.map(RfaTypeId)
}

pub(crate) async fn create_discipline(db: &Db, raw_code: &str, name_raw: &str) -> Result<DisciplineId, AppError> {
    let code = code(CodeKind::Party, raw_code)?;
    let q = sqlx::query_scalar("INSERT INTO disciplines (code, name) VALUES (?, ?) RETURNING id").bind(code.clone()).bind(name(name_raw)?);
    insert_returning_id(db, q, Kind::Disciplines, &code).await.map(DisciplineId)
}

pub(crate) async fn create_contract(db: &Db, project_id: ProjectId, raw_code: &str, name_raw: &str) -> Result<ContractId, AppError> {
    let code = code(CodeKind::Party, raw_code)?;
    let q = sqlx::query_scalar("INSERT INTO contracts (project_id, code, name, active, created_at) VALUES (?, ?, ?, 1, ?) RETURNING id")
        .bind(project_id)
        .bind(code.clone())
        .bind(name(name_raw)?)
        .bind(now_ms());
    insert_returning_id(db, q, Kind::Contracts, &code).await.map(ContractId)
}

pub(crate) async fn is_empty(db: &Db) -> Result<bool, AppError> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM projects").fetch_one(&db.pool).await?;
    Ok(n == 0)
}

// ---- admin writes, inside the caller's transaction ----
// Errors stay `sqlx::Error` so the caller can tell a unique violation from other failures.

fn table(kind: Kind) -> &'static str {
    match kind {
        Kind::Projects => "projects",
        Kind::Organizations => "organizations",
        Kind::CorrespondenceTypes => "correspondence_types",
        Kind::SubTypes => "sub_types",
        Kind::RfaTypes => "rfa_types",
        Kind::Disciplines => "disciplines",
        Kind::Contracts => "contracts",
    }
}

/// The columns one kind has beyond id, code and name.
#[derive(Clone, Debug)]
pub(crate) enum ItemDetail {
    Plain,
    Project { active: bool, fiscal_year_first_month: i64 },
    Organization { role: String },
    SubType { correspondence_type_id: CorrespondenceTypeId, sub_type_number: String },
}

#[derive(Clone, Debug)]
pub(crate) struct ItemRow {
    pub(crate) id: i64,
    pub(crate) code: String,
    pub(crate) name: String,
    pub(crate) detail: ItemDetail,
}

/// The stored item of `kind` with this id, or else with this code.
pub(crate) async fn find_item(tx: &mut Tx<'_>, kind: Kind, by_id: Option<i64>, code: &str) -> Result<Option<ItemRow>, sqlx::Error> {
    let cols = match kind {
        Kind::Projects => "id, code, name, active, fiscal_year_first_month",
        Kind::Organizations => "id, code, name, role",
        Kind::SubTypes => "id, code, name, correspondence_type_id, sub_type_number",
        _ => "id, code, name",
    };
    let filter = if by_id.is_some() { "id = ?" } else { "code = ?" };
    let sql = format!("SELECT {cols} FROM {} WHERE {filter}", table(kind));
    let q = sqlx::query_as::<_, StoredItem>(&sql);
    let q = match by_id {
        Some(id) => q.bind(id),
        None => q.bind(code),
    };
    let Some(r) = q.fetch_optional(&mut **tx).await? else { return Ok(None) };
    let detail = match (kind, r.active, r.role, r.correspondence_type_id, r.sub_type_number) {
        (Kind::Projects, Some(active), ..) => ItemDetail::Project {
            active: active != 0,
            fiscal_year_first_month: r.fiscal_year_first_month.unwrap_or(DEFAULT_FISCAL_FIRST_MONTH.into()),
        },
        (Kind::Organizations, _, Some(role), ..) => ItemDetail::Organization { role },
        (Kind::SubTypes, _, _, Some(correspondence_type_id), Some(sub_type_number)) => {
            ItemDetail::SubType { correspondence_type_id, sub_type_number }
        }
        _ => ItemDetail::Plain,
    };
    Ok(Some(ItemRow { id: r.id, code: r.code, name: r.name, detail }))
}

/// A row of any reference table: the columns beyond id, code and name are there for their kind only.
#[derive(sqlx::FromRow)]
struct StoredItem {
    id: i64,
    code: String,
    name: String,
    #[sqlx(default)]
    active: Option<i64>,
    #[sqlx(default)]
    fiscal_year_first_month: Option<i64>,
    #[sqlx(default)]
    role: Option<String>,
    #[sqlx(default)]
    correspondence_type_id: Option<CorrespondenceTypeId>,
    #[sqlx(default)]
    sub_type_number: Option<String>,
}

pub(crate) async fn insert_project(tx: &mut Tx<'_>, code: &str, name: &str, active: bool, fiscal_year_first_month: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("INSERT INTO projects (code, name, active, fiscal_year_first_month, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id")
        .bind(code)
        .bind(name)
        .bind(active as i64)
        .bind(fiscal_year_first_month)
        .bind(now_ms())
        .fetch_one(&mut **tx)
        .await
}

pub(crate) async fn update_project(tx: &mut Tx<'_>, id: i64, name: &str, active: bool, fiscal_year_first_month: i64) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE projects SET name = ?, active = ?, fiscal_year_first_month = ? WHERE id = ?")
        .bind(name)
        .bind(active as i64)
        .bind(fiscal_year_first_month)
        .bind(id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

pub(crate) async fn project_member_ids(tx: &mut Tx<'_>, project_id: ProjectId) -> Result<Vec<OrganizationId>, sqlx::Error> {
    sqlx::query_scalar("SELECT org_id FROM project_organizations WHERE project_id = ? ORDER BY org_id").bind(project_id).fetch_all(&mut **tx).await
}

/// Makes `org_ids` (sorted, no duplicates) the whole membership of the project.
pub(crate) async fn replace_project_members(tx: &mut Tx<'_>, project_id: ProjectId, org_ids: &[OrganizationId]) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM project_organizations WHERE project_id = ?").bind(project_id).execute(&mut **tx).await?;
    for org in org_ids {
        sqlx::query("INSERT INTO project_organizations (project_id, org_id) VALUES (?, ?)").bind(project_id).bind(*org).execute(&mut **tx).await?;
    }
    Ok(())
}

pub(crate) async fn organization_id_by_code(tx: &mut Tx<'_>, code: &str) -> Result<Option<OrganizationId>, sqlx::Error> {
    sqlx::query_scalar("SELECT id FROM organizations WHERE code = ?").bind(code).fetch_optional(&mut **tx).await
}

pub(crate) async fn insert_organization(tx: &mut Tx<'_>, code: &str, name: &str, role: &str) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("INSERT INTO organizations (code, name, role, created_at) VALUES (?, ?, ?, ?) RETURNING id")
        .bind(code)
        .bind(name)
        .bind(role)
        .bind(now_ms())
        .fetch_one(&mut **tx)
        .await
}

pub(crate) async fn update_organization(tx: &mut Tx<'_>, id: i64, name: &str, role: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE organizations SET name = ?, role = ? WHERE id = ?").bind(name).bind(role).bind(id).execute(&mut **tx).await?;
    Ok(())
}

/// A correspondence type, RFA type or discipline (only correspondence types record `created_at`).
pub(crate) async fn insert_named_item(tx: &mut Tx<'_>, kind: Kind, code: &str, name: &str) -> Result<i64, sqlx::Error> {
    if kind == Kind::CorrespondenceTypes {
        sqlx::query_scalar("INSERT INTO correspondence_types (code, name, created_at) VALUES (?, ?, ?) RETURNING id")
            .bind(code)
            .bind(name)
            .bind(now_ms())
            .fetch_one(&mut **tx)
            .await
    } else {
        sqlx::query_scalar(&format!("INSERT INTO {} (code, name) VALUES (?, ?) RETURNING id", table(kind)))
            .bind(code)
            .bind(name)
            .fetch_one(&mut **tx)
            .await
    }
}

pub(crate) async fn rename_named_item(tx: &mut Tx<'_>, kind: Kind, id: i64, name: &str) -> Result<(), sqlx::Error> {
    sqlx::query(&format!("UPDATE {} SET name = ? WHERE id = ?", table(kind))).bind(name).bind(id).execute(&mut **tx).await?;
    Ok(())
}

pub(crate) async fn correspondence_type_id_by_code(tx: &mut Tx<'_>, code: &str) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT id FROM correspondence_types WHERE code = ?").bind(code).fetch_optional(&mut **tx).await
}

pub(crate) async fn sub_type_id_by_number(
    tx: &mut Tx<'_>,
    correspondence_type_id: CorrespondenceTypeId,
    number: &str,
) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT id FROM sub_types WHERE correspondence_type_id = ? AND sub_type_number = ?")
        .bind(correspondence_type_id)
        .bind(number)
        .fetch_optional(&mut **tx)
        .await
}

pub(crate) async fn insert_sub_type(
    tx: &mut Tx<'_>,
    correspondence_type_id: CorrespondenceTypeId,
    number: &str,
    code: &str,
    name: &str,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("INSERT INTO sub_types (correspondence_type_id, sub_type_number, code, name) VALUES (?, ?, ?, ?) RETURNING id")
        .bind(correspondence_type_id)
        .bind(number)
        .bind(code)
        .bind(name)
        .fetch_one(&mut **tx)
        .await
}

pub(crate) async fn update_sub_type(tx: &mut Tx<'_>, id: i64, code: &str, name: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE sub_types SET code = ?, name = ? WHERE id = ?").bind(code).bind(name).bind(id).execute(&mut **tx).await?;
    Ok(())
}

// ---- contracts: identified by (project, code) ----

/// A stored contract.
#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
pub(crate) struct ContractRow {
    pub(crate) id: i64,
    pub(crate) project_id: ProjectId,
    pub(crate) code: String,
    pub(crate) name: String,
    pub(crate) active: i64,
}

/// The contract with this id, or else the project's contract with this code.
pub(crate) async fn find_contract(
    tx: &mut Tx<'_>,
    by_id: Option<i64>,
    project_id: ProjectId,
    code: &str,
) -> Result<Option<ContractRow>, sqlx::Error> {
    let q = match by_id {
        Some(id) => sqlx::query_as("SELECT id, project_id, code, name, active FROM contracts WHERE id = ?").bind(id),
        None => {
            sqlx::query_as("SELECT id, project_id, code, name, active FROM contracts WHERE project_id = ? AND code = ?").bind(project_id).bind(code)
        }
    };
    q.fetch_optional(&mut **tx).await
}

pub(crate) async fn project_id_by_code(tx: &mut Tx<'_>, code: &str) -> Result<Option<ProjectId>, sqlx::Error> {
    sqlx::query_scalar("SELECT id FROM projects WHERE code = ?").bind(code).fetch_optional(&mut **tx).await
}

pub(crate) async fn project_code_by_id(tx: &mut Tx<'_>, id: ProjectId) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar("SELECT code FROM projects WHERE id = ?").bind(id).fetch_optional(&mut **tx).await
}

pub(crate) async fn insert_contract(tx: &mut Tx<'_>, project_id: ProjectId, code: &str, name: &str, active: bool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("INSERT INTO contracts (project_id, code, name, active, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id")
        .bind(project_id)
        .bind(code)
        .bind(name)
        .bind(active as i64)
        .bind(now_ms())
        .fetch_one(&mut **tx)
        .await
}

pub(crate) async fn update_contract(tx: &mut Tx<'_>, id: i64, name: &str, active: bool) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE contracts SET name = ?, active = ? WHERE id = ?").bind(name).bind(active as i64).bind(id).execute(&mut **tx).await?;
    Ok(())
}
