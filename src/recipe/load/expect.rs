//! `[[expect]]`: the changes a recipe predicts, checked against its workloads and kernels.

use std::collections::HashSet;

use toml::Spanned;

use crate::recipe::{
    diagnostic::ticked,
    ident::KernelLabel,
    limits,
    model::{ExpectSection, ExpectSpec, RecipeFile},
    params::NumberOrParam,
    resolved::{AnalysisSettings, Expect, Expected, Workload, point_labels},
};

use super::Checker;

impl Checker<'_> {
    pub(super) fn expect(
        &mut self,
        file: &RecipeFile,
        workloads: &[Workload],
        analysis: &AnalysisSettings,
        sequence: &[KernelLabel],
        known: &[&KernelLabel],
    ) -> Vec<Expect> {
        let mut out = Vec::new();
        let ExpectSection::Changes(specs) = &file.expect else {
            return out;
        };
        if specs.len() > limits::EXPECTS {
            self.error(
                specs[limits::EXPECTS].span(),
                format!(
                    "the recipe lists {} [[expect]] tables; at most {} are allowed",
                    specs.len(),
                    limits::EXPECTS
                ),
            );
            return out;
        }
        for table in specs {
            let spec = table.get_ref();
            if let Some(reference) = &spec.reference {
                // Read by `reference` (files.rs); alone in its table.
                let others = [
                    spec.workload.is_some(),
                    spec.case.is_some(),
                    spec.metric.is_some(),
                    spec.kernel.is_some(),
                    spec.baseline.is_some(),
                    spec.change_pct.is_some(),
                    spec.mean.is_some(),
                    spec.point.is_some(),
                    spec.control.is_some(),
                    spec.control_workload.is_some(),
                    spec.recovery.is_some(),
                    spec.share_pct.is_some(),
                    spec.target.is_some(),
                    spec.tolerance.is_some(),
                ];
                if others.contains(&true) {
                    self.error(
                        reference.span(),
                        "an [[expect]] with `reference` holds nothing else: the reference is the whole published result, its figures are in their own [[expect]] tables",
                    );
                }
                continue;
            }
            let (Some(named), Some(tolerance_field)) = (&spec.workload, &spec.tolerance) else {
                self.error(
                    table.span(),
                    format!(
                        "[[expect]] needs {}: the workload a published figure is about and how far the reproduction may be (or `reference` alone, a published result to compare with)",
                        match (&spec.workload, &spec.tolerance) {
                            (None, None) => "`workload` and `tolerance`",
                            (None, Some(_)) => "`workload`",
                            _ => "`tolerance`",
                        }
                    ),
                );
                continue;
            };
            let Some(workload) = workloads.iter().find(|w| &w.name == named.get_ref()) else {
                let names: Vec<&str> = workloads.iter().map(|w| w.name.as_str()).collect();
                let diag = self.error(
                    named.span(),
                    format!(
                        "[[expect]] names workload `{}`, which the recipe does not declare",
                        named.get_ref()
                    ),
                );
                diag.suggest(named.get_ref().as_str(), names.iter().copied(), ticked);
                diag.help.push(format!("workloads: {}", names.join(", ")));
                continue;
            };
            let count = usize::try_from(workload.case_count()).unwrap_or(usize::MAX);
            let case = match &spec.case {
                Some(c) => match self.case_of(workload, c) {
                    Some(case) => case,
                    None => continue,
                },
                None if count == 1 => workload.case_at(0).name,
                None => {
                    self.error(
                        table_span(spec),
                        format!("workload `{}` has a matrix; say which `case` this expectation is about", workload.name),
                    );
                    continue;
                }
            };
            if workload.is_check() {
                self.error(
                    table_span(spec),
                    format!("workload `{}` is a check (`role = \"check\"`): it has no metric whose change could be expected", workload.name),
                );
                continue;
            }
            let metric = match &spec.metric {
                Some(m) if workload.metric_names().any(|n| n == m.get_ref()) => m.get_ref().clone(),
                Some(m) => {
                    let names: Vec<&str> = workload.metric_names().map(|n| n.as_str()).collect();
                    self.error(
                        m.span(),
                        format!(
                            "workload `{}` has no metric `{}`",
                            workload.name,
                            m.get_ref()
                        ),
                    )
                    .help
                    .push(format!("metrics: {}", names.join(", ")));
                    continue;
                }
                None if workload.metrics.len() == 1 => workload.metrics[0].name.clone(),
                None => {
                    self.error(
                        table_span(spec),
                        format!("workload `{}` has several metrics; say which `metric` this expectation is about", workload.name),
                    );
                    continue;
                }
            };
            let Some(value) = self.expected_value(spec, sequence, workload, &case, analysis) else {
                continue;
            };
            let Some(kernel) = self.expect_kernel(spec, &value, analysis, sequence, known) else {
                continue;
            };
            let Some(baseline) = self.expect_baseline(spec, &value, &kernel, analysis, known)
            else {
                continue;
            };
            let Some(tolerance) = self.number(tolerance_field, "tolerance") else {
                continue;
            };
            if !(tolerance.is_finite() && tolerance >= 0.0) {
                let help = self.param_help(&format!("{:?}", tolerance_field.get_ref()));
                self.error(
                    tolerance_field.span(),
                    "`tolerance` must be a finite number ≥ 0",
                )
                .help
                .extend(help);
                continue;
            }
            let target = match &spec.target {
                Some(t) if target_name(t.get_ref()) => Some(t.get_ref().clone()),
                Some(t) => {
                    self.error(
                        t.span(),
                        format!(
                            "[[expect]] `target` `{}` is not a target name: 1 to 64 letters, digits, `-`, `_` or `.`",
                            crate::text::one_line(t.get_ref())
                        ),
                    );
                    continue;
                }
                None => None,
            };
            out.push(Expect {
                workload: workload.name.clone(),
                case,
                metric,
                kernel,
                baseline,
                value,
                tolerance,
                target,
            });
        }
        out
    }

    /// The kernel an expectation is about: `kernel` when given (checked against what the
    /// value needs), else the one kernel it can be.
    fn expect_kernel(
        &mut self,
        spec: &ExpectSpec,
        value: &Expected,
        analysis: &AnalysisSettings,
        sequence: &[KernelLabel],
        known: &[&KernelLabel],
    ) -> Option<KernelLabel> {
        let kernel = match (&spec.kernel, value) {
            (Some(k), _) if !known.contains(&k.get_ref()) => {
                self.unknown_kernel(k, known, "[[expect]] `kernel`");
                return None;
            }
            (Some(k), Expected::Mean { point: Some(p), .. }) => {
                let at = point_kernel(sequence, p);
                if at != Some(k.get_ref()) {
                    self.error(
                        k.span(),
                        format!(
                            "[[expect]] `point` `{p}` is a point of kernel `{}`, not of `{}`",
                            at.map_or("?", KernelLabel::as_str),
                            k.get_ref()
                        ),
                    );
                    return None;
                }
                k.get_ref().clone()
            }
            (Some(k), Expected::RecoveryShare { recovery, .. }) => {
                let ends = step_ends(analysis, recovery);
                if !ends.contains(&k.get_ref()) {
                    let names: Vec<&str> = ends.iter().map(|e| e.as_str()).collect();
                    self.error(
                        k.span(),
                        format!(
                            "recovery `{recovery}` has no step ending at `{}`; its steps end at {}",
                            k.get_ref(),
                            names.join(", ")
                        ),
                    );
                    return None;
                }
                k.get_ref().clone()
            }
            (Some(k), _) => k.get_ref().clone(),
            (None, Expected::Mean { point: Some(p), .. }) => point_kernel(sequence, p)
                .expect("invariant: expected_value checked the point")
                .clone(),
            (None, Expected::Mean { point: None, .. }) => {
                self.error(
                    table_span(spec),
                    "an [[expect]] with `mean` names the `kernel` whose mean it expects, or its `point`",
                );
                return None;
            }
            (None, Expected::CaseChangePct { .. }) => {
                self.error(
                    table_span(spec),
                    "an [[expect]] with `control` names the `kernel` on which the two cases are compared",
                );
                return None;
            }
            (None, Expected::RecoveryShare { recovery, .. }) => {
                let ends = step_ends(analysis, recovery);
                if let [only] = ends.as_slice() {
                    (*only).clone()
                } else {
                    self.error(
                        table_span(spec),
                        format!("recovery `{recovery}` has several steps; say which with `kernel` (the kernel a step ends at)"),
                    );
                    return None;
                }
            }
            (None, Expected::ChangePct(_)) => {
                let mut others: Vec<&KernelLabel> = sequence
                    .iter()
                    .filter(|k| **k != analysis.baseline)
                    .collect();
                others.dedup();
                let unique: HashSet<&&KernelLabel> = others.iter().collect();
                if unique.len() != 1 {
                    self.error(
                        table_span(spec),
                        "the recipe has several candidate kernels; say which `kernel` this expectation is about",
                    );
                    return None;
                }
                others[0].clone()
            }
        };
        Some(kernel)
    }

    /// The kernel a change is against: `baseline` when given (only with `change_pct`, and
    /// only a compared pair: the campaign's baseline or a declared comparison), else the
    /// campaign's baseline.
    fn expect_baseline(
        &mut self,
        spec: &ExpectSpec,
        value: &Expected,
        kernel: &KernelLabel,
        analysis: &AnalysisSettings,
        known: &[&KernelLabel],
    ) -> Option<KernelLabel> {
        let Some(b) = &spec.baseline else {
            if matches!(value, Expected::ChangePct(_)) && kernel == &analysis.baseline {
                self.error(
                    spec.kernel.as_ref().map_or(table_span(spec), Spanned::span),
                    format!("[[expect]] `kernel` `{kernel}` is the baseline: a change is a candidate's against it"),
                );
                return None;
            }
            return Some(analysis.baseline.clone());
        };
        if !known.contains(&b.get_ref()) {
            self.unknown_kernel(b, known, "[[expect]] `baseline`");
            return None;
        }
        if !matches!(value, Expected::ChangePct(_)) {
            self.error(
                b.span(),
                "[[expect]] `baseline` goes with `change_pct` (a change is against a kernel); a mean is a kernel's own",
            );
            return None;
        }
        let against = b.get_ref();
        let declared = analysis
            .comparisons
            .iter()
            .any(|c| &c.candidate == kernel && &c.baseline == against);
        if against != &analysis.baseline && !declared {
            let diag = self.error(
                b.span(),
                format!(
                    "`{kernel}` against `{against}` is not a comparison of this recipe: add it as [[analysis.comparison]] (candidate = \"{kernel}\", baseline = \"{against}\")"
                ),
            );
            diag.help.push(format!(
                "every candidate is compared with `{}` (`analysis.baseline`) without asking",
                analysis.baseline
            ));
            return None;
        }
        Some(against.clone())
    }

    /// What `spec` expects: exactly one of `change_pct`, `mean` and `share_pct`, a finite
    /// number; `point` only with `mean` (one of the plan's points), `control` only with
    /// `change_pct` (a declared case comparison), `recovery` with `share_pct` and only with
    /// it (a declared decomposition).
    fn expected_value(
        &mut self,
        spec: &ExpectSpec,
        sequence: &[KernelLabel],
        workload: &Workload,
        case: &str,
        analysis: &AnalysisSettings,
    ) -> Option<Expected> {
        let misplaced = [
            (
                spec.point.as_ref().map(Spanned::span),
                spec.mean.is_none(),
                "[[expect]] `point` goes with `mean` (a point's absolute value); a change is the kernel's",
            ),
            (
                spec.control.as_ref().map(Spanned::span),
                spec.change_pct.is_none(),
                "[[expect]] `control` goes with `change_pct`: the change of `case` against the control case",
            ),
            (
                spec.control_workload.as_ref().map(Spanned::span),
                spec.control.is_none(),
                "[[expect]] `control_workload` goes with `control`: the control case's workload",
            ),
            (
                spec.recovery.as_ref().map(Spanned::span),
                spec.share_pct.is_none(),
                "[[expect]] `recovery` goes with `share_pct`: the share of its gap a step recovers",
            ),
            (
                spec.share_pct.as_ref().map(Spanned::span),
                spec.recovery.is_none(),
                "[[expect]] `share_pct` names its `recovery` (an [[analysis.recovery]] name)",
            ),
        ];
        for (span, alone, message) in misplaced {
            if let (Some(span), true) = (span, alone) {
                self.error(span, message);
                return None;
            }
        }
        let given: Vec<(&Spanned<NumberOrParam>, &str)> = [
            (spec.change_pct.as_ref(), "change_pct"),
            (spec.mean.as_ref(), "mean"),
            (spec.share_pct.as_ref(), "share_pct"),
        ]
        .into_iter()
        .filter_map(|(field, key)| Some((field?, key)))
        .collect();
        let (field, key) = match given.as_slice() {
            [one] => *one,
            [] => {
                self.error(
                    table_span(spec),
                    "[[expect]] says what it expects: `change_pct` (the change against the baseline, %) or `mean` (an absolute value in the metric's unit), or `share_pct` with `recovery` (a recovery step's share of its gap, %)",
                );
                return None;
            }
            [(_, first), (second, key), ..] => {
                self.error(
                    second.span(),
                    format!(
                        "[[expect]] has both `{first}` and `{key}`: one table expects one value"
                    ),
                );
                return None;
            }
        };
        let n = self.number(field, key)?;
        if !n.is_finite() {
            let help = self.param_help(&format!("{:?}", field.get_ref()));
            self.error(field.span(), format!("`{key}` must be a finite number"))
                .help
                .extend(help);
            return None;
        }
        match key {
            "change_pct" => match &spec.control {
                Some(control) => self.case_expectation(spec, control, n, workload, case, analysis),
                None => Some(Expected::ChangePct(n)),
            },
            "share_pct" => {
                let name = spec.recovery.as_ref().expect("invariant: checked above");
                if analysis
                    .recovery
                    .iter()
                    .any(|r| r.name.as_str() == name.get_ref())
                {
                    Some(Expected::RecoveryShare {
                        value: n,
                        recovery: name.get_ref().clone(),
                    })
                } else {
                    let names: Vec<&str> =
                        analysis.recovery.iter().map(|r| r.name.as_str()).collect();
                    let diag = self.error(
                        name.span(),
                        format!(
                            "[[expect]] `recovery` `{}` is not an [[analysis.recovery]] of this recipe",
                            crate::text::one_line(name.get_ref())
                        ),
                    );
                    diag.suggest(name.get_ref(), names.iter().copied(), ticked);
                    diag.help.push(if names.is_empty() {
                        "the recipe declares no [[analysis.recovery]]".to_owned()
                    } else {
                        format!("recoveries: {}", names.join(", "))
                    });
                    None
                }
            }
            _ => self.mean_expectation(spec, n, sequence),
        }
    }

    /// `change_pct` with `control`: one of the recipe's case comparisons, treatment `case`.
    fn case_expectation(
        &mut self,
        spec: &ExpectSpec,
        control: &Spanned<String>,
        value: f64,
        workload: &Workload,
        case: &str,
        analysis: &AnalysisSettings,
    ) -> Option<Expected> {
        let control_workload = spec
            .control_workload
            .as_ref()
            .map_or(&workload.name, |w| w.get_ref());
        let declared = analysis.case_comparisons.iter().any(|c| {
            c.workload == workload.name
                && c.treatment == case
                && &c.control_workload == control_workload
                && &c.control == control.get_ref()
        });
        if declared {
            return Some(Expected::CaseChangePct {
                value,
                control_workload: control_workload.clone(),
                control: control.get_ref().clone(),
            });
        }
        let listed: Vec<String> = analysis
            .case_comparisons
            .iter()
            .filter(|c| c.workload == workload.name)
            .map(|c| {
                format!(
                    "`{}` vs `{}` of {}",
                    c.treatment, c.control, c.control_workload
                )
            })
            .collect();
        let diag = self.error(
            control.span(),
            format!(
                "no [[analysis.case_comparison]] compares case `{}` of `{}` with case `{}` of `{control_workload}`",
                crate::text::one_line(case),
                workload.name,
                crate::text::one_line(control.get_ref())
            ),
        );
        diag.help.push(if listed.is_empty() {
            format!("workload `{}` has no case comparison", workload.name)
        } else {
            format!("its case comparisons: {}", listed.join(", "))
        });
        None
    }

    /// `mean`, of a kernel or of one of the plan's points.
    fn mean_expectation(
        &mut self,
        spec: &ExpectSpec,
        value: f64,
        sequence: &[KernelLabel],
    ) -> Option<Expected> {
        let point = match &spec.point {
            Some(p) if point_kernel(sequence, p.get_ref()).is_some() => Some(p.get_ref().clone()),
            Some(p) => {
                let labels = point_labels(sequence);
                let diag = self.error(
                    p.span(),
                    format!(
                        "[[expect]] `point` `{}` is not a point of the sequence",
                        crate::text::one_line(p.get_ref())
                    ),
                );
                diag.suggest(p.get_ref(), labels.iter().map(String::as_str), ticked);
                diag.help.push(format!("points: {}", labels.join(", ")));
                return None;
            }
            None => None,
        };
        Some(Expected::Mean { value, point })
    }
}

/// The kernels the steps of recovery `name` end at (its path after the first kernel).
fn step_ends<'a>(analysis: &'a AnalysisSettings, name: &str) -> Vec<&'a KernelLabel> {
    analysis
        .recovery
        .iter()
        .find(|r| r.name.as_str() == name)
        .map(|r| r.path.iter().skip(1).collect())
        .unwrap_or_default()
}

/// Where an error about the whole table points: its `workload` (the loop checked it is
/// there before anything else is read).
fn table_span(spec: &ExpectSpec) -> std::ops::Range<usize> {
    spec.workload.as_ref().map_or(0..0, Spanned::span)
}

/// A target's name as inventories spell it.
fn target_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The kernel of the point labelled `label` in `sequence`'s plan.
fn point_kernel<'a>(sequence: &'a [KernelLabel], label: &str) -> Option<&'a KernelLabel> {
    point_labels(sequence)
        .iter()
        .position(|l| l == label)
        .map(|i| &sequence[i])
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::recipe::{
        load::{
            parse,
            testkit::{MINIMAL, errors},
        },
        resolved::Expected,
    };

    fn with(expect: &str) -> String {
        format!("{MINIMAL}[[expect]]\nworkload = \"w\"\n{expect}")
    }

    #[test]
    fn a_mean_is_expected_of_a_kernel_or_of_a_point() {
        let r = parse(
            Path::new("r.toml"),
            &with("kernel = \"a\"\nmean = 2480.5\ntolerance = 50\n"),
        )
        .expect("valid");
        assert_eq!(
            r.expect[0].value,
            Expected::Mean {
                value: 2480.5,
                point: None
            }
        );
        assert_eq!(r.expect[0].kernel.as_str(), "a");
        let r = parse(
            Path::new("r.toml"),
            &with("point = \"a-b\"\nmean = 1\ntolerance = 0\n"),
        )
        .expect("valid");
        assert_eq!(r.expect[0].kernel.as_str(), "a", "the point's kernel");
        assert_eq!(
            r.expect[0].value,
            Expected::Mean {
                value: 1.0,
                point: Some("a-b".into())
            }
        );
        let r = parse(
            Path::new("r.toml"),
            &with("change_pct = 5\ntolerance = 1\n"),
        )
        .expect("valid");
        assert_eq!(r.expect[0].value, Expected::ChangePct(5.0));
        assert_eq!(r.expect[0].kernel.as_str(), "b");
    }

    /// MINIMAL with a third kernel `c`, booted `a, b, c, a`.
    fn three(tail: &str) -> String {
        MINIMAL.replace(
            r#"sequence = ["a", "b", "a"]"#,
            r#"sequence = ["a", "b", "c", "a"]"#,
        ) + "[kernels.c]\nrelease = \"6.1.0-51-cloud-amd64\"\n"
            + tail
    }

    /// `[[analysis.comparison]]` and an `[[expect]]` on it resolve; every mistake is named
    /// at its place.
    #[test]
    fn a_declared_comparison_and_its_expectation() {
        let r = parse(
            Path::new("r.toml"),
            &three(
                "[[analysis.comparison]]\ncandidate = \"c\"\nbaseline = \"b\"\n\
                 [[expect]]\nworkload = \"w\"\nkernel = \"c\"\nbaseline = \"b\"\n\
                 change_pct = -3\ntolerance = 1\n",
            ),
        )
        .expect("valid");
        assert_eq!(r.analysis.comparisons.len(), 1);
        assert_eq!(
            (
                r.analysis.comparisons[0].candidate.as_str(),
                r.analysis.comparisons[0].baseline.as_str()
            ),
            ("c", "b")
        );
        assert_eq!(r.expect[0].baseline.as_str(), "b");
        // The tables start at line 17 (MINIMAL's 14 lines, then kernel c's two).
        let comparison = |c: &str, b: &str| {
            three(&format!(
                "[[analysis.comparison]]\ncandidate = \"{c}\"\nbaseline = \"{b}\"\n"
            ))
        };
        let e = errors(&comparison("c", "a"));
        assert!(e.contains("r.toml:19:12"), "{e}");
        assert!(e.contains("`c` against `a` is compared already"), "{e}");
        let e = errors(&comparison("c", "c"));
        assert!(e.contains("compares `c` with itself"), "{e}");
        let e = errors(&comparison("d", "b"));
        assert!(e.contains("r.toml:18:13"), "{e}");
        assert!(
            e.contains("names kernel `d`, which is not in [kernels]"),
            "{e}"
        );
        let e = errors(
            &(comparison("c", "b")
                + "[[analysis.comparison]]\ncandidate = \"c\"\nbaseline = \"b\"\n"),
        );
        assert!(e.contains("r.toml:21:13"), "{e}");
        assert!(e.contains("`c` against `b` is declared twice"), "{e}");
        let unbooted = MINIMAL.to_owned()
            + "[kernels.c]\nrelease = \"x\"\n[[analysis.comparison]]\ncandidate = \"c\"\nbaseline = \"b\"\n";
        let e = errors(&unbooted);
        assert!(e.contains("`sequence` never boots"), "{e}");
        // An expectation against another kernel needs that comparison declared.
        let e = errors(&three(
            "[[expect]]\nworkload = \"w\"\nkernel = \"c\"\nbaseline = \"b\"\nchange_pct = 1\ntolerance = 1\n",
        ));
        assert!(e.contains("r.toml:20:12"), "{e}");
        assert!(
            e.contains("`c` against `b` is not a comparison of this recipe: add it as [[analysis.comparison]]"),
            "{e}"
        );
        let e = errors(&three(
            "[[expect]]\nworkload = \"w\"\nkernel = \"c\"\nbaseline = \"b\"\nmean = 1\ntolerance = 1\n",
        ));
        assert!(e.contains("`baseline` goes with `change_pct`"), "{e}");
    }

    /// A case's change against a control case, a recovery step's share and a target:
    /// each resolves, and each mistake is named at its place.
    #[test]
    fn case_share_and_target_expectations() {
        let cases = MINIMAL.replace(
            "run = \"echo 1\"\nmetric = { number = true",
            "run = \"echo {flag}\"\nmatrix = { flag = [\"on\", \"off\"] }\nmetric = { number = true",
        ) + "[[analysis.case_comparison]]\nworkload = \"w\"\ntreatment = \"flag=on\"\ncontrol = \"flag=off\"\n";
        let r = parse(
            Path::new("r.toml"),
            &(cases.clone()
                + "[[expect]]\nworkload = \"w\"\ncase = \"flag=on\"\ncontrol = \"flag=off\"\nkernel = \"a\"\nchange_pct = -4\ntolerance = 1\ntarget = \"machine-b\"\n"),
        )
        .expect("valid");
        assert!(matches!(
            &r.expect[0].value,
            Expected::CaseChangePct { value, control, .. } if *value == -4.0 && control == "flag=off"
        ));
        assert_eq!(r.expect[0].target.as_deref(), Some("machine-b"));
        // The case comparison ends at line 19; [[expect]] is 20, workload 21.
        let e = errors(
            &(cases.clone()
                + "[[expect]]\nworkload = \"w\"\ncase = \"flag=off\"\ncontrol = \"flag=on\"\nkernel = \"a\"\nchange_pct = -4\ntolerance = 1\n"),
        );
        assert!(e.contains("r.toml:23:11"), "{e}");
        assert!(
            e.contains("no [[analysis.case_comparison]] compares case `flag=off` of `w` with case `flag=on` of `w`"),
            "{e}"
        );
        assert!(
            e.contains("its case comparisons: `flag=on` vs `flag=off` of w"),
            "{e}"
        );
        let e = errors(
            &(cases.clone()
                + "[[expect]]\nworkload = \"w\"\ncase = \"flag=on\"\ncontrol = \"flag=off\"\nchange_pct = -4\ntolerance = 1\n"),
        );
        assert!(
            e.contains("names the `kernel` on which the two cases are compared"),
            "{e}"
        );
        let e = errors(
            &(cases
                + "[[expect]]\nworkload = \"w\"\ncase = \"flag=on\"\ncontrol = \"flag=off\"\nkernel = \"a\"\nmean = 4\ntolerance = 1\n"),
        );
        assert!(e.contains("`control` goes with `change_pct`"), "{e}");
        let e = errors(&with(
            "kernel = \"b\"\nchange_pct = 1\ntolerance = 1\ntarget = \"a b\"\n",
        ));
        assert!(e.contains("r.toml:20:10"), "{e}");
        assert!(e.contains("`target` `a b` is not a target name"), "{e}");
        let e = errors(&with("kernel = \"a\"\nchange_pct = 1\ntolerance = 1\n"));
        assert!(e.contains("r.toml:17:10"), "{e}");
        assert!(e.contains("`kernel` `a` is the baseline"), "{e}");
        // Shares.
        let recovery = three(
            "[[analysis.recovery]]\nname = \"fix\"\ngap = [\"b\", \"a\"]\npath = [\"b\", \"c\"]\n[[expect]]\nworkload = \"w\"\n",
        );
        let r = parse(
            Path::new("r.toml"),
            &(recovery.clone() + "recovery = \"fix\"\nshare_pct = 60\ntolerance = 20\n"),
        )
        .expect("valid");
        assert_eq!(r.expect[0].kernel.as_str(), "c", "the one step's end");
        assert!(
            matches!(&r.expect[0].value, Expected::RecoveryShare { value, recovery } if *value == 60.0 && recovery == "fix")
        );
        // [[expect]] is line 21, workload 22, the rest from 23.
        let e =
            errors(&(recovery.clone() + "recovery = \"fixx\"\nshare_pct = 60\ntolerance = 20\n"));
        assert!(e.contains("r.toml:23:12"), "{e}");
        assert!(
            e.contains("`recovery` `fixx` is not an [[analysis.recovery]] of this recipe"),
            "{e}"
        );
        assert!(e.contains("recoveries: fix"), "{e}");
        let e = errors(
            &(recovery.clone()
                + "recovery = \"fix\"\nkernel = \"b\"\nshare_pct = 60\ntolerance = 20\n"),
        );
        assert!(e.contains("r.toml:24:10"), "{e}");
        assert!(
            e.contains("recovery `fix` has no step ending at `b`; its steps end at c"),
            "{e}"
        );
        let e = errors(&(recovery.clone() + "share_pct = 60\ntolerance = 20\n"));
        assert!(e.contains("`share_pct` names its `recovery`"), "{e}");
        let e = errors(&(recovery + "recovery = \"fix\"\nchange_pct = 60\ntolerance = 20\n"));
        assert!(e.contains("`recovery` goes with `share_pct`"), "{e}");
    }

    /// Each mistake is named at its line and column, with the field.
    #[test]
    fn a_mean_expectation_names_its_mistakes_at_their_place() {
        // MINIMAL ends at line 14; `[[expect]]` is line 15, `workload` 16, the rest from 17.
        let e = errors(&with("mean = 1\ntolerance = 1\n"));
        assert!(e.contains("r.toml:16:12"), "{e}");
        assert!(
            e.contains("with `mean` names the `kernel` whose mean it expects, or its `point`"),
            "{e}"
        );
        let e = errors(&with(
            "kernel = \"a\"\nchange_pct = 1\nmean = 1\ntolerance = 1\n",
        ));
        assert!(e.contains("r.toml:19:8"), "{e}");
        assert!(e.contains("has both `change_pct` and `mean`"), "{e}");
        let e = errors(&with("tolerance = 1\n"));
        assert!(e.contains("r.toml:16:12"), "{e}");
        assert!(
            e.contains("`change_pct` (the change against the baseline, %) or `mean`"),
            "{e}"
        );
        let e = errors(&with("point = \"a-c\"\nmean = 1\ntolerance = 1\n"));
        assert!(e.contains("r.toml:17:9"), "{e}");
        assert!(
            e.contains("`point` `a-c` is not a point of the sequence"),
            "{e}"
        );
        assert!(e.contains("points: a-a, b, a-b"), "{e}");
        let e = errors(&with("point = \"b\"\nchange_pct = 1\ntolerance = 1\n"));
        assert!(e.contains("r.toml:17:9"), "{e}");
        assert!(e.contains("`point` goes with `mean`"), "{e}");
        let e = errors(&with(
            "kernel = \"a\"\npoint = \"b\"\nmean = 1\ntolerance = 1\n",
        ));
        assert!(e.contains("r.toml:17:10"), "{e}");
        assert!(
            e.contains("`point` `b` is a point of kernel `b`, not of `a`"),
            "{e}"
        );
        let e = errors(&with("kernel = \"a\"\nmean = 1\ntolerance = -1\n"));
        assert!(e.contains("r.toml:19:13"), "{e}");
        assert!(e.contains("`tolerance` must be a finite number ≥ 0"), "{e}");
    }
}
