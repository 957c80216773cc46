//! Recovery decompositions (`[[analysis.recovery]]`, STATISTICS.md 3.4): how much of the gap
//! between two kernels each step of a path of intermediate kernels accounts for.
//!
//! With `gap = [child, parent]` and `path = [child, fastpath, folioonly, nofolio]` the rows are
//! child→fastpath, fastpath→folioonly, folioonly→nofolio (the steps), child→nofolio (combined)
//! and nofolio→parent (the residual); steps plus residual add up to 100%. The arithmetic is
//! `stats::recovery_pct`; this module only decides which rows exist.

use crate::{
    analysis::model::{RecoveryResult, RecoveryStep, RecoveryStepKind},
    recipe::resolved::Recovery,
    stats::{BootPoint, kernel_mean, recovery_pct},
};

/// Decomposes the gap of `recovery` over `points`.
#[must_use]
pub fn decompose(points: &[BootPoint], recovery: &Recovery) -> RecoveryResult {
    let (from, to) = (recovery.gap.0.as_str(), recovery.gap.1.as_str());
    let row = |kind, x: &str, y: &str| RecoveryStep {
        kind,
        from: x.to_owned(),
        to: y.to_owned(),
        pct: recovery_pct(points, x, y, from, to),
    };
    let path: Vec<&str> = recovery.path.iter().map(|k| k.as_str()).collect();
    let mut steps: Vec<RecoveryStep> = path
        .windows(2)
        .map(|pair| row(RecoveryStepKind::Step, pair[0], pair[1]))
        .collect();
    let (first, last) = (path[0], path[path.len() - 1]);
    // With two kernels the one step already is the whole path.
    if path.len() > 2 {
        steps.push(row(RecoveryStepKind::Combined, first, last));
    }
    if last != to {
        steps.push(row(RecoveryStepKind::Residual, last, to));
    }
    RecoveryResult {
        name: recovery.name.to_string(),
        gap: (from.to_owned(), to.to_owned()),
        gap_size: kernel_mean(points, from)
            .zip(kernel_mean(points, to))
            .map(|(a, b)| a - b),
        steps,
    }
}

#[cfg(test)]
mod tests {
    use super::decompose;
    use crate::{
        analysis::model::RecoveryStepKind,
        recipe::{ident::KernelLabel, resolved::Recovery},
        stats::BootPoint,
    };

    fn point(label: &str, kernel: &str, mean: f64) -> BootPoint {
        BootPoint {
            label: label.to_owned(),
            kernel: kernel.to_owned(),
            mean,
            n: 0,
            sd: None,
        }
    }

    fn label(text: &str) -> KernelLabel {
        KernelLabel::new(text).expect("valid")
    }

    #[test]
    fn steps_combined_and_residual_add_up() {
        let points = [
            point("p", "parent", 10.0),
            point("c", "child", 20.0),
            point("f", "fast", 15.0),
            point("n", "nofolio", 12.0),
        ];
        let recovery = Recovery {
            name: crate::recipe::ident::Name::new("mechanism").expect("valid"),
            gap: (label("child"), label("parent")),
            path: vec![label("child"), label("fast"), label("nofolio")],
        };
        let result = decompose(&points, &recovery);
        assert_eq!(result.gap_size, Some(10.0));
        let rows: Vec<(RecoveryStepKind, &str, &str, Option<f64>)> = result
            .steps
            .iter()
            .map(|s| (s.kind, s.from.as_str(), s.to.as_str(), s.pct))
            .collect();
        assert_eq!(
            rows,
            [
                (RecoveryStepKind::Step, "child", "fast", Some(50.0)),
                (RecoveryStepKind::Step, "fast", "nofolio", Some(30.0)),
                (RecoveryStepKind::Combined, "child", "nofolio", Some(80.0)),
                (RecoveryStepKind::Residual, "nofolio", "parent", Some(20.0)),
            ]
        );
    }
}
