//! SQL for templates and their versions.

use sqlx::Row;

use super::StoredTemplate;
use crate::numbering::ResetScope;
use crate::server::audit::{self, AuditEntry, ADMIN_CHAIN};
use crate::server::db::{is_retryable_conflict, is_unique_violation, Db, Dialect};
use crate::server::error::AppError;

const SELECT: &str = "SELECT t.id, t.project_id, t.corr_type_id, t.template, t.reset_scope, t.version, t.updated_at, \
    COALESCE(u.username, 'system') AS updated_by FROM numbering_templates t LEFT JOIN users u ON u.id = t.updated_by";

fn from_row(r: &sqlx::any::AnyRow) -> StoredTemplate {
    let corr_type_id: i64 = r.get(2);
    StoredTemplate {
        id: r.get(0),
        project_id: r.get(1),
        corr_type_id: (corr_type_id != 0).then_some(corr_type_id),
        template: r.get(3),
        reset_scope: ResetScope::parse(&r.get::<String, _>(4)).unwrap_or(ResetScope::Yearly),
        version: r.get(5),
        updated_at: r.get(6),
        updated_by: r.get(7),
    }
}

pub async fn load_current(db: &Db) -> Result<Vec<StoredTemplate>, AppError> {
    Ok(sqlx::query(SELECT).fetch_all(&db.pool).await?.iter().map(from_row).collect())
}

pub async fn list_for_project(db: &Db, project_id: i64) -> Result<Vec<StoredTemplate>, AppError> {
    Ok(sqlx::query(&format!("{SELECT} WHERE t.project_id = ? ORDER BY t.corr_type_id"))
        .bind(project_id)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(from_row)
        .collect())
}

/// Builds the audit row of a save from (new version, previous text and scope).
pub type AuditFor<'a> = &'a (dyn Fn(i64, Option<&(String, String)>) -> AuditEntry + Sync);

/// Stores `template` as the next version of (project, type), recording the text before and after, and
/// its audit row in the same transaction. Concurrent saves of one template queue up (each becomes the
/// next version); a lost race is retried.
#[allow(clippy::too_many_arguments)]
pub async fn save_version(
    db: &Db,
    project_id: i64,
    corr_type_id: Option<i64>,
    template: &str,
    reset_scope: ResetScope,
    reason: &str,
    user_id: Option<i64>,
    now_ms: i64,
    audit_entry: Option<AuditFor<'_>>,
) -> Result<StoredTemplate, AppError> {
    let mut attempt = 0;
    loop {
        match save_once(db, project_id, corr_type_id, template, reset_scope, reason, user_id, now_ms, audit_entry).await {
            Err(AppError::VersionConflict(_)) if attempt < 8 => {
                attempt += 1;
                use rand::Rng;
                let pause = rand::thread_rng().gen_range(1..=5 * attempt);
                tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
            }
            other => return other,
        }
    }
}

fn lost_race(e: sqlx::Error) -> AppError {
    if is_unique_violation(&e) || is_retryable_conflict(&e) {
        AppError::VersionConflict("numbering template".into())
    } else {
        e.into()
    }
}

#[allow(clippy::too_many_arguments)]
async fn save_once(
    db: &Db,
    project_id: i64,
    corr_type_id: Option<i64>,
    template: &str,
    reset_scope: ResetScope,
    reason: &str,
    user_id: Option<i64>,
    now_ms: i64,
    audit_entry: Option<AuditFor<'_>>,
) -> Result<StoredTemplate, AppError> {
    let type_key = corr_type_id.unwrap_or(0);
    let mut tx = db.begin_write().await.map_err(lost_race)?;
    let lock = if db.dialect == Dialect::MySql { " FOR UPDATE" } else { "" };
    let current = sqlx::query(&format!("SELECT id, template, reset_scope, version FROM numbering_templates WHERE project_id = ? AND corr_type_id = ?{lock}"))
        .bind(project_id)
        .bind(type_key)
        .fetch_optional(&mut *tx)
        .await
        .map_err(lost_race)?;
    let (id, version, previous) = match current {
        Some(r) => {
            let id: i64 = r.get(0);
            let version: i64 = r.get::<i64, _>(3) + 1;
            let updated = sqlx::query(
                "UPDATE numbering_templates SET template = ?, reset_scope = ?, version = ?, updated_at = ?, updated_by = ? WHERE id = ? AND version = ?",
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
            (id, version, Some((r.get::<String, _>(1), r.get::<String, _>(2))))
        }
        None => {
            let inserted = sqlx::query(
                "INSERT INTO numbering_templates (project_id, corr_type_id, template, reset_scope, version, updated_at, updated_by) VALUES (?, ?, ?, ?, 1, ?, ?) RETURNING id",
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
            (inserted.get::<i64, _>(0), 1, None)
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
    let row = sqlx::query(&format!("{SELECT} WHERE t.id = ?")).bind(id).fetch_one(&db.pool).await?;
    Ok(from_row(&row))
}

/// Every version of the template of (project, type or default), newest first.
pub async fn list_versions(db: &Db, project_id: i64, corr_type_id: Option<i64>) -> Result<Vec<crate::contract::TemplateVersion>, AppError> {
    Ok(sqlx::query(
        "SELECT v.version, v.template, v.reset_scope, v.previous_template, v.previous_reset_scope, v.reason, COALESCE(u.username, 'system'), v.changed_at \
         FROM numbering_template_versions v JOIN numbering_templates t ON t.id = v.template_id LEFT JOIN users u ON u.id = v.changed_by \
         WHERE t.project_id = ? AND t.corr_type_id = ? ORDER BY v.version DESC",
    )
    .bind(project_id)
    .bind(corr_type_id.unwrap_or(0))
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(|r| crate::contract::TemplateVersion {
        version: r.get(0),
        template: r.get(1),
        reset_scope: ResetScope::parse(&r.get::<String, _>(2)).unwrap_or(ResetScope::Yearly),
        previous_template: r.get(3),
        previous_reset_scope: r.get::<Option<String>, _>(4).and_then(|s| ResetScope::parse(&s)),
        reason: r.get(5),
        changed_by: r.get(6),
        changed_at: crate::server::db::ms_to_datetime(r.get(7)),
    })
    .collect())
}
