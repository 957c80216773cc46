//! `[tuning]` and `[[workload]]`: commands, matrix, cases, limits.

use std::collections::HashSet;

use crate::recipe::{
    ident::{CpuList, check_matrix_value},
    limits,
    model::{RecipeFile, Role, TuningKnob, TuningSpec, WorkloadSpec},
    params,
    resolved::{Knob, Tuning, Workload},
};

use super::{
    Checker, DEFAULT_ESTIMATE, DEFAULT_MAX_OUTPUT, DEFAULT_RUN_TIMEOUT, DEFAULT_SAMPLES,
    DEFAULT_WARMUP,
};

impl Checker<'_> {
    pub(super) fn tuning(&mut self, spec: &TuningSpec) -> Tuning {
        let optional: Vec<TuningKnob> = spec.optional.iter().map(|k| *k.get_ref()).collect();
        let set = |knob: TuningKnob| match knob {
            TuningKnob::Governor => spec.governor.is_some(),
            TuningKnob::Epp => spec.epp.is_some(),
            TuningKnob::Turbo => spec.turbo.is_some(),
        };
        for knob in &spec.optional {
            if !set(*knob.get_ref()) {
                let name = knob.get_ref().as_str();
                self.error(
                    knob.span(),
                    format!(
                        "`optional` lists `{name}`, which [tuning] does not set\nhelp: set `{name}` in [tuning] or remove it from `optional`"
                    ),
                );
            }
        }
        let required = |knob| !optional.contains(&knob);
        Tuning {
            governor: spec.governor.clone().map(|value| Knob {
                value,
                required: required(TuningKnob::Governor),
            }),
            epp: spec.epp.clone().map(|value| Knob {
                value,
                required: required(TuningKnob::Epp),
            }),
            turbo: spec.turbo.map(|value| Knob {
                value,
                required: required(TuningKnob::Turbo),
            }),
        }
    }

    pub(super) fn workloads(&mut self, file: &RecipeFile) -> Vec<Workload> {
        let list = file.workloads.get_ref();
        if list.is_empty() {
            self.error(
                file.workloads.span(),
                "the recipe has no [[workload]]; add at least one",
            );
        }
        if list.len() > limits::WORKLOADS {
            self.error(
                list[limits::WORKLOADS].name.span(),
                format!(
                    "the recipe declares {} workloads; at most {} are allowed\nhelp: split the experiment into several recipes",
                    list.len(),
                    limits::WORKLOADS
                ),
            );
            return Vec::new();
        }
        let mut names = HashSet::new();
        let mut out = Vec::new();
        for spec in list {
            if !names.insert(spec.name.get_ref().clone()) {
                self.error(
                    spec.name.span(),
                    format!("workload `{}` is declared twice", spec.name.get_ref()),
                );
            }
            out.push(self.workload(file, spec));
        }
        out
    }

    pub(super) fn workload(&mut self, file: &RecipeFile, spec: &WorkloadSpec) -> Workload {
        let mut matrix = Vec::new();
        if spec.matrix.len() > limits::MATRIX_KEYS {
            self.error(
                spec.name.span(),
                format!(
                    "workload `{}` has {} matrix keys; at most {} are allowed",
                    spec.name.get_ref(),
                    spec.matrix.len(),
                    limits::MATRIX_KEYS
                ),
            );
        }
        for (key, values) in &spec.matrix {
            if values.get_ref().is_empty() {
                self.error(values.span(), format!("matrix `{key}` has no values"));
            }
            if values.get_ref().len() > limits::MATRIX_VALUES {
                self.error(
                    values.span(),
                    format!(
                        "matrix `{key}` lists {} values; at most {} are allowed",
                        values.get_ref().len(),
                        limits::MATRIX_VALUES
                    ),
                );
                continue;
            }
            let mut seen = HashSet::new();
            for value in values.get_ref() {
                if let Err(why) = check_matrix_value(value.get_ref()) {
                    self.error(value.span(), why);
                }
                if !seen.insert(value.get_ref().clone()) {
                    self.error(
                        value.span(),
                        format!("matrix `{key}` lists `{}` twice", value.get_ref()),
                    );
                }
            }
            matrix.push((
                key.clone(),
                values
                    .get_ref()
                    .iter()
                    .map(|v| v.get_ref().clone())
                    .collect(),
            ));
        }

        // Every template must only name matrix keys, and every key must be used somewhere,
        // or two cases would run the same command under different names.
        let keys: Vec<&str> = spec.matrix.keys().map(|k| k.as_str()).collect();
        let mut used = HashSet::new();
        // A key suggested for a misspelt placeholder is not reported as unused as well: the
        // typo is the one problem.
        let mut suggested = HashSet::new();
        let templates = std::iter::once(&spec.run).chain(spec.env.values());
        for template in templates {
            let probe = crate::placeholders::render_template(template.get_ref(), &mut |name| {
                keys.contains(&name).then(|| {
                    used.insert(name.to_owned());
                    String::new()
                })
            });
            if let Err(unknown) = probe {
                let diag = self.error(
                    template.span(),
                    format!("unknown placeholder `{{{unknown}}}`"),
                );
                if let Some(s) =
                    diag.suggest(&unknown, keys.iter().copied(), |s| format!("`{{{s}}}`"))
                {
                    suggested.insert(s.to_owned());
                }
                diag.help.push(if keys.is_empty() {
                    "this workload has no matrix; write `{{` and `}}` for literal braces".to_owned()
                } else {
                    format!(
                        "matrix keys: {}; write `{{{{` and `}}}}` for literal braces",
                        keys.join(", ")
                    )
                });
            }
        }
        for key in &keys {
            if !used.contains(*key) && !suggested.contains(*key) {
                self.error(
                    spec.run.span(),
                    format!("matrix key `{key}` is not used in `run` or `env`; its cases would all run the same command"),
                )
                .help
                .push(format!("write `{{{key}}}` where the value belongs"));
            }
        }

        let is_check = spec.role == Role::Check;
        let metrics = if is_check {
            self.no_metric_for_a_check(spec);
            Vec::new()
        } else {
            self.metrics(spec)
        };
        let check = self.check(file, spec);
        // A check proves a fact of the kernel once per boot unless its own table asks for
        // more; the top-level counts are sized for timings.
        let (samples, warmup) = if is_check {
            (
                spec.samples.map_or(1, |c| c.get()),
                spec.warmup.map_or(0, |c| c.get()),
            )
        } else {
            (
                spec.samples
                    .or(file.samples)
                    .map_or(DEFAULT_SAMPLES, |c| c.get()),
                spec.warmup
                    .or(file.warmup)
                    .map_or(DEFAULT_WARMUP, |c| c.get()),
            )
        };
        // Parameters are shell-quoted into `run` now, and put into `env` values as they are
        // (the runner quotes each whole `NAME=value`); matrix placeholders stay for each case
        // (a value has no braces, so it cannot become one).
        let run = self
            .expand(&spec.run, crate::target::quote::sh_quote)
            .unwrap_or_else(|| spec.run.get_ref().clone());
        let env = spec
            .env
            .iter()
            .map(|(k, v)| {
                let value = self.expand(v, params::verbatim);
                (k.clone(), value.unwrap_or_else(|| v.get_ref().clone()))
            })
            .collect();
        let cpu = spec.cpu.as_ref().and_then(|text| {
            let rendered = self.expand(text, params::verbatim)?;
            CpuList::new(&rendered)
                .map_err(|why| {
                    let help = self.param_help(text.get_ref());
                    self.error(text.span(), why).help.extend(help);
                })
                .ok()
        });
        let kernels = match &spec.kernels {
            None => Vec::new(),
            Some(list) => {
                self.kernel_subset(file, list, &format!("workload `{}`", spec.name.get_ref()))
            }
        };
        if !kernels.is_empty() {
            for label in &spec.check.expect_fail {
                if !kernels.iter().any(|k| k.as_str() == label.get_ref()) {
                    self.error(
                        label.span(),
                        format!(
                            "`check.expect_fail` names kernel `{}`, where workload `{}` does not run (its `kernels` leave it out)",
                            label.get_ref(),
                            spec.name.get_ref()
                        ),
                    );
                }
            }
        }
        Workload {
            name: spec.name.get_ref().clone(),
            run,
            env,
            cpu,
            timeout: spec.timeout.map_or(DEFAULT_RUN_TIMEOUT, |d| d.get()),
            estimate: spec.estimate.map_or(DEFAULT_ESTIMATE, |d| d.get()),
            max_output: spec.max_output.map_or(DEFAULT_MAX_OUTPUT, |s| s.0),
            warmup,
            samples,
            // A check that flips is a finding about the kernel, not noise to retry away.
            retries: spec.retries.map_or(u32::from(!is_check), |c| c.get()),
            kernels,
            role: spec.role,
            aux: spec.aux,
            matrix,
            metrics,
            check,
            limits: self.overrides(
                spec.gate_pct.as_ref(),
                spec.max_drift_pct.as_ref(),
                spec.max_cv_pct.as_ref(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::recipe::load::parse;
    use crate::recipe::load::testkit::{MINIMAL, errors};

    #[test]
    fn a_workload_and_its_metrics_may_set_their_own_limits() {
        let src = MINIMAL.replace(
            "metric = { number = true, unit = \"ns\", better = \"lower\" }",
            "max_cv_pct = 4.0\nmax_drift_pct = 3.0\n\
             metric = { number = true, unit = \"ticks\", better = \"lower\", max_cv_pct = 10.0, gate_pct = 20.0 }",
        );
        let r = parse(Path::new("r.toml"), &src).expect("valid");
        let w = &r.workloads[0];
        assert_eq!(w.limits.max_cv_pct, Some(4.0));
        assert_eq!(w.limits.max_drift_pct, Some(3.0));
        assert_eq!(w.limits.gate_pct, None);
        let l = crate::recipe::scoped_limits::SeriesLimits::of(&r.analysis, w, &w.metrics[0]);
        assert_eq!(
            (
                l.gate_pct.value,
                l.max_drift_pct.map(|d| d.value),
                l.max_cv_pct.value
            ),
            (20.0, Some(3.0), 10.0)
        );
        let text = errors(&src.replace("max_cv_pct = 10.0", "max_cv_pct = -1.0"));
        assert!(
            text.contains("`max_cv_pct` must be a finite number ≥ 0"),
            "{text}"
        );
        assert!(text.contains("r.toml:16:"), "{text}");
        let text = errors(&src.replace("max_drift_pct = 3.0", "max_drift_pct = nan"));
        assert!(
            text.contains("r.toml:15:17 (key `workload[1].max_drift_pct`)"),
            "{text}"
        );
    }

    #[test]
    fn placeholders_must_name_matrix_keys() {
        let src = MINIMAL.replace(
            "run = \"echo 1\"",
            "run = \"echo {levle}\"\nmatrix = { level = [\"1\", \"2\"] }",
        );
        let text = errors(&src);
        assert!(text.contains("unknown placeholder `{levle}`"), "{text}");
        assert!(text.contains("did you mean `{level}`?"), "{text}");
    }
}
