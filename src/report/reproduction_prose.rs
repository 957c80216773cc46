//! The prose of `aba compare`'s text, wrapped at [`WIDTH`] columns, in the tone of the seeds'
//! mails: "On my i7-12700KF the patched kernel was 96.40% faster than the midpoint of kernel
//! original, against 96.91% in the reference: REPRODUCED", then what each side's numbers rest on, the
//! environments side by side with their differences named, and what only one side has.

use crate::{
    analysis::model::CandidateResult,
    report::{
        layout::{WIDTH, keep_together, wrap, wrap_hanging},
        mail_prose::{and_list, plural},
        number::{as_written, fixed, nu, pct, signed_pct},
        verdict_text::{confidence, label_with_boots, level},
    },
    reproduction::{
        evidence::{EvidenceInfo, LimitsOrigin, Source},
        model::{Agreement, CandidateReproduction, KernelMatch, Reproduction, SeriesMatch},
    },
    stats::{
        Better, ChangeDifference, KernelSummary, NoClaim, ReproductionLabel, Rule, SpreadMeasure,
        VerdictLabel, Which, spread_of,
    },
    target::quote::sh_quote,
    text::one_line,
};

/// `new-name against the reference ref-name: 1 REPRODUCED, 1 DIFFERENT`.
#[must_use]
pub fn title(r: &Reproduction) -> String {
    let mut counts: Vec<String> = ReproductionLabel::ALL
        .iter()
        .filter(|l| r.counts.of(**l) > 0)
        .map(|l| format!("{} {l}", r.counts.of(*l)))
        .collect();
    if counts.is_empty() {
        counts.push("no comparison to judge".to_owned());
    }
    wrap(
        &format!(
            "{} against the reference {}: {}",
            r.new.name,
            r.reference.name,
            counts.join(", ")
        ),
        WIDTH,
        "",
    )
    .trim_end()
    .to_owned()
}

/// `AMD EPYC 7B13 (target local)`, or what is known of it.
fn machine(info: &EvidenceInfo) -> String {
    let env = &info.environment;
    match (env.cpu_models.first(), &env.target) {
        (Some(cpu), Some(t)) => format!("{cpu} (target {t})"),
        (Some(cpu), None) => cpu.clone(),
        (None, Some(t)) => format!("target {t}"),
        (None, None) => "a machine it does not name".to_owned(),
    }
}

/// `the midpoint of kernel parent`, `kernel parent`, `the mean of kernel parent over 3
/// boots`: the label after "kernel", as report.txt says it
/// ([`crate::report::mail_tables::baseline_reference`]), so that `a` reads as a name.
fn baseline_words(c: &CandidateResult) -> String {
    let b = &c.baseline;
    match c.comparison.baseline_boots {
        2 => format!("the midpoint of kernel {b}"),
        0 | 1 => format!("kernel {b}"),
        m => format!("the mean of kernel {b} over {m} boots"),
    }
}

/// `slower` / `faster` for a change, from the metric's direction; `None` without one.
fn direction(change: f64, better: Option<Better>) -> Option<&'static str> {
    let up = change > 0.0;
    match (better?, change == 0.0) {
        (_, true) => None,
        (Better::Lower, _) => Some(if up { "slower" } else { "faster" }),
        (Better::Higher, _) => Some(if up { "faster" } else { "slower" }),
    }
}

/// The verdict claims a direction and size.
fn claims(c: &CandidateResult) -> bool {
    matches!(
        c.verdict.label,
        VerdictLabel::Signal | VerdictLabel::BelowGate
    )
}

/// `the patched kernel was 96.40% faster than the midpoint of kernel original` (a claim),
/// else `the patched kernel changed by -0.50% against the midpoint of kernel original
/// (NO_MATERIAL_SIGNAL)`.
fn new_words(c: &CandidateResult, better: Option<Better>) -> String {
    let change = c.comparison.change_pct;
    match direction(change, better).filter(|_| claims(c)) {
        Some(d) => format!(
            "the {} kernel was {} {d} than {}",
            c.candidate,
            pct(change.abs()),
            baseline_words(c)
        ),
        None => format!(
            "the {} kernel changed by {} against {} ({})",
            c.candidate,
            signed_pct(change),
            baseline_words(c),
            c.label
        ),
    }
}

/// `against 96.91% in the reference` when both claim the same direction, else `against
/// +0.20% (NO_MATERIAL_SIGNAL) in the reference`.
fn reference_words(c: &CandidateReproduction) -> String {
    let (r, n) = (&c.reference, &c.new);
    let same = claims(r)
        && claims(n)
        && (r.comparison.change_pct > 0.0) == (n.comparison.change_pct > 0.0);
    if same {
        format!(
            "against {} in the reference",
            pct(r.comparison.change_pct.abs())
        )
    } else {
        format!(
            "against {} ({}) in the reference",
            signed_pct(r.comparison.change_pct),
            r.label
        )
    }
}

/// `+1.23` percentage points.
fn points(x: f64) -> String {
    signed_pct(x).trim_end_matches('%').to_owned()
}

/// `the changes differ by -0.27 points, 99% CI [-15.20, +14.66] (ν = 2.0)`.
fn difference_words(d: &ChangeDifference) -> String {
    format!(
        "the changes differ by {} points, 99% CI {} {}",
        points(d.diff_pp),
        keep_together(&format!("[{}, {}]", points(d.bounds.0), points(d.bounds.1))),
        keep_together(&format!("(ν = {})", nu(d.dof)))
    )
}

fn side(which: Which) -> &'static str {
    match which {
        Which::Reference => "the reference",
        Which::New => "this campaign",
    }
}

/// Why the rule gave its verdict, after `VERDICT: `.
fn rule_words(c: &CandidateReproduction) -> String {
    let d = c.verdict.difference.as_ref();
    let diff = || d.map_or_else(String::new, difference_words);
    match c.verdict.rule {
        Rule::BothSignal => format!("both show the change, and {}, which includes 0", diff()),
        Rule::NeitherSignal => format!(
            "neither shows a material change, and {}, which includes 0",
            diff()
        ),
        Rule::OneSignal { side: s } => format!(
            "{}, which includes 0, but only {} shows a SIGNAL: the other cannot confirm or \
             exclude it",
            diff(),
            side(s)
        ),
        Rule::Unshown { side: s } => format!(
            "{}, which includes 0, but neither shows a material change while {}'s change \
             reaches the gate",
            diff(),
            side(s)
        ),
        Rule::SignalsApart => format!(
            "the same direction, but {}, which excludes 0: a real difference between the two \
             machines or setups",
            diff()
        ),
        Rule::NewSignal => format!(
            "the reference shows no material change, this campaign does, and {}, which \
             excludes 0",
            diff()
        ),
        Rule::BelowGateApart => format!(
            "neither shows a material change, but {}, which excludes 0",
            diff()
        ),
        Rule::SignalGone => format!(
            "the reference's SIGNAL is not there, and {}, which excludes 0",
            diff()
        ),
        Rule::Reversed => "the change is reversed".to_owned(),
        Rule::NoClaim { side: s, why } => {
            let claim = match s {
                Which::Reference => &c.reference,
                Which::New => &c.new,
            };
            let why = match why {
                NoClaim::Unstable => {
                    format!("is UNSTABLE ({})", claim.verdict.reasons.join("; "))
                }
                NoClaim::Unreplicated => {
                    "is UNREPLICATED: no kernel was booted twice, so its boot-to-boot \
                     variation is unknown"
                        .to_owned()
                }
                NoClaim::NotEstimable => {
                    "has a boot-level interval that is not estimable".to_owned()
                }
            };
            format!("{} {why}", side(s))
        }
    }
}

/// One paragraph per comparison; the series is named when there are several.
#[must_use]
pub fn summary(r: &Reproduction) -> String {
    let mut out = wrap(
        &format!(
            "This campaign ran on {}; the reference, {}, on {}.",
            machine(&r.new),
            r.reference.name,
            machine(&r.reference)
        ),
        WIDTH,
        "",
    );
    let several = r.comparisons().count() > 1;
    if r.comparisons().next().is_none() {
        out.push('\n');
        out.push_str(&wrap(
            "No candidate kernel is compared with its baseline in both campaigns (a null \
             campaign boots one kernel only): the point means, CVs and drifts are side by side \
             below, without a reproduction verdict.",
            WIDTH,
            "",
        ));
    }
    for (s, c) in r.comparisons() {
        let words = new_words(&c.new, s.better);
        let sentence = if several {
            format!("{}: {words}", s.label)
        } else {
            // `the` starts the sentence.
            let mut chars = words.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect()
            })
        };
        out.push('\n');
        out.push_str(&wrap(
            &format!(
                "{sentence}, {}. {}: {}.",
                reference_words(c),
                c.verdict.label,
                rule_words(c)
            ),
            WIDTH,
            "",
        ));
    }
    out.trim_end().to_owned()
}

/// The environments side by side, then the differences named.
#[must_use]
pub fn setup(r: &Reproduction) -> String {
    let mut out = String::from("Setup, the reference / this campaign:\n\n");
    let shown = |v: &Option<String>| match v.as_deref() {
        None => "not recorded".to_owned(),
        Some("") => "none".to_owned(),
        Some(v) => v.to_owned(),
    };
    for row in r
        .environment
        .iter()
        .filter(|e| e.reference.is_some() || e.new.is_some())
    {
        let text = match row.agreement {
            Agreement::Same => format!("{}: {} (the same)", row.what, shown(&row.new)),
            Agreement::Differs => format!(
                "{}: {} / {} (differs)",
                row.what,
                shown(&row.reference),
                shown(&row.new)
            ),
            Agreement::Unknown => format!(
                "{}: {} / {}",
                row.what,
                shown(&row.reference),
                shown(&row.new)
            ),
            Agreement::NotComparable => format!(
                "{}: {} / {} (not comparable)",
                row.what,
                shown(&row.reference),
                shown(&row.new)
            ),
        };
        out.push_str(&wrap_hanging(&text, WIDTH, "  ", "      "));
    }
    let named = |a: Agreement| -> Vec<String> {
        r.environment
            .iter()
            .filter(|e| e.agreement == a)
            .map(|e| e.what.clone())
            .collect()
    };
    let differs = named(Agreement::Differs);
    let mut differences = if differs.is_empty() {
        "No recorded fact differs.".to_owned()
    } else {
        format!("Differences: {}.", and_list(&differs))
    };
    let apart = named(Agreement::NotComparable);
    if !apart.is_empty() {
        differences.push_str(&format!(
            " Not comparable, each side recording a different kind of identity (a git commit, \
             a config SHA-256): {}.",
            and_list(&apart)
        ));
    }
    out.push('\n');
    out.push_str(&wrap(&format!("{differences} {}", limits(r)), WIDTH, ""));
    out.trim_end().to_owned()
}

fn params(info: &EvidenceInfo) -> String {
    limits_words(&info.params)
}

/// `gate_pct 5, drift_margin 2, max_drift_pct 1, max_cv_pct 2`: verdict limits as a
/// sentence shows them (also in an export's README).
#[must_use]
pub fn limits_words(p: &crate::stats::VerdictParams) -> String {
    format!(
        "gate_pct {}, drift_margin {}, max_drift_pct {}, max_cv_pct {}",
        as_written(p.gate_pct),
        as_written(p.drift_margin),
        p.max_drift_pct
            .map_or_else(|| "none".to_owned(), as_written),
        as_written(p.max_cv_pct)
    )
}

/// Which limits judged each side.
fn limits(r: &Reproduction) -> String {
    let reference = match r.reference.limits {
        LimitsOrigin::Preregistered if r.reference.params == r.new.params => {
            "the reference's are the same".to_owned()
        }
        LimitsOrigin::Preregistered => format!("the reference's {}", params(&r.reference)),
        LimitsOrigin::NewCampaign => {
            "the reference, a published bundle, records none and is judged with them".to_owned()
        }
    };
    format!(
        "The verdicts use each campaign's preregistered limits: this campaign's are {}; \
         {reference}.",
        params(&r.new)
    )
}

/// `drift of parent +0.87%` / `parent's 3 boots differ by 0.41% (RMS)`; `None` for a kernel
/// booted once.
fn spread_words(k: &KernelSummary) -> Option<String> {
    let s = spread_of(k)?;
    Some(match s.measure {
        SpreadMeasure::Drift => format!("drift of {} {}", s.kernel, signed_pct(s.pct)),
        SpreadMeasure::Rms => format!(
            "{}'s {} boots differ by {} (RMS)",
            s.kernel,
            s.boots,
            pct(s.pct.abs())
        ),
    })
}

/// One side's comparison: `+39.77% (SIGNAL, ν = 1: one control pair), boot-level 95% CI
/// [+29.18%, +51.22%] excludes 0`.
fn claim_details(c: &CandidateResult, shared_boot: bool) -> String {
    let label = label_with_boots(
        &c.label,
        c.verdict.label,
        c.verdict.confidence.dof(),
        shared_boot,
    );
    format!(
        "{}, {label}, {}",
        signed_pct(c.comparison.change_pct),
        confidence(
            c.verdict.confidence,
            c.comparison.ci_boot.as_ref(),
            c.comparison.ci_within.as_ref(),
            shared_boot
        )
    )
}

/// Per series: how it was matched, CV and drift on both sides, then every comparison with
/// both sides' intervals, the published figure and the difference.
#[must_use]
pub fn details(r: &Reproduction) -> String {
    let mut out = String::new();
    for s in &r.series {
        if !out.is_empty() {
            out.push('\n');
        }
        let matched = match s.matched_by {
            SeriesMatch::Name => String::new(),
            SeriesMatch::CaseAndMetric => format!(
                " (the reference's {}, matched by its case and metric)",
                s.reference_label
            ),
        };
        out.push_str(&wrap(&format!("{}{matched}:", s.label), WIDTH, ""));
        let mut facts = vec![format!(
            "Maximum within-boot CV {} in the reference, {} here.",
            s.reference.max_cv_pct.map_or_else(|| "-".to_owned(), pct),
            s.new.max_cv_pct.map_or_else(|| "-".to_owned(), pct)
        )];
        let spreads = |kernels: &[KernelSummary]| -> Vec<String> {
            kernels.iter().filter_map(spread_words).collect()
        };
        let (rs, ns) = (spreads(&s.reference.kernels), spreads(&s.new.kernels));
        if !rs.is_empty() || !ns.is_empty() {
            facts.push(format!(
                "The reference: {}; this campaign: {}.",
                if rs.is_empty() {
                    "no kernel booted twice".to_owned()
                } else {
                    rs.join(", ")
                },
                if ns.is_empty() {
                    "no kernel booted twice".to_owned()
                } else {
                    ns.join(", ")
                }
            ));
        }
        if let Some(unit) = &s.reference_unit {
            facts.push(format!(
                "The reference measured in {unit}, this campaign in {}: the changes are \
                 relative, the means are not comparable.",
                s.unit.as_deref().unwrap_or("-")
            ));
        }
        out.push_str(&wrap(&facts.join(" "), WIDTH, "  "));
        for c in &s.candidates {
            out.push_str(&wrap_hanging(
                &candidate_details(r, c),
                WIDTH,
                "  - ",
                "    ",
            ));
        }
        let mut left = Vec::new();
        if !s.only_new.is_empty() {
            left.push(format!(
                "Compared only in this campaign: {}.",
                and_list(&s.only_new)
            ));
        }
        if !s.only_reference.is_empty() {
            left.push(format!(
                "Compared only in the reference: {}.",
                and_list(&s.only_reference)
            ));
        }
        for (who, why) in [
            ("the reference", &s.reference.not_compared),
            ("this campaign", &s.new.not_compared),
        ] {
            if !why.is_empty() {
                left.push(format!("Not compared in {who}: {}.", why.join("; ")));
            }
        }
        if !left.is_empty() {
            out.push_str(&wrap(&left.join(" "), WIDTH, "  "));
        }
    }
    out.trim_end().to_owned()
}

fn candidate_details(r: &Reproduction, c: &CandidateReproduction) -> String {
    let name = match c.matched_by {
        KernelMatch::Label => c.new.shown(),
        KernelMatch::OnlyCandidate => format!(
            "{} (the reference's {}, its only other candidate)",
            c.new.candidate, c.reference.candidate
        ),
    };
    let mut text = format!(
        "{name}: the reference {}",
        claim_details(&c.reference, r.reference.shared_boot)
    );
    if let Some(p) = &c.published {
        text.push_str(&format!(
            "; it publishes {} ({}), {}",
            p.text,
            p.column,
            if p.agrees {
                "which aba's recomputation matches"
            } else {
                "which aba's recomputation from its points does not match"
            }
        ));
    }
    text.push_str(&format!(
        ". This campaign {}.",
        claim_details(&c.new, r.new.shared_boot)
    ));
    if let Some(ratio) = c.verdict.ratio {
        text.push_str(&format!(" Ratio of the changes {}.", fixed(ratio, 2)));
    }
    match (&c.verdict.difference, c.verdict.rule) {
        (Some(d), rule) if !matches!(rule, Rule::NoClaim { .. }) => {
            let mut words = difference_words(d);
            if let Some(first) = words.get_mut(..1) {
                first.make_ascii_uppercase();
            }
            text.push_str(&format!(" {words}: {}.", c.verdict.label));
        }
        _ => text.push_str(&format!(" {}: {}.", c.verdict.label, rule_words(c))),
    }
    if r.new.shared_boot || r.reference.shared_boot {
        text.push_str(&format!(
            " One side ran every point in one boot: its variance is {}.",
            level(true)
        ));
    }
    text
}

/// What only one side has: series, and notes on what could not be read.
#[must_use]
pub fn only(r: &Reproduction) -> String {
    let mut parts = Vec::new();
    if !r.only_new.is_empty() {
        parts.push(format!("Only in this campaign: {}.", and_list(&r.only_new)));
    }
    if !r.only_reference.is_empty() {
        parts.push(format!(
            "Only in the reference: {}.",
            and_list(&r.only_reference)
        ));
    }
    for (who, info) in [("This campaign", &r.new), ("The reference", &r.reference)] {
        if let Source::Campaign {
            finished: false,
            missing_points,
            ..
        } = &info.source
        {
            parts.push(format!(
                "{who} did not finish: {} point{} not done ({}).",
                missing_points.len(),
                plural(missing_points.len()),
                missing_points.join(", ")
            ));
        }
        for note in &info.notes {
            parts.push(format!("{who}: {note}."));
        }
        if let Source::Published { ignored, .. } = &info.source
            && !ignored.is_empty()
        {
            let listed: Vec<String> = ignored
                .iter()
                .map(|i| format!("{} ({})", i.file, i.reason))
                .collect();
            parts.push(format!("{who}'s files not used: {}.", listed.join("; ")));
        }
    }
    parts
        .iter()
        .map(|p| wrap(p, WIDTH, ""))
        .collect::<String>()
        .trim_end()
        .to_owned()
}

/// How to reproduce the comparison and what the consistency test is. Each side is named as
/// the command was given it (relative when the user typed it so; the results directory and
/// its `reference/` copy at the end of `aba run`), shell-quoted when it needs to be, so the
/// printed command works from where the user stands.
#[must_use]
pub fn footer(r: &Reproduction) -> String {
    let shown = |info: &EvidenceInfo| sh_quote(&one_line(&info.path));
    let source = |info: &EvidenceInfo| match &info.source {
        Source::Campaign { aba_version, .. } => {
            format!("{} (an aba {aba_version} results directory)", shown(info))
        }
        Source::Published { files, .. } => {
            format!("{} (a published bundle: {})", shown(info), files.join(", "))
        }
    };
    wrap(
        &format!(
            "Reproduce: `aba compare {} {}` recomputes every figure from both sides' files. New: \
             {}. Reference: {}. Two changes agree when the 99% interval of their difference, \
             from both campaigns' boot-level variances, includes 0. aba {}.",
            shown(&r.new),
            shown(&r.reference),
            source(&r.new),
            source(&r.reference),
            env!("CARGO_PKG_VERSION")
        ),
        WIDTH,
        "",
    )
    .trim_end()
    .to_owned()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{summary, title};
    use crate::{
        analysis::testkit::campaign,
        report::layout::WIDTH,
        reproduction::{campaign::from_analysis, compare, evidence::Evidence},
    };

    /// A campaign of workload `w` with `sequence` and these point means.
    pub(crate) fn evidence(sequence: &str, means: &[(&str, f64)]) -> Evidence {
        let recipe = format!(
            "version = 1\nname = \"r\"\ndescription = \"unit\"\nsequence = {sequence}\n\
             warmup = 0\nsamples = 3\n[kernels.a]\nrelease = \"6.1.0-a\"\n\
             [kernels.b]\nrelease = \"6.1.0-b\"\n[[workload]]\nname = \"w\"\nrun = \"true\"\n\
             metric = {{ number = true, unit = \"ns\", better = \"lower\" }}\n"
        );
        let values: Vec<(String, [f64; 3])> = means
            .iter()
            .map(|(p, m)| ((*p).to_owned(), [m - 0.1, *m, m + 0.1]))
            .collect();
        let borrowed: Vec<(&str, &str, &[f64])> = values
            .iter()
            .map(|(p, v)| (p.as_str(), "w", v.as_slice()))
            .collect();
        from_analysis(&campaign(&recipe, &borrowed), "r", &[], Vec::new())
    }

    fn abab(b: f64) -> Evidence {
        evidence(
            "[\"a\", \"b\", \"a\", \"b\", \"a\"]",
            &[
                ("a-a", 100.0),
                ("b-a", b),
                ("a-b", 100.1),
                ("b-b", b + 0.1),
                ("a-c", 99.9),
            ],
        )
    }

    #[test]
    fn a_reversed_change_and_a_campaign_that_claims_nothing_are_said_so() {
        let reference = abab(120.0);
        let r = compare(&abab(80.0), &reference).expect("w in both");
        let text = summary(&r);
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(
                "The b kernel was 19.95% faster than the mean of kernel a over 3 boots, against \
                 +20.05% (SIGNAL) in the reference. NOT_REPRODUCED: the change is reversed."
            ),
            "{flat}"
        );
        assert_eq!(title(&r), "r against the reference r: 1 NOT_REPRODUCED");
        let ab = evidence("[\"a\", \"b\"]", &[("a", 100.0), ("b", 120.0)]);
        let r = compare(&ab, &reference).expect("w in both");
        let flat = summary(&r).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(
                "INCONCLUSIVE: this campaign is UNREPLICATED: no kernel was booted twice, so its \
                 boot-to-boot variation is unknown."
            ),
            "{flat}"
        );
    }
}
