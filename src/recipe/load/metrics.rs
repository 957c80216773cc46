//! `[[workload.metric]]` and check workloads (`check`, `expect_fail`).

use std::{collections::HashSet, ops::Range};

use toml::Spanned;

use crate::recipe::{
    ident::KernelLabel,
    limits,
    model::{MetricSpec, RecipeFile, Role, WorkloadSpec},
    resolved::{Check, Extract, Metric},
};

use super::Checker;

/// The keys of a table that say how a number is read: a metric's and a probe value's.
pub(super) struct Reading<'s> {
    pub json: Option<&'s Spanned<String>>,
    pub regex: Option<&'s Spanned<String>>,
    pub number: Option<&'s Spanned<bool>>,
    pub divide: Option<&'s Spanned<f64>>,
    pub multiply: Option<&'s Spanned<f64>>,
    pub unit: Option<&'s Spanned<String>>,
}

/// [`Reading`], checked.
pub(super) struct Read {
    pub extract: Extract,
    pub divide: f64,
    pub multiply: f64,
    pub unit: String,
}

impl Checker<'_> {
    pub(super) fn metrics(&mut self, spec: &WorkloadSpec) -> Vec<Metric> {
        let list = &spec.metric.get_ref().0;
        if list.is_empty() {
            let span = if spec.metric.span().is_empty() {
                spec.name.span()
            } else {
                spec.metric.span()
            };
            self.error(
                span,
                format!("workload `{}` declares no metric", spec.name.get_ref()),
            )
            .help
            .push(
                "add a `[[workload.metric]]`, or make it an untimed correctness check with `role = \"check\"`"
                    .to_owned(),
            );
        }
        if list.len() > limits::METRICS {
            self.error(
                spec.metric.span(),
                format!(
                    "workload `{}` declares {} metrics; at most {} are allowed",
                    spec.name.get_ref(),
                    list.len(),
                    limits::METRICS
                ),
            );
            return Vec::new();
        }
        let mut names = HashSet::new();
        let mut out = Vec::new();
        for m in list {
            let name = match (&m.name, list.len()) {
                (Some(n), _) => n.get_ref().clone(),
                (None, 1) => crate::recipe::ident::MetricName::new(spec.name.get_ref().as_str())
                    .expect("invariant: workload names satisfy the metric name rule"),
                (None, _) => {
                    self.error(
                        spec.metric.span(),
                        "a workload with several metrics must name each one (`name = …`)",
                    );
                    continue;
                }
            };
            if !names.insert(name.clone()) {
                let span = m.name.as_ref().map_or(spec.metric.span(), Spanned::span);
                self.error(span, format!("metric `{name}` is declared twice"));
            }
            if let Some(metric) = self.metric(spec, m, name) {
                out.push(metric);
            }
        }
        out
    }

    pub(super) fn metric(
        &mut self,
        spec: &WorkloadSpec,
        m: &MetricSpec,
        name: crate::recipe::ident::MetricName,
    ) -> Option<Metric> {
        let reading = Reading {
            json: m.json.as_ref(),
            regex: m.regex.as_ref(),
            number: m.number.as_ref(),
            divide: m.divide.as_ref(),
            multiply: m.multiply.as_ref(),
            unit: m.unit.as_ref(),
        };
        let anchor = m.name.as_ref().map_or(spec.metric.span(), Spanned::span);
        let read = self.reading(&reading, &format!("metric `{name}`"), anchor)?;
        Some(Metric {
            name,
            extract: read.extract,
            stream: m.stream,
            divide: read.divide,
            multiply: read.multiply,
            unit: read.unit,
            better: m.better,
            limits: self.overrides(
                m.gate_pct.as_ref(),
                m.max_drift_pct.as_ref(),
                m.max_cv_pct.as_ref(),
            ),
        })
    }

    /// How a number is read (`json`, `regex` or `number`, then `divide`, `multiply` and
    /// `unit`): the rules metrics and probe values share. `what` names the owner in errors
    /// (``metric `x` ``), `anchor` is where an error about the whole table points.
    pub(super) fn reading(
        &mut self,
        m: &Reading<'_>,
        what: &str,
        anchor: Range<usize>,
    ) -> Option<Read> {
        let number = m.number.filter(|n| *n.get_ref());
        let ways: Vec<(&str, Range<usize>)> = [
            m.json.map(|j| ("json", j.span())),
            m.regex.map(|r| ("regex", r.span())),
            number.map(|n| ("number", n.span())),
        ]
        .into_iter()
        .flatten()
        .collect();
        if ways.len() != 1 {
            let (message, anchor) = match ways.as_slice() {
                [] => (
                    format!("{what} does not say how to read its number"),
                    anchor,
                ),
                [first, rest @ ..] => {
                    let others: Vec<String> = rest.iter().map(|(k, _)| format!("`{k}`")).collect();
                    (
                        format!(
                            "{what} sets `{}` and {}: it can read its number only one way",
                            first.0,
                            others.join(" and ")
                        ),
                        rest[0].1.clone(),
                    )
                }
            };
            self.error(
                anchor,
                format!(
                    "{message}\nhelp: keep exactly one of `json = \"/pointer\"` (one JSON document), `regex = '…(\\d+)…'` (a capture group) or `number = true` (the whole output)"
                ),
            );
            return None;
        }
        let extract = if let Some(pointer) = m.json {
            if !(pointer.get_ref().is_empty() || pointer.get_ref().starts_with('/')) {
                self.error(
                    pointer.span(),
                    "a JSON pointer starts with `/` (e.g. \"/wall_ns\")",
                );
                return None;
            }
            Extract::Json(pointer.get_ref().clone())
        } else if let Some(pattern) = m.regex {
            let re = self.regex(pattern)?;
            if re.captures_len() < 2 {
                self.error(
                    pattern.span(),
                    "the regex has no capture group, so it does not say which part is the number\nhelp: put the number in a group, e.g. '(\\d+) ops/sec', or name it `(?P<value>…)` when the pattern needs other groups",
                );
                return None;
            }
            Extract::Regex(re)
        } else {
            Extract::Number
        };
        let factor = |this: &mut Self, v: Option<&Spanned<f64>>, key: &str| match v {
            None => Some(1.0),
            Some(x) if x.get_ref().is_finite() && *x.get_ref() != 0.0 => Some(*x.get_ref()),
            Some(x) => {
                this.error(
                    x.span(),
                    format!("`{key}` must be a finite, non-zero number"),
                );
                None
            }
        };
        let divide = factor(self, m.divide, "divide")?;
        let multiply = factor(self, m.multiply, "multiply")?;
        let unit = match m.unit {
            None => String::new(),
            Some(u) => self.free_text(u, "`unit`", limits::UNIT_CHARS, &[])?,
        };
        Some(Read {
            extract,
            divide,
            multiply,
            unit,
        })
    }

    /// A check workload is judged by its `[workload.check]` alone.
    pub(super) fn no_metric_for_a_check(&mut self, spec: &WorkloadSpec) {
        if !spec.metric.get_ref().0.is_empty() {
            self.error(
                spec.metric.span(),
                format!(
                    "workload `{}` is a check (`role = \"check\"`) and declares a metric",
                    spec.name.get_ref()
                ),
            )
            .help
            .push(
                "a check is pass/fail only; measure the number in a workload of its own".to_owned(),
            );
        }
        if spec.aux {
            self.error(
                spec.name.span(),
                format!(
                    "workload `{}` is a check (`role = \"check\"`) and `aux`; a check has no verdict to keep out of the summary",
                    spec.name.get_ref()
                ),
            );
        }
    }

    /// `expect_fail`: kernels of `[kernels]`, on a check workload only.
    pub(super) fn expect_fail(
        &mut self,
        file: &RecipeFile,
        spec: &WorkloadSpec,
    ) -> Vec<KernelLabel> {
        let labels = self.labels(&spec.check.expect_fail);
        if spec.role != Role::Check
            && let Some(first) = spec.check.expect_fail.first()
        {
            self.error(
                first.span(),
                format!(
                    "workload `{}` expects its check to fail, but only a check (`role = \"check\"`) may: a failed run of a timed workload has no value to analyse",
                    spec.name.get_ref()
                ),
            );
        }
        if let Some(first) = spec.check.expect_fail.first()
            && spec.check.must_match.is_empty()
            && spec.check.must_not_match.is_empty()
        {
            self.error(
                first.span(),
                format!(
                    "workload `{}` expects its check to fail but has no `must_match` or `must_not_match` to fail",
                    spec.name.get_ref()
                ),
            )
            .help
            .push("the exit status must be `exit` on every kernel (a crash proves nothing); say with a regex what the failing kernel prints, e.g. `must_match = ['mode: custom']`".to_owned());
        }
        let known: Vec<&KernelLabel> = file
            .kernels
            .get_ref()
            .keys()
            .map(Spanned::get_ref)
            .collect();
        let mut out = Vec::new();
        for label in labels {
            if known.contains(&label.get_ref()) {
                out.push(label.into_inner());
            } else {
                self.unknown_kernel(&label, &known, "`check.expect_fail`");
            }
        }
        out
    }

    pub(super) fn check(&mut self, file: &RecipeFile, workload: &WorkloadSpec) -> Check {
        let spec = &workload.check;
        Check {
            expect_fail: self.expect_fail(file, workload),
            exit: spec.exit.unwrap_or(0),
            must_match: spec
                .must_match
                .iter()
                .filter_map(|p| self.regex(p))
                .collect(),
            must_not_match: spec
                .must_not_match
                .iter()
                .filter_map(|p| self.regex(p))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::recipe::load::parse;
    use crate::recipe::load::testkit::{MINIMAL, errors};

    #[test]
    fn a_check_workload_has_no_metric_and_may_expect_to_fail_on_a_kernel() {
        let check = "[[workload]]\nname = \"mode\"\nrole = \"check\"\nrun = \"./mode\"\n\
                     [workload.check]\nmust_match = [\"mode: custom\"]\nexpect_fail = [\"a\"]\n";
        let r = parse(Path::new("r.toml"), &format!("{MINIMAL}{check}")).expect("valid");
        let w = &r.workloads[1];
        assert!(w.is_check() && w.metrics.is_empty());
        assert_eq!((w.samples, w.warmup, w.retries), (1, 0, 0));
        assert!(w.check.must_fail_on("a") && !w.check.must_fail_on("b"));
        let text = errors(&format!("{MINIMAL}{}", check.replace("[\"a\"]", "[\"c\"]")));
        assert!(
            text.contains("`check.expect_fail` names kernel `c`, which is not in [kernels]"),
            "{text}"
        );
        assert!(text.contains("r.toml:21:16"), "{text}");
        let text = errors(&format!(
            "{MINIMAL}{}",
            check.replace("must_match = [\"mode: custom\"]\n", "")
        ));
        assert!(
            text.contains("has no `must_match` or `must_not_match` to fail"),
            "{text}"
        );
        // A timed workload cannot expect to fail: its failed runs have no value.
        let text = errors(&format!(
            "{MINIMAL}[workload.check]\nexpect_fail = [\"a\"]\n"
        ));
        assert!(
            text.contains("only a check (`role = \"check\"`) may"),
            "{text}"
        );
        // A check declares no metric; a timed workload declares one.
        let text = errors(&format!(
            "{MINIMAL}{}",
            check.replace(
                "run = ",
                "metric = { number = true, better = \"lower\" }\nrun = "
            )
        ));
        assert!(
            text.contains("is a check (`role = \"check\"`) and declares a metric"),
            "{text}"
        );
        let text = errors(&format!(
            "{MINIMAL}{}",
            check.replace("role = \"check\"\n", "")
        ));
        assert!(
            text.contains("workload `mode` declares no metric"),
            "{text}"
        );
        assert!(text.contains("role = \"check\""), "{text}");
        assert!(text.contains("r.toml:16:8"), "{text}");
    }
}
