//! `/` — the staff reservation form (SPEC §9). Which parties are asked for is read from the
//! resolved template with `crate::numbering` (never per-type rules here); numbers come from the server.

use std::time::Duration;

use leptos::prelude::*;

use super::api::{self, error_text};
use super::i18n::{use_i18n, I18n};
use super::live;
use super::widgets::{choice, client_fetch, source_key, Choice, CopyButton, ErrorBox, ErrorSlot, IdSelect, NumberText, RequireUser};
use crate::contract::live::LiveEvent;
use crate::contract::*;
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
    status: NumberStatus,
}

/// What the user chose in the form (a part the template does not show is left out of the request).
#[derive(Clone, Copy)]
struct Selection {
    project: RwSignal<Option<i64>>,
    ctype: RwSignal<Option<i64>>,
    originator: RwSignal<Option<i64>>,
    recipient: RwSignal<Option<i64>>,
    sub_type: RwSignal<Option<i64>>,
    rfa_type: RwSignal<Option<i64>>,
    discipline: RwSignal<Option<i64>>,
    revision: RwSignal<String>,
}

impl Selection {
    fn new() -> Self {
        Selection {
            project: RwSignal::new(None),
            ctype: RwSignal::new(None),
            originator: RwSignal::new(None),
            recipient: RwSignal::new(None),
            sub_type: RwSignal::new(None),
            rfa_type: RwSignal::new(None),
            discipline: RwSignal::new(None),
            revision: RwSignal::new(String::new()),
        }
    }
}

/// What each select offers, from the reference data and the choices made so far.
#[derive(Clone, Copy)]
struct Choices {
    project: Signal<Vec<Choice>>,
    ctype: Signal<Vec<Choice>>,
    /// The chosen project's member organizations (originator and recipient).
    org: Signal<Vec<Choice>>,
    sub_type: Signal<Vec<Choice>>,
    rfa_type: Signal<Vec<Choice>>,
    discipline: Signal<Vec<Choice>>,
    /// The ids of the chosen project's member organizations.
    member_ids: Memo<Vec<i64>>,
}

impl Choices {
    fn new(data: StoredValue<ReferenceData>, sel: Selection) -> Self {
        let Selection { project, ctype, .. } = sel;
        let project_choices = Signal::derive(move || {
            data.with_value(|d| d.projects.iter().map(|p| Choice { disabled: !p.active, ..choice(p.id, &p.code, &p.name) }).collect::<Vec<_>>())
        });
        let type_choices =
            Signal::derive(move || data.with_value(|d| d.correspondence_types.iter().map(|t| choice(t.id, &t.code, &t.name)).collect::<Vec<_>>()));
        // organizations offered are the chosen project's members
        let member_ids = Memo::new(move |_| {
            let p = project.get();
            data.with_value(|d| p.and_then(|p| d.projects.iter().find(|x| x.id == p)).map(|x| x.member_org_ids.clone()).unwrap_or_default())
        });
        let org_choices = Signal::derive(move || {
            let members = member_ids.get();
            data.with_value(|d| {
                d.organizations.iter().filter(|o| members.contains(&o.id)).map(|o| choice(o.id, &o.code, &o.name)).collect::<Vec<_>>()
            })
        });
        let sub_type_choices = Signal::derive(move || {
            let t = ctype.get();
            data.with_value(|d| {
                d.sub_types
                    .iter()
                    .filter(|s| Some(s.correspondence_type_id) == t)
                    .map(|s| {
                        let name = if s.name.trim().is_empty() { s.code.clone() } else { format!("{} {}", s.code, s.name) };
                        Choice { code: s.code.clone(), ..choice(s.id, &s.sub_type_number, &name) }
                    })
                    .collect::<Vec<_>>()
            })
        });
        let rfa_choices = Signal::derive(move || data.with_value(|d| d.rfa_types.iter().map(|x| choice(x.id, &x.code, &x.name)).collect::<Vec<_>>()));
        let discipline_choices =
            Signal::derive(move || data.with_value(|d| d.disciplines.iter().map(|x| choice(x.id, &x.code, &x.name)).collect::<Vec<_>>()));
        Choices {
            project: project_choices,
            ctype: type_choices,
            org: org_choices,
            sub_type: sub_type_choices,
            rfa_type: rfa_choices,
            discipline: discipline_choices,
            member_ids,
        }
    }
}

/// The request, complete (Some) when every part the template shows is chosen.
fn request_memo(sel: Selection, choices: Choices, shows: Memo<Option<Shows>>) -> Memo<Option<NumberRequest>> {
    Memo::new(move |_| {
        let p = sel.project.get()?;
        let t = sel.ctype.get()?;
        let s = shows.get()?;
        let members = choices.member_ids.get();
        let member = |v: Option<i64>| v.filter(|id| members.contains(id));
        let mut req = NumberRequest { project_id: Some(p), correspondence_type_id: Some(t), ..Default::default() };
        if s.originator {
            req.originator_org_id = Some(member(sel.originator.get())?);
        }
        if s.recipient {
            req.recipient_org_id = Some(member(sel.recipient.get())?);
        }
        if s.sub_type {
            let st = sel.sub_type.get()?;
            if !choices.sub_type.with(|c| c.iter().any(|x| x.id == st)) {
                return None;
            }
            req.sub_type_id = Some(st);
        }
        if s.rfa_type {
            req.rfa_type_id = Some(sel.rfa_type.get()?);
        }
        if s.discipline {
            req.discipline_id = Some(sel.discipline.get()?);
        }
        if s.rev {
            let r = sel.revision.get().trim().to_string();
            if !r.is_empty() {
                req.revision = Some(r);
            }
        }
        Some(req)
    })
}

/// The reservation on the page and the calls that make, confirm and cancel it.
#[derive(Clone, Copy)]
struct Reservation {
    held: RwSignal<Option<Held>>,
    /// Seconds left before the held reservation expires.
    remaining: RwSignal<i64>,
    error: RwSignal<Option<String>>,
    document_id: RwSignal<String>,
    cancel_reason: RwSignal<String>,
    reserve: Action<NumberRequest, ()>,
    confirm: Action<(String, String), ()>,
    cancel: Action<(String, Option<String>), ()>,
    busy: Signal<bool>,
    /// The call that failed for a passing reason (NB003 busy, network, rate limit): the form offers to try it again.
    retry: RwSignal<Option<Retry>>,
}

/// A call worth repeating as it was.
#[derive(Clone)]
enum Retry {
    Reserve(Box<NumberRequest>),
    Confirm(String, String),
    Cancel(String, Option<String>),
}

/// Shows `e` and, when it is transient, keeps `call` for the retry button.
fn failed(error: RwSignal<Option<String>>, retry: RwSignal<Option<Retry>>, e: &crate::contract::error::ApiError, call: Retry) {
    error.set(Some(error_text(e)));
    retry.set(e.code.is_transient().then_some(call));
}

impl Reservation {
    /// `preview_version` is bumped after every call (the preview moves on).
    fn new(preview_version: RwSignal<u32>) -> Self {
        let held = RwSignal::new(None::<Held>);
        let remaining = RwSignal::new(0i64);
        let error = RwSignal::new(None::<String>);
        let document_id = RwSignal::new(String::new());
        let cancel_reason = RwSignal::new(String::new());
        let retry = RwSignal::new(None::<Retry>);

        let reserve = Action::new(move |req: &NumberRequest| {
            let req = req.clone();
            async move {
                match api::reserve_number(req.clone()).await {
                    Ok(res) => {
                        retry.set(None);
                        document_id.set(String::new());
                        cancel_reason.set(String::new());
                        remaining.set(res.ttl_seconds.max(0));
                        held.set(Some(Held { res, status: NumberStatus::Reserved }));
                    }
                    Err(e) => failed(error, retry, &e, Retry::Reserve(Box::new(req))),
                }
                preview_version.update(|v| *v += 1);
            }
        });
        let confirm = Action::new(move |(token, doc): &(String, String)| {
            let (token, doc) = (token.clone(), doc.clone());
            async move {
                match api::confirm_reservation(token.clone(), doc.clone()).await {
                    Ok(r) => {
                        retry.set(None);
                        set_status(held, &token, r.status)
                    }
                    Err(e) => failed(error, retry, &e, Retry::Confirm(token, doc)),
                }
                preview_version.update(|v| *v += 1);
            }
        });
        let cancel = Action::new(move |(token, reason): &(String, Option<String>)| {
            let (token, reason) = (token.clone(), reason.clone());
            async move {
                match api::cancel_reservation(token.clone(), reason.clone()).await {
                    Ok(r) => {
                        retry.set(None);
                        set_status(held, &token, r.status)
                    }
                    Err(e) => failed(error, retry, &e, Retry::Cancel(token, reason)),
                }
                preview_version.update(|v| *v += 1);
            }
        });
        let busy = Signal::derive(move || reserve.pending().get() || confirm.pending().get() || cancel.pending().get());
        Reservation { held, remaining, error, document_id, cancel_reason, reserve, confirm, cancel, busy, retry }
    }

    /// The token of the held reservation while it is RESERVED.
    fn active_token(&self) -> Option<String> {
        self.held.with(|h| h.as_ref().filter(|h| h.status == NumberStatus::Reserved).map(|h| h.res.token.clone()))
    }
}

#[component]
fn ReserveForm(data: ReferenceData) -> impl IntoView {
    let i18n = use_i18n();
    let data = StoredValue::new(data);
    let sel = Selection::new();
    let Selection { project, ctype, .. } = sel;
    let choices = Choices::new(data, sel);

    // ---- the template this (project, type) resolves to; the server decides which one ----
    // bumped when the template may have changed elsewhere (live events): resolve it again
    let template_version = RwSignal::new(0u32);
    let resolved = client_fetch(move || {
        template_version.track();
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

    let request = request_memo(sel, choices, shows);

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

    let r = Reservation::new(preview_version);
    let stale = follow_changes(request, current_preview, r.held, preview_version, template_version);
    // countdown: a browser interval while the reservation is RESERVED, measured against the browser's own
    // clock from the moment the server's `ttl_seconds` arrived
    Countdown(r.held, r.remaining);

    view! {
        <PartSelectors sel choices shows/>

        <TemplateInfo i18n project ctype current_template/>

        <PreviewBox request current_preview stale/>

        <Show when=move || r.active_token().is_none()>
            <ReserveButton request r/>
        </Show>

        <ErrorSlot error=r.error/>
        <RetryButton r/>

        {move || r.held.get().map(|h| view! { <ReservationCard h r/> })}
    }
}

/// Follows the live events (`live`): a number taken elsewhere from the counter the preview shows, or a change of its
/// template, marks the preview stale (the words stay until the choice changes) and fetches it again; so does a
/// reconnection, which may have missed events. Returns the stale mark.
fn follow_changes(
    request: Memo<Option<NumberRequest>>,
    current_preview: Memo<Option<Result<PreviewResult, String>>>,
    held: RwSignal<Option<Held>>,
    preview_version: RwSignal<u32>,
    template_version: RwSignal<u32>,
) -> RwSignal<bool> {
    let stale = RwSignal::new(false);
    live::follow(
        move |event| {
            let Some(req) = request.get_untracked() else { return };
            let (Some(p), Some(t)) = (req.project_id, req.correspondence_type_id) else { return };
            match event {
                LiveEvent::Counter {
                    project_id,
                    correspondence_type_id,
                    originator_id,
                    recipient_id,
                    sub_type_id,
                    rfa_type_id,
                    discipline_id,
                    last_number,
                    ..
                } => {
                    // a part the counter's key leaves out is 0: any choice of it is this counter
                    let part = |in_key: i64, chosen: Option<i64>| in_key == 0 || Some(in_key) == chosen;
                    let this_counter = project_id == p
                        && correspondence_type_id == t
                        && part(originator_id, req.originator_org_id)
                        && part(recipient_id, req.recipient_org_id)
                        && part(sub_type_id, req.sub_type_id)
                        && part(rfa_type_id, req.rfa_type_id)
                        && part(discipline_id, req.discipline_id);
                    let next = u64::try_from(last_number).unwrap_or(0) + 1;
                    let shown = matches!(current_preview.get_untracked(), Some(Ok(ref pr)) if pr.sequence == next);
                    // this tab's own reservation is no news
                    let own = held.with_untracked(|h| h.as_ref().is_some_and(|h| h.res.sequence + 1 == next));
                    if this_counter && !shown && !own {
                        stale.set(true);
                        preview_version.update(|v| *v += 1);
                    }
                }
                LiveEvent::Template { project_id, correspondence_type_id } if project_id == p && correspondence_type_id.is_none_or(|x| x == t) => {
                    stale.set(true);
                    template_version.update(|v| *v += 1);
                    preview_version.update(|v| *v += 1);
                }
                _ => {}
            }
        },
        move || {
            template_version.update(|v| *v += 1);
            preview_version.update(|v| *v += 1);
        },
    );
    // another choice is another preview, not a changed one
    Effect::new(move |_| {
        request.track();
        stale.set(false);
    });
    stale
}

/// The selects (and the revision) of the parts the resolved template shows.
#[component]
fn PartSelectors(sel: Selection, choices: Choices, shows: Memo<Option<Shows>>) -> impl IntoView {
    let i18n = use_i18n();
    let show = move |f: fn(&Shows) -> bool| shows.get().map(|s| f(&s)).unwrap_or(false);
    let revision = sel.revision;
    view! {
        <div class="form-grid">
            <IdSelect label="reserve.project" testid="select-project" choices=choices.project value=sel.project/>
            <IdSelect label="reserve.type" testid="select-type" choices=choices.ctype value=sel.ctype/>
            <Show when=move || show(|s| s.originator)>
                <IdSelect label="reserve.originator" testid="select-originator" choices=choices.org value=sel.originator/>
            </Show>
            <Show when=move || show(|s| s.recipient)>
                <IdSelect label="reserve.recipient" testid="select-recipient" choices=choices.org value=sel.recipient/>
            </Show>
            <Show when=move || show(|s| s.sub_type)>
                <IdSelect label="reserve.subtype" testid="select-subtype" choices=choices.sub_type value=sel.sub_type/>
            </Show>
            <Show when=move || show(|s| s.rfa_type)>
                <IdSelect label="reserve.rfatype" testid="select-rfatype" choices=choices.rfa_type value=sel.rfa_type/>
            </Show>
            <Show when=move || show(|s| s.discipline)>
                <IdSelect label="reserve.discipline" testid="select-discipline" choices=choices.discipline value=sel.discipline/>
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
    }
}

/// The number the request would get now (reserves nothing), or why there is none.
#[component]
fn PreviewBox(
    request: Memo<Option<NumberRequest>>,
    current_preview: Memo<Option<Result<PreviewResult, String>>>,
    stale: RwSignal<bool>,
) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <div class="preview-box">
            <Show when=move || stale.get() && request.with(Option::is_some)>
                <p class="notice small" data-testid="preview-stale" role="status">{move || i18n.t("reserve.preview.stale")}</p>
            </Show>
            {move || match (request.get().is_some(), current_preview.get()) {
                (false, _) => view! { <p class="muted" data-testid="preview-hint">{i18n.t("reserve.incomplete")}</p> }.into_any(),
                (true, None) => view! { <p class="muted">{i18n.t("common.loading")}</p> }.into_any(),
                (true, Some(Ok(p))) => view! {
                    <div class="label">{i18n.t("reserve.preview")}</div>
                    <div class="number" data-testid="preview-number"><NumberText text=p.document_number.clone()/></div>
                    <div class="muted small" data-testid="preview-note">{i18n.t("reserve.preview.note")}</div>
                }.into_any(),
                (true, Some(Err(m))) => view! { <p class="error" data-testid="preview-error">{m}</p> }.into_any(),
            }}
        </div>
    }
}

#[component]
fn ReserveButton(request: Memo<Option<NumberRequest>>, r: Reservation) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <button type="button" class="primary big" data-testid="reserve-button"
            disabled=move || request.get().is_none() || r.busy.get()
            on:click=move |_| {
                if let Some(req) = request.get_untracked() {
                    r.error.set(None);
                    r.retry.set(None);
                    r.reserve.dispatch(req);
                }
            }>
            {move || if r.reserve.pending().get() { i18n.t("reserve.busy") } else { i18n.t("reserve.button") }}
        </button>
    }
}

/// Repeats the call that failed for a passing reason (NB003, network, rate limit), as it was.
#[component]
fn RetryButton(r: Reservation) -> impl IntoView {
    let i18n = use_i18n();
    move || {
        r.retry.get().map(|call| {
            view! {
                <button type="button" class="secondary" data-testid="retry-button" disabled=move || r.busy.get()
                    on:click=move |_| {
                        r.error.set(None);
                        r.retry.set(None);
                        match call.clone() {
                            Retry::Reserve(req) => { r.reserve.dispatch(*req); }
                            Retry::Confirm(token, doc) => { r.confirm.dispatch((token, doc)); }
                            Retry::Cancel(token, reason) => { r.cancel.dispatch((token, reason)); }
                        }
                    }>
                    {move || i18n.t("reserve.retry")}
                </button>
            }
        })
    }
}

/// The reserved number, its status, and while it is RESERVED the countdown and confirm / cancel;
/// afterwards a button for the next reservation.
#[component]
fn ReservationCard(h: Held, r: Reservation) -> impl IntoView {
    let i18n = use_i18n();
    let number = h.res.document_number.clone();
    let token = h.res.token.clone();
    let status = h.status.as_str();
    let is_reserved = h.status == NumberStatus::Reserved;
    let status_key: &'static str = match h.status {
        NumberStatus::Confirmed => "reserve.status.CONFIRMED",
        NumberStatus::Cancelled => "reserve.status.CANCELLED",
        NumberStatus::Reserved | NumberStatus::Void => "reserve.status.RESERVED",
    };
    view! {
        <div class="reserved-box" data-testid="reservation">
            <div class="label">{move || i18n.t("reserve.reserved")}</div>
            <div class="number big" data-testid="reserved-number"><NumberText text=number.clone()/></div>
            <CopyButton text=move || number.clone() testid="copy-button"/>
            // words for people; the status code stays on the element for scripts and tests
            <p>
                {move || i18n.t("reserve.status")}": "
                <strong data-testid="status" data-status=status>{move || i18n.t(status_key)}</strong>
            </p>
            <Show when=move || is_reserved>
                <ConfirmOrCancel token=token.clone() r/>
            </Show>
            <Show when=move || !is_reserved>
                <button type="button" class="secondary" data-testid="new-reservation"
                    on:click=move |_| { r.held.set(None); r.error.set(None); r.retry.set(None); }>
                    {move || i18n.t("reserve.new")}
                </button>
            </Show>
        </div>
    }
}

/// The countdown of a RESERVED number, and the forms that confirm it (with a document id) or cancel it.
#[component]
fn ConfirmOrCancel(token: String, r: Reservation) -> impl IntoView {
    let i18n = use_i18n();
    let Reservation { remaining, error, document_id, cancel_reason, confirm, cancel, busy, .. } = r;
    let (t1, t2) = (token.clone(), token);
    view! {
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
                on:click=move |_| {
                    error.set(None);
                    confirm.dispatch((t1.clone(), document_id.get_untracked().trim().to_string()));
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
                on:click=move |_| {
                    error.set(None);
                    let reason = cancel_reason.get_untracked().trim().to_string();
                    cancel.dispatch((t2.clone(), (!reason.is_empty()).then_some(reason)));
                }>
                {move || i18n.t("reserve.cancel")}
            </button>
        </div>
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
                let unreadable = Shows::of(&rt.template).is_none();
                view! {
                    <p class="small template-info">
                        {i18n.t("reserve.template")}": "
                        <code data-testid="resolved-template">{rt.template.clone()}</code>
                        " (" {i18n.t(source_key(rt.source))} ", " {rt.reset_scope.as_str()} ")"
                    </p>
                    {unreadable.then(|| view! { <ErrorBox message=i18n.t("reserve.no_template")/> })}
                }
                .into_any()
            }
        }
    }
}

fn set_status(held: RwSignal<Option<Held>>, token: &str, status: NumberStatus) {
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
        let running = held.with(|h| h.as_ref().filter(|h| h.status == NumberStatus::Reserved).map(|h| (h.res.token.clone(), h.res.ttl_seconds)));
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
