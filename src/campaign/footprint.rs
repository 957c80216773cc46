//! What a recipe does to the machine it runs on, as `aba check` lists it for a recipe received
//! from someone else: the host files it copies (resolved path, size, SHA-256), the commands it
//! runs (setup, every case's command after substitution, teardown) and the settings it
//! changes (kernel parameters, sysctls, CPU frequency knobs).
//!
//! Reads the `[files]` sources and nothing else; the cases are expanded one at a time and at
//! most [`limits::CASE_LINES`] of them, so a recipe of a million cases costs what forty do.

use std::{io::Read as _, path::PathBuf, time::Duration};

use sha2::{Digest as _, Sha256};

use crate::{
    campaign::workload_command::workload_command,
    recipe::{
        Recipe, limits,
        resolved::{FileCopy, Steps},
    },
    target::quote::sh_quote,
};

/// Everything the recipe copies, runs and changes.
#[derive(Clone, Debug)]
pub struct Footprint {
    /// `[files]`, in file order.
    pub copies: Vec<HostCopy>,
    /// `[setup]`.
    pub setup: StepCommands,
    /// The first [`limits::CASE_LINES`] cases of all workloads, in run order.
    pub cases: Vec<CaseCommand>,
    /// Cases in all (a point runs those of the workloads on its kernel).
    pub cases_total: u64,
    /// `[[probe]]`, in file order.
    pub probes: Vec<ProbeCommand>,
    /// `[teardown]`.
    pub teardown: StepCommands,
    /// `[boot] cmdline`: parameters every boot must carry.
    pub boot_cmdline: Vec<String>,
    /// Parameters of one kernel only, for the kernels that have some.
    pub kernel_cmdline: Vec<(String, Vec<String>)>,
    /// `[sysctl]`, in file order: name and the value written.
    pub sysctls: Vec<(String, String)>,
    /// `[tuning]`: the knobs set.
    pub tuning: Vec<KnobChange>,
}

/// One `[files]` entry.
#[derive(Clone, Debug)]
pub struct HostCopy {
    /// Its path under the target's work directory.
    pub to: String,
    /// The host file, resolved (symlinks followed, inside the recipe's folder or an allowed one).
    pub from: PathBuf,
    /// Its size and SHA-256, or why it could not be read now.
    pub content: Result<Digest, String>,
}

/// Size and SHA-256 of a host file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Digest {
    /// Bytes.
    pub bytes: u64,
    /// Hex SHA-256.
    pub sha256: String,
}

/// Setup or teardown commands and how the ETA counts them.
#[derive(Clone, Debug)]
pub struct StepCommands {
    /// The commands, in order, as written (steps have no placeholders).
    pub commands: Vec<String>,
    /// Deadline of each.
    pub timeout: Duration,
    /// What each counts in the ETA ([`Steps::per_command`]).
    pub counted: Duration,
}

/// One `[[probe]]`: what it runs, when and where.
#[derive(Clone, Debug)]
pub struct ProbeCommand {
    /// Its name.
    pub name: String,
    /// The command, parameters substituted.
    pub run: String,
    /// `before` or `after` the samples.
    pub when: &'static str,
    /// Its kernels (`b`, `a, b`); `None`: every point.
    pub kernels: Option<String>,
    /// Its deadline.
    pub timeout: Duration,
    /// The functions of its ftrace profile.
    pub ftrace: Vec<String>,
}

/// One case's command line, placeholders substituted.
#[derive(Clone, Debug)]
pub struct CaseCommand {
    /// `workload` or `workload[case]`.
    pub name: String,
    /// The `run` command with the case's values.
    pub run: String,
    /// The environment with the case's values.
    pub env: Vec<(String, String)>,
    /// CPUs it is pinned to (`taskset -c`).
    pub cpu: Option<String>,
    /// Warm-up runs per point.
    pub warmup: u32,
    /// Measured runs per point.
    pub samples: u32,
    /// An untimed correctness check (`role = "check"`): pass/fail, no samples analysed.
    pub check: bool,
    /// The workload's kernels (`b`, `a, b`); `None`: every point.
    pub kernels: Option<String>,
}

impl CaseCommand {
    /// As a shell reader sees it, and as it runs once aba has set the work directory and its
    /// own variables: the command text is [`workload_command`]'s, the one the engine executes
    /// (`NAME='v' exec taskset -c 2 sh -c 'run'` pinned; `export NAME='v'; run` unpinned, so
    /// that a compound command sees the variables as it does when it runs).
    #[must_use]
    pub fn command_line(&self) -> String {
        let command = workload_command(self.cpu.as_deref(), &self.run);
        if self.env.is_empty() {
            return command;
        }
        let assignments: Vec<String> = self
            .env
            .iter()
            .map(|(k, v)| format!("{k}={}", sh_quote(v)))
            .collect();
        match self.cpu {
            // Assignments before `exec` are in the environment of the program it runs.
            Some(_) => format!("{} {command}", assignments.join(" ")),
            None => format!("export {}; {command}", assignments.join(" ")),
        }
    }
}

/// A CPU frequency knob and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnobChange {
    /// `governor`, `epp` or `turbo`.
    pub knob: &'static str,
    /// The value written (`on` / `off` for turbo).
    pub value: String,
    /// False for a knob under `optional`: a machine without it runs anyway.
    pub required: bool,
}

impl Footprint {
    /// The footprint of `recipe`; reads each `[files]` source to hash it.
    #[must_use]
    pub fn of(recipe: &Recipe) -> Footprint {
        Footprint {
            copies: recipe.files.iter().map(copy_of).collect(),
            setup: StepCommands::of(&recipe.setup),
            cases: first_cases(recipe, limits::CASE_LINES),
            cases_total: recipe
                .workloads
                .iter()
                .fold(0u64, |n, w| n.saturating_add(w.case_count())),
            probes: recipe
                .probes
                .iter()
                .map(|p| ProbeCommand {
                    name: p.name.to_string(),
                    run: p.run.clone(),
                    when: p.when.as_str(),
                    kernels: (!p.kernels.is_empty()).then(|| {
                        p.kernels
                            .iter()
                            .map(|k| k.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }),
                    timeout: p.timeout,
                    ftrace: p.ftrace.clone(),
                })
                .collect(),
            teardown: StepCommands::of(&recipe.teardown),
            boot_cmdline: recipe.boot_cmdline.clone(),
            kernel_cmdline: recipe
                .kernels
                .values()
                .filter(|k| !k.cmdline.is_empty())
                .map(|k| (k.label.to_string(), k.cmdline.clone()))
                .collect(),
            sysctls: recipe
                .sysctls
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            tuning: knobs(recipe),
        }
    }
}

impl StepCommands {
    fn of(steps: &Steps) -> StepCommands {
        StepCommands {
            commands: steps.commands.clone(),
            timeout: steps.timeout,
            counted: steps.per_command(),
        }
    }
}

fn copy_of(file: &FileCopy) -> HostCopy {
    HostCopy {
        to: file.remote.to_string(),
        from: file.local.clone(),
        content: digest(file).map_err(|e| e.to_string()),
    }
}

/// SHA-256 and size of a `[files]` source, read in blocks.
fn digest(file: &FileCopy) -> Result<Digest, std::io::Error> {
    let mut f = crate::input::open_regular(&file.local)?;
    let mut hasher = Sha256::new();
    let mut block = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    loop {
        let n = f.read(&mut block)?;
        if n == 0 {
            return Ok(Digest {
                bytes,
                sha256: hex::encode(hasher.finalize()),
            });
        }
        bytes += n as u64;
        hasher.update(&block[..n]);
    }
}

/// The first `max` cases in run order, each expanded on its own.
fn first_cases(recipe: &Recipe, max: usize) -> Vec<CaseCommand> {
    let mut out = Vec::new();
    for workload in &recipe.workloads {
        let n = usize::try_from(workload.case_count()).unwrap_or(usize::MAX);
        for i in 0..n {
            if out.len() == max {
                return out;
            }
            let case = workload.case_at(i);
            out.push(CaseCommand {
                name: case.display_name(&workload.name),
                run: case.render(&workload.run),
                env: workload
                    .env
                    .iter()
                    .map(|(k, v)| (k.to_string(), case.render(v)))
                    .collect(),
                cpu: workload.cpu.as_ref().map(ToString::to_string),
                warmup: workload.warmup,
                samples: workload.samples,
                check: workload.is_check(),
                kernels: workload.kernels_shown(),
            });
        }
    }
    out
}

fn knobs(recipe: &Recipe) -> Vec<KnobChange> {
    recipe
        .tuning
        .values()
        .into_iter()
        .map(|(knob, k)| KnobChange {
            knob: knob.as_str(),
            value: k.value,
            required: k.required,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::{path::Path, time::Duration};

    use super::{Footprint, KnobChange};
    use crate::recipe::parse;

    const RECIPE: &str = r#"
version = 1
name = "t"
description = "d"
sequence = ["a"]
[kernels.a]
release = "running"
cmdline = "aba.a=1"
[boot]
cmdline = "quiet"
[sysctl]
"kernel.sched_rt_period_us" = 1000000
[tuning]
governor = "performance"
turbo = false
optional = ["turbo"]
[files]
"bench.c" = "bench.c"
[setup]
run = ["cc -o bench bench.c"]
timeout = "2m"
[teardown]
run = ["rm -f bench"]
[[workload]]
name = "pipe"
run = "./bench --level {level}"
env = { LEVEL = "{level} deep" }
cpu = "2"
matrix = { level = ["0", "1", "2"] }
metric = { number = true, better = "higher" }
"#;

    #[test]
    fn lists_copies_commands_and_changes_with_cases_substituted() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("bench.c"), "int main(){}\n").expect("write");
        let path = dir.path().join("r.toml");
        let recipe = parse(&path, RECIPE).expect("valid");
        let f = Footprint::of(&recipe);
        assert_eq!(f.copies.len(), 1);
        assert_eq!(f.copies[0].to, "bench.c");
        let digest = f.copies[0].content.as_ref().expect("readable");
        assert_eq!(digest.bytes, 13);
        assert_eq!(digest.sha256.len(), 64);
        assert_eq!(f.setup.commands, ["cc -o bench bench.c"]);
        assert_eq!(f.setup.counted, Duration::from_secs(12));
        assert_eq!(f.teardown.commands, ["rm -f bench"]);
        assert_eq!(f.cases_total, 3);
        assert_eq!(f.cases[1].name, "pipe[level=1]");
        assert_eq!(
            f.cases[1].command_line(),
            "LEVEL='1 deep' exec taskset -c 2 sh -c './bench --level 1'"
        );
        assert_eq!(f.boot_cmdline, ["quiet"]);
        assert_eq!(
            f.kernel_cmdline,
            [("a".to_owned(), vec!["aba.a=1".to_owned()])]
        );
        assert_eq!(
            f.sysctls,
            [("kernel.sched_rt_period_us".to_owned(), "1000000".to_owned())]
        );
        assert_eq!(
            f.tuning,
            [
                KnobChange {
                    knob: "governor",
                    value: "performance".to_owned(),
                    required: true
                },
                KnobChange {
                    knob: "turbo",
                    value: "off".to_owned(),
                    required: false
                }
            ]
        );
    }

    #[test]
    fn the_cases_listed_are_bounded() {
        let values: Vec<String> = (0..1000).map(|i| format!("\"{i}\"")).collect();
        let src = RECIPE
            .replace(
                r#"matrix = { level = ["0", "1", "2"] }"#,
                &format!("matrix = {{ level = [{}] }}", values.join(", ")),
            )
            .replace("[files]\n\"bench.c\" = \"bench.c\"\n", "");
        let recipe = parse(Path::new("r.toml"), &src).expect("valid");
        let f = Footprint::of(&recipe);
        assert_eq!(f.cases.len(), crate::recipe::limits::CASE_LINES);
        assert_eq!(f.cases_total, 1000);
        assert!(f.copies.is_empty());
    }
}
