//! What the probes (`[[probe]]`) gave and what the passing checks kept, point by point, as
//! the journal's records say: shown beside the timed results in `report.txt` and
//! `probes.tsv`, never in a verdict.
//!
//! Only a done attempt's records count, like its rows: a failed attempt's probe ran on a
//! boot whose numbers were thrown away. The journal's text is anyone's, so every string is
//! shown escaped and cut.

use serde::Serialize;

use crate::{analysis::PointInfo, results::journal::History};

/// One probe at one point.
#[derive(Clone, Debug, Serialize)]
pub struct ProbeResult {
    /// Point label.
    pub point: String,
    /// Kernel label.
    pub kernel: String,
    /// The probe's name.
    pub probe: String,
    /// `before` or `after` the timed samples.
    pub when: &'static str,
    /// How its command ended.
    pub outcome: String,
    /// Whether that is what the recipe expects.
    pub as_expected: bool,
    /// Wall seconds.
    pub elapsed_s: f64,
    /// Its kept files (relative to the results directory), each with what was cut.
    pub files: Vec<KeptInfo>,
    /// The values read, in order.
    pub values: Vec<ProbeValue>,
    /// What it did not deliver.
    pub problems: Vec<String>,
}

/// A kept file as a report names it.
#[derive(Clone, Debug, Serialize)]
pub struct KeptInfo {
    /// Relative to the results directory.
    pub path: String,
    /// Bytes kept.
    pub bytes: u64,
    /// Bytes printed beyond `max_output`, not kept.
    pub dropped_bytes: u64,
    /// The journal's record as written (raw path and SHA-256), for the readers that check
    /// or copy the file; never rendered.
    #[serde(skip)]
    pub record: crate::results::kept::KeptFile,
}

/// One value of a probe.
#[derive(Clone, Debug, Serialize)]
pub struct ProbeValue {
    /// Its name.
    pub name: String,
    /// The number.
    pub value: f64,
    /// Its unit.
    pub unit: String,
}

/// The probes' results and the passing checks' kept files of the done attempts, in point
/// order.
#[must_use]
pub fn probe_results(history: &History, points: &[PointInfo]) -> (Vec<ProbeResult>, Vec<KeptInfo>) {
    let text = |t: &str| crate::text::untrusted(t, crate::text::UNTRUSTED_CHARS).into_owned();
    let kept = |k: &crate::results::kept::KeptFile| KeptInfo {
        path: text(&k.path),
        bytes: k.bytes,
        dropped_bytes: k.dropped_bytes,
        record: k.clone(),
    };
    let mut probes = Vec::new();
    let mut checks = Vec::new();
    for point in points {
        let Some(attempt) = point
            .done_attempt
            .and_then(|a| history.attempt(&point.label, a))
        else {
            continue;
        };
        for run in &attempt.probes {
            probes.push(ProbeResult {
                point: point.label.clone(),
                kernel: point.kernel.clone(),
                probe: text(&run.probe),
                when: run.when.as_str(),
                outcome: text(&run.outcome),
                as_expected: run.as_expected,
                elapsed_s: run.elapsed_s,
                files: run.kept.iter().map(kept).collect(),
                values: run
                    .values
                    .iter()
                    .map(|v| ProbeValue {
                        name: text(&v.name),
                        value: v.value,
                        unit: text(&v.unit),
                    })
                    .collect(),
                problems: run.problems.iter().map(|p| text(p)).collect(),
            });
        }
        checks.extend(attempt.kept_checks.iter().map(kept));
    }
    (probes, checks)
}
