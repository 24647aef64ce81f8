//! `/verify` — anyone checks a number's receipt: pasted, chosen as a file, or carried by a link (`?r=`, or the
//! number's coordinates from a QR code). The check is `receipt::verify_witnessed` against the keys the server
//! pinned in the page; it runs in the browser as one types, and in the server's render of a link or of the plain
//! form (`?receipt=`), so the answer shows without scripts too.

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use super::api::{self, error_text, NumberCoordinates, VerifyPageData};
use super::i18n::use_i18n;
use super::widgets::{ErrorBox, NumberText};
use crate::receipt::{self, link, Checked, Cosigned, Refusal};

#[component]
pub fn VerifyPage() -> impl IntoView {
    let i18n = use_i18n();
    let q = use_query_map().get_untracked();
    let bad_link = q.get("r").is_some_and(|r| link::from_param(&r).is_none());
    let carried = q.get("r").and_then(|r| link::from_param(&r)).or_else(|| q.get("receipt"));
    let key = q.get("key");
    let number = match (q.get("projectCode"), q.get("correspondenceTypeCode"), q.get("documentNumber")) {
        (Some(project_code), Some(correspondence_type_code), Some(document_number)) if carried.is_none() => {
            Some(NumberCoordinates { project_code, correspondence_type_code, document_number })
        }
        _ => None,
    };
    let page = Resource::new(|| (), move |_| api::verify_page(number.clone()));
    view! {
        <section class="card verify">
            <h1>{move || i18n.t("verify.title")}</h1>
            <p class="muted">{move || i18n.t("verify.intro")}</p>
            {bad_link.then(|| view! { <ErrorBox message=i18n.t("verify.bad_link")/> })}
            <Suspense fallback=move || view! { <p class="muted">{move || i18n.t("common.loading")}</p> }>
                {move || {
                    let (carried, key) = (carried.clone(), key.clone());
                    Suspend::new(async move {
                        match page.await {
                            Ok(data) => view! { <VerifyForm data carried key/> }.into_any(),
                            Err(e) => view! { <ErrorBox message=error_text(&e)/> }.into_any(),
                        }
                    })
                }}
            </Suspense>
        </section>
    }
}

#[component]
fn VerifyForm(data: VerifyPageData, carried: Option<String>, key: Option<String>) -> impl IntoView {
    let i18n = use_i18n();
    let text = RwSignal::new(carried.or(data.receipt).unwrap_or_default());
    let pinned = data.log_vkey.clone();
    let log_key = RwSignal::new(key.filter(|k| !k.trim().is_empty()).unwrap_or_else(|| pinned.clone()));
    let witnesses = data.witness_vkeys;
    let result = Memo::new(move |_| {
        text.with(|t| {
            (!t.trim().is_empty()).then(|| {
                let ws: Vec<&str> = witnesses.iter().map(String::as_str).collect();
                log_key.with(|k| receipt::verify_witnessed(t, k, &ws))
            })
        })
    });
    let error = RwSignal::new(None::<String>);

    let on_file = move |ev: leptos::ev::Event| {
        #[cfg(feature = "hydrate")]
        if let Some(f) = super::import::file::chosen(&ev) {
            super::import::file::read_into(f, text, error);
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = ev;
    };

    view! {
        // without scripts the form goes back to this page, which the server renders with the answer
        <form method="get" action="/verify" class="verify-form" on:submit=move |ev: leptos::ev::SubmitEvent| ev.prevent_default()>
            <label class="field">
                <span>{move || i18n.t("verify.receipt")}</span>
                <textarea name="receipt" rows="12" spellcheck="false" class="mono" data-testid="verify-receipt"
                    prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev))>
                    {text.get_untracked()}
                </textarea>
            </label>
            <label class="field">
                <span>{move || i18n.t("verify.file")}</span>
                <input type="file" accept=".tlog-proof,.txt,text/plain" data-testid="verify-file" on:change=on_file/>
            </label>
            <details>
                <summary>{move || i18n.t("verify.key")}</summary>
                <label class="field">
                    <span class="muted small">{move || i18n.t("verify.key.hint")}</span>
                    <input type="text" name="key" spellcheck="false" class="mono" data-testid="verify-key"
                        prop:value=move || log_key.get() on:input=move |ev| log_key.set(event_target_value(&ev))/>
                </label>
            </details>
            <noscript><button type="submit" class="primary">{i18n.t("verify.submit")}</button></noscript>
        </form>
        {move || error.get().map(|m| view! { <ErrorBox message=m/> })}
        {move || result.get().map(|r| match r {
            Ok(c) => view! { <Valid c/> }.into_any(),
            Err(e) => view! { <Invalid e/> }.into_any(),
        })}
    }
}

#[component]
fn Valid(c: Checked) -> impl IntoView {
    let i18n = use_i18n();
    let e = c.entry;
    let row = move |label: &'static str, value: String, testid: &'static str| {
        view! { <tr><th scope="row">{move || i18n.t(label)}</th><td data-testid=testid>{value}</td></tr> }
    };
    let witnesses = c.checkpoint.witnesses;
    view! {
        <div class="verify-result ok" role="status" data-testid="verify-result" data-valid="true">
            <p class="verdict"><strong>"ถูกต้อง / valid"</strong></p>
            <div class="number big" data-testid="verify-number"><NumberText text=e.number.clone()/></div>
            <table class="facts">
                <tbody>
                    {row("verify.project", e.project, "verify-project")}
                    {row("verify.type", e.type_code, "verify-type")}
                    {row("verify.event", e.event, "verify-event")}
                    {row("verify.at", e.at, "verify-at")}
                    {row("verify.log", format!("{} · #{} / {}", c.checkpoint.origin, c.index, c.checkpoint.size), "verify-log")}
                </tbody>
            </table>
            <h2>{move || i18n.t("verify.witnesses")}</h2>
            {if witnesses.is_empty() {
                view! { <p class="muted" data-testid="verify-no-witnesses">{move || i18n.t("verify.witnesses.none")}</p> }.into_any()
            } else {
                view! {
                    <ul data-testid="verify-witnesses">
                        {witnesses.into_iter().map(|w| {
                            let time = w.time_rfc3339().unwrap_or_default();
                            let (key, state) = match w.cosigned {
                                Cosigned::At(_) => ("verify.witness.at", "cosigned"),
                                Cosigned::Absent => ("verify.witness.absent", "absent"),
                                Cosigned::Invalid => ("verify.witness.invalid", "invalid"),
                            };
                            view! { <li data-state=state><strong>{w.name}</strong>" — "{move || i18n.t(key)}" "{time.clone()}</li> }
                        }).collect_view()}
                    </ul>
                }.into_any()
            }}
        </div>
    }
}

#[component]
fn Invalid(e: Refusal) -> impl IntoView {
    view! {
        <div class="verify-result error" role="alert" data-testid="verify-result" data-valid="false">
            <p class="verdict"><strong>"ไม่ถูกต้อง / not valid"</strong></p>
            <p data-testid="verify-reason">{e.reason_th()}</p>
            <p class="muted" lang="en">{e.reason()}</p>
        </div>
    }
}
