//! One recipe on several targets, side by side (issue 13): per comparison each target's
//! change, interval, verdict, baseline drift and CV, whether the targets agree, and whether
//! their environment fingerprints say they are the same kind of machine.
//!
//! Nothing here computes a statistic: every number is read from each target's own
//! [`Analysis`], made by [`crate::analysis::analyze`] from its own directory. Targets are never
//! pooled, whatever their fingerprints: two machines with the same CPU are still two machines,
//! and one with a different CPU, microcode, command line or tuning read back is labelled a
//! different machine, so a reader does not take a second machine's result for a replicate.

use std::{collections::BTreeMap, path::Path};

use serde::Serialize;

use crate::{
    analysis::Analysis,
    results::journal::{CampaignState, History, Journal},
    stats::{Better, SpreadMeasure},
};

/// Where one target's campaign stands, from its journal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum TargetState {
    /// Every point is done.
    Finished {
        /// Points done.
        points: usize,
    },
    /// The last run stopped early (a failure, Ctrl-C): resumable.
    Stopped {
        /// Points done.
        done: usize,
        /// Points planned.
        points: usize,
        /// Why, as the journal says.
        reason: String,
    },
    /// Not finished and not stopped: running now, or its runner was killed.
    Unfinished {
        /// Points done.
        done: usize,
        /// Points planned.
        points: usize,
    },
    /// No readable journal: the campaign never started (its start was refused).
    NotStarted {
        /// Why there is no journal.
        why: String,
    },
}

impl TargetState {
    /// Reads the state of the campaign in `dir`.
    #[must_use]
    pub fn of(dir: &Path) -> TargetState {
        TargetState::read(dir).0
    }

    /// Reads the journal of the campaign in `dir` once: its state, and for a reader that
    /// shows more (`aba status`) the journal with its fold; `None` when it never started.
    #[must_use]
    pub fn read(dir: &Path) -> (TargetState, Option<(Journal, History)>) {
        match Journal::read(&dir.join("journal.jsonl")) {
            Ok(journal) => {
                let history = journal.history();
                (
                    TargetState::of_state(&history.campaign),
                    Some((journal, history)),
                )
            }
            Err(e) => (
                TargetState::NotStarted {
                    why: crate::causes::one_line(&e),
                },
                None,
            ),
        }
    }

    /// The state of a campaign whose journal was read and folded already (`aba status`
    /// folds it once for everything it shows).
    #[must_use]
    pub fn of_state(state: &CampaignState) -> TargetState {
        let points = state.points.len();
        let done = state.points.iter().filter(|p| p.done.is_some()).count();
        if state.finished {
            TargetState::Finished { points }
        } else if let Some(reason) = &state.stopped {
            TargetState::Stopped {
                done,
                points,
                reason: reason.clone(),
            }
        } else {
            TargetState::Unfinished { done, points }
        }
    }

    /// Whether `aba resume` has something to do.
    #[must_use]
    pub fn resumable(&self) -> bool {
        matches!(
            self,
            TargetState::Stopped { .. } | TargetState::Unfinished { .. }
        )
    }
}

/// One target's campaign, as the combined report needs it.
#[derive(Clone, Debug)]
pub struct TargetInput {
    /// The inventory name.
    pub target: String,
    /// Its subdirectory of the parent.
    pub dir: String,
    /// Where its campaign stands.
    pub state: TargetState,
    /// Its analysis, or why there is none (no done point yet, unreadable files).
    pub analysis: Result<Analysis, String>,
}

/// One target in the combined report.
#[derive(Clone, Debug, Serialize)]
pub struct TargetSummary {
    /// The inventory name.
    pub target: String,
    /// Its subdirectory of the parent.
    pub dir: String,
    /// Where its campaign stands.
    pub state: TargetState,
    /// Why it has no analysis, when it has none.
    pub not_analysed: Option<String>,
}

/// The machine facts of one target: its first done baseline point's environment record
/// (CPU model, microcode, SMT, THP, mitigations, cpufreq, sysctls read back …) and command
/// line, without what only says where the kernel was booted from.
#[derive(Clone, Debug, Serialize)]
pub struct Fingerprint {
    /// The target.
    pub target: String,
    /// The point the facts come from.
    pub point: String,
    /// Fact name → value; the command line is `cmdline`.
    pub facts: BTreeMap<String, String>,
}

/// A fact whose value differs between targets.
#[derive(Clone, Debug, Serialize)]
pub struct MachineDifference {
    /// The fact's name (`cpu_model`, `cmdline`, `sysctl.kernel.sched_rt_runtime_us`).
    pub fact: String,
    /// In words (`CPU model`).
    pub what: String,
    /// Each target's value (`-` when its record lacks the fact).
    pub values: Vec<(String, String)>,
}

/// Whether the targets are the same kind of machine.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Machines {
    /// The targets' fingerprints, in target order.
    pub fingerprints: Vec<Fingerprint>,
    /// Targets without a fingerprint (no done baseline point with an environment record).
    pub unknown: Vec<String>,
    /// The facts that differ.
    pub differences: Vec<MachineDifference>,
}

impl Machines {
    /// Every target has a fingerprint and they are all equal.
    #[must_use]
    pub fn same(&self) -> bool {
        self.unknown.is_empty() && self.differences.is_empty()
    }
}

/// Command-line parameters that say where the kernel and root file system were found, not
/// how the kernel runs: two identical machines differ in them.
const BOOT_LOCATION_PARAMS: &[&str] = &["BOOT_IMAGE", "root", "initrd", "rootflags"];

/// A command line without [`BOOT_LOCATION_PARAMS`].
fn cmdline_fact(cmdline: &str) -> String {
    cmdline
        .split_whitespace()
        .filter(|p| {
            let name = p.split_once('=').map_or(*p, |(n, _)| n);
            !BOOT_LOCATION_PARAMS.contains(&name)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn fingerprint(target: &str, analysis: &Analysis) -> Option<Fingerprint> {
    let baseline = &analysis.campaign.baseline;
    let env = analysis
        .environment
        .points
        .iter()
        .find(|p| &p.kernel == baseline)?;
    let mut facts = env.facts.clone();
    if let Some(cmdline) = analysis
        .points
        .iter()
        .find(|p| p.label == env.point)
        .and_then(|p| p.cmdline.as_deref())
    {
        facts.insert("cmdline".to_owned(), cmdline_fact(cmdline));
    }
    Some(Fingerprint {
        target: target.to_owned(),
        point: env.point.clone(),
        facts,
    })
}

impl Machines {
    fn new(inputs: &[TargetInput]) -> Machines {
        let mut machines = Machines::default();
        for input in inputs {
            match input
                .analysis
                .as_ref()
                .ok()
                .and_then(|a| fingerprint(&input.target, a))
            {
                Some(f) => machines.fingerprints.push(f),
                None => machines.unknown.push(input.target.clone()),
            }
        }
        let names: std::collections::BTreeSet<&String> = machines
            .fingerprints
            .iter()
            .flat_map(|f| f.facts.keys())
            .collect();
        for name in names {
            let values: Vec<(String, String)> = machines
                .fingerprints
                .iter()
                .map(|f| {
                    (
                        f.target.clone(),
                        f.facts.get(name).cloned().unwrap_or_else(|| "-".to_owned()),
                    )
                })
                .collect();
            if values.iter().any(|(_, v)| *v != values[0].1) {
                let what = if name == "cmdline" {
                    "kernel command line".to_owned()
                } else {
                    crate::fingerprint::describe(name)
                };
                machines.differences.push(MachineDifference {
                    fact: name.clone(),
                    what,
                    values,
                });
            }
        }
        machines
    }
}

/// One target's result of one comparison.
#[derive(Clone, Debug, Serialize)]
pub struct TargetRow {
    /// The target.
    pub target: String,
    /// 100·(candidate − baseline)/baseline, all samples.
    pub change_pct: f64,
    /// The boot-level 95% interval of the change, percent; `None` when not estimable.
    pub interval: Option<(f64, f64)>,
    /// The verdict as printed (`SIGNAL`, `AUX_SIGNAL` …).
    pub verdict: String,
    /// `slower` or `faster`; `None` at exactly 0.
    pub direction: Option<String>,
    /// The baseline's spread between its boots: the signed drift of its last boot against
    /// its first (two boots), or the RMS pair difference (three or more).
    pub drift_pct: Option<f64>,
    /// Which of the two `drift_pct` is.
    pub drift_measure: Option<SpreadMeasure>,
    /// The largest point CV over the candidate's and the baseline's points.
    pub cv_pct: Option<f64>,
}

/// Whether the targets reach the same conclusion.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Agreement {
    /// Every target with a result has the same direction and verdict.
    Agree {
        /// The shared direction.
        direction: Option<String>,
        /// The shared verdict.
        verdict: String,
    },
    /// They differ in direction or verdict.
    Disagree,
    /// Fewer than two targets have a result: nothing to agree on.
    Alone,
}

/// One comparison (series, candidate against baseline) across the targets.
#[derive(Clone, Debug, Serialize)]
pub struct CrossComparison {
    /// The series label.
    pub series: String,
    /// Its unit.
    pub unit: String,
    /// Which direction is better.
    pub better: Better,
    /// The candidate kernel.
    pub candidate: String,
    /// The baseline kernel.
    pub baseline: String,
    /// Each target with a result, in target order.
    pub rows: Vec<TargetRow>,
    /// Targets without a result for it (not analysed, or not that far yet).
    pub missing: Vec<String>,
    /// Whether the rows agree.
    pub agreement: Agreement,
}

/// The combined analysis of a multi-target run.
#[derive(Clone, Debug, Serialize)]
pub struct TargetsAnalysis {
    /// What is side by side: one recipe's targets, or linked campaigns.
    pub grouping: Grouping,
    /// The recipe's name (linked campaigns: their recipes' distinct names).
    pub recipe: String,
    /// The parent directory's own name.
    pub directory: String,
    /// The targets in manifest order.
    pub targets: Vec<TargetSummary>,
    /// Whether they are the same kind of machine.
    pub machines: Machines,
    /// Every comparison any target has, in the first such target's order.
    pub comparisons: Vec<CrossComparison>,
}

/// What a combined report puts side by side; the words it uses follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Grouping {
    /// One recipe on several targets: a multi-target run's parent directory.
    Targets,
    /// Campaigns of one question, linked by `aba report A B --together` (the production
    /// and the exact config of one A/B): each with its own recipe, limits and verdicts.
    Campaigns,
}

impl Grouping {
    /// `target` or `campaign`.
    #[must_use]
    pub fn noun(self) -> &'static str {
        match self {
            Grouping::Targets => "target",
            Grouping::Campaigns => "campaign",
        }
    }

    /// `targets` or `campaigns`.
    #[must_use]
    pub fn nouns(self) -> &'static str {
        match self {
            Grouping::Targets => "targets",
            Grouping::Campaigns => "campaigns",
        }
    }
}

fn row(target: &str, c: &crate::analysis::CandidateResult) -> TargetRow {
    let drift = c.verdict.spreads.iter().find(|s| s.kernel == c.baseline);
    TargetRow {
        target: target.to_owned(),
        change_pct: c.comparison.change_pct,
        interval: c.comparison.ci_boot.as_ref().and_then(|i| i.bounds),
        verdict: c.label.clone(),
        direction: c.direction.clone(),
        drift_pct: drift.map(|s| s.pct),
        drift_measure: drift.map(|s| s.measure),
        cv_pct: c.max_cv_pct,
    }
}

fn agreement(rows: &[TargetRow]) -> Agreement {
    let Some(first) = rows.first() else {
        return Agreement::Alone;
    };
    if rows.len() < 2 {
        return Agreement::Alone;
    }
    if rows
        .iter()
        .all(|r| r.direction == first.direction && r.verdict == first.verdict)
    {
        Agreement::Agree {
            direction: first.direction.clone(),
            verdict: first.verdict.clone(),
        }
    } else {
        Agreement::Disagree
    }
}

impl TargetsAnalysis {
    /// Puts the targets' analyses side by side.
    #[must_use]
    pub fn new(recipe: &str, directory: &str, inputs: &[TargetInput]) -> TargetsAnalysis {
        let mut comparisons: Vec<CrossComparison> = Vec::new();
        for input in inputs {
            let Ok(analysis) = &input.analysis else {
                continue;
            };
            for series in &analysis.series {
                let Some(all) = &series.all else { continue };
                for c in &all.comparisons {
                    let found = comparisons.iter_mut().find(|x| {
                        x.series == series.label
                            && x.candidate == c.candidate
                            && x.baseline == c.baseline
                    });
                    let entry = match found {
                        Some(entry) => entry,
                        None => {
                            comparisons.push(CrossComparison {
                                series: series.label.clone(),
                                unit: series.unit.clone(),
                                better: series.better,
                                candidate: c.candidate.clone(),
                                baseline: c.baseline.clone(),
                                rows: Vec::new(),
                                missing: Vec::new(),
                                agreement: Agreement::Alone,
                            });
                            comparisons.last_mut().expect("invariant: just pushed")
                        }
                    };
                    entry.rows.push(row(&input.target, c));
                }
            }
        }
        // Rows in target order; whoever has none is named.
        for c in &mut comparisons {
            let order = |t: &str| inputs.iter().position(|i| i.target == t);
            c.rows.sort_by_key(|r| order(&r.target));
            c.missing = inputs
                .iter()
                .filter(|i| !c.rows.iter().any(|r| r.target == i.target))
                .map(|i| i.target.clone())
                .collect();
            c.agreement = agreement(&c.rows);
        }
        TargetsAnalysis {
            grouping: Grouping::Targets,
            recipe: recipe.to_owned(),
            directory: directory.to_owned(),
            targets: inputs
                .iter()
                .map(|i| TargetSummary {
                    target: i.target.clone(),
                    dir: i.dir.clone(),
                    state: i.state.clone(),
                    not_analysed: i.analysis.as_ref().err().cloned(),
                })
                .collect(),
            machines: Machines::new(inputs),
            comparisons,
        }
    }

    /// Puts linked campaigns side by side (`aba report A B --together`): each input is one
    /// campaign, named by its directory; comparisons are matched by series, candidate and
    /// baseline as a multi-target run's are, and never pooled.
    #[must_use]
    pub fn linked(inputs: &[TargetInput]) -> TargetsAnalysis {
        let mut recipes: Vec<&str> = Vec::new();
        for a in inputs.iter().filter_map(|i| i.analysis.as_ref().ok()) {
            if !recipes.contains(&a.campaign.name.as_str()) {
                recipes.push(&a.campaign.name);
            }
        }
        TargetsAnalysis {
            grouping: Grouping::Campaigns,
            ..TargetsAnalysis::new(&recipes.join(", "), "", inputs)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Agreement, TargetInput, TargetState, TargetsAnalysis, cmdline_fact};
    use crate::analysis::testkit;

    fn input(target: &str, analysis: crate::analysis::Analysis) -> TargetInput {
        TargetInput {
            target: target.to_owned(),
            dir: target.to_owned(),
            state: TargetState::Finished { points: 3 },
            analysis: Ok(analysis),
        }
    }

    #[test]
    fn boot_location_parameters_are_not_machine_facts() {
        assert_eq!(
            cmdline_fact("BOOT_IMAGE=/vmlinuz-6.1 root=UUID=1 ro quiet isolcpus=2"),
            "ro quiet isolcpus=2"
        );
    }

    /// The roles campaign with an environment record of its first baseline point.
    fn analysed() -> crate::analysis::Analysis {
        let mut a = testkit::roles();
        a.environment
            .points
            .push(crate::analysis::environment::PointEnv {
                point: "a-a".to_owned(),
                kernel: "a".to_owned(),
                file: "env/a-a-1.json".to_owned(),
                facts: [("cpu_model", "Xeon"), ("microcode", "0x2b")]
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            });
        a
    }

    #[test]
    fn same_results_agree_and_a_different_cpu_is_a_different_machine() {
        let a = analysed();
        let together =
            TargetsAnalysis::new("r", "r-1", &[input("a", a.clone()), input("b", a.clone())]);
        assert!(together.machines.same(), "{:?}", together.machines);
        assert!(!together.comparisons.is_empty());
        for c in &together.comparisons {
            assert_eq!(c.rows.len(), 2);
            assert!(matches!(c.agreement, Agreement::Agree { .. }), "{c:?}");
        }

        // The second machine: another CPU, and the candidate's verdict the other way round.
        let mut b = a.clone();
        for p in &mut b.environment.points {
            p.facts
                .insert("cpu_model".to_owned(), "Other CPU".to_owned());
        }
        let flipped = b.series[0].all.as_mut().expect("analysed");
        flipped.comparisons[0].direction = Some("other".to_owned());
        let apart = TargetsAnalysis::new("r", "r-1", &[input("a", a), input("b", b)]);
        assert!(!apart.machines.same());
        let cpu = apart
            .machines
            .differences
            .iter()
            .find(|d| d.fact == "cpu_model")
            .expect("the CPU differs");
        assert_eq!(cpu.what, "CPU model");
        assert_eq!(cpu.values[1], ("b".to_owned(), "Other CPU".to_owned()));
        assert_eq!(apart.comparisons[0].agreement, Agreement::Disagree);
    }

    #[test]
    fn a_target_without_analysis_is_missing_from_every_comparison() {
        let a = analysed();
        let none = TargetInput {
            target: "b".to_owned(),
            dir: "b".to_owned(),
            state: TargetState::NotStarted {
                why: "no journal".to_owned(),
            },
            analysis: Err("no journal".to_owned()),
        };
        let combined = TargetsAnalysis::new("r", "r-1", &[input("a", a), none]);
        assert_eq!(combined.machines.unknown, ["b"]);
        assert!(!combined.machines.same());
        for c in &combined.comparisons {
            assert_eq!(c.missing, ["b"]);
            assert_eq!(c.agreement, Agreement::Alone);
        }
        assert_eq!(
            combined.targets[1].not_analysed.as_deref(),
            Some("no journal")
        );
    }
}
