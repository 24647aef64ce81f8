//! `/resets` — counter reset requests (docs/rules/numbering.md#the-lifecycle-of-a-number,
//! docs/rules/api.md#the-workflow-envelope) for super admins. Each request arrives in the workflow
//! envelope; the buttons are drawn from its `availableActions`, which the server computes for the caller
//! (so the requester gets no APPROVE button: four eyes). The server checks the action again when taken.

use std::collections::HashMap;

use leptos::prelude::*;

use super::api::{self, error_text};
use super::i18n::use_i18n;
use super::live;
use super::widgets::{bangkok_time, client_fetch, parts_label, period_label, AdminContext, AdminPage, ErrorBox, ErrorSlot, TableHead, TableWrap};
use crate::contract::*;

const STATES: &[&str] = &["PENDING", "APPROVED", "REJECTED"];

#[component]
pub fn ResetsPage() -> impl IntoView {
    view! {
        <AdminPage title="rst.title" min_role=Role::SuperAdmin wide=true reference=false
            content=|_: AdminContext| view! { <ResetList/> }/>
    }
}

/// The i18n key of a workflow action or state; None for one this page has no word for.
fn wf_key(code: &str) -> Option<&'static str> {
    Some(match code {
        "APPROVE" => "wf.APPROVE",
        "REJECT" => "wf.REJECT",
        "REQUEST" => "wf.REQUEST",
        "PENDING" => "wf.PENDING",
        "APPROVED" => "wf.APPROVED",
        "REJECTED" => "wf.REJECTED",
        _ => return None,
    })
}

#[component]
fn ResetList() -> impl IntoView {
    let i18n = use_i18n();
    let state = RwSignal::new(String::new());
    let reload = RwSignal::new(0u32);
    let notice = RwSignal::new(None::<(ResetRequestId, String)>);
    let action_error = RwSignal::new(None::<String>);

    // a request made, approved or rejected elsewhere: fetch the queue again (once per burst), and after a reconnection
    let refetch = live::debounced(reload, std::time::Duration::from_millis(250));
    live::follow(
        move |e| {
            if matches!(e, crate::contract::live::LiveEvent::Reset { .. }) {
                refetch();
            }
        },
        move || reload.update(|v| *v += 1),
    );
    let list = client_fetch(move || {
        let st = state.get();
        reload.track();
        async move { api::list_reset_requests(Some(st).filter(|s| !s.is_empty()), None).await.map_err(|e| error_text(&e)) }
    });
    // what each counter is, for people (the request itself only knows the counter's id)
    let counters = client_fetch(move || {
        reload.track();
        let lang = i18n.lang.get();
        async move {
            api::list_counters(CounterQuery::default())
                .await
                .map(|list| {
                    list.into_iter()
                        .map(|c| {
                            (
                                c.id,
                                format!(
                                    "{} / {} / {} / {}",
                                    c.project_code,
                                    c.correspondence_type_code,
                                    parts_label(&c),
                                    period_label(&c.period, lang)
                                ),
                            )
                        })
                        .collect::<HashMap<CounterId, String>>()
                })
                .unwrap_or_default()
        }
    });

    let act = Action::new(move |(public_id, action, comment): &(String, String, String)| {
        let (public_id, action, comment) = (public_id.clone(), action.clone(), comment.clone());
        async move {
            action_error.set(None);
            notice.set(None);
            let comment = Some(comment.trim().to_string()).filter(|c| !c.is_empty());
            match api::act_on_reset_request(public_id, action, comment).await {
                Ok(env) => notice.set(Some((env.data.request_id, env.workflow.current_state))),
                Err(e) => action_error.set(Some(error_text(&e))),
            }
            reload.update(|v| *v += 1);
        }
    });

    view! {
        <div class="filters form-row">
            <label class="field">
                <span>{move || i18n.t("rst.state")}</span>
                <select data-testid="reset-filter-state" on:change=move |ev| state.set(event_target_value(&ev))>
                    <option value="" prop:selected=move || state.with(|s| s.is_empty())>{move || i18n.t("common.all")}</option>
                    {STATES.iter().map(|s| {
                        let s: &'static str = s;
                        view! { <option value=s prop:selected=move || state.with(|x| x == s)>{move || wf_key(s).map(|k| i18n.t(k)).unwrap_or(s)}" ("{s}")"</option> }
                    }).collect_view()}
                </select>
            </label>
        </div>
        {move || notice.get().map(|(id, st)| view! {
            <p class="ok" data-testid="reset-done" data-request-id=id.to_string() data-state=st.clone()>
                {format!("#{id}: {} {st}", i18n.t("rst.done"))}
            </p>
        })}
        <ErrorSlot error=action_error/>
        {move || match list.get() {
            None => view! { <p class="muted">{i18n.t("common.loading")}</p> }.into_any(),
            Some(Err(m)) => view! { <ErrorBox message=m/> }.into_any(),
            Some(Ok(rows)) if rows.is_empty() => view! { <p class="muted" data-testid="reset-empty">{i18n.t("rst.empty")}</p> }.into_any(),
            Some(Ok(rows)) => {
                let labels = counters.get().unwrap_or_default();
                view! {
                    <TableWrap>
                        <table class="list" data-testid="reset-table">
                            <TableHead columns=vec!["rst.col.id", "rst.col.counter", "rst.col.values", "rst.col.reason", "rst.col.by", "rst.state", "rst.col.history", "rst.col.actions"]/>
                            <tbody>
                                {rows.into_iter().map(|env| {
                                    let label = labels.get(&env.data.counter_id).cloned().unwrap_or_default();
                                    view! { <ResetRow env label act/> }
                                }).collect_view()}
                            </tbody>
                        </table>
                    </TableWrap>
                }.into_any()
            }
        }}
    }
}

/// One reset request: what it asks, its history, and the actions its workflow offers now (with a comment).
#[component]
fn ResetRow(
    env: Envelope<ResetRequestView>,
    /// What the counter is, for people.
    label: String,
    act: Action<(String, String, String), ()>,
) -> impl IntoView {
    let i18n = use_i18n();
    let r = env.data;
    let w = env.workflow;
    let comment = RwSignal::new(String::new());
    let state_word = wf_key(&w.current_state).map(|k| i18n.t(k)).unwrap_or_default();
    let public_id = w.instance_public_id.clone();
    let waiting = w.available_actions.is_empty() && w.current_state == "PENDING";
    view! {
        <tr data-testid="reset-row" data-request-id=r.request_id.to_string() data-counter-id=r.counter_id.to_string()
            data-state=w.current_state.clone() data-public-id=w.instance_public_id.clone()
            data-actions=w.available_actions.join(",")>
            <td>"#"{r.request_id.0}</td>
            <td class="small">"#"{r.counter_id.0}" "{label}</td>
            <td data-testid="reset-values" class="nowrap">{r.previous_value}" → "{r.new_value}</td>
            <td class="small" data-testid="reset-reason-text">{r.reason.clone()}</td>
            <td class="small">{r.requested_by.clone()}<div class="muted">{bangkok_time(&r.requested_at)}</div></td>
            <td data-testid="reset-state">{state_word}" "<code class="small">{w.current_state.clone()}</code></td>
            <td class="small">
                <ul class="plain">
                    {r.history.iter().map(|e| view! {
                        <li data-testid="reset-event" data-action=e.action.clone()>
                            <code>{e.action.clone()}</code>" "{e.actor.clone()}" "
                            <span class="muted">{bangkok_time(&e.at)}</span>
                            {e.comment.clone().map(|c| view! { <div class="muted">{c}</div> })}
                        </li>
                    }).collect_view()}
                </ul>
            </td>
            <td>
                {(!w.available_actions.is_empty()).then(|| view! {
                    <input type="text" data-testid="reset-comment" maxlength="500"
                        placeholder=move || i18n.t("rst.comment")
                        prop:value=move || comment.get()
                        on:input=move |ev| comment.set(event_target_value(&ev))/>
                })}
                {w.available_actions.iter().map(|a| {
                    let a = a.clone();
                    let text = wf_key(&a).map(|k| i18n.t(k).to_string()).unwrap_or_else(|| a.clone());
                    let class = if a == "APPROVE" { "primary small" } else { "danger small" };
                    let public_id = public_id.clone();
                    let a2 = a.clone();
                    view! {
                        " "
                        <button type="button" class=class data-testid=format!("reset-action-{a}")
                            disabled=move || act.pending().get()
                            on:click=move |_| { act.dispatch((public_id.clone(), a2.clone(), comment.get_untracked())); }>
                            {text}
                        </button>
                    }
                }).collect_view()}
                {waiting.then(|| view! { <p class="small muted" data-testid="reset-waiting">{move || i18n.t("rst.waiting")}</p> })}
            </td>
        </tr>
    }
}
