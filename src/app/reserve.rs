//! `/` — the staff reservation form (docs/rules/api.md#web-app). Which parts are asked for is read from the
//! resolved template with `crate::numbering` (never per-type rules here); numbers come from the server.
//!
//! The server's HTML is the whole form, filled from the choices in the address: a plain HTML form that posts to
//! `/forms/reserve` (and the card's to `/forms/confirm`, `/forms/cancel`), so it works before the browser bundle
//! arrives and without it; choices that depend on each other take a step of their own there ("show the parts").
//! Once hydrated the same forms call server functions instead, with the live preview and live updates.

use std::time::Duration;

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use super::api::{self, error_text};
use super::i18n::{use_i18n, I18n};
use super::live;
use super::widgets::{choice, client_fetch, source_key, Choice, CopyButton, ErrorBox, ErrorSlot, IdSelect, NumberText, RequireUser};
use crate::contract::forms::{field, path, HeldNumber, ReserveChoices, ReservePageData, Shows, MAX_REVISION_CHARS};
use crate::contract::live::LiveEvent;
use crate::contract::*;

#[component]
pub fn ReservePage() -> impl IntoView {
    let i18n = use_i18n();
    // the choices in the address: a form posted without scripts comes back to them
    let initial = use_query_map().with_untracked(|q| ReserveChoices::from_fields(|name| q.get(name)));
    let page = Resource::new(|| (), {
        let initial = initial.clone();
        move |_| api::reserve_page(initial.clone())
    });
    view! {
        <RequireUser content=move |_user| {
            let initial = initial.clone();
            view! {
            <section class="card">
                <h1>{move || i18n.t("reserve.title")}</h1>
                <Suspense fallback=move || view! { <p class="muted">{move || i18n.t("common.loading")}</p> }>
                    {move || {
                        let initial = initial.clone();
                        Suspend::new(async move {
                            match page.await {
                                Ok(page) => view! { <ReserveForm page initial/> }.into_any(),
                                Err(e) => view! { <ErrorBox message=error_text(&e)/> }.into_any(),
                            }
                        })
                    }}
                </Suspense>
            </section>
        }}/>
    }
}

/// What the user chose in the form (a part the template does not show is left out of the request).
#[derive(Clone, Copy)]
struct Selection {
    project: RwSignal<Option<ProjectId>>,
    ctype: RwSignal<Option<CorrespondenceTypeId>>,
    originator: RwSignal<Option<OrganizationId>>,
    recipient: RwSignal<Option<OrganizationId>>,
    sub_type: RwSignal<Option<SubTypeId>>,
    rfa_type: RwSignal<Option<RfaTypeId>>,
    discipline: RwSignal<Option<DisciplineId>>,
    contract: RwSignal<Option<ContractId>>,
    revision: RwSignal<String>,
}

impl Selection {
    fn from(c: &ReserveChoices) -> Self {
        Selection {
            project: RwSignal::new(c.project),
            ctype: RwSignal::new(c.correspondence_type),
            originator: RwSignal::new(c.originator),
            recipient: RwSignal::new(c.recipient),
            sub_type: RwSignal::new(c.sub_type),
            rfa_type: RwSignal::new(c.rfa_type),
            discipline: RwSignal::new(c.discipline),
            contract: RwSignal::new(c.contract),
            revision: RwSignal::new(c.revision.clone()),
        }
    }

    /// The choices as they stand (tracked).
    fn choices(&self) -> ReserveChoices {
        ReserveChoices {
            project: self.project.get(),
            correspondence_type: self.ctype.get(),
            originator: self.originator.get(),
            recipient: self.recipient.get(),
            sub_type: self.sub_type.get(),
            rfa_type: self.rfa_type.get(),
            discipline: self.discipline.get(),
            contract: self.contract.get(),
            revision: self.revision.get(),
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
    /// The chosen project's active contracts.
    contract: Signal<Vec<Choice>>,
    /// The ids of the chosen project's member organizations.
    member_ids: Memo<Vec<OrganizationId>>,
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
        let contract_choices = Signal::derive(move || {
            let p = project.get();
            data.with_value(|d| {
                d.contracts.iter().filter(|c| Some(c.project_id) == p && c.active).map(|c| choice(c.id, &c.code, &c.name)).collect::<Vec<_>>()
            })
        });
        Choices {
            contract: contract_choices,
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

/// The request, complete (Some) when every part the template shows is chosen among what the selects offer.
fn request_memo(sel: Selection, choices: Choices, shows: Memo<Option<Shows>>) -> Memo<Option<NumberRequest>> {
    Memo::new(move |_| {
        let s = shows.get()?;
        let members = choices.member_ids.get();
        let mut chosen = sel.choices();
        // a choice the selects no longer offer (another project's member, another type's sub-type) is none
        chosen.originator = chosen.originator.filter(|id| members.contains(id));
        chosen.recipient = chosen.recipient.filter(|id| members.contains(id));
        chosen.sub_type = chosen.sub_type.filter(|st| choices.sub_type.with(|c| c.iter().any(|x| x.id == st.0)));
        chosen.contract = chosen.contract.filter(|k| choices.contract.with(|c| c.iter().any(|x| x.id == k.0)));
        chosen.request(&s)
    })
}

/// The reservation on the page and the calls that make, confirm and cancel it.
#[derive(Clone, Copy)]
struct Reservation {
    held: RwSignal<Option<HeldNumber>>,
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
    /// `preview_version` is bumped after every call (the preview moves on); `flash` is what a form posted without
    /// scripts left: the number held, or why the post was refused.
    fn new(preview_version: RwSignal<u32>, flash: crate::contract::forms::ReserveFlash) -> Self {
        let remaining = RwSignal::new(flash.held.as_ref().map(|h| h.result.ttl_seconds.max(0)).unwrap_or(0));
        let held = RwSignal::new(flash.held);
        let error = RwSignal::new(flash.error.as_ref().map(error_text));
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
                        held.set(Some(HeldNumber { result: res, status: NumberStatus::Reserved }));
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
                        settled(held, &token, r)
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
                        settled(held, &token, r)
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
        self.held.with(|h| h.as_ref().filter(|h| h.status == NumberStatus::Reserved).map(|h| h.result.token.clone()))
    }
}

#[component]
fn ReserveForm(page: ReservePageData, initial: ReserveChoices) -> impl IntoView {
    let i18n = use_i18n();
    let ReservePageData { reference, template: initial_template, preview: initial_preview, flash } = page;
    let data = StoredValue::new(reference);
    let sel = Selection::from(&initial);
    let Selection { project, ctype, .. } = sel;
    let choices = Choices::new(data, sel);
    // false in the server's HTML and until the bundle runs: the forms post themselves until then
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));

    // ---- the template this (project, type) resolves to; the server decides which one ----
    // the server's answer for the choices in the address is used first; bumped when the template may have changed
    // elsewhere (live events): resolve it again
    let initial_key = initial.project.zip(initial.correspondence_type);
    let initial_template = StoredValue::new(initial_template);
    let template_version = RwSignal::new(0u32);
    let resolved = client_fetch(move || {
        let fresh = template_version.get() > 0;
        let key = project.get().zip(ctype.get());
        let known = if fresh || key != initial_key { None } else { initial_template.get_value() };
        async move {
            let key = key?;
            Some((
                key,
                match known {
                    Some(answer) => answer,
                    None => api::resolve_template(key.0, key.1).await,
                },
            ))
        }
    });
    // the resolved template for the current choice (None while loading or not chosen)
    let current_template = Memo::new(move |_| {
        let key = project.get().zip(ctype.get())?;
        match resolved.get().flatten() {
            Some((k, r)) if k == key => Some(r.map_err(|e| error_text(&e))),
            // before the browser has asked (the server's HTML, hydration): the server's answer
            _ if Some(key) == initial_key => initial_template.get_value().map(|r| r.map_err(|e| error_text(&e))),
            _ => None,
        }
    });
    let shows = Memo::new(move |_| match current_template.get() {
        Some(Ok(rt)) => Shows::of(&rt.template),
        _ => None,
    });

    let request = request_memo(sel, choices, shows);

    // ---- preview (reserves nothing); reloaded after every reserve / confirm / cancel ----
    // the server's preview for the choices in the address is used first, as its template is
    let initial_request = StoredValue::new(request.get_untracked());
    let is_initial = move |req: &NumberRequest| initial_request.with_value(|i| i.as_ref() == Some(req));
    let initial_preview = StoredValue::new(initial_preview.map(|p| p.map_err(|e| error_text(&e))));
    let preview_version = RwSignal::new(0u32);
    let preview = client_fetch(move || {
        let req = request.get();
        let fresh = preview_version.get() > 0;
        let known = req.as_ref().filter(|r| !fresh && is_initial(r)).and_then(|_| initial_preview.get_value());
        async move {
            let req = req?;
            let answer = match known {
                Some(answer) => answer,
                None => api::preview_number(req.clone()).await.map_err(|e| error_text(&e)),
            };
            Some((req, answer))
        }
    });
    let current_preview = Memo::new(move |_| {
        let req = request.get()?;
        match preview.get().flatten() {
            Some((r, result)) if r == req => Some(result),
            _ if preview_version.get() == 0 && is_initial(&req) => initial_preview.get_value(),
            _ => None,
        }
    });

    let r = Reservation::new(preview_version, flash);
    let stale = follow_changes(request, current_preview, r.held, preview_version, template_version);
    // countdown: a browser interval while the reservation is RESERVED, measured against the browser's own
    // clock from the moment the server's `ttl_seconds` arrived
    Countdown(r.held, r.remaining);

    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if let Some(req) = request.get_untracked() {
            r.error.set(None);
            r.retry.set(None);
            r.reserve.dispatch(req);
        }
    };

    view! {
        <form method="post" action=path::RESERVE on:submit=submit data-testid="reserve-form">
            <PartSelectors sel choices shows/>

            // without scripts, the parts a template asks for show once the project and type are sent
            <div class="form-row" hidden=move || hydrated.get()>
                <button type="submit" formmethod="get" formaction="/" class="secondary" data-testid="choose-step">
                    {move || i18n.t("reserve.step")}
                </button>
            </div>

            <TemplateInfo i18n project ctype current_template/>

            <PreviewBox request current_preview stale/>

            <Show when=move || r.active_token().is_none()>
                <ReserveButton request r hydrated/>
            </Show>
        </form>

        // the same choices, for numbers taken in advance (a page of its own)
        <Show when=move || project.get().is_some() && ctype.get().is_some()>
            <p class="small">
                <a href=move || sel.choices().address_on(path::BLOCKS) data-testid="reserve-block-link">{move || i18n.t("reserve.block")}</a>
            </p>
        </Show>

        <ErrorSlot error=r.error/>
        <RetryButton r/>

        {move || r.held.get().map(|h| {
            // the codes the receipt's QR code names the number by
            let codes = data.with_value(|d| {
                let (p, t) = (project.get_untracked()?, ctype.get_untracked()?);
                Some((d.projects.iter().find(|x| x.id == p)?.code.clone(), d.correspondence_types.iter().find(|x| x.id == t)?.code.clone()))
            });
            view! { <ReservationCard h r sel hydrated codes/> }
        })}
    }
}

/// Follows the live events (`live`): a number taken elsewhere from the counter the preview shows, or a change of its
/// template, marks the preview stale (the words stay until the choice changes) and fetches it again; so does a
/// reconnection, which may have missed events. Returns the stale mark.
fn follow_changes(
    request: Memo<Option<NumberRequest>>,
    current_preview: Memo<Option<Result<PreviewResult, String>>>,
    held: RwSignal<Option<HeldNumber>>,
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
                    fn part<Id: Copy + Default + PartialEq>(in_key: Id, chosen: Option<Id>) -> bool {
                        in_key == Id::default() || Some(in_key) == chosen
                    }
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
                    let own = held.with_untracked(|h| h.as_ref().is_some_and(|h| h.result.sequence + 1 == next));
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
            <IdSelect label="reserve.project" testid="select-project" name=field::PROJECT choices=choices.project value=sel.project/>
            <IdSelect label="reserve.type" testid="select-type" name=field::TYPE choices=choices.ctype value=sel.ctype/>
            <Show when=move || show(|s| s.originator)>
                <IdSelect label="reserve.originator" testid="select-originator" name=field::ORIGINATOR choices=choices.org value=sel.originator/>
            </Show>
            <Show when=move || show(|s| s.recipient)>
                <IdSelect label="reserve.recipient" testid="select-recipient" name=field::RECIPIENT choices=choices.org value=sel.recipient/>
            </Show>
            <Show when=move || show(|s| s.sub_type)>
                <IdSelect label="reserve.subtype" testid="select-subtype" name=field::SUB_TYPE choices=choices.sub_type value=sel.sub_type/>
            </Show>
            <Show when=move || show(|s| s.rfa_type)>
                <IdSelect label="reserve.rfatype" testid="select-rfatype" name=field::RFA_TYPE choices=choices.rfa_type value=sel.rfa_type/>
            </Show>
            <Show when=move || show(|s| s.discipline)>
                <IdSelect label="reserve.discipline" testid="select-discipline" name=field::DISCIPLINE choices=choices.discipline value=sel.discipline/>
            </Show>
            <Show when=move || show(|s| s.contract)>
                <IdSelect label="reserve.contract" testid="select-contract" name=field::CONTRACT choices=choices.contract value=sel.contract/>
            </Show>
            <Show when=move || show(|s| s.rev)>
                <label class="field">
                    <span>{move || i18n.t("reserve.revision")}</span>
                    <input type="text" maxlength=MAX_REVISION_CHARS data-testid="revision" name=field::REVISION
                        placeholder=move || i18n.t("reserve.revision.hint")
                        value=revision.get_untracked()
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

/// Submits the form: before hydration (or without scripts) the browser posts it, so a tap is never lost; once
/// hydrated it is enabled when the request is complete.
#[component]
fn ReserveButton(request: Memo<Option<NumberRequest>>, r: Reservation, hydrated: RwSignal<bool>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <button type="submit" class="primary big" data-testid="reserve-button"
            disabled=move || hydrated.get() && (request.get().is_none() || r.busy.get())>
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

/// The choices as hidden fields, so that a form posted without scripts comes back to them.
#[component]
fn ChoiceFields(sel: Selection) -> impl IntoView {
    move || sel.choices().fields().into_iter().map(|(name, value)| view! { <input type="hidden" name=name value=value/> }).collect_view()
}

/// The reserved number, its status, and while it is RESERVED the countdown and confirm / cancel;
/// afterwards a link to the next reservation.
#[component]
fn ReservationCard(h: HeldNumber, r: Reservation, sel: Selection, hydrated: RwSignal<bool>, codes: Option<(String, String)>) -> impl IntoView {
    let i18n = use_i18n();
    let number = h.result.document_number.clone();
    let status = h.status.as_str();
    let is_reserved = h.status == NumberStatus::Reserved;
    let status_key: &'static str = match h.status {
        NumberStatus::Confirmed => "reserve.status.CONFIRMED",
        NumberStatus::Cancelled => "reserve.status.CANCELLED",
        NumberStatus::Reserved | NumberStatus::Void => "reserve.status.RESERVED",
    };
    // the QR code of the number's verify link, and its printable stamp (both drawn by the service)
    let receipt_links = codes.map(|(project, type_code)| {
        use crate::receipt::link::receipt_path;
        view! {
            <p class="receipt-qr">
                <img src=receipt_path("/qr", &project, &type_code, &number) width="120" height="120"
                    alt=move || i18n.t("reserve.qr") data-testid="receipt-qr"/>
                <a href=receipt_path("/stamp", &project, &type_code, &number) target="_blank" data-testid="receipt-stamp">
                    {move || i18n.t("reserve.stamp")}
                </a>
            </p>
        }
    });
    view! {
        <div class="reserved-box" data-testid="reservation">
            <div class="label">{move || i18n.t("reserve.reserved")}</div>
            <div class="number big" data-testid="reserved-number"><NumberText text=number.clone()/></div>
            <Show when=move || hydrated.get()>
                <CopyButton text={
                    let number = number.clone();
                    move || number.clone()
                } testid="copy-button"/>
            </Show>
            // words for people; the status code stays on the element for scripts and tests
            <p>
                {move || i18n.t("reserve.status")}": "
                <strong data-testid="status" data-status=status>{move || i18n.t(status_key)}</strong>
            </p>
            {receipt_links}
            {is_reserved.then(|| view! { <ExpiresIn remaining=r.remaining/> })}
            {h.may("CONFIRM").then(|| view! { <ConfirmForm held=h.clone() r sel hydrated/> })}
            {h.may("CANCEL").then(|| view! { <CancelForm held=h.clone() r sel hydrated/> })}
            <Show when=move || !is_reserved>
                // a link to the page with the same choices; once hydrated, the card just closes
                <a href=move || sel.choices().page_address() class="button secondary" data-testid="new-reservation"
                    on:click=move |ev| { ev.prevent_default(); r.held.set(None); r.error.set(None); r.retry.set(None); }>
                    {move || i18n.t("reserve.new")}
                </a>
            </Show>
        </div>
    }
}

/// How long a RESERVED number stays held.
#[component]
fn ExpiresIn(remaining: RwSignal<i64>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <p class="countdown">
            {move || if remaining.get() > 0 { i18n.t("reserve.expires_in") } else { i18n.t("reserve.expired") }}" "
            <span data-testid="ttl-countdown">{move || mm_ss(remaining.get())}</span>
        </p>
    }
}

/// The hidden fields that name the held number in a form, so that the page can show it again after a post without
/// scripts.
#[component]
fn HeldFields(held: HeldNumber, sel: Selection) -> impl IntoView {
    let h = held.result;
    view! {
        <input type="hidden" name="token" value=h.token/>
        <input type="hidden" name="number" value=h.document_number/>
        <input type="hidden" name="expiresAt" value=h.expires_at.to_rfc3339()/>
        <ChoiceFields sel/>
    }
}

/// Confirms the held number with a document id (offered when the server's `availableActions` has CONFIRM).
#[component]
fn ConfirmForm(held: HeldNumber, r: Reservation, sel: Selection, hydrated: RwSignal<bool>) -> impl IntoView {
    let i18n = use_i18n();
    let Reservation { error, document_id, confirm, busy, .. } = r;
    let token = held.result.token.clone();
    view! {
        <form method="post" action=path::CONFIRM class="form-row" data-testid="confirm-form"
            on:submit=move |ev| {
                ev.prevent_default();
                error.set(None);
                confirm.dispatch((token.clone(), document_id.get_untracked().trim().to_string()));
            }>
            <HeldFields held sel/>
            <label class="field grow">
                <span>{move || i18n.t("reserve.document_id")}</span>
                <input type="text" data-testid="document-id" name="documentId" required
                    prop:value=move || document_id.get()
                    on:input=move |ev| document_id.set(event_target_value(&ev))/>
            </label>
            <button type="submit" class="primary" data-testid="confirm-button"
                disabled=move || hydrated.get() && (busy.get() || document_id.with(|d| d.trim().is_empty()))>
                {move || i18n.t("reserve.confirm")}
            </button>
        </form>
    }
}

/// Cancels the held number, with an optional reason (offered when the server's `availableActions` has CANCEL).
#[component]
fn CancelForm(held: HeldNumber, r: Reservation, sel: Selection, hydrated: RwSignal<bool>) -> impl IntoView {
    let i18n = use_i18n();
    let Reservation { error, cancel_reason, cancel, busy, .. } = r;
    let token = held.result.token.clone();
    view! {
        <form method="post" action=path::CANCEL class="form-row" data-testid="cancel-form"
            on:submit=move |ev| {
                ev.prevent_default();
                error.set(None);
                let reason = cancel_reason.get_untracked().trim().to_string();
                cancel.dispatch((token.clone(), (!reason.is_empty()).then_some(reason)));
            }>
            <HeldFields held sel/>
            <label class="field grow">
                <span>{move || i18n.t("reserve.cancel_reason")}</span>
                <input type="text" data-testid="cancel-reason" name="reason"
                    prop:value=move || cancel_reason.get()
                    on:input=move |ev| cancel_reason.set(event_target_value(&ev))/>
            </label>
            <button type="submit" class="danger" data-testid="cancel-button"
                disabled=move || hydrated.get() && busy.get()>
                {move || i18n.t("reserve.cancel")}
            </button>
        </form>
    }
}

/// The template in use and where it comes from.
#[component]
fn TemplateInfo(
    i18n: I18n,
    project: RwSignal<Option<ProjectId>>,
    ctype: RwSignal<Option<CorrespondenceTypeId>>,
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

/// The held number after a confirm or cancel: its new status, and what the server now allows with it.
fn settled(held: RwSignal<Option<HeldNumber>>, token: &str, r: StatusResult) {
    held.update(|h| {
        if let Some(h) = h.as_mut().filter(|h| h.result.token == token) {
            h.status = r.status;
            h.result.workflow = r.workflow;
        }
    });
}

fn mm_ss(seconds: i64) -> String {
    let s = seconds.max(0);
    format!("{:02}:{:02}", s / 60, s % 60)
}

/// Ticks `remaining` down once a second while the held reservation is RESERVED.
#[allow(non_snake_case)]
fn Countdown(held: RwSignal<Option<HeldNumber>>, remaining: RwSignal<i64>) {
    let ticker = StoredValue::new(None::<IntervalHandle>);
    let stop = move || {
        if let Some(h) = ticker.try_get_value().flatten() {
            h.clear();
            ticker.set_value(None);
        }
    };
    Effect::new(move |_| {
        let running =
            held.with(|h| h.as_ref().filter(|h| h.status == NumberStatus::Reserved).map(|h| (h.result.token.clone(), h.result.ttl_seconds)));
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
