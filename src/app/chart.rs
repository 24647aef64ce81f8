//! The geometry of `/charts`, pure (no Leptos, no I/O; unit-tested here): the drawing area, round axis maxima and
//! ticks, bar slots, stacked segments, line points, which days get a label, and a day as people read it (B.E. in
//! Thai). The page only turns these numbers into SVG.

use chrono::{Datelike, NaiveDate};

use super::i18n::Lang;

/// The drawing: a `viewBox` of `width` × `height`, the plot inside the margins (left: the y labels; bottom: the
/// dates). The SVG scales to its container's width, so these are proportions, not pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    pub width: f64,
    pub height: f64,
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
}

/// The frame both charts use.
pub const FRAME: Frame = Frame { width: 720.0, height: 300.0, left: 48.0, right: 12.0, top: 12.0, bottom: 36.0 };

impl Frame {
    pub fn view_box(&self) -> String {
        format!("0 0 {} {}", self.width, self.height)
    }
    pub fn plot_width(&self) -> f64 {
        self.width - self.left - self.right
    }
    pub fn plot_height(&self) -> f64 {
        self.height - self.top - self.bottom
    }
    /// The plot's bottom edge (value 0).
    pub fn base(&self) -> f64 {
        self.height - self.bottom
    }
    /// The y of `value` on an axis from 0 to `max` (clamped to the plot).
    pub fn y(&self, value: f64, max: f64) -> f64 {
        let share = if max > 0.0 { (value / max).clamp(0.0, 1.0) } else { 0.0 };
        self.base() - share * self.plot_height()
    }
    /// The centre x of day `i` of `n`.
    pub fn x(&self, i: usize, n: usize) -> f64 {
        let slot = self.plot_width() / n.max(1) as f64;
        self.left + slot * (i as f64 + 0.5)
    }
}

/// The smallest round number (1, 2 or 5 × 10ⁿ) at or above `max`, at least 1: the top of a count axis.
pub fn nice_ceiling(max: i64) -> i64 {
    let max = max.max(1);
    let mut unit = 1i64;
    loop {
        for m in [1, 2, 5] {
            if m * unit >= max {
                return m * unit;
            }
        }
        unit = unit.saturating_mul(10);
    }
}

/// The ticks of a count axis up to [`nice_ceiling`]`(max)`: 0 and then at most five whole, round steps.
pub fn count_ticks(max: i64) -> Vec<i64> {
    let top = nice_ceiling(max);
    let step = std::iter::successors(Some(1i64), |u| u.checked_mul(10))
        .flat_map(|u| [u, 2 * u, 5 * u])
        .find(|s| top % s == 0 && top / s <= 5)
        .unwrap_or(top);
    (0..=top / step).map(|i| i * step).collect()
}

/// A bar's place: its left x and its width (a fifth of the slot is the gap between bars).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slot {
    pub x: f64,
    pub width: f64,
}

pub fn slot(frame: &Frame, i: usize, n: usize) -> Slot {
    let full = frame.plot_width() / n.max(1) as f64;
    let width = full * 0.8;
    Slot { x: frame.left + full * i as f64 + (full - width) / 2.0, width }
}

/// One part of a stacked bar: its top y and height.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    pub y: f64,
    pub height: f64,
}

/// A stacked bar of `values` (bottom first) on an axis from 0 to `max`: a segment per value, none for a 0.
pub fn stack(frame: &Frame, values: &[i64], max: i64) -> Vec<Option<Segment>> {
    let mut below = 0i64;
    values
        .iter()
        .map(|v| {
            let (from, to) = (below, below + v.max(&0));
            below = to;
            (*v > 0).then(|| {
                let (top, bottom) = (frame.y(to as f64, max as f64), frame.y(from as f64, max as f64));
                Segment { y: top, height: bottom - top }
            })
        })
        .collect()
}

/// The points of a line of ratios (0–1, one per day) on a 0–100 % axis.
pub fn line_points(frame: &Frame, ratios: &[f64]) -> Vec<(f64, f64)> {
    ratios.iter().enumerate().map(|(i, r)| (frame.x(i, ratios.len()), frame.y(*r, 1.0))).collect()
}

/// The `points` attribute of an SVG polyline.
pub fn points_attr(points: &[(f64, f64)]) -> String {
    points.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect::<Vec<_>>().join(" ")
}

/// The days (of `n`) that get a date under the axis: at most `at_most`, evenly spaced, always the last (today).
pub fn labelled_days(n: usize, at_most: usize) -> Vec<usize> {
    if n == 0 || at_most == 0 {
        return Vec::new();
    }
    let step = n.div_ceil(at_most);
    let mut days: Vec<usize> = (0..n).rev().step_by(step).collect();
    days.reverse();
    days
}

const THAI_MONTHS: [&str; 12] = ["ม.ค.", "ก.พ.", "มี.ค.", "เม.ย.", "พ.ค.", "มิ.ย.", "ก.ค.", "ส.ค.", "ก.ย.", "ต.ค.", "พ.ย.", "ธ.ค."];

/// A day as people read it: `15 มิ.ย. 2568` (B.E.) in Thai, `15 Jun 2025` in English.
pub fn day_label(lang: Lang, day: NaiveDate) -> String {
    match lang {
        Lang::Th => format!("{} {} {}", day.day(), THAI_MONTHS[day.month0() as usize], day.year() + 543),
        Lang::En => day.format("%-d %b %Y").to_string(),
    }
}

/// A day of an answer (`YYYY-MM-DD`) as people read it; the text itself if it is not a date.
pub fn day_text(lang: Lang, day: &str) -> String {
    day.parse::<NaiveDate>().map_or_else(|_| day.to_string(), |d| day_label(lang, d))
}

/// A ratio as a percentage with one decimal: `0.9554` → `95.5 %`.
pub fn percent(ratio: f64) -> String {
    format!("{:.1} %", ratio * 100.0)
}

/// Series colours, told apart by people with the common colour-vision deficiencies (Okabe–Ito, then darker ones);
/// a series keeps its colour by its place.
pub const PALETTE: [&str; 10] = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000", "#8c564b", "#7f7f7f"];

pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Text for SVG markup: the reference data's codes and names come from people.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The opening of a chart: the scaled `<svg>`, named by its `<title>` and described by its `<desc>`.
fn open_svg(id: &str, title: &str, desc: &str) -> String {
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart-svg" viewBox="{vb}" preserveAspectRatio="xMidYMid meet" role="img" aria-labelledby="{id}-title {id}-desc" data-testid="{id}"><title id="{id}-title">{t}</title><desc id="{id}-desc">{d}</desc>"#,
        vb = FRAME.view_box(),
        t = escape(title),
        d = escape(desc),
    )
}

/// A date under the x axis: where it stands, how it is anchored there, its text.
#[derive(Clone, Debug, PartialEq)]
pub struct AxisLabel {
    pub x: f64,
    pub end_anchored: bool,
    pub text: String,
}

/// The tick font is 12 px in a drawing 720 units wide: at most about 0.62 em a character (digits, Latin; Thai vowel
/// and tone marks over or under a letter take no width of their own, but are counted: a label is never narrower).
const TICK_CHAR_WIDTH: f64 = 7.5;
/// The least space between two dates.
const TICK_GAP: f64 = 10.0;

impl AxisLabel {
    fn width(&self) -> f64 {
        self.text.chars().count() as f64 * TICK_CHAR_WIDTH
    }
    /// Its left and right ends.
    fn extent(&self) -> (f64, f64) {
        let w = self.width();
        if self.end_anchored {
            (self.x - w, self.x)
        } else {
            (self.x - w / 2.0, self.x + w / 2.0)
        }
    }
}

/// The dates under the axis: at most six, evenly spaced, the last (today) ending at the plot's right edge; a date
/// that would touch the next one is left out, so that no two ever overlap.
pub fn axis_labels(lang: Lang, days: &[String]) -> Vec<AxisLabel> {
    let f = FRAME;
    let mut kept: Vec<AxisLabel> = Vec::new();
    for i in labelled_days(days.len(), 6).into_iter().rev() {
        let last = i + 1 == days.len() && days.len() > 1;
        let label = AxisLabel { x: if last { f.width - f.right } else { f.x(i, days.len()) }, end_anchored: last, text: day_text(lang, &days[i]) };
        let fits = kept.last().is_none_or(|next| label.extent().1 + TICK_GAP <= next.extent().0);
        if fits {
            kept.push(label);
        }
    }
    kept.reverse();
    kept
}

/// The dates under the x axis and the axis line.
fn x_axis(out: &mut String, lang: Lang, days: &[String]) {
    let f = FRAME;
    out.push_str(&format!(r#"<line class="axis" x1="{}" x2="{}" y1="{b}" y2="{b}"/>"#, f.left, f.width - f.right, b = f.base()));
    for label in axis_labels(lang, days) {
        out.push_str(&format!(
            r#"<text class="tick" x="{:.1}" y="{:.1}" text-anchor="{}">{}</text>"#,
            label.x,
            f.base() + 22.0,
            if label.end_anchored { "end" } else { "middle" },
            escape(&label.text)
        ));
    }
}

/// A horizontal grid line at `y` with its label at the left.
fn grid_line(out: &mut String, y: f64, label: &str) {
    let f = FRAME;
    out.push_str(&format!(
        r#"<line class="grid" x1="{}" x2="{}" y1="{y:.1}" y2="{y:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
        f.left,
        f.width - f.right,
        f.left - 6.0,
        y + 4.0,
        escape(label)
    ));
}

/// What a daily chart draws: the days (`YYYY-MM-DD`) and, per series (bottom of the stack first), its code and
/// counts.
pub struct Bars<'a> {
    pub days: &'a [String],
    pub series: Vec<(&'a str, &'a [i64])>,
}

/// The stacked bars of numbers per day and type, as SVG markup: each bar part a `<rect>` with the day, the type and
/// the count in `data-*` and a `<title>` tooltip.
pub fn bars_svg(lang: Lang, id: &str, title: &str, desc: &str, bars: &Bars) -> String {
    let f = FRAME;
    let n = bars.days.len();
    let totals: Vec<i64> = (0..n).map(|d| bars.series.iter().map(|(_, c)| c.get(d).copied().unwrap_or(0).max(0)).sum()).collect();
    let ticks = count_ticks(totals.iter().copied().max().unwrap_or(0));
    let top = *ticks.last().unwrap_or(&1);
    let mut out = open_svg(id, title, desc);
    for t in &ticks {
        grid_line(&mut out, f.y(*t as f64, top as f64), &t.to_string());
    }
    for (d, day) in bars.days.iter().enumerate() {
        let values: Vec<i64> = bars.series.iter().map(|(_, c)| c.get(d).copied().unwrap_or(0)).collect();
        let place = slot(&f, d, n);
        let label = day_text(lang, day);
        for (j, seg) in stack(&f, &values, top).into_iter().enumerate() {
            let Some(seg) = seg else { continue };
            let code = escape(bars.series[j].0);
            out.push_str(&format!(
                r#"<rect class="bar" data-testid="chart-bar" x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{}" data-date="{day}" data-type="{code}" data-value="{v}"><title>{} · {code}: {v}</title></rect>"#,
                place.x,
                seg.y,
                place.width,
                seg.height,
                colour(j),
                escape(&label),
                v = values[j],
            ));
        }
    }
    x_axis(&mut out, lang, bars.days);
    out.push_str("</svg>");
    out
}

/// What a utilization chart draws: the days and, per line, its label, the counter's id and its ratios (0–1) and
/// highest sequences per day.
pub struct Lines<'a> {
    pub days: &'a [String],
    pub series: Vec<(String, i64, &'a [f64], &'a [i64])>,
}

/// The line at which a counter is nearly full (the notifications (docs/rules/api.md#notifications-and-live-screens) speak of 90 % and 95 %).
pub const WARN_AT: f64 = 0.95;

/// The utilization lines on a 0–100 % axis with the 95 % line marked, as SVG markup: a point where a line moves
/// (and on the last day) with the day, the counter and the value in `data-*` and a `<title>` tooltip.
pub fn lines_svg(lang: Lang, id: &str, title: &str, desc: &str, warn_label: &str, lines: &Lines) -> String {
    let f = FRAME;
    let n = lines.days.len();
    let mut out = open_svg(id, title, desc);
    for t in [0u32, 25, 50, 75, 100] {
        grid_line(&mut out, f.y(f64::from(t) / 100.0, 1.0), &format!("{t} %"));
    }
    let warn = f.y(WARN_AT, 1.0);
    out.push_str(&format!(
        r#"<line class="limit" data-testid="chart-limit" x1="{}" x2="{}" y1="{warn:.1}" y2="{warn:.1}"/><text class="limit-label" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
        f.left,
        f.width - f.right,
        f.width - f.right - 4.0,
        warn + 14.0,
        escape(warn_label)
    ));
    for (j, (label, counter_id, ratios, sequences)) in lines.series.iter().enumerate() {
        let points = line_points(&f, ratios);
        out.push_str(&format!(r#"<polyline class="line" fill="none" stroke="{}" points="{}"/>"#, colour(j), points_attr(&points)));
        for (d, (x, y)) in points.iter().enumerate() {
            let moved = d == 0 || ratios.get(d) != ratios.get(d - 1);
            if !(moved || d + 1 == n) {
                continue;
            }
            let (ratio, sequence) = (ratios[d], sequences.get(d).copied().unwrap_or(0));
            out.push_str(&format!(
                r#"<circle class="point" data-testid="chart-point" cx="{x:.1}" cy="{y:.1}" r="3" fill="{}" data-date="{}" data-counter="{counter_id}" data-value="{ratio:.6}" data-sequence="{sequence}"><title>{} · {}: {sequence} ({})</title></circle>"#,
                colour(j),
                lines.days[d],
                escape(&day_text(lang, &lines.days[d])),
                escape(label),
                percent(ratio),
            ));
        }
    }
    x_axis(&mut out, lang, lines.days);
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_axis_tops_at_a_round_number() {
        assert_eq!([0, 1, 2, 3, 5, 7, 10, 11, 40, 99, 101, 2_345].map(nice_ceiling), [1, 1, 2, 5, 5, 10, 10, 20, 50, 100, 200, 5_000]);
    }

    #[test]
    fn ticks_are_whole_even_steps_up_to_the_top() {
        assert_eq!(count_ticks(0), [0, 1]);
        assert_eq!(count_ticks(3), [0, 1, 2, 3, 4, 5]);
        assert_eq!(count_ticks(7), [0, 2, 4, 6, 8, 10]);
        assert_eq!(count_ticks(17), [0, 5, 10, 15, 20]);
        assert_eq!(count_ticks(45), [0, 10, 20, 30, 40, 50]);
        assert_eq!(count_ticks(180), [0, 50, 100, 150, 200]);
        for max in 0..3000 {
            let ticks = count_ticks(max);
            assert!(ticks.len() >= 2 && ticks.len() <= 6, "{max}: {ticks:?}");
            assert_eq!(*ticks.last().unwrap(), nice_ceiling(max), "{max}");
            assert!(ticks.windows(2).all(|w| w[1] - w[0] == ticks[1]), "{max}: {ticks:?}");
        }
    }

    #[test]
    fn bars_fill_the_plot_in_order_with_gaps() {
        let f = FRAME;
        let first = slot(&f, 0, 90);
        let last = slot(&f, 89, 90);
        let full = f.plot_width() / 90.0;
        assert!((first.x - (f.left + full * 0.1)).abs() < 1e-9);
        assert!((first.width - full * 0.8).abs() < 1e-9);
        assert!((last.x + last.width + full * 0.1 - (f.width - f.right)).abs() < 1e-9);
        assert!((f.x(0, 90) - (first.x + first.width / 2.0)).abs() < 1e-9, "a point sits over its day's bar");
    }

    #[test]
    fn a_stack_rises_from_the_base_without_zero_segments() {
        let f = FRAME;
        let s = stack(&f, &[2, 0, 3], 10);
        let unit = f.plot_height() / 10.0;
        let a = s[0].unwrap();
        assert!((a.y + a.height - f.base()).abs() < 1e-9 && (a.height - 2.0 * unit).abs() < 1e-9);
        assert_eq!(s[1], None);
        let c = s[2].unwrap();
        assert!((c.y + c.height - a.y).abs() < 1e-9 && (c.height - 3.0 * unit).abs() < 1e-9);
        assert!((c.y - f.y(5.0, 10.0)).abs() < 1e-9);
    }

    #[test]
    fn ratios_map_to_the_percent_axis() {
        let f = FRAME;
        let p = line_points(&f, &[0.0, 0.5, 1.0, 1.5]);
        assert_eq!(p[0].1, f.base());
        assert!((p[1].1 - (f.base() - f.plot_height() / 2.0)).abs() < 1e-9);
        assert_eq!(p[2].1, f.top);
        assert_eq!(p[3].1, f.top, "clamped");
        assert_eq!(points_attr(&[(1.0, 2.25), (3.0, 4.0)]), "1.0,2.2 3.0,4.0");
    }

    #[test]
    fn labels_are_spaced_and_end_today() {
        assert_eq!(labelled_days(90, 6), [14, 29, 44, 59, 74, 89]);
        assert_eq!(labelled_days(3, 6), [0, 1, 2]);
        assert_eq!(labelled_days(1, 6), [0]);
        assert!(labelled_days(0, 6).is_empty());
        assert!(labelled_days(366, 6).len() <= 6);
    }

    #[test]
    fn no_two_dates_under_the_axis_overlap_and_today_is_always_there() {
        for n in [1usize, 2, 7, 30, 89, 90, 91, 180, 366] {
            let start = NaiveDate::from_ymd_opt(2026, 8, 31).unwrap();
            let days: Vec<String> = (0..n).map(|i| (start + chrono::Days::new(i as u64)).to_string()).collect();
            for lang in [Lang::Th, Lang::En] {
                let labels = axis_labels(lang, &days);
                assert_eq!(labels.last().map(|l| l.text.clone()), Some(day_text(lang, &days[n - 1])), "{n} days: today is labelled");
                for pair in labels.windows(2) {
                    assert!(pair[0].extent().1 + TICK_GAP <= pair[1].extent().0, "{n} days, {lang:?}: {pair:?} overlap");
                }
                let first = labels[0].extent().0;
                assert!(first >= 0.0, "{n} days: the first date starts inside the drawing ({first})");
            }
        }
        // 90 days in Thai, as /charts shows them at 1366 px: `14 พ.ย. 2569` no longer runs into `29 พ.ย. 2569`
        let start = NaiveDate::from_ymd_opt(2026, 8, 31).unwrap();
        let days: Vec<String> = (0..90).map(|i| (start + chrono::Days::new(i)).to_string()).collect();
        let texts: Vec<String> = axis_labels(Lang::Th, &days).into_iter().map(|l| l.text).collect();
        assert_eq!(texts.last().unwrap(), "28 พ.ย. 2569");
        assert!(!texts.contains(&"13 พ.ย. 2569".to_string()), "{texts:?}");
    }

    #[test]
    fn the_bars_carry_their_day_type_and_value() {
        let days = ["2025-06-14".to_string(), "2025-06-15".to_string()];
        let (letters, memos) = ([0i64, 3], [1i64, 2]);
        let svg =
            bars_svg(Lang::Th, "daily-chart", "ออก <เลข>", "d", &Bars { days: &days, series: vec![("LETTER", &letters[..]), ("M&M", &memos[..])] });
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains(r#"aria-labelledby="daily-chart-title daily-chart-desc""#));
        assert!(svg.contains(r#"<title id="daily-chart-title">ออก &lt;เลข&gt;</title>"#));
        assert_eq!(svg.matches(r#"data-testid="chart-bar""#).count(), 3, "no part for a zero");
        assert!(svg.contains(r#"data-date="2025-06-15" data-type="LETTER" data-value="3"><title>15 มิ.ย. 2568 · LETTER: 3</title>"#));
        assert!(svg.contains(r#"data-type="M&amp;M" data-value="1""#));
        // the highest day is 5: the axis tops at 5
        assert!(svg.contains(r#"text-anchor="end">5</text>"#) && !svg.contains(r#"text-anchor="end">10</text>"#));
    }

    #[test]
    fn the_lines_mark_where_they_move_and_the_warning_line() {
        let days = ["2025-06-13".to_string(), "2025-06-14".to_string(), "2025-06-15".to_string()];
        let (ratios, sequences) = ([0.1, 0.1, 0.96], [1i64, 1, 96]);
        let svg = lines_svg(
            Lang::En,
            "util-chart",
            "t",
            "d",
            "95 %",
            &Lines { days: &days, series: vec![("#7 LCBP3".into(), 7, &ratios[..], &sequences[..])] },
        );
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert_eq!(svg.matches(r#"data-testid="chart-point""#).count(), 2, "the first day and the move");
        assert!(svg.contains(
            r#"data-date="2025-06-15" data-counter="7" data-value="0.960000" data-sequence="96"><title>15 Jun 2025 · #7 LCBP3: 96 (96.0 %)</title>"#
        ));
        let warn = FRAME.y(WARN_AT, 1.0);
        assert!(svg.contains(&format!(r#"data-testid="chart-limit" x1="48" x2="708" y1="{warn:.1}""#)));
    }

    #[test]
    fn a_day_reads_in_the_buddhist_era_in_thai() {
        let d: NaiveDate = "2025-06-15".parse().unwrap();
        assert_eq!(day_label(Lang::Th, d), "15 มิ.ย. 2568");
        assert_eq!(day_label(Lang::En, d), "15 Jun 2025");
        assert_eq!(day_text(Lang::Th, "2025-01-01"), "1 ม.ค. 2568");
        assert_eq!(day_text(Lang::Th, "not a day"), "not a day");
        assert_eq!(percent(0.9554), "95.5 %");
    }
}
