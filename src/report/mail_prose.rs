//! The prose of `report.txt`, pre-formatted and wrapped at [`WIDTH`] columns: what was run,
//! the conclusion in the words of the seeds' mails ("changed by", "maximum within-boot CV",
//! "drift was at most", "dropping the first measured sample … gave the same conclusion"),
//! the per-series details (intervals with ν, borrowed boot variance, why a verdict is not
//! SIGNAL), controls, expectations, the audit and the shared-boot caveat.
//!
//! Percentages have 2 decimals; bounds are 2-decimal ceilings (STATISTICS.md 3.7).

use std::fmt::Write as _;

use crate::{
    analysis::{
        Analysis, AttemptOutcome, CandidateResult, Series, SeriesCalibration, SeriesResult,
        VerdictLine, Worst,
        model::{Expected, ExpectedQuantity},
    },
    point_name::point_name,
    recipe::scoped_limits::ScopedLimit,
    report::{
        audit_tsv::describe_run,
        layout::{WIDTH, keep_together, wrap, wrap_hanging},
        mail_tables::{baseline_reference, design, kernel_reference},
        number::{as_written, ceil2, fixed, nu, pct, signed_pct, significant},
        unit_scale::{display_scale, signed_with_unit, with_unit},
        verdict_text::{calibration, confidence, few_boots, headline, level},
    },
    stats::{
        BootEffectTest, KernelSummary, Pooling, RatioInterval, SpreadMeasure, VerdictLabel,
        spread_of,
    },
};

/// `name: A/B/A on target lab1, 3 points`.
#[must_use]
pub fn title(analysis: &Analysis) -> String {
    let c = &analysis.campaign;
    format!(
        "{}: {} on target {}, {} point{}",
        c.name,
        design(analysis),
        c.target,
        analysis.points.len(),
        plural(analysis.points.len())
    )
}

/// What a reader must know before the figures: the recipe was amended after the campaign
/// started (`aba resume --amend`), the campaign extended itself. Empty otherwise.
pub fn notices(analysis: &Analysis) -> String {
    analysis
        .campaign
        .amendments
        .iter()
        .map(|a| {
            format!(
                "Amended on {} (aba resume --amend {}): {}. Points finished before it ran with the recipe as it was; the analysis and its limits are unchanged.",
                a.time,
                a.recipe,
                a.changes.join("; ")
            )
        })
        .chain(analysis.extension.as_ref().map(extension))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// How many points an extended campaign added, and why, look by look.
fn extension(e: &crate::analysis::model::Extension) -> String {
    let mut out = format!(
        "Extended campaign ([analysis] extend, max_points {}): {} point{} planned, {} appended{}.",
        e.max_points,
        e.planned,
        plural(e.planned),
        e.appended.len(),
        if e.appended.is_empty() {
            String::new()
        } else {
            format!(" ({})", e.appended.join(", "))
        }
    );
    for look in &e.looks {
        let states: Vec<String> = look
            .comparisons
            .iter()
            .map(|c| format!("{} {} {}", c.series, c.candidate, c.state.word()))
            .collect();
        let what = if look.appended.is_empty() {
            "stopped".to_owned()
        } else {
            format!("appended {}", look.appended.join(", "))
        };
        let _ = write!(
            out,
            " Look {} of {} (α = {:.4}): {what}, because {} ({}).",
            look.look,
            look.of,
            look.alpha,
            look.reason,
            if states.is_empty() {
                "no comparison".to_owned()
            } else {
                states.join("; ")
            }
        );
    }
    match &e.judged_at {
        Some(look) => {
            let _ = write!(
                out,
                " The verdicts are judged at look {} of {}: their evidence needs {:.2}% intervals (the 5% is spent over the looks), not the 95% ones printed.",
                look.look,
                look.of,
                look.confidence_pct()
            );
        }
        None => out.push_str(
            " Its points make no look of the recipe's boundary, so the verdicts are judged as a fixed design's.",
        ),
    }
    out
}

/// `s` unless `n` is 1.
pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `a`, `a and b`, `a, b and c`.
pub(crate) fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// What changed in the recipe copy since the run, for the top of every report; empty when
/// it is the recipe the campaign ran with.
#[must_use]
pub fn preregistration(analysis: &Analysis) -> String {
    let p = &analysis.preregistration;
    if p.unchanged {
        return String::new();
    }
    let c = &analysis.campaign;
    let text = if !p.edited.is_empty() {
        let edits: Vec<String> = p
            .edited
            .iter()
            .map(crate::report::number::limit_edit_words)
            .collect();
        format!(
            "LIMITS EDITED AFTER THE RUN: {}. The campaign was preregistered with the first \
             values; every verdict below uses the edited ones (aba report \
             --accept-edited-limits).",
            edits.join(", ")
        )
    } else if p.limits_unknown {
        format!(
            "RECIPE EDITED AFTER THE RUN: recipe.toml no longer hashes to the journal's \
             sha256 ({} now, {} then), and the journal does not record the limits the \
             campaign ran with: the verdicts below may use limits edited after the run (aba \
             report --accept-edited-limits).",
            p.sha256_now, c.recipe_sha256
        )
    } else {
        format!(
            "Note: recipe.toml or a file it copies changed after the run (sha256 {} now, {} \
             then); its verdict limits are the ones the campaign ran with.",
            p.sha256_now, c.recipe_sha256
        )
    };
    wrap(&text, WIDTH, "")
}

/// Points by their names (`a#1, a#2`), comma-separated.
fn names(analysis: &Analysis, points: &[String]) -> String {
    let names: Vec<String> = points.iter().map(|p| analysis.point_name(p)).collect();
    names.join(", ")
}

/// The recipe's description, wrapped.
#[must_use]
pub fn description(analysis: &Analysis) -> String {
    wrap(&analysis.campaign.description, WIDTH, "")
}

/// The points, boots, samples per point and settings.
#[must_use]
pub fn setup(analysis: &Analysis) -> String {
    let c = &analysis.campaign;
    let labels: Vec<String> = analysis
        .points
        .iter()
        .map(|p| point_name(&p.label, &p.kernel))
        .collect();
    let boots = if analysis.audit.shared_boot.is_some() {
        "all in one boot".to_owned()
    } else if labels.len() == 1 {
        // One point proves nothing about switching: it ran on the boot it found or made.
        "in one boot".to_owned()
    } else {
        "each a fresh boot".to_owned()
    };
    let mut text = format!(
        "{} point{} in boot order ({}), {boots} on target {}.",
        labels.len(),
        plural(labels.len()),
        labels.join(", "),
        c.target
    );
    let mut counts: Vec<(u32, u32)> = analysis
        .series
        .iter()
        .map(|s| (s.warmup, s.samples))
        .collect();
    counts.dedup();
    if let [(warmup, samples)] = counts[..] {
        let _ = write!(text, " Per point and case: {}.", runs(warmup, samples));
    } else {
        for s in &analysis.series {
            let _ = write!(
                text,
                " {}: {} per point.",
                s.label,
                runs(s.warmup, s.samples)
            );
        }
    }
    if !c.boot_cmdline.is_empty() {
        let _ = write!(text, " Kernel command line: {}.", c.boot_cmdline.join(" "));
    }
    if !c.sysctls.is_empty() {
        let _ = write!(text, " Sysctls: {}.", c.sysctls.join(" "));
    }
    if !c.tuning.is_empty() {
        let _ = write!(text, " Tuning: {}.", c.tuning.join(" "));
    }
    if !c.params.is_empty() {
        let _ = write!(
            text,
            " Machine facts (the recipe's [params]): {}.",
            c.params.join("; ")
        );
    }
    if let Some(machine) = super::machine_line::machine_sentence(&analysis.environment) {
        let _ = write!(text, " {machine}");
    }
    wrap(&text, WIDTH, "")
}

/// `15 measured samples, no warm-up` / `9 measured samples after 3 warm-ups`.
fn runs(warmup: u32, samples: u32) -> String {
    let measured = format!("{samples} measured sample{}", plural(samples as usize));
    match warmup {
        0 => format!("{measured}, no warm-up"),
        w => format!("{measured} after {w} warm-up{}", plural(w as usize)),
    }
}

/// One sentence per series: `series: child is 14.17 ns/page (39.77%) slower than 35.62
/// ns/page, the midpoint of kernel parent (SIGNAL, ν = 1: one control pair; boot-level 95%
/// CI [+29.18%, +51.22%] excludes 0).`, or with several candidates `series, against the
/// midpoint of kernel parent (38.80 ns/page): child 14.17 ns/page (36.51%) slower (SIGNAL;
/// …), … and nofolio +4.64%, +1.80 ns/page (NO_MATERIAL_SIGNAL: …; …).` A comparison that
/// cannot support a direction and size reads `b vs kernel a (…): +21.10%, …, not
/// interpretable: …`.
fn verdict_sentences(
    analysis: &Analysis,
    lines: &[VerdictLine],
    reference: &str,
    shared_boot: bool,
) -> String {
    let mut text = String::new();
    let mut rest = lines;
    while let Some(first) = rest.first() {
        // One group per series and baseline: a declared comparison against another kernel
        // (`[[analysis.comparison]]`) gets its own sentence and its own reference value.
        let n = rest
            .iter()
            .take_while(|l| l.series == first.series && l.baseline == first.baseline)
            .count();
        let (group, tail) = rest.split_at(n);
        rest = tail;
        let own_reference;
        let reference = if first.baseline == analysis.campaign.baseline {
            reference
        } else {
            own_reference = kernel_reference(analysis, &first.baseline);
            own_reference.as_str()
        };
        if let [line] = group {
            let _ = write!(
                text,
                "{}: {}. ",
                line.series,
                headline(
                    line,
                    &display_scale(analysis, &line.unit),
                    reference,
                    shared_boot,
                    true
                )
            );
        } else {
            let parts: Vec<String> = group
                .iter()
                .map(|l| {
                    let scale = display_scale(analysis, &l.unit);
                    headline(l, &scale, reference, shared_boot, false)
                })
                .collect();
            let _ = write!(
                text,
                "{}, against {reference} ({}): {}. ",
                first.series,
                keep_together(&with_unit(
                    first.baseline_mean,
                    &display_scale(analysis, &first.unit)
                )),
                and_list(&parts)
            );
        }
    }
    for statement in calibration(lines, shared_boot) {
        let _ = write!(text, "{statement}. ");
    }
    text
}

/// The campaign's conclusion in a few sentences.
#[must_use]
pub fn summary(analysis: &Analysis) -> String {
    let s = &analysis.summary;
    let reference = baseline_reference(analysis);
    let mut text = String::new();
    if !analysis.campaign.finished {
        let why = analysis
            .campaign
            .stopped
            .as_deref()
            .unwrap_or("it was not resumed");
        let _ = write!(text, "The campaign did not finish ({why}). ");
    }
    if !analysis.missing_points.is_empty() {
        let _ = write!(
            text,
            "Points not done: {}; their kernels' figures lack those boots. ",
            names(analysis, &analysis.missing_points)
        );
    }
    let shared = analysis.audit.shared_boot.is_some();
    text.push_str(&verdict_sentences(
        analysis,
        &s.verdicts,
        &reference,
        shared,
    ));
    for series in &analysis.series {
        let Some(all) = &series.all else { continue };
        if series.aux || !all.comparisons.is_empty() || all.not_compared.is_empty() {
            continue;
        }
        let _ = write!(
            text,
            "{}: no verdict: {}. ",
            series.label,
            all.not_compared.join("; ")
        );
    }
    if s.verdicts.is_empty() && analysis.campaign.candidates.is_empty() {
        let _ = write!(
            text,
            "Only kernel {} was booted: there is nothing to compare, so the campaign \
             measures the noise floor. ",
            analysis.campaign.baseline
        );
    }
    // Each figure is judged against the limit of the series it comes from, which may be a
    // workload's or metric's own.
    let limits_of = |worst: &Worst| {
        analysis
            .series
            .iter()
            .find(|s| s.label == worst.series)
            .map(|s| s.limits)
    };
    let above = |value: f64, limit: Option<ScopedLimit>, name: &str| match limit {
        Some(limit) if value > limit.value => {
            format!(
                " (above {name} {}{})",
                fixed(limit.value, 2),
                limit.origin()
            )
        }
        _ => String::new(),
    };
    if let Some(cv) = &s.max_cv {
        let _ = write!(
            text,
            "Maximum within-boot CV was {}{}",
            pct(cv.value),
            above(cv.value, limits_of(cv).map(|l| l.max_cv_pct), "max_cv_pct")
        );
        // The figures are the measured series'; with controls, theirs are said apart.
        let scope = match (&s.control_cv, &s.control_drift) {
            (None, None) => String::new(),
            (cv, drift) => {
                let mut parts = Vec::new();
                if let Some(cv) = cv {
                    parts.push(format!("CV {}", pct(cv.value)));
                }
                if let Some(drift) = drift {
                    parts.push(format!("drift at most {}%", ceil2(drift.value.abs())));
                }
                format!(" (measured series; controls: {})", parts.join(", "))
            }
        };
        match (&s.baseline_drift, s.baseline_spread) {
            (Some(drift), Some(SpreadMeasure::Rms)) => {
                // An RMS over pairs is no bound on any one pair: the farthest two are said
                // beside it (issue 28: "at most 1.10 % (RMS)" beside points 1.46 % apart).
                let kernel = analysis
                    .series
                    .iter()
                    .find(|s| s.label == drift.series)
                    .and_then(|s| s.all.as_ref())
                    .and_then(|all| {
                        all.kernels
                            .iter()
                            .find(|k| k.kernel == analysis.campaign.baseline)
                    });
                let farthest = kernel
                    .and_then(|k| k.range_pct)
                    .map_or_else(String::new, |r| format!("; the farthest two by {}", pct(r)));
                let _ = write!(
                    text,
                    ", and the {} {}s of kernel {} differ by {} RMS over pairs{farthest}{}{scope}. ",
                    kernel.map_or(0, |k| k.boots.len()),
                    if shared { "point" } else { "boot" },
                    analysis.campaign.baseline,
                    pct(drift.value.abs()),
                    above(
                        drift.value.abs(),
                        limits_of(drift).and_then(|l| l.max_drift_pct),
                        "the recipe's drift gate max_drift_pct"
                    )
                );
            }
            (Some(drift), _) => {
                let _ = write!(
                    text,
                    ", and kernel {} drifted by at most {}%{}{scope}. ",
                    analysis.campaign.baseline,
                    ceil2(drift.value.abs()),
                    above(
                        drift.value.abs(),
                        limits_of(drift).and_then(|l| l.max_drift_pct),
                        "the recipe's drift gate max_drift_pct"
                    )
                );
            }
            (None, _) => {
                let _ = write!(
                    text,
                    "{scope}; kernel {} was booted once, so its drift is unknown. ",
                    analysis.campaign.baseline
                );
            }
        }
    }
    match s.drop_first_same {
        Some(true) => text.push_str(
            "Dropping the first measured sample at each point gave the same conclusion. ",
        ),
        Some(false) => {
            // Say what moved, label and change, not that "the conclusion changed": a label
            // can move because an interval's bound crossed 0 while the change barely did.
            let changed: Vec<String> = analysis
                .series
                .iter()
                .filter_map(|series| Some((series, series.all.as_ref()?)))
                .flat_map(|(series, all)| {
                    all.comparisons
                        .iter()
                        .filter(|c| c.same_conclusion == Some(false))
                        .map(move |c| {
                            let dropped = series
                                .drop_first
                                .as_ref()
                                .and_then(|d| d.comparisons.iter().find(|o| o.same_pair(c)));
                            match dropped {
                                Some(d) => format!(
                                    "{} {} is {} at {} instead of {} at {}",
                                    series.label,
                                    c.shown(),
                                    d.label,
                                    signed_pct(d.comparison.change_pct),
                                    c.label,
                                    signed_pct(c.comparison.change_pct)
                                ),
                                None => format!("{} {}", series.label, c.shown()),
                            }
                        })
                })
                .collect();
            let _ = write!(
                text,
                "With the first measured sample dropped at each point the verdict moves: {}. ",
                changed.join("; ")
            );
        }
        None => {}
    }
    for line in &s.controls {
        if s.control_alerts.iter().any(|a| a.series == line.series) {
            continue;
        }
        let _ = write!(
            text,
            "The control {} changed by {} ({}; {}). ",
            line.series,
            signed_pct(line.change_pct),
            line.label,
            confidence(
                line.confidence,
                line.ci_boot.as_ref(),
                line.ci_within.as_ref(),
                shared
            )
        );
    }
    for alert in &s.control_alerts {
        let _ = write!(
            text,
            "ALERT: the control {}: {}; a control should show NO_MATERIAL_SIGNAL, so check \
             the setup before trusting the other results. ",
            alert.series,
            headline(
                alert,
                &display_scale(analysis, &alert.unit),
                &reference,
                shared,
                true
            )
        );
    }
    if !s.aux.is_empty() {
        let _ = write!(
            text,
            "Auxiliary (not part of the conclusion): {}",
            verdict_sentences(analysis, &s.aux, &reference, shared)
        );
    }
    let elsewhere = analysis.expects.iter().filter(|e| !e.applies).count();
    let those = if elsewhere == 0 {
        String::new()
    } else {
        format!(
            " (of those about target {}; {elsewhere} about other targets {} not judged)",
            analysis.campaign.target,
            if elsewhere == 1 { "was" } else { "were" }
        )
    };
    match s.expects_reproduced {
        Some(true) => {
            let _ = write!(
                text,
                "Every published result in [[expect]]{those} was reproduced. "
            );
        }
        Some(false) => {
            let _ = write!(
                text,
                "A published result in [[expect]]{those} was NOT reproduced. "
            );
        }
        None if elsewhere > 0 => text
            .push_str("No published result in [[expect]] is about this target: none was judged. "),
        None => {}
    }
    if let Some(shared) = &analysis.audit.shared_boot {
        let _ = write!(
            text,
            "All {} points shared one boot: see the note on the noise floor below.",
            shared.points
        );
    }
    wrap(text.trim_end(), WIDTH, "")
}

/// Per series: CVs, drifts, intervals and the reasons behind each verdict, one paragraph
/// for the series and one per candidate.
#[must_use]
pub fn details(analysis: &Analysis) -> String {
    let mut out = String::new();
    for s in &analysis.series {
        if !out.is_empty() {
            out.push('\n');
        }
        let Some(all) = &s.all else {
            out.push_str(&wrap(
                &format!("{}: no valid values at any done point.", s.label),
                WIDTH,
                "",
            ));
            continue;
        };
        out.push_str(&wrap(&format!("{}:", s.label), WIDTH, ""));
        out.push_str(&wrap(&series_details(analysis, s, all), WIDTH, "  "));
        for c in &all.comparisons {
            out.push_str(&wrap_hanging(
                &candidate_details(analysis, s, c),
                WIDTH,
                "  - ",
                "    ",
            ));
        }
    }
    out
}

fn series_details(analysis: &Analysis, s: &Series, all: &SeriesResult) -> String {
    let limits = &s.limits;
    let mut text = String::new();
    if let Some(cv) = all.max_cv_pct {
        let _ = write!(
            text,
            "Maximum within-boot CV {} (max_cv_pct {}{}).",
            pct(cv),
            fixed(limits.max_cv_pct.value, 2),
            limits.max_cv_pct.origin()
        );
    }
    let unit = if analysis.audit.shared_boot.is_some() {
        "point"
    } else {
        "boot"
    };
    let drifts: Vec<String> = all
        .kernels
        .iter()
        .filter(|k| k.boots.len() >= 2)
        .filter_map(|k| {
            let mut inner = Vec::new();
            if let Some(sp) = spread_of(k).filter(|sp| sp.measure == SpreadMeasure::Rms) {
                inner.push(format!(
                    "its {} {unit}s differ by {}, RMS over pairs",
                    k.boots.len(),
                    pct(sp.pct)
                ));
            }
            inner.extend(effect(k, unit));
            let inner = if inner.is_empty() {
                String::new()
            } else {
                format!(" ({})", inner.join("; "))
            };
            Some(format!(
                "kernel {} {}{inner}",
                k.kernel,
                signed_pct(k.drift_pct?)
            ))
        })
        .collect();
    if !drifts.is_empty() {
        let _ = write!(
            text,
            " Drift of the last {unit} against the first{}: {}.",
            limits
                .max_drift_pct
                .map_or_else(String::new, |gate| format!(
                    " (the recipe's drift gate max_drift_pct {}{})",
                    fixed(gate.value, 2),
                    gate.origin()
                )),
            and_list(&drifts)
        );
    }
    if !s.missing.is_empty() {
        let _ = write!(text, " No valid values at {}.", names(analysis, &s.missing));
    }
    for reason in &all.not_compared {
        let _ = write!(text, " Not compared: {reason}.");
    }
    if let Some(why) = &s.drop_first_unavailable {
        let _ = write!(text, " No drop-first analysis: {why}.");
    }
    if let Some(SeriesCalibration::NotUsed { why }) = &s.calibration {
        let _ = write!(text, " Noise profile not used: {why}.");
    }
    text
}

/// `Welch t = -4.80, p < 0.001: boot-to-boot variation dominates` when a boot-effect test
/// exists; the words appear exactly when the test says so.
fn effect(k: &KernelSummary, unit: &str) -> Option<String> {
    let e = k.boot_effect.as_ref()?;
    let test = match e.test {
        BootEffectTest::Welch => "Welch t",
        BootEffectTest::Anova => "ANOVA F",
    };
    let p = if e.p_value < 0.001 {
        "p < 0.001".to_owned()
    } else {
        format!("p = {}", fixed(e.p_value, 3))
    };
    let dominates = if e.dominates {
        format!(": {unit}-to-{unit} variation dominates")
    } else {
        String::new()
    };
    Some(format!(
        "{}{dominates}",
        keep_together(&format!("{test} = {}, {p}", fixed(e.statistic, 2)))
    ))
}

/// How a comparison used the noise profile, in words.
fn pooling_text(p: &Pooling) -> String {
    let test = p.homogeneity.as_ref().map(|t| {
        keep_together(&format!(
            "F = {}, p = {}",
            fixed(t.f, 2),
            if t.p_value < 0.001 {
                "< 0.001".to_owned()
            } else {
                fixed(t.p_value, 3)
            }
        ))
    });
    match (p.pooled, test) {
        (true, Some(test)) => format!(
            "the boot variance pools the noise profile's (ν = {}) with this campaign's (ν = \
             {}), homogeneous ({test})",
            nu(p.prior_dof),
            nu(p.own_dof)
        ),
        (true, None) => format!(
            "no kernel was booted twice: the boot variance is the noise profile's alone (ν = \
             {}), untested against this campaign",
            nu(p.prior_dof)
        ),
        (false, test) => format!(
            "noisier than its calibration ({}): the noise profile is not pooled",
            test.unwrap_or_default()
        ),
    }
}

fn interval_text(ci: &RatioInterval) -> String {
    match ci.bounds {
        Some((lo, hi)) => keep_together(&format!(
            "[{}, {}] (ν = {})",
            signed_pct(lo),
            signed_pct(hi),
            nu(ci.dof)
        )),
        None => keep_together(&format!("not estimable (ν = {})", nu(ci.dof))),
    }
}

fn candidate_details(analysis: &Analysis, s: &Series, c: &CandidateResult) -> String {
    let cmp = &c.comparison;
    let shared = analysis.audit.shared_boot.is_some();
    let label = match (
        c.verdict.label,
        few_boots(c.verdict.confidence.dof(), shared),
    ) {
        (VerdictLabel::Signal | VerdictLabel::BelowGate, Some(few)) => {
            format!("{} ({few})", c.label)
        }
        _ => c.label.clone(),
    };
    let mut text = format!(
        "{} {} ({} against {}): {label}.",
        c.shown(),
        signed_pct(cmp.change_pct),
        keep_together(&signed_with_unit(
            cmp.diff,
            &display_scale(analysis, &s.unit)
        )),
        keep_together(&with_unit(
            cmp.baseline_mean,
            &display_scale(analysis, &s.unit)
        ))
    );
    if let Some(ci) = &cmp.ci_boot {
        let level = level(shared);
        let mut level_word = level.to_owned();
        if let Some(first) = level_word.get_mut(..1) {
            first.make_ascii_uppercase();
        }
        let verdict = match ci.excludes_zero() {
            Some(true) => " excludes 0",
            Some(false) => " includes 0",
            None => "",
        };
        let _ = write!(text, " {level_word} 95% CI {}{verdict}", interval_text(ci));
        if let Some(v) = cmp.boot_variance.as_ref().filter(|v| v.floored) {
            let _ = write!(
                text,
                "; the boots agree more closely than their samples explain, so the boot \
                 variance is floored at {} x what within-boot noise alone implies",
                significant(v.floor_factor)
            );
        }
        if let Some(pooling) = &cmp.pooling {
            let _ = write!(text, "; {}", pooling_text(pooling));
        }
        if !c.borrowed_from.is_empty() {
            let _ = write!(
                text,
                "; kernel {} was booted once: its boot variance is borrowed from {}",
                c.candidate,
                and_list(
                    &c.borrowed_from
                        .iter()
                        .map(|k| format!("kernel {k}"))
                        .collect::<Vec<_>>()
                )
            );
        }
        if cmp.baseline_boots == 1 {
            let _ = write!(
                text,
                "; kernel {} was booted once: its boot variance is borrowed too",
                c.baseline
            );
        }
        text.push('.');
        if let Some(within) = &cmp.ci_within {
            let _ = write!(text, " Within-boot noise only: {}.", interval_text(within));
        }
    } else if let Some(within) = &cmp.ci_within {
        let _ = write!(
            text,
            " 95% CI {}: within-boot noise only, boot-to-boot variation unmeasured; this \
             interval is too narrow and decides nothing.",
            interval_text(within)
        );
    }
    if !c.verdict.reasons.is_empty() {
        let lead = match c.verdict.label {
            VerdictLabel::Unstable => "Unstable",
            VerdictLabel::Unreplicated => "Unreplicated",
            VerdictLabel::Signal => "Note",
            VerdictLabel::BelowGate | VerdictLabel::NoMaterialSignal => "Not a SIGNAL",
            VerdictLabel::Inconclusive => "Not decided",
        };
        let _ = write!(text, " {lead}: {}.", c.verdict.reasons.join("; "));
    }
    for note in &c.verdict.notes {
        let _ = write!(text, " Note: {note}.");
    }
    if let Some(df) = s
        .drop_first
        .as_ref()
        .and_then(|d| d.comparisons.iter().find(|d| d.same_pair(c)))
    {
        let same = if c.same_conclusion == Some(true) {
            "the same conclusion"
        } else {
            "a different conclusion"
        };
        let _ = write!(
            text,
            " Drop-first {}: {}, {same}.",
            signed_pct(df.comparison.change_pct),
            df.label
        );
    }
    text
}

/// The `[[expect]]` checks, one line each.
#[must_use]
pub fn expect(analysis: &Analysis) -> String {
    let mut out = String::new();
    for e in &analysis.expects {
        let verdict = match (e.applies, e.reproduced) {
            (false, _) => format!(
                "not judged, it is about target {} and this campaign ran on {}",
                e.target.as_deref().unwrap_or("-"),
                analysis.campaign.target
            ),
            (true, true) => "reproduced".to_owned(),
            (true, false) => "NOT reproduced".to_owned(),
        };
        let signed = |v: f64| {
            if v > 0.0 {
                format!("+{}", as_written(v))
            } else {
                as_written(v)
            }
        };
        let got_pct = || {
            e.got.map_or_else(
                || "could not be computed".to_owned(),
                |g| format!("got {} ({})", signed_pct(g), fixed(g, 6)),
            )
        };
        let line = match e.quantity {
            ExpectedQuantity::ChangePct => {
                let who = match &e.baseline {
                    Some(b) if *b != analysis.campaign.baseline => format!("{} vs {b}", e.kernel),
                    _ => e.kernel.clone(),
                };
                format!(
                    "{} {who}: expected {}% ± {}, {}: {verdict}.",
                    e.series,
                    signed(e.expected),
                    as_written(e.tolerance),
                    got_pct()
                )
            }
            ExpectedQuantity::CaseChangePct => format!(
                "{} vs {} on kernel {}: expected {}% ± {}, {}: {verdict}.",
                e.series,
                e.control.as_deref().unwrap_or("-"),
                e.kernel,
                signed(e.expected),
                as_written(e.tolerance),
                got_pct()
            ),
            ExpectedQuantity::SharePct => {
                let got = e.got.map_or_else(
                    || "could not be computed".to_owned(),
                    |g| format!("got {} ({})", pct(g), fixed(g, 6)),
                );
                format!(
                    "{} recovery {}: expected a share of {}% ± {} of the gap, {got}: {verdict}.",
                    e.series,
                    e.recovery.as_deref().unwrap_or("-"),
                    as_written(e.expected),
                    as_written(e.tolerance)
                )
            }
            ExpectedQuantity::Mean => {
                let unit = if e.unit.is_empty() {
                    String::new()
                } else {
                    format!(" {}", e.unit)
                };
                let got = e.got.map_or_else(
                    || "could not be computed".to_owned(),
                    |g| format!("got {}{unit}", fixed(g, 6)),
                );
                let at = e.point.as_ref().map_or_else(
                    || format!("{} (boot-weighted mean)", e.kernel),
                    |p| point_name(p, &e.kernel),
                );
                format!(
                    "{} {at}: expected a mean of {}{unit} ± {}{unit}, {got}: {verdict}.",
                    e.series,
                    as_written(e.expected),
                    as_written(e.tolerance)
                )
            }
        };
        out.push_str(&wrap(&line, WIDTH, "  "));
    }
    out
}

/// The untimed correctness workloads, one line per check and kernel: what it had to show
/// there and at which points it did (a point where it did not is not done; the run audit
/// says why).
#[must_use]
pub fn checks(analysis: &Analysis) -> String {
    let mut out = String::new();
    for c in &analysis.checks {
        for k in &c.kernels {
            let expected = match k.expected {
                Expected::Pass => "must pass",
                Expected::Fail => "must fail (check.expect_fail)",
            };
            let mut parts = Vec::new();
            if !k.held_at.is_empty() {
                parts.push(format!("as expected at {}", names(analysis, &k.held_at)));
            }
            if !k.unproven_at.is_empty() {
                parts.push(format!(
                    "NOT SHOWN at {} (not done; see the run audit)",
                    names(analysis, &k.unproven_at)
                ));
            }
            out.push_str(&wrap(
                &format!(
                    "{} on kernel {}: {expected}; {}.",
                    c.workload,
                    k.kernel,
                    parts.join(", ")
                ),
                WIDTH,
                "  ",
            ));
        }
    }
    if !analysis.kept_checks.is_empty() {
        out.push_str(&wrap(
            &format!(
                "The passing checks' output is kept in checks/<point>/ ({} files): the evidence of each pass.",
                analysis.kept_checks.len()
            ),
            WIDTH,
            "  ",
        ));
    }
    out
}

/// What happened during the run: a headline, then one list item per incident, or the
/// statement that there was none.
#[must_use]
pub fn audit(analysis: &Analysis) -> String {
    let a = &analysis.audit;
    let attempts = a.attempts.len();
    let done = a
        .attempts
        .iter()
        .filter(|x| x.outcome == AttemptOutcome::Done)
        .count();
    let boots: std::collections::BTreeSet<&str> = a
        .attempts
        .iter()
        .filter_map(|x| x.boot_id.as_deref())
        .collect();
    let mut head = format!(
        "Run audit: {done} point{} done in {attempts} attempt{}, {} distinct boot_id{}.",
        plural(done),
        plural(attempts),
        boots.len(),
        plural(boots.len())
    );
    let mut items: Vec<String> = Vec::new();
    for x in &a.attempts {
        let who = format!("{} attempt {}", analysis.point_name(&x.point), x.attempt);
        match x.outcome {
            AttemptOutcome::Done => {}
            AttemptOutcome::Failed => items.push(format!(
                "{who} failed: {}.",
                x.reason.as_deref().unwrap_or("no reason recorded")
            )),
            AttemptOutcome::Discarded => items.push(format!(
                "{who} never finished and was discarded on resume ({} row{} set \
                 aside).",
                x.rows_discarded,
                plural(x.rows_discarded)
            )),
            AttemptOutcome::Unfinished => items.push(format!("{who} never finished.")),
        }
        for lost in &x.connection_lost {
            items.push(format!("{who}: connection lost: {lost}."));
        }
        for run in &x.failed_runs {
            items.push(format!("{who}: run failed: {}.", describe_run(run)));
        }
        for run in &x.retried_runs {
            items.push(format!(
                "{who}: {} {} {} succeeded on retry {}.",
                run.workload, run.phase, run.index, run.retry
            ));
        }
        for left in &x.left_behind {
            items.push(format!(
                "{who}: {left}: left behind when the run exited, killed."
            ));
        }
        for cut in &x.output_cut {
            items.push(format!("{who}: {cut}: output cut at max_output."));
        }
        if let Some(n) = x.dmesg_warnings.filter(|n| *n > 0) {
            items.push(format!(
                "{who}: {n} new kernel warning{} in dmesg.",
                plural(n as usize)
            ));
        }
        if !x.failed_units.is_empty() {
            items.push(format!(
                "{who}: failed units: {}.",
                x.failed_units.join(" ")
            ));
        }
        for w in &x.warnings {
            items.push(format!("{who}: {w}."));
        }
    }
    for r in &a.rejected_rows {
        items.push(format!(
            "samples.csv line {} rejected: {}.",
            r.line, r.reason
        ));
    }
    for w in &a.warnings {
        items.push(format!("Warning: {w}."));
    }
    if a.duplicate_rows > 0 {
        items.push(format!(
            "{} valid rows repeated an index; the later retry was used.",
            a.duplicate_rows
        ));
    }
    if a.journal_truncated || a.samples_truncated {
        items.push("A partial last line (a killed writer) was skipped.".to_owned());
    }
    if items.is_empty() {
        head.push_str(
            " No failed or retried runs, no discarded rows, no new kernel warnings, no \
             failed units.",
        );
    }
    head.push_str(" Every attempt's boot_id, release and command line are in run-audit.tsv.");
    let mut out = wrap(&head, WIDTH, "");
    for item in items {
        out.push_str(&wrap_hanging(&item, WIDTH, "  - ", "    "));
    }
    out
}

/// Which noise profile the campaign used, and how (issue 10 §2); empty for a campaign of an
/// aba that had no profiles.
#[must_use]
pub fn profile(analysis: &Analysis) -> String {
    let p = &analysis.profile;
    let journaled = p.file.is_some() || p.disabled || !p.reasons.is_empty();
    if !journaled {
        return String::new();
    }
    if p.disabled {
        return wrap(
            &format!("No noise profile: {}.", p.reasons.join("; ")),
            WIDTH,
            "",
        );
    }
    let Some(name) = p.name() else {
        let text = {
            format!(
                "No noise profile: {}. The boot-level intervals rest on this campaign's own \
                 boots; `aba calibrate` measures a profile.",
                p.reasons.join("; ")
            )
        };
        return wrap(&text, WIDTH, "");
    };
    let facts = match (&p.created, p.boots, p.scope) {
        (Some(created), Some(boots), Some(scope)) => format!(
            " (created {created}, {boots} boots, ν = {}, {})",
            boots.saturating_sub(1),
            scope.words()
        ),
        _ => String::new(),
    };
    let series = analysis.series.len();
    let pooled = analysis
        .series
        .iter()
        .filter(|s| matches!(s.calibration, Some(SeriesCalibration::Used { .. })))
        .count();
    let text = if p.used && p.reasons.is_empty() {
        format!(
            "Noise profile: {name}{facts}, sha256 {}: its boot variance is pooled with the \
             campaign's own in {pooled} of {series} series, after a homogeneity test (details \
             below).",
            p.sha256.as_deref().unwrap_or("-")
        )
    } else {
        format!(
            "Noise profile {name}{facts} NOT USED: {}.",
            if p.reasons.is_empty() {
                "it holds for none of the series".to_owned()
            } else {
                p.reasons.join("; ")
            }
        )
    };
    wrap(&text, WIDTH, "")
}

/// The environment fingerprint compared between points (issue 10 §5): every difference that
/// makes a comparison UNSTABLE, and the points that could not be compared; empty when the
/// records agree (or there are none to compare).
#[must_use]
pub fn environment(analysis: &Analysis) -> String {
    let env = &analysis.environment;
    let mut out = builds(analysis);
    if env.differences.is_empty() && env.unchecked.is_empty() {
        return out;
    }
    if !env.differences.is_empty() {
        out.push_str(&wrap(
            "ENVIRONMENT DIFFERS between points (each difference makes the comparisons of its \
             kernels UNSTABLE):",
            WIDTH,
            "",
        ));
        for d in &env.differences {
            out.push_str(&wrap_hanging(
                &format!("{}.", d.text_named(&|p| analysis.point_name(p))),
                WIDTH,
                "  - ",
                "    ",
            ));
        }
    }
    for why in &env.unchecked {
        out.push_str(&wrap_hanging(
            &format!("Environment not compared at {why}."),
            WIDTH,
            "",
            "  ",
        ));
    }
    out
}

/// What matched builds found (`matched-build.tsv`): each kernel whose build differs from the
/// baseline's beyond what the experiment intends, with the fields and both values; when
/// every kernel was built on the host and none does, one line saying so. Released kernels
/// that match say nothing (their release is the experiment).
#[must_use]
pub fn builds(analysis: &Analysis) -> String {
    use crate::analysis::matched_build::{Status, Value};
    let matched = &analysis.matched_builds;
    let beyond = matched.beyond_intended();
    let mut out = String::new();
    for (kernel, rows) in &beyond {
        let built = analysis
            .kernels
            .iter()
            .any(|k| k.label == *kernel && k.bound.as_ref().is_some_and(|b| b.build.is_some()));
        let fields: Vec<String> = rows
            .iter()
            .map(|r| {
                format!(
                    "{} ({} vs {})",
                    r.field,
                    r.baseline.as_ref().map_or_else(String::new, Value::short),
                    r.value.as_ref().map_or_else(String::new, Value::short)
                )
            })
            .collect();
        out.push_str(&wrap(
            &format!(
                "BUILDS DIFFER beyond {}: {kernel} against {}: {} (matched-build.tsv).",
                if built {
                    "the intended patch"
                } else {
                    "their release"
                },
                matched.baseline,
                fields.join(", ")
            ),
            WIDTH,
            "",
        ));
    }
    let built_here = |label: &str| {
        analysis
            .kernels
            .iter()
            .any(|k| k.label == label && k.bound.as_ref().is_some_and(|b| b.build.is_some()))
    };
    let kernels = matched.kernels();
    if beyond.is_empty()
        && !kernels.is_empty()
        && kernels.iter().all(|k| built_here(k))
        && built_here(&matched.baseline)
    {
        let unknown: Vec<&str> = matched
            .rows
            .iter()
            .filter(|r| r.status == Status::NotRecorded)
            .map(|r| r.field)
            .fold(Vec::new(), |mut seen, f| {
                if !seen.contains(&f) {
                    seen.push(f);
                }
                seen
            });
        let mut text = format!(
            "Builds matched (matched-build.tsv): {} against {}, field by field, differ only \
             where intended: the patch, the source, the build's name, number and time.",
            kernels.join(", "),
            matched.baseline
        );
        if !unknown.is_empty() {
            let _ = write!(
                text,
                " Not compared (not recorded): {}.",
                unknown.join(", ")
            );
        }
        out.push_str(&wrap(&text, WIDTH, ""));
    }
    out
}

/// The caveat of a campaign whose points all ran in one boot, with its noise floor.
#[must_use]
pub fn shared_boot(analysis: &Analysis) -> String {
    let Some(shared) = &analysis.audit.shared_boot else {
        return String::new();
    };
    let mut text = format!(
        "All {} points ran in one boot (boot_id {}) on target {}, which does not switch \
         kernels: the points differ only in time, so drift, range and any boot-level \
         interval measure run-to-run noise within one boot, not boot-to-boot variation.",
        shared.points, shared.boot_id, analysis.campaign.target
    );
    text.push_str(" A null campaign like this calibrates the noise floor:");
    let mut floors = Vec::new();
    for s in &analysis.series {
        let Some(all) = &s.all else { continue };
        for k in all.kernels.iter().filter(|k| k.boots.len() >= 2) {
            if let (Some(drift), Some(range)) = (k.drift_pct, k.range_pct) {
                let mut floor = format!(
                    " {}: kernel {} drifted {} (range {})",
                    s.label,
                    k.kernel,
                    signed_pct(drift),
                    pct(range)
                );
                if let Some(cv) = all.max_cv_pct {
                    let _ = write!(floor, ", maximum within-point CV {}", pct(cv));
                }
                floors.push(floor);
            }
        }
    }
    text.push_str(&floors.join(";"));
    text.push_str(
        ". A change between kernels is not compared with these directly: its interval is \
         built from this noise (docs/statistics.md §4).",
    );
    wrap(&text, WIDTH, "")
}

/// How to reproduce the figures, and where the rest is. `root` is the results directory as
/// the command that writes the report was given it (`results/<name>-<stamp>` from
/// `aba run`, the argument of `aba report`), so that the printed command works from where the
/// user stands; shell-quoted when it needs to be.
#[must_use]
pub fn footer(analysis: &Analysis, root: &std::path::Path) -> String {
    let dir = crate::target::quote::sh_quote(&crate::text::one_line(&root.to_string_lossy()));
    wrap(
        &format!(
            "Reproduce: `aba report {dir}` recomputes every figure from journal.jsonl and \
             samples.csv. Per-point statistics: points.tsv; every derived figure: \
             comparison.tsv; the audit: run-audit.tsv; every sample: samples.svg. aba {}.",
            analysis.campaign.report_version
        ),
        WIDTH,
        "",
    )
}

#[cfg(test)]
mod tests {
    use super::{audit, builds, details, shared_boot, summary};
    use crate::{
        analysis::{
            matched_build::{BuildSide, MatchedBuilds},
            testkit::{host_build, roles},
        },
        build::record::KernelBuild,
        kernel::binding::{BoundKernel, Origin},
        recipe::ident::{KernelLabel, Release, TargetPath},
        report::testdata::fixture,
    };

    /// The fixture `mail-rt-sysctl` (original, patched) as if its kernels were `builds`.
    fn built(builds: [KernelBuild; 2]) -> crate::analysis::Analysis {
        let mut analysis = fixture("mail-rt-sysctl");
        let mut sides = Vec::new();
        for (k, build) in analysis.kernels.iter_mut().zip(builds) {
            sides.push((k.label.clone(), Some(BuildSide::of_build(&build))));
            k.bound = Some(BoundKernel {
                label: KernelLabel::new(&k.label).expect("label"),
                release: Release::new(&build.version.release).expect("release"),
                release_from: Origin::Recipe,
                image: TargetPath::new("/boot/vmlinuz").expect("path"),
                image_from: Origin::Recipe,
                initrd: TargetPath::new("/boot/initrd.img").expect("path"),
                initrd_from: Origin::Recipe,
                build: Some(Box::new(build)),
            });
        }
        analysis.matched_builds = MatchedBuilds::compare("original", &sides);
        analysis
    }

    #[test]
    fn the_report_says_whether_builds_differ_beyond_the_patch() {
        let gcc = "gcc 12.2.0";
        let matched = built([
            host_build(1, "c", gcc, None),
            host_build(2, "c", gcc, Some("/p/fix.patch")),
        ]);
        assert_eq!(
            flat(&builds(&matched)),
            "Builds matched (matched-build.tsv): patched against original, field by field, \
             differ only where intended: the patch, the source, the build's name, number and \
             time. Not compared (not recorded): source."
        );
        let other = built([
            host_build(1, "c", gcc, None),
            host_build(2, "c", "gcc 13.1.0", Some("/p/fix.patch")),
        ]);
        assert_eq!(
            flat(&builds(&other)),
            "BUILDS DIFFER beyond the intended patch: patched against original: compiler \
             (gcc 12.2.0 vs gcc 13.1.0) (matched-build.tsv)."
        );
        // Nothing compared, nothing said.
        assert_eq!(builds(&fixture("mail-rt-sysctl")), "");
    }

    fn flat(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn controls_that_move_are_alerts_and_aux_is_set_apart() {
        let text = flat(&summary(&roles()));
        assert!(
            text.starts_with(
                "main: b is 49.90 ns (49.85%) slower than 100.10 ns, the midpoint of kernel a \
                 (SIGNAL, ν = 1: one control pair; boot-level 95% CI [+47.26%, +52.49%] \
                 excludes 0)."
            ),
            "{text}"
        );
        // The summary's CV and drift are the measured series', the controls' said apart.
        assert!(
            text.contains(
                "kernel a drifted by at most 0.20% (measured series; controls: CV 0.10%, drift \
                 at most 0.00%)."
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "ALERT: the control ctl: b is 10.00 ns (100.00%) slower than 10.00 ns, the \
                 midpoint of kernel a (SIGNAL"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "Auxiliary (not part of the conclusion): side: b is 500.000 ops/s (50.00%) slower"
            ),
            "{text}"
        );
        assert!(text.contains("(AUX_SIGNAL, ν = 1"), "{text}");
    }

    const AB: &str = r#"
version = 1
name = "t"
description = "d"
sequence = SEQUENCE
[kernels.a]
release = "6.1.0-a"
[kernels.b]
release = "6.1.0-b"
[[workload]]
name = "w"
run = "true"
metric = { number = true, unit = "ns", better = "lower" }
"#;

    fn one(sequence: &str, values: &[(&str, &str, &[f64])]) -> crate::analysis::Analysis {
        crate::analysis::testkit::campaign(&AB.replace("SEQUENCE", sequence), values)
    }

    #[test]
    fn a_metric_judged_by_its_own_cv_limit_says_so() {
        // Both workloads vary ~5% within a boot: past [analysis]'s 2%, within `ticks`'s 10%.
        let recipe = format!(
            "{}[[workload]]\nname = \"ticks\"\nrun = \"true\"\n\
             metric = {{ number = true, unit = \"ticks\", better = \"lower\", max_cv_pct = 10.0 }}\n",
            AB.replace("SEQUENCE", r#"["a", "b", "a"]"#)
        );
        let noisy = [100.0, 105.0, 95.0];
        let analysis = crate::analysis::testkit::campaign(
            &recipe,
            &[
                ("a-a", "w", &noisy),
                ("b", "w", &noisy),
                ("a-b", "w", &noisy),
                ("a-a", "ticks", &noisy),
                ("b", "ticks", &noisy),
                ("a-b", "ticks", &noisy),
            ],
        );
        let verdict = |label: &str| {
            let s = analysis
                .series
                .iter()
                .find(|s| s.label == label)
                .expect("series");
            s.all.as_ref().expect("values").comparisons[0].verdict.label
        };
        assert_eq!(verdict("w"), crate::stats::VerdictLabel::Unstable);
        assert_ne!(verdict("ticks"), crate::stats::VerdictLabel::Unstable);
        let text = flat(&details(&analysis));
        assert!(text.contains("(max_cv_pct 2.00)."), "{text}");
        assert!(
            text.contains("(max_cv_pct 10.00, set on the metric)."),
            "{text}"
        );
    }

    #[test]
    fn every_headline_carries_its_confidence_statement() {
        // No change, A/B/A: the interval includes 0 and the headline asserts no direction.
        let text = flat(&summary(&one(
            r#"["a", "b", "a"]"#,
            &[
                ("a-a", "w", &[100.0, 101.0, 99.0]),
                ("b", "w", &[100.5, 101.5, 99.5]),
                ("a-b", "w", &[100.2, 101.2, 99.2]),
            ],
        )));
        assert!(
            text.starts_with(
                "w: b vs the midpoint of kernel a (100.10 ns): +0.40%, +0.40 ns \
                 (NO_MATERIAL_SIGNAL: a change as large as the gate is ruled out; boot-level \
                 95% CI [-1.79%, +2.62%]"
            ),
            "{text}"
        );
        assert!(text.contains("] includes 0 (ν = 1))."), "{text}");
        // Plain A/B: within-boot only, never more than UNREPLICATED.
        let text = flat(&summary(&one(
            r#"["a", "b"]"#,
            &[
                ("a", "w", &[100.0, 100.1, 99.9]),
                ("b", "w", &[120.0, 120.1, 119.9]),
            ],
        )));
        assert!(
            text.starts_with(
                "w: b vs kernel a (100.00 ns): +20.00%, +20.00 ns (UNREPLICATED: no kernel was \
                 booted twice; within-boot 95% CI ["
            ),
            "{text}"
        );
        assert!(text.contains("] only)."), "{text}");
    }

    #[test]
    fn every_verdict_carries_its_calibrated_statement() {
        // No change, A/B/A/B/A: ruled out, with the simulated rate and the detectable change.
        let quiet = [100.0, 100.1, 99.9];
        let text = flat(&summary(&one(
            r#"["a", "b", "a", "b", "a"]"#,
            &[
                ("a-a", "w", &quiet),
                ("b-a", "w", &[100.05, 100.15, 99.95]),
                ("a-b", "w", &quiet),
                ("b-b", "w", &[100.0, 100.1, 99.9]),
                ("a-c", "w", &quiet),
            ],
        )));
        assert!(
            text.contains(
                "aba says NO_MATERIAL_SIGNAL in at most 5 % of campaigns whose true change is \
                 twice the gate (10.00%) (its simulation of sandwich designs from A/B/A to a \
                 9-point palindrome at boot SD 0-10 %). The smallest change the comparison \
                 could detect with 80 % power at its measured boot noise: 0.08%."
            ),
            "{text}"
        );
        // A/B/A whose interval reaches past the gate: INCONCLUSIVE, with the longer design.
        let text = flat(&summary(&one(
            r#"["a", "b", "a"]"#,
            &[
                ("a-a", "w", &[100.0, 100.1, 99.9]),
                ("b", "w", &[101.0, 101.1, 100.9]),
                ("a-b", "w", &[103.0, 103.1, 102.9]),
            ],
        )));
        assert!(
            text.contains("(INCONCLUSIVE: neither shown nor ruled out"),
            "{text}"
        );
        assert!(
            text.contains("To decide at that noise: ")
                && text.contains("would detect a change of the gate (5.00%) with 80 % power"),
            "{text}"
        );
    }

    #[test]
    fn a_verdict_that_moves_without_the_first_sample_says_from_what_to_what() {
        // Slow first samples of b: with them the points' CVs are far over the limit
        // (UNSTABLE); without them b is the baseline's equal. The sentence names both verdicts
        // and both changes instead of "changed the conclusion".
        let quiet: &[f64] = &[100.0, 100.0, 100.1, 99.9];
        let slow: &[f64] = &[150.0, 100.0, 100.1, 99.9];
        let text = flat(&summary(&one(
            r#"["a", "b", "a", "b", "a"]"#,
            &[
                ("a-a", "w", quiet),
                ("b-a", "w", slow),
                ("a-b", "w", quiet),
                ("b-b", "w", slow),
                ("a-c", "w", quiet),
            ],
        )));
        assert!(
            text.contains(
                "With the first measured sample dropped at each point the verdict moves: w b is \
                 NO_MATERIAL_SIGNAL at 0.00% instead of UNSTABLE at +12.50%."
            ),
            "{text}"
        );
        assert!(!text.contains("changed the conclusion"), "{text}");
    }

    #[test]
    fn an_inconclusive_headline_asserts_no_direction_or_size() {
        // The boots of a differ by 56%: boot noise, not a broken measurement, but the
        // interval cannot be formed and the change cannot be read.
        let analysis = one(
            r#"["a", "b", "a"]"#,
            &[
                ("a-a", "w", &[100.0, 100.1, 99.9]),
                ("b", "w", &[155.0, 155.1, 154.9]),
                ("a-b", "w", &[156.0, 156.1, 155.9]),
            ],
        );
        let text = flat(&summary(&analysis));
        assert!(
            text.starts_with(
                "w: b vs the midpoint of kernel a (128.00 ns): +21.09%, +27.00 ns, not \
                 interpretable: its boot-level 95% CI is not estimable (ν = 1), the boots of \
                 kernel a differ by 56.00% (INCONCLUSIVE)."
            ),
            "{text}"
        );
        assert!(!text.contains("slower"), "{text}");
        let table = crate::report::mail_tables::changes(&analysis);
        assert!(table.contains("+21.09%  INCONCLUSIVE\n"), "{table}");
    }

    #[test]
    fn an_unstable_headline_keeps_its_interval_and_asserts_no_direction() {
        // Within-boot CV of about 5% against max_cv_pct 2: the measurement is broken, and the
        // line still shows what the interval was (issue 28: an UNSTABLE line that hid a valid
        // interval).
        let analysis = one(
            r#"["a", "b", "a"]"#,
            &[
                ("a-a", "w", &[95.0, 100.0, 105.0]),
                ("b", "w", &[115.0, 120.0, 125.0]),
                ("a-b", "w", &[95.5, 100.5, 105.5]),
            ],
        );
        let text = flat(&summary(&analysis));
        assert!(text.contains("(UNSTABLE"), "{text}");
        assert!(text.contains("boot-level 95% CI ["), "{text}");
        assert!(!text.contains("slower"), "{text}");
    }

    #[test]
    fn boot_to_boot_variation_dominates_exactly_when_the_test_says_so() {
        // Drift +0.40% with a within-boot SE of ~0.06%: Welch p < 0.001, the words appear.
        let steady = one(
            r#"["a", "b", "a"]"#,
            &[
                ("a-a", "w", &[100.0, 100.1, 99.9, 100.05, 99.95]),
                ("b", "w", &[100.0, 100.1, 99.9, 100.05, 99.95]),
                ("a-b", "w", &[100.4, 100.5, 100.3, 100.45, 100.35]),
            ],
        );
        let text = flat(&details(&steady));
        assert!(
            text.contains("p < 0.001: boot-to-boot variation dominates)"),
            "{text}"
        );
        // Drift +0.40% with a within-boot SE of ~2%: p ≈ 0.85, and no such words anywhere.
        let noisy = one(
            r#"["a", "b", "a"]"#,
            &[
                ("a-a", "w", &[100.0, 104.0, 96.0, 102.0, 98.0]),
                ("b", "w", &[100.0, 104.0, 96.0, 102.0, 98.0]),
                ("a-b", "w", &[100.4, 104.4, 96.4, 102.4, 98.4]),
            ],
        );
        let text = flat(&details(&noisy));
        assert!(!text.contains("dominates"), "{text}");
        assert!(text.contains("(Welch t = 0.20, p = 0.846)."), "{text}");
    }

    #[test]
    fn a_clean_run_says_so_and_a_shared_boot_is_explained() {
        let clean = flat(&audit(&fixture("mprotect-exact-cac1")));
        assert!(clean.contains("No failed or retried runs"), "{clean}");
        assert_eq!(shared_boot(&fixture("mprotect-exact-cac1")), "");
        let null = flat(&shared_boot(&fixture("local-null")));
        assert!(null.starts_with("All 3 points ran in one boot"), "{null}");
        assert!(null.contains("calibrates the noise floor"), "{null}");
    }
}
