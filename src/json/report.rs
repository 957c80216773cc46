//! `aba report --json`: the campaign's figures and verdicts, per series and comparison,
//! borrowed from the [`Analysis`] the report files are written from (every number unrounded),
//! and the comparison with the recipe's reference when it names one.

use serde::Serialize;

use crate::{
    analysis::{
        Analysis,
        model::{
            Campaign, CampaignSummary, CaseSeries, CheckOutcome, ExpectCheck, KernelInfo,
            PointInfo, ProfileUse, Series, SeriesPoint, SeriesResult,
        },
    },
    json::{FORMAT, Kind},
    recipe::model::Role,
    recipe::scoped_limits::SeriesLimits,
    reproduction::{ReferenceComparison, Reproduction, summary_judge::SummaryReproduction},
    stats::{Better, Summary, VerdictParams},
};

/// The whole document.
#[derive(Debug, Serialize)]
pub struct ReportDoc<'a> {
    /// [`FORMAT`].
    pub format: u32,
    /// Always `report`.
    pub kind: Kind,
    /// What was run, where and when, and how it ended.
    pub campaign: &'a Campaign,
    /// The preregistered verdict limits the campaign is judged with.
    pub params: &'a VerdictParams,
    /// The kernels in recipe order; `bound` says where a bound one's release, image and
    /// initrd came from.
    pub kernels: &'a [KernelInfo],
    /// Every planned point in boot order, done or not.
    pub points: &'a [PointInfo],
    /// Planned points that are not done.
    pub missing_points: &'a [String],
    /// The conclusion: one verdict line per candidate and series, as report.txt's changes.
    pub summary: &'a CampaignSummary,
    /// Per workload case and metric, in recipe order.
    pub series: Vec<SeriesJson<'a>>,
    /// Each `[[analysis.case_comparison]]` per metric: the treatment case against the
    /// control case on every kernel (added in format 1: a new field keeps the format).
    pub case_comparisons: &'a [CaseSeries],
    /// The recipe's `[[expect]]` entries, checked.
    pub expects: &'a [ExpectCheck],
    /// What each correctness workload (`role = "check"`) proved on each kernel.
    pub checks: &'a [CheckOutcome],
    /// What each probe (`[[probe]]`) gave at each done point; never in a verdict (added in
    /// format 1: a new field keeps the format).
    pub probes: &'a [crate::analysis::probes::ProbeResult],
    /// The noise profile the campaign used, or why none.
    pub profile: &'a ProfileUse,
    /// Every kernel's build against the baseline's, field by field (`matched-build.tsv`;
    /// added in format 1: a new field keeps the format).
    pub matched_builds: &'a crate::analysis::matched_build::MatchedBuilds,
    /// The comparison with the recipe's `[expect] reference` when it is evidence with
    /// samples (what `aba compare --json` prints); `null` when the recipe names none or a
    /// summary reference.
    pub reproduction: Option<&'a Reproduction>,
    /// The comparison with the recipe's `[expect] reference` when it is a summary reference
    /// (what `aba compare NEW MAPPING.toml --json` prints as `reproduction`); `null`
    /// otherwise (added in format 1: a new field keeps the format).
    pub summary_reproduction: Option<&'a SummaryReproduction>,
}

/// One series: its point statistics and both analyses.
#[derive(Debug, Serialize)]
pub struct SeriesJson<'a> {
    /// `workload`, `workload[case]`, plus `/metric` when the metric is not named after it.
    pub label: &'a str,
    /// Workload name.
    pub workload: &'a str,
    /// Matrix case (`key=value,…`), empty without a matrix.
    pub case: &'a str,
    /// Metric name.
    pub metric: &'a str,
    /// Unit.
    pub unit: &'a str,
    /// Which direction is an improvement.
    pub better: Better,
    /// `measured` or `control`.
    pub role: Role,
    /// Auxiliary (`AUX_` labels, out of the conclusion).
    pub aux: bool,
    /// Done points with values, in boot order (no raw values: they are in samples.csv).
    pub points: Vec<SeriesPointJson<'a>>,
    /// Done points without a value for this series.
    pub missing: &'a [String],
    /// The analysis of every measured sample; `null` when no point has values.
    pub all: Option<&'a SeriesResult>,
    /// The drop-first analysis; `null` when unavailable.
    pub drop_first: Option<&'a SeriesResult>,
    /// Why there is no drop-first analysis.
    pub drop_first_unavailable: Option<&'a str>,
    /// The verdict limits that judged the series, each with the table that set it.
    pub limits: &'a SeriesLimits,
}

/// One point of one series.
#[derive(Debug, Serialize)]
pub struct SeriesPointJson<'a> {
    /// 1-based boot order.
    pub order: usize,
    /// Point label.
    pub label: &'a str,
    /// Kernel label.
    pub kernel: &'a str,
    /// Summary of the measured values (n, mean, sd, cv_pct, min, max, median, mad, outliers).
    pub all: &'a Summary,
    /// The same without the first value; `null` when n < 2.
    pub drop_first: Option<&'a Summary>,
}

impl<'a> ReportDoc<'a> {
    /// The document of `analysis`, with its comparison with the reference when there is one.
    #[must_use]
    pub fn new(
        analysis: &'a Analysis,
        reference: Option<&'a ReferenceComparison>,
    ) -> ReportDoc<'a> {
        ReportDoc {
            format: FORMAT,
            kind: Kind::Report,
            campaign: &analysis.campaign,
            params: &analysis.params,
            kernels: &analysis.kernels,
            points: &analysis.points,
            missing_points: &analysis.missing_points,
            summary: &analysis.summary,
            series: analysis.series.iter().map(SeriesJson::new).collect(),
            case_comparisons: &analysis.case_comparisons,
            expects: &analysis.expects,
            checks: &analysis.checks,
            probes: &analysis.probes,
            profile: &analysis.profile,
            matched_builds: &analysis.matched_builds,
            reproduction: reference.and_then(ReferenceComparison::evidence),
            summary_reproduction: reference.and_then(ReferenceComparison::summary),
        }
    }
}

impl<'a> SeriesJson<'a> {
    fn new(s: &'a Series) -> SeriesJson<'a> {
        SeriesJson {
            label: &s.label,
            workload: &s.workload,
            case: &s.case,
            metric: &s.metric,
            unit: &s.unit,
            better: s.better,
            role: s.role,
            aux: s.aux,
            points: s.points.iter().map(SeriesPointJson::new).collect(),
            missing: &s.missing,
            all: s.all.as_ref(),
            drop_first: s.drop_first.as_ref(),
            drop_first_unavailable: s.drop_first_unavailable.as_deref(),
            limits: &s.limits,
        }
    }
}

impl<'a> SeriesPointJson<'a> {
    fn new(p: &'a SeriesPoint) -> SeriesPointJson<'a> {
        SeriesPointJson {
            order: p.order,
            label: &p.label,
            kernel: &p.kernel,
            all: &p.all,
            drop_first: p.drop_first.as_ref(),
        }
    }
}
