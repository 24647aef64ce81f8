//! `/templates` — the template editor (docs/rules/numbering.md#validation, docs/rules/api.md#web-app). Validation and preview run in the browser
//! with `crate::numbering` as the admin types (no request per keystroke); the server validates
//! again on save.

use leptos::prelude::*;

use super::api::{self, error_text};
use super::diff::{diff, Part};
use super::i18n::{use_i18n, Lang};
use super::widgets::{bangkok_time, choice_named, client_fetch, source_key, AdminContext, AdminPage, ErrorBox, ErrorSlot, IdSelect};
use crate::contract::*;
use crate::numbering::{
    fiscal_year, KeyParts, RenderValues, ResetScope, Template, TemplateError, DEFAULT_FISCAL_FIRST_MONTH, SAMPLE_CONTRACT_CODE,
    SYSTEM_DEFAULT_TEMPLATE,
};

#[component]
pub fn TemplatesPage() -> impl IntoView {
    view! {
        <AdminPage title="tpl.title" content=|ctx: AdminContext| view! { <TemplateEditor data=ctx.data user=ctx.user/> }/>
    }
}

/// Where the text in the editor came from when the (project, type) was chosen.
#[derive(Clone, Debug, PartialEq)]
enum Origin {
    /// The stored template of exactly this (project, type) / project default.
    Own { id: TemplateId, version: i64, updated_by: String, updated_at: String },
    /// No own template: the request falls back to this one (and passes over the project default when it breaks
    /// the type's rules).
    Inherited { source: TemplateSource, project_default_skipped: bool },
}

#[derive(Clone, Debug, PartialEq)]
struct Loaded {
    key: (ProjectId, Option<CorrespondenceTypeId>),
    text: String,
    scope: ResetScope,
    origin: Origin,
}

/// Sample codes for the live preview, taken from the reference data.
#[derive(Clone, Debug, Default, PartialEq)]
struct Sample {
    project: String,
    originator: String,
    recipient: String,
    correspondence_type: String,
    sub_type: String,
    rfa_type: String,
    discipline: String,
    /// The project's first contract, or a sample code when it has none.
    contract: String,
    /// The project's first month of the fiscal year, for `{FY:BE}`.
    fiscal_first_month: u32,
}

/// The stored templates of the chosen project, as loaded (project, answer).
type ListAnswer = ReadSignal<Option<Option<(ProjectId, Result<Vec<TemplateConfig>, String>)>>>;
/// The template a (project, type) resolves to, as loaded ((project, type), answer).
type ResolvedAnswer = ReadSignal<Option<Option<((ProjectId, CorrespondenceTypeId), Result<ResolvedTemplate, String>)>>>;
/// A change of the counter key against the stored template: (parts before, reset before, parts after, reset after).
type KeyChange = Option<(KeyParts, ResetScope, KeyParts, ResetScope)>;

#[component]
fn TemplateEditor(data: ReferenceData, user: UserInfo) -> impl IntoView {
    let i18n = use_i18n();
    let data = StoredValue::new(data);

    let editable: Vec<ProjectId> = data.with_value(|d| d.projects.iter().filter(|p| user.can_edit_templates(p.id)).map(|p| p.id).collect());
    if editable.is_empty() {
        return view! { <ErrorBox message=i18n.t("common.no_access")/> }.into_any();
    }
    let editable = StoredValue::new(editable);

    let project = RwSignal::new(editable.with_value(|e| e.first().copied()));
    let ctype = RwSignal::new(None::<CorrespondenceTypeId>);

    let project_choices = Signal::derive(move || {
        data.with_value(|d| {
            d.projects.iter().filter(|p| editable.with_value(|e| e.contains(&p.id))).map(|p| choice_named(p.id, &p.code, &p.name)).collect::<Vec<_>>()
        })
    });
    let type_choices =
        Signal::derive(move || data.with_value(|d| d.correspondence_types.iter().map(|t| choice_named(t.id, &t.code, &t.name)).collect::<Vec<_>>()));

    // ---- the stored templates: loaded when the selection changes and after a save, never per keystroke ----
    let saved_version = RwSignal::new(0u32);
    let (loaded, load_error) = load_stored(project, ctype, saved_version);

    // ---- the editor's state ----
    let text = RwSignal::new(String::new());
    let scope = RwSignal::new(ResetScope::default());
    let saved = RwSignal::new(None::<TemplateConfig>);

    // put the loaded template into the editor when the selection (or a save) loads a new one
    Effect::new(move |_| {
        if let Some(l) = loaded.get() {
            text.set(l.text);
            scope.set(l.scope);
        }
    });

    let (sample_year, sample_month) = sample_date();

    let type_code = Memo::new(move |_| {
        let t = ctype.get();
        data.with_value(|d| t.and_then(|t| d.correspondence_types.iter().find(|x| x.id == t)).map(|x| x.code.clone()))
    });
    let sample = sample_memo(data, project, ctype);

    // ---- live validation and preview: pure functions of the text, in the browser ----
    let parsed = Memo::new(move |_| text.with(|s| Template::parse(s)).ok());
    let validation = Memo::new(move |_| {
        let code = type_code.get().unwrap_or_default();
        text.with(|s| Template::validate(s, &code, scope.get())).map(|_| ())
    });

    // Locked while the selection's template loads: its answer replaces the text, and would discard what was typed
    // meanwhile (an end-to-end run saved the old template so).
    let loading = Signal::derive(move || loaded.with(Option::is_none));
    let draft = Draft { project, ctype, text, scope };
    let acknowledgment = Acknowledgment::new(draft, loaded, parsed);
    view! {
        <div class="form-grid">
            <IdSelect label="tpl.project" testid="select-project" choices=project_choices value=project/>
            <IdSelect label="tpl.type" testid="select-type" choices=type_choices value=ctype placeholder="tpl.project_default"/>
        </div>
        <ErrorSlot error=load_error/>
        <OriginLine loaded/>

        <TemplateFields text scope sample_year sample_month loading/>

        <LivePreview parsed sample scope sample_year sample_month/>

        <ValidationResult validation/>

        <KeyChangeWarning acknowledgment/>

        <SaveBar draft validation acknowledgment saved saved_version/>

        <TemplateHistory project ctype reload=saved_version saved/>

        <RetireBox loaded reload=saved_version/>
    }
    .into_any()
}

/// Retiring the selection's own template: a reason, and the acknowledgment when the counter key
/// changes with it (the server says so); afterwards requests use the next template of the resolution order
/// (docs/rules/numbering.md#which-template-numbers-a-request), named here.
#[component]
fn RetireBox(loaded: Memo<Option<Loaded>>, reload: RwSignal<u32>) -> impl IntoView {
    let i18n = use_i18n();
    let own = Memo::new(move |_| match loaded.get() {
        Some(Loaded { origin: Origin::Own { id, .. }, .. }) => Some(id),
        _ => None,
    });
    let open = RwSignal::new(false);
    let reason = RwSignal::new(String::new());
    let needs_ack = RwSignal::new(false);
    let ack = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let retired = RwSignal::new(None::<ResolvedTemplate>);
    Effect::new(move |_| {
        own.track();
        open.set(false);
        reason.set(String::new());
        needs_ack.set(false);
        ack.set(false);
        error.set(None);
    });
    let retire = Action::new(move |(id, why, acked): &(TemplateId, String, bool)| {
        let (id, why, acked) = (*id, why.clone(), *acked);
        async move {
            match api::retire_template(id, why, acked).await {
                Ok(now) => {
                    retired.set(Some(now));
                    reload.update(|v| *v += 1);
                }
                Err(e) => refused(&e, needs_ack, ack, error),
            }
        }
    });
    let can_retire = move || reason.with(|r| !r.trim().is_empty()) && (!needs_ack.get() || ack.get()) && !retire.pending().get();
    let on_retire = move |_| {
        let Some(id) = own.get_untracked() else { return };
        error.set(None);
        retire.dispatch((id, reason.get_untracked().trim().to_string(), needs_ack.get_untracked() && ack.get_untracked()));
    };
    view! {
        {move || retired.get().map(|now| view! {
            <p class="ok" data-testid="template-retired" role="status">
                {move || i18n.t("tpl.retire.done")}" "<code>{now.template.clone()}</code>
                " ("{move || i18n.t(source_key(now.source))}")"
            </p>
        })}
        <Show when=move || own.get().is_some()>
            <section class="retire" data-testid="template-retire-section">
                <Show when=move || !open.get()>
                    <button type="button" class="secondary" data-testid="template-retire" on:click=move |_| {
                        retired.set(None);
                        open.set(true);
                    }>
                        {move || i18n.t("tpl.retire")}
                    </button>
                </Show>
                <Show when=move || open.get()>
                    <div class="rollback-box" data-testid="template-retire-form">
                        <p class="small">{move || i18n.t("tpl.retire.note")}</p>
                        <AcknowledgeKeyChange when=needs_ack ack testid="template-retire"/>
                        <ReasonField label="tpl.retire.reason" testid="template-retire-reason" reason/>
                        <div class="form-row">
                            <button type="button" class="primary" data-testid="template-retire-confirm"
                                disabled=move || !can_retire() on:click=on_retire>
                                {move || i18n.t("tpl.retire.confirm")}
                            </button>
                            <button type="button" class="secondary" data-testid="template-retire-cancel"
                                on:click=move |_| open.set(false)>
                                {move || i18n.t("common.cancel")}
                            </button>
                        </div>
                        <ErrorSlot error/>
                    </div>
                </Show>
            </section>
        </Show>
    }
}

/// Loads the stored templates of the chosen project and the template the (project, type) resolves to — when
/// the selection changes and after a save (`saved_version`), never per keystroke; gives what the editor starts
/// from, and the error of either call.
fn load_stored(
    project: RwSignal<Option<ProjectId>>,
    ctype: RwSignal<Option<CorrespondenceTypeId>>,
    saved_version: RwSignal<u32>,
) -> (Memo<Option<Loaded>>, RwSignal<Option<String>>) {
    let list = client_fetch(move || {
        let p = project.get();
        saved_version.track();
        async move {
            match p {
                Some(p) => Some((p, api::list_templates(p).await.map_err(|e| error_text(&e)))),
                None => None,
            }
        }
    });
    let resolved = client_fetch(move || {
        let key = (project.get(), ctype.get());
        saved_version.track();
        async move {
            match key {
                (Some(p), Some(t)) => Some(((p, t), api::resolve_template(p, t).await.map_err(|e| error_text(&e)))),
                _ => None,
            }
        }
    });
    let load_error = RwSignal::new(None::<String>);
    let loaded = loaded_memo(project, ctype, list, resolved);
    Effect::new(move |_| {
        let list_err = match list.get().flatten() {
            Some((_, Err(m))) => Some(m),
            _ => None,
        };
        let resolve_err = match resolved.get().flatten() {
            Some((_, Err(m))) => Some(m),
            _ => None,
        };
        load_error.set(list_err.or(resolve_err));
    });
    (loaded, load_error)
}

/// The template of the selection, as it is stored (or inherited) — what the editor starts from.
fn loaded_memo(
    project: RwSignal<Option<ProjectId>>,
    ctype: RwSignal<Option<CorrespondenceTypeId>>,
    list: ListAnswer,
    resolved: ResolvedAnswer,
) -> Memo<Option<Loaded>> {
    Memo::new(move |_| -> Option<Loaded> {
        let p = project.get()?;
        let t = ctype.get();
        let configs = match list.get().flatten() {
            Some((lp, Ok(configs))) if lp == p => configs,
            _ => return None,
        };
        if let Some(c) = configs.iter().find(|c| c.correspondence_type_id == t) {
            return Some(Loaded {
                key: (p, t),
                text: c.template.clone(),
                scope: c.reset_scope,
                origin: Origin::Own { id: c.id, version: c.version, updated_by: c.updated_by.clone(), updated_at: bangkok_time(&c.updated_at) },
            });
        }
        match t {
            // a type without its own template: start from the one it falls back to
            Some(t) => match resolved.get().flatten() {
                Some((k, Ok(rt))) if k == (p, t) => Some(Loaded {
                    key: (p, Some(t)),
                    text: rt.template,
                    scope: rt.reset_scope,
                    origin: Origin::Inherited { source: rt.source, project_default_skipped: rt.project_default_skipped },
                }),
                _ => None,
            },
            None => Some(Loaded {
                key: (p, None),
                text: SYSTEM_DEFAULT_TEMPLATE.to_string(),
                scope: ResetScope::default(),
                origin: Origin::Inherited { source: TemplateSource::SystemDefault, project_default_skipped: false },
            }),
        }
    })
}

/// The sample year and month of the preview: the browser's date (set after hydration), changeable.
fn sample_date() -> (RwSignal<i32>, RwSignal<u32>) {
    let sample_year = RwSignal::new(2025i32);
    let sample_month = RwSignal::new(1u32);
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        if let Some((y, m)) = super::browser::bangkok_year_month_now() {
            sample_year.set(y);
            sample_month.set(m);
        }
    });
    (sample_year, sample_month)
}

/// Sample codes for the preview: the chosen project and type, its first member organizations, the first
/// sub-type of the type, the first RFA type and discipline.
fn sample_memo(
    data: StoredValue<ReferenceData>,
    project: RwSignal<Option<ProjectId>>,
    ctype: RwSignal<Option<CorrespondenceTypeId>>,
) -> Memo<Sample> {
    Memo::new(move |_| {
        let p = project.get();
        let t = ctype.get();
        data.with_value(|d| {
            let proj = p.and_then(|p| d.projects.iter().find(|x| x.id == p));
            let members: Vec<&OrgItem> = d.organizations.iter().filter(|o| proj.map(|p| p.member_org_ids.contains(&o.id)).unwrap_or(true)).collect();
            let sub =
                d.sub_types.iter().find(|s| Some(s.correspondence_type_id) == t).or_else(|| d.sub_types.first()).map(|s| s.sub_type_number.clone());
            let corr =
                t.and_then(|t| d.correspondence_types.iter().find(|x| x.id == t)).or_else(|| d.correspondence_types.first()).map(|x| x.code.clone());
            Sample {
                project: proj.map(|p| p.code.clone()).unwrap_or_default(),
                originator: members.first().map(|o| o.code.clone()).unwrap_or_default(),
                recipient: members.get(1).or(members.first()).map(|o| o.code.clone()).unwrap_or_default(),
                correspondence_type: corr.unwrap_or_default(),
                sub_type: sub.unwrap_or_default(),
                rfa_type: d.rfa_types.first().map(|x| x.code.clone()).unwrap_or_default(),
                discipline: d.disciplines.first().map(|x| x.code.clone()).unwrap_or_default(),
                contract: d
                    .contracts
                    .iter()
                    .find(|c| Some(c.project_id) == p && c.active)
                    .map_or_else(|| SAMPLE_CONTRACT_CODE.to_string(), |c| c.code.clone()),
                fiscal_first_month: proj.map(|p| p.fiscal_year_first_month).unwrap_or(DEFAULT_FISCAL_FIRST_MONTH),
            }
        })
    })
}

/// What the editor would save: the selection, the text and the reset.
#[derive(Clone, Copy)]
struct Draft {
    project: RwSignal<Option<ProjectId>>,
    ctype: RwSignal<Option<CorrespondenceTypeId>>,
    text: RwSignal<String>,
    scope: RwSignal<ResetScope>,
}

/// A change of the counter key (parts shown, reset period) against the stored template, whether the save needs
/// the acknowledgment (the server refuses the save without it), and the box ticked for it.
#[derive(Clone, Copy)]
struct Acknowledgment {
    key_change: Memo<KeyChange>,
    needs_ack: Memo<bool>,
    ack: RwSignal<bool>,
    /// The server refused a save without it although the editor saw no change (the stored one changed meanwhile).
    server_wants_ack: RwSignal<bool>,
}

impl Acknowledgment {
    fn new(draft: Draft, loaded: Memo<Option<Loaded>>, parsed: Memo<Option<Template>>) -> Self {
        let Draft { project, ctype, text, scope } = draft;
        let key_change = Memo::new(move |_| -> KeyChange {
            let l = loaded.get()?;
            let (before, after, new_scope) = (Template::parse(&l.text).ok()?, parsed.get()?, scope.get());
            (!before.keeps_counters_of(l.scope, &after, new_scope)).then_some((before.key_parts(), l.scope, after.key_parts(), new_scope))
        });
        let ack = RwSignal::new(false);
        // set when the server answered that the change needs the acknowledgment although the editor saw none
        // (the stored template changed meanwhile)
        let server_wants_ack = RwSignal::new(false);
        Effect::new(move |_| {
            key_change.track();
            ack.set(false);
        });
        Effect::new(move |_| {
            let _ = (project.get(), ctype.get(), text.with(|_| ()), scope.get());
            server_wants_ack.set(false);
        });
        let needs_ack = Memo::new(move |_| key_change.with(|k| k.is_some()) || server_wants_ack.get());
        Acknowledgment { key_change, needs_ack, ack, server_wants_ack }
    }
}

/// Where the text in the editor comes from: the stored version, or the template the selection inherits.
#[component]
fn OriginLine(loaded: Memo<Option<Loaded>>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <p class="small muted" data-testid="template-origin">
            {move || match loaded.get() {
                None => i18n.t("common.loading").to_string(),
                Some(Loaded { origin: Origin::Own { version, updated_by, updated_at, .. }, .. }) => format!(
                    "{}: {} {version} {} {updated_by}, {updated_at}",
                    i18n.t("tpl.current"), i18n.t("tpl.version"), i18n.t("tpl.by")
                ),
                Some(Loaded { origin: Origin::Inherited { source, project_default_skipped }, .. }) => {
                    let skipped = if project_default_skipped { format!(" ({})", i18n.t("tpl.projectDefaultSkipped")) } else { String::new() };
                    format!("{} {}{skipped}", i18n.t("tpl.current.none"), i18n.t(source_key(source)))
                }
            }}
        </p>
    }
}

/// The template text, the tokens it may use, the reset period and the sample year / month of the preview.
#[component]
fn TemplateFields(
    text: RwSignal<String>,
    scope: RwSignal<ResetScope>,
    sample_year: RwSignal<i32>,
    sample_month: RwSignal<u32>,
    loading: Signal<bool>,
) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <label class="field">
            <span>{move || i18n.t("tpl.template")}</span>
            <input type="text" class="mono wide" data-testid="template-input" spellcheck="false" autocomplete="off"
                disabled=move || loading.get() aria-busy=move || loading.get().to_string()
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))/>
        </label>
        <p class="small muted tokens-help">
            {move || i18n.t("tpl.tokens_help")}": "
            <code>"{PROJECT} {ORIGINATOR} {RECIPIENT} {CORR_TYPE} {SUB_TYPE} {RFA_TYPE} {DISCIPLINE} {CONTRACT} {SEQ:4} {YEAR:B.E.} {YEAR:A.D.} {FY:BE} {FY:CE} {MONTH} {REV}"</code>
        </p>
        <div class="form-row">
            <label class="field">
                <span>{move || i18n.t("tpl.reset")}</span>
                <select data-testid="template-reset" disabled=move || loading.get()
                    on:change=move |ev| scope.set(ResetScope::parse(&event_target_value(&ev)).unwrap_or_default())>
                    {[ResetScope::Yearly, ResetScope::FiscalYear, ResetScope::Monthly, ResetScope::None, ResetScope::Contract].into_iter().map(|s| {
                        let key = scope_word(s);
                        view! {
                            <option value=s.as_str() prop:selected=move || scope.get() == s>{move || i18n.t(key)}</option>
                        }
                    }).collect_view()}
                </select>
            </label>
            <label class="field small-field">
                <span>{move || i18n.t("tpl.sample_year")}</span>
                // in Thai the year is the Buddhist Era's, as the numbers show it; a year half typed changes nothing
                <input type="number" data-testid="template-sample-year"
                    min=move || (1900 + era_offset(i18n.lang.get())).to_string()
                    max=move || (2999 + era_offset(i18n.lang.get())).to_string()
                    prop:value=move || (sample_year.get() + era_offset(i18n.lang.get())).to_string()
                    on:input=move |ev| {
                        if let Ok(y) = event_target_value(&ev).parse::<i32>() {
                            let ad = y - era_offset(i18n.lang.get_untracked());
                            if (1900..=2999).contains(&ad) { sample_year.set(ad) }
                        }
                    }/>
            </label>
            <label class="field small-field">
                <span>{move || i18n.t("tpl.sample_month")}</span>
                <input type="number" min="1" max="12" data-testid="template-sample-month"
                    prop:value=move || sample_month.get().to_string()
                    on:input=move |ev| {
                        if let Ok(m) = event_target_value(&ev).parse::<u32>() {
                            if (1..=12).contains(&m) { sample_month.set(m) }
                        }
                    }/>
            </label>
        </div>
    }
}

/// The number the template renders with the sample codes, and the parts its counter is kept per.
#[component]
fn LivePreview(
    parsed: Memo<Option<Template>>,
    sample: Memo<Sample>,
    scope: RwSignal<ResetScope>,
    sample_year: RwSignal<i32>,
    sample_month: RwSignal<u32>,
) -> impl IntoView {
    let i18n = use_i18n();
    let preview = Memo::new(move |_| {
        let t = parsed.get()?;
        let s = sample.get();
        Some(t.render(&RenderValues {
            project: &s.project,
            originator: &s.originator,
            recipient: &s.recipient,
            correspondence_type: &s.correspondence_type,
            sub_type: &s.sub_type,
            rfa_type: &s.rfa_type,
            discipline: &s.discipline,
            contract: &s.contract,
            seq: 1,
            year: sample_year.get(),
            month: sample_month.get(),
            fiscal_year: fiscal_year(sample_year.get(), sample_month.get(), s.fiscal_first_month),
            rev: "A",
        }))
    });
    let key_words = Memo::new(move |_| {
        let lang = i18n.lang.get();
        let t = parsed.get()?;
        Some(describe_key(lang, t.key_parts(), scope.get()))
    });

    view! {
        <div class="preview-box">
            <div class="label">{move || i18n.t("tpl.preview")}</div>
            <div class="number" data-testid="template-preview">{move || preview.get().unwrap_or_else(|| "—".to_string())}</div>
            <div class="small" data-testid="template-keyparts">
                {move || key_words.get().map(|w| format!("{}: {w}", i18n.t("tpl.keyparts")))}
            </div>
        </div>
    }
}

/// "Valid", or the validation messages with their positions.
#[component]
fn ValidationResult(validation: Memo<Result<(), Vec<TemplateError>>>) -> impl IntoView {
    let i18n = use_i18n();
    let lang = i18n.lang;
    move || match validation.get() {
        Ok(()) => view! { <p class="ok" data-testid="template-valid">{i18n.t("tpl.valid")}</p> }.into_any(),
        Err(errors) => view! {
            <div class="errors">
                <div class="label">{i18n.t("tpl.errors")}</div>
                <ul data-testid="template-errors">
                    {errors.into_iter().map(|e| {
                        let position = e.position().map(|p| (p + 1).to_string());
                        view! { <li data-position=position>{error_line(lang.get(), &e)}</li> }
                    }).collect_view()}
                </ul>
            </div>
        }
        .into_any(),
    }
}

/// A rollback or retirement refused: its message, and when the server says the counter key changes, the
/// acknowledgment asked for (unticked).
fn refused(e: &ApiError, server_wants_ack: RwSignal<bool>, ack: RwSignal<bool>, error: RwSignal<Option<String>>) {
    if e.code == ErrorCode::KeyChangeNotAcknowledged {
        server_wants_ack.set(true);
        ack.set(false);
    }
    error.set(Some(error_text(e)));
}

/// The reason a change to a template is asked for (saved with it, audited).
#[component]
fn ReasonField(label: &'static str, testid: &'static str, reason: RwSignal<String>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <label class="field">
            <span>{move || i18n.t(label)}</span>
            <input type="text" data-testid=testid maxlength="500"
                prop:value=move || reason.get()
                on:input=move |ev| reason.set(event_target_value(&ev))/>
        </label>
    }
}

/// When the server says that a rollback or a retirement changes the counter key: the warning and the box that
/// acknowledges it (`<testid>-key-change`, `<testid>-ack`).
#[component]
fn AcknowledgeKeyChange(#[prop(into)] when: Signal<bool>, ack: RwSignal<bool>, testid: &'static str) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <Show when=move || when.get()>
            <div class="warning-box" data-testid=format!("{testid}-key-change") role="alert">
                <p><strong>{move || i18n.t("tpl.key_change.title")}</strong></p>
                <p>{move || i18n.t("tpl.key_change.body")}</p>
                <label class="check">
                    <input type="checkbox" data-testid=format!("{testid}-ack")
                        prop:checked=move || ack.get()
                        on:change=move |ev| ack.set(event_target_checked(&ev))/>
                    {move || i18n.t("tpl.key_change.ack")}
                </label>
            </div>
        </Show>
    }
}

/// The warning that the counter key changes (before / after), and the box that acknowledges it.
#[component]
fn KeyChangeWarning(acknowledgment: Acknowledgment) -> impl IntoView {
    let i18n = use_i18n();
    let lang = i18n.lang;
    let Acknowledgment { key_change, needs_ack, ack, .. } = acknowledgment;
    view! {
        <Show when=move || needs_ack.get()>
            <div class="warning-box" data-testid="template-key-change" role="alert">
                <p><strong>{move || i18n.t("tpl.key_change.title")}</strong></p>
                {move || match key_change.get() {
                    Some((before, before_scope, after, after_scope)) => view! {
                        <p>{i18n.t("tpl.key_change.body")}</p>
                        <ul class="small">
                            <li data-testid="template-key-before">{i18n.t("tpl.key_change.before")}": "{describe_key(lang.get(), before, before_scope)}</li>
                            <li data-testid="template-key-after">{i18n.t("tpl.key_change.after")}": "{describe_key(lang.get(), after, after_scope)}</li>
                        </ul>
                    }.into_any(),
                    None => view! { <p>{i18n.t("tpl.key_change.server")}</p> }.into_any(),
                }}
                <label class="check">
                    <input type="checkbox" data-testid="template-ack-key-change"
                        prop:checked=move || ack.get()
                        on:change=move |ev| ack.set(event_target_checked(&ev))/>
                    {move || i18n.t("tpl.key_change.ack")}
                </label>
            </div>
        </Show>
    }
}

/// The reason, the save button, and what the save answered.
#[component]
fn SaveBar(
    draft: Draft,
    validation: Memo<Result<(), Vec<TemplateError>>>,
    acknowledgment: Acknowledgment,
    saved: RwSignal<Option<TemplateConfig>>,
    /// Bumped after a save (reloads the stored templates and the history).
    saved_version: RwSignal<u32>,
) -> impl IntoView {
    let i18n = use_i18n();
    let Draft { project, ctype, text, scope } = draft;
    let Acknowledgment { needs_ack, ack, server_wants_ack, .. } = acknowledgment;
    let reason = RwSignal::new(String::new());
    let save_error = RwSignal::new(None::<String>);

    let save = Action::new(move |(p, t, tpl, sc, why, acked): &(ProjectId, Option<CorrespondenceTypeId>, String, ResetScope, String, bool)| {
        let (p, t, tpl, sc, why, acked) = (*p, *t, tpl.clone(), *sc, why.clone(), *acked);
        async move {
            match api::save_template(p, t, tpl, sc, why, acked).await {
                Ok(cfg) => {
                    saved.set(Some(cfg));
                    reason.set(String::new());
                    saved_version.update(|v| *v += 1);
                }
                Err(e) => {
                    if e.code == ErrorCode::KeyChangeNotAcknowledged {
                        server_wants_ack.set(true);
                        ack.set(false);
                    }
                    save_error.set(Some(error_text(&e)));
                }
            }
        }
    });
    let can_save = move || {
        project.get().is_some()
            && validation.with(|v| v.is_ok())
            && reason.with(|r| !r.trim().is_empty())
            && (!needs_ack.get() || ack.get())
            && !save.pending().get()
    };
    let on_save = move |_| {
        let Some(p) = project.get_untracked() else { return };
        save_error.set(None);
        saved.set(None);
        let acked = needs_ack.get_untracked() && ack.get_untracked();
        save.dispatch((p, ctype.get_untracked(), text.get_untracked(), scope.get_untracked(), reason.get_untracked().trim().to_string(), acked));
    };
    // a new selection starts without the previous save's message
    Effect::new(move |_| {
        let _ = (project.get(), ctype.get());
        saved.set(None);
        save_error.set(None);
    });

    view! {
        <ReasonField label="tpl.reason" testid="template-reason" reason/>
        <button type="button" class="primary" data-testid="template-save" disabled=move || !can_save() on:click=on_save>
            {move || if save.pending().get() { i18n.t("tpl.saving") } else { i18n.t("tpl.save") }}
        </button>
        {move || saved.get().map(|cfg| view! {
            <p class="ok" data-testid="template-saved">{i18n.t("tpl.saved")}" "{cfg.version}": "<code>{cfg.template}</code></p>
        })}
        <ErrorSlot error=save_error/>
    }
}

/// "project, type, originator, …, reset" — the parts a counter is kept per, in words.
fn describe_key(lang: Lang, kp: KeyParts, scope: ResetScope) -> String {
    let w = |k| super::i18n::word(lang, k);
    let mut parts = vec![w("tpl.kp.project"), w("tpl.kp.type")];
    for (shown, key) in [
        (kp.originator, "tpl.kp.originator"),
        (kp.recipient, "tpl.kp.recipient"),
        (kp.sub_type, "tpl.kp.sub_type"),
        (kp.rfa_type, "tpl.kp.rfa_type"),
        (kp.discipline, "tpl.kp.discipline"),
    ] {
        if shown {
            parts.push(w(key));
        }
    }
    parts.push(w(match scope {
        ResetScope::Yearly => "tpl.kp.YEARLY",
        ResetScope::Monthly => "tpl.kp.MONTHLY",
        ResetScope::None => "tpl.kp.NONE",
        ResetScope::FiscalYear => "tpl.kp.FISCAL_YEAR",
        ResetScope::Contract => "tpl.kp.CONTRACT",
    }));
    parts.join(", ")
}

/// Whether two (template, reset) pairs keep their numbers on different counters; None if either is unreadable.
fn key_differs(a: &str, a_scope: ResetScope, b: &str, b_scope: ResetScope) -> Option<bool> {
    Some(!Template::parse(a).ok()?.keeps_counters_of(a_scope, &Template::parse(b).ok()?, b_scope))
}

fn scope_word(scope: ResetScope) -> &'static str {
    match scope {
        ResetScope::Yearly => "tpl.reset.YEARLY",
        ResetScope::Monthly => "tpl.reset.MONTHLY",
        ResetScope::None => "tpl.reset.NONE",
        ResetScope::FiscalYear => "tpl.reset.FISCAL_YEAR",
        ResetScope::Contract => "tpl.reset.CONTRACT",
    }
}

/// The years between the era a person reads (Thai: B.E.) and A.D.
fn era_offset(lang: Lang) -> i32 {
    match lang {
        Lang::Th => 543,
        Lang::En => 0,
    }
}

/// The before/after text of one version, removed and added parts marked.
#[component]
fn TemplateDiff(before: Option<String>, after: String) -> impl IntoView {
    let i18n = use_i18n();
    let parts = diff(before.as_deref().unwrap_or(""), &after);
    let unchanged = before.as_deref() == Some(after.as_str());
    let first = before.is_none();
    view! {
        <div class="diff mono" data-testid="template-diff" data-before=before.clone().unwrap_or_default() data-after=after.clone()>
            {parts.into_iter().map(|p| match p {
                Part::Same(s) => view! { <span class="diff-same">{s}</span> }.into_any(),
                Part::Removed(s) => view! {
                    <del class="diff-del" data-testid="template-diff-removed" title=move || i18n.t("tpl.history.removed")>{s}</del>
                }.into_any(),
                Part::Added(s) => view! {
                    <ins class="diff-ins" data-testid="template-diff-added" title=move || i18n.t("tpl.history.added")>{s}</ins>
                }.into_any(),
            }).collect_view()}
        </div>
        {unchanged.then(|| view! { <div class="small muted">{move || i18n.t("tpl.history.unchanged")}</div> })}
        {first.then(|| view! { <div class="small muted">{move || i18n.t("tpl.history.first")}</div> })}
    }
}

/// A rollback being asked for, its form's state, and the call that makes it.
#[derive(Clone, Copy)]
struct Rollback {
    project: RwSignal<Option<ProjectId>>,
    ctype: RwSignal<Option<CorrespondenceTypeId>>,
    /// The rollback being asked for: (version, its text, its reset).
    rolling: RwSignal<Option<(i64, String, ResetScope)>>,
    reason: RwSignal<String>,
    ack: RwSignal<bool>,
    error: RwSignal<Option<String>>,
    /// The rollback changes the counter key, or the server said it does.
    needs_ack: Memo<bool>,
    action: Action<(ProjectId, Option<CorrespondenceTypeId>, i64, String, bool), ()>,
}

impl Rollback {
    /// `newest` is the newest stored version (what a rollback replaces); after a rollback `saved` holds its
    /// answer and `reload` is bumped.
    fn new(
        project: RwSignal<Option<ProjectId>>,
        ctype: RwSignal<Option<CorrespondenceTypeId>>,
        newest: Memo<Option<(i64, String, ResetScope)>>,
        reload: RwSignal<u32>,
        saved: RwSignal<Option<TemplateConfig>>,
    ) -> Self {
        let rolling = RwSignal::new(None::<(i64, String, ResetScope)>);
        let rb_reason = RwSignal::new(String::new());
        let rb_ack = RwSignal::new(false);
        let rb_server_wants_ack = RwSignal::new(false);
        let rb_error = RwSignal::new(None::<String>);
        Effect::new(move |_| {
            let _ = (project.get(), ctype.get());
            rolling.set(None);
        });
        Effect::new(move |_| {
            rolling.track();
            rb_reason.set(String::new());
            rb_ack.set(false);
            rb_server_wants_ack.set(false);
            rb_error.set(None);
        });
        let rb_key_change = Memo::new(move |_| {
            let (_, text, scope) = rolling.get()?;
            let (_, cur, cur_scope) = newest.get()?;
            key_differs(&cur, cur_scope, &text, scope).filter(|d| *d)
        });
        let rb_needs_ack = Memo::new(move |_| rb_key_change.get().is_some() || rb_server_wants_ack.get());

        let rollback = Action::new(move |(p, t, version, why, acked): &(ProjectId, Option<CorrespondenceTypeId>, i64, String, bool)| {
            let (p, t, version, why, acked) = (*p, *t, *version, why.clone(), *acked);
            async move {
                match api::rollback_template(p, t, version, why, acked).await {
                    Ok(cfg) => {
                        rolling.set(None);
                        saved.set(Some(cfg));
                        reload.update(|v| *v += 1);
                    }
                    Err(e) => refused(&e, rb_server_wants_ack, rb_ack, rb_error),
                }
            }
        });
        Rollback { project, ctype, rolling, reason: rb_reason, ack: rb_ack, error: rb_error, needs_ack: rb_needs_ack, action: rollback }
    }

    /// Whether the rollback form is open for `version`.
    fn is_rolling(&self, version: i64) -> bool {
        self.rolling.with(|r| r.as_ref().map(|r| r.0) == Some(version))
    }
}

/// The versions of the chosen template, newest first, with a rollback per older version.
#[component]
fn TemplateHistory(
    project: RwSignal<Option<ProjectId>>,
    ctype: RwSignal<Option<CorrespondenceTypeId>>,
    /// Bumped after a save; bumped here after a rollback (reloads the editor too).
    reload: RwSignal<u32>,
    saved: RwSignal<Option<TemplateConfig>>,
) -> impl IntoView {
    let i18n = use_i18n();
    let versions = client_fetch(move || {
        let key = (project.get(), ctype.get());
        reload.track();
        async move {
            match key {
                (Some(p), t) => Some(((p, t), api::list_template_versions(p, t).await.map_err(|e| error_text(&e)))),
                _ => None,
            }
        }
    });
    let current = Memo::new(move |_| {
        let key = (project.get()?, ctype.get());
        match versions.get().flatten() {
            Some((k, r)) if k == key => Some(r),
            _ => None,
        }
    });
    // the newest stored version: what a rollback replaces
    let newest = Memo::new(move |_| match current.get() {
        Some(Ok(vs)) => vs.iter().max_by_key(|v| v.version).map(|v| (v.version, v.template.clone(), v.reset_scope)),
        _ => None,
    });
    let rb = Rollback::new(project, ctype, newest, reload, saved);

    view! {
        <section class="history" data-testid="template-history">
            <h2>{move || i18n.t("tpl.history")}</h2>
            {move || match current.get() {
                None => view! { <p class="muted">{i18n.t("common.loading")}</p> }.into_any(),
                Some(Err(m)) => view! { <ErrorBox message=m/> }.into_any(),
                Some(Ok(vs)) if vs.is_empty() => view! {
                    <p class="muted" data-testid="template-history-empty">{i18n.t("tpl.history.empty")}</p>
                }.into_any(),
                Some(Ok(vs)) => {
                    let newest_version = vs.iter().map(|v| v.version).max().unwrap_or_default();
                    view! {
                        <ol class="versions">
                            {vs.into_iter().map(|v| {
                                let is_current = v.version == newest_version;
                                view! { <VersionRow v is_current rb/> }
                            }).collect_view()}
                        </ol>
                    }.into_any()
                }
            }}
        </section>
    }
}

/// One stored version: number, author, reason, the change against the one before, its reset; a rollback
/// button (and form) on the older ones.
#[component]
fn VersionRow(v: TemplateVersion, is_current: bool, rb: Rollback) -> impl IntoView {
    let i18n = use_i18n();
    let version = v.version;
    let scope_changed = v.previous_reset_scope.filter(|s| *s != v.reset_scope);
    let target = (version, v.template.clone(), v.reset_scope);
    view! {
        <li class="version" data-testid="template-version-row" data-version=version.to_string()
            data-current=is_current.to_string()>
            <div class="version-head">
                <strong data-testid="template-version-number">{move || i18n.t("tpl.version")}" "{version}</strong>
                {is_current.then(|| view! { <span class="badge">{move || i18n.t("tpl.history.current")}</span> })}
                <span class="small muted" data-testid="template-version-by">
                    {move || i18n.t("tpl.by")}" "{v.changed_by.clone()}" · "{bangkok_time(&v.changed_at)}
                </span>
            </div>
            <div class="small" data-testid="template-version-reason">
                {move || i18n.t("tpl.history.reason")}": "{v.reason.clone()}
            </div>
            <TemplateDiff before=v.previous_template.clone() after=v.template.clone()/>
            <div class="small muted" data-testid="template-version-reset">
                {move || i18n.t("tpl.reset")}": "
                {move || match scope_changed {
                    Some(before) => format!("{} → {}", i18n.t(scope_word(before)), i18n.t(scope_word(v.reset_scope))),
                    None => i18n.t(scope_word(v.reset_scope)).to_string(),
                }}
            </div>
            {(!is_current).then(|| {
                let target = target.clone();
                view! {
                    <Show when=move || !rb.is_rolling(version)>
                        <button type="button" class="secondary small" data-testid="template-rollback"
                            disabled=move || rb.action.pending().get()
                            on:click={
                                let target = target.clone();
                                move |_| rb.rolling.set(Some(target.clone()))
                            }>
                            {move || i18n.t("tpl.rollback")}
                        </button>
                    </Show>
                }
            })}
            {move || rb.is_rolling(version).then(|| view! { <RollbackForm rb/> })}
        </li>
    }
}

/// The reason (and, when the counter key changes, the acknowledgment) for a rollback, and its buttons.
#[component]
fn RollbackForm(rb: Rollback) -> impl IntoView {
    let i18n = use_i18n();
    let Rollback { project, ctype, rolling, reason: rb_reason, ack: rb_ack, error: rb_error, needs_ack: rb_needs_ack, action: rollback, .. } = rb;
    let can_rollback = move || {
        rolling.with(|r| r.is_some())
            && rb_reason.with(|r| !r.trim().is_empty())
            && (!rb_needs_ack.get() || rb_ack.get())
            && !rollback.pending().get()
    };
    let on_rollback = move |_| {
        let (Some(p), Some((version, _, _))) = (project.get_untracked(), rolling.get_untracked()) else { return };
        rb_error.set(None);
        let acked = rb_needs_ack.get_untracked() && rb_ack.get_untracked();
        rollback.dispatch((p, ctype.get_untracked(), version, rb_reason.get_untracked().trim().to_string(), acked));
    };
    view! {
        <div class="rollback-box" data-testid="template-rollback-form">
            <p class="small">{move || i18n.t("tpl.rollback.note")}</p>
            <AcknowledgeKeyChange when=rb_needs_ack ack=rb_ack testid="template-rollback"/>
            <ReasonField label="tpl.rollback.reason" testid="template-rollback-reason" reason=rb_reason/>
            <div class="form-row">
                <button type="button" class="primary" data-testid="template-rollback-confirm"
                    disabled=move || !can_rollback() on:click=on_rollback>
                    {move || if rollback.pending().get() { i18n.t("tpl.rollback.busy") } else { i18n.t("tpl.rollback.confirm") }}
                </button>
                <button type="button" class="secondary" data-testid="template-rollback-cancel"
                    on:click=move |_| rolling.set(None)>
                    {move || i18n.t("common.cancel")}
                </button>
            </div>
            <ErrorSlot error=rb_error/>
        </div>
    }
}

/// One validation message in the chosen language (the numbering module words both).
fn error_line(lang: Lang, e: &TemplateError) -> String {
    match lang {
        Lang::Th => e.message_th(),
        Lang::En => e.to_string(),
    }
}
