//! `samples.svg`: every measured sample in boot order, hand-written SVG (no plotting crate);
//! a panel with more than [`PANEL_DOTS`] samples draws an even selection and each point's range.
//!
//! One panel per series, titled with its verdicts in report.txt's words (the change, the
//! label and the confidence statement). Points stand side by side in columns, their samples
//! spread across the column in index order: warm-ups first as hollow grey circles (never
//! analysed), then the measured samples filled in their kernel's colour, with a short line at
//! the point mean. A shaded band spans the baseline kernel's point means (min to max) with a
//! dashed line at its boot-weighted mean, so a candidate's column reads directly against the
//! baseline's spread. Right of the points, a strip draws each comparison's interval on the
//! same axis (`interval`). The value axis has 1-2-5 ticks in a scaled unit (`axis`); the
//! legend names the colours and marks (`legend`).
//!
//! Well-formed by construction: every element is closed where it is opened, all text is
//! escaped (`text`), and no non-finite number is written.

mod axis;
mod interval;
mod legend;
mod text;

use std::fmt::Write as _;

use crate::{
    analysis::{Analysis, Series, VerdictLine},
    point_name::point_name,
    report::{
        layout::wrap,
        mail_tables::kernel_reference,
        number::{fixed, mean_decimals, signed_pct},
        unit_scale::display_scale,
        verdict_text::{confidence, headline, level},
    },
    stats::kernel_mean,
};
use axis::{Axis, axis, padded_range};
use interval::{Whisker, whisker};
use legend::{colour, legend};
use text::{escape, fit, font_size, shorten};

const WIDTH: f64 = 820.0;
/// Height of a panel's plot area.
const PLOT: f64 = 200.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 16.0;
/// Height of the figure's title, above the legend.
const TITLE: f64 = 30.0;
/// Below a plot: point labels and means.
const BOTTOM: f64 = 44.0;
/// One line of panel heading text.
const LINE: f64 = 14.0;
/// Between a panel's heading and its plot: room for the top tick's label.
const HEADING_GAP: f64 = 12.0;
/// Characters of heading text per line (12 px sans-serif over the figure's width).
const HEADING_CHARS: usize = 110;
/// Width of one comparison's column in the interval strip.
const STRIP_COLUMN: f64 = 56.0;
/// Space between the points' plot and the interval strip.
const STRIP_GAP: f64 = 10.0;

/// Most sample dots one panel draws. Beyond it, each point shows an even selection of its
/// samples (by index, first and last included) and a line from its smallest to its largest
/// sample; the mean bar and the label still use every sample, and the panel says so. Keeps
/// the file bounded (a million samples would be 77 MB of circles, far below one pixel each).
const PANEL_DOTS: usize = 2000;
/// Dots a point keeps at least, however many points share the panel.
const MIN_POINT_DOTS: usize = 20;

/// How many dots each point of `series` may draw.
fn dots_per_point(series: &Series) -> usize {
    (PANEL_DOTS / series.points.len().max(1)).max(MIN_POINT_DOTS)
}

/// Indices of `n` items to draw when at most `cap` fit: all of them, or `cap` spread evenly
/// from the first to the last.
fn thin(n: usize, cap: usize) -> Vec<usize> {
    if n <= cap.max(2) {
        return (0..n).collect();
    }
    (0..cap).map(|i| i * (n - 1) / (cap - 1)).collect()
}

/// The most samples (warm-ups included) any point of `series` has, when that is more than
/// it may draw.
fn thinned(series: &Series) -> Option<usize> {
    let most = series
        .points
        .iter()
        .map(|p| p.values.len().max(p.warmups.len()))
        .max()?;
    (most > dots_per_point(series)).then_some(most)
}

/// The verdict lines of `series` (measured, auxiliary or control), as report.txt states them.
fn verdict_lines<'a>(analysis: &'a Analysis, series: &Series) -> Vec<&'a VerdictLine> {
    let s = &analysis.summary;
    s.verdicts
        .iter()
        .chain(&s.aux)
        .chain(&s.controls)
        .filter(|l| l.series == series.label)
        .collect()
}

/// The heading lines of a panel: the series, then each verdict in report.txt's words
/// (`child is 39.77% slower than the parent midpoint (SIGNAL; boot-level 95% CI […]
/// excludes 0)`), wrapped to the figure's width.
fn heading(analysis: &Analysis, series: &Series) -> Vec<String> {
    let scale = display_scale(analysis, &series.unit);
    let unit = scale.unit.clone();
    let mut lines = vec![if unit.is_empty() {
        series.label.clone()
    } else {
        format!("{} ({unit}, {})", series.label, better(series))
    }];
    let shared = analysis.audit.shared_boot.is_some();
    for line in verdict_lines(analysis, series) {
        let reference = kernel_reference(analysis, &line.baseline);
        let text = headline(line, &scale, &reference, shared, true);
        lines.extend(wrap(&text, HEADING_CHARS, "").lines().map(str::to_owned));
    }
    if let Some(all) = &series.all {
        for why in &all.not_compared {
            lines.extend(wrap(why, HEADING_CHARS, "").lines().map(str::to_owned));
        }
    }
    if let Some(most) = thinned(series) {
        lines.push(format!(
            "{} of up to {most} samples drawn per point, evenly by index; vertical line: smallest to largest sample; bar and mean: every sample",
            dots_per_point(series)
        ));
    }
    lines
}

fn better(series: &Series) -> &'static str {
    match series.better {
        crate::stats::Better::Lower => "lower is better",
        crate::stats::Better::Higher => "higher is better",
    }
}

/// Height of a panel with `lines` heading lines.
fn panel_height(lines: usize) -> f64 {
    8.0 + LINE * lines as f64 + HEADING_GAP + PLOT + BOTTOM
}

/// The kernels in order of first boot.
fn kernels(analysis: &Analysis) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for p in &analysis.points {
        if !seen.contains(&p.kernel.as_str()) {
            seen.push(&p.kernel);
        }
    }
    seen
}

/// Renders `samples.svg`.
#[must_use]
pub fn render(analysis: &Analysis) -> Vec<u8> {
    let panels: Vec<(&Series, Vec<String>)> = analysis
        .series
        .iter()
        .filter(|s| !s.points.is_empty())
        .map(|s| (s, heading(analysis, s)))
        .collect();
    let kernels = kernels(analysis);
    let shared = analysis.audit.shared_boot.is_some();
    let compared = panels
        .iter()
        .any(|(s, _)| s.all.as_ref().is_some_and(|a| !a.comparisons.is_empty()));
    let (legend_svg, legend_height) = legend(
        &kernels,
        &analysis.campaign.baseline,
        compared.then(|| level(shared)),
        TITLE,
        WIDTH - RIGHT,
    );
    let top = TITLE + legend_height + 6.0;
    let height = top
        + panels
            .iter()
            .map(|(_, h)| panel_height(h.len()))
            .sum::<f64>()
            .max(40.0)
        + 10.0;
    let mut svg = String::new();
    let _ = writeln!(svg, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#,
        w = WIDTH,
        h = fixed(height, 0)
    );
    let _ = writeln!(
        svg,
        r#"<rect x="0" y="0" width="{WIDTH}" height="{}" fill="white"/>"#,
        fixed(height, 0)
    );
    let _ = writeln!(
        svg,
        r#"<text x="10" y="20" font-size="14" font-weight="bold">{}</text>"#,
        escape(&format!(
            "{}: {} in boot order",
            analysis.campaign.name,
            if panels.iter().any(|(s, _)| thinned(s).is_some()) {
                "samples (thinned where a panel says so)"
            } else {
                "every sample"
            }
        ))
    );
    let _ = writeln!(svg, r#"<g class="legend">"#);
    svg.push_str(&legend_svg);
    let _ = writeln!(svg, "</g>");
    if panels.is_empty() {
        let _ = writeln!(
            svg,
            r#"<text x="10" y="{}">no valid samples</text>"#,
            fixed(top + 20.0, 0)
        );
    }
    let mut y0 = top;
    for (series, lines) in &panels {
        panel(&mut svg, analysis, series, lines, &kernels, y0);
        y0 += panel_height(lines.len());
    }
    svg.push_str("</svg>\n");
    svg.into_bytes()
}
/// Where a panel draws: the points' plot, the interval strip right of it, and the value
/// range both share.
struct Frame {
    top: f64,
    bottom: f64,
    left: f64,
    /// Right edge of the points' plot.
    right: f64,
    /// Left edge of the interval strip (equal to `right` without comparisons).
    strip_left: f64,
    /// Right edge of the strip, the panel's right edge.
    strip_right: f64,
    lo: f64,
    hi: f64,
}

impl Frame {
    /// The y coordinate of `value`; `None` for a non-finite value.
    fn y(&self, value: f64) -> Option<f64> {
        let y = self.bottom - (value - self.lo) / (self.hi - self.lo) * (self.bottom - self.top);
        y.is_finite().then_some(y)
    }

    /// [`Frame::y`] held inside the plot, and whether it had to be.
    fn y_clipped(&self, value: f64) -> Option<(f64, bool)> {
        let y = self.y(value)?;
        let held = y.clamp(self.top, self.bottom);
        Some((held, held != y))
    }
}

fn panel(
    svg: &mut String,
    analysis: &Analysis,
    series: &Series,
    heading: &[String],
    kernels: &[&str],
    y0: f64,
) {
    let whiskers: Vec<Whisker> = series
        .all
        .as_ref()
        .map(|all| all.comparisons.iter().map(whisker).collect())
        .unwrap_or_default();
    let top = y0 + 8.0 + LINE * heading.len() as f64 + HEADING_GAP;
    let strip_right = WIDTH - RIGHT;
    let strip = if whiskers.is_empty() {
        0.0
    } else {
        STRIP_GAP + STRIP_COLUMN * whiskers.len() as f64
    };
    // However many comparisons, the points keep half the width.
    let right = (strip_right - strip).max(LEFT + (strip_right - LEFT) / 2.0);
    let (lo, hi) = value_range(series, &whiskers);
    let frame = Frame {
        top,
        bottom: top + PLOT,
        left: LEFT,
        right,
        strip_left: if whiskers.is_empty() {
            right
        } else {
            right + STRIP_GAP
        },
        strip_right,
        lo,
        hi,
    };
    let axis = axis(lo, hi, display_scale(analysis, &series.unit));

    for (i, line) in heading.iter().enumerate() {
        let weight = if i == 0 { r#" font-weight="bold""# } else { "" };
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{}" font-size="12"{weight}>{}</text>"#,
            10,
            fixed(y0 + 8.0 + LINE * (i as f64 + 0.8), 2),
            escape(line)
        );
    }
    baseline_band(svg, analysis, series, &frame);
    value_axis(svg, series, &axis, &frame);
    let decimals = mean_decimals(series.points.iter().map(|p| axis.scale.apply(p.all.mean)));
    let cap = dots_per_point(series);
    let column = (frame.right - frame.left) / series.points.len().max(1) as f64;
    for (i, point) in series.points.iter().enumerate() {
        let left = frame.left + column * i as f64;
        if i > 0 {
            let _ = writeln!(
                svg,
                r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#ccc"/>"##,
                fixed(frame.top, 2),
                fixed(frame.bottom, 2),
                x = fixed(left, 2)
            );
        }
        let colour = colour(kernels, &point.kernel);
        point_column(svg, point, colour, cap, left, column, &frame);
        let mean = point
            .all
            .mean
            .is_finite()
            .then(|| fixed(axis.scale.apply(point.all.mean), decimals));
        below(
            svg,
            left + column / 2.0,
            column - 4.0,
            colour,
            &point_name(&point.label, &point.kernel),
            mean.as_deref(),
            &frame,
        );
    }
    let shared = analysis.audit.shared_boot.is_some();
    if let Some(all) = &series.all {
        for (k, (w, c)) in whiskers.iter().zip(&all.comparisons).enumerate() {
            let statement = confidence(
                c.verdict.confidence,
                c.comparison.ci_boot.as_ref(),
                c.comparison.ci_within.as_ref(),
                shared,
            );
            let x = frame.strip_left + STRIP_COLUMN * (k as f64 + 0.5);
            let mark = Mark {
                name: &c.shown(),
                statement: &statement,
                colour: colour(kernels, &w.candidate),
                x,
            };
            interval_mark(svg, w, &mark, &frame);
        }
    }
}

/// The range a panel shows: its samples', widened to take in the intervals' ends, but by no
/// more than half the samples' span each way (a wider interval is clipped, with an arrowhead,
/// rather than squeezing the samples into a line).
fn value_range(series: &Series, whiskers: &[Whisker]) -> (f64, f64) {
    let samples = || {
        series
            .points
            .iter()
            .flat_map(|p| p.values.iter().chain(&p.warmups).copied())
    };
    let (lo, hi) = padded_range(samples());
    let reach = (hi - lo) / 2.0;
    let ends = whiskers
        .iter()
        .filter_map(|w| w.ends)
        .flat_map(|(a, b)| [a, b])
        .map(|e| e.clamp(lo - reach, hi + reach));
    padded_range(samples().chain(ends))
}

/// The baseline's band (its point means, min to max) and dashed mean, across the points and
/// the interval strip.
fn baseline_band(svg: &mut String, analysis: &Analysis, series: &Series, frame: &Frame) {
    let Some(all) = &series.all else { return };
    let baseline = &analysis.campaign.baseline;
    let means: Vec<f64> = all
        .points
        .iter()
        .filter(|p| &p.kernel == baseline)
        .map(|p| p.mean)
        .filter(|m| m.is_finite())
        .collect();
    let Some(mean) = kernel_mean(&all.points, baseline) else {
        return;
    };
    let band_lo = means.iter().copied().fold(f64::INFINITY, f64::min);
    let band_hi = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let width = fixed(frame.strip_right - frame.left, 2);
    if let (Some((top, _)), Some((bottom, _))) =
        (frame.y_clipped(band_hi), frame.y_clipped(band_lo))
    {
        let _ = writeln!(
            svg,
            r##"<rect x="{}" y="{}" width="{width}" height="{}" fill="#4e79a7" fill-opacity="0.15"/>"##,
            frame.left,
            fixed(top, 2),
            fixed((bottom - top).max(1.0), 2)
        );
    }
    if let Some((ym, false)) = frame.y_clipped(mean) {
        let _ = writeln!(
            svg,
            r##"<line x1="{}" y1="{ym}" x2="{}" y2="{ym}" stroke="#4e79a7" stroke-dasharray="4 3"/>"##,
            frame.left,
            frame.strip_right,
            ym = fixed(ym, 2)
        );
    }
}

/// The frames of the plot and the strip, the ticks and the unit.
fn value_axis(svg: &mut String, series: &Series, axis: &Axis, frame: &Frame) {
    for (left, right) in [
        (frame.left, frame.right),
        (frame.strip_left, frame.strip_right),
    ] {
        if right > left {
            let _ = writeln!(
                svg,
                r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#333"/>"##,
                fixed(left, 2),
                fixed(frame.top, 2),
                fixed(right - left, 2),
                fixed(frame.bottom - frame.top, 2)
            );
        }
    }
    for (value, label) in &axis.ticks {
        let Some(y) = frame.y(*value) else { continue };
        let ty = fixed(y, 2);
        let _ = writeln!(
            svg,
            r##"<line x1="{}" y1="{ty}" x2="{}" y2="{ty}" stroke="#333"/><text x="{}" y="{ty}" text-anchor="end" dominant-baseline="middle">{}</text>"##,
            frame.left - 4.0,
            frame.left,
            frame.left - 6.0,
            escape(label)
        );
    }
    let unit = if axis.scale.unit.is_empty() {
        series.metric.clone()
    } else {
        axis.scale.unit.clone()
    };
    let mid = fixed((frame.top + frame.bottom) / 2.0, 2);
    let _ = writeln!(
        svg,
        r#"<text x="14" y="{mid}" text-anchor="middle" transform="rotate(-90 14 {mid})">{}</text>"#,
        escape(&shorten(&unit, 30))
    );
}

/// One point's column: its warm-ups, its samples (an even selection beyond `cap`, with the
/// range line), its mean bar.
fn point_column(
    svg: &mut String,
    point: &crate::analysis::SeriesPoint,
    colour: &str,
    cap: usize,
    left: f64,
    column: f64,
    frame: &Frame,
) {
    let warmups = thin(point.warmups.len(), cap);
    let samples = thin(point.values.len(), cap);
    let count = (warmups.len() + samples.len()).max(1) as f64;
    let slot = (column - 8.0).max(1.0) / count;
    let x = |j: usize| left + 4.0 + slot * (j as f64 + 0.5);
    for (j, &k) in warmups.iter().enumerate() {
        if let Some(y) = frame.y(point.warmups[k]) {
            let _ = writeln!(
                svg,
                r##"<circle cx="{}" cy="{}" r="2.5" fill="none" stroke="#999"/>"##,
                fixed(x(j), 2),
                fixed(y, 2)
            );
        }
    }
    let offset = warmups.len();
    for (j, &k) in samples.iter().enumerate() {
        if let Some(y) = frame.y(point.values[k]) {
            let _ = writeln!(
                svg,
                r#"<circle cx="{}" cy="{}" r="2.5" fill="{colour}" fill-opacity="0.8"/>"#,
                fixed(x(offset + j), 2),
                fixed(y, 2)
            );
        }
    }
    if samples.len() < point.values.len() {
        let (min, max) = point
            .values
            .iter()
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(*v), hi.max(*v))
            });
        if let (Some(top), Some(bottom)) = (frame.y(max), frame.y(min)) {
            let xm = fixed((x(offset) + x(offset + samples.len() - 1)) / 2.0, 2);
            let _ = writeln!(
                svg,
                r#"<line x1="{xm}" y1="{}" x2="{xm}" y2="{}" stroke="{colour}"/>"#,
                fixed(top, 2),
                fixed(bottom, 2)
            );
        }
    }
    if let Some(ym) = frame.y(point.all.mean) {
        let ym = fixed(ym, 2);
        let _ = writeln!(
            svg,
            r#"<line x1="{}" y1="{ym}" x2="{}" y2="{ym}" stroke="{colour}" stroke-width="2"/>"#,
            fixed(x(offset), 2),
            fixed(x(offset + samples.len().max(1) - 1), 2)
        );
    }
}

/// What one interval mark shows besides its whisker: the comparison's name (the candidate,
/// or `candidate vs baseline` for a declared comparison), its confidence statement, its
/// colour and its column.
#[derive(Clone, Copy)]
struct Mark<'a> {
    name: &'a str,
    statement: &'a str,
    colour: &'a str,
    x: f64,
}

/// One comparison's interval at `x` in the strip: a whisker from the low to the high end
/// (capped, or an arrowhead where it leaves the plot), a square at the candidate's mean, the
/// candidate and its change below; `n/e` when the verdict has no bounded interval. The
/// confidence statement is its tooltip.
fn interval_mark(svg: &mut String, w: &Whisker, mark: &Mark<'_>, frame: &Frame) {
    let Mark {
        name,
        statement,
        colour,
        x,
    } = *mark;
    let cx = fixed(x, 2);
    let _ = writeln!(
        svg,
        r#"<g class="interval"><title>{}</title>"#,
        escape(&format!(
            "{}: {} ({statement})",
            name,
            signed_pct(w.change_pct)
        ))
    );
    let ends = w
        .ends
        .and_then(|(lo, hi)| Some((frame.y_clipped(hi)?, frame.y_clipped(lo)?)));
    match ends {
        Some(((top, top_clipped), (bottom, bottom_clipped))) => {
            let _ = writeln!(
                svg,
                r#"<line x1="{cx}" y1="{}" x2="{cx}" y2="{}" stroke="{colour}" stroke-width="2"/>"#,
                fixed(top, 2),
                fixed(bottom, 2)
            );
            for (y, clipped, outward) in [(top, top_clipped, -1.0), (bottom, bottom_clipped, 1.0)] {
                let end = if clipped {
                    // An arrowhead pointing off the plot: the interval goes on.
                    format!(
                        r#"<path d="M {} {} L {} {} L {} {} Z" fill="{colour}"/>"#,
                        fixed(x - 5.0, 2),
                        fixed(y - 6.0 * outward, 2),
                        fixed(x + 5.0, 2),
                        fixed(y - 6.0 * outward, 2),
                        cx,
                        fixed(y, 2)
                    )
                } else {
                    format!(
                        r#"<line x1="{}" y1="{yy}" x2="{}" y2="{yy}" stroke="{colour}" stroke-width="2"/>"#,
                        fixed(x - 6.0, 2),
                        fixed(x + 6.0, 2),
                        yy = fixed(y, 2)
                    )
                };
                let _ = writeln!(svg, "{end}");
            }
        }
        None => {
            let _ = writeln!(
                svg,
                r##"<text x="{cx}" y="{}" text-anchor="middle" fill="#555">n/e</text>"##,
                fixed((frame.top + frame.bottom) / 2.0, 2)
            );
        }
    }
    if let Some((ym, false)) = frame.y_clipped(w.mean) {
        let _ = writeln!(
            svg,
            r##"<rect x="{}" y="{}" width="6" height="6" fill="white" stroke="{colour}" stroke-width="1.5"/>"##,
            fixed(x - 3.0, 2),
            fixed(ym - 3.0, 2)
        );
    }
    let change = w.change_pct.is_finite().then(|| signed_pct(w.change_pct));
    below(
        svg,
        x,
        STRIP_COLUMN - 4.0,
        colour,
        name,
        change.as_deref(),
        frame,
    );
    let _ = writeln!(svg, "</g>");
}

/// Under a column centred at `x` with `room` pixels: its label in `colour`, and a figure
/// (a point's mean, a comparison's change) in grey below it, each made to fit.
fn below(
    svg: &mut String,
    x: f64,
    room: f64,
    colour: &str,
    label: &str,
    figure: Option<&str>,
    frame: &Frame,
) {
    let x = fixed(x, 2);
    let (text, size) = fit(label, room);
    let _ = writeln!(
        svg,
        r#"<text x="{x}" y="{}" text-anchor="middle" fill="{colour}"{}>{}</text>"#,
        fixed(frame.bottom + 14.0, 2),
        font_size(size),
        escape(&text)
    );
    if let Some(figure) = figure {
        let (text, size) = fit(figure, room);
        let _ = writeln!(
            svg,
            r##"<text x="{x}" y="{}" text-anchor="middle" fill="#555"{}>{}</text>"##,
            fixed(frame.bottom + 27.0, 2),
            font_size(size),
            escape(&text)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{escape, render};
    use crate::report::testdata::{FIXTURES, fixture};

    /// Minimal well-formedness check: balanced tags, quoted attributes, escaped text.
    fn well_formed(xml: &str) -> Result<(), String> {
        let mut stack: Vec<String> = Vec::new();
        let mut rest = xml;
        while let Some(open) = rest.find('<') {
            let text = &rest[..open];
            check_text(text)?;
            let close = rest[open..]
                .find('>')
                .ok_or_else(|| "unclosed tag".to_owned())?
                + open;
            let tag = &rest[open + 1..close];
            rest = &rest[close + 1..];
            if tag.starts_with('?') {
                continue;
            }
            if let Some(name) = tag.strip_prefix('/') {
                let top = stack.pop().ok_or_else(|| format!("stray </{name}>"))?;
                if top != name.trim() {
                    return Err(format!("</{name}> closes <{top}>"));
                }
                continue;
            }
            if !tag.matches('"').count().is_multiple_of(2) {
                return Err(format!("unbalanced quotes in <{tag}>"));
            }
            let name = tag
                .split_whitespace()
                .next()
                .ok_or_else(|| "empty tag".to_owned())?
                .trim_end_matches('/');
            if !tag.ends_with('/') {
                stack.push(name.to_owned());
            }
        }
        check_text(rest)?;
        if stack.is_empty() {
            Ok(())
        } else {
            Err(format!("unclosed elements {stack:?}"))
        }
    }

    fn check_text(text: &str) -> Result<(), String> {
        for (i, _) in text.match_indices('&') {
            let entity = &text[i..];
            if !["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                .iter()
                .any(|e| entity.starts_with(e))
            {
                return Err(format!("bare & in {text:?}"));
            }
        }
        Ok(())
    }

    #[test]
    fn the_checker_catches_broken_xml() {
        assert!(well_formed("<a><b/></a>").is_ok());
        assert!(well_formed("<a><b></a>").is_err());
        assert!(well_formed("<a>x & y</a>").is_err());
        assert!(well_formed(&format!("<a>{}</a>", escape("x & <y>"))).is_ok());
    }

    #[test]
    fn every_fixture_renders_well_formed_svg() {
        for name in FIXTURES {
            let svg = String::from_utf8(render(&fixture(name))).expect("utf-8");
            well_formed(&svg).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(svg.starts_with("<?xml") && svg.ends_with("</svg>\n"));
            let plot = svg
                .split_once(r#"<g class="legend">"#)
                .map_or("", |(_, rest)| rest);
            let plot = plot.split_once("</g>").map_or("", |(_, rest)| rest);
            let circles = plot.matches("<circle").count();
            let samples: usize = fixture(name)
                .series
                .iter()
                .flat_map(|s| &s.points)
                .map(|p| p.values.len() + p.warmups.len())
                .sum();
            assert_eq!(circles, samples, "{name}: one circle per sample");
        }
    }

    /// A million-sample campaign stays a small file: each point draws a bounded, even
    /// selection of its samples plus its range, and the panel says so.
    #[test]
    fn many_samples_are_thinned_and_said_so() {
        let mut analysis = fixture(FIXTURES[0]);
        let series = &mut analysis.series[0];
        let first = series.points[0].clone();
        series.points = (0..100)
            .map(|i| {
                let mut p = first.clone();
                p.values = (0..1000)
                    .map(|v| f64::from(v % 97) + f64::from(i))
                    .collect();
                p.warmups = vec![];
                p
            })
            .collect();
        let svg = String::from_utf8(render(&analysis)).expect("utf-8");
        well_formed(&svg).expect("well-formed");
        let panel_circles: usize = 100 * 20;
        assert!(
            svg.matches("<circle").count() <= panel_circles + 200,
            "bounded"
        );
        assert!(svg.contains("20 of up to 1000 samples drawn per point"));
        assert!(svg.contains("samples (thinned where a panel says so) in boot order"));
        assert_eq!(super::thin(1000, 20).first(), Some(&0));
        assert_eq!(super::thin(1000, 20).last(), Some(&999));
        assert_eq!(super::thin(5, 20), vec![0, 1, 2, 3, 4]);
    }

    /// Every comparison gets an interval mark, the legend names every kernel and mark, and
    /// each panel's title states its verdicts in report.txt's words.
    #[test]
    fn legend_title_verdict_and_one_interval_per_comparison() {
        for name in FIXTURES {
            let analysis = fixture(name);
            let svg = String::from_utf8(render(&analysis)).expect("utf-8");
            let comparisons: usize = analysis
                .series
                .iter()
                .filter(|s| !s.points.is_empty())
                .filter_map(|s| s.all.as_ref())
                .map(|a| a.comparisons.len())
                .sum();
            assert_eq!(
                svg.matches(r#"<g class="interval">"#).count(),
                comparisons,
                "{name}: one interval per comparison"
            );
            assert_eq!(svg.matches(r#"<g class="legend">"#).count(), 1, "{name}");
            for kernel in super::kernels(&analysis) {
                assert!(
                    svg.contains(&escape(kernel)),
                    "{name}: legend names {kernel}"
                );
            }
            for mark in ["warm-up (never analysed)", "point mean", "baseline mean"] {
                assert!(svg.contains(mark), "{name}: legend shows {mark}");
            }
            assert_eq!(
                svg.contains("95% CI of the change"),
                comparisons > 0,
                "{name}: the legend explains the intervals drawn"
            );
            for line in &analysis.summary.verdicts {
                assert!(
                    svg.contains(&escape(&line.label)),
                    "{name}: title says {}",
                    line.label
                );
            }
        }
        let svg = String::from_utf8(render(&fixture("mprotect-exact-cac1"))).expect("utf-8");
        assert!(
            svg.contains(
                "child is 15.23 ns/page (39.77%) slower than 38.30 ns/page, the midpoint of \
                 kernel parent (SIGNAL"
            ),
            "the headline of report.txt"
        );
        assert!(svg.contains("[+29.18%, +51.22%] excludes 0"));
    }

    /// The axis is in a scaled unit: mprotect-pedro-v3's ns/page values (about 55) stay ns;
    /// the same values a million times larger, in ns, read in ms.
    #[test]
    fn the_axis_reads_in_a_scaled_unit() {
        let mut analysis = fixture("mprotect-pedro-v3");
        let series = &mut analysis.series[0];
        series.unit = "ns".to_owned();
        for p in &mut series.points {
            for v in p.values.iter_mut().chain(&mut p.warmups) {
                *v *= 1e6;
            }
            p.all.mean *= 1e6;
        }
        let svg = String::from_utf8(render(&analysis)).expect("utf-8");
        assert!(svg.contains(">ms</text>"), "unit label in ms");
    }

    /// Issue 29 item 2: one display unit per metric. Means of about 550 µs in ns with one
    /// sample of 1.6 ms: report.txt's table, the panel's title and its axis all read in µs
    /// (the title said the recipe's ns and the axis, scaled by the largest sample, ms).
    #[test]
    fn the_title_the_axis_and_report_txt_use_one_unit() {
        let mut analysis = fixture("mprotect-pedro-v3");
        let series = &mut analysis.series[0];
        series.unit = "ns".to_owned();
        for p in &mut series.points {
            for v in p.values.iter_mut().chain(&mut p.warmups) {
                *v *= 1e4;
            }
            p.all.mean *= 1e4;
        }
        series.points[0].values[0] = 1.6e6;
        let svg = String::from_utf8(render(&analysis)).expect("utf-8");
        let label = &analysis.series[0].label;
        assert!(
            svg.contains(&format!("{} (µs, ", escape(label))),
            "title in µs"
        );
        assert!(svg.contains(">µs</text>"), "axis in µs");
        assert!(
            !svg.contains(">ms</text>") && !svg.contains("(ns, "),
            "{svg}"
        );
        let table = crate::report::mail_tables::means(&analysis);
        assert!(
            table.contains("µs") && !table.contains(" ms") && !table.contains(" ns"),
            "{table}"
        );
    }

    /// Hostile labels and units are escaped, and non-finite values never reach the file.
    #[test]
    fn hostile_labels_and_non_finite_values_stay_out() {
        let mut analysis = fixture("mprotect-pedro-v3");
        analysis.campaign.name = "<script>&".to_owned();
        let series = &mut analysis.series[0];
        series.unit = "ns</text><x a=\"".to_owned();
        series.label = "a & b <c>".to_owned();
        series.points[0].values.push(f64::NAN);
        series.points[0].values.push(f64::INFINITY);
        series.points[1].warmups.push(f64::NEG_INFINITY);
        series.points[1].all.mean = f64::NAN;
        let svg = String::from_utf8(render(&analysis)).expect("utf-8");
        well_formed(&svg).expect("well-formed");
        assert!(!svg.contains("<script>") && !svg.contains("<x a="));
        for bad in ["NaN", "\"inf", "\"-inf", ">inf", ">-inf"] {
            assert!(!svg.contains(bad), "{bad} in the SVG");
        }
    }
}
