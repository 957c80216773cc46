//! The entry point: read a results directory's raw files (recipe copy, journal, samples) and
//! recompute everything from them.
//!
//! [`analyze`] does the reading; [`analyze_inputs`] is the pure part, which unit tests drive
//! with in-memory journals and sample tables. The recipe's `[files]` copies are read once, by
//! the loader, and a series' definition hash is taken over those bytes. Nothing is cached between runs and nothing here
//! prints.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::PathBuf,
};

use sha2::{Digest as _, Sha256};

use crate::{
    analysis::{
        audit::{AuditInput, PlannedPoint, audit},
        calibration::{Calibration, CalibrationInput},
        case_compare::{CaseContext, compare_cases},
        checks::check_outcomes,
        environment::{DonePoint, EnvironmentCheck},
        error::AnalysisError,
        expect::{Judged, check},
        limit_edits::limit_edits,
        matched_build::{BuildSide, MatchedBuilds},
        model::{
            Analysis, Campaign, CaseSeries, Extension, KernelInfo, LookRecord, PointInfo,
            Preregistration, Series, SeriesCalibration, SeriesPoint,
        },
        select::ValidRows,
        series::{SeriesContext, analyze_series},
        summary::summarize_campaign,
    },
    profile::{Profile, ProfileError},
    recipe::{
        Recipe,
        model::BetterSpec,
        resolved::{AnalysisSettings, point_labels},
        scoped_limits::SeriesLimits,
    },
    results::{
        journal::{Event, Facts, Journal, Limits},
        layout::{ResultsDir, env_record_name},
        samples::SampleTable,
    },
    stats::{Better, VerdictParams, summarize},
};

/// The raw material of an analysis, already read.
#[derive(Clone, Copy, Debug)]
pub struct Inputs<'a> {
    /// The campaign's recipe (the copy in the results directory).
    pub recipe: &'a Recipe,
    /// The journal.
    pub journal: &'a Journal,
    /// `samples.csv`.
    pub samples: &'a SampleTable,
    /// The results directory's name.
    pub directory: &'a str,
    /// The journal's path, for messages.
    pub journal_path: &'a std::path::Path,
    /// Environment snapshots present, relative to the results directory.
    pub env_files: &'a BTreeSet<String>,
    /// Their contents (`env/a-a-1.json` → facts), or why one could not be read.
    pub env_records: &'a BTreeMap<String, Result<Facts, String>>,
    /// The campaign's copy of its noise profile, already checked against the journal;
    /// `None` when it has none (or it is turned off).
    pub profile: Option<&'a Profile>,
    /// `aba report --no-profile`: judge without the campaign's profile (and say so).
    pub no_profile: bool,
    /// Judge with limits edited after the run (and say so) instead of refusing.
    pub accept_edited_limits: bool,
}

/// How [`analyze_with`] treats the results directory.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnalyzeOptions {
    /// Judge with limits edited after the run (and say so at the top of every report)
    /// instead of refusing (`aba report --accept-edited-limits`).
    pub accept_edited_limits: bool,
    /// Judge without the campaign's noise profile (`aba report --no-profile`).
    pub no_profile: bool,
}

/// [`analyze_with`] with the default options: limits edited after the run are refused.
pub fn analyze(results: &ResultsDir) -> Result<Analysis, AnalysisError> {
    analyze_with(results, AnalyzeOptions::default())
}

/// Reads `results` and recomputes its analysis from the raw files.
///
/// Valid rows are `ok` measured rows of each point's done attempt (from the journal); every
/// other row is only counted in the audit. A missing `samples.csv` is read as an empty table
/// (a campaign that stopped before its first sample).
pub fn analyze_with(
    results: &ResultsDir,
    options: AnalyzeOptions,
) -> Result<Analysis, AnalysisError> {
    let journal_path = results.journal_path();
    for required in [&journal_path, &results.recipe_path()] {
        if !required.is_file() {
            return Err(AnalysisError::NotResultsDir {
                path: required.clone(),
            });
        }
    }
    let recipe = results
        .load_recipe()
        .map_err(|source| AnalysisError::Recipe {
            path: results.recipe_path(),
            source,
        })?;
    // The two big files are independent: read them side by side (each is a few hundred
    // milliseconds for a million samples).
    let samples_path = results.samples_path();
    let (journal, samples) = std::thread::scope(|scope| {
        // A missing file is no samples yet; anything else there (a FIFO, a folder, a link to
        // /dev/null) is refused by `read`, which opens regular files only and never blocks.
        let samples = scope.spawn(|| match std::fs::symlink_metadata(&samples_path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            _ => SampleTable::read(&samples_path).map(Some),
        });
        let journal = Journal::read_for_analysis(&journal_path);
        let samples = samples
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (journal, samples)
    });
    analyze_read(results, options, &recipe, journal?, samples?)
}

/// [`analyze_with`] over files read already: `journal` as [`Journal::read_for_analysis`]
/// reads it, `samples` as [`SampleTable::read`] does (`None`: no samples.csv). `aba report`
/// reads them once, for its check and for this.
pub fn analyze_read(
    results: &ResultsDir,
    options: AnalyzeOptions,
    recipe: &crate::recipe::Recipe,
    journal: Journal,
    samples: Option<SampleTable>,
) -> Result<Analysis, AnalysisError> {
    let journal_path = results.journal_path();
    let samples_path = results.samples_path();
    // Reports of a campaign that measured something are never rewritten without its data.
    let samples = match samples {
        Some(samples) => samples,
        None if journal
            .events
            .iter()
            .any(|e| matches!(e, Event::PointDone { .. })) =>
        {
            return Err(AnalysisError::NotResultsDir { path: samples_path });
        }
        None => SampleTable::default(),
    };
    let env_files = env_files(results);
    let env_records = env_records(results, &env_files);
    let profile = if options.no_profile {
        None
    } else {
        profile_copy(results, &journal)?
    };
    let directory = results
        .root
        .canonicalize()
        .unwrap_or_else(|_| results.root.clone())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    analyze_inputs(&Inputs {
        recipe,
        journal: &journal,
        samples: &samples,
        directory: &directory,
        journal_path: &journal_path,
        env_files: &env_files,
        env_records: &env_records,
        profile: profile.as_ref(),
        no_profile: options.no_profile,
        accept_edited_limits: options.accept_edited_limits,
    })
}

/// Largest environment record read back: aba writes a few KiB.
const ENV_RECORD_BYTES: u64 = 1 << 20;

/// The facts of every environment record, or why one cannot be read (it is then not
/// compared, and the report says so).
fn env_records(
    results: &ResultsDir,
    files: &BTreeSet<String>,
) -> BTreeMap<String, Result<Facts, String>> {
    files
        .iter()
        .map(|name| {
            let path = results.root.join(name);
            let facts = crate::input::read_text(&path, ENV_RECORD_BYTES, "environment record")
                .map_err(|e| e.to_string())
                .and_then(|text| {
                    serde_json::from_str::<Facts>(&text)
                        .map_err(|e| format!("not an environment record: {e}"))
                });
            (name.clone(), facts)
        })
        .collect()
}

/// The campaign's copy of its noise profile, when the journal says it has one: its bytes must
/// hash to the journaled SHA-256 (so that a report is reproducible), and it must be a valid
/// profile.
fn profile_copy(results: &ResultsDir, journal: &Journal) -> Result<Option<Profile>, AnalysisError> {
    let journaled = journal.events.iter().find_map(|e| match e {
        Event::Profile {
            file: Some(_),
            sha256: Some(sha256),
            ..
        } => Some(sha256.clone()),
        _ => None,
    });
    let Some(journaled) = journaled else {
        return Ok(None);
    };
    let path = results.profile_path();
    let text = crate::input::read_text(&path, crate::input::CONFIG_LIMIT, "noise profile")
        .map_err(|source| {
            AnalysisError::Profile(ProfileError::Read {
                path: path.clone(),
                source,
            })
        })?;
    let now = hex::encode(Sha256::digest(text.as_bytes()));
    if now != journaled {
        return Err(AnalysisError::ProfileChanged {
            path,
            now,
            then: journaled,
        });
    }
    crate::profile::file::parse_profile(&path, &text)
        .map(Some)
        .map_err(AnalysisError::Profile)
}

/// `env/<file>` for every file in the environment directory (empty when it does not exist).
fn env_files(results: &ResultsDir) -> BTreeSet<String> {
    std::fs::read_dir(results.env_dir())
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| format!("env/{}", e.file_name().to_string_lossy()))
                .collect()
        })
        .unwrap_or_default()
}

/// Recomputes the analysis from raw material that is already in memory.
pub fn analyze_inputs(inputs: &Inputs<'_>) -> Result<Analysis, AnalysisError> {
    let recipe = inputs.recipe;
    let labels = point_labels(&recipe.sequence);
    let header = header(inputs.journal);
    if let Some(journal_points) = &header.points
        && *journal_points != labels
    {
        return Err(AnalysisError::PlanMismatch {
            path: PathBuf::from(inputs.journal_path),
            journal: journal_points.clone(),
            recipe: labels,
        });
    }
    let state = inputs.journal.state();
    // An extended campaign's points are the planned ones and those its looks appended.
    let plan: Vec<PlannedPoint> = labels
        .iter()
        .zip(&recipe.sequence)
        .enumerate()
        .map(|(i, (label, kernel))| PlannedPoint {
            label: label.clone(),
            order: i + 1,
            kernel: kernel.to_string(),
        })
        .chain(state.appended.iter().map(|p| PlannedPoint {
            label: p.label.clone(),
            order: p.order,
            kernel: p.kernel.clone(),
        }))
        .collect();
    // Its verdicts are judged at the boundary of the look its points make.
    let look = recipe
        .analysis
        .extend
        .as_ref()
        .and_then(|e| e.boundary(labels.len()).look_at(plan.len()));
    let preregistration = preregistration(inputs, &header)?;
    let done = state.done_attempts();
    let rows = ValidRows::select(inputs.samples, &done);

    let baseline = recipe.analysis.baseline.to_string();
    let mut candidates: Vec<String> = Vec::new();
    for k in &recipe.sequence {
        if k.as_str() != baseline && !candidates.iter().any(|c| c == k.as_str()) {
            candidates.push(k.to_string());
        }
    }
    let params = verdict_params(&recipe.analysis);

    let mut audit = audit(&AuditInput {
        journal: inputs.journal,
        table: inputs.samples,
        plan: &plan,
        env_files: inputs.env_files,
        duplicate_rows: 0,
    });
    let points: Vec<PointInfo> = plan
        .iter()
        .map(|p| {
            let attempt = done.get(&p.label).copied();
            let proof = audit
                .attempts
                .iter()
                .find(|a| a.point == p.label && Some(a.attempt) == attempt);
            PointInfo {
                order: p.order,
                label: p.label.clone(),
                kernel: p.kernel.clone(),
                done_attempt: attempt,
                boot_id: proof.and_then(|a| a.boot_id.clone()),
                release: proof.and_then(|a| a.release.clone()),
                cmdline: proof.and_then(|a| a.cmdline.clone()),
            }
        })
        .collect();
    let env_names: Vec<Option<String>> = points
        .iter()
        .map(|p| p.done_attempt.map(|a| env_record_name(&p.label, a)))
        .collect();
    let done_refs: Vec<DonePoint<'_>> = points
        .iter()
        .zip(&env_names)
        .filter_map(|(p, file)| {
            Some(DonePoint {
                label: &p.label,
                kernel: &p.kernel,
                file: file.as_deref()?,
            })
        })
        .collect();
    let environment = EnvironmentCheck::new(recipe, &done_refs, inputs.env_records);
    let target = header.target.clone();
    let mut calibration = Calibration::new(&CalibrationInput {
        recipe,
        journal: inputs.journal,
        target: &target,
        profile: inputs.profile,
        no_profile: inputs.no_profile,
        points: &points,
        attempts: &audit.attempts,
        environment: &environment,
        shared_boot: audit.shared_boot.is_some(),
    });
    let mut series = Vec::new();
    let mut duplicate_rows = 0;
    let candidates_all = &candidates;
    for workload in &recipe.workloads {
        // A workload on chosen kernels (`kernels`) is compared only among them: a point of
        // another kernel is not missing data, and a kernel it did not run on is no
        // candidate. Without the baseline it has no comparison at all (the report says so).
        let candidates: Vec<String> = if workload.runs_on(&baseline) {
            candidates_all
                .iter()
                .filter(|c| workload.runs_on(c))
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        // Declared comparisons among the kernels it ran on.
        let declared: Vec<(String, String)> = recipe
            .analysis
            .comparisons
            .iter()
            .filter(|c| {
                workload.runs_on(c.candidate.as_str()) && workload.runs_on(c.baseline.as_str())
            })
            .map(|c| (c.candidate.to_string(), c.baseline.to_string()))
            .collect();
        // What the report says instead of a verdict for a kernel the workload left out.
        let left_out: Vec<String> = match workload.kernels_shown() {
            None => Vec::new(),
            Some(shown) if !workload.runs_on(&baseline) => vec![format!(
                "it ran only on kernel {shown} (`kernels`), which leaves out the baseline {baseline}: there is nothing to compare it with"
            )],
            Some(shown) => candidates_all
                .iter()
                .filter(|c| !workload.runs_on(c))
                .map(|c| format!("{c}: not run there (`kernels` = {shown})"))
                .collect(),
        };
        for case in workload.cases() {
            for metric in &workload.metrics {
                let mut series_points = Vec::new();
                let mut missing = Vec::new();
                for planned in plan
                    .iter()
                    .filter(|p| done.contains_key(&p.label) && workload.runs_on(&p.kernel))
                {
                    let values = rows.values(
                        &planned.label,
                        workload.name.as_str(),
                        &case.name,
                        metric.name.as_str(),
                    );
                    duplicate_rows += values.duplicates;
                    let Some(all) = summarize(&values.samples) else {
                        missing.push(planned.label.clone());
                        continue;
                    };
                    series_points.push(SeriesPoint {
                        order: planned.order,
                        label: planned.label.clone(),
                        kernel: planned.kernel.clone(),
                        drop_first: summarize(&values.samples[1..]),
                        values: values.samples,
                        warmups: values.warmups,
                        all,
                    });
                }
                let better = match metric.better {
                    BetterSpec::Lower => Better::Lower,
                    BetterSpec::Higher => Better::Higher,
                };
                let limits = SeriesLimits::of(&recipe.analysis, workload, metric);
                let series_params = VerdictParams {
                    gate_pct: limits.gate_pct.value,
                    max_drift_pct: limits.max_drift_pct.map(|l| l.value),
                    max_cv_pct: limits.max_cv_pct.value,
                    ..params.clone()
                };
                let calibrated = calibration.series(recipe, workload, &case, metric);
                let (prior_all, prior_drop_first) = match &calibrated {
                    Some(SeriesCalibration::Used { all, drop_first }) => {
                        (Some(all), drop_first.as_ref())
                    }
                    _ => (None, None),
                };
                let analyses = analyze_series(
                    &series_points,
                    &SeriesContext {
                        prior_all,
                        prior_drop_first,
                        environment: &environment,
                        baseline: &baseline,
                        candidates: &candidates,
                        declared: &declared,
                        params: &series_params,
                        better,
                        aux: workload.aux,
                        recoveries: &recipe.analysis.recovery,
                        look,
                    },
                );
                series.push(Series {
                    label: series_label(workload.name.as_str(), &case.name, metric.name.as_str()),
                    workload: workload.name.to_string(),
                    case: case.name.clone(),
                    metric: metric.name.to_string(),
                    unit: metric.unit.clone(),
                    better,
                    role: workload.role,
                    aux: workload.aux,
                    warmup: workload.warmup,
                    samples: workload.samples,
                    points: series_points,
                    missing,
                    all: analyses.all.map(|mut all| {
                        all.not_compared.extend(left_out.iter().cloned());
                        all
                    }),
                    drop_first: analyses.drop_first,
                    drop_first_unavailable: analyses.drop_first_unavailable,
                    calibration: calibrated,
                    limits,
                });
            }
        }
    }

    audit.duplicate_rows = duplicate_rows;
    let case_comparisons = case_comparisons(recipe, &series, &params, &environment);
    let kernels: Vec<KernelInfo> = recipe
        .kernels
        .values()
        .map(|k| KernelInfo {
            label: k.label.to_string(),
            release: k.release.to_string(),
            cmdline: recipe.cmdline_for(&k.label),
            planned: plan.iter().filter(|p| p.kernel == k.label.as_str()).count(),
            booted: points
                .iter()
                .filter(|p| p.kernel == k.label.as_str() && p.done_attempt.is_some())
                .map(|p| p.label.clone())
                .collect(),
            bound: inputs
                .journal
                .kernels()
                .and_then(|ks| ks.iter().find(|b| b.label == k.label))
                .cloned(),
        })
        .collect();
    // Points that shared one boot ran one kernel: there are no builds to compare.
    let matched_builds = if audit.shared_boot.is_some() {
        MatchedBuilds::default()
    } else {
        matched_builds(&baseline, &kernels, &points, &env_names, inputs.env_records)
    };
    let judged = Judged {
        series: &series,
        cases: &case_comparisons,
        target: &header.target,
    };
    let expects: Vec<_> = recipe.expect.iter().map(|e| check(e, judged)).collect();
    let summary = summarize_campaign(&series, &expects, &baseline);
    let (probes, kept_checks) =
        crate::analysis::probes::probe_results(&inputs.journal.history(), &points);
    Ok(Analysis {
        campaign: Campaign {
            name: recipe.name.to_string(),
            description: recipe.description.trim().to_owned(),
            // The journal's free text is anyone's: shown on one line, escaped and cut.
            directory: journal_text(inputs.directory),
            target: journal_text(&header.target),
            aba_version: journal_text(&header.aba),
            report_version: env!("CARGO_PKG_VERSION").to_owned(),
            recipe_sha256: journal_text(&header.sha256),
            started: journal_text(&header.time),
            finished: state.finished,
            stopped: state.stopped.as_deref().map(journal_text),
            baseline,
            candidates,
            boot_cmdline: recipe.boot_cmdline.clone(),
            sysctls: recipe
                .sysctls
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect(),
            tuning: recipe.tuning.settings(),
            // `load_recipe` read the recipe with the journal's parameter record.
            params: recipe
                .params
                .iter()
                .map(crate::recipe::params::Param::line)
                .collect(),
            amendments: amendments(inputs.journal),
            reference: recipe.reference.as_ref().map(|r| r.written.clone()),
        },
        params,
        kernels,
        missing_points: points
            .iter()
            .filter(|p| p.done_attempt.is_none())
            .map(|p| p.label.clone())
            .collect(),
        checks: check_outcomes(recipe, &points),
        probes,
        kept_checks,
        points,
        series,
        case_comparisons,
        expects,
        audit,
        summary,
        preregistration,
        environment,
        matched_builds,
        profile: calibration.usage,
        extension: recipe.analysis.extend.as_ref().map(|e| Extension {
            max_points: e.max_points,
            planned: labels.len(),
            appended: state.appended.iter().map(|p| p.label.clone()).collect(),
            looks: looks(inputs.journal),
            judged_at: look,
        }),
    })
}

/// The looks an extended campaign journaled.
fn looks(journal: &Journal) -> Vec<LookRecord> {
    journal
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Look {
                look,
                of,
                alpha,
                decision,
                reason,
                comparisons,
                appended,
                ..
            } => Some(LookRecord {
                look: *look,
                of: *of,
                alpha: *alpha,
                decision: *decision,
                reason: reason.clone(),
                comparisons: comparisons.clone(),
                appended: appended.iter().map(|p| p.label.clone()).collect(),
            }),
            _ => None,
        })
        .collect()
}

/// Every `[[analysis.case_comparison]]` of the recipe, one per metric the two cases share,
/// judged with the treatment series' limits.
fn case_comparisons(
    recipe: &Recipe,
    series: &[Series],
    params: &VerdictParams,
    environment: &EnvironmentCheck,
) -> Vec<CaseSeries> {
    let mut out = Vec::new();
    for spec in &recipe.analysis.case_comparisons {
        let find = |workload: &str, case: &str, metric: &str| {
            series
                .iter()
                .find(|s| s.workload == workload && s.case == case && s.metric == metric)
        };
        for metric in &spec.metrics {
            let treatment = find(spec.workload.as_str(), &spec.treatment, metric.as_str());
            let control = find(
                spec.control_workload.as_str(),
                &spec.control,
                metric.as_str(),
            );
            let (Some(treatment), Some(control)) = (treatment, control) else {
                continue;
            };
            let series_params = VerdictParams {
                gate_pct: treatment.limits.gate_pct.value,
                max_drift_pct: treatment.limits.max_drift_pct.map(|l| l.value),
                max_cv_pct: treatment.limits.max_cv_pct.value,
                ..params.clone()
            };
            let analyses = compare_cases(
                &control.points,
                &treatment.points,
                &CaseContext {
                    treatment: &treatment.label,
                    control: &control.label,
                    params: &series_params,
                    better: treatment.better,
                    aux: treatment.aux,
                    environment,
                },
            );
            out.push(CaseSeries {
                label: format!("{} vs {}", treatment.label, control.label),
                workload: treatment.workload.clone(),
                treatment: treatment.case.clone(),
                control_workload: control.workload.clone(),
                control: control.case.clone(),
                metric: metric.to_string(),
                treatment_label: treatment.label.clone(),
                control_label: control.label.clone(),
                unit: treatment.unit.clone(),
                better: treatment.better,
                limits: treatment.limits,
                all: analyses.all,
                drop_first: analyses.drop_first,
                not_compared: analyses.not_compared,
            });
        }
    }
    out
}

/// The verdict parameters of a recipe's `[analysis]`.
#[must_use]
pub fn verdict_params(settings: &AnalysisSettings) -> VerdictParams {
    VerdictParams {
        gate_pct: settings.gate_pct,
        drift_margin: settings.drift_margin,
        max_drift_pct: settings.max_drift_pct,
        max_cv_pct: settings.max_cv_pct,
    }
}

/// Compares the recipe copy with what the journal recorded when the campaign started: a
/// limit edited after the run is refused unless `accept_edited_limits` (then every report
/// says which limits changed, from what to what).
fn preregistration(inputs: &Inputs<'_>, header: &Header) -> Result<Preregistration, AnalysisError> {
    let recipe = inputs.recipe;
    let mut result = Preregistration {
        unchanged: header.sha256.is_empty() || header.sha256 == recipe.sha256,
        sha256_now: recipe.sha256.clone(),
        ..Preregistration::default()
    };
    if result.unchanged {
        return Ok(result);
    }
    let now = Limits::of(recipe);
    let what = match &header.limits {
        Some(then) => {
            result.edited = limit_edits(then, &now);
            if result.edited.is_empty() {
                return Ok(result);
            }
            result
                .edited
                .iter()
                .map(crate::report::number::limit_edit_words)
                .collect::<Vec<_>>()
                .join(", ")
        }
        None => {
            result.limits_unknown = true;
            format!(
                "it no longer hashes to the journal's sha256 ({} now, {} then), and this journal \
                 does not record the limits the campaign ran with, so whether they were edited \
                 cannot be told",
                recipe.sha256, header.sha256
            )
        }
    };
    if inputs.accept_edited_limits {
        Ok(result)
    } else {
        Err(AnalysisError::LimitsEdited {
            path: inputs.journal_path.with_file_name("recipe.toml"),
            what,
        })
    }
}

/// `workload`, `workload[case]`, plus `/metric` when the metric is not named after the
/// workload (a single metric defaults to the workload's name).
#[must_use]
pub fn series_label(workload: &str, case: &str, metric: &str) -> String {
    let mut label = workload.to_owned();
    if !case.is_empty() {
        label = format!("{label}[{case}]");
    }
    if metric != workload {
        label = format!("{label}/{metric}");
    }
    label
}

/// What the journal's first record says.
struct Header {
    limits: Option<Limits>,
    points: Option<Vec<String>>,
    target: String,
    aba: String,
    sha256: String,
    time: String,
}

/// Each kernel's build against the baseline's ([`MatchedBuilds`]): a kernel built on the
/// host by its record, a released one by the environment record of its first done point that
/// has one.
fn matched_builds(
    baseline: &str,
    kernels: &[KernelInfo],
    points: &[PointInfo],
    env_names: &[Option<String>],
    records: &BTreeMap<String, Result<Facts, String>>,
) -> MatchedBuilds {
    let sides: Vec<(String, Option<BuildSide>)> = kernels
        .iter()
        .map(|k| {
            let built = k
                .bound
                .as_ref()
                .and_then(|b| b.build.as_deref())
                .map(BuildSide::of_build);
            let released = || {
                points
                    .iter()
                    .zip(env_names)
                    .filter(|(p, _)| p.kernel == k.label)
                    .filter_map(|(_, name)| records.get(name.as_deref()?)?.as_ref().ok())
                    .find_map(BuildSide::of_facts)
            };
            (k.label.clone(), built.or_else(released))
        })
        .collect();
    MatchedBuilds::compare(baseline, &sides)
}

/// The journal's `amended` records.
fn amendments(journal: &Journal) -> Vec<crate::analysis::model::Amendment> {
    journal
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Amended {
                changes,
                recipe,
                time,
                ..
            } => Some(crate::analysis::model::Amendment {
                time: time.clone(),
                changes: changes.clone(),
                recipe: recipe.clone(),
            }),
            _ => None,
        })
        .collect()
}

fn header(journal: &Journal) -> Header {
    match journal.header() {
        Some(Event::Campaign {
            aba,
            recipe_sha256,
            target,
            points,
            time,
            limits,
            ..
        }) => Header {
            limits: limits.clone(),
            points: Some(points.clone()),
            target: target.clone(),
            aba: aba.clone(),
            sha256: recipe_sha256.clone(),
            time: time.clone(),
        },
        _ => Header {
            limits: None,
            points: None,
            target: String::new(),
            aba: String::new(),
            sha256: String::new(),
            time: String::new(),
        },
    }
}

/// A string of a journal (the header's fields, a stop's reason) as a report shows it: see
/// [`crate::text::untrusted`].
fn journal_text(text: &str) -> String {
    crate::text::untrusted(text, crate::text::UNTRUSTED_CHARS).into_owned()
}

#[cfg(test)]
mod tests {
    use std::{collections::BTreeSet, path::Path};

    use super::{Inputs, analyze_inputs, series_label};
    use crate::{
        analysis::{error::AnalysisError, model::AttemptOutcome},
        recipe::{Recipe, parse},
        results::{
            journal::{Event, JOURNAL_FORMAT, Journal, Limits},
            samples::{HEADER, SampleTable},
        },
    };

    const RECIPE: &str = r#"
version = 1
name = "t"
description = "unit"
sequence = ["a", "b", "a"]
warmup = 1
samples = 3
[kernels.a]
release = "6.1.0-a"
[kernels.b]
release = "6.1.0-b"
[[workload]]
name = "w"
run = "true"
metric = { number = true, unit = "ns", better = "lower" }
[[expect]]
workload = "w"
change_pct = 50.0
tolerance = 0.5
"#;

    /// The analysis of `table` with no environment records and no profile.
    fn analysed(
        recipe: &Recipe,
        journal: &Journal,
        table: &SampleTable,
    ) -> crate::analysis::Analysis {
        crate::analysis::testkit::analysed(recipe, journal, table, "t-1")
    }

    fn journal(points: &[&str], done: &[(&str, u32)]) -> Journal {
        let recipe = parse(Path::new("recipe.toml"), RECIPE).expect("valid");
        journal_of(points, done, &recipe.sha256, Some(Limits::of(&recipe)))
    }

    fn journal_of(
        points: &[&str],
        done: &[(&str, u32)],
        sha256: &str,
        limits: Option<Limits>,
    ) -> Journal {
        let mut events = vec![Event::Campaign {
            format: JOURNAL_FORMAT,
            aba: "0.1.0".into(),
            name: "t".into(),
            recipe_sha256: sha256.into(),
            limits,
            target: "lab".into(),
            points: points.iter().map(|p| (*p).to_owned()).collect(),
            time: "t".into(),
        }];
        for (point, attempt) in done {
            events.push(Event::PointDone {
                point: (*point).into(),
                attempt: *attempt,
                dmesg_warnings: 0,
                failed_units: vec![],
                time: "t".into(),
            });
        }
        Journal {
            events,
            truncated_tail: false,
        }
    }

    fn rows(lines: &[String]) -> SampleTable {
        let text = format!("{}\n{}\n", HEADER.join(","), lines.join("\n"));
        SampleTable::parse(Path::new("samples.csv"), text.as_bytes()).expect("valid")
    }

    fn sample(point: &str, attempt: u32, index: u32, status: &str, value: f64) -> String {
        format!(
            "{point},1,{attempt},k,r,b-{point}-{attempt},w,,w,sample,{index},0,{status},{value},ns,t"
        )
    }

    #[test]
    fn figures_come_from_valid_rows_only() {
        let recipe = parse(Path::new("recipe.toml"), RECIPE).expect("valid");
        let mut lines = Vec::new();
        for (point, value) in [("a-a", 10.0), ("b", 15.0), ("a-b", 10.0)] {
            for i in 1..=3 {
                lines.push(sample(point, 2, i, "ok", value));
                // Rows that must never count: another attempt, discarded and failed rows.
                lines.push(sample(point, 1, i, "ok", 1000.0));
                lines.push(sample(point, 2, i + 10, "discarded", 1000.0));
            }
        }
        lines.push("b,1,2,k,r,x,w,,w,warmup,1,0,ok,99,ns,t".to_owned());
        let table = rows(&lines);
        let journal = journal(&["a-a", "b", "a-b"], &[("a-a", 2), ("b", 2), ("a-b", 2)]);
        let analysis = analysed(&recipe, &journal, &table);
        let series = &analysis.series[0];
        assert_eq!(series.label, "w");
        assert_eq!(series.points[1].values, [15.0; 3]);
        assert_eq!(series.points[1].warmups, [99.0]);
        let all = series.all.as_ref().expect("points");
        assert_eq!(all.comparisons[0].comparison.change_pct, 50.0);
        assert!(analysis.expects[0].reproduced);
        assert_eq!(analysis.summary.expects_reproduced, Some(true));
        assert_eq!(analysis.summary.verdicts.len(), 1);
        assert!(analysis.missing_points.is_empty());
        // The audit still sees the other attempt and the discarded rows.
        let first = &analysis.audit.attempts[0];
        assert_eq!(
            (first.attempt, first.outcome, first.samples_ok),
            (1, AttemptOutcome::Unfinished, 3)
        );
        assert_eq!(analysis.audit.discarded_rows, 9);
    }

    #[test]
    fn missing_points_are_named_and_plan_mismatch_is_an_error() {
        let recipe = parse(Path::new("recipe.toml"), RECIPE).expect("valid");
        let lines: Vec<String> = (1..=3).map(|i| sample("a-a", 1, i, "ok", 10.0)).collect();
        let table = rows(&lines);
        let env = BTreeSet::new();
        let records = std::collections::BTreeMap::new();
        let inputs = |journal| Inputs {
            recipe: &recipe,
            journal,
            samples: &table,
            directory: "t-1",
            journal_path: Path::new("journal.jsonl"),
            env_files: &env,
            env_records: &records,
            profile: None,
            no_profile: false,
            accept_edited_limits: false,
        };
        let partial = journal(&["a-a", "b", "a-b"], &[("a-a", 1)]);
        let analysis = analyze_inputs(&inputs(&partial)).expect("analysable");
        assert_eq!(analysis.missing_points, ["b", "a-b"]);
        let all = analysis.series[0].all.as_ref().expect("a point");
        assert_eq!(all.not_compared, ["b: no done point with values"]);
        assert!(!analysis.expects[0].reproduced);

        let other = journal(&["a-a", "b"], &[]);
        let err = analyze_inputs(&inputs(&other)).expect_err("mismatch");
        assert!(matches!(err, AnalysisError::PlanMismatch { .. }), "{err}");
    }

    #[test]
    fn limits_edited_after_the_run_are_refused_unless_accepted() {
        let ran = parse(Path::new("recipe.toml"), RECIPE).expect("valid");
        let limits = Limits::of(&ran);
        let edited = parse(
            Path::new("recipe.toml"),
            &format!("{RECIPE}[analysis]\nmax_drift_pct = 2.0\ngate_pct = 3.0\n"),
        )
        .expect("valid");
        let table = rows(&[]);
        let env = BTreeSet::new();
        let records = std::collections::BTreeMap::new();
        let inputs = |recipe, journal, accept| Inputs {
            recipe,
            journal,
            samples: &table,
            directory: "t-1",
            journal_path: Path::new("dir/journal.jsonl"),
            env_files: &env,
            env_records: &records,
            profile: None,
            no_profile: false,
            accept_edited_limits: accept,
        };
        let journal = journal_of(&["a-a", "b", "a-b"], &[], &ran.sha256, Some(limits.clone()));
        // The recipe as run: nothing to say.
        let same = analyze_inputs(&inputs(&ran, &journal, false)).expect("analysable");
        assert!(same.preregistration.unchanged && same.preregistration.edited.is_empty());
        // Edited limits: refused by default, naming each limit from what to what.
        let err = analyze_inputs(&inputs(&edited, &journal, false)).expect_err("refused");
        assert_eq!(
            err.to_string(),
            "dir/recipe.toml was edited after the run: gate_pct 5 -> 3, max_drift_pct not set -> 2"
        );
        assert!(
            crate::error::analysis_hint(&err)
                .expect("hint")
                .contains("--accept-edited-limits")
        );
        // Accepted: judged with the edited limits, and the analysis says which changed.
        let accepted = analyze_inputs(&inputs(&edited, &journal, true)).expect("accepted");
        let names: Vec<&str> = accepted
            .preregistration
            .edited
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        assert_eq!(names, ["gate_pct", "max_drift_pct"]);
        assert_eq!(accepted.params.max_drift_pct, Some(2.0));
        // Another edit (an [[expect]]) changes the hash but not the limits: no refusal.
        let expect = parse(
            Path::new("recipe.toml"),
            &RECIPE.replace("change_pct = 50.0", "change_pct = 40.0"),
        )
        .expect("valid");
        let other = analyze_inputs(&inputs(&expect, &journal, false)).expect("analysable");
        assert!(!other.preregistration.unchanged && other.preregistration.edited.is_empty());
        // An older journal without limits and a changed recipe: cannot be told, refused.
        let old = journal_of(&["a-a", "b", "a-b"], &[], "x", None);
        let err = analyze_inputs(&inputs(&expect, &old, false)).expect_err("refused");
        assert!(err.to_string().contains("cannot be told"), "{err}");
        let unknown = analyze_inputs(&inputs(&expect, &old, true)).expect("accepted");
        assert!(unknown.preregistration.limits_unknown);
    }

    #[test]
    fn a_case_comparison_pairs_a_workload_with_a_control_workload_on_every_kernel() {
        let recipe = parse(
            Path::new("recipe.toml"),
            r#"
version = 1
name = "t"
description = "unit"
sequence = ["a", "b", "a"]
samples = 3
[kernels.a]
release = "6.1.0-a"
[kernels.b]
release = "6.1.0-b"
[[workload]]
name = "flag"
run = "true"
metric = { name = "ops", number = true, unit = "ns", better = "lower" }
[[workload]]
name = "noflag"
role = "control"
run = "true"
metric = { name = "ops", number = true, unit = "ns", better = "lower" }
[[analysis.case_comparison]]
workload = "flag"
treatment = ""
control_workload = "noflag"
control = ""
[[expect]]
workload = "flag"
control_workload = "noflag"
control = ""
kernel = "b"
change_pct = -10.0
tolerance = 0.01
"#,
        )
        .expect("valid");
        let mut lines = Vec::new();
        // Boots at 100, 104 and 98: the flag is 10 % faster at each of them.
        for (point, boot) in [("a-a", 100.0), ("b", 104.0), ("a-b", 98.0)] {
            for i in 1..=3 {
                let x = boot * (1.0 + 0.001 * f64::from(i));
                for (workload, value) in [("noflag", x), ("flag", 0.9 * x)] {
                    lines.push(format!(
                        "{point},1,1,k,r,b-{point},{workload},,ops,sample,{i},0,ok,{value},ns,t"
                    ));
                }
            }
        }
        let table = rows(&lines);
        let journal = journal_of(
            &["a-a", "b", "a-b"],
            &[("a-a", 1), ("b", 1), ("a-b", 1)],
            &recipe.sha256,
            Some(Limits::of(&recipe)),
        );
        let analysis = analysed(&recipe, &journal, &table);
        let case = &analysis.case_comparisons[0];
        assert_eq!(case.label, "flag/ops vs noflag/ops");
        assert_eq!(
            (case.control_workload.as_str(), case.metric.as_str()),
            ("noflag", "ops")
        );
        let kernels: Vec<&str> = case.all.iter().map(|r| r.kernel.as_str()).collect();
        assert_eq!(kernels, ["a", "b"]);
        for r in &case.all {
            assert!(
                (r.comparison.change_pct + 10.0).abs() < 1e-9,
                "{}",
                r.comparison.change_pct
            );
        }
        // a's control midpoint: the mean of its two boots' control means.
        let a = &case.all[0];
        assert!((a.comparison.baseline_mean - 99.0 * 1.002).abs() < 1e-9);
        assert_eq!(a.points, ["a-a", "a-b"]);
        assert_eq!(case.drop_first.len(), 2);
        let e = &analysis.expects[0];
        assert!(e.reproduced, "{e:?}");
        assert_eq!(e.control.as_deref(), Some("noflag/ops"));
        let line = crate::report::mail_prose::expect(&analysis);
        assert!(
            line.contains("flag/ops vs noflag/ops on kernel b: expected -10% ± 0.01"),
            "{line}"
        );
    }

    /// `[[analysis.comparison]]`: the fix against the unfixed kernel besides each against
    /// the parent, with its own verdict, its own reference in the mail, and an `[[expect]]`
    /// on it; beside it, a recovery share and another target's figure, which is not judged.
    #[test]
    fn a_declared_comparison_has_its_own_baseline_verdict_and_expectation() {
        let recipe = parse(
            Path::new("recipe.toml"),
            r#"
version = 1
name = "t"
description = "unit"
sequence = ["parent", "child", "fix", "parent", "child", "fix"]
samples = 3
[kernels.parent]
release = "6.1.0-a"
[kernels.child]
release = "6.1.0-b"
[kernels.fix]
release = "6.1.0-c"
[[workload]]
name = "w"
run = "true"
metric = { number = true, unit = "ns", better = "lower" }
[[analysis.comparison]]
candidate = "fix"
baseline = "child"
[[analysis.recovery]]
name = "fix"
gap = ["child", "parent"]
path = ["child", "fix"]
[[expect]]
workload = "w"
kernel = "fix"
baseline = "child"
change_pct = -20.0
tolerance = 0.5
[[expect]]
workload = "w"
recovery = "fix"
share_pct = 60.0
tolerance = 0.5
[[expect]]
workload = "w"
kernel = "child"
change_pct = 10.0
tolerance = 0.5
target = "machine-b"
"#,
        )
        .expect("valid");
        let labels = crate::recipe::resolved::point_labels(&recipe.sequence);
        let mut lines = Vec::new();
        for (point, kernel) in labels.iter().zip(&recipe.sequence) {
            let mean = match kernel.as_str() {
                "parent" => 100.0,
                "child" => 150.0,
                _ => 120.0,
            };
            for i in 1..=3 {
                let value = mean * (1.0 + 0.001 * f64::from(i));
                lines.push(format!(
                    "{point},1,1,{kernel},r,b-{point},w,,w,sample,{i},0,ok,{value},ns,t"
                ));
            }
        }
        let table = rows(&lines);
        let points: Vec<&str> = labels.iter().map(String::as_str).collect();
        let done: Vec<(&str, u32)> = points.iter().map(|p| (*p, 1)).collect();
        let journal = journal_of(&points, &done, &recipe.sha256, Some(Limits::of(&recipe)));
        let analysis = analysed(&recipe, &journal, &table);
        let all = analysis.series[0].all.as_ref().expect("values");
        let pairs: Vec<(&str, &str)> = all
            .comparisons
            .iter()
            .map(|c| (c.candidate.as_str(), c.baseline.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [("child", "parent"), ("fix", "parent"), ("fix", "child")]
        );
        let fix = &all.comparisons[2];
        assert!((fix.comparison.change_pct + 20.0).abs() < 1e-9);
        assert_eq!(fix.shown(), "fix vs child");
        let df = analysis.series[0].drop_first.as_ref().expect("n = 3");
        assert_eq!(df.comparisons.len(), 3);
        assert!(analysis.expects[0].reproduced, "{:?}", analysis.expects[0]);
        assert_eq!(analysis.expects[0].baseline.as_deref(), Some("child"));
        // The fix takes back (150 - 120) / (150 - 100) = 60 % of the gap.
        let share = &analysis.expects[1];
        assert!(share.reproduced, "{share:?}");
        assert_eq!(share.recovery.as_deref(), Some("fix, child -> fix"));
        // Machine B's figure (+50 % here would miss it) is not judged on target lab, and
        // does not make the campaign NOT reproduced.
        let elsewhere = &analysis.expects[2];
        assert!(!elsewhere.applies && !elsewhere.reproduced, "{elsewhere:?}");
        assert_eq!(analysis.summary.expects_reproduced, Some(true));
        assert_eq!(analysis.summary.verdicts.len(), 3);
        assert_eq!(analysis.summary.verdicts[2].name, "fix vs child");
        // The words: the table names the pair, the expectation says what it was against.
        let table = crate::report::mail_tables::changes(&analysis);
        assert!(table.contains("fix vs child"), "{table}");
        let expect = crate::report::mail_prose::expect(&analysis);
        assert!(
            expect.contains("w fix vs child: expected -20% ± 0.5"),
            "{expect}"
        );
        let flat_expect = expect.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat_expect.contains(
                "w recovery fix, child -> fix: expected a share of 60% ± 0.5 of the gap, got 60.00%"
            ),
            "{expect}"
        );
        assert!(
            flat_expect
                .contains("not judged, it is about target machine-b and this campaign ran on lab"),
            "{expect}"
        );
        let reports = crate::report::write::render_reports(
            &analysis,
            Path::new("t-1"),
            &crate::report::template::Templates::builtin(),
        )
        .expect("renders");
        let text = reports.report_txt();
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("the midpoint of kernel child"), "{text}");
        assert!(
            flat.contains("Every published result in [[expect]] (of those about target lab; 1 about other targets was not judged) was reproduced."),
            "{text}"
        );
        let svg = String::from_utf8_lossy(reports.get("samples.svg").expect("drawn")).into_owned();
        assert!(svg.contains("fix vs child"), "the interval's name");
    }

    #[test]
    fn labels() {
        assert_eq!(series_label("w", "", "w"), "w");
        assert_eq!(series_label("w", "level=1", "ops"), "w[level=1]/ops");
    }
}
