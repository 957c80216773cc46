//! The figure's legend: which colour is which kernel, and what each mark means (warm-up,
//! sample, point mean, the baseline's band and mean, a comparison's interval). Entries flow
//! in rows across the figure and wrap, so many or long kernel labels never overlap or run
//! off the edge.

use std::fmt::Write as _;

use crate::report::{
    number::fixed,
    svg::text::{escape, shorten, width},
};

/// Colour per kernel, in order of first boot (colour-blind friendly Tableau 10).
pub const PALETTE: [&str; 8] = [
    "#4e79a7", "#e15759", "#59a14f", "#b07aa1", "#f28e2b", "#9c755f", "#76b7b2", "#edc948",
];

/// The colour of `kernel` among `kernels` (order of first boot); colours repeat after eight.
#[must_use]
pub fn colour(kernels: &[&str], kernel: &str) -> &'static str {
    PALETTE[kernels.iter().position(|k| *k == kernel).unwrap_or(0) % PALETTE.len()]
}

/// Characters of a kernel label the legend shows.
const LABEL_CHARS: usize = 32;
/// Height of one legend row.
pub const ROW: f64 = 16.0;
/// Room for an entry's mark, before its text.
const MARK: f64 = 18.0;
/// Space after an entry.
const GAP: f64 = 14.0;

/// What an entry shows before its text.
enum Mark {
    Kernel(&'static str),
    WarmUp,
    Sample,
    Mean,
    Band,
    BaselineMean,
    Interval,
}

/// The SVG of `mark` with its left edge at `x`, centred on `y`.
fn mark(mark: &Mark, x: f64, y: f64) -> String {
    let at = |dx: f64| fixed(x + dx, 2);
    let v = |dy: f64| fixed(y + dy, 2);
    let (cx, cy, l, r) = (at(6.0), v(0.0), at(0.0), at(12.0));
    match mark {
        Mark::Kernel(c) => {
            format!(
                r#"<rect x="{l}" y="{}" width="12" height="8" fill="{c}"/>"#,
                v(-4.0)
            )
        }
        Mark::WarmUp => {
            format!(r##"<circle cx="{cx}" cy="{cy}" r="2.5" fill="none" stroke="#999"/>"##)
        }
        Mark::Sample => {
            format!(r##"<circle cx="{cx}" cy="{cy}" r="2.5" fill="#555" fill-opacity="0.8"/>"##)
        }
        Mark::Mean => format!(
            r##"<line x1="{l}" y1="{cy}" x2="{r}" y2="{cy}" stroke="#555" stroke-width="2"/>"##
        ),
        Mark::Band => format!(
            r##"<rect x="{l}" y="{}" width="12" height="8" fill="#4e79a7" fill-opacity="0.15"/>"##,
            v(-4.0)
        ),
        Mark::BaselineMean => format!(
            r##"<line x1="{l}" y1="{cy}" x2="{r}" y2="{cy}" stroke="#4e79a7" stroke-dasharray="4 3"/>"##
        ),
        Mark::Interval => format!(
            r##"<line x1="{cx}" y1="{t}" x2="{cx}" y2="{b}" stroke="#555" stroke-width="2"/><line x1="{cl}" y1="{t}" x2="{cr}" y2="{t}" stroke="#555"/><line x1="{cl}" y1="{b}" x2="{cr}" y2="{b}" stroke="#555"/><rect x="{}" y="{}" width="5" height="5" fill="#555"/>"##,
            at(3.5),
            v(-2.5),
            t = v(-6.0),
            b = v(6.0),
            cl = at(3.0),
            cr = at(9.0)
        ),
    }
}

/// The legend's entries: kernels first, then the marks.
fn entries(kernels: &[&str], baseline: &str, interval: Option<&str>) -> Vec<(Mark, String)> {
    let mut out: Vec<(Mark, String)> = kernels
        .iter()
        .map(|k| {
            let name = shorten(k, LABEL_CHARS);
            let text = if *k == baseline {
                format!("{name} (baseline)")
            } else {
                name
            };
            (Mark::Kernel(colour(kernels, k)), text)
        })
        .collect();
    out.extend([
        (Mark::WarmUp, "warm-up (never analysed)".to_owned()),
        (Mark::Sample, "sample, in its kernel's colour".to_owned()),
        (Mark::Mean, "point mean".to_owned()),
        (Mark::Band, "baseline's point means, min to max".to_owned()),
        (Mark::BaselineMean, "baseline mean".to_owned()),
    ]);
    if let Some(level) = interval {
        out.push((
            Mark::Interval,
            format!("{level} 95% CI of the change, as a range of means (square: the mean)"),
        ));
    }
    out
}

/// Draws the legend from `top`, its rows ending before `right`; returns its SVG and height.
/// `interval` names the comparisons' interval (`boot-level`, `run-to-run`), `None` when the
/// figure draws none.
#[must_use]
pub fn legend(
    kernels: &[&str],
    baseline: &str,
    interval: Option<&str>,
    top: f64,
    right: f64,
) -> (String, f64) {
    let mut svg = String::new();
    let left = 10.0;
    let (mut x, mut row) = (left, 0usize);
    let mut previous_was_kernel = true;
    for (m, text) in entries(kernels, baseline, interval) {
        let is_kernel = matches!(m, Mark::Kernel(_));
        let w = MARK + width(&text) + GAP;
        // The marks start a row of their own, after the kernels.
        if x > left && (x + w > right || (previous_was_kernel && !is_kernel)) {
            row += 1;
            x = left;
        }
        previous_was_kernel = is_kernel;
        let y = top + ROW * (row as f64 + 0.5);
        let _ = write!(svg, "{}", mark(&m, x, y));
        let _ = writeln!(
            svg,
            r##"<text x="{}" y="{}" fill="#333" dominant-baseline="middle">{}</text>"##,
            fixed(x + MARK, 2),
            fixed(y, 2),
            escape(&text)
        );
        x += w;
    }
    (svg, ROW * (row as f64 + 1.0))
}
