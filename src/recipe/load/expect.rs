//! `[[expect]]`: the changes a recipe predicts, checked against its workloads and kernels.

use std::collections::HashSet;

use crate::recipe::{
    diagnostic::ticked,
    ident::KernelLabel,
    limits,
    model::{ExpectSection, RecipeFile},
    resolved::{AnalysisSettings, Expect, Workload},
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
            let kernel = match &spec.kernel {
                Some(k) if known.contains(&k.get_ref()) => k.get_ref().clone(),
                Some(k) => {
                    self.unknown_kernel(k, known, "[[expect]] `kernel`");
                    continue;
                }
                None => {
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
            let change_pct = self.number(&spec.change_pct, "change_pct");
            let tolerance = self.number(&spec.tolerance, "tolerance");
            let (Some(change_pct), Some(tolerance)) = (change_pct, tolerance) else {
                continue;
            };
            if !change_pct.is_finite() {
                let help = self.param_help(&format!("{:?}", spec.change_pct.get_ref()));
                self.error(
                    spec.change_pct.span(),
                    "`change_pct` must be a finite number",
                )
                .help
                .extend(help);
                continue;
            }
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
                change_pct,
                tolerance,
            });
        }
        out
    }
}
