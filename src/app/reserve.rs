//! `/` — the staff reservation form (docs/rules/api.md#web-app). Which parts are asked for is read from the
//! resolved template with `crate::numbering` (never per-type rules here); numbers come from the server.
//!
//! The page is the server's HTML, whole, and nothing else: plain forms that post to `/forms/reserve` (the card's to
//! `/forms/confirm`, `/forms/cancel`) and come back to the page with the choices in its address, so it works before
//! and without scripts; choices that depend on each other take a step of their own ("show the parts"). The Leptos
//! bundle never hydrates it. The staff script (`staff/`, ADR 0005) makes it live: it asks the server for this
//! page again when a choice changes or a live event concerns it, posts the forms in the background, counts the
//! reservation down and copies the number. What only that script can do is in `<template>` elements here (the copy
//! button, the stale-preview notice, the retry), which it puts in place; markers in `data-*` attributes tell it the
//! rest. The markers are the contract between the two: `contract::staff_page`.

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use super::api::{self, error_text};
use super::i18n::use_i18n;
use super::widgets::{choice, source_key, Choice, ErrorBox, IdSelect, NumberText, RequireUser};
use crate::contract::forms::{field, path, HeldNumber, ReserveChoices, ReservePageData, Shows, MAX_REVISION_CHARS};
use crate::contract::live::EVENTS_PATH;
use crate::contract::staff_page;
use crate::contract::*;

#[component]
pub fn ReservePage() -> impl IntoView {
    let i18n = use_i18n();
    // the choices in the address: the forms and the staff script come back to them
    let initial = use_query_map().with_untracked(|q| ReserveChoices::from_fields(|name| q.get(name)));
    // a resource, as the page's other reads (its data then also rides in the page, unused): the page takes the flash
    // out of the session as it renders, and a session written from a read awaited straight in the page's suspense
    // left renders waiting for good
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

/// What each select offers, from the reference data and the project and type chosen.
struct Offered {
    project: Vec<Choice>,
    ctype: Vec<Choice>,
    /// The chosen project's member organizations (originator and recipient).
    org: Vec<Choice>,
    sub_type: Vec<Choice>,
    rfa_type: Vec<Choice>,
    discipline: Vec<Choice>,
    /// The chosen project's active contracts.
    contract: Vec<Choice>,
}

impl Offered {
    fn new(d: &ReferenceData, chosen: &ReserveChoices) -> Self {
        let members = chosen.project.and_then(|p| d.projects.iter().find(|x| x.id == p)).map(|x| x.member_org_ids.clone()).unwrap_or_default();
        Offered {
            project: d.projects.iter().map(|p| Choice { disabled: !p.active, ..choice(p.id, &p.code, &p.name) }).collect(),
            ctype: d.correspondence_types.iter().map(|t| choice(t.id, &t.code, &t.name)).collect(),
            org: d.organizations.iter().filter(|o| members.contains(&o.id)).map(|o| choice(o.id, &o.code, &o.name)).collect(),
            sub_type: d
                .sub_types
                .iter()
                .filter(|s| Some(s.correspondence_type_id) == chosen.correspondence_type)
                .map(|s| {
                    let name = if s.name.trim().is_empty() { s.code.clone() } else { format!("{} {}", s.code, s.name) };
                    Choice { code: s.code.clone(), ..choice(s.id, &s.sub_type_number, &name) }
                })
                .collect(),
            rfa_type: d.rfa_types.iter().map(|x| choice(x.id, &x.code, &x.name)).collect(),
            discipline: d.disciplines.iter().map(|x| choice(x.id, &x.code, &x.name)).collect(),
            contract: d
                .contracts
                .iter()
                .filter(|c| Some(c.project_id) == chosen.project && c.active)
                .map(|c| choice(c.id, &c.code, &c.name))
                .collect(),
        }
    }

    /// The choices, less those the selects no longer offer (another project's member, another type's sub-type).
    fn keep_offered(&self, mut chosen: ReserveChoices) -> ReserveChoices {
        fn offered<Id: Into<i64> + Copy>(id: Option<Id>, among: &[Choice]) -> Option<Id> {
            id.filter(|id| among.iter().any(|c| c.id == (*id).into()))
        }
        chosen.originator = offered(chosen.originator, &self.org);
        chosen.recipient = offered(chosen.recipient, &self.org);
        chosen.sub_type = offered(chosen.sub_type, &self.sub_type);
        chosen.contract = offered(chosen.contract, &self.contract);
        chosen
    }
}

#[component]
fn ReserveForm(page: ReservePageData, initial: ReserveChoices) -> impl IntoView {
    let i18n = use_i18n();
    let ReservePageData { reference, template, preview, flash } = page;
    let offered = Offered::new(&reference, &initial);
    let chosen = offered.keep_offered(initial);
    let template = template.map(|r| r.map_err(|e| error_text(&e)));
    let shows = match &template {
        Some(Ok(rt)) => Shows::of(&rt.template),
        _ => None,
    };
    let request = shows.as_ref().and_then(|s| chosen.request(s));
    let preview = request.as_ref().and(preview).map(|p| p.map_err(|e| error_text(&e)));
    let held_open = flash.held.as_ref().is_some_and(|h| h.status == NumberStatus::Reserved);
    // the codes the receipt's QR code names the number by
    let codes = chosen.project.zip(chosen.correspondence_type).and_then(|(p, t)| {
        Some((reference.projects.iter().find(|x| x.id == p)?.code.clone(), reference.correspondence_types.iter().find(|x| x.id == t)?.code.clone()))
    });
    let chosen_both = chosen.project.is_some() && chosen.correspondence_type.is_some();

    view! {
        <div id=staff_page::ROOT data-project=chosen.project.map(|p| p.to_string()) data-type=chosen.correspondence_type.map(|t| t.to_string()) data-events=EVENTS_PATH>
            <form method="post" action=path::RESERVE data-testid="reserve-form">
                <PartSelectors chosen=chosen.clone() offered shows/>

                // without scripts, the parts a template asks for show once the project and type are sent
                <div class="form-row" data-without-script="">
                    <button type="submit" formmethod="get" formaction="/" class="secondary" data-testid="choose-step">
                        {move || i18n.t("reserve.step")}
                    </button>
                </div>

                // the server resolves the template once the project and type are chosen
                {template.map(|template| view! { <TemplateInfo template/> })}

                <PreviewBox complete=request.is_some() preview/>

                {(!held_open).then(|| view! {
                    <button type="submit" class="primary big" data-testid="reserve-button" data-busy-label=i18n.t("reserve.busy")>
                        {move || i18n.t("reserve.button")}
                    </button>
                })}
            </form>

            // the same choices, for numbers taken in advance (a page of its own)
            {chosen_both.then(|| view! {
                <p class="small">
                    <a href=chosen.address_on(path::BLOCKS) data-testid="reserve-block-link">{move || i18n.t("reserve.block")}</a>
                </p>
            })}

            {flash.error.map(|e| view! { <ErrorBox message=error_text(&e)/> })}
            // a post the staff script could not get through (the network, a busy server): said where the script can
            // show it, with a button that sends the same post again
            <template data-unreachable="">
                <ErrorBox message=i18n.t("reserve.unreachable")/>
            </template>
            <template data-retry="">
                <button type="button" class="secondary" data-testid="retry-button">{move || i18n.t("reserve.retry")}</button>
            </template>

            {flash.held.map(|h| view! { <ReservationCard h chosen=chosen.clone() codes/> })}
        </div>
    }
}

/// The selects (and the revision) of the parts the resolved template shows.
#[component]
fn PartSelectors(chosen: ReserveChoices, offered: Offered, shows: Option<Shows>) -> impl IntoView {
    let i18n = use_i18n();
    let s = shows.unwrap_or_default();
    let Offered { project, ctype, org, sub_type, rfa_type, discipline, contract } = offered;
    view! {
        <div class="form-grid">
            <IdSelect label="reserve.project" testid="select-project" name=field::PROJECT choices=Signal::stored(project) value=RwSignal::new(chosen.project)/>
            <IdSelect label="reserve.type" testid="select-type" name=field::TYPE choices=Signal::stored(ctype) value=RwSignal::new(chosen.correspondence_type)/>
            {s.originator.then(|| view! {
                <IdSelect label="reserve.originator" testid="select-originator" name=field::ORIGINATOR choices=Signal::stored(org.clone()) value=RwSignal::new(chosen.originator)/>
            })}
            {s.recipient.then(|| view! {
                <IdSelect label="reserve.recipient" testid="select-recipient" name=field::RECIPIENT choices=Signal::stored(org.clone()) value=RwSignal::new(chosen.recipient)/>
            })}
            {s.sub_type.then(|| view! {
                <IdSelect label="reserve.subtype" testid="select-subtype" name=field::SUB_TYPE choices=Signal::stored(sub_type) value=RwSignal::new(chosen.sub_type)/>
            })}
            {s.rfa_type.then(|| view! {
                <IdSelect label="reserve.rfatype" testid="select-rfatype" name=field::RFA_TYPE choices=Signal::stored(rfa_type) value=RwSignal::new(chosen.rfa_type)/>
            })}
            {s.discipline.then(|| view! {
                <IdSelect label="reserve.discipline" testid="select-discipline" name=field::DISCIPLINE choices=Signal::stored(discipline) value=RwSignal::new(chosen.discipline)/>
            })}
            {s.contract.then(|| view! {
                <IdSelect label="reserve.contract" testid="select-contract" name=field::CONTRACT choices=Signal::stored(contract) value=RwSignal::new(chosen.contract)/>
            })}
            {s.rev.then(|| view! {
                <label class="field">
                    <span>{move || i18n.t("reserve.revision")}</span>
                    <input type="text" maxlength=MAX_REVISION_CHARS data-testid="revision" name=field::REVISION
                        placeholder=move || i18n.t("reserve.revision.hint") value=chosen.revision.clone()/>
                </label>
            })}
        </div>
    }
}

/// The number the request would get now (reserves nothing), or why there is none.
#[component]
fn PreviewBox(complete: bool, preview: Option<Result<PreviewResult, String>>) -> impl IntoView {
    let i18n = use_i18n();
    let shown = match (complete, preview) {
        (false, _) => view! { <p class="muted" data-testid="preview-hint">{i18n.t("reserve.incomplete")}</p> }.into_any(),
        (true, None) => view! { <p class="muted">{i18n.t("common.loading")}</p> }.into_any(),
        (true, Some(Ok(p))) => view! {
            <div class="label">{i18n.t("reserve.preview")}</div>
            <div class="number" data-testid="preview-number"><NumberText text=p.document_number.clone()/></div>
            <div class="muted small" data-testid="preview-note">{i18n.t("reserve.preview.note")}</div>
        }
        .into_any(),
        (true, Some(Err(m))) => view! { <p class="error" data-testid="preview-error">{m}</p> }.into_any(),
    };
    view! {
        <div class="preview-box">
            // a number taken elsewhere from this counter, or its template changed: the staff script says so here
            <template data-stale="">
                <p class="notice small" data-testid="preview-stale" role="status">{i18n.t("reserve.preview.stale")}</p>
            </template>
            {shown}
        </div>
    }
}

/// The reserved number, its status, and while it is RESERVED the countdown and confirm / cancel;
/// afterwards a link to the next reservation.
#[component]
fn ReservationCard(h: HeldNumber, chosen: ReserveChoices, codes: Option<(String, String)>) -> impl IntoView {
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
                    alt=i18n.t("reserve.qr") data-testid="receipt-qr"/>
                <a href=receipt_path("/stamp", &project, &type_code, &number) target="_blank" data-testid="receipt-stamp">
                    {i18n.t("reserve.stamp")}
                </a>
            </p>
        }
    });
    let ttl = h.result.ttl_seconds.max(0);
    view! {
        <div class="reserved-box" data-testid="reservation">
            <div class="label">{i18n.t("reserve.reserved")}</div>
            <div class="number big" data-testid="reserved-number"><NumberText text=number.clone()/></div>
            // copying needs a script: the staff script shows the button, and says whether the browser let it copy
            <template data-with-script="">
                <button type="button" class="secondary" data-testid="copy-button" data-copy-text=number.clone()>{i18n.t("common.copy")}</button>
            </template>
            <template data-copied="">
                <span class="ok small" data-testid="copy-result">{i18n.t("common.copied")}</span>
            </template>
            <template data-copy-failed="">
                <span class="error small" data-testid="copy-result">{i18n.t("common.copy_failed")}</span>
            </template>
            // words for people; the status code stays on the element for scripts and tests
            <p>
                {i18n.t("reserve.status")}": "
                <strong data-testid="status" data-status=status>{i18n.t(status_key)}</strong>
            </p>
            {receipt_links}
            // the staff script counts it down from when the page arrived
            {is_reserved.then(|| view! {
                <p class="countdown">
                    <span data-expired-label=i18n.t("reserve.expired")>{if ttl > 0 { i18n.t("reserve.expires_in") } else { i18n.t("reserve.expired") }}</span>
                    " "
                    <span data-testid="ttl-countdown" data-ttl-seconds=ttl.to_string()>{mm_ss(ttl)}</span>
                </p>
            })}
            {h.may("CONFIRM").then(|| view! { <ConfirmForm held=h.clone() chosen=chosen.clone()/> })}
            {h.may("CANCEL").then(|| view! { <CancelForm held=h.clone() chosen=chosen.clone()/> })}
            {(!is_reserved).then(|| view! {
                <a href=chosen.page_address() class="button secondary" data-testid="new-reservation">{i18n.t("reserve.new")}</a>
            })}
        </div>
    }
}

/// The hidden fields that name the held number and the choices in a form, so that the page can show it again.
#[component]
fn HeldFields(held: HeldNumber, chosen: ReserveChoices) -> impl IntoView {
    let h = held.result;
    view! {
        <input type="hidden" name="token" value=h.token/>
        <input type="hidden" name="number" value=h.document_number/>
        <input type="hidden" name="expiresAt" value=h.expires_at.to_rfc3339()/>
        {chosen.fields().into_iter().map(|(name, value)| view! { <input type="hidden" name=name value=value/> }).collect_view()}
    }
}

/// Confirms the held number with a document id (offered when the server's `availableActions` has CONFIRM).
#[component]
fn ConfirmForm(held: HeldNumber, chosen: ReserveChoices) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <form method="post" action=path::CONFIRM class="form-row" data-testid="confirm-form">
            <HeldFields held chosen/>
            <label class="field grow">
                <span>{i18n.t("reserve.document_id")}</span>
                <input type="text" data-testid="document-id" name="documentId" required/>
            </label>
            <button type="submit" class="primary" data-testid="confirm-button">{i18n.t("reserve.confirm")}</button>
        </form>
    }
}

/// Cancels the held number, with an optional reason (offered when the server's `availableActions` has CANCEL).
#[component]
fn CancelForm(held: HeldNumber, chosen: ReserveChoices) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <form method="post" action=path::CANCEL class="form-row" data-testid="cancel-form">
            <HeldFields held chosen/>
            <label class="field grow">
                <span>{i18n.t("reserve.cancel_reason")}</span>
                <input type="text" data-testid="cancel-reason" name="reason"/>
            </label>
            <button type="submit" class="danger" data-testid="cancel-button">{i18n.t("reserve.cancel")}</button>
        </form>
    }
}

/// The template in use and where it comes from.
#[component]
fn TemplateInfo(template: Result<ResolvedTemplate, String>) -> impl IntoView {
    let i18n = use_i18n();
    match template {
        Err(m) => view! { <ErrorBox message=m/> }.into_any(),
        Ok(rt) => {
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

fn mm_ss(seconds: i64) -> String {
    let s = seconds.max(0);
    format!("{:02}:{:02}", s / 60, s % 60)
}
