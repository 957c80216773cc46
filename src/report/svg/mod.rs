//! `samples.svg`: every measured sample in boot order, hand-written SVG (no plotting crate);
//! a panel with more than [`PANEL_DOTS`] samples draws an even selection and each point's range.
//!
//! One panel per series. Points stand side by side in columns, their samples spread across
//! the column in index order: warm-ups first as hollow grey circles (never analysed), then the
//! measured samples filled in their kernel's colour, with a short line at the point mean. A
//! shaded band spans the baseline kernel's point means (min to max) with a dashed line at its
//! boot-weighted mean, so a candidate's column reads directly against the baseline's spread.
//! Well-formed by construction: every element is closed where it is opened and all text is
//! escaped.

use std::fmt::Write as _;

use crate::{
    analysis::{Analysis, Series},
    report::number::{fixed, signed_pct},
    stats::kernel_mean,
};

const WIDTH: f64 = 760.0;
/// Height of a panel's plot area.
const PLOT: f64 = 200.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 16.0;
/// Height of the figure's title and legend.
const TOP: f64 = 60.0;
/// Below a plot: point labels and means.
const BOTTOM: f64 = 44.0;
/// One line of panel heading text.
const LINE: f64 = 14.0;
/// Characters of heading text per line (11 px sans-serif over the plot width).
const HEADING_CHARS: usize = 105;

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

/// Colour per kernel, in order of first boot (colour-blind friendly Tableau 10).
const PALETTE: [&str; 8] = [
    "#4e79a7", "#e15759", "#59a14f", "#b07aa1", "#f28e2b", "#9c755f", "#76b7b2", "#edc948",
];

/// Escapes text for XML content and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

/// The heading lines of a panel: the series, then its verdicts wrapped to the plot width.
fn heading(series: &Series) -> Vec<String> {
    let mut lines = vec![if series.unit.is_empty() {
        series.label.clone()
    } else {
        format!("{} ({}, {})", series.label, series.unit, better(series))
    }];
    let verdicts: Vec<String> = series
        .all
        .as_ref()
        .map(|all| {
            all.comparisons
                .iter()
                .map(|c| {
                    format!(
                        "{} {} {}",
                        c.candidate,
                        signed_pct(c.comparison.change_pct),
                        c.label
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let mut line = String::new();
    for v in verdicts {
        if !line.is_empty() && line.len() + 2 + v.len() > HEADING_CHARS {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push_str(", ");
        }
        line.push_str(&v);
    }
    if !line.is_empty() {
        lines.push(line);
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
    8.0 + LINE * lines as f64 + 6.0 + PLOT + BOTTOM
}

/// Renders `samples.svg`.
#[must_use]
pub fn render(analysis: &Analysis) -> Vec<u8> {
    let panels: Vec<(&Series, Vec<String>)> = analysis
        .series
        .iter()
        .filter(|s| !s.points.is_empty())
        .map(|s| (s, heading(s)))
        .collect();
    let height = TOP
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
    let baseline = escape(&analysis.campaign.baseline);
    let _ = writeln!(
        svg,
        r##"<text x="10" y="36" fill="#555">filled: measured sample; bar: its point mean; hollow grey: warm-up (never analysed)</text>"##
    );
    let _ = writeln!(
        svg,
        r##"<text x="10" y="50" fill="#555">band: {baseline} point means, min to max; dashed line: {baseline} boot-weighted mean</text>"##
    );
    if panels.is_empty() {
        let _ = writeln!(svg, r#"<text x="10" y="80">no valid samples</text>"#);
    }
    let kernels: Vec<&str> = {
        let mut seen: Vec<&str> = Vec::new();
        for p in &analysis.points {
            if !seen.contains(&p.kernel.as_str()) {
                seen.push(&p.kernel);
            }
        }
        seen
    };
    let mut y0 = TOP;
    for (series, lines) in &panels {
        panel(&mut svg, analysis, series, lines, &kernels, y0);
        y0 += panel_height(lines.len());
    }
    svg.push_str("</svg>\n");
    svg.into_bytes()
}

/// A "nice" tick step (1, 2 or 5 × 10^k) giving about five ticks over `range`.
fn tick_step(range: f64) -> f64 {
    let raw = range / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|step| *step >= raw)
        .unwrap_or(10.0 * magnitude)
}

fn panel(
    svg: &mut String,
    analysis: &Analysis,
    series: &Series,
    heading: &[String],
    kernels: &[&str],
    y0: f64,
) {
    let plot_top = y0 + 8.0 + LINE * heading.len() as f64 + 6.0;
    let plot_bottom = plot_top + PLOT;
    let plot_left = LEFT;
    let plot_right = WIDTH - RIGHT;
    let values = series
        .points
        .iter()
        .flat_map(|p| p.values.iter().chain(&p.warmups).copied());
    let (mut lo, mut hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if hi <= lo {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.01 };
        lo -= pad;
        hi += pad;
    }
    let pad = (hi - lo) * 0.08;
    let (lo, hi) = (lo - pad, hi + pad);
    let y = |v: f64| plot_bottom - (v - lo) / (hi - lo) * (plot_bottom - plot_top);

    // Heading: the series, then its verdicts.
    for (i, line) in heading.iter().enumerate() {
        let weight = if i == 0 { r#" font-weight="bold""# } else { "" };
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{}" font-size="12"{weight}>{}</text>"#,
            plot_left,
            fixed(y0 + 8.0 + LINE * (i as f64 + 0.8), 2),
            escape(line)
        );
    }

    // Baseline band and mean.
    if let Some(all) = &series.all {
        let baseline = &analysis.campaign.baseline;
        let means: Vec<f64> = all
            .points
            .iter()
            .filter(|p| &p.kernel == baseline)
            .map(|p| p.mean)
            .collect();
        if let Some(mean) = kernel_mean(&all.points, baseline) {
            let band_lo = means.iter().copied().fold(f64::INFINITY, f64::min);
            let band_hi = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let top = y(band_hi);
            let _ = writeln!(
                svg,
                r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#4e79a7" fill-opacity="0.15"/>"##,
                plot_left,
                fixed(top, 2),
                fixed(plot_right - plot_left, 2),
                fixed((y(band_lo) - top).max(1.0), 2)
            );
            let _ = writeln!(
                svg,
                r##"<line x1="{}" y1="{ym}" x2="{}" y2="{ym}" stroke="#4e79a7" stroke-dasharray="4 3"/>"##,
                plot_left,
                plot_right,
                ym = fixed(y(mean), 2)
            );
        }
    }

    // Axes, ticks and unit.
    let _ = writeln!(
        svg,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#333"/>"##,
        plot_left,
        fixed(plot_top, 2),
        fixed(plot_right - plot_left, 2),
        fixed(plot_bottom - plot_top, 2)
    );
    let step = tick_step(hi - lo);
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let mut tick = (lo / step).ceil() * step;
    while tick <= hi {
        let ty = fixed(y(tick), 2);
        let _ = writeln!(
            svg,
            r##"<line x1="{}" y1="{ty}" x2="{}" y2="{ty}" stroke="#333"/><text x="{}" y="{ty}" text-anchor="end" dominant-baseline="middle">{}</text>"##,
            plot_left - 4.0,
            plot_left,
            plot_left - 6.0,
            fixed(tick, decimals)
        );
        tick += step;
    }
    let unit = if series.unit.is_empty() {
        series.metric.clone()
    } else {
        series.unit.clone()
    };
    let mid = fixed((plot_top + plot_bottom) / 2.0, 2);
    let _ = writeln!(
        svg,
        r#"<text x="14" y="{mid}" text-anchor="middle" transform="rotate(-90 14 {mid})">{}</text>"#,
        escape(&unit)
    );

    // One column per point.
    let cap = dots_per_point(series);
    let columns = series.points.len() as f64;
    let column = (plot_right - plot_left) / columns;
    for (i, point) in series.points.iter().enumerate() {
        let left = plot_left + column * i as f64;
        let colour =
            PALETTE[kernels.iter().position(|k| *k == point.kernel).unwrap_or(0) % PALETTE.len()];
        if i > 0 {
            let _ = writeln!(
                svg,
                r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#ccc"/>"##,
                fixed(plot_top, 2),
                fixed(plot_bottom, 2),
                x = fixed(left, 2)
            );
        }
        let warmups = thin(point.warmups.len(), cap);
        let samples = thin(point.values.len(), cap);
        let count = (warmups.len() + samples.len()).max(1) as f64;
        let slot = (column - 8.0) / count;
        let x = |j: usize| left + 4.0 + slot * (j as f64 + 0.5);
        for (j, &k) in warmups.iter().enumerate() {
            let _ = writeln!(
                svg,
                r##"<circle cx="{}" cy="{}" r="2.5" fill="none" stroke="#999"/>"##,
                fixed(x(j), 2),
                fixed(y(point.warmups[k]), 2)
            );
        }
        let offset = warmups.len();
        for (j, &k) in samples.iter().enumerate() {
            let _ = writeln!(
                svg,
                r#"<circle cx="{}" cy="{}" r="2.5" fill="{colour}" fill-opacity="0.8"/>"#,
                fixed(x(offset + j), 2),
                fixed(y(point.values[k]), 2)
            );
        }
        if samples.len() < point.values.len() {
            let (min, max) = point
                .values
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(*v), hi.max(*v))
                });
            let xm = fixed((x(offset) + x(offset + samples.len() - 1)) / 2.0, 2);
            let _ = writeln!(
                svg,
                r#"<line x1="{xm}" y1="{}" x2="{xm}" y2="{}" stroke="{colour}"/>"#,
                fixed(y(max), 2),
                fixed(y(min), 2)
            );
        }
        let ym = fixed(y(point.all.mean), 2);
        let _ = writeln!(
            svg,
            r#"<line x1="{}" y1="{ym}" x2="{}" y2="{ym}" stroke="{colour}" stroke-width="2"/>"#,
            fixed(x(offset), 2),
            fixed(x(offset + samples.len().max(1) - 1), 2)
        );
        let label_x = fixed(left + column / 2.0, 2);
        let _ = writeln!(
            svg,
            r#"<text x="{label_x}" y="{}" text-anchor="middle" fill="{colour}">{}</text>"#,
            fixed(plot_bottom + 14.0, 2),
            escape(&point.label)
        );
        let _ = writeln!(
            svg,
            r##"<text x="{label_x}" y="{}" text-anchor="middle" fill="#555">{}</text>"##,
            fixed(plot_bottom + 27.0, 2),
            escape(&fixed(point.all.mean, 3))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{escape, render, tick_step};
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
            let circles = svg.matches("<circle").count();
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

    #[test]
    fn ticks_are_nice() {
        assert_eq!(tick_step(10.0), 2.0);
        assert_eq!(tick_step(17.0), 5.0);
        assert!((tick_step(0.03) - 0.01).abs() < 1e-12);
    }
}
