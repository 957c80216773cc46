//! The whole file: each section checked in turn and assembled into a [`Recipe`]; the
//! `[setup]`/`[teardown]` steps; the size limits on points, cases and runs.

use std::time::Duration;

use toml::Spanned;

use crate::recipe::{
    ident::KernelLabel,
    limits,
    model::{RecipeFile, SysctlValue},
    resolved::{Recipe, Steps, Workload},
};

use super::{Checker, DEFAULT_STEP_TIMEOUT, RECIPE_VERSION};

impl Checker<'_> {
    pub(super) fn resolve(&mut self, file: RecipeFile) -> Recipe {
        if *file.version.get_ref() != RECIPE_VERSION {
            let help = if *file.version.get_ref() > RECIPE_VERSION {
                "the recipe was written for a newer aba; upgrade aba to run it"
            } else {
                "version 1 is the first recipe format; write `version = 1`"
            };
            self.error(
                file.version.span(),
                format!(
                    "unsupported recipe version {}; this aba reads version {RECIPE_VERSION}\nhelp: {help}",
                    file.version.get_ref(),
                ),
            );
        }

        self.params = self.params(&file);
        let kernels = self.kernels(&file);
        let known: Vec<&KernelLabel> = kernels.keys().collect();
        let sequence = self.sequence(&file, &known);
        self.description(&file.description);

        let files = self.files(&file);
        let tuning = self.tuning(&file.tuning);
        let workloads = self.workloads(&file);
        let probes = self.probes(&file);
        // Cases are expanded below only when their number is within the limits.
        let sized = self.size(&file, &workloads, sequence.len());
        let analysis = self.analysis(&file, &sequence, &known);
        let mut analysis = analysis;
        let expect = if sized {
            analysis.case_comparisons = self.case_comparisons(&file, &workloads);
            self.expect(&file, &workloads, &analysis, &sequence, &known)
        } else {
            Vec::new()
        };
        let reference = self.reference(&file);

        let boot_cmdline = self.cmdline(&file.boot.cmdline);
        let setup = self.steps(&file.setup.run);
        let teardown = self.steps(&file.teardown.run);
        self.unused_params(&file);
        Recipe {
            path: self.path.to_path_buf(),
            hashed_text: self.source.to_owned(),
            sha256: String::new(),
            name: file.name,
            description: file.description.into_inner(),
            sequence,
            kernels,
            boot_cmdline,
            settle: file.settle.map_or(Duration::ZERO, |d| d.get()),
            point_retries: file.point_retries.map_or(1, |c| c.get()),
            sysctls: file
                .sysctl
                .into_iter()
                .map(|(name, value)| {
                    let text = match value.into_inner() {
                        SysctlValue::Integer(i) => i.to_string(),
                        SysctlValue::Text(t) => t,
                    };
                    (name, text)
                })
                .collect(),
            tuning,
            files,
            setup: Steps {
                commands: setup,
                timeout: file.setup.timeout.map_or(DEFAULT_STEP_TIMEOUT, |d| d.get()),
            },
            teardown: Steps {
                commands: teardown,
                timeout: file
                    .teardown
                    .timeout
                    .map_or(DEFAULT_STEP_TIMEOUT, |d| d.get()),
            },
            workloads,
            probes,
            analysis,
            expect,
            reference,
            params: std::mem::take(&mut self.params),
        }
    }

    /// `[setup]` / `[teardown]` commands with their parameters in, shell-quoted.
    pub(super) fn steps(&mut self, commands: &[Spanned<String>]) -> Vec<String> {
        commands
            .iter()
            .map(|c| {
                self.expand(c, crate::target::quote::sh_quote)
                    .unwrap_or_else(|| c.get_ref().clone())
            })
            .collect()
    }

    /// Cases, runs, rows and plan size within [`limits`]; false when the cases are too many
    /// to expand.
    pub(super) fn size(
        &mut self,
        file: &RecipeFile,
        workloads: &[Workload],
        points: usize,
    ) -> bool {
        let points = points as u64;
        let mut cases = 0u64;
        let mut runs = 0u64;
        let mut rows = 0u64;
        let mut bytes = 0u64;
        let mut biggest: Option<(&Workload, u64)> = None;
        for w in workloads {
            let n = w.case_count();
            cases = cases.saturating_add(n);
            if biggest.is_none_or(|(_, b)| n > b) {
                biggest = Some((w, n));
            }
            let per_case = u64::from(w.warmup) + u64::from(w.samples);
            let r = n.saturating_mul(per_case).saturating_mul(points);
            runs = runs.saturating_add(r);
            rows = rows.saturating_add(r.saturating_mul(w.metrics.len() as u64));
            // What the plan keeps per case: the command, the environment and the name, each
            // with its values substituted (at most 128 characters per value).
            let keys = w.matrix.len() as u64;
            let per = (w.run.len()
                + w.env
                    .iter()
                    .map(|(k, v)| k.as_str().len() + v.len())
                    .sum::<usize>()) as u64
                + keys * (32 + 2 + 128) * (1 + w.env.len() as u64 + 1);
            bytes = bytes.saturating_add(n.saturating_mul(per));
        }
        let anchor = |file: &RecipeFile, w: Option<&Workload>| {
            w.and_then(|w| {
                file.workloads
                    .get_ref()
                    .iter()
                    .find(|s| s.name.get_ref() == &w.name)
                    .map(|s| s.name.span())
            })
            .unwrap_or_else(|| file.workloads.span())
        };
        if cases > limits::CASES {
            let (w, n) = biggest.expect("invariant: cases come from workloads");
            let span = anchor(file, Some(w));
            self.error(
                span,
                format!(
                    "the recipe has {cases} workload cases (workload `{}` alone has {n}); at most {} are allowed\nhelp: every case is measured at every point; measure fewer matrix values, or split the experiment into several recipes",
                    w.name,
                    limits::CASES
                ),
            );
            return false;
        }
        if runs > limits::RUNS || rows > limits::ROWS {
            self.error(
                file.sequence.span(),
                format!(
                    "the campaign would take {runs} workload runs ({rows} samples.csv rows: {points} points × {cases} cases × warm-ups + samples × metrics); at most {} runs and {} rows are allowed\nhelp: lower `samples`/`warmup`, the number of cases or of points",
                    limits::RUNS,
                    limits::ROWS
                ),
            );
        }
        if bytes > limits::PLAN_BYTES {
            self.error(
                anchor(file, biggest.map(|(w, _)| w)),
                format!(
                    "the plan would hold about {} of expanded commands ({cases} cases × `run` and `env`); at most {} are allowed\nhelp: move long commands into a script listed in [files]",
                    crate::text::bytes(bytes),
                    crate::text::bytes(limits::PLAN_BYTES)
                ),
            );
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::recipe::load::parse;
    use crate::recipe::load::testkit::MINIMAL;

    #[test]
    fn minimal_recipe_resolves_defaults() {
        let r = parse(Path::new("r.toml"), MINIMAL).expect("valid");
        assert_eq!(r.sequence.len(), 3);
        assert_eq!(r.analysis.baseline.as_str(), "a");
        let b = &r.kernels["b"];
        assert_eq!(b.image.as_str(), "/boot/vmlinuz-6.1.0-50-cloud-amd64");
        assert_eq!(b.initrd.as_str(), "/boot/initrd.img-6.1.0-50-cloud-amd64");
        assert_eq!(r.workloads[0].warmup, 3);
        assert_eq!(r.workloads[0].samples, 9);
        assert_eq!(r.workloads[0].metrics[0].name.as_str(), "w");
        assert_eq!(r.sha256.len(), 64);
    }
}
