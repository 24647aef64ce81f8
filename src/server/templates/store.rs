//! SQL for templates and their versions.

use sqlx::Row;

use super::StoredTemplate;
use crate::numbering::ResetScope;
use crate::server::db::Db;
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

/// Stores `template` as the next version of (project, type), recording the text before and after.
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
) -> Result<StoredTemplate, AppError> {
    let type_key = corr_type_id.unwrap_or(0);
    let mut tx = db.begin_write().await?;
    let current = sqlx::query("SELECT id, template, reset_scope, version FROM numbering_templates WHERE project_id = ? AND corr_type_id = ?")
        .bind(project_id)
        .bind(type_key)
        .fetch_optional(&mut *tx)
        .await?;
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
            .await?;
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
            .await?;
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
    .await?;
    tx.commit().await?;
    let row = sqlx::query(&format!("{SELECT} WHERE t.id = ?")).bind(id).fetch_one(&db.pool).await?;
    Ok(from_row(&row))
}
