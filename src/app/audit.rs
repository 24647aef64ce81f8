//! `/audit` — audit log search for admins (docs/rules/numbering.md#audit-and-retention, docs/rules/api.md#web-app):
//! filters, paging, CSV export through the REST
//! endpoint with the same filters. The server checks the role; this page only asks and shows.

use chrono::{DateTime, Utc};
use leptos::prelude::*;

use super::api::{self, error_text};
use super::i18n::use_i18n;
use super::widgets::{
    bangkok_time, choice_named, paged_search, search_pager, search_state, AdminContext, AdminPage, Choice, IdSelect, NothingFound, PagedSearch,
    ResultsHead, TableHead, TableWrap,
};
use crate::contract::forms::percent_encode;
use crate::contract::*;

/// The operations of docs/rules/numbering.md#the-lifecycle-of-a-number, the template changes and the permission changes, as the audit log names them.
pub const OPERATIONS: &[&str] = &[
    "RESERVE",
    "CONFIRM",
    "CANCEL",
    "GENERATE",
    "VOID",
    "MANUAL_OVERRIDE",
    "TEMPLATE_UPDATE",
    "TEMPLATE_ROLLBACK",
    "RESET_REQUEST",
    "RESET_APPROVE",
    "RESET_REJECT",
    "RESET_EXECUTE",
    // users and tokens (chain `admin`)
    "USER_CREATED",
    "ROLE_CHANGED",
    "PROJECT_ADMIN_GRANTED",
    "PROJECT_ADMIN_REMOVED",
    "USER_DEACTIVATED",
    "USER_REACTIVATED",
    "PASSWORD_CHANGED",
    "PASSWORD_SET",
    "TOKEN_CREATED",
    "TOKEN_REVOKED",
    // retention: each run of `docnum prune` or the daily job, with its counts (chain `admin`)
    "PRUNE",
];

const PAGE_SIZES: &[u32] = &[10, 25, 50, 100];
const DEFAULT_PAGE_SIZE: u32 = 50;
const CSV_ENDPOINT: &str = "/api/v1/document-numbering/logs/audit";

#[component]
pub fn AuditPage() -> impl IntoView {
    view! {
        <AdminPage title="audit.title" wide=true content=|ctx: AdminContext| {
            // a project admin's search is kept to their projects by the server: offer only those
            let projects = ctx.data.projects.into_iter().filter(|p| ctx.user.can_edit_templates(p.id)).collect::<Vec<_>>();
            view! { <AuditSearch projects/> }
        }/>
    }
}

/// Midnight (Bangkok) of `date` (`YYYY-MM-DD`) plus `plus_days`, as a UTC instant.
fn bangkok_midnight(date: &str, plus_days: u64) -> Option<DateTime<Utc>> {
    let d = chrono::NaiveDate::parse_from_str(date.trim(), "%Y-%m-%d").ok()?;
    let d = d.checked_add_days(chrono::Days::new(plus_days))?;
    let local = d.and_hms_opt(0, 0, 0)?;
    Some(DateTime::from_naive_utc_and_offset(local - chrono::Duration::hours(7), Utc))
}

/// The REST export of the rows `q` finds (all pages), as a link the session cookie authenticates.
fn csv_href(q: &AuditQuery) -> String {
    let mut params = vec![("format", "csv".to_string())];
    let rfc3339 = |t: &DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    if let Some(t) = &q.from {
        params.push(("from", rfc3339(t)));
    }
    if let Some(t) = &q.to {
        params.push(("to", rfc3339(t)));
    }
    if let Some(u) = &q.user {
        params.push(("user", u.clone()));
    }
    if let Some(o) = &q.operation {
        params.push(("operation", o.clone()));
    }
    if let Some(n) = &q.number {
        params.push(("number", n.clone()));
    }
    if let Some(p) = q.project_id {
        params.push(("projectId", p.to_string()));
    }
    let query = params.iter().map(|(k, v)| format!("{k}={}", percent_encode(v))).collect::<Vec<_>>().join("&");
    format!("{CSV_ENDPOINT}?{query}")
}

fn non_empty(s: String) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The search form's fields.
#[derive(Clone, Copy)]
struct AuditForm {
    from: RwSignal<String>,
    to: RwSignal<String>,
    user: RwSignal<String>,
    operation: RwSignal<String>,
    number: RwSignal<String>,
    project: RwSignal<Option<ProjectId>>,
    page_size: RwSignal<u32>,
}

impl AuditForm {
    fn new() -> Self {
        AuditForm {
            from: RwSignal::new(String::new()),
            to: RwSignal::new(String::new()),
            user: RwSignal::new(String::new()),
            operation: RwSignal::new(String::new()),
            number: RwSignal::new(String::new()),
            project: RwSignal::new(None),
            page_size: RwSignal::new(DEFAULT_PAGE_SIZE),
        }
    }

    /// The query the form asks for, at `page`.
    fn query(&self, page: u32) -> AuditQuery {
        AuditQuery {
            from: bangkok_midnight(&self.from.get_untracked(), 0),
            // the "to" date is inclusive for people: the search ends at the next midnight
            to: bangkok_midnight(&self.to.get_untracked(), 1),
            user: non_empty(self.user.get_untracked()),
            operation: non_empty(self.operation.get_untracked()),
            number: non_empty(self.number.get_untracked()),
            project_id: self.project.get_untracked(),
            page: Some(page),
            page_size: Some(self.page_size.get_untracked()),
        }
    }

    /// Empties the filters (the page size stays).
    fn clear(&self) {
        for s in [self.from, self.to, self.user, self.operation, self.number] {
            s.set(String::new());
        }
        self.project.set(None);
    }
}

#[component]
fn AuditSearch(projects: Vec<ProjectItem>) -> impl IntoView {
    let form = AuditForm::new();
    let project_choices = Signal::derive({
        let choices: Vec<Choice> = projects.iter().map(|p| choice_named(p.id, &p.code, &p.name)).collect();
        move || choices.clone()
    });

    // ---- the search that was asked for, and its answer ----
    let applied = RwSignal::new(AuditQuery { page: Some(1), page_size: Some(DEFAULT_PAGE_SIZE), ..Default::default() });
    let search = paged_search(applied.into(), |q| async move { api::search_audit(q).await.map_err(|e| error_text(&e)) });
    let go = Callback::new(move |page: u32| applied.update(|q| q.page = Some(page.max(1))));

    view! {
        <AuditFilters form project_choices applied/>

        <AuditResults search/>
        {search_pager("audit", search, DEFAULT_PAGE_SIZE, go)}
    }
}

/// The filters, search / clear, and the CSV link of the search asked for (`applied`).
#[component]
fn AuditFilters(form: AuditForm, project_choices: Signal<Vec<Choice>>, applied: RwSignal<AuditQuery>) -> impl IntoView {
    let i18n = use_i18n();
    let AuditForm { from, to, user, operation, number, project, page_size } = form;
    let search = move || applied.set(form.query(1));
    let clear = move |_| {
        form.clear();
        search();
    };
    view! {
        <form class="filters" on:submit=move |ev: leptos::ev::SubmitEvent| {
            ev.prevent_default();
            search();
        }>
            <div class="form-grid">
                <label class="field">
                    <span>{move || i18n.t("audit.from")}</span>
                    <input type="date" data-testid="audit-filter-from"
                        prop:value=move || from.get()
                        on:input=move |ev| from.set(event_target_value(&ev))
                        on:change=move |ev| from.set(event_target_value(&ev))/>
                </label>
                <label class="field">
                    <span>{move || i18n.t("audit.to")}</span>
                    <input type="date" data-testid="audit-filter-to"
                        prop:value=move || to.get()
                        on:input=move |ev| to.set(event_target_value(&ev))
                        on:change=move |ev| to.set(event_target_value(&ev))/>
                </label>
                <label class="field">
                    <span>{move || i18n.t("audit.user")}</span>
                    <input type="text" data-testid="audit-filter-user" maxlength="200"
                        prop:value=move || user.get()
                        on:input=move |ev| user.set(event_target_value(&ev))/>
                </label>
                <label class="field">
                    <span>{move || i18n.t("audit.operation")}</span>
                    <select data-testid="audit-filter-operation" on:change=move |ev| operation.set(event_target_value(&ev))>
                        <option value="" prop:selected=move || operation.with(|o| o.is_empty())>{move || i18n.t("common.all")}</option>
                        {OPERATIONS.iter().map(|op| {
                            let op: &'static str = op;
                            view! {
                                <option value=op prop:selected=move || operation.with(|o| o == op)>{op}</option>
                            }
                        }).collect_view()}
                    </select>
                </label>
                <label class="field">
                    <span>{move || i18n.t("audit.number")}</span>
                    <input type="text" class="mono" data-testid="audit-filter-number" maxlength="200"
                        prop:value=move || number.get()
                        on:input=move |ev| number.set(event_target_value(&ev))/>
                </label>
                <IdSelect label="audit.project" testid="audit-filter-project" choices=project_choices value=project placeholder="common.all"/>
                <label class="field">
                    <span>{move || i18n.t("common.per_page")}</span>
                    <select data-testid="audit-page-size"
                        on:change=move |ev| {
                            if let Ok(n) = event_target_value(&ev).parse::<u32>() { page_size.set(n) }
                        }>
                        {PAGE_SIZES.iter().map(|n| {
                            let n = *n;
                            view! { <option value=n.to_string() prop:selected=move || page_size.get() == n>{n}</option> }
                        }).collect_view()}
                    </select>
                </label>
            </div>
            <div class="form-row">
                <button type="submit" class="primary" data-testid="audit-search">{move || i18n.t("audit.search")}</button>
                <button type="button" class="secondary" data-testid="audit-clear" on:click=clear>{move || i18n.t("audit.clear")}</button>
                <a class="button secondary" data-testid="audit-csv" download="audit-log.csv" href=move || applied.with(csv_href)>
                    {move || i18n.t("audit.csv")}
                </a>
            </div>
        </form>
    }
}

/// How many entries the search found, and their table (or why there is none).
#[component]
fn AuditResults(search: PagedSearch<AuditQuery, AuditPage>) -> impl IntoView {
    let loading = search.loading;
    view! {
        {move || search.answer.with(|a| search_state(a.as_ref()))}
        {move || search.page.get().map(|p| {
            let total = p.total;
            view! {
                <ResultsHead prefix="audit" total loading/>
                {if p.rows.is_empty() {
                    view! { <NothingFound prefix="audit"/> }.into_any()
                } else {
                    view! { <AuditTable rows=p.rows/> }.into_any()
                }}
            }
        })}
    }
}

#[component]
fn AuditTable(rows: Vec<AuditRow>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <TableWrap>
            <table class="list" data-testid="audit-table">
                <TableHead columns=vec!["audit.col.time", "audit.col.operation", "audit.col.status", "audit.col.number", "audit.col.sequence", "audit.col.user", "audit.col.details"]/>
                <tbody>
                    {rows.into_iter().map(|r| {
                        let number = r.document_number.clone().unwrap_or_default();
                        let number_attr = number.clone();
                        let fallback = (r.fallback_used != "NONE").then(|| r.fallback_used.clone());
                        view! {
                            <tr data-testid="audit-row" data-audit-id=r.id.to_string() data-operation=r.operation.clone()
                                data-number=number_attr>
                                <td class="nowrap" data-testid="audit-row-time">{let at = r.created_at; move || bangkok_time(&at)}</td>
                                <td data-testid="audit-row-operation"><code>{r.operation.clone()}</code></td>
                                <td>{r.status.clone()}</td>
                                <td class="mono" data-testid="audit-row-number">{number}</td>
                                <td>{r.sequence.map(|s| s.to_string())}</td>
                                <td>{r.user.clone()}{r.ip_address.clone().map(|ip| view! { <div class="small muted">{ip}</div> })}</td>
                                <td class="small details">
                                    {r.counter.clone().map(|c| view! {
                                        <div data-testid="audit-row-counter">{move || i18n.t("audit.counter_key")}": "{move || counter_label(&c, i18n.lang.get())}</div>
                                    })}
                                    {r.document_id.clone().map(|d| view! {
                                        <div>{move || i18n.t("audit.document_id")}": "<code>{d.clone()}</code></div>
                                    })}
                                    {fallback.map(|f| view! { <div>{move || i18n.t("audit.fallback")}": "{f.clone()}</div> })}
                                    {r.old_value.clone().map(|v| view! { <ValueLines label="audit.old" value=v/> })}
                                    {r.new_value.clone().map(|v| view! { <ValueLines label="audit.new" value=v/> })}
                                    // what few need, folded: a row stays a few lines high
                                    <details class="more" data-testid="audit-row-more">
                                        <summary>{move || i18n.t("audit.more")}</summary>
                                        {r.template_used.clone().map(|t| view! { <div data-testid="audit-row-template">{move || i18n.t("audit.template")}": "<code>{t.clone()}</code></div> })}
                                        {(r.counter.is_none()).then(|| r.counter_key.as_deref().map(counter_key_text)).flatten()
                                            .map(|k| view! { <div>{move || i18n.t("audit.counter_key")}": "{k.clone()}</div> })}
                                        {(r.total_ms > 0 || r.lock_wait_ms > 0 || r.retry_count > 0).then(|| {
                                            let (wait, retries, total) = (r.lock_wait_ms, r.retry_count, r.total_ms);
                                            view! {
                                                <div data-testid="audit-row-timing">
                                                    {move || format!("{} {wait} ms · {} {retries} · {} {total} ms", i18n.t("audit.lock_wait"), i18n.t("audit.retries"), i18n.t("audit.total"))}
                                                </div>
                                            }
                                        })}
                                        {r.user_agent.clone().map(|ua| view! { <div class="muted">{move || i18n.t("audit.user_agent")}": "{ua.clone()}</div> })}
                                        {r.metadata.clone().map(|metadata| view! {
                                            <dl class="muted meta">
                                                {move || metadata_lines(&metadata).into_iter().map(|(k, v)| view! { <div><dt>{k}</dt><dd>{v}</dd></div> }).collect_view()}
                                            </dl>
                                        })}
                                    </details>
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </TableWrap>
    }
}

/// An old or new value: a JSON object as one line per field (as metadata is shown), anything else as it is.
#[component]
fn ValueLines(label: &'static str, value: String) -> impl IntoView {
    let i18n = use_i18n();
    let lines = metadata_lines(&value);
    if lines.len() == 1 && lines[0].0.is_empty() {
        return view! { <div>{move || i18n.t(label)}": "<code>{value.clone()}</code></div> }.into_any();
    }
    view! {
        <div>
            {move || i18n.t(label)}":"
            <dl class="meta">{lines.into_iter().map(|(k, v)| view! { <div><dt>{k}</dt><dd>{v}</dd></div> }).collect_view()}</dl>
        </div>
    }
    .into_any()
}

/// A counter as people name it: `LCBP3-C3 · RFI · คคง. → ผรม.2 · 2568 (2025)`.
fn counter_label(c: &CounterName, lang: super::i18n::Lang) -> String {
    let mut parts = vec![c.project.clone(), c.correspondence_type.clone()];
    match (&c.originator, &c.recipient) {
        (Some(o), Some(r)) => parts.push(format!("{o} → {r}")),
        (Some(o), None) => parts.push(o.clone()),
        (None, Some(r)) => parts.push(format!("→ {r}")),
        (None, None) => {}
    }
    parts.extend([&c.sub_type, &c.rfa_type, &c.discipline].into_iter().flatten().cloned());
    parts.push(super::widgets::period_label(&c.period, lang));
    parts.join(" · ")
}

/// A stored counter key (JSON) as one line, when its parts could not be named: its parts and period, without the
/// ids of parts the template does not show.
fn counter_key_text(key: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(key) {
        Ok(serde_json::Value::Object(map)) => map
            .iter()
            .filter(|(_, v)| !matches!(v, serde_json::Value::Number(n) if n.as_i64() == Some(0)))
            .map(|(k, v)| format!("{k}={}", plain(v)))
            .collect::<Vec<_>>()
            .join(" · "),
        _ => key.to_string(),
    }
}

/// A value as text: strings without quotes, objects and arrays compact.
fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// An audit row's metadata (JSON) as lines for people: one per field, times (fields named `…At` holding epoch
/// milliseconds) in Bangkok time, nulls left out; text that is not a JSON object stays one line.
fn metadata_lines(metadata: &str) -> Vec<(String, String)> {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(metadata) else {
        return vec![(String::new(), metadata.to_string())];
    };
    map.iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| {
            let epoch_ms = v.as_i64().filter(|ms| k.ends_with("At") && *ms > 100_000_000_000);
            let text = match epoch_ms.and_then(chrono::DateTime::from_timestamp_millis) {
                Some(t) => bangkok_time(&t),
                None => plain(v),
            };
            (k.clone(), text)
        })
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_reads_as_lines_with_bangkok_times() {
        let lines = metadata_lines(r#"{"reason":"ขอรีเซ็ต","expiresAt":1749956400000,"requestId":7,"rollbackOf":null}"#);
        assert_eq!(
            lines,
            vec![("expiresAt".into(), "15/06/2568 10:00:00".into()), ("reason".into(), "ขอรีเซ็ต".into()), ("requestId".into(), "7".into())]
        );
        assert_eq!(metadata_lines("plain text"), vec![(String::new(), "plain text".into())]);
        assert_eq!(counter_key_text(r#"{"project_id":3,"originator_id":0,"period":"YEAR_2025"}"#), "period=YEAR_2025 · project_id=3");
    }

    #[test]
    fn a_counter_reads_by_its_codes() {
        let c = CounterName {
            project: "LCBP3-C3".into(),
            correspondence_type: "RFI".into(),
            originator: Some("คคง.".into()),
            recipient: Some("ผรม.2".into()),
            period: "YEAR_2025".into(),
            ..Default::default()
        };
        assert_eq!(counter_label(&c, super::super::i18n::Lang::Th), "LCBP3-C3 · RFI · คคง. → ผรม.2 · 2568 (2025)");
        let rfa = CounterName {
            discipline: Some("TER".into()),
            rfa_type: Some("RPT".into()),
            originator: None,
            recipient: None,
            period: "NONE".into(),
            ..c
        };
        assert_eq!(counter_label(&rfa, super::super::i18n::Lang::En), "LCBP3-C3 · RFI · RPT · TER · never starts again");
    }

    #[test]
    fn dates_are_bangkok_days() {
        assert_eq!(bangkok_midnight("2025-06-15", 0).unwrap().to_rfc3339(), "2025-06-14T17:00:00+00:00");
        assert_eq!(bangkok_midnight("2025-06-15", 1).unwrap().to_rfc3339(), "2025-06-15T17:00:00+00:00");
        assert_eq!(bangkok_midnight("", 0), None);
    }

    #[test]
    fn the_csv_link_carries_the_filters() {
        let q = AuditQuery {
            from: bangkok_midnight("2025-06-15", 0),
            number: Some("คคง.-ผรม.2".into()),
            operation: Some("RESERVE".into()),
            project_id: Some(ProjectId(3)),
            page: Some(2),
            ..Default::default()
        };
        assert_eq!(
            csv_href(&q),
            "/api/v1/document-numbering/logs/audit?format=csv&from=2025-06-14T17%3A00%3A00Z&operation=RESERVE\
             &number=%E0%B8%84%E0%B8%84%E0%B8%87.-%E0%B8%9C%E0%B8%A3%E0%B8%A1.2&projectId=3"
        );
    }
}
