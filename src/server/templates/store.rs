//! SQL for templates and their versions.

use crate::contract::{CorrespondenceTypeId, ProjectId, TemplateConfig, TemplateId, UserId};
use crate::numbering::ResetScope;
use crate::server::audit::{self, AuditEntry, ADMIN_CHAIN};
use crate::server::db::{classify, ms_to_datetime, Db, DbFailure};
use crate::server::error::{is_lost_race, AppError, Pause, Retry};

/// The current version of one stored template.
#[derive(Clone, Debug)]
pub(crate) struct StoredTemplate {
    pub(crate) id: TemplateId,
    pub(crate) project_id: ProjectId,
    pub(crate) correspondence_type_id: Option<CorrespondenceTypeId>,
    pub(crate) template: String,
    pub(crate) reset_scope: ResetScope,
    pub(crate) version: i64,
    pub(crate) updated_at: i64,
    pub(crate) updated_by: String,
}

impl StoredTemplate {
    pub(crate) fn to_config(&self) -> TemplateConfig {
        TemplateConfig {
            id: self.id,
            project_id: self.project_id,
            correspondence_type_id: self.correspondence_type_id,
            template: self.template.clone(),
            reset_scope: self.reset_scope,
            version: self.version,
            updated_at: crate::server::db::ms_to_datetime(self.updated_at),
            updated_by: self.updated_by.clone(),
        }
    }
}

const SELECT: &str = "SELECT t.id, t.project_id, t.correspondence_type_id, t.template, t.reset_scope, t.version, t.updated_at, \
    COALESCE(u.username, 'system') AS updated_by FROM numbering_templates t LEFT JOIN users u ON u.id = t.updated_by";

/// A row of [`SELECT`]: the default template of a project has `correspondence_type_id` 0.
#[derive(sqlx::FromRow)]
struct TemplateRow {
    id: TemplateId,
    project_id: ProjectId,
    correspondence_type_id: CorrespondenceTypeId,
    template: String,
    reset_scope: String,
    version: i64,
    updated_at: i64,
    updated_by: String,
}

impl From<TemplateRow> for StoredTemplate {
    fn from(r: TemplateRow) -> StoredTemplate {
        StoredTemplate {
            id: r.id,
            project_id: r.project_id,
            correspondence_type_id: (r.correspondence_type_id != CorrespondenceTypeId::NONE).then_some(r.correspondence_type_id),
            template: r.template,
            reset_scope: ResetScope::parse(&r.reset_scope).unwrap_or(ResetScope::Yearly),
            version: r.version,
            updated_at: r.updated_at,
            updated_by: r.updated_by,
        }
    }
}

/// The templates in use (a retired one is not: the next of the resolution order
/// (docs/rules/numbering.md#which-template-numbers-a-request) applies in its place).
pub(crate) async fn load_current(db: &Db) -> Result<Vec<StoredTemplate>, AppError> {
    let rows: Vec<TemplateRow> = sqlx::query_as(&format!("{SELECT} WHERE t.retired_at IS NULL")).fetch_all(&db.pool).await?;
    Ok(rows.into_iter().map(StoredTemplate::from).collect())
}

pub(crate) async fn list_for_project(db: &Db, project_id: ProjectId) -> Result<Vec<StoredTemplate>, AppError> {
    let rows: Vec<TemplateRow> =
        sqlx::query_as(&format!("{SELECT} WHERE t.retired_at IS NULL AND t.project_id = ? ORDER BY t.correspondence_type_id"))
            .bind(project_id)
            .fetch_all(&db.pool)
            .await?;
    Ok(rows.into_iter().map(StoredTemplate::from).collect())
}

/// Builds the audit row of a save from (new version, previous text and scope).
pub(crate) type AuditFor<'a> = &'a (dyn Fn(i64, Option<&(String, String)>) -> AuditEntry + Sync);

/// Stores `template` as the next version of (project, type), recording the text before and after, and
/// its audit row in the same transaction. Concurrent saves of one template queue up (each becomes the
/// next version); a lost race is retried.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn save_version(
    db: &Db,
    project_id: ProjectId,
    correspondence_type_id: Option<CorrespondenceTypeId>,
    template: &str,
    reset_scope: ResetScope,
    reason: &str,
    user_id: Option<UserId>,
    now_ms: i64,
    audit_entry: Option<AuditFor<'_>>,
) -> Result<StoredTemplate, AppError> {
    // two admins saving the same template at once: the loser tries again on the new head, after a short pause
    Retry { times: 8, pause: Pause::Jitter(5) }
        .run(is_lost_race, || save_once(db, project_id, correspondence_type_id, template, reset_scope, reason, user_id, now_ms, audit_entry))
        .await
}

fn lost_race(e: sqlx::Error) -> AppError {
    match classify(&e) {
        DbFailure::UniqueViolation | DbFailure::RetryableConflict => AppError::VersionConflict("numbering template".into()),
        _ => e.into(),
    }
}

#[allow(clippy::too_many_arguments)]
async fn save_once(
    db: &Db,
    project_id: ProjectId,
    correspondence_type_id: Option<CorrespondenceTypeId>,
    template: &str,
    reset_scope: ResetScope,
    reason: &str,
    user_id: Option<UserId>,
    now_ms: i64,
    audit_entry: Option<AuditFor<'_>>,
) -> Result<StoredTemplate, AppError> {
    let type_key = correspondence_type_id.unwrap_or(CorrespondenceTypeId::NONE);
    let mut tx = db.begin_write().await.map_err(lost_race)?;
    let current: Option<(i64, String, String, i64)> = sqlx::query_as(&format!(
        "SELECT id, template, reset_scope, version FROM numbering_templates WHERE project_id = ? AND correspondence_type_id = ?{}",
        db.dialect.for_update()
    ))
    .bind(project_id)
    .bind(type_key)
    .fetch_optional(&mut *tx)
    .await
    .map_err(lost_race)?;
    let (id, version, previous) = match current {
        Some((id, previous_template, previous_scope, previous_version)) => {
            let version = previous_version + 1;
            let updated = sqlx::query(
                "UPDATE numbering_templates SET template = ?, reset_scope = ?, version = ?, updated_at = ?, updated_by = ?, retired_at = NULL WHERE id = ? AND version = ?",
            )
            .bind(template)
            .bind(reset_scope.as_str())
            .bind(version)
            .bind(now_ms)
            .bind(user_id)
            .bind(id)
            .bind(version - 1)
            .execute(&mut *tx)
            .await
            .map_err(lost_race)?;
            if updated.rows_affected() != 1 {
                return Err(AppError::VersionConflict(format!("template {id}")));
            }
            (id, version, Some((previous_template, previous_scope)))
        }
        None => {
            let inserted: i64 = sqlx::query_scalar(
                "INSERT INTO numbering_templates (project_id, correspondence_type_id, template, reset_scope, version, updated_at, updated_by) VALUES (?, ?, ?, ?, 1, ?, ?) RETURNING id",
            )
            .bind(project_id)
            .bind(type_key)
            .bind(template)
            .bind(reset_scope.as_str())
            .bind(now_ms)
            .bind(user_id)
            .fetch_one(&mut *tx)
            .await
            .map_err(lost_race)?;
            (inserted, 1, None)
        }
    };
    sqlx::query(
        "INSERT INTO numbering_template_versions (template_id, version, template, reset_scope, previous_template, previous_reset_scope, reason, changed_by, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(id)
    .bind(version)
    .bind(template)
    .bind(reset_scope.as_str())
    .bind(previous.as_ref().map(|p| p.0.clone()))
    .bind(previous.as_ref().map(|p| p.1.clone()))
    .bind(reason)
    .bind(user_id)
    .bind(now_ms)
    .execute(&mut *tx)
    .await
    .map_err(lost_race)?;
    if let Some(entry) = audit_entry {
        audit::append(&mut tx, db.dialect, ADMIN_CHAIN, &[entry(version, previous.as_ref())]).await?;
    }
    tx.commit().await.map_err(lost_race)?;
    let row: TemplateRow = sqlx::query_as(&format!("{SELECT} WHERE t.id = ?")).bind(id).fetch_one(&db.pool).await?;
    Ok(row.into())
}

/// The template with this id, in use or retired.
pub(crate) async fn by_id(db: &Db, id: TemplateId) -> Result<Option<StoredTemplate>, AppError> {
    let row: Option<TemplateRow> = sqlx::query_as(&format!("{SELECT} WHERE t.id = ?")).bind(id).fetch_optional(&db.pool).await?;
    Ok(row.map(StoredTemplate::from))
}

/// Retires the template `id` at `version` (the one its admin saw) with its audit row, in one transaction: false when it
/// is retired already or has moved on meanwhile.
pub(crate) async fn retire(db: &Db, id: TemplateId, version: i64, now_ms: i64, audit_entry: AuditEntry) -> Result<bool, AppError> {
    let mut tx = db.begin_write().await.map_err(lost_race)?;
    let retired = sqlx::query("UPDATE numbering_templates SET retired_at = ? WHERE id = ? AND version = ? AND retired_at IS NULL")
        .bind(now_ms)
        .bind(id)
        .bind(version)
        .execute(&mut *tx)
        .await
        .map_err(lost_race)?;
    if retired.rows_affected() != 1 {
        return Ok(false);
    }
    audit::append(&mut tx, db.dialect, ADMIN_CHAIN, &[audit_entry]).await?;
    tx.commit().await.map_err(lost_race)?;
    Ok(true)
}

/// A row of `numbering_template_versions` with the name of who made the change.
#[derive(sqlx::FromRow)]
struct VersionRow {
    version: i64,
    template: String,
    reset_scope: String,
    previous_template: Option<String>,
    previous_reset_scope: Option<String>,
    reason: String,
    changed_by: String,
    changed_at: i64,
}

impl From<VersionRow> for crate::contract::TemplateVersion {
    fn from(r: VersionRow) -> Self {
        crate::contract::TemplateVersion {
            version: r.version,
            template: r.template,
            reset_scope: ResetScope::parse(&r.reset_scope).unwrap_or(ResetScope::Yearly),
            previous_template: r.previous_template,
            previous_reset_scope: r.previous_reset_scope.and_then(|s| ResetScope::parse(&s)),
            reason: r.reason,
            changed_by: r.changed_by,
            changed_at: ms_to_datetime(r.changed_at),
        }
    }
}

/// Every version of the template of (project, type or default), newest first.
pub(crate) async fn list_versions(
    db: &Db,
    project_id: ProjectId,
    correspondence_type_id: Option<CorrespondenceTypeId>,
) -> Result<Vec<crate::contract::TemplateVersion>, AppError> {
    let rows: Vec<VersionRow> = sqlx::query_as(
        "SELECT v.version, v.template, v.reset_scope, v.previous_template, v.previous_reset_scope, v.reason, \
         COALESCE(u.username, 'system') AS changed_by, v.changed_at \
         FROM numbering_template_versions v JOIN numbering_templates t ON t.id = v.template_id LEFT JOIN users u ON u.id = v.changed_by \
         WHERE t.project_id = ? AND t.correspondence_type_id = ? ORDER BY v.version DESC",
    )
    .bind(project_id)
    .bind(correspondence_type_id.unwrap_or(CorrespondenceTypeId::NONE))
    .fetch_all(&db.pool)
    .await?;
    Ok(rows.into_iter().map(Into::into).collect())
}
