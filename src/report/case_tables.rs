//! The case comparisons (`[[analysis.case_comparison]]`) in `report.txt`: per kernel the
//! control case's midpoint, the change, the boot-level interval of the per-point
//! differences, the control's drift, the largest CV and the verdict, as a kernel comparison
//! reports them. Their `comparison.tsv` rows are written by
//! [`crate::report::comparison_tsv`], with the other rows of that file.

use crate::{
    analysis::{
        Analysis,
        model::{CaseResult, CaseSeries},
    },
    report::{
        layout::{Align, Table, WIDTH, wrap},
        mail_tables::better_text,
        number::{fixed, mean_decimals, nu, pct, signed_pct},
    },
    stats::{RatioInterval, VerdictLabel},
};

/// The `report.txt` block: one table per case comparison, or nothing without any.
#[must_use]
pub fn cases(analysis: &Analysis) -> String {
    if analysis.case_comparisons.is_empty() {
        return String::new();
    }
    let mut out = wrap(
        "Case comparisons within each kernel: the treatment case against the control case at \
         the same boots, the interval from the per-point differences:",
        WIDTH,
        "",
    )
    .trim_end()
    .to_owned();
    for s in &analysis.case_comparisons {
        out.push_str("\n\n");
        out.push_str(&one(s));
    }
    out
}

fn one(s: &CaseSeries) -> String {
    let unit = if s.unit.is_empty() {
        String::new()
    } else {
        format!("{}, ", s.unit)
    };
    let mut table = Table::new(&[
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
    ]);
    table.span(s.treatment_label.clone());
    table.span(format!(
        "  vs {} ({unit}{})",
        s.control_label,
        better_text(s.better)
    ));
    table.row(["  kernel", "control", "change", "drop-first", "verdict"]);
    let decimals = mean_decimals(s.all.iter().map(|r| r.comparison.baseline_mean));
    for r in &s.all {
        let df = s
            .drop_first
            .iter()
            .find(|d| d.kernel == r.kernel)
            .map_or_else(|| "-".to_owned(), |d| signed_pct(d.comparison.change_pct));
        table.row([
            format!("  {}", r.kernel),
            fixed(r.comparison.baseline_mean, decimals),
            signed_pct(r.comparison.change_pct),
            df,
            verdict_cell(r),
        ]);
        table.span(format!("    {}", facts(r)));
    }
    let mut text = table.render(2);
    while text.ends_with('\n') {
        text.pop();
    }
    for why in &s.not_compared {
        text.push('\n');
        text.push_str(wrap(&format!("not compared: {why}"), WIDTH, "    ").trim_end());
    }
    text
}

/// `boot-level 95% CI [lo, hi] (ν = 1), drift +0.12%, CV 0.30%`.
fn facts(r: &CaseResult) -> String {
    let ci = r.comparison.ci_boot.as_ref().map_or_else(
        // No kernel has two paired points: UNREPLICATED, as the verdict says.
        || "no boot-level CI (ν = 0)".to_owned(),
        |ci| format!("95% CI {}", interval(ci)),
    );
    let drift = r.control.drift_pct.map_or_else(
        || "booted once".to_owned(),
        |d| format!("drift {}", signed_pct(d)),
    );
    let cv = r
        .max_cv_pct
        .map_or_else(String::new, |cv| format!(", CV {}", pct(cv)));
    format!("{ci}, {drift}{cv}")
}

fn interval(ci: &RatioInterval) -> String {
    match ci.bounds {
        Some((lo, hi)) => format!(
            "[{}, {}] (ν = {})",
            signed_pct(lo),
            signed_pct(hi),
            nu(ci.dof)
        ),
        None => format!("not estimable (ν = {})", nu(ci.dof)),
    }
}

/// The label, with the direction for a verdict that claims one.
fn verdict_cell(r: &CaseResult) -> String {
    let claim = matches!(
        r.verdict.label,
        VerdictLabel::Signal | VerdictLabel::BelowGate
    );
    match r.direction.as_deref().filter(|_| claim) {
        Some(d) => format!("{}, {d}", r.label),
        None => r.label.clone(),
    }
}
