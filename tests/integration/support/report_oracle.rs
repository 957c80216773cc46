//! The report oracle (issue 29, "every word true"): reads back report.txt, README.md and
//! samples.svg and holds every printed number with a unit or `%` to points.tsv and
//! comparison.tsv, every printed unit to its series' one display unit, and every stated
//! bound ("drifted by at most X", "the farthest two by X") to the data it bounds.
//!
//! It is written from the files' formats, not from aba's code, so that a wrong rounding, a
//! second unit or a bound that does not hold in aba's report code cannot also hide in the
//! checker. It found, or would have found, issue 28's "at most 1.10 % (RMS over pairs)"
//! beside points 1.46 % apart and a metric printed in three units.

use std::{collections::BTreeSet, fs, path::Path};

/// What the oracle held to the data in one results directory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Printed numbers with a unit or `%` found in the TSV files.
    pub numbers: usize,
    /// Printed numbers recognised as constant wording by the allow-list.
    pub constants: usize,
    /// Printed units checked against their series' display unit.
    pub units: usize,
    /// Stated bounds checked against the data they bound.
    pub bounds: usize,
}

impl std::ops::AddAssign for Tally {
    fn add_assign(&mut self, other: Self) {
        self.numbers += other.numbers;
        self.constants += other.constants;
        self.units += other.units;
        self.bounds += other.bounds;
    }
}

/// Checks the report files in `dir` (those that exist) and panics naming every finding.
#[track_caller]
pub fn check_dir(dir: &Path) -> Tally {
    let read = |name: &str| fs::read_to_string(dir.join(name)).ok();
    let texts: Vec<(&str, String)> = ["report.txt", "README.md", "samples.svg"]
        .into_iter()
        .filter_map(|name| read(name).map(|text| (name, text)))
        .collect();
    let points = read("points.tsv").expect("the oracle needs points.tsv");
    let comparison = read("comparison.tsv").expect("the oracle needs comparison.tsv");
    let recipe = read("recipe.toml").unwrap_or_default();
    let (tally, findings) = check(&texts, &points, &comparison, &recipe);
    eprintln!("report oracle on {}: {tally:?}", dir.display());
    assert!(
        findings.is_empty(),
        "the report oracle disagrees with {} ({} findings):\n{}",
        dir.display(),
        findings.len(),
        findings.join("\n")
    );
    tally
}

/// report.txt of results directory `dir`, after the oracle has held it, README.md and
/// samples.svg to the directory's TSV files.
#[track_caller]
pub fn checked_report(dir: &Path) -> String {
    check_dir(dir);
    fs::read_to_string(dir.join("report.txt")).expect("report.txt")
}

/// One row's number from a TSV file, with what it measures.
#[derive(Clone, Debug)]
struct Value {
    /// The TSV unit of the series (`ns/read`).
    unit: String,
    /// A percentage (cv_pct, change_pct, a CI bound) rather than a value in `unit`.
    pct: bool,
    value: f64,
}

/// One point mean of points.tsv (analysis `all`).
#[derive(Clone, Debug)]
struct PointMean {
    series: Series,
    kernel: String,
    order: u32,
    mean: f64,
}

/// A series' names as report text may print them.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Series {
    workload: String,
    case: String,
    metric: String,
}

impl Series {
    fn from_row(c: &[&str]) -> Self {
        Self {
            workload: c[0].to_owned(),
            case: c[1].to_owned(),
            metric: c[2].to_owned(),
        }
    }

    /// Whether `label` (as printed in a table header) names this series.
    fn named(&self, label: &str) -> bool {
        let mut names = vec![
            self.metric.clone(),
            self.workload.clone(),
            format!("{}/{}", self.workload, self.metric),
        ];
        if !self.case.is_empty() {
            names.push(format!("{}/{}/{}", self.workload, self.case, self.metric));
            names.push(format!("{}/{}", self.workload, self.case));
        }
        names.iter().any(|n| n == label)
    }
}

/// The data of points.tsv and comparison.tsv the oracle compares with.
struct Data {
    values: Vec<Value>,
    means: Vec<PointMean>,
    /// `(series, kernel, analysis, drift_pct)`.
    drifts: Vec<(Series, String, String, f64)>,
    /// TSV unit → display unit.
    display: Vec<(String, String)>,
}

/// The unit of a difference of two percentages (`differ by -0.10 points`).
const POINTS: &str = "points";

/// Quantities of comparison.tsv that are percentages.
fn is_pct_quantity(quantity: &str) -> bool {
    // A case comparison's rows are the series' quantities prefixed `case_`.
    let quantity = quantity.strip_prefix("case_").unwrap_or(quantity);
    quantity.contains("pct")
        || (quantity.starts_with("ci95_")
            && (quantity.ends_with("_lo") || quantity.ends_with("_hi")))
}

/// Quantities of comparison.tsv that are values in the series' unit.
const UNIT_QUANTITIES: [&str; 5] = [
    "mean",
    "kernel_mean",
    "diff",
    "case_control_mean",
    "case_treatment_mean",
];

/// Columns of points.tsv that hold values in the series' unit, and the percentage column.
const POINT_UNIT_COLUMNS: [&str; 6] = ["mean", "sd", "min", "max", "median", "mad"];

fn parse_data(points: &str, comparison: &str) -> Data {
    let mut values = Vec::new();
    let mut means = Vec::new();
    let mut drifts = Vec::new();
    let mut lines = points.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name);
    for line in lines {
        let c: Vec<&str> = line.split('\t').collect();
        if c.len() < header.len() {
            continue;
        }
        let unit = c[3].to_owned();
        for name in POINT_UNIT_COLUMNS {
            if let Some(value) = col(name).and_then(|i| c[i].parse().ok()) {
                values.push(Value {
                    unit: unit.clone(),
                    pct: false,
                    value,
                });
            }
        }
        if let Some(value) = col("cv_pct").and_then(|i| c[i].parse().ok()) {
            values.push(Value {
                unit: unit.clone(),
                pct: true,
                value,
            });
        }
        let (Some(order), Some(kernel), Some(mean)) = (col("order"), col("kernel"), col("mean"))
        else {
            continue;
        };
        if c[4] == "all"
            && let (Ok(order), Ok(mean)) = (c[order].parse(), c[mean].parse())
        {
            means.push(PointMean {
                series: Series::from_row(&c),
                kernel: c[kernel].to_owned(),
                order,
                mean,
            });
        }
    }
    for line in comparison.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        if c.len() < 8 {
            continue;
        }
        let Ok(value) = c[7].parse::<f64>() else {
            continue;
        };
        let quantity = c[5];
        if quantity == "drift_pct" {
            drifts.push((
                Series::from_row(&c),
                c[6].to_owned(),
                c[4].to_owned(),
                value,
            ));
        }
        if quantity.starts_with("difference_") && quantity != "difference_nu" {
            // aba compare's difference of two changes, in percentage points.
            values.push(Value {
                unit: POINTS.to_owned(),
                pct: false,
                value,
            });
        } else if is_pct_quantity(quantity) {
            values.push(Value {
                unit: c[3].to_owned(),
                pct: true,
                value,
            });
        } else if UNIT_QUANTITIES.contains(&quantity) {
            values.push(Value {
                unit: c[3].to_owned(),
                pct: false,
                value,
            });
        }
    }
    let mut display = Vec::new();
    if values.iter().any(|v| v.unit == POINTS) {
        display.push((POINTS.to_owned(), POINTS.to_owned()));
    }
    // aba compare's TSV has no points.tsv: its point means are its `mean` rows.
    let means_of = if points.is_empty() {
        comparison
            .lines()
            .map(|l| {
                let c: Vec<&str> = l.split('\t').collect();
                if c.len() > 7 && c[5] == "mean" {
                    [c[0], c[1], c[2], c[3], "all", "", "", "", "", c[7]].join("\t")
                } else {
                    String::new()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        points.to_owned()
    };
    let points = means_of.as_str();
    for line in points.lines().skip(1) {
        let unit = line.split('\t').nth(3).unwrap_or_default().to_owned();
        if unit.is_empty() || display.iter().any(|(u, _)| *u == unit) {
            continue;
        }
        let smallest = points
            .lines()
            .skip(1)
            .map(|l| l.split('\t').collect::<Vec<_>>())
            .filter(|c| c.len() > 9 && c[3] == unit && c[4] == "all")
            .filter_map(|c| c[9].parse::<f64>().ok())
            .map(f64::abs)
            .filter(|v| *v > 0.0)
            .fold(f64::INFINITY, f64::min);
        display.push((unit.clone(), display_unit(&unit, smallest)));
    }
    Data {
        values,
        means,
        drifts,
        display,
    }
}

/// Time prefixes as powers of ten of a second.
const TIME: [(&str, i32); 6] = [
    ("ns", -9),
    ("us", -6),
    ("µs", -6),
    ("μs", -6),
    ("ms", -3),
    ("s", 0),
];

/// A unit split into its time prefix's exponent and the rest (`ns/read` → (-9, `/read`)).
fn time_unit(unit: &str) -> Option<(i32, &str)> {
    let (head, per) = unit.find('/').map_or((unit, ""), |i| unit.split_at(i));
    TIME.iter()
        .find(|(t, _)| *t == head)
        .map(|(_, e)| (*e, per))
}

/// The one display unit of values in `unit` whose smallest point mean is `smallest`: the
/// time prefix that puts it in [1, 1000), else the unit as the recipe writes it.
fn display_unit(unit: &str, smallest: f64) -> String {
    let Some((exponent, per)) = time_unit(unit) else {
        return unit.to_owned();
    };
    if !smallest.is_finite() {
        return unit.to_owned();
    }
    let wanted = (exponent + smallest.log10().floor() as i32).div_euclid(3) * 3;
    let prefix = match wanted.clamp(-9, 0) {
        -9 => "ns",
        -6 => "µs",
        -3 => "ms",
        _ => "s",
    };
    format!("{prefix}{per}")
}

/// Every spelling a value in TSV unit `unit` could be printed in.
fn spellings(unit: &str) -> Vec<String> {
    match time_unit(unit) {
        Some((_, per)) => TIME.iter().map(|(t, _)| format!("{t}{per}")).collect(),
        None => vec![unit.to_owned()],
    }
}

/// The factor that turns a value in TSV unit `tsv` into printed unit `printed`, if `printed`
/// is a spelling of it.
fn factor(tsv: &str, printed: &str) -> Option<f64> {
    if tsv == printed {
        return Some(1.0);
    }
    let (a, per_a) = time_unit(tsv)?;
    let (b, per_b) = time_unit(printed)?;
    (per_a == per_b).then(|| 10f64.powi(a - b))
}

/// A character that continues a word, a version or a unit: a number or unit next to one is
/// part of something else (`6.16.0-rc5`, `parent#1`, `sched_rr_timeslice_ms`).
fn wordish(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '#' | '/' | '.' | '\'')
}

fn blank(c: char) -> bool {
    c.is_whitespace() || c == '\u{a0}' || c == '\u{202f}'
}

/// A piece of a file to read: text and the line it starts on.
struct Segment {
    text: String,
    line: usize,
}

/// The text nodes of an SVG (each apart: an axis tick and the axis label beside it are not a
/// number with a unit), with entities decoded.
fn svg_segments(svg: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut rest = svg;
    let mut line = 1;
    while let Some(open) = rest.find('<') {
        let node = &rest[..open];
        if !node.trim().is_empty() {
            let text = node
                .replace("&apos;", "'")
                .replace("&quot;", "\"")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&");
            out.push(Segment { text, line });
        }
        line += node.matches('\n').count();
        let Some(close) = rest[open..].find('>') else {
            break;
        };
        line += rest[open..open + close].matches('\n').count();
        rest = &rest[open + close + 1..];
    }
    out
}

/// A number printed with a unit or `%`.
struct Printed {
    /// 1-based line in the file.
    line: usize,
    /// As printed, sign included (`+39.77`).
    text: String,
    /// The unit (`%`, `ns/read`).
    unit: String,
    /// Up to 64 characters before the number, whitespace collapsed.
    before: String,
    /// Up to 40 characters after the unit, whitespace collapsed.
    after: String,
}

fn collapse(text: &str) -> String {
    text.split(blank)
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The unit spelled at the start of `rest`, word-bounded, longest first.
fn unit_at<'a>(rest: &str, units: &'a [String]) -> Option<&'a String> {
    units.iter().find(|u| {
        rest.starts_with(u.as_str())
            && !rest[u.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '/' | '#'))
    })
}

/// Every number followed by `%` or one of `units` in `segment`, and every unit printed
/// without a number (headers, axis labels) as `(line, unit)`.
fn scan(segment: &Segment, units: &[String]) -> (Vec<Printed>, Vec<(usize, String)>) {
    let text = &segment.text;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let line_at = |byte: usize| segment.line + text[..byte].matches('\n').count();
    let mut printed = Vec::new();
    let mut bare = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let prev = i.checked_sub(1).map(|j| chars[j].1);
        if !c.is_ascii_digit() {
            // A unit standing alone: a header, an axis label, a title.
            if !prev.is_some_and(wordish)
                && let Some(unit) = unit_at(&text[at..], units)
                && (unit.contains('/') || unit.chars().count() > 1)
            {
                bare.push((line_at(at), unit.clone()));
                i += unit.chars().count();
                continue;
            }
            i += 1;
            continue;
        }
        if prev
            .is_some_and(|p| wordish(p) || p == '-' && i >= 2 && chars[i - 2].1.is_alphanumeric())
        {
            // Inside a word or a version; skip the rest of it.
            while i < chars.len() && (wordish(chars[i].1) || chars[i].1 == '-') {
                i += 1;
            }
            continue;
        }
        let signed = matches!(prev, Some('+' | '-' | '−'));
        let start = if signed { i - 1 } else { i };
        let mut j = i;
        while j < chars.len() && chars[j].1.is_ascii_digit() {
            j += 1;
        }
        if j + 1 < chars.len() && chars[j].1 == '.' && chars[j + 1].1.is_ascii_digit() {
            j += 1;
            while j < chars.len() && chars[j].1.is_ascii_digit() {
                j += 1;
            }
        }
        let end = chars.get(j).map_or(text.len(), |(b, _)| *b);
        if chars.get(j).is_some_and(|(_, c)| wordish(*c) && *c != '/') {
            // `6.16.0`, `2x`, `1e6`: not a number with a unit.
            while j < chars.len() && (wordish(chars[j].1) || chars[j].1 == '-') {
                j += 1;
            }
            i = j;
            continue;
        }
        let mut k = j;
        while k < chars.len() && blank(chars[k].1) {
            k += 1;
        }
        let rest_at = chars.get(k).map_or(text.len(), |(b, _)| *b);
        let unit = if text[rest_at..].starts_with('%') {
            Some("%".to_owned())
        } else {
            unit_at(&text[rest_at..], units).cloned()
        };
        if let Some(unit) = unit {
            let unit_end = rest_at + unit.len();
            let from = text[..chars[start].0]
                .char_indices()
                .rev()
                .nth(63)
                .map_or(0, |(b, _)| b);
            let to = text[unit_end..]
                .char_indices()
                .nth(40)
                .map_or(text.len(), |(b, _)| unit_end + b);
            printed.push(Printed {
                line: line_at(chars[start].0),
                text: text[chars[start].0..end].to_owned(),
                unit,
                before: collapse(&text[from..chars[start].0]),
                after: collapse(&text[unit_end..to]),
            });
            i = k + 1;
        } else {
            i = j;
        }
    }
    (printed, bare)
}

/// Constant wording that prints a number with `%` not taken from the data, recognised by its
/// context. Each entry: (text just before the number, the number, text just after `%`).
/// Keep this short: a number that only fits by its value must come from the TSV files.
const CONSTANTS: [(&str, &str, &str); 9] = [
    // The confidence level of every interval: "boot-level 95% CI", "within-boot 95% CI".
    ("", "95", "CI"),
    // aba compare's interval of the difference of two changes: "differ by -0.10 points, 99%
    // CI [-0.72, +0.52]".
    ("points,", "99", "CI"),
    // Its rule, said once: "Two changes agree when the 99% interval of their difference …".
    ("agree when the", "99", "interval"),
    // The power of the detectable-change statement (verdict_text: "80 % power").
    ("", "80", "power"),
    // The verdict simulator's range of boot noise (docs/statistics.md §10).
    ("boot SD 0-", "10", "). The"),
    // The same range where the statement ends a paragraph or the text.
    ("boot SD 0-", "10", ")"),
    // An extended campaign's error budget: "(the 5% is spent over the looks)", "(α = 0.0124
    // of the 5% spent over the looks), not 95%", "not the 95% ones printed".
    ("the", "5", "is spent over the looks"),
    ("of the", "5", "spent over the looks"),
    ("spent over the looks), not", "95", ""),
];

/// Whether `p` is a constant of aba's wording (see [`CONSTANTS`]), or the simulator's stated
/// worst rate ("SIGNAL in at most 5.5 % of campaigns without a change": a property of the
/// verdict rules, docs/statistics.md §10, not of this campaign's data), or an expectation
/// the user wrote in the recipe ("expected +39.77% ± 0.005").
fn constant(p: &Printed, recipe: &str, alphas: &[f64]) -> bool {
    if p.unit != "%" {
        return false;
    }
    let number = p.text.trim_start_matches(['+', '-']);
    if CONSTANTS.iter().any(|(before, n, after)| {
        number == *n && p.before.ends_with(before) && p.after.starts_with(after)
    }) {
        return true;
    }
    if p.before.ends_with("in at most") && p.after.starts_with("of campaigns") {
        return true;
    }
    if p.before.ends_with("spent over the looks), not the") && p.after.starts_with("ones printed") {
        return true;
    }
    // An extended campaign's level at its last look, "their evidence needs 98.76 %
    // intervals": 100 (1 - α) of the look's α as the same text prints it ("Look 2 of 3 (α =
    // 0.0124)"), a property of the sequential design, not of the data.
    if (p.before.ends_with("needs") || p.before.ends_with("judged with"))
        && p.after.starts_with("intervals")
    {
        return alphas
            .iter()
            .any(|a| format!("{:.2}", 100.0 * (1.0 - a)) == number);
    }
    // The limits as README.md states them ("gate 5.0%, …, max CV 2.0%"): the recipe's
    // value where it sets one, else aba's default (docs/statistics.md: gate 5 %, CV 2 %).
    for (words, key, default) in [
        ("gate", "gate_pct", 5.0),
        // "would detect a change of the gate (5.00 %) with 80 % power".
        ("the gate (", "gate_pct", 5.0),
        ("max CV", "max_cv_pct", 2.0),
        ("max drift", "max_drift_pct", f64::NAN),
    ] {
        if p.before.ends_with(words) {
            let set: Option<f64> = recipe
                .lines()
                .find(|l| l.split('=').next().is_some_and(|k| k.trim() == key))
                .and_then(|l| l.split('=').nth(1)?.trim().parse().ok());
            return number.parse::<f64>().ok() == Some(set.unwrap_or(default));
        }
    }
    if p.before.ends_with("expected") {
        // The recipe's own spelling of the number (`change_pct = 39.77`).
        let written = number.trim_end_matches('0').trim_end_matches('.');
        return recipe
            .lines()
            .filter(|l| l.trim_start().starts_with("change_pct"))
            .any(|l| {
                l.split('=')
                    .nth(1)
                    .is_some_and(|v| v.trim().trim_start_matches('-') == written)
            });
    }
    false
}

/// `value` rounded up to `decimals` (the printed "at most" of a bound).
fn ceil_text(value: f64, decimals: usize) -> String {
    let scale = 10f64.powi(decimals as i32);
    let rounded = format!("{value:.decimals$}");
    let parsed: f64 = rounded.parse().unwrap_or(value);
    if parsed >= value - 1e-9 * value.abs().max(1.0) {
        rounded
    } else {
        format!("{:.decimals$}", parsed + 1.0 / scale)
    }
}

/// Whether printed number `p` is a value of the TSV files as printed: same absolute value at
/// the printed decimals (rounded, or rounded up after "at most"), same sign where it shows a
/// sign, in the printed unit.
fn sourced(p: &Printed, data: &Data) -> bool {
    let negative = p.text.starts_with(['-', '−']);
    let positive = p.text.starts_with('+');
    let digits = p.text.trim_start_matches(['+', '-', '−']);
    let decimals = digits.split_once('.').map_or(0, |(_, d)| d.len());
    let bound = p.before.ends_with("at most");
    data.values.iter().any(|v| {
        let scaled = if p.unit == "%" {
            if !v.pct {
                return false;
            }
            v.value
        } else {
            if v.pct {
                return false;
            }
            match factor(&v.unit, &p.unit) {
                Some(f) => v.value * f,
                None => return false,
            }
        };
        let shown = format!("{:.decimals$}", scaled.abs());
        let zero = shown.bytes().all(|b| b == b'0' || b == b'.');
        let sign_ok = zero || (!negative || scaled < 0.0) && (!positive || scaled > 0.0);
        sign_ok && (shown == digits || bound && ceil_text(scaled.abs(), decimals) == digits)
    })
}

/// Series whose table header says "control" in report.txt (`name (unit, …, control)`).
fn controls(report: &str) -> Vec<String> {
    report
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let (name, rest) = l.split_once(" (")?;
            rest.ends_with(", control)").then(|| name.to_owned())
        })
        .collect()
}

/// The point means of `kernel` per series (measured series, or controls), in boot order.
fn kernel_means<'a>(
    data: &'a Data,
    kernel: &str,
    control: &[String],
    of_controls: bool,
) -> Vec<(&'a Series, Vec<f64>)> {
    let series: BTreeSet<&Series> = data.means.iter().map(|m| &m.series).collect();
    series
        .into_iter()
        .filter(|s| control.iter().any(|c| s.named(c)) == of_controls)
        .map(|s| {
            let mut points: Vec<&PointMean> = data
                .means
                .iter()
                .filter(|m| &m.series == s && m.kernel == kernel)
                .collect();
            points.sort_by_key(|m| m.order);
            (s, points.iter().map(|m| m.mean).collect())
        })
        .collect()
}

/// The number just after `marker` in `flat` text (`0.88` of "at most 0.88%").
fn number_after(flat: &str, marker: &str) -> Vec<(String, f64)> {
    flat.match_indices(marker)
        .filter_map(|(at, _)| {
            let rest = &flat[at + marker.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            let text = rest[..end].trim_end_matches('.');
            text.parse().ok().map(|v| (text.to_owned(), v))
        })
        .collect()
}

/// Checks the stated bounds of `text` (`name`) against the data; returns how many.
fn check_bounds(
    name: &str,
    text: &str,
    data: &Data,
    control: &[String],
    out: &mut Vec<String>,
) -> usize {
    let flat = collapse(text);
    let mut checked = 0;
    let mut bound = |kernel: &str,
                     stated: &str,
                     limit: f64,
                     of_controls: bool,
                     what: &str,
                     out: &mut Vec<String>| {
        checked += 1;
        let slack = 1e-9;
        for (series, means) in kernel_means(data, kernel, control, of_controls) {
            for (i, a) in means.iter().enumerate() {
                for b in &means[i + 1..] {
                    let apart = ((b - a) / a * 100.0).abs();
                    if apart > limit + slack {
                        out.push(format!(
                            "{name}: \"{what} {stated}%\" but two points of kernel {kernel} in \
                             {}/{} differ by {apart:.4}% ({a} and {b})",
                            series.workload, series.metric
                        ));
                    }
                }
            }
            for (s, k, analysis, drift) in &data.drifts {
                if s == series && k == kernel && analysis == "all" && drift.abs() > limit + slack {
                    out.push(format!(
                        "{name}: \"{what} {stated}%\" but comparison.tsv's drift_pct of kernel \
                         {kernel} in {}/{} is {drift}",
                        series.workload, series.metric
                    ));
                }
            }
        }
    };
    // "kernel K drifted by at most X%": every pair of K's point means, and every drift row.
    for (at, _) in flat.match_indices("drifted by at most ") {
        let kernel = flat[..at]
            .rsplit_once("kernel ")
            .map(|(_, k)| k.trim().to_owned())
            .unwrap_or_default();
        if let Some((stated, limit)) = number_after(&flat[at..], "drifted by at most ")
            .first()
            .cloned()
        {
            bound(&kernel, &stated, limit, false, "drifted by at most", out);
            // "(measured series; controls: CV c%, drift at most Y%)" bounds the controls.
            let clause = &flat[at..flat[at..].find(". ").map_or(flat.len(), |e| at + e)];
            if clause.contains("controls:") {
                for (stated, limit) in number_after(clause, "drift at most ") {
                    bound(
                        &kernel,
                        &stated,
                        limit,
                        true,
                        "controls' drift at most",
                        out,
                    );
                }
            }
        }
    }
    // "the N points of kernel K differ by R RMS over pairs; the farthest two by Y%": Y is the
    // largest difference of two of K's point means, against their mean (range_pct), rounded.
    for (at, _) in flat.match_indices("; the farthest two by ") {
        let kernel = flat[..at]
            .rsplit_once(" of kernel ")
            .and_then(|(_, rest)| rest.split(' ').next())
            .unwrap_or_default()
            .to_owned();
        let Some((stated, limit)) = number_after(&flat[at..], "; the farthest two by ")
            .first()
            .cloned()
        else {
            continue;
        };
        checked += 1;
        let worst = kernel_means(data, &kernel, control, false)
            .into_iter()
            .filter(|(_, m)| !m.is_empty())
            .map(|(_, m)| {
                let mean = m.iter().sum::<f64>() / m.len() as f64;
                let max = m.iter().copied().fold(f64::MIN, f64::max);
                let min = m.iter().copied().fold(f64::MAX, f64::min);
                (max - min) / mean * 100.0
            })
            .fold(0.0, f64::max);
        if format!("{worst:.2}") != stated || worst > limit + 0.005 {
            out.push(format!(
                "{name}: \"the farthest two by {stated}%\" but the farthest two points of kernel \
                 {kernel} differ by {worst:.4}% of their mean"
            ));
        }
    }
    checked
}

/// The table under "Mean results in UNIT were:" (report.txt, README.md): every number in
/// its rows is a point mean in UNIT as printed; returns how many were checked.
fn check_means_table(name: &str, text: &str, data: &Data, out: &mut Vec<String>) -> usize {
    let mut checked = 0;
    let mut unit: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("Mean results in ") {
            unit = rest.strip_suffix(" were:").map(str::to_owned);
            continue;
        }
        let Some(u) = &unit else { continue };
        if !line.is_empty() && !line.starts_with(' ') {
            unit = None;
            continue;
        }
        if line.trim_start().starts_with("workload") {
            continue;
        }
        // The row's label is its first word; the means follow.
        for cell in line.split_whitespace().skip(1) {
            if cell == "-" || cell.parse::<f64>().is_err() {
                continue;
            }
            let p = Printed {
                line: i + 1,
                text: cell.to_owned(),
                unit: u.clone(),
                before: String::new(),
                after: String::new(),
            };
            if sourced(&p, data) {
                checked += 1;
            } else {
                out.push(format!(
                    "{name}:{}: mean {cell} {u} of the table of means is no point mean",
                    i + 1
                ));
            }
        }
    }
    checked
}

/// `aba compare`'s text (reproduction.txt) against its `--tsv` file: the same checks, with
/// the reproduction TSV as the only source.
pub fn check_reproduction(text: &str, tsv: &str) -> Tally {
    let texts = [("reproduction.txt", text.to_owned())];
    let (tally, findings) = check(&texts, "", tsv, "");
    eprintln!("report oracle on aba compare's text: {tally:?}");
    assert!(
        findings.is_empty(),
        "the report oracle disagrees with aba compare's text ({} findings):\n{}",
        findings.len(),
        findings.join("\n")
    );
    tally
}

/// The oracle on texts `(file name, content)` against the TSV files and the recipe: what it
/// checked and every finding, each naming the file, line and number.
pub fn check(
    texts: &[(&str, String)],
    points: &str,
    comparison: &str,
    recipe: &str,
) -> (Tally, Vec<String>) {
    let data = parse_data(points, comparison);
    let mut units: Vec<String> = data
        .display
        .iter()
        .flat_map(|(u, _)| spellings(u))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    units.sort_by_key(|u| std::cmp::Reverse(u.len()));
    let report = texts
        .iter()
        .find(|(n, _)| *n == "report.txt")
        .map_or("", |(_, t)| t.as_str());
    let control = controls(report);
    let mut tally = Tally::default();
    let mut out = Vec::new();
    for (name, text) in texts {
        // The α of each look of an extended campaign, as printed ("Look 2 of 3 (α = 0.0124)").
        let alphas: Vec<f64> = number_after(&collapse(text), "α = ")
            .into_iter()
            .map(|(_, a)| a)
            .collect();
        let segments = if name.ends_with(".svg") {
            svg_segments(text)
        } else {
            vec![Segment {
                text: text.clone(),
                line: 1,
            }]
        };
        for segment in &segments {
            let (printed, bare) = scan(segment, &units);
            let unit_uses = printed
                .iter()
                .filter(|p| p.unit != "%")
                .map(|p| (p.line, p.unit.clone()))
                .chain(bare);
            for (line, unit) in unit_uses {
                tally.units += 1;
                let family: Vec<&(String, String)> = data
                    .display
                    .iter()
                    .filter(|(u, _)| spellings(u).contains(&unit))
                    .collect();
                if !family.iter().any(|(_, d)| *d == unit) {
                    let shown: Vec<&str> = family.iter().map(|(_, d)| d.as_str()).collect();
                    let said = text.lines().nth(line - 1).unwrap_or_default().trim();
                    out.push(format!(
                        "{name}:{line}: unit {unit} is not the display unit ({}): {said:?}",
                        shown.join(", ")
                    ));
                }
            }
            // A value that does not exist printed as a number would be (`max drift None%`).
            for word in ["None", "none", "NaN", "nan", "inf", "null"] {
                for suffix in ["%", " %"] {
                    let said = format!("{word}{suffix}");
                    for (at, _) in segment.text.match_indices(&said) {
                        let line = segment.line + segment.text[..at].matches('\n').count();
                        out.push(format!("{name}:{line}: {said} printed as a number"));
                    }
                }
            }
            for p in &printed {
                if constant(p, recipe, &alphas) {
                    tally.constants += 1;
                } else if p.unit == "%" && !p.text.contains('.') {
                    // aba prints every percentage of the data with decimals; a whole one is
                    // wording, and must be in the allow-list, not matched by chance.
                    out.push(format!(
                        "{name}:{}: {}% is a whole percentage that no allow-list entry names \
                         (…{} [{}%] {}…)",
                        p.line, p.text, p.before, p.text, p.after
                    ));
                } else if sourced(p, &data) {
                    tally.numbers += 1;
                } else {
                    out.push(format!(
                        "{name}:{}: {} {} is in neither points.tsv nor comparison.tsv \
                         (…{} [{} {}] {}…)",
                        p.line, p.text, p.unit, p.before, p.text, p.unit, p.after
                    ));
                }
            }
        }
        if !name.ends_with(".svg") {
            tally.bounds += check_bounds(name, text, &data, &control, &mut out);
        }
        tally.numbers += check_means_table(name, text, &data, &mut out);
        // "differ by -0.10 points, 99% CI [-0.72, +0.52]": the bounds are points too.
        for (at, _) in text.match_indices("points, 99% CI") {
            let Some(open) = text[at..].find('[').map(|o| at + o + 1) else {
                continue;
            };
            let Some(close) = text[open..].find(']').map(|c| open + c) else {
                continue;
            };
            let line = 1 + text[..open].matches('\n').count();
            for bound in text[open..close].split(',') {
                let bound = collapse(bound);
                let p = Printed {
                    line,
                    text: bound.clone(),
                    unit: POINTS.to_owned(),
                    before: String::new(),
                    after: String::new(),
                };
                if sourced(&p, &data) {
                    tally.numbers += 1;
                } else {
                    out.push(format!(
                        "{name}:{line}: {bound} points (an interval's bound) is in no TSV"
                    ));
                }
            }
        }
    }
    (tally, out)
}

#[cfg(test)]
mod tests {
    use super::check;

    const POINTS: &str = "workload\tcase\tmetric\tunit\tanalysis\torder\tpoint\tkernel\tn\tmean\tsd\tcv_pct\n\
        mprotect\t\tns_per_page\tns/page\tall\t1\tparent-a\tparent\t15\t38.133333\t0.743223\t1.949012\n\
        mprotect\t\tns_per_page\tns/page\tall\t2\tchild\tchild\t15\t53.533333\t0.516398\t0.964628\n\
        mprotect\t\tns_per_page\tns/page\tall\t3\tparent-b\tparent\t15\t38.466667\t0.639940\t1.663623\n";

    const COMPARISON: &str = "workload\tcase\tmetric\tunit\tanalysis\tquantity\targs\tvalue\n\
        mprotect\t\tns_per_page\tns/page\tall\tkernel_mean\tparent\t38.300000\n\
        mprotect\t\tns_per_page\tns/page\tall\tdrift_pct\tparent\t0.874126\n\
        mprotect\t\tns_per_page\tns/page\tall\tchange_pct\tchild,parent\t39.773716\n\
        mprotect\t\tns_per_page\tns/page\tall\tdiff\tchild,parent\t15.233333\n";

    /// A report whose every number, unit and bound holds.
    const TRUE: &str = "ns_per_page: child is 15.23 ns/page (39.77%) slower than\n\
        38.30 ns/page, the midpoint of kernel parent (boot-level 95% CI). Maximum\n\
        within-boot CV was 1.95%, and kernel parent drifted by at most 0.88%.\n\n\
        Mean results in ns/page were:\n";

    const SVG: &str = "<svg><text x=\"1\">ns_per_page (ns/page, lower is better)</text>\n\
        <text>40</text><text>ns/page</text></svg>\n";

    fn findings(report: &str, svg: &str) -> Vec<String> {
        let texts = [
            ("report.txt", report.to_owned()),
            ("samples.svg", svg.to_owned()),
        ];
        check(&texts, POINTS, COMPARISON, "").1
    }

    #[test]
    fn a_true_report_passes_and_is_counted() {
        let texts = [
            ("report.txt", TRUE.to_owned()),
            ("samples.svg", SVG.to_owned()),
        ];
        let (tally, found) = check(&texts, POINTS, COMPARISON, "");
        assert!(found.is_empty(), "{found:#?}");
        assert_eq!(tally.numbers, 5, "{tally:?}");
        assert_eq!(tally.constants, 1, "the 95 of 95% CI: {tally:?}");
        assert_eq!(tally.units, 5, "2 after numbers, 3 alone: {tally:?}");
        assert_eq!(tally.bounds, 1, "{tally:?}");
    }

    #[test]
    fn a_number_without_a_source_is_named_with_file_and_line() {
        let found = findings(&TRUE.replace("(39.77%)", "(39.78%)"), SVG);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(found[0].starts_with("report.txt:1: 39.78 %"), "{found:#?}");
        // Rounded up instead of to nearest is a wrong number too outside "at most".
        let found = findings(&TRUE.replace("15.23 ns", "15.24 ns"), SVG);
        assert_eq!(found.len(), 1, "{found:#?}");
        // A sign the data does not have.
        let found = findings(&TRUE.replace("(39.77%)", "(-39.77%)"), SVG);
        assert_eq!(found.len(), 1, "{found:#?}");
    }

    #[test]
    fn a_second_unit_for_one_metric_is_caught_in_text_and_plot() {
        // The right number in the wrong scale: 15.23 ns/page read as 0.02 µs/page.
        let found = findings(&TRUE.replace("15.23 ns/page", "0.02 µs/page"), SVG);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0].contains("unit µs/page is not the display unit (ns/page)"),
            "{found:#?}"
        );
        // Issue 29's three units: the title in ns, the axis in ms.
        let found = findings(TRUE, &SVG.replace("<text>ns/page", "<text>ms/page"));
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0].starts_with("samples.svg:2: unit ms/page"),
            "{found:#?}"
        );
    }

    #[test]
    fn a_table_of_means_is_held_to_the_point_means() {
        let table = "Mean results in ns/page were:\n\n  workload     parent#1   child  parent#2\n  \
            ns_per_page    38.133  53.533    38.467\n\nWithin-boot CV per point:\n";
        let (tally, found) = check(&[("report.txt", table.to_owned())], POINTS, COMPARISON, "");
        assert!(found.is_empty(), "{found:#?}");
        assert_eq!(tally.numbers, 3);
        let found = findings(&table.replace("53.533", "53.534"), SVG);
        assert_eq!(
            found,
            ["report.txt:4: mean 53.534 ns/page of the table of means is no point mean"]
        );
    }

    #[test]
    fn a_missing_value_printed_as_a_percentage_is_caught() {
        let found = findings(
            &format!("{TRUE}gate 5.0%, max drift None%, max CV 2.0%\n"),
            SVG,
        );
        assert_eq!(
            found,
            ["report.txt:6: None% printed as a number"],
            "{found:#?}"
        );
    }

    #[test]
    fn a_false_bound_is_caught_against_the_points_it_bounds() {
        // The drift is 0.874 %: "at most 0.87%" rounds it down, so it is no bound.
        let found = findings(&TRUE.replace("at most 0.88%", "at most 0.87%"), SVG);
        assert!(
            found
                .iter()
                .any(|f| f.contains("\"drifted by at most 0.87%\" but two points")),
            "{found:#?}"
        );
        assert!(
            found
                .iter()
                .any(|f| f.contains("drift_pct of kernel parent")),
            "{found:#?}"
        );
    }

    #[test]
    fn a_reproduction_is_held_to_its_tsv() {
        let tsv = "workload\tcase\tmetric\tunit\tside\tquantity\targs\tvalue\n\
            steady\t\tsteady\tns\treference\tmean\ta-a\t100.000000\n\
            steady\t\tsteady\tns\tnew\tchange_pct\tb,a\t19.910045\n\
            steady\t\tsteady\tns\tboth\tdifference_pp\tb,a\t-0.099953\n\
            steady\t\tsteady\tns\tboth\tdifference_lo\tb,a\t-0.720642\n\
            steady\t\tsteady\tns\tboth\tdifference_hi\tb,a\t0.520735\n";
        let text = "  steady (ns, lower is better)\nThis campaign +19.91%, SIGNAL. The changes \
            differ by -0.10 points, 99% CI\n[-0.72, +0.52] (ν = 5.9): REPRODUCED.\n";
        let (tally, found) = check(&[("reproduction.txt", text.to_owned())], "", tsv, "");
        assert!(found.is_empty(), "{found:#?}");
        // Units: the heading's ns and the difference's points.
        assert_eq!((tally.numbers, tally.constants, tally.units), (4, 1, 2));
        let wrong = text.replace("+0.52]", "+0.53]").replace("(ns,", "(µs,");
        let (_, found) = check(&[("reproduction.txt", wrong)], "", tsv, "");
        assert_eq!(found.len(), 2, "{found:#?}");
    }

    #[test]
    fn issue_28s_rms_beside_a_farther_pair_is_caught() {
        // Three points of kernel parent 1.46 % apart at most; the farthest two said as 1.10 %.
        let points = format!(
            "{POINTS}mprotect\t\tns_per_page\tns/page\tall\t4\tparent-c\tparent\t15\t38.700000\t0.6\t1.5\n"
        );
        let report = "the 3 points of kernel parent differ by 0.87% RMS over pairs; \
            the farthest two by 1.10%.\n";
        let texts = [("report.txt", report.to_owned())];
        let (_, found) = check(&texts, &points, COMPARISON, "");
        assert!(
            found
                .iter()
                .any(|f| f.contains("the farthest two by 1.10%")),
            "{found:#?}"
        );
    }
}
