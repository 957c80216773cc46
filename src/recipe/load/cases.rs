//! `[[analysis.case_comparison]]`: pairs of timed cases with a metric in common.

use toml::Spanned;

use crate::recipe::{
    diagnostic::ticked,
    limits,
    model::RecipeFile,
    resolved::{CaseComparison, Workload},
};

use super::Checker;

impl Checker<'_> {
    /// `case` when `workload` has a case of that name; otherwise an error at it that lists
    /// the workload's cases (the first ten).
    pub(super) fn case_of(
        &mut self,
        workload: &Workload,
        case: &Spanned<String>,
    ) -> Option<String> {
        let count = usize::try_from(workload.case_count()).unwrap_or(usize::MAX);
        if (0..count).any(|i| &workload.case_at(i).name == case.get_ref()) {
            return Some(case.get_ref().clone());
        }
        let mut names: Vec<String> = (0..count.min(10))
            .map(|i| format!("`{}`", workload.case_at(i).name))
            .collect();
        if count > 10 {
            names.push(format!("… ({count} cases)"));
        }
        self.error(
            case.span(),
            format!(
                "workload `{}` has no case `{}`",
                workload.name,
                crate::text::quoted(case.get_ref())
            ),
        )
        .help
        .push(format!("cases: {}", names.join(", ")));
        None
    }

    /// The timed workload `name` names; otherwise an error at it (`field` says which key).
    pub(super) fn timed_workload<'w>(
        &mut self,
        workloads: &'w [Workload],
        name: &Spanned<crate::recipe::ident::WorkloadName>,
        field: &str,
    ) -> Option<&'w Workload> {
        let Some(workload) = workloads.iter().find(|w| &w.name == name.get_ref()) else {
            let names: Vec<&str> = workloads.iter().map(|w| w.name.as_str()).collect();
            let diag = self.error(
                name.span(),
                format!(
                    "{field} names workload `{}`, which the recipe does not declare",
                    name.get_ref()
                ),
            );
            diag.suggest(name.get_ref().as_str(), names.iter().copied(), ticked);
            diag.help.push(format!("workloads: {}", names.join(", ")));
            return None;
        };
        if workload.is_check() {
            self.error(
                name.span(),
                format!(
                    "{field} names workload `{}`, a check (`role = \"check\"`): it has no metric to compare",
                    workload.name
                ),
            );
            return None;
        }
        Some(workload)
    }

    /// `[[analysis.case_comparison]]`: both workloads exist and are timed, both cases exist,
    /// the two are not the same case, and they share at least one metric (same name, unit
    /// and `better`: a metric whose unit or direction differs compares nothing).
    pub(super) fn case_comparisons(
        &mut self,
        file: &RecipeFile,
        workloads: &[Workload],
    ) -> Vec<CaseComparison> {
        let specs = &file.analysis.case_comparison;
        if specs.len() > limits::CASE_COMPARISONS {
            self.error(
                specs[limits::CASE_COMPARISONS].workload.span(),
                format!(
                    "the recipe lists {} [[analysis.case_comparison]] tables; at most {} are allowed",
                    specs.len(),
                    limits::CASE_COMPARISONS
                ),
            );
            return Vec::new();
        }
        let mut out = Vec::new();
        for spec in specs {
            let field = "[[analysis.case_comparison]] `workload`";
            let Some(workload) = self.timed_workload(workloads, &spec.workload, field) else {
                continue;
            };
            let control_workload = match &spec.control_workload {
                Some(name) => {
                    let field = "[[analysis.case_comparison]] `control_workload`";
                    match self.timed_workload(workloads, name, field) {
                        Some(w) => w,
                        None => continue,
                    }
                }
                None => workload,
            };
            let treatment = self.case_of(workload, &spec.treatment);
            let control = self.case_of(control_workload, &spec.control);
            let (Some(treatment), Some(control)) = (treatment, control) else {
                continue;
            };
            if control_workload.name == workload.name && control == treatment {
                self.error(
                    spec.control.span(),
                    format!(
                        "`control` and `treatment` are the same case `{}` of workload `{}`: a case compared with itself shows nothing",
                        crate::text::quoted(&control),
                        workload.name
                    ),
                );
                continue;
            }
            let mut metrics = Vec::new();
            let mut mismatched = Vec::new();
            for metric in &workload.metrics {
                let Some(other) = control_workload
                    .metrics
                    .iter()
                    .find(|m| m.name == metric.name)
                else {
                    continue;
                };
                if other.unit == metric.unit && other.better == metric.better {
                    metrics.push(metric.name.clone());
                } else {
                    mismatched.push(format!(
                        "`{}` ({}, better = {:?} vs {}, better = {:?})",
                        metric.name, metric.unit, metric.better, other.unit, other.better
                    ));
                }
            }
            if metrics.is_empty() {
                let at = spec
                    .control_workload
                    .as_ref()
                    .map_or(spec.workload.span(), Spanned::span);
                let diag = self.error(
                    at,
                    format!(
                        "workloads `{}` and `{}` have no metric in common (same name, unit and `better`), so the case comparison compares nothing",
                        workload.name, control_workload.name
                    ),
                );
                if !mismatched.is_empty() {
                    diag.help.push(format!(
                        "unit or direction differs: {}",
                        mismatched.join(", ")
                    ));
                }
                continue;
            }
            out.push(CaseComparison {
                workload: workload.name.clone(),
                treatment,
                control_workload: control_workload.name.clone(),
                control,
                metrics,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::recipe::load::parse;
    use crate::recipe::load::testkit::{MINIMAL, errors};

    #[test]
    fn a_case_comparison_names_existing_timed_cases_with_a_metric_in_common() {
        let cases = "[[workload]]\nname = \"pipe\"\nrun = \"echo {level}\"\n\
                     matrix = { level = [\"root\", \"1\"] }\n\
                     metric = { number = true, unit = \"ns\", better = \"lower\" }\n";
        let with = |table: &str| format!("{MINIMAL}{cases}[[analysis.case_comparison]]\n{table}");
        let r = parse(
            Path::new("r.toml"),
            &with("workload = \"pipe\"\ncontrol = \"level=root\"\ntreatment = \"level=1\"\n"),
        )
        .expect("valid");
        let c = &r.analysis.case_comparisons[0];
        assert_eq!(
            (
                c.workload.as_str(),
                c.control_workload.as_str(),
                c.control.as_str(),
                c.treatment.as_str()
            ),
            ("pipe", "pipe", "level=root", "level=1")
        );
        assert_eq!(c.metrics.len(), 1);
        assert_eq!(c.metrics[0].as_str(), "pipe");
        // Across workloads: `w` (no matrix, case "") against `pipe`'s metric `pipe`: no
        // metric in common by name.
        let text = errors(&with(
            "workload = \"pipe\"\ncontrol_workload = \"w\"\ncontrol = \"\"\ntreatment = \"level=1\"\n",
        ));
        assert!(
            text.contains("r.toml:22:20")
                && text.contains("workloads `pipe` and `w` have no metric in common"),
            "{text}"
        );
        // An unknown case, at its position, with the cases listed.
        let text = errors(&with(
            "workload = \"pipe\"\ncontrol = \"level=2\"\ntreatment = \"level=1\"\n",
        ));
        assert!(
            text.contains("r.toml:22:11")
                && text.contains("workload `pipe` has no case `level=2`")
                && text.contains("cases: `level=root`, `level=1`"),
            "{text}"
        );
        // An unknown workload, with a suggestion.
        let text = errors(&with(
            "workload = \"pip\"\ncontrol = \"level=root\"\ntreatment = \"level=1\"\n",
        ));
        assert!(
            text.contains("r.toml:21:12")
                && text.contains("[[analysis.case_comparison]] `workload` names workload `pip`, which the recipe does not declare")
                && text.contains("`pipe`"),
            "{text}"
        );
        // A case against itself, and an unknown key.
        let text = errors(&with(
            "workload = \"pipe\"\ncontrol = \"level=1\"\ntreatment = \"level=1\"\n",
        ));
        assert!(
            text.contains("a case compared with itself shows nothing"),
            "{text}"
        );
        let text = errors(&with(
            "workload = \"pipe\"\ncontrol = \"level=1\"\ntreatmnt = \"level=1\"\n",
        ));
        assert!(text.contains("unknown field `treatmnt`"), "{text}");
    }
}
