//! `/counters` — the counter browser (docs/rules/numbering.md#counter-keys, docs/rules/api.md#web-app) for project
//! admins (their projects) and super admins (all):
//! filter by project, type and year; last number and utilization; per counter every number issued with its
//! status and, for each missing sequence, the audit row that explains it. Super admins also find here the
//! operations on a counter and its numbers: request a reset, revise, void-and-replace, manual override.
//! The server decides everything; this page only asks and shows.

use leptos::prelude::*;

use super::api::{self, error_text};
use super::i18n::{use_i18n, word};
use super::live;
use super::widgets::{bangkok_time, choice, client_fetch, AdminContext, AdminPage, Choice, ErrorBox, ErrorSlot, IdSelect, TableHead, TableWrap};
use super::widgets::{parts_label, period_label, status_key};
use crate::contract::forms::percent_encode;
use crate::contract::*;
use crate::receipt::link::receipt_path;

/// Changes arriving within this time are fetched once.
const LIVE_DEBOUNCE: std::time::Duration = std::time::Duration::from_millis(250);

/// Sequences shown per page of a counter's numbers.
const NUMBERS_PAGE: i64 = 200;

#[component]
pub fn CountersPage() -> impl IntoView {
    view! {
        <AdminPage title="ctr.title" wide=true content=|ctx: AdminContext| view! { <CounterBrowser ctx/> }/>
    }
}

fn choices<Id: Into<i64>>(items: impl Iterator<Item = (Id, String, String)>) -> Vec<Choice> {
    items.map(|(id, code, name)| choice(id, &code, &name)).collect()
}

#[component]
fn CounterBrowser(ctx: AdminContext) -> impl IntoView {
    let i18n = use_i18n();
    let AdminContext { user, data } = ctx;
    let is_super = user.role == Role::SuperAdmin;

    let project = RwSignal::new(None::<ProjectId>);
    let ctype = RwSignal::new(None::<CorrespondenceTypeId>);
    let year = RwSignal::new(String::new());
    let reload = RwSignal::new(0u32);
    let selected = RwSignal::new(None::<CounterId>);

    let project_choices = Signal::derive({
        let list = choices(data.projects.iter().filter(|p| user.can_edit_templates(p.id)).map(|p| (p.id, p.code.clone(), p.name.clone())));
        move || list.clone()
    });
    let type_choices = Signal::derive({
        let list = choices(data.correspondence_types.iter().map(|t| (t.id, t.code.clone(), t.name.clone())));
        move || list.clone()
    });

    let query = Memo::new(move |_| CounterQuery {
        project_id: project.get(),
        correspondence_type_id: ctype.get(),
        year: year.with(|y| y.trim().parse().ok()),
    });
    let list = client_fetch(move || {
        let q = query.get();
        reload.track();
        async move { api::list_counters(q).await.map_err(|e| error_text(&e)) }
    });
    let changed = Callback::new(move |_: ()| reload.update(|v| *v += 1));
    // another tab or instance moved a counter: fetch the list again (once per burst), and after a reconnection
    let refetch = live::debounced(reload, LIVE_DEBOUNCE);
    live::follow(
        move |e| {
            if matches!(e, crate::contract::live::LiveEvent::Counter { .. }) {
                refetch();
            }
        },
        move || reload.update(|v| *v += 1),
    );

    view! {
        <div class="filters form-grid">
            <IdSelect label="ctr.project" testid="counter-filter-project" choices=project_choices value=project placeholder="common.all"/>
            <IdSelect label="ctr.type" testid="counter-filter-type" choices=type_choices value=ctype placeholder="common.all"/>
            <label class="field">
                <span>{move || i18n.t("ctr.year")}</span>
                <input type="number" data-testid="counter-filter-year" min="1900" max="3000"
                    prop:value=move || year.get()
                    on:input=move |ev| year.set(event_target_value(&ev))/>
            </label>
        </div>
        {move || match list.get() {
            None => view! { <p class="muted">{i18n.t("common.loading")}</p> }.into_any(),
            Some(Err(m)) => view! { <ErrorBox message=m/> }.into_any(),
            Some(Ok(rows)) if rows.is_empty() => view! { <p class="muted" data-testid="counter-empty">{i18n.t("common.nothing")}</p> }.into_any(),
            Some(Ok(rows)) => view! { <CounterTable rows selected/> }.into_any(),
        }}
        {move || selected.get().map(|id| view! { <CounterDetail counter_id=id is_super changed/> })}
    }
}

#[component]
fn CounterTable(rows: Vec<CounterView>, selected: RwSignal<Option<CounterId>>) -> impl IntoView {
    let i18n = use_i18n();
    let count = rows.len();
    view! {
        <p class="small muted" data-testid="counter-total" data-total=count.to_string()>
            {move || format!("{} {} {}", i18n.t("common.found"), count, i18n.t("common.items"))}
        </p>
        <TableWrap>
            // on a phone each row is a card: its cells one under another, each with its column's name (style/main.css)
            <table class="list cards" data-testid="counter-table">
                <TableHead columns=vec!["ctr.col.id", "ctr.project", "ctr.type", "ctr.col.parts", "ctr.col.period", "ctr.col.last", "ctr.col.max", "ctr.col.use", ""]/>
                <tbody>
                    {rows.iter().map(|c| {
                        let id = c.id;
                        let pct = c.utilization * 100.0;
                        view! {
                            <tr data-testid="counter-row" data-counter-id=id.to_string() data-project=c.project_code.clone()
                                data-type=c.correspondence_type_code.clone() data-period=c.period.clone()
                                data-last=c.last_number.to_string() data-parts=parts_label(c)
                                class:selected=move || selected.get() == Some(id)>
                                <td data-label=move || i18n.t("ctr.col.id")>{id.0}</td>
                                <td data-label=move || i18n.t("ctr.project")>{c.project_code.clone()}</td>
                                <td data-label=move || i18n.t("ctr.type")>{c.correspondence_type_code.clone()}</td>
                                <td class="small" data-label=move || i18n.t("ctr.col.parts")>{parts_label(c)}</td>
                                <td class="nowrap" data-testid="counter-period" data-label=move || i18n.t("ctr.col.period")>{
                                    let period = c.period.clone();
                                    move || period_label(&period, i18n.lang.get())
                                }</td>
                                <td data-testid="counter-last" data-label=move || i18n.t("ctr.col.last")><strong>{c.last_number}</strong></td>
                                <td class="small muted" data-label=move || i18n.t("ctr.col.max")>{c.max_number}</td>
                                <td class="nowrap" data-testid="counter-utilization" data-label=move || i18n.t("ctr.col.use") data-utilization=format!("{:.6}", c.utilization)>
                                    <meter min="0" max="1" low="0.7" high="0.9" value=c.utilization.to_string()></meter>
                                    " "{format!("{pct:.2}%")}
                                </td>
                                <td class="card-actions">
                                    <button type="button" class="secondary small" data-testid="counter-open"
                                        on:click=move |_| selected.set(Some(id))>
                                        {move || i18n.t("ctr.open")}
                                    </button>
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </TableWrap>
    }
}

/// What the last operation on this counter produced (shown once, above the numbers).
#[derive(Clone, Debug, PartialEq)]
struct Done {
    kind: &'static str,
    number: Option<String>,
    text: String,
}

/// How each administrator's operation on a counter or a number runs: the last error cleared, the call, then either
/// what was done shown (`done`, which also clears the operation's fields) and the counter read again, or the error.
#[derive(Clone, Copy)]
struct OpFlow {
    done: RwSignal<Option<Done>>,
    op_error: RwSignal<Option<String>>,
    refresh: Callback<()>,
}

impl OpFlow {
    async fn run<T>(self, call: impl std::future::Future<Output = Result<T, ApiError>>, done: impl FnOnce(T) -> Done) {
        self.op_error.set(None);
        match call.await {
            Ok(answer) => {
                self.done.set(Some(done(answer)));
                self.refresh.run(());
            }
            Err(e) => self.op_error.set(Some(error_text(&e))),
        }
    }
}

#[component]
fn CounterDetail(counter_id: CounterId, is_super: bool, changed: Callback<()>) -> impl IntoView {
    let i18n = use_i18n();
    let version = RwSignal::new(0u32);
    let after = RwSignal::new(None::<i64>);
    let result = client_fetch(move || {
        version.track();
        let a = after.get();
        async move { api::fetch_counter_numbers(counter_id, a, Some(NUMBERS_PAGE)).await.map_err(|e| error_text(&e)) }
    });
    let done = RwSignal::new(None::<Done>);
    let op_error = RwSignal::new(None::<String>);
    // after an operation: this counter's numbers and the list above, again
    let refresh = Callback::new(move |_: ()| {
        version.update(|v| *v += 1);
        changed.run(());
    });
    let counter = Memo::new(move |_| match result.get() {
        Some(Ok(n)) => Some(n.counter),
        _ => None,
    });

    view! {
        <section class="counter-detail" data-testid="counter-detail" data-counter-id=counter_id.to_string()
            data-last=move || counter.get().map(|c| c.last_number.to_string()).unwrap_or_default()>
            <h2>
                {move || i18n.t("ctr.numbers")}" — #"{counter_id.0}" "
                {move || counter.get().map(|c| format!("{} / {} / {} / {}", c.project_code, c.correspondence_type_code, parts_label(&c), period_label(&c.period, i18n.lang.get())))}
            </h2>
            {move || counter.get().map(|c| {
                // the register of the counter's (project, type, period): a plain download, the session cookie goes along
                let href = |format: &str| format!(
                    "/api/v1/document-numbering/register?projectCode={}&correspondenceTypeCode={}&period={}&format={format}",
                    percent_encode(&c.project_code), percent_encode(&c.correspondence_type_code), percent_encode(&c.period));
                view! {
                    <p class="small" data-testid="register-download">
                        {move || i18n.t("ctr.register")}": "
                        <a href=href("xlsx") download data-testid="register-xlsx">"XLSX"</a>" · "
                        <a href=href("csv") download data-testid="register-csv">"CSV"</a>
                    </p>
                }
            })}
            {move || done.get().map(|d| view! {
                <div class="reserved-box" data-testid="op-result" data-kind=d.kind data-number=d.number.clone().unwrap_or_default()>
                    {d.text.clone()}
                    {(d.kind == "reset").then(|| view! { " " <a href="/resets" data-testid="op-result-resets">{move || i18n.t("ops.reset.go")}</a> })}
                </div>
            })}
            <ErrorSlot error=op_error/>
            {move || match result.get() {
                None => view! { <p class="muted">{i18n.t("common.loading")}</p> }.into_any(),
                Some(Err(m)) => view! { <ErrorBox message=m/> }.into_any(),
                Some(Ok(n)) => view! { <NumbersView n done op_error refresh after/> }.into_any(),
            }}
            {move || (is_super && counter.get().is_some()).then(|| view! { <CounterOps counter_id done op_error refresh/> })}
        </section>
    }
}

/// The revise and void-and-replace operations on a counter's numbers (super admins), and the open void form.
#[derive(Clone, Copy)]
struct NumberOps {
    /// The number whose void form is open.
    voiding: RwSignal<Option<String>>,
    void_reason: RwSignal<String>,
    void_document: RwSignal<String>,
    revise: Action<String, ()>,
    void: Action<(String, String, String), ()>,
    /// Void without a replacement: the number and the reason.
    void_only: Action<(String, String), ()>,
    busy: Signal<bool>,
}

impl NumberOps {
    fn new(counter: CounterView, done: RwSignal<Option<Done>>, op_error: RwSignal<Option<String>>, refresh: Callback<()>) -> Self {
        let i18n = use_i18n();
        let flow = OpFlow { done, op_error, refresh };
        let c = StoredValue::new(counter);
        let voiding = RwSignal::new(None::<String>);
        let void_reason = RwSignal::new(String::new());
        let void_document = RwSignal::new(String::new());

        let target = move |number: String, document_id: String| {
            let c = c.get_value();
            NumberTarget {
                project_id: c.project_id,
                correspondence_type_id: c.correspondence_type_id,
                document_number: number,
                document_id: Some(document_id.trim().to_string()).filter(|d| !d.is_empty()),
            }
        };
        let revise = Action::new(move |number: &String| {
            let t = target(number.clone(), String::new());
            flow.run(api::revise_number(t), move |r| Done {
                kind: "revise",
                number: Some(r.document_number.clone()),
                text: format!("{}: {}", word(i18n.lang.get_untracked(), "ops.revised"), r.document_number),
            })
        });
        let void = Action::new(move |(number, reason, document): &(String, String, String)| {
            let t = target(number.clone(), document.clone());
            let reason = reason.clone();
            flow.run(api::void_and_replace_number(t, reason), move |r| {
                voiding.set(None);
                void_reason.set(String::new());
                void_document.set(String::new());
                Done {
                    kind: "void",
                    number: Some(r.replacement.document_number.clone()),
                    text: format!(
                        "{} ({}) — {}: {}",
                        r.voided,
                        r.status,
                        word(i18n.lang.get_untracked(), "ops.voided"),
                        r.replacement.document_number
                    ),
                }
            })
        });
        let void_only = Action::new(move |(number, reason): &(String, String)| {
            let t = target(number.clone(), String::new());
            let reason = reason.clone();
            flow.run(api::void_number(t, reason), move |r| {
                voiding.set(None);
                void_reason.set(String::new());
                Done {
                    kind: "void-only",
                    number: Some(r.document_number.clone()),
                    text: format!("{} — {}", r.document_number, word(i18n.lang.get_untracked(), "ops.voided.only")),
                }
            })
        });
        let busy = Signal::derive(move || revise.pending().get() || void.pending().get() || void_only.pending().get());
        NumberOps { voiding, void_reason, void_document, revise, void, void_only, busy }
    }
}

#[component]
fn NumbersView(
    n: CounterNumbers,
    done: RwSignal<Option<Done>>,
    op_error: RwSignal<Option<String>>,
    refresh: Callback<()>,
    after: RwSignal<Option<i64>>,
) -> impl IntoView {
    let i18n = use_i18n();
    let ops = NumberOps::new(n.counter.clone(), done, op_error, refresh);
    let next = n.next_after_sequence;
    let codes = (n.counter.project_code.clone(), n.counter.correspondence_type_code.clone());
    let with_actions = n.numbers.iter().any(|x| !x.available_actions.is_empty());
    let paged = after.get_untracked().is_some();
    view! {
        <TableWrap>
            <table class="list" data-testid="number-table">
                <TableHead columns={
                    let mut columns = vec!["ctr.col.seq", "ctr.col.number", "ctr.col.status", "ctr.col.document", "ctr.col.time", "ctr.col.note", "ctr.col.receipt"];
                    if with_actions {
                        columns.push("");
                    }
                    columns
                }/>
                <tbody>
                    {n.numbers.into_iter().map(|x| view! { <NumberRow x codes=codes.clone() with_actions ops/> }).collect_view()}
                </tbody>
            </table>
        </TableWrap>
        <div class="pager">
            {paged.then(|| view! {
                <button type="button" class="secondary small" data-testid="numbers-first" on:click=move |_| after.set(None)>{move || i18n.t("ctr.first")}</button>
            })}
            {next.map(|q| view! {
                <button type="button" class="secondary small" data-testid="numbers-next" on:click=move |_| after.set(Some(q))>{move || i18n.t("ctr.more")}</button>
            })}
        </div>

        <h2>{move || i18n.t("ctr.gaps")}</h2>
        <GapTable gaps=n.gaps/>
        <ReleasedTable released=n.released/>
    }
}

/// One issued number, with the links to its receipt's QR code and stamp (its project and type: `codes`), and a
/// button for each action the server offers the caller on it (revise, void).
#[component]
fn NumberRow(x: NumberView, codes: (String, String), with_actions: bool, ops: NumberOps) -> impl IntoView {
    let i18n = use_i18n();
    let NumberOps { voiding, revise, busy, .. } = ops;
    let number = x.document_number.clone();
    let status = x.status.as_str();
    let key = status_key(x.status);
    let may = |action: &str| x.available_actions.iter().any(|a| a == action);
    let (may_revise, may_void) = (may("REVISE"), may("VOID"));
    let (n1, n2, n3) = (number.clone(), number.clone(), number.clone());
    view! {
        <tr data-testid="number-row" data-sequence=x.sequence.to_string() data-status=status
            data-number=number.clone() data-revision=x.revision.clone()>
            <td>{x.sequence}</td>
            <td class="mono" data-testid="number-text">{number.clone()}</td>
            <td data-testid="number-status">{move || i18n.t(key)}" "<code class="small">{status}</code></td>
            <td class="small">{x.document_id.clone()}</td>
            <td class="nowrap small">{bangkok_time(x.cancelled_at.as_ref().or(x.confirmed_at.as_ref()).unwrap_or(&x.created_at))}</td>
            <td class="small">{x.cancel_reason.clone()}</td>
            <td class="nowrap small">
                <a href=receipt_path("/qr", &codes.0, &codes.1, &number) target="_blank" data-testid="number-qr"
                    title=move || i18n.t("reserve.qr")>"QR"</a>
                " · "
                <a href=receipt_path("/stamp", &codes.0, &codes.1, &number) target="_blank" data-testid="number-stamp"
                    title=move || i18n.t("reserve.stamp")>{move || i18n.t("ctr.stamp")}</a>
            </td>
            {with_actions.then(|| view! {
                <td class="actions">
                    {may_revise.then(|| view! {
                        <button type="button" class="secondary small" data-testid="number-revise" disabled=move || busy.get()
                            on:click=move |_| { revise.dispatch(n1.clone()); }>
                            {move || i18n.t("ops.revise")}
                        </button>
                        " "
                    })}
                    {may_void.then(|| view! {
                        <button type="button" class="danger small" data-testid="number-void" disabled=move || busy.get()
                            on:click=move |_| voiding.set(Some(n2.clone()))>
                            {move || i18n.t("ops.void")}
                        </button>
                        {move || (voiding.get().as_deref() == Some(n3.as_str())).then(|| view! { <VoidForm number=n3.clone() ops/> })}
                    })}
                </td>
            })}
        </tr>
    }
}

/// Void `number`: the reason, and either a replacement (with its document id) or none.
#[component]
fn VoidForm(number: String, ops: NumberOps) -> impl IntoView {
    let i18n = use_i18n();
    let NumberOps { voiding, void_reason, void_document, void, void_only, busy, .. } = ops;
    let only = number.clone();
    view! {
        <div class="rollback-box" data-testid="void-form">
            <label class="field">
                <span>{move || i18n.t("ops.void.reason")}</span>
                <input type="text" class="wide" data-testid="void-reason" maxlength="500"
                    prop:value=move || void_reason.get()
                    on:input=move |ev| void_reason.set(event_target_value(&ev))/>
            </label>
            <label class="field">
                <span>{move || i18n.t("ops.document_id")}</span>
                <input type="text" data-testid="void-document-id" maxlength="100"
                    prop:value=move || void_document.get()
                    on:input=move |ev| void_document.set(event_target_value(&ev))/>
            </label>
            <button type="button" class="danger" data-testid="void-confirm" disabled=move || busy.get()
                on:click=move |_| { void.dispatch((number.clone(), void_reason.get_untracked(), void_document.get_untracked())); }>
                {move || i18n.t("ops.void.confirm")}
            </button>
            " "
            <button type="button" class="danger" data-testid="void-only-confirm" disabled=move || busy.get()
                on:click=move |_| { void_only.dispatch((only.clone(), void_reason.get_untracked())); }>
                {move || i18n.t("ops.void.only")}
            </button>
            " "
            <button type="button" class="secondary" on:click=move |_| voiding.set(None)>{move || i18n.t("common.cancel")}</button>
        </div>
    }
}

/// The missing sequences and the audit row that explains each (or that none does).
#[component]
fn GapTable(gaps: Vec<GapView>) -> impl IntoView {
    let i18n = use_i18n();
    if gaps.is_empty() {
        return view! { <p class="muted" data-testid="gaps-none">{move || i18n.t("ctr.gaps.none")}</p> }.into_any();
    }
    view! {
        <TableWrap><table class="list" data-testid="gap-table">
            <tbody>
                {gaps.into_iter().map(|g| {
                    let e = g.explanation.clone();
                    let operation = e.as_ref().map(|e| e.operation.clone()).unwrap_or_default();
                    let explained = e.is_some();
                    let status = e.as_ref().map(|e| e.status.clone()).unwrap_or_default();
                    view! {
                        <tr data-testid="gap-row" data-sequence=g.sequence.to_string() data-operation=operation
                            data-status=status data-explained=explained.to_string()>
                            <td>{g.sequence}</td>
                            {match e {
                                Some(e) => view! {
                                    <td><code>{e.operation.clone()}</code>" "{e.status.clone()}</td>
                                    <td class="mono small">{e.document_number.clone()}</td>
                                    <td class="small">{e.username.clone()}</td>
                                    <td class="nowrap small">{bangkok_time(&e.at)}</td>
                                    <td class="small details"><span class="meta">{e.metadata.as_ref().map(|m| m.to_string())}</span></td>
                                }.into_any(),
                                None => view! { <td colspan="5" class="error">{move || i18n.t("ctr.gap.unexplained")}</td> }.into_any(),
                            }}
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table></TableWrap>
    }
    .into_any()
}

/// The numbers a reset released (only when there are some).
#[component]
fn ReleasedTable(released: Vec<ReleasedView>) -> impl IntoView {
    let i18n = use_i18n();
    (!released.is_empty()).then(|| {
        view! {
            <h2>{move || i18n.t("ctr.released")}</h2>
            <TableWrap><table class="list" data-testid="released-table">
                <tbody>
                    {released.into_iter().map(|r| view! {
                        <tr data-testid="released-row" data-sequence=r.sequence.to_string() data-number=r.document_number.clone()>
                            <td>{r.sequence}</td>
                            <td class="mono">{r.document_number.clone()}</td>
                            <td><code>{r.status_when_released.as_str()}</code></td>
                            <td class="small">"#"{r.reset_request_id.0}</td>
                            <td class="nowrap small">{bangkok_time(&r.released_at)}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table></TableWrap>
        }
    })
}

/// The super admins' operations on one counter and their forms' state: request a reset, register a legacy
/// number, move the counter forward. Each reports to `done` / `op_error` and refreshes the page.
#[derive(Clone, Copy)]
struct CounterActions {
    reset_value: RwSignal<String>,
    reset_reason: RwSignal<String>,
    legacy_number: RwSignal<String>,
    legacy_document: RwSignal<String>,
    legacy_reason: RwSignal<String>,
    set_value: RwSignal<String>,
    set_reason: RwSignal<String>,
    reset: Action<(Option<i64>, String), ()>,
    register: Action<(String, String, String), ()>,
    set: Action<(i64, String), ()>,
    op_error: RwSignal<Option<String>>,
    busy: Signal<bool>,
}

impl CounterActions {
    fn new(counter_id: CounterId, done: RwSignal<Option<Done>>, op_error: RwSignal<Option<String>>, refresh: Callback<()>) -> Self {
        let i18n = use_i18n();
        let flow = OpFlow { done, op_error, refresh };
        let reset_value = RwSignal::new("0".to_string());
        let reset_reason = RwSignal::new(String::new());
        let legacy_number = RwSignal::new(String::new());
        let legacy_document = RwSignal::new(String::new());
        let legacy_reason = RwSignal::new(String::new());
        let set_value = RwSignal::new(String::new());
        let set_reason = RwSignal::new(String::new());

        let reset = Action::new(move |(value, reason): &(Option<i64>, String)| {
            let (value, reason) = (*value, reason.clone());
            flow.run(api::request_counter_reset(counter_id, value, reason), move |env| {
                reset_reason.set(String::new());
                Done {
                    kind: "reset",
                    number: None,
                    text: format!("{} #{} ({})", word(i18n.lang.get_untracked(), "ops.reset.sent"), env.data.request_id, env.workflow.current_state),
                }
            })
        });
        let register = Action::new(move |(number, document, reason): &(String, String, String)| {
            let (number, document, reason) = (number.clone(), document.clone(), reason.clone());
            flow.run(api::override_register_number(counter_id, number, Some(document), reason), move |r| {
                legacy_number.set(String::new());
                legacy_document.set(String::new());
                legacy_reason.set(String::new());
                let number = r.registered.map(|x| x.document_number);
                Done {
                    kind: "register",
                    text: format!(
                        "{}: {} — {} {}",
                        word(i18n.lang.get_untracked(), "ops.registered"),
                        number.clone().unwrap_or_default(),
                        word(i18n.lang.get_untracked(), "ops.counter_set"),
                        r.last_number
                    ),
                    number,
                }
            })
        });
        let set = Action::new(move |(value, reason): &(i64, String)| {
            let (value, reason) = (*value, reason.clone());
            flow.run(api::override_counter_value(counter_id, value, reason), move |r| {
                set_reason.set(String::new());
                Done {
                    kind: "set",
                    number: None,
                    text: format!(
                        "{} {} → {} ({} {})",
                        word(i18n.lang.get_untracked(), "ops.counter_set"),
                        r.previous_last_number,
                        r.last_number,
                        r.skipped,
                        word(i18n.lang.get_untracked(), "ops.skipped")
                    ),
                }
            })
        });
        let busy = Signal::derive(move || reset.pending().get() || register.pending().get() || set.pending().get());
        CounterActions {
            reset_value,
            reset_reason,
            legacy_number,
            legacy_document,
            legacy_reason,
            set_value,
            set_reason,
            reset,
            register,
            set,
            op_error,
            busy,
        }
    }
}

/// Super admins: request a reset of this counter, register a legacy number, move the counter forward.
#[component]
fn CounterOps(counter_id: CounterId, done: RwSignal<Option<Done>>, op_error: RwSignal<Option<String>>, refresh: Callback<()>) -> impl IntoView {
    let i18n = use_i18n();
    let ops = CounterActions::new(counter_id, done, op_error, refresh);
    view! {
        <div class="ops" data-testid="superadmin-ops">
            <h2>{move || i18n.t("ops.title")}</h2>
            <ResetRequestForm ops/>
            <OverrideForms ops/>
        </div>
    }
}

/// Request a reset of the counter (to a value, with a reason the server counts).
#[component]
fn ResetRequestForm(ops: CounterActions) -> impl IntoView {
    let i18n = use_i18n();
    let CounterActions { reset_value, reset_reason, reset, busy, .. } = ops;
    // Unicode characters, as the server counts them (it decides; this is only a hint)
    let reason_chars = Signal::derive(move || reset_reason.with(|r| r.trim().chars().count()));
    view! {
        <div class="rollback-box">
            <h3>{move || i18n.t("ops.reset")}</h3>
            <label class="field small-field">
                <span>{move || i18n.t("ops.reset.value")}</span>
                <input type="number" min="0" data-testid="reset-value"
                    prop:value=move || reset_value.get()
                    on:input=move |ev| reset_value.set(event_target_value(&ev))/>
            </label>
            <label class="field">
                <span>{move || i18n.t("ops.reset.reason")}</span>
                <textarea data-testid="reset-reason" rows="2" maxlength="500"
                    prop:value=move || reset_reason.get()
                    on:input=move |ev| reset_reason.set(event_target_value(&ev))></textarea>
            </label>
            <p class="small" data-testid="reset-reason-count" data-count=move || reason_chars.get().to_string()
                class:warn=move || reason_chars.get() < MIN_RESET_REASON_CHARS>
                {move || format!("{} / {} {}", reason_chars.get(), MIN_RESET_REASON_CHARS, i18n.t("ops.reset.chars"))}
            </p>
            <button type="button" class="primary" data-testid="reset-request" disabled=move || busy.get()
                on:click=move |_| {
                    let value = reset_value.with_untracked(|v| v.trim().parse().ok());
                    reset.dispatch((value, reset_reason.get_untracked()));
                }>
                {move || i18n.t("ops.reset.submit")}
            </button>
        </div>
    }
}

/// Register a legacy number on the counter, or set the counter's value.
#[component]
fn OverrideForms(ops: CounterActions) -> impl IntoView {
    let i18n = use_i18n();
    let CounterActions { legacy_number, legacy_document, legacy_reason, set_value, set_reason, register, set, op_error, busy, .. } = ops;
    view! {
        <div class="rollback-box">
            <h3>{move || i18n.t("ops.override")}</h3>
            <div class="form-grid">
                <label class="field">
                    <span>{move || i18n.t("ops.override.number")}</span>
                    <input type="text" data-testid="override-number" maxlength="100"
                        prop:value=move || legacy_number.get()
                        on:input=move |ev| legacy_number.set(event_target_value(&ev))/>
                </label>
                <label class="field">
                    <span>{move || i18n.t("ops.document_id")}</span>
                    <input type="text" data-testid="override-document-id" maxlength="100"
                        prop:value=move || legacy_document.get()
                        on:input=move |ev| legacy_document.set(event_target_value(&ev))/>
                </label>
                <label class="field">
                    <span>{move || i18n.t("ops.override.reason")}</span>
                    <input type="text" data-testid="override-reason" maxlength="500"
                        prop:value=move || legacy_reason.get()
                        on:input=move |ev| legacy_reason.set(event_target_value(&ev))/>
                </label>
            </div>
            <button type="button" class="secondary" data-testid="override-register" disabled=move || busy.get()
                on:click=move |_| {
                    register.dispatch((legacy_number.get_untracked(), legacy_document.get_untracked(), legacy_reason.get_untracked()));
                }>
                {move || i18n.t("ops.override.register")}
            </button>
            <div class="form-grid">
                <label class="field">
                    <span>{move || i18n.t("ops.override.value")}</span>
                    <input type="number" min="0" data-testid="override-value"
                        prop:value=move || set_value.get()
                        on:input=move |ev| set_value.set(event_target_value(&ev))/>
                </label>
                <label class="field">
                    <span>{move || i18n.t("ops.override.reason")}</span>
                    <input type="text" data-testid="override-value-reason" maxlength="500"
                        prop:value=move || set_reason.get()
                        on:input=move |ev| set_reason.set(event_target_value(&ev))/>
                </label>
            </div>
            <button type="button" class="secondary" data-testid="override-set" disabled=move || busy.get()
                on:click=move |_| {
                    match set_value.with_untracked(|v| v.trim().parse::<i64>()) {
                        Ok(v) => { set.dispatch((v, set_reason.get_untracked())); }
                        Err(_) => op_error.set(Some(i18n.t("ops.override.value").to_string())),
                    }
                }>
                {move || i18n.t("ops.override.set")}
            </button>
        </div>
    }
}
