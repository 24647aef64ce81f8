//! `/charts` — a picture of the numbering for project admins (their projects) and super admins
//! (all): numbers issued per Bangkok day and correspondence type, stacked, and the utilization of the current
//! period's fullest counters at the end of each day, with the 95 % line. Each chart is SVG drawn here (geometry and
//! markup in `chart.rs`), with a table of the same values beside it for screen readers.

use leptos::prelude::*;

use super::api::{self, error_text};
use super::chart::{self, Bars, Lines};
use super::i18n::{use_i18n, word};
use super::widgets::{choice, client_fetch, parts_label, period_label, AdminContext, AdminPage, ErrorBox, IdSelect, TableWrap};
use crate::contract::stats::DEFAULT_STATS_DAYS;
use crate::contract::*;

#[component]
pub fn ChartsPage() -> impl IntoView {
    view! {
        <AdminPage title="chart.title" wide=true content=|ctx: AdminContext| view! { <Charts ctx/> }/>
    }
}

#[component]
fn Charts(ctx: AdminContext) -> impl IntoView {
    let i18n = use_i18n();
    let AdminContext { user, data } = ctx;
    let project = RwSignal::new(None::<ProjectId>);
    let project_choices = Signal::derive({
        let list: Vec<_> = data.projects.iter().filter(|p| user.can_edit_templates(p.id)).map(|p| choice(p.id, &p.code, &p.name)).collect();
        move || list.clone()
    });
    let query = Memo::new(move |_| StatsQuery { days: Some(DEFAULT_STATS_DAYS), project_id: project.get(), ..Default::default() });
    let daily = client_fetch(move || {
        let q = query.get();
        async move { api::fetch_daily_stats(q).await.map_err(|e| error_text(&e)) }
    });
    let usage = client_fetch(move || {
        let q = query.get();
        async move { api::fetch_utilization_stats(q).await.map_err(|e| error_text(&e)) }
    });

    view! {
        <p class="muted small">{move || i18n.t("chart.intro")}</p>
        <div class="filters form-grid">
            <IdSelect label="ctr.project" testid="chart-filter-project" choices=project_choices value=project placeholder="common.all"/>
        </div>
        <section class="chart" aria-labelledby="daily-heading">
            <h2 id="daily-heading">{move || i18n.t("chart.daily")}</h2>
            {move || match daily.get() {
                None => view! { <p class="muted">{i18n.t("common.loading")}</p> }.into_any(),
                Some(Err(m)) => view! { <ErrorBox message=m/> }.into_any(),
                Some(Ok(d)) => view! { <DailyChart data=d/> }.into_any(),
            }}
        </section>
        <section class="chart" aria-labelledby="usage-heading">
            <h2 id="usage-heading">{move || i18n.t("chart.usage")}</h2>
            {move || match usage.get() {
                None => view! { <p class="muted">{i18n.t("common.loading")}</p> }.into_any(),
                Some(Err(m)) => view! { <ErrorBox message=m/> }.into_any(),
                Some(Ok(u)) => view! { <UsageChart data=u/> }.into_any(),
            }}
        </section>
    }
}

/// A legend entry: the series' colour and its words.
#[component]
fn Swatch(i: usize, text: String) -> impl IntoView {
    view! {
        <li>
            <svg class="swatch" viewBox="0 0 12 12" aria-hidden="true" focusable="false"><rect width="12" height="12" fill=chart::colour(i)/></svg>
            {text}
        </li>
    }
}

#[component]
fn DailyChart(data: DailyIssued) -> impl IntoView {
    let i18n = use_i18n();
    let total: i64 = data.types.iter().flat_map(|t| t.counts.iter()).sum();
    let svg = {
        let data = data.clone();
        move || {
            let lang = i18n.lang.get();
            let bars =
                Bars { days: &data.days, series: data.types.iter().map(|t| (t.correspondence_type_code.as_str(), t.counts.as_slice())).collect() };
            let desc = format!("{} {total} {}", word(lang, "chart.daily.desc"), word(lang, "chart.daily.desc_unit"));
            chart::bars_svg(lang, "daily-chart", word(lang, "chart.daily"), &desc, &bars)
        }
    };
    let legend: Vec<_> = data
        .types
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let text = if t.correspondence_type_name.is_empty() {
                t.correspondence_type_code.clone()
            } else {
                format!("{} — {}", t.correspondence_type_code, t.correspondence_type_name)
            };
            view! { <Swatch i text/> }
        })
        .collect();
    let empty = data.types.is_empty();
    let codes: Vec<String> = data.types.iter().map(|t| t.correspondence_type_code.clone()).collect();
    let rows: Vec<(String, Vec<i64>)> =
        data.days.iter().enumerate().map(|(d, day)| (day.clone(), data.types.iter().map(|t| t.counts[d]).collect())).collect();
    view! {
        <div class="chart-frame" data-testid="daily-frame" data-total=total.to_string() inner_html=svg></div>
        {empty.then(|| view! { <p class="muted" data-testid="daily-empty">{move || i18n.t("chart.none")}</p> })}
        <ul class="chart-legend" aria-label=move || i18n.t("chart.legend")>{legend}</ul>
        <details class="chart-data">
            <summary>{move || i18n.t("chart.table")}</summary>
            <TableWrap label="chart.daily">
                <table class="list" data-testid="daily-table">
                    <caption>{move || i18n.t("chart.daily")}</caption>
                    <thead>
                        <tr>
                            <th scope="col">{move || i18n.t("chart.col.day")}</th>
                            {codes.iter().map(|c| view! { <th scope="col">{c.clone()}</th> }).collect_view()}
                            <th scope="col">{move || i18n.t("chart.col.total")}</th>
                        </tr>
                    </thead>
                    <tbody>
                        {rows.into_iter().map(|(day, counts)| {
                            let sum: i64 = counts.iter().sum();
                            let shown = day.clone();
                            view! {
                                <tr data-date=day>
                                    <th scope="row" class="nowrap">{move || chart::day_text(i18n.lang.get(), &shown)}</th>
                                    {counts.into_iter().map(|c| view! { <td>{c}</td> }).collect_view()}
                                    <td><strong>{sum}</strong></td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            </TableWrap>
        </details>
    }
}

/// A counter as a line's legend names it: `#12 LCBP3 · LETTER · คคง. → สคฉ.3 · 2568 (2025)`.
fn counter_label(c: &CounterView, lang: super::i18n::Lang) -> String {
    let parts = parts_label(c);
    let mut words = vec![format!("#{} {}", c.id, c.project_code), c.correspondence_type_code.clone()];
    if !parts.is_empty() {
        words.push(parts);
    }
    words.push(period_label(&c.period, lang));
    words.join(" · ")
}

#[component]
fn UsageChart(data: UtilizationHistory) -> impl IntoView {
    let i18n = use_i18n();
    let svg = {
        let data = data.clone();
        move || {
            let lang = i18n.lang.get();
            let lines = Lines {
                days: &data.days,
                series: data
                    .counters
                    .iter()
                    .map(|s| (counter_label(&s.counter, lang), s.counter.id.0, s.utilization.as_slice(), s.last_sequences.as_slice()))
                    .collect(),
            };
            let warn = format!("{} {}", word(lang, "chart.usage.warn"), chart::percent(chart::WARN_AT));
            chart::lines_svg(lang, "usage-chart", word(lang, "chart.usage"), word(lang, "chart.usage.desc"), &warn, &lines)
        }
    };
    let counters: Vec<CounterView> = data.counters.iter().map(|s| s.counter.clone()).collect();
    let legend = {
        let counters = counters.clone();
        move || {
            let lang = i18n.lang.get();
            counters.iter().enumerate().map(|(i, c)| view! { <Swatch i text=counter_label(c, lang)/> }).collect_view()
        }
    };
    let empty = counters.is_empty();
    let rows: Vec<(String, Vec<(i64, f64)>)> = data
        .days
        .iter()
        .enumerate()
        .map(|(d, day)| (day.clone(), data.counters.iter().map(|s| (s.last_sequences[d], s.utilization[d])).collect()))
        .collect();
    view! {
        <div class="chart-frame" data-testid="usage-frame" inner_html=svg></div>
        {empty.then(|| view! { <p class="muted" data-testid="usage-empty">{move || i18n.t("chart.none")}</p> })}
        <ul class="chart-legend" aria-label=move || i18n.t("chart.legend")>{legend}</ul>
        <details class="chart-data">
            <summary>{move || i18n.t("chart.table")}</summary>
            <TableWrap label="chart.usage">
                <table class="list" data-testid="usage-table">
                    <caption>{move || i18n.t("chart.usage")}</caption>
                    <thead>
                        <tr>
                            <th scope="col">{move || i18n.t("chart.col.day")}</th>
                            {counters.iter().map(|c| {
                                let c = c.clone();
                                view! { <th scope="col" class="small">{move || counter_label(&c, i18n.lang.get())}</th> }
                            }).collect_view()}
                        </tr>
                    </thead>
                    <tbody>
                        {rows.into_iter().map(|(day, values)| {
                            let shown = day.clone();
                            view! {
                                <tr data-date=day>
                                    <th scope="row" class="nowrap">{move || chart::day_text(i18n.lang.get(), &shown)}</th>
                                    {values.into_iter().map(|(sequence, ratio)| view! {
                                        <td class="nowrap">{sequence}" ("{chart::percent(ratio)}")"</td>
                                    }).collect_view()}
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            </TableWrap>
        </details>
    }
}
