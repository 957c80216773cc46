//! The prose of `report.txt`, pre-formatted and wrapped at [`WIDTH`] columns: what was run,
//! the conclusion in the words of the seeds' mails ("changed by", "maximum within-boot CV",
//! "drift was at most", "dropping the first measured sample … gave the same conclusion"),
//! the per-series details (intervals with ν, borrowed boot variance, why a verdict is not
//! SIGNAL), controls, expectations, the audit and the shared-boot caveat.
//!
//! Percentages have 2 decimals; bounds are 2-decimal ceilings (STATISTICS.md 3.7).

use std::fmt::Write as _;

use crate::{
    analysis::{Analysis, AttemptOutcome, CandidateResult, Series, SeriesResult, VerdictLine},
    report::{
        audit_tsv::describe_run,
        layout::{WIDTH, keep_together, wrap, wrap_hanging},
        mail_tables::{baseline_reference, design},
        number::{as_written, ceil2, fixed, nu, pct, signed_pct},
    },
    stats::{BootEffectTest, KernelSummary, RatioInterval, VerdictLabel},
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

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
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
    let labels: Vec<&str> = analysis.points.iter().map(|p| p.label.as_str()).collect();
    let boots = if analysis.audit.shared_boot.is_some() {
        "all in one boot".to_owned()
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

/// `child is 39.77% slower` / `is unchanged`.
fn change_words(line: &VerdictLine) -> String {
    match line.direction.as_deref() {
        Some(direction) => format!("{} {direction}", pct(line.change_pct.abs())),
        None => "unchanged".to_owned(),
    }
}

/// One sentence per series: `series: child is 39.77% slower than the parent midpoint
/// (SIGNAL).`, or with several candidates `series, against the parent midpoint: child 36.51%
/// slower (SIGNAL), … and nofolio 4.64% slower (BELOW_GATE).`
fn verdict_sentences(lines: &[VerdictLine], reference: &str) -> String {
    let mut text = String::new();
    let mut rest = lines;
    while let Some(first) = rest.first() {
        let n = rest.iter().take_while(|l| l.series == first.series).count();
        let (group, tail) = rest.split_at(n);
        rest = tail;
        if let [line] = group {
            let how = match line.direction {
                Some(_) => format!("is {} than {reference}", change_words(line)),
                None => format!("is unchanged against {reference}"),
            };
            let _ = write!(
                text,
                "{}: {} {how} ({}). ",
                line.series, line.candidate, line.label
            );
        } else {
            let parts: Vec<String> = group
                .iter()
                .map(|l| format!("{} {} ({})", l.candidate, change_words(l), l.label))
                .collect();
            let _ = write!(
                text,
                "{}, against {reference}: {}. ",
                first.series,
                and_list(&parts)
            );
        }
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
            analysis.missing_points.join(", ")
        );
    }
    text.push_str(&verdict_sentences(&s.verdicts, &reference));
    if s.verdicts.is_empty() && analysis.campaign.candidates.is_empty() {
        let _ = write!(
            text,
            "Only {} was booted: there is nothing to compare, the campaign measures the \
             noise floor. ",
            analysis.campaign.baseline
        );
    }
    let params = &analysis.params;
    let above = |value: f64, limit: f64, name: &str| {
        if value > limit {
            format!(" (above {name} {})", fixed(limit, 2))
        } else {
            String::new()
        }
    };
    if let Some(cv) = &s.max_cv {
        let _ = write!(
            text,
            "Maximum within-boot CV was {}{}",
            pct(cv.value),
            above(cv.value, params.max_cv_pct, "max_cv_pct")
        );
        match &s.baseline_drift {
            Some(drift) => {
                let _ = write!(
                    text,
                    ", and the drift of {} was at most {}%{}. ",
                    analysis.campaign.baseline,
                    ceil2(drift.value.abs()),
                    above(drift.value.abs(), params.max_drift_pct, "max_drift_pct")
                );
            }
            None => {
                let _ = write!(
                    text,
                    "; {} was booted once, so its drift is unknown. ",
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
            let changed: Vec<String> = analysis
                .series
                .iter()
                .filter_map(|series| Some((series, series.all.as_ref()?)))
                .flat_map(|(series, all)| {
                    all.comparisons
                        .iter()
                        .filter(|c| c.same_conclusion == Some(false))
                        .map(move |c| format!("{} {}", series.label, c.candidate))
                })
                .collect();
            let _ = write!(
                text,
                "Dropping the first measured sample at each point changed the conclusion \
                 for {}. ",
                changed.join(", ")
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
            "The control {} changed by {} ({}). ",
            line.series,
            signed_pct(line.change_pct),
            line.label
        );
    }
    for alert in &s.control_alerts {
        let _ = write!(
            text,
            "ALERT: the control {} moved by {} ({}); a control should show \
             NO_MATERIAL_SIGNAL, so check the setup before trusting the other results. ",
            alert.series,
            signed_pct(alert.change_pct),
            alert.label
        );
    }
    if !s.aux.is_empty() {
        let _ = write!(
            text,
            "Auxiliary (not part of the conclusion): {}",
            verdict_sentences(&s.aux, &reference)
        );
    }
    match s.expects_reproduced {
        Some(true) => text.push_str("Every published result in [[expect]] was reproduced. "),
        Some(false) => text.push_str("A published result in [[expect]] was NOT reproduced. "),
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
                &candidate_details(s, all, c),
                WIDTH,
                "  - ",
                "    ",
            ));
        }
    }
    out
}

fn series_details(analysis: &Analysis, s: &Series, all: &SeriesResult) -> String {
    let params = &analysis.params;
    let mut text = String::new();
    if let Some(cv) = all.max_cv_pct {
        let _ = write!(
            text,
            "Maximum within-boot CV {} (max_cv_pct {}).",
            pct(cv),
            fixed(params.max_cv_pct, 2)
        );
    }
    let drifts: Vec<String> = all
        .kernels
        .iter()
        .filter(|k| k.boots.len() >= 2)
        .filter_map(|k| {
            Some(format!(
                "{} {}{}",
                k.kernel,
                signed_pct(k.drift_pct?),
                effect(k)
            ))
        })
        .collect();
    if !drifts.is_empty() {
        let _ = write!(
            text,
            " Drift of the last boot against the first (max_drift_pct {}): {}.",
            fixed(params.max_drift_pct, 2),
            and_list(&drifts)
        );
    }
    if !s.missing.is_empty() {
        let _ = write!(text, " No valid values at {}.", s.missing.join(", "));
    }
    for reason in &all.not_compared {
        let _ = write!(text, " Not compared: {reason}.");
    }
    if let Some(why) = &s.drop_first_unavailable {
        let _ = write!(text, " No drop-first analysis: {why}.");
    }
    text
}

/// ` (Welch t = -4.80, p < 0.001)` when a boot-effect test exists.
fn effect(k: &KernelSummary) -> String {
    let Some(e) = &k.boot_effect else {
        return String::new();
    };
    let test = match e.test {
        BootEffectTest::Welch => "Welch t",
        BootEffectTest::Anova => "ANOVA F",
    };
    let p = if e.p_value < 0.001 {
        "p < 0.001".to_owned()
    } else {
        format!("p = {}", fixed(e.p_value, 3))
    };
    format!(
        " ({})",
        keep_together(&format!("{test} = {}, {p}", fixed(e.statistic, 2)))
    )
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

fn candidate_details(s: &Series, all: &SeriesResult, c: &CandidateResult) -> String {
    let cmp = &c.comparison;
    let mut text = format!(
        "{} {}: {}.",
        c.candidate,
        signed_pct(cmp.change_pct),
        c.label
    );
    if let Some(ci) = &cmp.ci_boot {
        let _ = write!(text, " Boot-level 95% CI {}", interval_text(ci));
        if !c.borrowed_from.is_empty() {
            let _ = write!(
                text,
                "; 1 boot of {}: its boot variance is borrowed from {}",
                c.candidate,
                and_list(&c.borrowed_from)
            );
        }
        if cmp.baseline_boots == 1 {
            let _ = write!(
                text,
                "; 1 boot of {}: its boot variance is borrowed too",
                c.baseline
            );
        }
        text.push('.');
        if let Some(within) = &cmp.ci_within {
            let _ = write!(text, " Within-boot noise only: {}", interval_text(within));
            let max_drift = all
                .kernels
                .iter()
                .filter_map(|k| k.drift_pct)
                .map(f64::abs)
                .fold(0.0, f64::max);
            if within.half_width().is_some_and(|hw| max_drift > hw) {
                text.push_str(
                    "; the drift exceeds its half-width: boot-to-boot variation dominates",
                );
            }
            text.push('.');
        }
    } else if let Some(within) = &cmp.ci_within {
        let _ = write!(
            text,
            " 95% CI {}: within-boot noise only, boot-to-boot variation unmeasured; this \
             interval is too narrow.",
            interval_text(within)
        );
    }
    if !c.verdict.reasons.is_empty() {
        let lead = match c.verdict.label {
            VerdictLabel::Unstable => "Unstable",
            VerdictLabel::Signal => "Note",
            VerdictLabel::BelowGate
            | VerdictLabel::NoMaterialSignal
            | VerdictLabel::Unreplicated => "Not a SIGNAL",
        };
        let _ = write!(text, " {lead}: {}.", c.verdict.reasons.join("; "));
    }
    if let Some(df) = s
        .drop_first
        .as_ref()
        .and_then(|d| d.comparisons.iter().find(|d| d.candidate == c.candidate))
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
        let got = e.got_pct.map_or_else(
            || "could not be computed".to_owned(),
            |g| format!("got {} ({})", signed_pct(g), fixed(g, 6)),
        );
        let expected = if e.expected_pct > 0.0 {
            format!("+{}", as_written(e.expected_pct))
        } else {
            as_written(e.expected_pct)
        };
        let verdict = if e.reproduced {
            "reproduced"
        } else {
            "NOT reproduced"
        };
        out.push_str(&wrap(
            &format!(
                "{} {}: expected {expected}% ± {}, {got}: {verdict}.",
                e.series,
                e.kernel,
                as_written(e.tolerance)
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
        let who = format!("{} attempt {}", x.point, x.attempt);
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
                    " {} {} drifted {} (range {})",
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
    text.push_str(". A change between kernels must clear these to be told from noise.");
    wrap(&text, WIDTH, "")
}

/// How to reproduce the figures, and where the rest is.
#[must_use]
pub fn footer(analysis: &Analysis) -> String {
    wrap(
        &format!(
            "Reproduce: `aba report {}` recomputes every figure from journal.jsonl and \
             samples.csv. Per-point statistics: points.tsv; every derived figure: \
             comparison.tsv; the audit: run-audit.tsv; every sample: samples.svg. aba {}.",
            analysis.campaign.directory, analysis.campaign.report_version
        ),
        WIDTH,
        "",
    )
}

#[cfg(test)]
mod tests {
    use super::{audit, shared_boot, summary};
    use crate::{analysis::testkit::roles, report::testdata::fixture};

    fn flat(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn controls_that_move_are_alerts_and_aux_is_set_apart() {
        let text = flat(&summary(&roles()));
        assert!(
            text.starts_with("main: b is 49.85% slower than the a midpoint (SIGNAL)."),
            "{text}"
        );
        assert!(text.contains("the drift of a was at most 0.20%."), "{text}");
        assert!(
            text.contains("ALERT: the control ctl moved by +100.00% (SIGNAL)"),
            "{text}"
        );
        assert!(
            text.contains("Auxiliary (not part of the conclusion): side: b is 50.00% slower"),
            "{text}"
        );
        assert!(text.contains("(AUX_SIGNAL)"), "{text}");
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
