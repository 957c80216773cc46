//! The interval of each comparison, drawn on the panel's own value axis.
//!
//! A change interval [lo %, hi %] against the baseline mean B is the range of candidate
//! means B·(1 + lo/100) to B·(1 + hi/100) it allows. Drawn on the samples' axis, in a strip
//! right of the points, a whisker reads against the dashed baseline mean beside it: a
//! whisker clear of the line is a change the interval supports, one across it is not. The
//! interval is the one the verdict states (boot-level, run-to-run on a shared boot, or
//! within-boot when no kernel was booted twice), so plot and report.txt never disagree.

use crate::{
    analysis::CandidateResult,
    stats::{Confidence, RatioInterval},
};

/// One comparison as the strip draws it.
#[derive(Clone, Debug, PartialEq)]
pub struct Whisker {
    /// The candidate kernel.
    pub candidate: String,
    /// The candidate's mean (recipe unit): the marker on the whisker.
    pub mean: f64,
    /// The change in percent.
    pub change_pct: f64,
    /// The interval's ends in the recipe's unit, low to high; `None` when the verdict has
    /// no bounded interval (not estimable, or none at all).
    pub ends: Option<(f64, f64)>,
}

/// The interval the verdict's confidence statement cites: boot-level when it has one,
/// within-boot when only that exists (`verdict_text::confidence` prints the same choice).
fn stated(confidence: Confidence, c: &CandidateResult) -> Option<&RatioInterval> {
    match confidence {
        Confidence::BootCiExcludesZero { .. }
        | Confidence::BootCiIncludesZero { .. }
        | Confidence::BootCiNotEstimable { .. } => c.comparison.ci_boot.as_ref(),
        Confidence::WithinOnly => c.comparison.ci_within.as_ref(),
        Confidence::NotEstimable => None,
    }
}

/// The whisker of comparison `c`; its numbers are finite or absent.
#[must_use]
pub fn whisker(c: &CandidateResult) -> Whisker {
    let base = c.comparison.baseline_mean;
    let ends = stated(c.verdict.confidence, c)
        .and_then(|ci| ci.bounds)
        .map(|(lo, hi)| (base * (1.0 + lo / 100.0), base * (1.0 + hi / 100.0)))
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .map(|(a, b)| (a.min(b), a.max(b)));
    Whisker {
        candidate: c.candidate.clone(),
        mean: c.comparison.candidate_mean,
        change_pct: c.comparison.change_pct,
        ends,
    }
}

#[cfg(test)]
mod tests {
    use super::whisker;
    use crate::report::testdata::fixture;

    /// mprotect-pedro-v3: child +39.77% with a boot-level CI [+29.18%, +51.22%] (the
    /// published figures) becomes a whisker around the child's mean.
    #[test]
    fn the_interval_is_the_verdicts_in_the_values_unit() {
        let analysis = fixture("mprotect-pedro-v3");
        let all = analysis.series[0].all.as_ref().expect("analysed");
        let c = &all.comparisons[0];
        let w = whisker(c);
        let base = c.comparison.baseline_mean;
        let (lo, hi) = w.ends.expect("bounded");
        let (plo, phi) = c
            .comparison
            .ci_boot
            .as_ref()
            .and_then(|ci| ci.bounds)
            .expect("boot CI");
        assert!((lo / base - 1.0 - plo / 100.0).abs() < 1e-12);
        assert!((hi / base - 1.0 - phi / 100.0).abs() < 1e-12);
        assert!(lo < w.mean && w.mean < hi);
    }
}
