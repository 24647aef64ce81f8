//! `/logins` — the login attempts (super admins, docs/rules/api.md#callers-and-authentication): failed and successful logins, newest first, with the
//! client address and user agent; filter by username and outcome; paging. Times in Bangkok.

use leptos::prelude::*;

use super::api::{self, error_text};
use super::i18n::use_i18n;
use super::widgets::{bangkok_time, paged_search, search_pager, search_state, AdminContext, AdminPage, NothingFound, ResultsHead, TableWrap};
use crate::contract::*;

const PAGE_SIZE: u32 = 50;

#[component]
pub fn LoginsPage() -> impl IntoView {
    view! {
        <AdminPage title="logins.title" min_role=Role::SuperAdmin wide=true reference=false content=|_: AdminContext| view! { <Attempts/> }/>
    }
}

/// The i18n key of an outcome's label.
fn outcome_key(outcome: &str) -> &'static str {
    match outcome {
        "OK" => "logins.outcome.ok",
        "WRONG_PASSWORD" => "logins.outcome.wrong_password",
        "UNKNOWN_USER" => "logins.outcome.unknown_user",
        "THROTTLED" => "logins.outcome.throttled",
        "INACTIVE" => "logins.outcome.inactive",
        _ => "logins.outcome.other",
    }
}

#[component]
fn Attempts() -> impl IntoView {
    let i18n = use_i18n();
    let username = RwSignal::new(String::new());
    let typed = RwSignal::new(String::new());
    let outcome = RwSignal::new(String::new());
    let page = RwSignal::new(1u32);
    let reload = RwSignal::new(0u32);

    let query = Memo::new(move |_| LoginAttemptQuery {
        username: Some(username.get()).filter(|u| !u.is_empty()),
        outcome: Some(outcome.get()).filter(|o| !o.is_empty()),
        page: Some(page.get()),
        page_size: Some(PAGE_SIZE),
    });
    let search = paged_search(query.into(), move |q| {
        reload.track();
        async move { api::list_login_attempts(q).await.map_err(|e| error_text(&e)) }
    });
    let go = Callback::new(move |p: u32| page.set(p.max(1)));

    view! {
        <form class="filters form-row" on:submit=move |ev: leptos::ev::SubmitEvent| {
            ev.prevent_default();
            username.set(typed.get_untracked().trim().to_string());
            page.set(1);
            reload.update(|v| *v += 1);
        }>
            <label class="field">
                <span>{move || i18n.t("logins.username")}</span>
                <input type="text" maxlength="100" autocomplete="off" data-testid="logins-filter-username"
                    prop:value=move || typed.get() on:input=move |ev| typed.set(event_target_value(&ev))/>
            </label>
            <label class="field">
                <span>{move || i18n.t("logins.outcome")}</span>
                <select data-testid="logins-filter-outcome"
                    on:change=move |ev| {
                        outcome.set(event_target_value(&ev));
                        page.set(1);
                    }>
                    <option value="" prop:selected=move || outcome.with(|o| o.is_empty())>{move || i18n.t("common.all")}</option>
                    {LOGIN_OUTCOMES.iter().map(|o| {
                        let o: &'static str = o;
                        view! { <option value=o prop:selected=move || outcome.with(|x| x == o)>{move || i18n.t(outcome_key(o))}</option> }
                    }).collect_view()}
                </select>
            </label>
            <button type="submit" class="secondary" data-testid="logins-search">{move || i18n.t("logins.search")}</button>
        </form>

        {move || search.answer.with(|a| search_state(a.as_ref()))}
        {move || search.page.get().map(|p| {
            let total = p.total;
            view! {
                <ResultsHead prefix="logins" total/>
                {if p.rows.is_empty() {
                    view! { <NothingFound prefix="logins"/> }.into_any()
                } else {
                    view! { <AttemptTable rows=p.rows/> }.into_any()
                }}
            }
        })}
        {search_pager("logins", search, PAGE_SIZE, go)}
    }
}

#[component]
fn AttemptTable(rows: Vec<LoginAttempt>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <TableWrap>
            <table class="list" data-testid="logins-table">
                <thead><tr>
                    <th>{move || i18n.t("logins.col.time")}</th>
                    <th>{move || i18n.t("logins.username")}</th>
                    <th>{move || i18n.t("logins.outcome")}</th>
                    <th>{move || i18n.t("logins.col.address")}</th>
                    <th>{move || i18n.t("logins.col.agent")}</th>
                </tr></thead>
                <tbody>
                    {rows.into_iter().map(|r| {
                        let key = outcome_key(&r.outcome);
                        let ok = r.outcome == "OK";
                        view! {
                            <tr data-testid="login-row" data-username=r.username.clone() data-outcome=r.outcome.clone()>
                                <td class="nowrap">{bangkok_time(&r.at)}</td>
                                <td data-testid="login-row-username">
                                    <code>{r.username.clone()}</code>
                                    {r.user_id.is_none().then(|| view! { <div class="small muted">{move || i18n.t("logins.no_such_user")}</div> })}
                                </td>
                                <td data-testid="login-row-outcome">
                                    <span class:ok=ok class:warn=!ok>{move || i18n.t(key)}</span>
                                </td>
                                <td class="small" data-testid="login-row-address">{r.ip_address.clone()}</td>
                                <td class="small muted" data-testid="login-row-agent">{r.user_agent.clone()}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </TableWrap>
    }
}
