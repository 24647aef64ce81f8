//! Numbering templates per project and correspondence type: resolution order
//! (docs/rules/numbering.md#which-template-numbers-a-request), validation on
//! save with the shared template module, and versioning (every save is a new version with a reason).

pub(crate) mod http;
pub(crate) mod store;

use crate::contract::live::LiveEvent;
use crate::contract::messages::{AllOf, Arg, Detail, TemplateDetail};
use crate::contract::{Lang, ResolvedTemplate, TemplateConfig, TemplateId, TemplateVersion};
use crate::numbering::{resolution, KeyParts, ResetScope, Step, Stored, Template};
use crate::numbering::{CorrespondenceTypeId, ProjectId};
use crate::server::audit::AuditEntry;
use crate::server::auth::Caller;
use crate::server::db::Db;
use crate::server::error::{AppError, ErrorCode};
use crate::server::reference::Catalog;
use crate::server::reference::Snapshot;

pub(crate) use store::StoredTemplate;

/// The template of a (project, type) request (docs/rules/numbering.md#which-template-numbers-a-request,
/// `numbering::resolution`): the (project, type) template;
/// else the project default when it keeps the type's rules; else the type's system default. Type
/// `CorrespondenceTypeId::NONE` is the project default itself.
pub(crate) fn resolve(snapshot: &Snapshot, project_id: ProjectId, correspondence_type_id: CorrespondenceTypeId) -> ResolvedTemplate {
    let stored = |type_id: CorrespondenceTypeId| snapshot.templates.get(&(project_id, type_id));
    fn as_stored(t: &StoredTemplate) -> Stored<'_> {
        Stored { text: &t.template, scope: t.reset_scope }
    }
    let code = snapshot.correspondence_type(Some(correspondence_type_id), None).map(|t| t.code.as_str()).unwrap_or("");
    let default = stored(CorrespondenceTypeId::NONE);
    let own = if correspondence_type_id == CorrespondenceTypeId::NONE { None } else { stored(correspondence_type_id) };
    let chosen = resolution::resolve(code, own.map(as_stored), default.map(as_stored));
    let config_id = match chosen.step {
        Step::ProjectType => own.map(|t| t.id),
        Step::ProjectDefault => default.map(|t| t.id),
        Step::SystemDefault => None,
    };
    ResolvedTemplate {
        template: chosen.text.to_string(),
        reset_scope: chosen.scope,
        source: chosen.step.into(),
        config_id,
        project_default_skipped: chosen.project_default_skipped,
    }
}

// ---- reads: any logged-in person; an API token only in the projects of its scope (`Caller::require_project_read`) ----

/// The template a (project, type) request would use today, and from which step of the resolution.
pub(crate) async fn resolved_for(
    state: &Catalog,
    caller: &Caller,
    project_id: ProjectId,
    correspondence_type_id: CorrespondenceTypeId,
) -> Result<ResolvedTemplate, AppError> {
    let snapshot = state.reference.get().await?;
    snapshot.project(Some(project_id), None)?;
    caller.require_project_read(project_id)?;
    snapshot.correspondence_type(Some(correspondence_type_id), None)?;
    Ok(resolve(&snapshot, project_id, correspondence_type_id))
}

/// The current templates of one project, or of every project the caller may read.
pub(crate) async fn list(db: &Db, caller: &Caller, project_id: Option<ProjectId>) -> Result<Vec<TemplateConfig>, AppError> {
    let all = match project_id {
        Some(p) => {
            caller.require_project_read(p)?;
            store::list_for_project(db, p).await?
        }
        None => store::load_current(db).await?,
    };
    Ok(all.iter().filter(|t| caller.require_project_read(t.project_id).is_ok()).map(StoredTemplate::to_config).collect())
}

/// The current version of the template with this id, in use or retired (NB001 when there is none; 403 outside a
/// token's scope).
pub(crate) async fn current(db: &Db, caller: &Caller, id: TemplateId) -> Result<StoredTemplate, AppError> {
    let found = store::by_id(db, id).await?.ok_or_else(|| AppError::ConfigNotFound(format!("config {id}")))?;
    caller.require_project_read(found.project_id)?;
    Ok(found)
}

/// The history of the template of (project, type or the project default), newest first.
pub(crate) async fn versions(
    db: &Db,
    caller: &Caller,
    project_id: ProjectId,
    correspondence_type_id: Option<CorrespondenceTypeId>,
) -> Result<Vec<TemplateVersion>, AppError> {
    caller.require_project_read(project_id)?;
    store::list_versions(db, project_id, correspondence_type_id).await
}

pub(crate) const MAX_REASON_CHARS: usize = 500;

/// What a save asks for, beyond the text.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SaveOptions<'a> {
    /// The admin has seen that this change moves numbering to a new counter (docs/rules/numbering.md#counter-keys) and accepts it.
    pub(crate) acknowledge_key_change: bool,
    /// Set when the save restores an older version.
    pub(crate) rollback_of: Option<i64>,
    pub(crate) operation: Option<&'a str>,
}

/// Whether replacing `old` by `new` changes the counter key: the parts shown, or the reset period. Answers the key
/// before and after.
fn key_change(old: &ResolvedTemplate, new: &Template, new_scope: ResetScope) -> Option<(KeyShown, KeyShown)> {
    let old_template = Template::parse(&old.template).ok()?;
    if old_template.keeps_counters_of(old.reset_scope, new, new_scope) {
        return None;
    }
    let before = KeyShown { parts: old_template.key_parts(), scope: old.reset_scope };
    Some((before, KeyShown { parts: new.key_parts(), scope: new_scope }))
}

/// A counter key as a refusal names it (`[originator, recipient] reset YEARLY`), each part in the answer's language.
struct KeyShown {
    parts: KeyParts,
    scope: ResetScope,
}

impl Arg for KeyShown {
    fn text(&self, lang: Lang) -> String {
        let k = self.parts;
        let words = [
            (k.originator, TemplateDetail::KeyOriginator),
            (k.recipient, TemplateDetail::KeyRecipient),
            (k.sub_type, TemplateDetail::KeySubType),
            (k.rfa_type, TemplateDetail::KeyRfaType),
            (k.discipline, TemplateDetail::KeyDiscipline),
        ];
        let parts = words.iter().filter(|(shown, _)| *shown).map(|(_, word)| word.render(lang)).collect::<Vec<_>>().join(", ");
        TemplateDetail::CounterKey { parts: &parts, scope: &self.scope }.render(lang)
    }
}

/// Saves a new version of the template of (project, type or default), after every rule of docs/rules/numbering.md#which-template-numbers-a-request.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn save(
    state: &Catalog,
    caller: &Caller,
    project_id: ProjectId,
    correspondence_type_id: Option<CorrespondenceTypeId>,
    text: &str,
    reset_scope: ResetScope,
    reason: &str,
    options: SaveOptions<'_>,
) -> Result<TemplateConfig, AppError> {
    let snapshot = state.reference.get().await?;
    let project = snapshot.project(Some(project_id), None)?;
    caller.require_project_admin(project.id)?;
    let correspondence_type_code = match correspondence_type_id {
        Some(id) => snapshot.correspondence_type(Some(id), None)?.code.clone(),
        None => String::new(),
    };
    let reason = check_reason(reason)?;
    let template = Template::validate(text, &correspondence_type_code, reset_scope).map_err(|errors| AppError::invalid_format(AllOf(&errors)))?;
    // A change of the parts shown or of the reset period starts numbering on a new counter: say so, and
    // require the admin to acknowledge it.
    let current = resolve(&snapshot, project.id, correspondence_type_id.unwrap_or(CorrespondenceTypeId::NONE));
    if let Some((before, after)) = key_change(&current, &template, reset_scope) {
        if !options.acknowledge_key_change {
            return Err(AppError::conflict(ErrorCode::KeyChangeNotAcknowledged, TemplateDetail::KeyChangeOnSave { before: &before, after: &after }));
        }
    }
    let now = state.clock.now_ms();
    let operation = options.operation.unwrap_or("TEMPLATE_UPDATE");
    let audit_row = |version: i64, previous: Option<&(String, String)>| {
        AuditEntry {
        operation: operation.into(),
        status: "SUCCESS".into(),
        template_used: Some(template.source().to_string()),
        old_value: previous.map(|(t, scope)| format!("{t} [{scope}]")),
        new_value: Some(format!("{} [{}]", template.source(), reset_scope.as_str())),
        metadata: Some(
            serde_json::json!({"projectId": project.id, "correspondenceTypeId": correspondence_type_id, "version": version, "reason": reason, "rollbackOf": options.rollback_of}).to_string(),
        ),
        ..caller.audit_base(now)
    }
    };
    let saved = store::save_version(
        &state.db,
        project.id,
        correspondence_type_id,
        template.source(),
        reset_scope,
        reason,
        caller.user_id(),
        now,
        Some(&audit_row),
    )
    .await?;
    state.reference.reload().await?;
    state.events.publish(LiveEvent::Template { project_id: project.id, correspondence_type_id });
    Ok(saved.to_config())
}

/// The reason of a template change: 1–500 characters, trimmed.
fn check_reason(reason: &str) -> Result<&str, AppError> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(AppError::validation(TemplateDetail::ReasonRequired));
    }
    if reason.chars().count() > MAX_REASON_CHARS {
        return Err(AppError::validation(TemplateDetail::ReasonTooLong { max: &MAX_REASON_CHARS }));
    }
    Ok(reason)
}

/// Retires the template `id` (docs/rules/numbering.md#the-lifecycle-of-a-number: "retire a template"): it stops
/// being used and the next template of the docs/rules/numbering.md#templates
/// order applies — for a type's template the project's default or the type's system default, for a project's default
/// the system defaults. Its row and versions stay (history); saving it again brings it back. A change of the counter
/// key must be acknowledged, as for a save. Answers the template that applies now.
pub(crate) async fn retire(
    state: &Catalog,
    caller: &Caller,
    id: TemplateId,
    reason: &str,
    acknowledge_key_change: bool,
) -> Result<ResolvedTemplate, AppError> {
    let found = current(&state.db, caller, id).await?;
    caller.require_project_admin(found.project_id)?;
    let reason = check_reason(reason)?;
    let snapshot = state.reference.get().await?;
    let type_id = found.correspondence_type_id.unwrap_or(CorrespondenceTypeId::NONE);
    if let Some(type_id) = found.correspondence_type_id {
        let code = snapshot.correspondence_type(Some(type_id), None).map(|t| t.code.as_str()).unwrap_or("");
        let default =
            snapshot.templates.get(&(found.project_id, CorrespondenceTypeId::NONE)).map(|t| Stored { text: &t.template, scope: t.reset_scope });
        let next = resolution::resolve(code, None, default);
        let next_template = Template::parse(next.text).map_err(|_| AppError::internal(format!("template '{}' does not parse", next.text)))?;
        let now_used = resolve(&snapshot, found.project_id, type_id);
        if let Some((before, after)) = key_change(&now_used, &next_template, next.scope) {
            if !acknowledge_key_change {
                return Err(AppError::conflict(
                    ErrorCode::KeyChangeNotAcknowledged,
                    TemplateDetail::KeyChangeOnRetire { before: &before, after: &after },
                ));
            }
        }
    }
    let now = state.clock.now_ms();
    let entry = AuditEntry {
        operation: "TEMPLATE_RETIRED".into(),
        status: "SUCCESS".into(),
        template_used: Some(found.template.clone()),
        old_value: Some(format!("{} [{}]", found.template, found.reset_scope.as_str())),
        metadata: Some(
            serde_json::json!({"projectId": found.project_id, "correspondenceTypeId": found.correspondence_type_id, "version": found.version, "reason": reason})
                .to_string(),
        ),
        ..caller.audit_base(now)
    };
    if !store::retire(&state.db, id, found.version, now, entry).await? {
        return Err(AppError::VersionConflict(format!("template {id}")));
    }
    state.reference.reload().await?;
    state.events.publish(LiveEvent::Template { project_id: found.project_id, correspondence_type_id: found.correspondence_type_id });
    let snapshot = state.reference.get().await?;
    Ok(resolve(&snapshot, found.project_id, type_id))
}

/// Restores an older version as a new version (which is itself audited). Numbers already issued keep
/// their text: a template change never touches them.
pub(crate) async fn rollback(
    state: &Catalog,
    caller: &Caller,
    project_id: ProjectId,
    correspondence_type_id: Option<CorrespondenceTypeId>,
    version: i64,
    reason: &str,
    acknowledge_key_change: bool,
) -> Result<TemplateConfig, AppError> {
    caller.require_project_admin(project_id)?;
    let versions = store::list_versions(&state.db, project_id, correspondence_type_id).await?;
    let old =
        versions.iter().find(|v| v.version == version).ok_or_else(|| AppError::not_found(TemplateDetail::VersionNotFound { version: &version }))?;
    let options = SaveOptions { acknowledge_key_change, rollback_of: Some(version), operation: Some("TEMPLATE_ROLLBACK") };
    save(state, caller, project_id, correspondence_type_id, &old.template, old.reset_scope, reason, options).await
}
