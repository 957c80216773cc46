//! `[[expect]]`: the changes a recipe predicts, checked against its workloads and kernels.

use std::collections::HashSet;

use crate::recipe::{
    diagnostic::ticked,
    ident::KernelLabel,
    limits,
    model::{ExpectSection, ExpectSpec, RecipeFile},
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
                specs[limits::EXPECTS].workload.span(),
                format!(
                    "the recipe lists {} [[expect]] tables; at most {} are allowed",
                    specs.len(),
                    limits::EXPECTS
                ),
            );
            return out;
        }
        for spec in specs {
            let Some(workload) = workloads
                .iter()
                .find(|w| &w.name == spec.workload.get_ref())
            else {
                let names: Vec<&str> = workloads.iter().map(|w| w.name.as_str()).collect();
                let diag = self.error(
                    spec.workload.span(),
                    format!(
                        "[[expect]] names workload `{}`, which the recipe does not declare",
                        spec.workload.get_ref()
                    ),
                );
                diag.suggest(
                    spec.workload.get_ref().as_str(),
                    names.iter().copied(),
                    ticked,
                );
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
                        spec.workload.span(),
                        format!("workload `{}` has a matrix; say which `case` this expectation is about", workload.name),
                    );
                    continue;
                }
            };
            if workload.is_check() {
                self.error(
                    spec.workload.span(),
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
                        spec.workload.span(),
                        format!("workload `{}` has several metrics; say which `metric` this expectation is about", workload.name),
                    );
                    continue;
                }
            };
            let Some(value) = self.expected_value(spec, sequence) else {
                continue;
            };
            let kernel = match (&spec.kernel, &value) {
                (Some(k), _) if !known.contains(&k.get_ref()) => {
                    self.unknown_kernel(k, known, "[[expect]] `kernel`");
                    continue;
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
                        continue;
                    }
                    k.get_ref().clone()
                }
                (Some(k), _) => k.get_ref().clone(),
                (None, Expected::Mean { point: Some(p), .. }) => point_kernel(sequence, p)
                    .expect("invariant: expected_value checked the point")
                    .clone(),
                (None, Expected::Mean { point: None, .. }) => {
                    self.error(
                        spec.workload.span(),
                        "an [[expect]] with `mean` names the `kernel` whose mean it expects, or its `point`",
                    );
                    continue;
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
                            spec.workload.span(),
                            "the recipe has several candidate kernels; say which `kernel` this expectation is about",
                        );
                        continue;
                    }
                    others[0].clone()
                }
            };
            let Some(baseline) = self.expect_baseline(spec, &value, &kernel, analysis, known)
            else {
                continue;
            };
            let Some(tolerance) = self.number(&spec.tolerance, "tolerance") else {
                continue;
            };
            if !(tolerance.is_finite() && tolerance >= 0.0) {
                let help = self.param_help(&format!("{:?}", spec.tolerance.get_ref()));
                self.error(
                    spec.tolerance.span(),
                    "`tolerance` must be a finite number ≥ 0",
                )
                .help
                .extend(help);
                continue;
            }
            out.push(Expect {
                workload: workload.name.clone(),
                case,
                metric,
                kernel,
                baseline,
                value,
                tolerance,
            });
        }
        out
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

    /// What `spec` expects: exactly one of `change_pct` and `mean`, a finite number; `point`
    /// only with `mean`, and one of the plan's points.
    fn expected_value(&mut self, spec: &ExpectSpec, sequence: &[KernelLabel]) -> Option<Expected> {
        if let (Some(point), None) = (&spec.point, &spec.mean) {
            self.error(
                point.span(),
                "[[expect]] `point` goes with `mean` (a point's absolute value); a change is the kernel's",
            );
            return None;
        }
        let (field, key) = match (&spec.change_pct, &spec.mean) {
            (Some(c), None) => (c, "change_pct"),
            (None, Some(m)) => (m, "mean"),
            (Some(_), Some(m)) => {
                self.error(
                    m.span(),
                    "[[expect]] has both `change_pct` and `mean`: one table expects one value",
                );
                return None;
            }
            (None, None) => {
                self.error(
                    spec.workload.span(),
                    "[[expect]] says what it expects: `change_pct` (the change against the baseline, %) or `mean` (an absolute value in the metric's unit)",
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
        if key == "change_pct" {
            return Some(Expected::ChangePct(n));
        }
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
        Some(Expected::Mean { value: n, point })
    }
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
        MINIMAL.replace(r#"sequence = ["a", "b", "a"]"#, r#"sequence = ["a", "b", "c", "a"]"#)
            + "[kernels.c]\nrelease = \"6.1.0-51-cloud-amd64\"\n"
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
        assert!(e.contains("names kernel `d`, which is not in [kernels]"), "{e}");
        let e = errors(&(comparison("c", "b") + "[[analysis.comparison]]\ncandidate = \"c\"\nbaseline = \"b\"\n"));
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
