//! Statistics core: per-point summaries, per-kernel pooling, comparisons, ratio intervals and
//! verdicts, exactly as specified in `STATISTICS.md` (sections 0 and 3) and checked against the
//! published figures in `tests/fixtures/golden/`.
//!
//! This module is a leaf: it depends on nothing else in the crate, only on `statrs` (wrapped
//! here and nowhere else) and `serde` (so the report layer can render the result structs). All
//! functions are pure and take points in boot order; nothing is cached and nothing is rounded
//! before output.

pub mod compare;
pub mod detect;
pub mod fsnotify;
pub mod interval;
pub mod kernel;
pub(crate) mod outliers;
pub mod paired;
pub mod pooling;
pub mod rank;
pub mod reproduce;
pub mod sequential;
pub mod summary;
#[cfg(test)]
mod testdata;
pub(crate) mod trend;
pub mod verdict;

pub use compare::{
    Bracket, Comparison, brackets, change_pct, compare, compare_with, diff, point_change_pct,
    recovery_pct,
};
pub use detect::{
    LongerDesign, POWER, boot_mean_rel_var, detectable_at_measured_noise, longer_design,
    minimal_detectable_pct,
};
pub use fsnotify::{FsnotifyKind, FsnotifyParams, classify_fsnotify_v1};
pub use interval::{
    BootVariance, FLOOR_COVERAGE_EXCESS, IntervalKind, RatioInterval, boot_variance, ci_boot,
    ci_boot_at, ci_boot_from, ci_within, ci_within_at, floor_factor, t_quantile, t_quantile_975,
    t_two_sided,
};
pub use kernel::{
    BootEffect, BootEffectTest, BootPoint, KernelSummary, kernel_boots, kernel_mean,
    kernel_summary, kernels_in_order,
};
pub use outliers::{Outliers, mad, median, modified_z_scores};
pub use paired::{PairedPoint, compare_paired};
pub use pooling::{
    BootPrior, HOMOGENEITY_ALPHA, Homogeneity, Pooling, homogeneity, pooled_boot_variance,
};
pub use reproduce::{
    ChangeDifference, ChangeVariance, Claim, NoClaim, ReproductionLabel, ReproductionVerdict, Rule,
    Which, change_difference, change_variance, reproduce,
};
pub use summary::{SdDenominator, Summary, summarize, summarize_with};
pub use trend::{TREND_ALPHA, TREND_MIN_NU, Trend, trend_test};
pub use verdict::{
    Better, CV_ALPHA, Confidence, CvBasis, Direction, Limit, Spread, SpreadMeasure, Verdict,
    VerdictInput, VerdictLabel, VerdictParams, limit_text, spread_of, verdict,
};
