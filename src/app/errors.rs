//! `/errors` — the error log for admins (docs/rules/numbering.md#audit-and-retention): filter by type, unresolved only, paging, mark resolved.

use leptos::prelude::*;

use super::api::{self, error_text};
use super::i18n::use_i18n;
use super::widgets::{
    bangkok_time, paged_search, search_pager, search_state, AdminContext, AdminPage, ErrorSlot, NothingFound, ResultsHead, TableWrap,
};
use crate::contract::*;

/// The error types of docs/rules/numbering.md#audit-and-retention.
pub const ERROR_TYPES: &[&str] = &[
    "LOCK_TIMEOUT",
    "VERSION_CONFLICT",
    "DB_ERROR",
    "REDIS_ERROR",
    "VALIDATION_ERROR",
    "SEQUENCE_EXHAUSTED",
    "RESERVATION_EXPIRED",
    "DUPLICATE_NUMBER",
    "COUNTER_BEHIND_WITNESS",
];

const PAGE_SIZE: u32 = 50;

#[component]
pub fn ErrorsPage() -> impl IntoView {
    view! {
        <AdminPage title="errors.title" wide=true reference=false content=|_: AdminContext| view! { <ErrorLog/> }/>
    }
}

#[component]
fn ErrorLog() -> impl IntoView {
    let i18n = use_i18n();
    let error_type = RwSignal::new(String::new());
    let unresolved = RwSignal::new(true);
    let page = RwSignal::new(1u32);
    let reload = RwSignal::new(0u32);
    let action_error = RwSignal::new(None::<String>);

    let query = Memo::new(move |_| ErrorQuery {
        error_type: Some(error_type.get()).filter(|t| !t.is_empty()),
        unresolved_only: unresolved.get(),
        page: Some(page.get()),
        page_size: Some(PAGE_SIZE),
    });
    let search = paged_search(query.into(), move |q| {
        reload.track();
        async move { api::list_errors(q).await.map_err(|e| error_text(&e)) }
    });

    let resolve = Action::new(move |id: &ErrorLogId| {
        let id = *id;
        async move {
            if let Err(e) = api::resolve_error(id).await {
                action_error.set(Some(error_text(&e)));
            }
            reload.update(|v| *v += 1);
        }
    });
    let go = Callback::new(move |p: u32| page.set(p.max(1)));

    view! {
        <div class="filters form-row">
            <label class="field">
                <span>{move || i18n.t("errors.type")}</span>
                <select data-testid="error-filter-type"
                    on:change=move |ev| {
                        error_type.set(event_target_value(&ev));
                        page.set(1);
                    }>
                    <option value="" prop:selected=move || error_type.with(|t| t.is_empty())>{move || i18n.t("common.all")}</option>
                    {ERROR_TYPES.iter().map(|t| {
                        let t: &'static str = t;
                        view! { <option value=t prop:selected=move || error_type.with(|x| x == t)>{t}</option> }
                    }).collect_view()}
                </select>
            </label>
            <label class="check">
                <input type="checkbox" data-testid="error-unresolved"
                    prop:checked=move || unresolved.get()
                    on:change=move |ev| {
                        unresolved.set(event_target_checked(&ev));
                        page.set(1);
                    }/>
                {move || i18n.t("errors.unresolved")}
            </label>
            <button type="button" class="secondary" data-testid="error-reload"
                on:click=move |_| { action_error.set(None); reload.update(|v| *v += 1); }>
                {move || i18n.t("errors.reload")}
            </button>
        </div>
        <ErrorSlot error=action_error/>

        {move || search.answer.with(|a| search_state(a.as_ref()))}
        {move || search.page.get().map(|p| {
            let total = p.total;
            view! {
                <ResultsHead prefix="error" total/>
                {if p.rows.is_empty() {
                    view! { <NothingFound prefix="error"/> }.into_any()
                } else {
                    view! { <ErrorTable rows=p.rows resolve action_error/> }.into_any()
                }}
            }
        })}
        {search_pager("error", search, PAGE_SIZE, go)}
    }
}

/// The logged errors of one page, each with a "resolved" button while it is open.
#[component]
fn ErrorTable(rows: Vec<ErrorRow>, resolve: Action<ErrorLogId, ()>, action_error: RwSignal<Option<String>>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <TableWrap>
            <table class="list" data-testid="error-table">
                <thead><tr>
                    <th>{move || i18n.t("errors.col.time")}</th>
                    <th>{move || i18n.t("errors.col.type")}</th>
                    <th>{move || i18n.t("errors.col.message")}</th>
                    <th>{move || i18n.t("errors.col.ref")}</th>
                    <th>"IP"</th>
                    <th>{move || i18n.t("errors.col.state")}</th>
                    <th><span class="visually-hidden">{move || i18n.t("common.actions")}</span></th>
                </tr></thead>
                <tbody>
                    {rows.into_iter().map(|r| {
                        let id = r.id;
                        let resolved_at = r.resolved_at.as_ref().map(bangkok_time);
                        let is_resolved = resolved_at.is_some();
                        view! {
                            <tr data-testid="error-row" data-error-id=id.to_string() data-type=r.error_type.clone()
                                data-resolved=is_resolved.to_string() class:resolved=is_resolved>
                                <td class="nowrap">{bangkok_time(&r.created_at)}</td>
                                <td>
                                    <code data-testid="error-row-type">{r.error_type.clone()}</code>
                                    {r.code.clone().filter(|c| *c != r.error_type).map(|c| view! { <div class="small muted">{c}</div> })}
                                </td>
                                <td class="small" data-testid="error-row-message">{r.message.clone()}</td>
                                <td class="small">{r.ref_id.clone().map(|x| view! { <code data-testid="error-row-ref">{x}</code> })}</td>
                                <td class="small muted">{r.ip_address.clone()}</td>
                                <td data-testid="error-state">
                                    {match resolved_at {
                                        Some(t) => view! { <span class="ok">{move || i18n.t("errors.resolved")}</span><div class="small muted">{t}</div> }.into_any(),
                                        None => view! { <span class="warn">{move || i18n.t("errors.open")}</span> }.into_any(),
                                    }}
                                </td>
                                <td>
                                    {(!is_resolved).then(|| view! {
                                        <button type="button" class="secondary small" data-testid="error-resolve"
                                            disabled=move || resolve.pending().get()
                                            on:click=move |_| { action_error.set(None); resolve.dispatch(id); }>
                                            {move || i18n.t("errors.resolve")}
                                        </button>
                                    })}
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </TableWrap>
    }
}
