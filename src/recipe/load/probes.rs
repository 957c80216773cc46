//! `[[probe]]`: untimed commands whose output is kept; their kernels, values and ftrace
//! functions.

use std::{collections::HashSet, time::Duration};

use toml::Spanned;

use crate::recipe::{
    ident::{KernelLabel, MetricName},
    limits,
    model::{ProbeSpec, RecipeFile},
    resolved::{Probe, ProbeValue},
};

use super::{Checker, metrics::Reading};

/// Default deadline of a probe.
const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(600);
/// What is kept of each output stream of a probe unless `max_output` says otherwise: a
/// probe's output is kept at every point, so the default is smaller than a workload's.
pub const DEFAULT_PROBE_OUTPUT: usize = 1 << 20;
/// Longest kernel function name an ftrace profile accepts (KSYM_NAME_LEN is 512).
const FUNCTION_CHARS: usize = 512;

impl Checker<'_> {
    pub(super) fn probes(&mut self, file: &RecipeFile) -> Vec<Probe> {
        if file.probes.len() > limits::PROBES {
            self.error(
                file.probes[limits::PROBES].name.span(),
                format!(
                    "the recipe declares {} probes; at most {} are allowed",
                    file.probes.len(),
                    limits::PROBES
                ),
            );
            return Vec::new();
        }
        let mut names = HashSet::new();
        let mut out = Vec::new();
        for spec in &file.probes {
            if !names.insert(spec.name.get_ref().clone()) {
                self.error(
                    spec.name.span(),
                    format!("probe `{}` is declared twice", spec.name.get_ref()),
                );
            }
            out.push(self.probe(file, spec));
        }
        out
    }

    fn probe(&mut self, file: &RecipeFile, spec: &ProbeSpec) -> Probe {
        let name = spec.name.get_ref();
        let kernels = match &spec.kernels {
            None => Vec::new(),
            Some(list) => self.kernel_subset(file, list, &format!("probe `{name}`")),
        };
        let ftrace = self.ftrace_functions(spec);
        let mut seen: HashSet<String> = ftrace.iter().cloned().collect();
        if spec.value.len() > limits::METRICS {
            self.error(
                spec.name.span(),
                format!(
                    "probe `{name}` declares {} values; at most {} are allowed",
                    spec.value.len(),
                    limits::METRICS
                ),
            );
        }
        let mut values = Vec::new();
        for v in spec.value.iter().take(limits::METRICS) {
            let value_name: &MetricName = v.name.get_ref();
            if !seen.insert(value_name.to_string()) {
                self.error(
                    v.name.span(),
                    format!("probe `{name}` has two values named `{value_name}` (an ftrace function is a value too)"),
                );
            }
            let reading = Reading {
                json: v.json.as_ref(),
                regex: v.regex.as_ref(),
                number: v.number.as_ref(),
                divide: v.divide.as_ref(),
                multiply: v.multiply.as_ref(),
                unit: v.unit.as_ref(),
            };
            let what = format!("value `{value_name}` of probe `{name}`");
            if let Some(read) = self.reading(&reading, &what, v.name.span()) {
                values.push(ProbeValue {
                    name: value_name.clone(),
                    extract: read.extract,
                    stream: v.stream,
                    divide: read.divide,
                    multiply: read.multiply,
                    unit: read.unit,
                });
            }
        }
        let run = self
            .expand(&spec.run, crate::target::quote::sh_quote)
            .unwrap_or_else(|| spec.run.get_ref().clone());
        Probe {
            name: name.clone(),
            run,
            kernels,
            when: spec.when,
            timeout: spec.timeout.map_or(DEFAULT_PROBE_TIMEOUT, |d| d.get()),
            max_output: spec.max_output.map_or(DEFAULT_PROBE_OUTPUT, |s| s.0),
            expect: spec.expect,
            values,
            ftrace,
        }
    }

    /// A `kernels = [...]` list of `owner`: valid labels of `[kernels]`, at least one, none
    /// twice.
    pub(super) fn kernel_subset(
        &mut self,
        file: &RecipeFile,
        list: &Spanned<Vec<Spanned<String>>>,
        owner: &str,
    ) -> Vec<KernelLabel> {
        if list.get_ref().is_empty() {
            self.error(
                list.span(),
                format!("{owner} lists no kernel in `kernels`\nhelp: name at least one kernel, or remove `kernels` to run it on every point"),
            );
            return Vec::new();
        }
        let known: Vec<&KernelLabel> = file
            .kernels
            .get_ref()
            .keys()
            .map(Spanned::get_ref)
            .collect();
        let mut out: Vec<KernelLabel> = Vec::new();
        for label in self.labels(list.get_ref()) {
            if !known.contains(&label.get_ref()) {
                self.unknown_kernel(&label, &known, &format!("`kernels` of {owner}"));
            } else if out.contains(label.get_ref()) {
                self.error(
                    label.span(),
                    format!("`kernels` of {owner} lists `{}` twice", label.get_ref()),
                );
            } else {
                out.push(label.into_inner());
            }
        }
        out
    }

    /// `ftrace = { functions = [...] }`: exact kernel function names, each once.
    fn ftrace_functions(&mut self, spec: &ProbeSpec) -> Vec<String> {
        let Some(ftrace) = &spec.ftrace else {
            return Vec::new();
        };
        let list = ftrace.functions.get_ref();
        if list.is_empty() {
            self.error(
                ftrace.functions.span(),
                format!(
                    "the ftrace profile of probe `{}` lists no function",
                    spec.name.get_ref()
                ),
            );
        }
        if list.len() > limits::FTRACE_FUNCTIONS {
            self.error(
                ftrace.functions.span(),
                format!(
                    "the ftrace profile lists {} functions; at most {} are allowed",
                    list.len(),
                    limits::FTRACE_FUNCTIONS
                ),
            );
            return Vec::new();
        }
        let mut out: Vec<String> = Vec::new();
        for f in list {
            let name = f.get_ref();
            let valid = !name.is_empty()
                && name.len() <= FUNCTION_CHARS
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'));
            if !valid {
                self.error(
                    f.span(),
                    format!("`{}` is not a kernel function name\nhelp: write the exact name as /proc/kallsyms lists it (letters, digits, `_` and `.`; no globs: each function is counted by name)", crate::text::untrusted(name, 80)),
                );
            } else if out.contains(name) {
                self.error(f.span(), format!("the ftrace profile lists `{name}` twice"));
            } else {
                out.push(name.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::recipe::{
        load::{
            parse,
            testkit::{MINIMAL, errors},
        },
        model::{ProbeExpect, ProbeWhen},
    };

    #[test]
    fn a_probe_reads_values_like_a_metric_and_may_profile_functions() {
        let probe = "[[probe]]\nname = \"stat\"\nrun = \"perf stat -e cycles -- true\"\n\
                     kernels = [\"b\"]\nwhen = \"before\"\ntimeout = \"30s\"\nexpect = \"failure\"\n\
                     ftrace = { functions = [\"rebuild_sched_domains\", \"__schedule\"] }\n\
                     [[probe.value]]\nname = \"cycles\"\nregex = '([0-9,]+) +cycles'\nstream = \"stderr\"\nunit = \"cycles\"\n";
        let r = parse(Path::new("r.toml"), &format!("{MINIMAL}{probe}")).expect("valid");
        let p = &r.probes[0];
        assert_eq!(p.name.as_str(), "stat");
        assert_eq!(
            (p.when, p.expect),
            (ProbeWhen::Before, ProbeExpect::Failure)
        );
        assert!(p.runs_on("b") && !p.runs_on("a"));
        assert_eq!(p.ftrace, ["rebuild_sched_domains", "__schedule"]);
        assert_eq!(p.values[0].unit, "cycles");
        assert_eq!(p.max_output, super::DEFAULT_PROBE_OUTPUT);

        let text = errors(&format!("{MINIMAL}{}", probe.replace("[\"b\"]", "[\"c\"]")));
        assert!(
            text.contains("`kernels` of probe `stat` names kernel `c`, which is not in [kernels]"),
            "{text}"
        );
        let text = errors(&format!("{MINIMAL}{}", probe.replace("[\"b\"]", "[]")));
        assert!(text.contains("probe `stat` lists no kernel"), "{text}");
        let text = errors(&format!(
            "{MINIMAL}{}",
            probe.replace("__schedule", "sched_*")
        ));
        assert!(
            text.contains("`sched_*` is not a kernel function name"),
            "{text}"
        );
        let text = errors(&format!(
            "{MINIMAL}{}",
            probe.replace("regex = '([0-9,]+) +cycles'\n", "")
        ));
        assert!(
            text.contains("value `cycles` of probe `stat` does not say how to read its number"),
            "{text}"
        );
        let text = errors(&format!(
            "{MINIMAL}{}",
            probe.replace("name = \"cycles\"", "name = \"__schedule\"")
        ));
        assert!(
            text.contains("is not a valid metric name") || text.contains("invalid metric name"),
            "{text}"
        );
        let text = errors(&format!("{MINIMAL}{probe}{probe}"));
        assert!(text.contains("probe `stat` is declared twice"), "{text}");
    }
}
