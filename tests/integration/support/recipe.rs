//! Recipes as data for the integration tests: a test says what it means (kernels, sequence,
//! workloads, warm-ups and samples, limits) and [`Recipe::toml`] writes the recipe text, every
//! string quoted as a TOML basic string, so a workload's shell text reaches the recipe byte
//! for byte. Tests that check what the loader says about a recipe's text (positions, error
//! messages) keep their TOML strings: there the text is the point.

use std::path::{Path, PathBuf};

/// Which way a metric is better.
#[derive(Clone, Copy, Debug)]
pub enum Better {
    /// Lower is better.
    Lower,
    /// Higher is better.
    Higher,
}

impl Better {
    fn word(self) -> &'static str {
        match self {
            Better::Lower => "lower",
            Better::Higher => "higher",
        }
    }
}

/// A workload's metric.
#[derive(Clone, Debug)]
pub enum Metric {
    /// `{ number = true, unit = …, better = … }`: the output is one number, in the unit if
    /// the recipe names one.
    Number(Option<&'static str>, Better),
    /// `[{ name = …, regex = …, unit = …, better = … }, …]`: numbers read by regexes.
    Regexes(Vec<Regex>),
}

/// One metric read by a regex.
#[derive(Clone, Debug)]
pub struct Regex {
    /// Its name.
    pub name: &'static str,
    /// The regex, whose first group is the number.
    pub regex: &'static str,
    /// Its unit.
    pub unit: &'static str,
    /// Which way is better.
    pub better: Better,
}

impl Metric {
    /// One number in `unit`, lower is better: most tests' metric.
    pub fn lower(unit: &'static str) -> Metric {
        Metric::Number(Some(unit), Better::Lower)
    }

    fn toml(&self) -> String {
        match self {
            Metric::Number(unit, better) => format!(
                "{{ number = true, {}better = \"{}\" }}",
                unit.map(|u| format!("unit = {}, ", quote(u)))
                    .unwrap_or_default(),
                better.word()
            ),
            Metric::Regexes(list) => {
                let items: Vec<String> = list
                    .iter()
                    .map(|m| {
                        format!(
                            "    {{ name = {}, regex = {}, unit = {}, better = \"{}\" }},\n",
                            quote(m.name),
                            quote(m.regex),
                            quote(m.unit),
                            m.better.word()
                        )
                    })
                    .collect();
                format!("[\n{}]", items.concat())
            }
        }
    }
}

/// A `[[workload]]`.
#[derive(Clone, Debug)]
pub struct Workload {
    name: String,
    run: String,
    matrix: Option<(&'static str, Vec<&'static str>)>,
    retries: Option<u32>,
    metric: Metric,
    kernels: Vec<&'static str>,
    /// `role = "check"` with this `must_match`: no metric.
    must_match: Option<&'static str>,
}

impl Workload {
    /// A workload `name` that runs `run` (shell text) and reads `metric`.
    pub fn new(name: &str, run: impl Into<String>, metric: Metric) -> Workload {
        Workload {
            name: name.to_owned(),
            run: run.into(),
            matrix: None,
            retries: None,
            metric,
            kernels: Vec::new(),
            must_match: None,
        }
    }

    /// A check (`role = "check"`) `name` that runs `run` and must print a match of
    /// `must_match`.
    pub fn check(name: &str, run: impl Into<String>, must_match: &'static str) -> Workload {
        Workload {
            must_match: Some(must_match),
            ..Workload::new(name, run, Metric::lower(""))
        }
    }

    /// `kernels = [...]`: the kernels whose points run it.
    pub fn kernels(mut self, kernels: &[&'static str]) -> Workload {
        self.kernels = kernels.to_vec();
        self
    }

    /// `retries`: how often a failed run is repeated.
    pub fn retries(mut self, n: u32) -> Workload {
        self.retries = Some(n);
        self
    }

    /// `matrix = { key = [values] }`: one case per value.
    pub fn matrix(mut self, key: &'static str, values: &[&'static str]) -> Workload {
        self.matrix = Some((key, values.to_vec()));
        self
    }

    fn toml(&self) -> String {
        let mut out = format!(
            "[[workload]]\nname = {}\nrun = {}\n",
            quote(&self.name),
            quote(&self.run)
        );
        if let Some((key, values)) = &self.matrix {
            let values: Vec<String> = values.iter().map(|v| quote(v)).collect();
            out.push_str(&format!("matrix = {{ {key} = [{}] }}\n", values.join(", ")));
        }
        if let Some(n) = self.retries {
            out.push_str(&format!("retries = {n}\n"));
        }
        if !self.kernels.is_empty() {
            out.push_str(&format!("kernels = {}\n", list(&self.kernels)));
        }
        match self.must_match {
            Some(pattern) => out.push_str(&format!(
                "role = \"check\"\ncheck = {{ must_match = [{}] }}\n",
                quote(pattern)
            )),
            None => out.push_str(&format!("metric = {}\n", self.metric.toml())),
        }
        out
    }
}

/// A `[[probe]]`: an untimed command whose output is kept.
#[derive(Clone, Debug)]
pub struct Probe {
    name: String,
    run: String,
    when: Option<&'static str>,
    kernels: Vec<&'static str>,
    max_output: Option<&'static str>,
    expect: Option<&'static str>,
    /// Name, regex, unit.
    values: Vec<(&'static str, &'static str, &'static str)>,
    ftrace: Vec<&'static str>,
}

impl Probe {
    /// A probe `name` that runs `run` (shell text) after the samples at every point.
    pub fn new(name: &str, run: impl Into<String>) -> Probe {
        Probe {
            name: name.to_owned(),
            run: run.into(),
            when: None,
            kernels: Vec::new(),
            max_output: None,
            expect: None,
            values: Vec::new(),
            ftrace: Vec::new(),
        }
    }

    /// `when = "before" | "after"`.
    pub fn when(mut self, when: &'static str) -> Probe {
        self.when = Some(when);
        self
    }

    /// `kernels = [...]`.
    pub fn kernels(mut self, kernels: &[&'static str]) -> Probe {
        self.kernels = kernels.to_vec();
        self
    }

    /// `max_output = "…"`.
    pub fn max_output(mut self, size: &'static str) -> Probe {
        self.max_output = Some(size);
        self
    }

    /// `expect = "success" | "failure"`.
    pub fn expect(mut self, expect: &'static str) -> Probe {
        self.expect = Some(expect);
        self
    }

    /// A `[[probe.value]]` read from stdout by `regex`, in `unit`.
    pub fn value(mut self, name: &'static str, regex: &'static str, unit: &'static str) -> Probe {
        self.values.push((name, regex, unit));
        self
    }

    /// `ftrace = { functions = [...] }`.
    pub fn ftrace(mut self, functions: &[&'static str]) -> Probe {
        self.ftrace = functions.to_vec();
        self
    }

    /// The `[[probe]]` table, to append to a recipe file.
    pub fn toml(&self) -> String {
        let mut out = format!(
            "[[probe]]\nname = {}\nrun = {}\n",
            quote(&self.name),
            quote(&self.run)
        );
        for (key, value) in [
            ("when", self.when),
            ("max_output", self.max_output),
            ("expect", self.expect),
        ] {
            if let Some(v) = value {
                out.push_str(&format!("{key} = {}\n", quote(v)));
            }
        }
        if !self.kernels.is_empty() {
            out.push_str(&format!("kernels = {}\n", list(&self.kernels)));
        }
        if !self.ftrace.is_empty() {
            out.push_str(&format!(
                "ftrace = {{ functions = {} }}\n",
                list(&self.ftrace)
            ));
        }
        for (name, regex, unit) in &self.values {
            out.push_str(&format!(
                "[[probe.value]]\nname = {}\nregex = {}\nunit = {}\n",
                quote(name),
                quote(regex),
                quote(unit)
            ));
        }
        out
    }
}

/// `["a", "b"]`.
fn list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| quote(s)).collect();
    format!("[{}]", quoted.join(", "))
}

/// A recipe, as data.
#[derive(Clone, Debug)]
pub struct Recipe {
    name: String,
    description: String,
    sequence: Vec<String>,
    warmup: Option<u32>,
    samples: Option<u32>,
    point_retries: Option<u32>,
    /// Label, release, kernel command line.
    kernels: Vec<(String, String, Option<String>)>,
    /// Name and integer value.
    sysctls: Vec<(String, i64)>,
    workloads: Vec<Workload>,
    probes: Vec<Probe>,
    /// `max_cv_pct` and `max_drift_pct`.
    limits: Option<(f64, f64)>,
    detect_pct: Option<f64>,
}

impl Recipe {
    /// A recipe `name` booting `sequence`, each label a kernel of the running release until
    /// [`Recipe::kernel`] says otherwise.
    pub fn new(name: &str, description: &str, sequence: &[&str]) -> Recipe {
        let mut kernels: Vec<(String, String, Option<String>)> = Vec::new();
        for label in sequence {
            if !kernels.iter().any(|(l, _, _)| l == label) {
                kernels.push(((*label).to_owned(), "running".to_owned(), None));
            }
        }
        Recipe {
            name: name.to_owned(),
            description: description.to_owned(),
            sequence: sequence.iter().map(|s| (*s).to_owned()).collect(),
            warmup: None,
            samples: None,
            point_retries: None,
            kernels,
            sysctls: Vec::new(),
            workloads: Vec::new(),
            probes: Vec::new(),
            limits: None,
            detect_pct: None,
        }
    }

    /// Kernel `label` is `release`, booted with `cmdline` if given.
    pub fn kernel(mut self, label: &str, release: &str, cmdline: Option<&str>) -> Recipe {
        let kernel = (
            label.to_owned(),
            release.to_owned(),
            cmdline.map(str::to_owned),
        );
        match self.kernels.iter_mut().find(|(l, _, _)| l == label) {
            Some(k) => *k = kernel,
            None => self.kernels.push(kernel),
        }
        self
    }

    /// `warmup` and `samples` per case per point.
    pub fn runs(mut self, warmup: u32, samples: u32) -> Recipe {
        self.warmup = Some(warmup);
        self.samples = Some(samples);
        self
    }

    /// `point_retries`.
    pub fn point_retries(mut self, n: u32) -> Recipe {
        self.point_retries = Some(n);
        self
    }

    /// `[sysctl] name = value`.
    pub fn sysctl(mut self, name: &str, value: i64) -> Recipe {
        self.sysctls.push((name.to_owned(), value));
        self
    }

    /// One more `[[workload]]`, run after the others.
    pub fn workload(mut self, workload: Workload) -> Recipe {
        self.workloads.push(workload);
        self
    }

    /// One more `[[probe]]`.
    pub fn probe(mut self, probe: Probe) -> Recipe {
        self.probes.push(probe);
        self
    }

    /// `[analysis]`'s limits: `max_cv_pct` and `max_drift_pct`.
    pub fn limits(mut self, cv_pct: f64, drift_pct: f64) -> Recipe {
        self.limits = Some((cv_pct, drift_pct));
        self
    }

    /// `[analysis] detect_pct` (with [`Recipe::limits`]).
    pub fn detect_pct(mut self, pct: f64) -> Recipe {
        self.detect_pct = Some(pct);
        self
    }

    /// The recipe text.
    pub fn toml(&self) -> String {
        let sequence: Vec<String> = self.sequence.iter().map(|s| quote(s)).collect();
        let mut out = format!(
            "version = 1\nname = {}\ndescription = {}\nsequence = [{}]\n",
            quote(&self.name),
            quote(&self.description),
            sequence.join(", ")
        );
        for (key, value) in [
            ("warmup", self.warmup),
            ("samples", self.samples),
            ("point_retries", self.point_retries),
        ] {
            if let Some(n) = value {
                out.push_str(&format!("{key} = {n}\n"));
            }
        }
        for (label, release, cmdline) in &self.kernels {
            out.push_str(&format!(
                "[kernels.{label}]\nrelease = {}\n",
                quote(release)
            ));
            if let Some(cmdline) = cmdline {
                out.push_str(&format!("cmdline = {}\n", quote(cmdline)));
            }
        }
        if !self.sysctls.is_empty() {
            out.push_str("[sysctl]\n");
            for (name, value) in &self.sysctls {
                out.push_str(&format!("{} = {value}\n", quote(name)));
            }
        }
        for workload in &self.workloads {
            out.push_str(&workload.toml());
        }
        for probe in &self.probes {
            out.push_str(&probe.toml());
        }
        if let Some((cv, drift)) = self.limits {
            out.push_str(&format!(
                "[analysis]\nmax_cv_pct = {cv:?}\nmax_drift_pct = {drift:?}\n"
            ));
            if let Some(detect) = self.detect_pct {
                out.push_str(&format!("detect_pct = {detect:?}\n"));
            }
        }
        out
    }

    /// Writes the recipe text to `dir/file` and returns its path.
    pub fn write(&self, dir: &Path, file: &str) -> PathBuf {
        crate::support::cli::write(dir, file, &self.toml())
    }
}

/// `text` as a TOML basic string.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
