//! `/notifications` — the webhooks that receive the service's events (super admins): list, create (the secret shown
//! once), enable/disable, delete; and the deliveries that failed for good, with their last errors and a replay.

use leptos::prelude::*;

use super::api::{self, error_text};
use super::i18n::use_i18n;
use super::widgets::{bangkok_time, client_fetch, AdminContext, AdminPage, ErrorBox, ErrorSlot, SecretOnce, TableHead, TableWrap};
use crate::contract::notifications::{
    DeliveryId, DeliveryView, EventKind, NewWebhook, WebhookCreated, WebhookId, WebhookView, MAX_WEBHOOK_URL_CHARS,
};
use crate::contract::Role;

#[component]
pub fn NotificationsPage() -> impl IntoView {
    view! {
        <AdminPage title="notify.title" min_role=Role::SuperAdmin reference=false wide=true
            content=|_: AdminContext| view! { <Notifications/> }/>
    }
}

/// The i18n key of an event kind.
fn kind_key(k: EventKind) -> &'static str {
    match k {
        EventKind::ResetRequested => "notify.kind.reset_requested",
        EventKind::ResetApproved => "notify.kind.reset_approved",
        EventKind::ResetRejected => "notify.kind.reset_rejected",
        EventKind::ResetExecuted => "notify.kind.reset_executed",
        EventKind::NumberConfirmed => "notify.kind.number_confirmed",
        EventKind::NumberVoided => "notify.kind.number_voided",
        EventKind::Counter90Percent => "notify.kind.counter_90",
        EventKind::Counter95Percent => "notify.kind.counter_95",
        EventKind::CounterBehindWitness => "notify.kind.behind_witness",
        EventKind::NumberBlockReserved => "notify.kind.block_reserved",
    }
}

#[component]
fn Notifications() -> impl IntoView {
    let i18n = use_i18n();
    let version = RwSignal::new(0u32);
    let hooks = client_fetch(move || {
        version.track();
        async move { api::list_webhooks().await.map_err(|e| error_text(&e)) }
    });
    let failures = client_fetch(move || {
        version.track();
        async move { api::failed_deliveries().await.map_err(|e| error_text(&e)) }
    });
    let error = RwSignal::new(None::<String>);
    let created = RwSignal::new(None::<WebhookCreated>);

    view! {
        <WebhookForm error created version/>
        <ErrorSlot error/>
        {move || created.get().map(|c| view! { <SecretOnce secret=c.secret words="notify.secret" testid="webhook"/> })}

        <h2>{move || i18n.t("notify.webhooks")}</h2>
        {move || match hooks.get() {
            None => view! { <p class="muted">{i18n.t("common.loading")}</p> }.into_any(),
            Some(Err(m)) => view! { <ErrorBox message=m/> }.into_any(),
            Some(Ok(list)) if list.is_empty() => view! { <p class="muted" data-testid="webhook-empty">{move || i18n.t("notify.empty")}</p> }.into_any(),
            Some(Ok(list)) => view! { <WebhookTable hooks=list error version/> }.into_any(),
        }}

        <h2>{move || i18n.t("notify.failures")}</h2>
        {move || match failures.get() {
            None => view! { <p class="muted">{i18n.t("common.loading")}</p> }.into_any(),
            Some(Err(m)) => view! { <ErrorBox message=m/> }.into_any(),
            Some(Ok(list)) if list.is_empty() => view! { <p class="muted" data-testid="failure-empty">{move || i18n.t("notify.no_failures")}</p> }.into_any(),
            Some(Ok(list)) => view! { <FailureTable failures=list error version/> }.into_any(),
        }}
    }
}

/// A new webhook: its URL and the kinds it wants (none = every kind); the secret is generated.
#[component]
fn WebhookForm(error: RwSignal<Option<String>>, created: RwSignal<Option<WebhookCreated>>, version: RwSignal<u32>) -> impl IntoView {
    let i18n = use_i18n();
    let url = RwSignal::new(String::new());
    let chosen = RwSignal::new(Vec::<EventKind>::new());
    let create = Action::new(move |new: &NewWebhook| {
        let new = new.clone();
        async move {
            match api::create_webhook(new).await {
                Ok(c) => {
                    created.set(Some(c));
                    url.set(String::new());
                    chosen.set(Vec::new());
                }
                Err(e) => error.set(Some(error_text(&e))),
            }
            version.update(|v| *v += 1);
        }
    });
    view! {
        <form class="token-form" on:submit=move |ev: leptos::ev::SubmitEvent| {
            ev.prevent_default();
            error.set(None);
            created.set(None);
            create.dispatch(NewWebhook { url: url.get_untracked().trim().to_string(), secret: None, kinds: chosen.get_untracked() });
        }>
            <label class="field">
                <span>{move || i18n.t("notify.url")}</span>
                <input type="url" required maxlength=MAX_WEBHOOK_URL_CHARS.to_string() data-testid="webhook-url"
                    placeholder="https://dms.example.com/hooks/docnum"
                    prop:value=move || url.get()
                    on:input=move |ev| url.set(event_target_value(&ev))/>
            </label>
            <fieldset class="checks">
                <legend>{move || i18n.t("notify.kinds")}</legend>
                {EventKind::ALL.into_iter().map(|k| view! {
                    <label class="check">
                        <input type="checkbox" data-testid="webhook-kind" data-kind=k.as_str()
                            prop:checked=move || chosen.with(|c| c.contains(&k))
                            on:change=move |ev| {
                                let on = event_target_checked(&ev);
                                chosen.update(|c| {
                                    c.retain(|x| *x != k);
                                    if on { c.push(k) }
                                });
                            }/>
                        {move || i18n.t(kind_key(k))}
                    </label>
                }).collect_view()}
            </fieldset>
            <button type="submit" class="primary" data-testid="webhook-create"
                disabled=move || create.pending().get() || url.with(|u| u.trim().is_empty())>
                {move || i18n.t("notify.create")}
            </button>
        </form>
    }
}

#[component]
fn WebhookTable(hooks: Vec<WebhookView>, error: RwSignal<Option<String>>, version: RwSignal<u32>) -> impl IntoView {
    let i18n = use_i18n();
    let toggle = Action::new(move |(id, active): &(WebhookId, bool)| {
        let (id, active) = (*id, *active);
        async move {
            if let Err(e) = api::set_webhook_active(id, active).await {
                error.set(Some(error_text(&e)));
            }
            version.update(|v| *v += 1);
        }
    });
    let remove = Action::new(move |id: &WebhookId| {
        let id = *id;
        async move {
            if let Err(e) = api::delete_webhook(id).await {
                error.set(Some(error_text(&e)));
            }
            version.update(|v| *v += 1);
        }
    });
    let replay = Action::new(move |id: &WebhookId| {
        let id = *id;
        async move {
            if let Err(e) = api::replay_webhook(id).await {
                error.set(Some(error_text(&e)));
            }
            version.update(|v| *v += 1);
        }
    });
    view! {
        <TableWrap><table class="list" data-testid="webhook-table">
            <TableHead columns=vec!["notify.url", "notify.kinds", "notify.state", "notify.counts", "notify.created", ""]/>
            <tbody>
                {hooks.into_iter().map(|h| {
                    let (id, active, failed) = (h.id, h.active, h.failed);
                    let kinds = h.kinds.clone();
                    view! {
                        <tr data-testid="webhook-row" data-webhook-id=id.to_string()>
                            <td class="wrap"><code>{h.url.clone()}</code></td>
                            <td>{move || if kinds.is_empty() {
                                i18n.t("notify.all_kinds").to_string()
                            } else {
                                kinds.iter().map(|k| i18n.t(kind_key(*k)).to_string()).collect::<Vec<_>>().join(", ")
                            }}</td>
                            <td data-testid="webhook-state">{move || if active { i18n.t("notify.active") } else { i18n.t("notify.disabled") }}</td>
                            <td data-testid="webhook-counts">{move || format!("{} {} · {} {}", h.pending, i18n.t("notify.pending"), failed, i18n.t("notify.failed"))}</td>
                            <td>{bangkok_time(&h.created_at)}" · "{h.created_by.clone()}</td>
                            <td class="actions">
                                <button type="button" class="small" data-testid="webhook-toggle"
                                    disabled=move || toggle.pending().get()
                                    on:click=move |_| { error.set(None); toggle.dispatch((id, !active)); }>
                                    {move || if active { i18n.t("notify.disable") } else { i18n.t("notify.enable") }}
                                </button>
                                {(failed > 0).then(|| view! {
                                    <button type="button" class="small" data-testid="webhook-replay"
                                        disabled=move || replay.pending().get()
                                        on:click=move |_| { error.set(None); replay.dispatch(id); }>
                                        {move || i18n.t("notify.replay_all")}
                                    </button>
                                })}
                                <button type="button" class="danger small" data-testid="webhook-delete"
                                    disabled=move || remove.pending().get()
                                    on:click=move |_| { error.set(None); remove.dispatch(id); }>
                                    {move || i18n.t("notify.delete")}
                                </button>
                            </td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table></TableWrap>
    }
}

#[component]
fn FailureTable(failures: Vec<DeliveryView>, error: RwSignal<Option<String>>, version: RwSignal<u32>) -> impl IntoView {
    let i18n = use_i18n();
    let replay = Action::new(move |id: &DeliveryId| {
        let id = *id;
        async move {
            if let Err(e) = api::replay_delivery(id).await {
                error.set(Some(error_text(&e)));
            }
            version.update(|v| *v += 1);
        }
    });
    view! {
        <TableWrap><table class="list" data-testid="failure-table">
            <TableHead columns=vec!["notify.event", "notify.url", "notify.attempts", "notify.last_error", "notify.occurred", ""]/>
            <tbody>
                {failures.into_iter().map(|d| {
                    let id = d.id;
                    let kind = d.kind;
                    let last = match (d.last_status, d.last_error.clone()) {
                        (Some(s), Some(e)) if !e.contains(&s.to_string()) => format!("{s} {e}"),
                        (_, Some(e)) => e,
                        (Some(s), None) => s.to_string(),
                        (None, None) => String::new(),
                    };
                    view! {
                        <tr data-testid="failure-row" data-delivery-id=id.to_string()>
                            <td>{move || i18n.t(kind_key(kind))}<br/><code class="muted">{d.event_id.clone()}</code></td>
                            <td class="wrap"><code>{d.webhook_url.clone()}</code></td>
                            <td>{d.attempts}</td>
                            <td class="wrap" data-testid="failure-error">{last}</td>
                            <td>{bangkok_time(&d.occurred_at)}</td>
                            <td>
                                <button type="button" class="small" data-testid="failure-replay"
                                    disabled=move || replay.pending().get()
                                    on:click=move |_| { error.set(None); replay.dispatch(id); }>
                                    {move || i18n.t("notify.replay")}
                                </button>
                            </td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table></TableWrap>
    }
}
