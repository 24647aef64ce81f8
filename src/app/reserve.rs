//! `/` — the staff reservation form (SPEC §9). Which parties are asked for is read from the
//! resolved template with `crate::numbering` (never per-type rules here); numbers come from the server.

use std::time::Duration;

use leptos::prelude::*;

use super::api::{self, error_text};
use super::i18n::{use_i18n, I18n};
use crate::contract::*;
use super::widgets::{choice, client_fetch, Choice, CopyButton, ErrorBox, ErrorSlot, IdSelect, RequireUser};
use crate::numbering::{Segment, Template, Token};

/// The parts of a request the resolved template shows (and therefore asks for).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shows {
    pub originator: bool,
    pub recipient: bool,
    pub sub_type: bool,
    pub rfa_type: bool,
    pub discipline: bool,
    pub rev: bool,
}

impl Shows {
    /// None when the text is not a template the numbering module can read.
    pub fn of(template_text: &str) -> Option<Shows> {
        let t = Template::parse(template_text).ok()?;
        let kp = t.key_parts();
        Some(Shows {
            originator: kp.originator,
            recipient: kp.recipient,
            sub_type: kp.sub_type,
            rfa_type: kp.rfa_type,
            discipline: kp.discipline,
            rev: t.segments().iter().any(|s| matches!(s, Segment::Token(Token::Rev))),
        })
    }
}

#[component]
pub fn ReservePage() -> impl IntoView {
    let i18n = use_i18n();
    let refdata = Resource::new(|| (), |_| api::fetch_reference_data());
    view! {
        <RequireUser content=move |_user| view! {
            <section class="card">
                <h1>{move || i18n.t("reserve.title")}</h1>
                <Suspense fallback=move || view! { <p class="muted">{move || i18n.t("common.loading")}</p> }>
                    {move || Suspend::new(async move {
                        match refdata.await {
                            Ok(data) => view! { <ReserveForm data/> }.into_any(),
                            Err(e) => view! { <ErrorBox message=error_text(&e)/> }.into_any(),
                        }
                    })}
                </Suspense>
            </section>
        }/>
    }
}

/// A reservation shown on the page and what became of it (RESERVED / CONFIRMED / CANCELLED).
#[derive(Clone, Debug, PartialEq)]
struct Held {
    res: ReservationResult,
    status: String,
}

#[component]
fn ReserveForm(data: ReferenceData) -> impl IntoView {
    let i18n = use_i18n();
    let data = StoredValue::new(data);

    let project = RwSignal::new(None::<i64>);
    let ctype = RwSignal::new(None::<i64>);
    let originator = RwSignal::new(None::<i64>);
    let recipient = RwSignal::new(None::<i64>);
    let sub_type = RwSignal::new(None::<i64>);
    let rfa_type = RwSignal::new(None::<i64>);
    let discipline = RwSignal::new(None::<i64>);
    let revision = RwSignal::new(String::new());

    // ---- choices ----
    let project_choices = Signal::derive(move || {
        data.with_value(|d| {
            d.projects
                .iter()
                .map(|p| Choice { disabled: !p.active, ..choice(p.id, &p.code, &p.name) })
                .collect::<Vec<_>>()
        })
    });
    let type_choices = Signal::derive(move || {
        data.with_value(|d| d.correspondence_types.iter().map(|t| choice(t.id, &t.code, &t.name)).collect::<Vec<_>>())
    });
    // organizations offered are the chosen project's members
    let member_ids = Memo::new(move |_| {
        let p = project.get();
        data.with_value(|d| {
            p.and_then(|p| d.projects.iter().find(|x| x.id == p)).map(|x| x.member_org_ids.clone()).unwrap_or_default()
        })
    });
    let org_choices = Signal::derive(move || {
        let members = member_ids.get();
        data.with_value(|d| {
            d.organizations
                .iter()
                .filter(|o| members.contains(&o.id))
                .map(|o| choice(o.id, &o.code, &o.name))
                .collect::<Vec<_>>()
        })
    });
    let sub_type_choices = Signal::derive(move || {
        let t = ctype.get();
        data.with_value(|d| {
            d.sub_types
                .iter()
                .filter(|s| Some(s.corr_type_id) == t)
                .map(|s| {
                    let name = if s.name.trim().is_empty() { s.code.clone() } else { format!("{} {}", s.code, s.name) };
                    Choice { code: s.code.clone(), ..choice(s.id, &s.sub_type_number, &name) }
                })
                .collect::<Vec<_>>()
        })
    });
    let rfa_choices =
        Signal::derive(move || data.with_value(|d| d.rfa_types.iter().map(|x| choice(x.id, &x.code, &x.name)).collect::<Vec<_>>()));
    let discipline_choices =
        Signal::derive(move || data.with_value(|d| d.disciplines.iter().map(|x| choice(x.id, &x.code, &x.name)).collect::<Vec<_>>()));

    // ---- the template this (project, type) resolves to; the server decides which one ----
    let resolved = client_fetch(move || {
        let key = (project.get(), ctype.get());
        async move {
            match key {
                (Some(p), Some(t)) => Some(((p, t), api::resolve_template(p, t).await)),
                _ => None,
            }
        }
    });
    // the resolved template for the current choice (None while loading or not chosen)
    let current_template = Memo::new(move |_| {
        let key = (project.get()?, ctype.get()?);
        match resolved.get().flatten() {
            Some((k, r)) if k == key => Some(r.map_err(|e| error_text(&e))),
            _ => None,
        }
    });
    let shows = Memo::new(move |_| match current_template.get() {
        Some(Ok(rt)) => Shows::of(&rt.template),
        _ => None,
    });
    let show = move |f: fn(&Shows) -> bool| shows.get().map(|s| f(&s)).unwrap_or(false);

    // ---- the request, complete when every part the template shows is chosen ----
    let request = Memo::new(move |_| {
        let p = project.get()?;
        let t = ctype.get()?;
        let s = shows.get()?;
        let members = member_ids.get();
        let member = |v: Option<i64>| v.filter(|id| members.contains(id));
        let mut req = NumberRequest { project_id: Some(p), correspondence_type_id: Some(t), ..Default::default() };
        if s.originator {
            req.originator_org_id = Some(member(originator.get())?);
        }
        if s.recipient {
            req.recipient_org_id = Some(member(recipient.get())?);
        }
        if s.sub_type {
            let st = sub_type.get()?;
            if !sub_type_choices.with(|c| c.iter().any(|x| x.id == st)) {
                return None;
            }
            req.sub_type_id = Some(st);
        }
        if s.rfa_type {
            req.rfa_type_id = Some(rfa_type.get()?);
        }
        if s.discipline {
            req.discipline_id = Some(discipline.get()?);
        }
        if s.rev {
            let r = revision.get().trim().to_string();
            if !r.is_empty() {
                req.revision = Some(r);
            }
        }
        Some(req)
    });

    // ---- preview (reserves nothing); reloaded after every reserve / confirm / cancel ----
    let preview_version = RwSignal::new(0u32);
    let preview = client_fetch(move || {
        let req = request.get();
        preview_version.track();
        async move {
            match req {
                Some(r) => Some((r.clone(), api::preview_number(r).await.map_err(|e| error_text(&e)))),
                None => None,
            }
        }
    });
    let current_preview = Memo::new(move |_| {
        let req = request.get()?;
        match preview.get().flatten() {
            Some((r, result)) if r == req => Some(result),
            _ => None,
        }
    });

    // ---- reservation ----
    let held = RwSignal::new(None::<Held>);
    let remaining = RwSignal::new(0i64);
    let error = RwSignal::new(None::<String>);
    let document_id = RwSignal::new(String::new());
    let cancel_reason = RwSignal::new(String::new());

    let reserve = Action::new(move |req: &NumberRequest| {
        let req = req.clone();
        async move {
            match api::reserve_number(req).await {
                Ok(res) => {
                    document_id.set(String::new());
                    cancel_reason.set(String::new());
                    remaining.set(res.ttl_seconds.max(0));
                    held.set(Some(Held { res, status: "RESERVED".into() }));
                }
                Err(e) => error.set(Some(error_text(&e))),
            }
            preview_version.update(|v| *v += 1);
        }
    });
    let confirm = Action::new(move |(token, doc): &(String, String)| {
        let (token, doc) = (token.clone(), doc.clone());
        async move {
            match api::confirm_reservation(token.clone(), doc).await {
                Ok(r) => set_status(held, &token, r.status),
                Err(e) => error.set(Some(error_text(&e))),
            }
            preview_version.update(|v| *v += 1);
        }
    });
    let cancel = Action::new(move |(token, reason): &(String, Option<String>)| {
        let (token, reason) = (token.clone(), reason.clone());
        async move {
            match api::cancel_reservation(token.clone(), reason).await {
                Ok(r) => set_status(held, &token, r.status),
                Err(e) => error.set(Some(error_text(&e))),
            }
            preview_version.update(|v| *v += 1);
        }
    });
    let busy = Signal::derive(move || reserve.pending().get() || confirm.pending().get() || cancel.pending().get());

    // countdown: a browser interval while the reservation is RESERVED, measured against the browser's own
    // clock from the moment the server's `ttl_seconds` arrived
    Countdown(held, remaining);

    let active_token = move || held.with(|h| h.as_ref().filter(|h| h.status == "RESERVED").map(|h| h.res.token.clone()));

    view! {
        <div class="form-grid">
            <IdSelect label="reserve.project" testid="select-project" choices=project_choices value=project/>
            <IdSelect label="reserve.type" testid="select-type" choices=type_choices value=ctype/>
            <Show when=move || show(|s| s.originator)>
                <IdSelect label="reserve.originator" testid="select-originator" choices=org_choices value=originator/>
            </Show>
            <Show when=move || show(|s| s.recipient)>
                <IdSelect label="reserve.recipient" testid="select-recipient" choices=org_choices value=recipient/>
            </Show>
            <Show when=move || show(|s| s.sub_type)>
                <IdSelect label="reserve.subtype" testid="select-subtype" choices=sub_type_choices value=sub_type/>
            </Show>
            <Show when=move || show(|s| s.rfa_type)>
                <IdSelect label="reserve.rfatype" testid="select-rfatype" choices=rfa_choices value=rfa_type/>
            </Show>
            <Show when=move || show(|s| s.discipline)>
                <IdSelect label="reserve.discipline" testid="select-discipline" choices=discipline_choices value=discipline/>
            </Show>
            <Show when=move || show(|s| s.rev)>
                <label class="field">
                    <span>{move || i18n.t("reserve.revision")}</span>
                    <input type="text" maxlength="4" data-testid="revision"
                        placeholder=move || i18n.t("reserve.revision.hint")
                        prop:value=move || revision.get()
                        on:input=move |ev| revision.set(event_target_value(&ev).to_uppercase())/>
                </label>
            </Show>
        </div>

        <TemplateInfo i18n project ctype current_template/>

        <div class="preview-box">
            {move || match (request.get().is_some(), current_preview.get()) {
                (false, _) => view! { <p class="muted" data-testid="preview-hint">{i18n.t("reserve.incomplete")}</p> }.into_any(),
                (true, None) => view! { <p class="muted">{i18n.t("common.loading")}</p> }.into_any(),
                (true, Some(Ok(p))) => view! {
                    <div class="label">{i18n.t("reserve.preview")}</div>
                    <div class="number" data-testid="preview-number">{p.document_number}</div>
                    <div class="muted small" data-testid="preview-note">{i18n.t("reserve.preview.note")}</div>
                }.into_any(),
                (true, Some(Err(m))) => view! { <p class="error" data-testid="preview-error">{m}</p> }.into_any(),
            }}
        </div>

        <Show when=move || active_token().is_none()>
            <button type="button" class="primary big" data-testid="reserve-button"
                disabled=move || request.get().is_none() || busy.get()
                on:click=move |_| {
                    if let Some(req) = request.get_untracked() {
                        error.set(None);
                        reserve.dispatch(req);
                    }
                }>
                {move || if reserve.pending().get() { i18n.t("reserve.busy") } else { i18n.t("reserve.button") }}
            </button>
        </Show>

        <ErrorSlot error/>

        {move || held.get().map(|h| {
            let number = h.res.document_number.clone();
            let token = h.res.token.clone();
            let status = h.status.clone();
            let is_reserved = status == "RESERVED";
            let status_key: &'static str = match status.as_str() {
                "CONFIRMED" => "reserve.status.CONFIRMED",
                "CANCELLED" => "reserve.status.CANCELLED",
                _ => "reserve.status.RESERVED",
            };
            let (t1, t2) = (token.clone(), token);
            view! {
                <div class="reserved-box" data-testid="reservation">
                    <div class="label">{move || i18n.t("reserve.reserved")}</div>
                    <div class="number big" data-testid="reserved-number">{number.clone()}</div>
                    <CopyButton text=move || number.clone() testid="copy-button"/>
                    <p>
                        {move || i18n.t("reserve.status")}": "
                        <strong data-testid="status">{status.clone()}</strong>
                        " (" {move || i18n.t(status_key)} ")"
                    </p>
                    <Show when=move || is_reserved>
                        <p class="countdown">
                            {move || if remaining.get() > 0 { i18n.t("reserve.expires_in") } else { i18n.t("reserve.expired") }}" "
                            <span data-testid="ttl-countdown">{move || mm_ss(remaining.get())}</span>
                        </p>
                        <div class="form-row">
                            <label class="field grow">
                                <span>{move || i18n.t("reserve.document_id")}</span>
                                <input type="text" data-testid="document-id"
                                    prop:value=move || document_id.get()
                                    on:input=move |ev| document_id.set(event_target_value(&ev))/>
                            </label>
                            <button type="button" class="primary" data-testid="confirm-button"
                                disabled=move || busy.get() || document_id.with(|d| d.trim().is_empty())
                                on:click={
                                    let token = t1.clone();
                                    move |_| {
                                        error.set(None);
                                        confirm.dispatch((token.clone(), document_id.get_untracked().trim().to_string()));
                                    }
                                }>
                                {move || i18n.t("reserve.confirm")}
                            </button>
                        </div>
                        <div class="form-row">
                            <label class="field grow">
                                <span>{move || i18n.t("reserve.cancel_reason")}</span>
                                <input type="text" data-testid="cancel-reason"
                                    prop:value=move || cancel_reason.get()
                                    on:input=move |ev| cancel_reason.set(event_target_value(&ev))/>
                            </label>
                            <button type="button" class="danger" data-testid="cancel-button"
                                disabled=move || busy.get()
                                on:click={
                                    let token = t2.clone();
                                    move |_| {
                                        error.set(None);
                                        let reason = cancel_reason.get_untracked().trim().to_string();
                                        cancel.dispatch((token.clone(), (!reason.is_empty()).then_some(reason)));
                                    }
                                }>
                                {move || i18n.t("reserve.cancel")}
                            </button>
                        </div>
                    </Show>
                    <Show when=move || !is_reserved>
                        <button type="button" class="secondary" data-testid="new-reservation"
                            on:click=move |_| { held.set(None); error.set(None); }>
                            {move || i18n.t("reserve.new")}
                        </button>
                    </Show>
                </div>
            }
        })}
    }
}

/// The template in use and where it comes from.
#[component]
fn TemplateInfo(
    i18n: I18n,
    project: RwSignal<Option<i64>>,
    ctype: RwSignal<Option<i64>>,
    current_template: Memo<Option<Result<ResolvedTemplate, String>>>,
) -> impl IntoView {
    move || {
        if project.get().is_none() || ctype.get().is_none() {
            return ().into_any();
        }
        match current_template.get() {
            None => view! { <p class="muted small">{i18n.t("reserve.template.loading")}</p> }.into_any(),
            Some(Err(m)) => view! { <ErrorBox message=m/> }.into_any(),
            Some(Ok(rt)) => {
                let source_key = match rt.source {
                    TemplateSource::ProjectType => "reserve.source.ProjectType",
                    TemplateSource::ProjectDefault => "reserve.source.ProjectDefault",
                    TemplateSource::SystemDefault => "reserve.source.SystemDefault",
                };
                let unreadable = Shows::of(&rt.template).is_none();
                view! {
                    <p class="small template-info">
                        {i18n.t("reserve.template")}": "
                        <code data-testid="resolved-template">{rt.template.clone()}</code>
                        " (" {i18n.t(source_key)} ", " {rt.reset_scope.as_str()} ")"
                    </p>
                    {unreadable.then(|| view! { <ErrorBox message=i18n.t("reserve.no_template")/> })}
                }
                .into_any()
            }
        }
    }
}

fn set_status(held: RwSignal<Option<Held>>, token: &str, status: String) {
    held.update(|h| {
        if let Some(h) = h.as_mut().filter(|h| h.res.token == token) {
            h.status = status;
        }
    });
}

fn mm_ss(seconds: i64) -> String {
    let s = seconds.max(0);
    format!("{:02}:{:02}", s / 60, s % 60)
}

/// Ticks `remaining` down once a second while the held reservation is RESERVED.
#[allow(non_snake_case)]
fn Countdown(held: RwSignal<Option<Held>>, remaining: RwSignal<i64>) {
    let ticker = StoredValue::new(None::<IntervalHandle>);
    let stop = move || {
        if let Some(h) = ticker.try_get_value().flatten() {
            h.clear();
            ticker.set_value(None);
        }
    };
    Effect::new(move |_| {
        let running = held.with(|h| h.as_ref().filter(|h| h.status == "RESERVED").map(|h| (h.res.token.clone(), h.res.ttl_seconds)));
        stop();
        if let Some((_token, ttl)) = running {
            let started = super::browser::now_ms();
            let tick = move || {
                let elapsed = ((super::browser::now_ms() - started) / 1000.0).floor() as i64;
                remaining.set((ttl - elapsed).max(0));
            };
            if let Ok(h) = set_interval_with_handle(tick, Duration::from_millis(500)) {
                ticker.set_value(Some(h));
            }
        }
    });
    on_cleanup(stop);
}
