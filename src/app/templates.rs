//! `/templates` — the template editor (SPEC §3, §9). Validation and preview run in the browser
//! with `crate::numbering` as the admin types (no request per keystroke); the server validates
//! again on save.

use leptos::prelude::*;

use super::api::{self, error_text};
use super::i18n::{use_i18n, Lang};
use super::reserve::{Choice, IdSelect};
use super::types::*;
use super::widgets::{client_fetch, ErrorBox, ErrorSlot, RequireUser};
use crate::numbering::{RenderValues, ResetScope, Template, TemplateError, SYSTEM_DEFAULT_TEMPLATE};

#[component]
pub fn TemplatesPage() -> impl IntoView {
    let i18n = use_i18n();
    let refdata = Resource::new(|| (), |_| api::fetch_reference_data());
    view! {
        <RequireUser content=move |user: UserInfo| {
            if !user.is_admin() {
                return view! { <ErrorBox message=i18n.t("common.no_access")/> }.into_any();
            }
            view! {
                <section class="card">
                    <h1>{move || i18n.t("tpl.title")}</h1>
                    <Suspense fallback=move || view! { <p class="muted">{move || i18n.t("common.loading")}</p> }>
                        {
                            let user = user.clone();
                            move || {
                                let user = user.clone();
                                Suspend::new(async move {
                                    match refdata.await {
                                        Ok(data) => view! { <TemplateEditor data user/> }.into_any(),
                                        Err(e) => view! { <ErrorBox message=error_text(&e)/> }.into_any(),
                                    }
                                })
                            }
                        }
                    </Suspense>
                </section>
            }
            .into_any()
        }/>
    }
}

/// Where the text in the editor came from when the (project, type) was chosen.
#[derive(Clone, Debug, PartialEq)]
enum Origin {
    /// The stored template of exactly this (project, type) / project default.
    Own { version: i64, updated_by: String, updated_at: String },
    /// No own template: the request falls back to this one.
    Inherited(TemplateSource),
}

#[derive(Clone, Debug, PartialEq)]
struct Loaded {
    key: (i64, Option<i64>),
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
    corr_type: String,
    sub_type: String,
    rfa_type: String,
    discipline: String,
}

#[component]
fn TemplateEditor(data: ReferenceData, user: UserInfo) -> impl IntoView {
    let i18n = use_i18n();
    let data = StoredValue::new(data);

    let editable: Vec<i64> = data.with_value(|d| {
        d.projects.iter().filter(|p| user.can_edit_templates(p.id)).map(|p| p.id).collect()
    });
    if editable.is_empty() {
        return view! { <ErrorBox message=i18n.t("common.no_access")/> }.into_any();
    }
    let editable = StoredValue::new(editable);

    let project = RwSignal::new(editable.with_value(|e| e.first().copied()));
    let ctype = RwSignal::new(None::<i64>);

    let project_choices = Signal::derive(move || {
        data.with_value(|d| {
            d.projects
                .iter()
                .filter(|p| editable.with_value(|e| e.contains(&p.id)))
                .map(|p| Choice {
                    id: p.id,
                    code: p.code.clone(),
                    label: if p.name.trim().is_empty() { p.code.clone() } else { format!("{} — {}", p.code, p.name) },
                    disabled: false,
                })
                .collect::<Vec<_>>()
        })
    });
    let type_choices = Signal::derive(move || {
        data.with_value(|d| {
            d.correspondence_types
                .iter()
                .map(|t| Choice {
                    id: t.id,
                    code: t.code.clone(),
                    label: if t.name.trim().is_empty() { t.code.clone() } else { format!("{} — {}", t.code, t.name) },
                    disabled: false,
                })
                .collect::<Vec<_>>()
        })
    });

    // ---- the stored templates: loaded when the selection changes and after a save, never per keystroke ----
    let saved_version = RwSignal::new(0u32);
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
    let loaded = Memo::new(move |_| -> Option<Loaded> {
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
                origin: Origin::Own {
                    version: c.version,
                    updated_by: c.updated_by.clone(),
                    updated_at: c.updated_at.format("%Y-%m-%d %H:%M UTC").to_string(),
                },
            });
        }
        match t {
            // a type without its own template: start from the one it falls back to
            Some(t) => match resolved.get().flatten() {
                Some((k, Ok(rt))) if k == (p, t) => Some(Loaded {
                    key: (p, Some(t)),
                    text: rt.template,
                    scope: rt.reset_scope,
                    origin: Origin::Inherited(rt.source),
                }),
                _ => None,
            },
            None => Some(Loaded {
                key: (p, None),
                text: SYSTEM_DEFAULT_TEMPLATE.to_string(),
                scope: ResetScope::default(),
                origin: Origin::Inherited(TemplateSource::SystemDefault),
            }),
        }
    });
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

    // ---- the editor's state ----
    let text = RwSignal::new(String::new());
    let scope = RwSignal::new(ResetScope::default());
    let reason = RwSignal::new(String::new());
    let save_error = RwSignal::new(None::<String>);
    let saved = RwSignal::new(None::<TemplateConfig>);

    // put the loaded template into the editor when the selection (or a save) loads a new one
    Effect::new(move |_| {
        if let Some(l) = loaded.get() {
            text.set(l.text);
            scope.set(l.scope);
        }
    });

    // sample year/month for the preview: the browser's date (set after hydration), changeable
    let sample_year = RwSignal::new(2025i32);
    let sample_month = RwSignal::new(1u32);
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        if let Some((y, m)) = super::browser::bangkok_year_month_now() {
            sample_year.set(y);
            sample_month.set(m);
        }
    });

    let type_code = Memo::new(move |_| {
        let t = ctype.get();
        data.with_value(|d| t.and_then(|t| d.correspondence_types.iter().find(|x| x.id == t)).map(|x| x.code.clone()))
    });
    let sample = Memo::new(move |_| {
        let p = project.get();
        let t = ctype.get();
        data.with_value(|d| {
            let proj = p.and_then(|p| d.projects.iter().find(|x| x.id == p));
            let members: Vec<&OrgItem> = d
                .organizations
                .iter()
                .filter(|o| proj.map(|p| p.member_org_ids.contains(&o.id)).unwrap_or(true))
                .collect();
            let sub = d
                .sub_types
                .iter()
                .find(|s| Some(s.corr_type_id) == t)
                .or_else(|| d.sub_types.first())
                .map(|s| s.sub_type_number.clone());
            let corr = t
                .and_then(|t| d.correspondence_types.iter().find(|x| x.id == t))
                .or_else(|| d.correspondence_types.first())
                .map(|x| x.code.clone());
            Sample {
                project: proj.map(|p| p.code.clone()).unwrap_or_default(),
                originator: members.first().map(|o| o.code.clone()).unwrap_or_default(),
                recipient: members.get(1).or(members.first()).map(|o| o.code.clone()).unwrap_or_default(),
                corr_type: corr.unwrap_or_default(),
                sub_type: sub.unwrap_or_default(),
                rfa_type: d.rfa_types.first().map(|x| x.code.clone()).unwrap_or_default(),
                discipline: d.disciplines.first().map(|x| x.code.clone()).unwrap_or_default(),
            }
        })
    });

    // ---- live validation and preview: pure functions of the text, in the browser ----
    let parsed = Memo::new(move |_| text.with(|s| Template::parse(s)).ok());
    let validation = Memo::new(move |_| {
        let code = type_code.get().unwrap_or_default();
        text.with(|s| Template::validate(s, &code, scope.get())).map(|_| ())
    });
    let preview = Memo::new(move |_| {
        let t = parsed.get()?;
        let s = sample.get();
        Some(t.render(&RenderValues {
            project: &s.project,
            originator: &s.originator,
            recipient: &s.recipient,
            corr_type: &s.corr_type,
            sub_type: &s.sub_type,
            rfa_type: &s.rfa_type,
            discipline: &s.discipline,
            seq: 1,
            year: sample_year.get(),
            month: sample_month.get(),
            rev: "A",
        }))
    });
    let key_words = Memo::new(move |_| {
        let lang = i18n.lang.get();
        let t = parsed.get()?;
        let kp = t.key_parts();
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
        parts.push(w(match scope.get() {
            ResetScope::Yearly => "tpl.kp.YEARLY",
            ResetScope::Monthly => "tpl.kp.MONTHLY",
            ResetScope::None => "tpl.kp.NONE",
        }));
        Some(parts.join(", "))
    });

    let save = Action::new(move |(p, t, tpl, sc, why): &(i64, Option<i64>, String, ResetScope, String)| {
        let (p, t, tpl, sc, why) = (*p, *t, tpl.clone(), *sc, why.clone());
        async move {
            match api::save_template(p, t, tpl, sc, why, false).await {
                Ok(cfg) => {
                    saved.set(Some(cfg));
                    reason.set(String::new());
                    saved_version.update(|v| *v += 1);
                }
                Err(e) => save_error.set(Some(error_text(&e))),
            }
        }
    });
    let can_save = move || {
        project.get().is_some()
            && validation.with(|v| v.is_ok())
            && reason.with(|r| !r.trim().is_empty())
            && !save.pending().get()
    };
    let on_save = move |_| {
        let Some(p) = project.get_untracked() else { return };
        save_error.set(None);
        saved.set(None);
        save.dispatch((p, ctype.get_untracked(), text.get_untracked(), scope.get_untracked(), reason.get_untracked().trim().to_string()));
    };
    // a new selection starts without the previous save's message
    Effect::new(move |_| {
        let _ = (project.get(), ctype.get());
        saved.set(None);
        save_error.set(None);
    });

    let lang = i18n.lang;
    view! {
        <div class="form-grid">
            <IdSelect label="tpl.project" testid="select-project" choices=project_choices value=project/>
            <IdSelect label="tpl.type" testid="select-type" choices=type_choices value=ctype placeholder="tpl.project_default"/>
        </div>
        <ErrorSlot error=load_error/>
        <p class="small muted" data-testid="template-origin">
            {move || match loaded.get() {
                None => i18n.t("common.loading").to_string(),
                Some(Loaded { origin: Origin::Own { version, updated_by, updated_at }, .. }) => format!(
                    "{}: {} {version} {} {updated_by}, {updated_at}",
                    i18n.t("tpl.current"), i18n.t("tpl.version"), i18n.t("tpl.by")
                ),
                Some(Loaded { origin: Origin::Inherited(src), .. }) => format!(
                    "{} {}",
                    i18n.t("tpl.current.none"),
                    i18n.t(match src {
                        TemplateSource::ProjectType => "reserve.source.ProjectType",
                        TemplateSource::ProjectDefault => "reserve.source.ProjectDefault",
                        TemplateSource::SystemDefault => "reserve.source.SystemDefault",
                    })
                ),
            }}
        </p>

        <label class="field">
            <span>{move || i18n.t("tpl.template")}</span>
            <input type="text" class="mono wide" data-testid="template-input" spellcheck="false" autocomplete="off"
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))/>
        </label>
        <p class="small muted tokens-help">
            {move || i18n.t("tpl.tokens_help")}": "
            <code>"{PROJECT} {ORIGINATOR} {RECIPIENT} {CORR_TYPE} {SUB_TYPE} {RFA_TYPE} {DISCIPLINE} {SEQ:4} {YEAR:B.E.} {YEAR:A.D.} {MONTH} {REV}"</code>
        </p>
        <div class="form-row">
            <label class="field">
                <span>{move || i18n.t("tpl.reset")}</span>
                <select data-testid="template-reset"
                    on:change=move |ev| scope.set(ResetScope::parse(&event_target_value(&ev)).unwrap_or_default())>
                    {[ResetScope::Yearly, ResetScope::Monthly, ResetScope::None].into_iter().map(|s| {
                        let key = match s {
                            ResetScope::Yearly => "tpl.reset.YEARLY",
                            ResetScope::Monthly => "tpl.reset.MONTHLY",
                            ResetScope::None => "tpl.reset.NONE",
                        };
                        view! {
                            <option value=s.as_str() prop:selected=move || scope.get() == s>{move || i18n.t(key)}</option>
                        }
                    }).collect_view()}
                </select>
            </label>
            <label class="field small-field">
                <span>{move || i18n.t("tpl.sample_year")}</span>
                <input type="number" min="1900" max="2999" data-testid="template-sample-year"
                    prop:value=move || sample_year.get().to_string()
                    on:input=move |ev| {
                        if let Ok(y) = event_target_value(&ev).parse::<i32>() { sample_year.set(y) }
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

        <div class="preview-box">
            <div class="label">{move || i18n.t("tpl.preview")}</div>
            <div class="number" data-testid="template-preview">{move || preview.get().unwrap_or_else(|| "—".to_string())}</div>
            <div class="small" data-testid="template-keyparts">
                {move || key_words.get().map(|w| format!("{}: {w}", i18n.t("tpl.keyparts")))}
            </div>
        </div>

        {move || match validation.get() {
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
            }.into_any(),
        }}

        <label class="field">
            <span>{move || i18n.t("tpl.reason")}</span>
            <input type="text" data-testid="template-reason" maxlength="500"
                prop:value=move || reason.get()
                on:input=move |ev| reason.set(event_target_value(&ev))/>
        </label>
        <button type="button" class="primary" data-testid="template-save" disabled=move || !can_save() on:click=on_save>
            {move || if save.pending().get() { i18n.t("tpl.saving") } else { i18n.t("tpl.save") }}
        </button>
        {move || saved.get().map(|cfg| view! {
            <p class="ok" data-testid="template-saved">{i18n.t("tpl.saved")}" "{cfg.version}": "<code>{cfg.template}</code></p>
        })}
        <ErrorSlot error=save_error/>
    }
    .into_any()
}

/// One validation message in the chosen language (the numbering module words both).
fn error_line(lang: Lang, e: &TemplateError) -> String {
    match lang {
        Lang::Th => e.message_th(),
        Lang::En => e.to_string(),
    }
}
