//! Applying the recipe's sysctls and CPU frequency knobs after a boot, and reading every value
//! back: a setting that did not stick fails the point before any sample is taken.
//!
//! Every file is read before the first write, and the values found are handed to the caller
//! to journal (`tuning_saved`) before anything changes: where the target does not reboot
//! between points (the `local` target, `switch = "none"`), the campaign puts them back at the
//! end and on interruption, and `aba resume` or `aba restore DIR` after any crash.

use std::{path::Path, time::Duration};

use crate::{
    campaign::ledger::LedgerError,
    recipe::{
        Recipe,
        resolved::{Knob, Tuning},
    },
    results::journal::{Facts, Journal, JournalError, SavedValue},
    target::{
        quote::sh_quote,
        transport::{Transport, TransportError},
    },
};

const TIMEOUT: Duration = Duration::from_secs(60);

/// A value to put back: (file, previous content).
pub type Saved = Vec<(String, String)>;

/// What tuning did.
#[derive(Clone, Debug, Default)]
pub struct Tuned {
    /// Setting → value read back (sysctls by name, knobs by name).
    pub settings: Facts,
    /// Optional knobs this machine does not have.
    pub skipped: Vec<String>,
    /// Previous values, for restoring.
    pub saved: Saved,
}

/// Why tuning failed.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// The transport failed.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// A write was rejected or did not read back.
    #[error("{what}: {reason}")]
    Rejected {
        /// `sysctl kernel.x = 5`, `governor = performance`.
        what: String,
        /// The kernel's answer or the read-back mismatch.
        reason: String,
    },
    /// The values found could not be journaled, so nothing was changed.
    #[error("cannot journal the current values before changing them, so nothing was changed")]
    NotSaved(#[source] JournalError),
    /// The values found could not be recorded in aba's ledger on the target, so nothing was
    /// changed.
    #[error(
        "cannot record the current values in aba's ledger on the target before changing them, so nothing was changed"
    )]
    NotRecorded(#[source] LedgerError),
    /// A required knob does not exist on this machine.
    #[error("{knob} is required but this machine has no {files}")]
    Missing {
        /// Knob name.
        knob: String,
        /// Which files were looked for.
        files: String,
        /// What fixes it (shown as the campaign's hint).
        hint: String,
    },
}

/// Files of a per-CPU knob that exist, with their current values.
fn read_knob(
    transport: &mut dyn Transport,
    glob: &str,
) -> Result<Vec<(String, String)>, TuneError> {
    let out = transport.exec(
        &format!("for f in {glob}; do [ -e \"$f\" ] && printf '%s\\t%s\\n' \"$f\" \"$(cat \"$f\" 2>/dev/null)\"; done; true"),
        TIMEOUT,
    )?;
    Ok(out
        .stdout_text()
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(f, v)| (f.to_owned(), v.trim().to_owned()))
        .collect())
}

/// Writes `value` to every file and reads them back; returns the read-back values.
fn write_files(
    transport: &mut dyn Transport,
    files: &[String],
    value: &str,
    what: &str,
) -> Result<Vec<String>, TuneError> {
    let quoted: Vec<String> = files.iter().map(|f| sh_quote(f)).collect();
    let script = format!(
        "for f in {list}; do printf '%s\\n' {v} > \"$f\" || {{ echo \"write to $f rejected\" >&2; exit 1; }}; done; for f in {list}; do cat \"$f\"; done",
        list = quoted.join(" "),
        v = sh_quote(value),
    );
    let out = transport.exec(&script, TIMEOUT)?;
    if !out.outcome.success() {
        return Err(TuneError::Rejected {
            what: what.to_owned(),
            reason: format!("{} ({})", out.stderr_text().trim(), out.outcome),
        });
    }
    let back: Vec<String> = out.stdout_text().lines().map(normalize).collect();
    if back.len() != files.len() || back.iter().any(|b| *b != normalize(value)) {
        return Err(TuneError::Rejected {
            what: what.to_owned(),
            reason: format!("wrote `{value}` but read back `{}`", back.join(", ")),
        });
    }
    Ok(back)
}

/// Multi-value sysctls print tabs; compare on single spaces.
fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every CPU's governor (`[tuning] governor`).
const GOVERNOR_FILES: &str = "/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor";
/// Every CPU's energy-performance preference (`[tuning] epp`).
const EPP_FILES: &str = "/sys/devices/system/cpu/cpu[0-9]*/cpufreq/energy_performance_preference";
/// intel_pstate's turbo switch (1 = off).
const NO_TURBO_FILE: &str = "/sys/devices/system/cpu/intel_pstate/no_turbo";
/// cpufreq's turbo switch (0 = off).
const BOOST_FILE: &str = "/sys/devices/system/cpu/cpufreq/boost";

/// The CPU frequency files tuning writes, the only ones besides the recipe's sysctls that
/// may be put back: `[0-9]*` stands for a CPU number.
const KNOB_FILES: &[&str] = &[GOVERNOR_FILES, EPP_FILES, NO_TURBO_FILE, BOOST_FILE];

/// The longest value aba puts back: a sysctl's or a knob's content is a line.
const MAX_VALUE: usize = 4096;

/// Whether `path` may be written back with `value` for a campaign of `recipe`: a sysctl the
/// recipe sets (its file under /proc/sys) or one of the CPU frequency files tuning writes,
/// with a value of one line. Anything else is refused, whoever recorded it; the reason says
/// why.
pub fn check_restorable(path: &str, value: &str, recipe: &Recipe) -> Result<(), String> {
    let sysctl = recipe
        .sysctls
        .iter()
        .any(|(name, _)| name.proc_path() == path);
    let knob = KNOB_FILES
        .iter()
        .any(|pattern| match pattern.split_once("[0-9]*") {
            None => *pattern == path,
            Some((head, tail)) => path
                .strip_prefix(head)
                .and_then(|rest| rest.strip_suffix(tail))
                .is_some_and(|cpu| {
                    !cpu.is_empty() && cpu.len() <= 5 && cpu.bytes().all(|b| b.is_ascii_digit())
                }),
        });
    if !sysctl && !knob {
        return Err(
            "it is neither a sysctl the campaign's recipe sets nor a CPU frequency file aba tunes"
                .to_owned(),
        );
    }
    if value.len() > MAX_VALUE || value.chars().any(|c| c.is_control() && c != '\t') {
        return Err(format!(
            "its value is not one line of at most {MAX_VALUE} bytes"
        ));
    }
    Ok(())
}

struct KnobSpec<'a> {
    name: &'a str,
    globs: &'a [&'a str],
    value: String,
    required: bool,
    hint: &'a str,
}

/// One write tuning will make: what it is, the files, the value.
struct Write {
    what: String,
    setting: String,
    files: Vec<String>,
    value: String,
}

/// Finds the files of a knob (the first glob that matches), saving their current values.
fn find_knob(
    transport: &mut dyn Transport,
    spec: &KnobSpec<'_>,
    tuned: &mut Tuned,
    writes: &mut Vec<Write>,
) -> Result<(), TuneError> {
    let mut files = Vec::new();
    for glob in spec.globs {
        files = read_knob(transport, glob)?;
        if !files.is_empty() {
            break;
        }
    }
    if files.is_empty() {
        if spec.required {
            return Err(TuneError::Missing {
                knob: spec.name.to_owned(),
                files: spec.globs.join(" or "),
                hint: format!(
                    "{}; or list \"{}\" in [tuning] optional if this machine may lack it",
                    spec.hint, spec.name
                ),
            });
        }
        tuned.skipped.push(spec.name.to_owned());
        return Ok(());
    }
    let paths: Vec<String> = files.iter().map(|(f, _)| f.clone()).collect();
    tuned.saved.extend(files);
    writes.push(Write {
        what: format!("{} = {}", spec.name, spec.value),
        setting: spec.name.to_owned(),
        files: paths,
        value: spec.value.clone(),
    });
    Ok(())
}

/// Applies sysctls (in recipe order), then governor, EPP and turbo, and reads everything
/// back. Every file is read first; `before_write` gets the transport and the values found
/// (the machine's own, on its first tuning) before anything is written, so that they can be
/// recorded in the ledger and journaled: whatever happens to aba after that, they can be put
/// back. When `before_write` fails, nothing is written.
pub fn apply(
    transport: &mut dyn Transport,
    recipe: &Recipe,
    before_write: &mut dyn FnMut(&mut dyn Transport, &Saved) -> Result<(), TuneError>,
) -> Result<Tuned, TuneError> {
    let mut tuned = Tuned::default();
    let mut writes = Vec::new();
    for (name, value) in &recipe.sysctls {
        let path = name.proc_path();
        let current = read_knob(transport, &sh_quote(&path))?;
        let Some((_, old)) = current.into_iter().next() else {
            return Err(TuneError::Rejected {
                what: format!("sysctl {name} = {value}"),
                reason: format!("{path} does not exist on this kernel"),
            });
        };
        tuned.saved.push((path.clone(), old));
        writes.push(Write {
            what: format!("sysctl {name} = {value}"),
            setting: name.to_string(),
            files: vec![path],
            value: value.clone(),
        });
    }
    let turbo_file = find_tuning(transport, &recipe.tuning, &mut tuned, &mut writes)?;
    before_write(&mut *transport, &tuned.saved)?;
    for write in &writes {
        write_files(transport, &write.files, &write.value, &write.what)?;
        tuned
            .settings
            .insert(write.setting.clone(), write.value.clone());
    }
    if let Some(file) = turbo_file
        && let Some(v) = tuned.settings.remove("turbo")
    {
        tuned.settings.insert(format!("turbo ({file})"), v);
    }
    Ok(tuned)
}

/// Finds the knobs' files and values; returns the name of the turbo file when turbo is set.
fn find_tuning(
    transport: &mut dyn Transport,
    tuning: &Tuning,
    tuned: &mut Tuned,
    writes: &mut Vec<Write>,
) -> Result<Option<String>, TuneError> {
    let knob = |k: &Option<Knob<crate::recipe::ident::KnobValue>>| {
        k.as_ref().map(|k| (k.value.to_string(), k.required))
    };
    if let Some((value, required)) = knob(&tuning.governor) {
        find_knob(
            transport,
            &KnobSpec {
                name: "governor",
                globs: &[GOVERNOR_FILES],
                value,
                required,
                hint: "this machine has no cpufreq driver (VMs usually do not)",
            },
            tuned,
            writes,
        )?;
    }
    if let Some((value, required)) = knob(&tuning.epp) {
        find_knob(
            transport,
            &KnobSpec {
                name: "epp",
                globs: &[EPP_FILES],
                value,
                required,
                hint: "EPP needs intel_pstate or amd-pstate in active mode",
            },
            tuned,
            writes,
        )?;
    }
    let Some(turbo) = &tuning.turbo else {
        return Ok(None);
    };
    // intel_pstate says "no_turbo" (1 = off); cpufreq says "boost" (0 = off).
    let intel = read_knob(transport, NO_TURBO_FILE)?;
    let (glob, value) = if intel.is_empty() {
        (BOOST_FILE, if turbo.value { "1" } else { "0" })
    } else {
        (NO_TURBO_FILE, if turbo.value { "0" } else { "1" })
    };
    find_knob(
        transport,
        &KnobSpec {
            name: "turbo",
            globs: &[glob],
            value: value.to_owned(),
            required: turbo.required,
            hint: "neither intel_pstate/no_turbo nor cpufreq/boost exists",
        },
        tuned,
        writes,
    )?;
    Ok(Some(glob.rsplit('/').next().unwrap_or(glob).to_owned()))
}

/// The journal's form of saved values.
pub fn saved_values(saved: &Saved) -> Vec<SavedValue> {
    saved
        .iter()
        .map(|(path, value)| SavedValue {
            path: path.clone(),
            value: value.clone(),
        })
        .collect()
}

/// The values a campaign journaled on boot `boot_id` and has not put back yet.
pub fn pending_for(journal: &Path, boot_id: &str) -> Result<Option<Saved>, JournalError> {
    Ok(Journal::read_for_analysis(journal)?
        .state()
        .pending_restore
        .filter(|p| p.boot_id == boot_id)
        .map(|p| p.values))
}

/// Puts saved values back, last change first. Best effort: every file is tried.
pub fn restore(transport: &mut dyn Transport, saved: &Saved) -> Result<(), TuneError> {
    let mut failures = Vec::new();
    for (path, value) in saved.iter().rev() {
        let script = format!("printf '%s\\n' {} > {}", sh_quote(value), sh_quote(path));
        match transport.exec(&script, TIMEOUT) {
            Ok(out) if out.outcome.success() => {}
            Ok(out) => failures.push(format!("{path}: {}", out.stderr_text().trim())),
            Err(e) => failures.push(format!("{path}: {e}")),
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(TuneError::Rejected {
            what: "restoring previous settings".to_owned(),
            reason: failures.join("; "),
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::check_restorable;

    /// A recipe that sets one sysctl, `kernel.printk_ratelimit`.
    pub(crate) const SYSCTL_RECIPE: &str = r#"version = 1
name = "t"
description = "a sysctl"
sequence = ["a"]
warmup = 0
samples = 1
[kernels.a]
release = "running"
[sysctl]
"kernel.printk_ratelimit" = 5
[[workload]]
name = "w"
run = "echo 1"
metric = { number = true, better = "lower" }
"#;

    #[test]
    fn only_the_recipes_sysctls_and_the_knob_files_may_be_put_back() {
        let recipe = crate::recipe::load::parse(std::path::Path::new("r.toml"), SYSCTL_RECIPE)
            .expect("a valid recipe");
        for ok in [
            "/proc/sys/kernel/printk_ratelimit",
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            "/sys/devices/system/cpu/cpu127/cpufreq/energy_performance_preference",
            "/sys/devices/system/cpu/intel_pstate/no_turbo",
            "/sys/devices/system/cpu/cpufreq/boost",
        ] {
            assert_eq!(check_restorable(ok, "1", &recipe), Ok(()), "{ok}");
        }
        for bad in [
            "/proc/sys/kernel/core_pattern",
            "/etc/passwd",
            "/sys/devices/system/cpu/cpu/cpufreq/scaling_governor",
            "/sys/devices/system/cpu/cpu0/../../../../../etc/x/cpufreq/scaling_governor",
            "/sys/devices/system/cpu/cpu0x/cpufreq/scaling_governor",
            "/proc/sys/kernel/printk_ratelimit/",
        ] {
            assert!(check_restorable(bad, "1", &recipe).is_err(), "{bad}");
        }
        let path = "/proc/sys/kernel/printk_ratelimit";
        assert!(check_restorable(path, "4\t4\t1\t7", &recipe).is_ok());
        assert!(check_restorable(path, "1\n|/bin/sh", &recipe).is_err());
        assert!(check_restorable(path, &"1".repeat(5000), &recipe).is_err());
    }
}
