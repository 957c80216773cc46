//! `[analysis]` and its `extend`.

use crate::recipe::{
    ident::KernelLabel,
    limits,
    model::{ExtendSpec, ExtendUntil, RecipeFile},
    resolved::{AnalysisSettings, Extend, KernelComparison, Recovery},
};

use super::Checker;

impl Checker<'_> {
    pub(super) fn analysis(
        &mut self,
        file: &RecipeFile,
        sequence: &[KernelLabel],
        known: &[&KernelLabel],
    ) -> AnalysisSettings {
        let spec = &file.analysis;
        let baseline = match &spec.baseline {
            Some(label) => {
                if !known.contains(&label.get_ref()) {
                    self.unknown_kernel(label, known, "`analysis.baseline`");
                }
                label.get_ref().clone()
            }
            None => sequence
                .first()
                .cloned()
                .or_else(|| known.first().map(|k| (*k).clone()))
                .unwrap_or_else(|| KernelLabel::new("baseline").expect("invariant: valid label")),
        };
        let mut recovery = Vec::new();
        for rec in &spec.recovery {
            let gap = self.labels(rec.gap.get_ref());
            let path = self.labels(rec.path.get_ref());
            if gap.len() != rec.gap.get_ref().len() || path.len() != rec.path.get_ref().len() {
                continue;
            }
            for label in gap.iter().chain(path.iter()) {
                if !known.contains(&label.get_ref()) {
                    self.unknown_kernel(label, known, "`analysis.recovery`");
                }
            }
            if gap.len() != 2 {
                self.error(
                    rec.gap.span(),
                    "`gap` names exactly two kernels: [from, to]",
                );
                continue;
            }
            if path.len() < 2 || path[0].get_ref() != gap[0].get_ref() {
                self.error(
                    rec.path.span(),
                    format!(
                        "`path` lists at least two kernels and starts at `{}` (gap[0])",
                        gap[0].get_ref()
                    ),
                );
                continue;
            }
            recovery.push(Recovery {
                name: rec.name.clone(),
                gap: (gap[0].get_ref().clone(), gap[1].get_ref().clone()),
                path: path.iter().map(|p| p.get_ref().clone()).collect(),
            });
        }
        let comparisons = self.comparisons(file, sequence, known, &baseline);
        let extend = spec
            .extend
            .as_ref()
            .and_then(|e| self.extend(e, sequence, &baseline));
        AnalysisSettings {
            baseline,
            gate_pct: self.percent(spec.gate_pct.as_ref(), 5.0, "gate_pct"),
            drift_margin: self.percent(spec.drift_margin.as_ref(), 2.0, "drift_margin"),
            max_drift_pct: spec
                .max_drift_pct
                .as_ref()
                .map(|v| self.percent(Some(v), 1.0, "max_drift_pct")),
            max_cv_pct: self.percent(spec.max_cv_pct.as_ref(), 2.0, "max_cv_pct"),
            require_boot_ci: spec.require_boot_ci,
            detect_pct: spec.detect_pct.as_ref().and_then(|v| {
                if v.get_ref().is_finite() && *v.get_ref() > 0.0 {
                    Some(*v.get_ref())
                } else {
                    self.error(v.span(), "`detect_pct` must be a finite number > 0");
                    None
                }
            }),
            recovery,
            // Checked against the workloads once their cases are known (`case_comparisons`).
            case_comparisons: Vec::new(),
            comparisons,
            extend,
        }
    }

    /// `[[analysis.comparison]]`: two different kernels the sequence boots, neither pair
    /// already compared (every candidate is compared with the baseline without asking).
    fn comparisons(
        &mut self,
        file: &RecipeFile,
        sequence: &[KernelLabel],
        known: &[&KernelLabel],
        baseline: &KernelLabel,
    ) -> Vec<KernelComparison> {
        let specs = &file.analysis.comparison;
        let mut out: Vec<KernelComparison> = Vec::new();
        if specs.len() > limits::COMPARISONS {
            self.error(
                specs[limits::COMPARISONS].candidate.span(),
                format!(
                    "the recipe lists {} [[analysis.comparison]] tables; at most {} are allowed",
                    specs.len(),
                    limits::COMPARISONS
                ),
            );
            return out;
        }
        for spec in specs {
            let mut usable = true;
            for label in [&spec.candidate, &spec.baseline] {
                if !known.contains(&label.get_ref()) {
                    self.unknown_kernel(label, known, "`analysis.comparison`");
                    usable = false;
                } else if !sequence.contains(label.get_ref()) {
                    self.error(
                        label.span(),
                        format!(
                            "`analysis.comparison` names kernel `{}`, which `sequence` never boots: there would be nothing to compare",
                            label.get_ref()
                        ),
                    );
                    usable = false;
                }
            }
            if !usable {
                continue;
            }
            let (candidate, against) = (spec.candidate.get_ref(), spec.baseline.get_ref());
            if candidate == against {
                self.error(
                    spec.baseline.span(),
                    format!("`analysis.comparison` compares `{candidate}` with itself"),
                );
                continue;
            }
            if against == baseline {
                self.error(
                    spec.baseline.span(),
                    format!(
                        "`{candidate}` against `{baseline}` is compared already: every candidate is compared with the baseline (`analysis.baseline`)"
                    ),
                );
                continue;
            }
            let pair = KernelComparison {
                candidate: candidate.clone(),
                baseline: against.clone(),
            };
            if out.contains(&pair) {
                self.error(
                    spec.candidate.span(),
                    format!("`{candidate}` against `{against}` is declared twice"),
                );
                continue;
            }
            out.push(pair);
        }
        out
    }

    /// `[analysis] extend`: the unit is every candidate in order of first boot, then the
    /// baseline; `max_points` must leave room for one unit, or the key would do nothing.
    pub(super) fn extend(
        &mut self,
        spec: &ExtendSpec,
        sequence: &[KernelLabel],
        baseline: &KernelLabel,
    ) -> Option<Extend> {
        let ExtendUntil::Decided = spec.until;
        let mut unit: Vec<KernelLabel> = Vec::new();
        for k in sequence {
            if k != baseline && !unit.contains(k) {
                unit.push(k.clone());
            }
        }
        if unit.is_empty() {
            self.error(
                spec.max_points.span(),
                "`extend` needs a candidate kernel besides the baseline: there is nothing to decide",
            );
            return None;
        }
        unit.push(baseline.clone());
        let max = *spec.max_points.get_ref();
        let least = sequence.len() + unit.len();
        let names: Vec<&str> = unit.iter().map(KernelLabel::as_str).collect();
        match usize::try_from(max) {
            Ok(n) if n >= least && n <= limits::POINTS => Some(Extend {
                max_points: n,
                unit,
            }),
            _ => {
                self.error(
                    spec.max_points.span(),
                    format!(
                        "`max_points` must be an integer from {least} (the {} planned points and one appended unit {}) to {}, not {max}",
                        sequence.len(),
                        names.join("-"),
                        limits::POINTS
                    ),
                );
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::recipe::load::parse;
    use crate::recipe::load::testkit::{MINIMAL, errors};

    #[test]
    fn extend_resolves_its_unit_and_refuses_bad_values_by_field() {
        let src =
            format!("{MINIMAL}[analysis]\nextend = {{ until = \"decided\", max_points = 9 }}\n");
        let r = parse(Path::new("r.toml"), &src).expect("valid");
        let extend = r.analysis.extend.as_ref().expect("extends");
        assert_eq!(extend.max_points, 9);
        let unit: Vec<&str> = extend.unit.iter().map(|k| k.as_str()).collect();
        assert_eq!(unit, ["b", "a"]);
        assert_eq!(extend.boundary(3).points, [3, 5, 7, 9]);
        assert!(
            parse(Path::new("r.toml"), MINIMAL)
                .expect("valid")
                .analysis
                .extend
                .is_none()
        );

        let with = |value: &str| format!("{MINIMAL}[analysis]\nextend = {value}\n");
        // One unit must fit, or the key would do nothing.
        let e = errors(&with(r#"{ until = "decided", max_points = 4 }"#));
        assert!(
            e.contains("r.toml:16:44 (key `analysis.extend.max_points`)"),
            "{e}"
        );
        assert!(
            e.contains(
                "`max_points` must be an integer from 5 (the 3 planned points and one appended unit b-a) to 100, not 4"
            ),
            "{e}"
        );
        let e = errors(&with(r#"{ until = "decided", max_points = -3 }"#));
        assert!(e.contains("`max_points` must be an integer from 5"), "{e}");
        assert!(e.contains("not -3"), "{e}");
        let e = errors(&with(r#"{ until = "decided", max_points = 101 }"#));
        assert!(e.contains("to 100, not 101"), "{e}");
        let e = errors(&with(r#"{ until = "decided", max_points = "9" }"#));
        assert!(e.contains("max_points"), "{e}");
        let e = errors(&with(r#"{ until = "forever", max_points = 9 }"#));
        assert!(e.contains("unknown variant `forever`"), "{e}");
        assert!(e.contains("decided"), "{e}");
        let e = errors(&with(r#"{ max_points = 9 }"#));
        assert!(e.contains("missing field `until`"), "{e}");
        let e = errors(&with(r#"{ until = "decided", max_point = 9 }"#));
        assert!(e.contains("unknown field `max_point`"), "{e}");
        // A campaign of the baseline alone has nothing to decide.
        let null = MINIMAL.replace(r#"sequence = ["a", "b", "a"]"#, r#"sequence = ["a", "a"]"#);
        let e = errors(&format!(
            "{null}[analysis]\nextend = {{ until = \"decided\", max_points = 9 }}\n"
        ));
        assert!(e.contains("`extend` needs a candidate kernel"), "{e}");
    }
}
