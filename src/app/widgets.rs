//! Small pieces shared by the pages.

use leptos::prelude::*;

use super::api::error_text;
use super::browser::copy_to_clipboard;
use super::i18n::{use_i18n, Lang};
use super::use_current_user;
use crate::contract::import::ImportReport;
use crate::contract::{CounterView, NumberStatus, ReferenceData, Role, TemplateSource, UserInfo};

/// Renders `content(user)` for a logged-in user; sends everyone else to `/login`. On a page load without a session
/// the server has answered `303` already (`server::http::pages_need_a_session`); what is left here is a session that
/// ended since (a client-side navigation after hydration).
#[component]
pub fn RequireUser<F, IV>(content: F) -> impl IntoView
where
    F: Fn(UserInfo) -> IV + Clone + Send + Sync + 'static,
    IV: IntoView + 'static,
{
    let i18n = use_i18n();
    let user = use_current_user().resource;
    view! {
        <Suspense fallback=move || view! { <p class="muted">{move || i18n.t("common.loading")}</p> }>
            {move || {
                let content = content.clone();
                Suspend::new(async move {
                    match user.await {
                        Ok(Some(u)) => content(u).into_any(),
                        Ok(None) => view! { <ToLogin/> }.into_any(),
                        Err(e) => view! { <ErrorBox message=error_text(&e)/> }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
}

/// Goes to the login page, in the browser once hydrated. Never a `<Redirect>` in a server render: reached inside a
/// `Suspense` while the client hangs up, it could block a runtime worker for good (Leptos 0.8's owner cleanup,
/// leptos-rs/leptos#4673); the server sends visitors without a session away before rendering instead.
#[component]
pub fn ToLogin() -> impl IntoView {
    let i18n = use_i18n();
    #[cfg(not(feature = "ssr"))]
    {
        let navigate = leptos_router::hooks::use_navigate();
        Effect::new(move |_| navigate("/login", Default::default()));
    }
    view! { <p class="muted">{move || i18n.t("common.redirecting")}</p> }
}

/// A server's (Thai) error message.
/// The header row of a list table: one column per word key of `i18n.rs`; "" leaves a column unlabeled
/// (buttons). The labels follow the TH/EN switch.
#[component]
pub fn TableHead(columns: Vec<&'static str>) -> impl IntoView {
    let i18n = use_i18n();
    // a column of buttons has no heading shown, but one for screen readers
    let cells = columns
        .into_iter()
        .map(|key| match key {
            "" => view! { <th><span class="visually-hidden">{move || i18n.t("common.actions")}</span></th> }.into_any(),
            key => view! { <th>{move || i18n.t(key)}</th> }.into_any(),
        })
        .collect_view();
    view! { <thead><tr>{cells}</tr></thead> }
}

/// What a pager needs of a page of search results.
pub trait ResultPage {
    fn page(&self) -> u32;
    fn page_size(&self) -> u32;
    fn total(&self) -> i64;
}

macro_rules! result_pages {
    ($($page:ty),*) => {$(
        impl ResultPage for $page {
            fn page(&self) -> u32 { self.page }
            fn page_size(&self) -> u32 { self.page_size }
            fn total(&self) -> i64 { self.total }
        }
    )*};
}
result_pages!(crate::contract::AuditPage, crate::contract::ErrorPage, crate::contract::users::LoginAttemptPage);

/// A paged search run in the browser (`client_fetch`): the answer to the last query sent, with that query; whether a
/// newer query is still on its way; and the page of the last good answer.
pub struct PagedSearch<Q: Send + Sync + 'static, P: Send + Sync + 'static> {
    pub answer: ReadSignal<Option<(Q, Result<P, String>)>>,
    pub loading: Signal<bool>,
    pub page: Memo<Option<P>>,
}

impl<Q: Send + Sync + 'static, P: Send + Sync + 'static> Clone for PagedSearch<Q, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<Q: Send + Sync + 'static, P: Send + Sync + 'static> Copy for PagedSearch<Q, P> {}

/// Runs `fetch(query)` whenever the query changes, or a signal `fetch` reads before its future starts (a reload).
pub fn paged_search<Q, P, Fut>(query: Signal<Q>, fetch: impl Fn(Q) -> Fut + 'static) -> PagedSearch<Q, P>
where
    Q: Clone + PartialEq + Send + Sync + 'static,
    P: Clone + PartialEq + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<P, String>> + 'static,
{
    let answer = client_fetch(move || {
        let q = query.get();
        let answer = fetch(q.clone());
        async move { (q, answer.await) }
    });
    let loading = Signal::derive(move || answer.with(|a| a.as_ref().map(|(q, _)| q != &query.get()).unwrap_or(true)));
    let page = Memo::new(move |_| answer.with(|a| a.as_ref().and_then(|(_, r)| r.as_ref().ok().cloned())));
    PagedSearch { answer, loading, page }
}

/// The pager under a paged search's results (`{prefix}-prev`, `-page`, `-next`); `page_size` until the first page.
pub fn search_pager<Q, P>(prefix: &'static str, search: PagedSearch<Q, P>, page_size: u32, go: Callback<u32>) -> impl IntoView
where
    Q: Send + Sync + 'static,
    P: ResultPage + Clone + PartialEq + Send + Sync + 'static,
{
    let page = search.page;
    view! {
        <Pager prefix
            page=Signal::derive(move || page.with(|p| p.as_ref().map_or(1, ResultPage::page)))
            page_size=Signal::derive(move || page.with(|p| p.as_ref().map_or(page_size, ResultPage::page_size)))
            total=Signal::derive(move || page.with(|p| p.as_ref().map_or(0, ResultPage::total)))
            busy=search.loading
            go/>
    }
}

/// A paged search's state above its results: "loading" until the first answer, the error of a failed one. The results
/// themselves come from the last good page, so paging does not blank the table.
pub fn search_state<Q, P>(answer: Option<&(Q, Result<P, String>)>) -> AnyView {
    let i18n = use_i18n();
    match answer {
        None => view! { <p class="muted">{i18n.t("common.loading")}</p> }.into_any(),
        Some((_, Err(m))) => view! { <ErrorBox message=m.clone()/> }.into_any(),
        Some((_, Ok(_))) => ().into_any(),
    }
}

/// The head of a search's results: how many entries it found (`{prefix}-total`, its `data-total`, and while another
/// page loads, `data-loading` when given) and that times are Thailand's.
#[component]
pub fn ResultsHead(prefix: &'static str, total: i64, #[prop(optional, into)] loading: Option<Signal<bool>>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <div class="results-head">
            <p data-testid=format!("{prefix}-total") data-total=total.to_string() data-loading=move || loading.map(|l| l.get().to_string())>
                {move || format!("{} {} {}", i18n.t("common.found"), total, i18n.t("common.items"))}
            </p>
            <span class="small muted">{move || i18n.t("common.time_note")}</span>
        </div>
    }
}

/// "Nothing found" for a search's empty page (`{prefix}-empty`).
#[component]
pub fn NothingFound(prefix: &'static str) -> impl IntoView {
    let i18n = use_i18n();
    view! { <p class="muted" data-testid=format!("{prefix}-empty")>{move || i18n.t("common.nothing")}</p> }
}

#[component]
pub fn ErrorBox(#[prop(into)] message: String) -> impl IntoView {
    view! { <p class="error" role="alert" data-testid="error">{message}</p> }
}

/// Shows the error in `error` when there is one.
#[component]
pub fn ErrorSlot(error: RwSignal<Option<String>>) -> impl IntoView {
    move || error.get().map(|m| view! { <ErrorBox message=m/> })
}

/// A secret shown once, just after it was made (an API token, a webhook's signing secret), with a copy button;
/// `testid` names the box (`{testid}-created`), the secret (`-secret`) and the button (`-copy`).
#[component]
pub fn SecretOnce(secret: String, words: &'static str, testid: &'static str) -> impl IntoView {
    let i18n = use_i18n();
    let copied = secret.clone();
    view! {
        <div class="secret-box" data-testid=format!("{testid}-created")>
            <p><strong>{move || i18n.t(words)}</strong></p>
            <code class="secret" data-testid=format!("{testid}-secret")>{secret}</code>
            " "
            <CopyButton text=move || copied.clone() testid=format!("{testid}-copy")/>
        </div>
    }
}

/// A button that copies `text()` to the clipboard and says whether it worked.
#[component]
pub fn CopyButton<T>(text: T, #[prop(into)] testid: String) -> impl IntoView
where
    T: Fn() -> String + Send + Sync + 'static,
{
    let i18n = use_i18n();
    // None = not clicked yet, Some(true) = copied, Some(false) = the browser refused
    let copied = RwSignal::new(None::<bool>);
    let on_click = move |_| {
        copied.set(None);
        copy_to_clipboard(text(), move |ok| copied.set(Some(ok)));
    };
    view! {
        <button type="button" class="secondary" data-testid=testid on:click=on_click>
            {move || i18n.t("common.copy")}
        </button>
        {move || match copied.get() {
            Some(true) => Some(view! { <span class="ok small" data-testid="copy-result">{i18n.t("common.copied")}</span> }),
            Some(false) => Some(view! { <span class="error small" data-testid="copy-result">{i18n.t("common.copy_failed")}</span> }),
            None => None,
        }}
    }
}

// ---- selects of ids ----

/// One choice in a select: the value is the id, `data-code` carries the code (for people and tests).
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    pub id: i64,
    pub code: String,
    pub label: String,
    pub disabled: bool,
}

/// `code — name`, or the code alone when the name is blank or repeats it.
pub fn choice(id: impl Into<i64>, code: &str, name: &str) -> Choice {
    let id = id.into();
    let label = if name.trim().is_empty() || name == code { code.to_string() } else { format!("{code} — {name}") };
    Choice { id, code: code.to_string(), label, disabled: false }
}

/// `code — name`, or the code alone when the name is blank (a name equal to the code is repeated, as the
/// template editor and the audit filter have always shown it).
pub fn choice_named(id: impl Into<i64>, code: &str, name: &str) -> Choice {
    let id = id.into();
    let label = if name.trim().is_empty() { code.to_string() } else { format!("{code} — {name}") };
    Choice { id, code: code.to_string(), label, disabled: false }
}

/// A labelled select of ids with a "choose" placeholder, holding a typed id (`ProjectId`, `OrganizationId`…).
#[component]
pub fn IdSelect<Id>(
    label: &'static str,
    testid: &'static str,
    #[prop(into)] choices: Signal<Vec<Choice>>,
    value: RwSignal<Option<Id>>,
    /// Text of the empty choice; the default is "— choose —".
    #[prop(optional)]
    placeholder: Option<&'static str>,
    /// The field's name in a form that posts without scripts.
    #[prop(optional)]
    name: Option<&'static str>,
) -> impl IntoView
where
    Id: Copy + Into<i64> + From<i64> + Send + Sync + 'static,
{
    // the select itself knows option values only: one copy of its code whatever the id's type
    let raw = Signal::derive(move || value.get().map(Into::into));
    let set = Callback::new(move |id: Option<i64>| value.set(id.map(Id::from)));
    raw_id_select(label, testid, choices, raw, set, placeholder.unwrap_or("common.choose"), name)
}

fn raw_id_select(
    label: &'static str,
    testid: &'static str,
    choices: Signal<Vec<Choice>>,
    value: Signal<Option<i64>>,
    set: Callback<Option<i64>>,
    placeholder: &'static str,
    name: Option<&'static str>,
) -> impl IntoView {
    let i18n = use_i18n();
    // `selected` as an attribute too: the server's HTML has no properties, and a form posted without scripts sends it
    view! {
        <label class="field">
            <span>{move || i18n.t(label)}</span>
            <select data-testid=testid name=name on:change=move |ev| set.run(parse_id(&event_target_value(&ev)))>
                <option value="" selected=value.get_untracked().is_none() prop:selected=move || value.get().is_none()>{move || i18n.t(placeholder)}</option>
                <For each=move || choices.get() key=|c| (c.id, c.label.clone(), c.disabled) let:c>
                    <option value=c.id.to_string() data-code=c.code.clone() disabled=c.disabled
                        selected=value.get_untracked() == Some(c.id)
                        prop:selected=move || value.get() == Some(c.id)>
                        {c.label.clone()}
                    </option>
                </For>
            </select>
        </label>
    }
}

/// The report of an import (bulk or reference data): a summary line and one table row per input row.
#[component]
pub fn ReportView(report: ImportReport) -> impl IntoView {
    let i18n = use_i18n();
    let state = if report.dry_run {
        "dry"
    } else if report.applied {
        "applied"
    } else {
        "refused"
    };
    let state_key = match state {
        "dry" => "import.state.dry",
        "applied" => "import.state.applied",
        _ => "import.state.refused",
    };
    let (total, ok, err) = (report.total, report.ok_rows, report.error_rows);
    let summary_class = if err > 0 { "error" } else { "" };
    view! {
        <div class="import-report" data-testid="import-report" data-state=state>
            <p data-testid="import-summary" class=summary_class>
                <strong data-testid="import-state">{move || i18n.t(state_key)}</strong>
                " · " {move || i18n.t("import.total")} ": " <span data-testid="import-total">{total}</span>
                " · " {move || i18n.t("import.ok_rows")} ": " <span data-testid="import-ok">{ok}</span>
                " · " {move || i18n.t("import.error_rows")} ": " <span data-testid="import-errors">{err}</span>
            </p>
            <TableWrap>
            <table class="list">
                <TableHead columns=vec!["import.row", "import.kind", "import.key", "import.action", "import.last_number", "import.result"]/>
                <tbody>
                    {report.rows.into_iter().map(|r| {
                        let message = r.message.clone().unwrap_or_default();
                        let detail = r.detail.clone().unwrap_or_default();
                        let ok = r.ok;
                        view! {
                            <tr data-testid="report-row" data-row=r.row.to_string() data-kind=r.kind.clone() data-ok=ok.to_string() class:error=!ok>
                                <td>{r.row}</td>
                                <td>{r.kind.clone()}</td>
                                <td data-testid="report-key">{r.key.clone().unwrap_or_default()}</td>
                                <td>{r.action.clone().unwrap_or_default()}</td>
                                <td data-testid="report-last">{r.last_number.map(|n| n.to_string()).unwrap_or_default()}</td>
                                <td data-testid="report-result">
                                    {move || if ok {
                                        i18n.t("import.ok").to_string()
                                    } else if i18n.lang.get() == Lang::En && !detail.is_empty() {
                                        detail.clone()
                                    } else {
                                        message.clone()
                                    }}
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
            </TableWrap>
        </div>
    }
}

/// Parses a `<select>` value holding an id; "" (the placeholder) is None.
pub fn parse_id(value: &str) -> Option<i64> {
    value.trim().parse().ok()
}

/// Loads data in the browser: runs `fetcher` now and whenever a signal it reads (synchronously)
/// changes, and keeps the latest answer in a plain signal (the previous one while the next loads;
/// answers to superseded calls are dropped). Unlike a resource, reading it never suspends a
/// surrounding `<Suspense>`, and on the server it stays `None`, so server HTML and hydration agree.
pub fn client_fetch<T, Fut>(fetcher: impl Fn() -> Fut + 'static) -> ReadSignal<Option<T>>
where
    T: Send + Sync + 'static,
    Fut: std::future::Future<Output = T> + 'static,
{
    let (value, set_value) = signal(None::<T>);
    let generation = StoredValue::new(0u64);
    Effect::new(move |_| {
        let fut = fetcher();
        let this_call = generation.get_value().wrapping_add(1);
        generation.set_value(this_call);
        leptos::task::spawn_local(async move {
            let answer = fut.await;
            if generation.try_get_value() == Some(this_call) {
                set_value.try_set(Some(answer));
            }
        });
    });
    value
}

/// A time as people in Thailand read it (UTC+7, no daylight saving) in the page's language: in Thai the date in
/// the Buddhist Era, `15/06/2568 10:02:03`; in English `2025-06-15 10:02:03`. Inside a reactive closure it follows
/// the language switch.
pub fn bangkok_time(t: &chrono::DateTime<chrono::Utc>) -> String {
    let lang = use_context::<super::i18n::I18n>().map(|i18n| i18n.lang.get()).unwrap_or_default();
    time_in(lang, t)
}

/// [`bangkok_time`] in a given language.
pub fn time_in(lang: Lang, t: &chrono::DateTime<chrono::Utc>) -> String {
    use chrono::Datelike;
    let bangkok = chrono::FixedOffset::east_opt(7 * 3600).expect("a valid offset");
    let local = t.with_timezone(&bangkok);
    match lang {
        Lang::Th => format!("{:02}/{:02}/{} {}", local.day(), local.month(), local.year() + 543, local.format("%H:%M:%S")),
        Lang::En => local.format("%Y-%m-%d %H:%M:%S").to_string(),
    }
}

/// The i18n key naming where a resolved template comes from.
pub fn source_key(source: TemplateSource) -> &'static str {
    match source {
        TemplateSource::ProjectType => "reserve.source.ProjectType",
        TemplateSource::ProjectDefault => "reserve.source.ProjectDefault",
        TemplateSource::SystemDefault => "reserve.source.SystemDefault",
    }
}

/// A table that scrolls sideways inside itself on a narrow screen (the page does not): focusable, so the keyboard
/// scrolls it too, and named for screen readers — by `label` (an i18n key) too where a page has several, since
/// regions of one name are landmarks a screen reader cannot tell apart.
#[component]
pub fn TableWrap(children: Children, #[prop(optional)] label: Option<&'static str>) -> impl IntoView {
    let i18n = use_i18n();
    let name = move || match label {
        Some(key) => format!("{} — {}", i18n.t(key), i18n.t("common.table")),
        None => i18n.t("common.table").to_string(),
    };
    view! { <div class="table-wrap" tabindex="0" role="region" aria-label=name>{children()}</div> }
}

/// A document number that wraps, on a narrow screen, only after its separators (`-`, `/`, space): never inside
/// `2569`. (Line breaking does not break after a hyphen before a digit on its own.)
#[component]
pub fn NumberText(text: String) -> impl IntoView {
    let mut pieces = Vec::new();
    let mut piece = String::new();
    for c in text.chars() {
        piece.push(c);
        if matches!(c, '-' | '/' | ' ') {
            pieces.push(std::mem::take(&mut piece));
        }
    }
    pieces.push(piece);
    pieces.into_iter().map(|p| view! { {p}<wbr/> }).collect_view()
}

// ---- counters, as the counter browser and the reset requests show them ----

/// `YEAR_2025` → `2568 (2025)`, `MONTH_2025_06` → `06/2568`, anything else as it is.
pub fn period_label(period: &str, lang: Lang) -> String {
    match crate::numbering::PeriodKey::parse(period) {
        Some(crate::numbering::PeriodKey::Year(y)) => format!("{} ({y})", y + 543),
        Some(crate::numbering::PeriodKey::Month(y, m)) => format!("{m:02}/{} ({m:02}/{y})", y + 543),
        Some(crate::numbering::PeriodKey::FiscalYear(y)) => format!("{} {} (FY {y})", super::i18n::word(lang, "ctr.period.fy"), y + 543),
        // a counter that never starts again (an RFA's): words, not the stored key
        Some(crate::numbering::PeriodKey::None) => super::i18n::word(lang, "ctr.period.none").to_string(),
        // a contract's own sequence: the contract is named among the counter's parts
        Some(crate::numbering::PeriodKey::Contract(_)) => super::i18n::word(lang, "ctr.period.contract").to_string(),
        None => period.to_string(),
    }
}

/// The parts a counter is kept per, e.g. `คคง. → ผรม.1`.
pub fn parts_label(c: &CounterView) -> String {
    let mut parts = Vec::new();
    match (&c.originator_code, &c.recipient_code) {
        (Some(o), Some(r)) => parts.push(format!("{o} → {r}")),
        (Some(o), None) => parts.push(o.clone()),
        (None, Some(r)) => parts.push(format!("→ {r}")),
        (None, None) => {}
    }
    for x in [&c.sub_type_number, &c.rfa_type_code, &c.discipline_code, &c.contract_code].into_iter().flatten() {
        parts.push(x.clone());
    }
    parts.join(" · ")
}

/// The number of pages for `total` rows (at least 1).
pub fn page_count(total: i64, page_size: u32) -> u32 {
    let size = i64::from(page_size.max(1));
    ((total.max(0) + size - 1) / size).max(1) as u32
}

/// "Page x of y" with previous / next buttons (`{prefix}-prev`, `{prefix}-next`, `{prefix}-page`).
#[component]
pub fn Pager(
    prefix: &'static str,
    #[prop(into)] page: Signal<u32>,
    #[prop(into)] page_size: Signal<u32>,
    #[prop(into)] total: Signal<i64>,
    #[prop(into)] busy: Signal<bool>,
    go: Callback<u32>,
) -> impl IntoView {
    let i18n = use_i18n();
    let pages = move || page_count(total.get(), page_size.get());
    view! {
        <div class="pager">
            <button type="button" class="secondary small" data-testid=format!("{prefix}-prev")
                disabled=move || { busy.get() || page.get() <= 1 }
                on:click=move |_| go.run(page.get_untracked().saturating_sub(1).max(1))>
                {move || i18n.t("common.prev")}
            </button>
            <span class="small" data-testid=format!("{prefix}-page") data-page=move || page.get().to_string()>
                {move || format!("{} {} {} {}", i18n.t("common.page"), page.get(), i18n.t("common.of"), pages())}
            </span>
            <button type="button" class="secondary small" data-testid=format!("{prefix}-next")
                disabled=move || { busy.get() || page.get() >= pages() }
                on:click=move |_| go.run(page.get_untracked() + 1)>
                {move || i18n.t("common.next")}
            </button>
        </div>
    }
}

// ---- AdminPage: the shared scaffolding of the admin pages ----

/// The rank of a role for the pages' own "may this role see it" check (the server checks again).
fn role_rank(role: Role) -> u8 {
    match role {
        Role::Staff => 0,
        Role::ProjectAdmin => 1,
        Role::SuperAdmin => 2,
    }
}

/// What an admin page's content gets: the user, and the reference data (empty unless the page asked for it).
#[derive(Clone)]
pub struct AdminContext {
    pub user: UserInfo,
    pub data: ReferenceData,
}

/// The refusal a user sees on a page above their role, naming the role it needs.
#[component]
pub fn NoAccess(min_role: Role) -> impl IntoView {
    let i18n = use_i18n();
    let needed = if min_role == Role::SuperAdmin { "common.needs_super_admin" } else { "common.needs_admin" };
    view! {
        <section class="card" data-testid="no-access">
            <ErrorBox message=i18n.t("common.no_access")/>
            <p class="muted" data-testid="no-access-role">{move || i18n.t(needed)}</p>
        </section>
    }
}

/// An admin page: logged-in users only (others go to `/login`); a user below `min_role` gets a clear Thai
/// refusal instead of the content (the server refuses on its own too); with `reference`, the reference data is
/// loaded (Suspense) before `content` runs; errors are shown in the error box. Draws the card and its title.
#[component]
pub fn AdminPage<F, IV>(
    /// i18n key of the page title.
    title: &'static str,
    content: F,
    /// The lowest role that may use the page.
    #[prop(default = Role::ProjectAdmin)]
    min_role: Role,
    /// Load the reference data (projects, types, …) for the content.
    #[prop(default = true)]
    reference: bool,
    /// A wide card (tables).
    #[prop(optional)]
    wide: bool,
) -> impl IntoView
where
    F: Fn(AdminContext) -> IV + Clone + Send + Sync + 'static,
    IV: IntoView + 'static,
{
    let i18n = use_i18n();
    let refdata = reference.then(|| Resource::new(|| (), |_| super::api::fetch_reference_data()));
    let class = if wide { "card wide-card" } else { "card" };
    view! {
        <RequireUser content=move |user: UserInfo| {
            if role_rank(user.role) < role_rank(min_role) {
                return view! { <NoAccess min_role=min_role/> }.into_any();
            }
            let content = content.clone();
            let body = match refdata {
                None => content(AdminContext { user, data: ReferenceData::default() }).into_any(),
                Some(refdata) => view! {
                    <Suspense fallback=move || view! { <p class="muted">{move || i18n.t("common.loading")}</p> }>
                        {
                            let (user, content) = (user.clone(), content.clone());
                            move || {
                                let (user, content) = (user.clone(), content.clone());
                                Suspend::new(async move {
                                    match refdata.await {
                                        Ok(data) => content(AdminContext { user, data }).into_any(),
                                        Err(e) => view! { <ErrorBox message=error_text(&e)/> }.into_any(),
                                    }
                                })
                            }
                        }
                    </Suspense>
                }
                .into_any(),
            };
            view! {
                <section class=class>
                    <h1>{move || i18n.t(title)}</h1>
                    {body}
                </section>
            }
            .into_any()
        }/>
    }
}

/// The i18n key of a number's status.
pub fn status_key(status: NumberStatus) -> &'static str {
    match status {
        NumberStatus::Reserved => "st.RESERVED",
        NumberStatus::Confirmed => "st.CONFIRMED",
        NumberStatus::Cancelled => "st.CANCELLED",
        NumberStatus::Void => "st.VOID",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_read_in_buddhist_years() {
        assert_eq!(period_label("YEAR_2025", Lang::Th), "2568 (2025)");
        assert_eq!(period_label("MONTH_2025_06", Lang::En), "06/2568 (06/2025)");
        assert_eq!(period_label("CONTRACT_12", Lang::En), "per contract, never starts again");
        assert_eq!(period_label("NONE", Lang::Th), "ไม่เริ่มนับใหม่");
        assert_eq!(period_label("NONE", Lang::En), "never starts again");
    }

    #[test]
    fn times_are_bangkok_time_with_buddhist_years_in_thai() {
        let t = chrono::DateTime::from_timestamp_millis(1_749_956_523_000).unwrap(); // 2025-06-15 03:02:03 UTC
        assert_eq!(time_in(Lang::Th, &t), "15/06/2568 10:02:03");
        assert_eq!(time_in(Lang::En, &t), "2025-06-15 10:02:03");
    }
}
