//! What the machine looked like at a point (the environment record a maintainer asks for when
//! numbers look odd) and what went wrong during it (new kernel warnings, failed units).
//!
//! One script, one round trip: each fact is printed after an `@@name` marker line, so a
//! missing tool (no systemd, no `/proc/config.gz`) only leaves its fact empty.

use std::time::Duration;

use crate::{
    analysis::matched_build::{CONFIG_NORMALISED_FACT, TOOLCHAIN_FACT},
    build::kconfig::NORMALISE_SHELL,
    results::journal::Facts,
    target::transport::{Transport, TransportError},
};

const TIMEOUT: Duration = Duration::from_secs(60);

/// Lines in dmesg that mean the kernel complained.
pub const DMESG_WARNING_PATTERN: &str =
    "WARNING:|BUG:|Oops|Call Trace:|cut here|general protection fault|Kernel panic";

fn script(sysctls: &[String]) -> String {
    let mut s = String::from(
        "echo @@uname; uname -a\n\
         echo @@release; uname -r\n\
         echo @@cmdline; cat /proc/cmdline\n\
         echo @@version; cat /proc/version\n\
         echo @@boot_id; cat /proc/sys/kernel/random/boot_id\n\
         echo @@config_sha256; if [ -r /proc/config.gz ]; then zcat /proc/config.gz | sha256sum | cut -d' ' -f1; elif [ -r /boot/config-$(uname -r) ]; then sha256sum /boot/config-$(uname -r) | cut -d' ' -f1; fi\n\
         echo @@cpu_model; grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-\n\
         echo @@cpus_online; cat /sys/devices/system/cpu/online\n\
         echo @@governors; cat /sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor 2>/dev/null | sort | uniq -c | tr -s ' ' | tr '\\n' ';'\n\
         echo @@epp; cat /sys/devices/system/cpu/cpu[0-9]*/cpufreq/energy_performance_preference 2>/dev/null | sort | uniq -c | tr -s ' ' | tr '\\n' ';'\n\
         echo @@no_turbo; cat /sys/devices/system/cpu/intel_pstate/no_turbo 2>/dev/null\n\
         echo @@boost; cat /sys/devices/system/cpu/cpufreq/boost 2>/dev/null\n\
         echo @@clocksource; cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null\n\
         echo @@microcode; grep -m1 '^microcode' /proc/cpuinfo | cut -d: -f2- | tr -d ' '\n\
         echo @@smt; cat /sys/devices/system/cpu/smt/control 2>/dev/null\n\
         echo @@thp; cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null\n\
         echo @@mitigations; for f in /sys/devices/system/cpu/vulnerabilities/*; do [ -r \"$f\" ] && printf '%s: %s\\n' \"${f##*/}\" \"$(cat \"$f\")\"; done\n\
         echo @@cpufreq_driver; cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_driver 2>/dev/null\n\
         echo @@modules; if [ -r /proc/modules ]; then wc -l < /proc/modules | tr -d ' '; fi\n\
         echo @@uptime; cat /proc/uptime\n\
         echo @@loadavg; cat /proc/loadavg\n",
    );
    // The running kernel's config as matched builds compare it (`analysis::matched_build`):
    // normalised like a build's `.config`, and its toolchain lines.
    s.push_str(&format!(
        "aba_config() {{ if [ -r /proc/config.gz ]; then zcat /proc/config.gz; elif [ -r \"/boot/config-$(uname -r)\" ]; then cat \"/boot/config-$(uname -r)\"; else return 1; fi; }}\n\
         echo @@{normalised}; if aba_config >/dev/null 2>&1; then aba_config | {{ {NORMALISE_SHELL}; }} | sha256sum | cut -d' ' -f1; fi\n\
         echo @@{toolchain}; aba_config 2>/dev/null | grep -E '^CONFIG_(CC_VERSION_TEXT|LD_IS_BFD|LD_IS_LLD|LD_VERSION|LLD_VERSION)='\n",
        normalised = CONFIG_NORMALISED_FACT,
        toolchain = TOOLCHAIN_FACT,
    ));
    s.push_str(&format!(
        "echo @@dmesg_warnings; dmesg 2>/dev/null | grep -cE '{DMESG_WARNING_PATTERN}'\n"
    ));
    s.push_str(
        "echo @@failed_units; if [ -d /run/systemd/system ]; then systemctl --failed --plain --no-legend 2>/dev/null | awk '{print $1}' | tr '\\n' ' '; fi\n",
    );
    for name in sysctls {
        let path = format!("/proc/sys/{}", name.replace('.', "/"));
        s.push_str(&format!("echo @@sysctl.{name}; cat {path} 2>/dev/null\n"));
    }
    s.push_str("true\n");
    s
}

/// Reads the environment facts; `sysctls` are dotted names (already validated).
pub fn snapshot(
    transport: &mut dyn Transport,
    sysctls: &[String],
) -> Result<Facts, TransportError> {
    let out = transport.exec(&script(sysctls), TIMEOUT)?;
    Ok(parse(&out.stdout_text()))
}

fn parse(text: &str) -> Facts {
    let mut facts = Facts::new();
    let mut key: Option<String> = None;
    let mut value = String::new();
    let mut flush = |key: &mut Option<String>, value: &mut String| {
        if let Some(k) = key.take() {
            facts.insert(k, value.trim().to_owned());
        }
        value.clear();
    };
    for line in text.lines() {
        if let Some(k) = line.strip_prefix("@@") {
            flush(&mut key, &mut value);
            key = Some(k.to_owned());
        } else if key.is_some() {
            if !value.is_empty() {
                value.push('\n');
            }
            value.push_str(line);
        }
    }
    flush(&mut key, &mut value);
    facts
}

/// A count read from the target: a number, or what was printed instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Count {
    /// The number.
    Counted(u32),
    /// Not a number: what the command printed (empty when it printed nothing).
    Unreadable(String),
}

/// What the health check found, before the workloads and at the end of a point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Health {
    /// Kernel warning lines in dmesg now.
    pub dmesg_warnings: Count,
    /// The warning lines themselves, the newest [`WARNING_LINES`] of them, oldest first: what
    /// [`new_warning_lines`] compares to tell which lines are new.
    pub dmesg_lines: Vec<String>,
    /// Failed systemd units now.
    pub failed_units: Vec<String>,
}

/// How many of the newest warning lines the health check reads: enough that the lines a point
/// added are all among them unless it added more (then the count says how many).
pub const WARNING_LINES: usize = 200;

impl Health {
    /// The health of a boot before it logged anything: a point's fresh boot counts its kernel
    /// warnings from its first line (a WARNING logged while booting, settling, tuning or in
    /// setup, where a patched kernel most often warns, is the point's).
    #[must_use]
    pub fn fresh_boot() -> Health {
        Health {
            dmesg_warnings: Count::Counted(0),
            dmesg_lines: Vec::new(),
            failed_units: Vec::new(),
        }
    }
}

/// The warning lines of `after` that `before` did not hold, oldest first: each line of
/// `before` accounts for one equal line of `after` (dmesg lines carry their time, so equal
/// lines are the same line; one that left the ring buffer is simply not in `after`).
#[must_use]
pub fn new_warning_lines(before: &Health, after: &Health) -> Vec<String> {
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for line in &before.dmesg_lines {
        *seen.entry(line.as_str()).or_default() += 1;
    }
    after
        .dmesg_lines
        .iter()
        .filter(|line| match seen.get_mut(line.as_str()) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect()
}

/// The script of [`health`]: one marker line before each fact.
fn health_script() -> String {
    format!(
        "echo @@count; dmesg 2>/dev/null | grep -cE '{DMESG_WARNING_PATTERN}'\n\
         echo @@lines; dmesg 2>/dev/null | grep -E '{DMESG_WARNING_PATTERN}' | tail -n {WARNING_LINES}\n\
         echo @@units; if [ -d /run/systemd/system ]; then systemctl --failed --plain --no-legend 2>/dev/null | awk '{{print $1}}'; fi\n\
         true"
    )
}

/// Counts kernel warnings and failed units now.
pub fn health(transport: &mut dyn Transport) -> Result<Health, TransportError> {
    let out = transport.exec(&health_script(), TIMEOUT)?;
    Ok(parse_health(&out.stdout_text()))
}

fn parse_health(text: &str) -> Health {
    let facts = parse(text);
    let count = facts.get("count").map_or("", |c| c.trim());
    Health {
        dmesg_warnings: count
            .parse()
            .map_or_else(|_| Count::Unreadable(count.to_owned()), Count::Counted),
        dmesg_lines: facts
            .get("lines")
            .map(|t| t.lines().map(str::to_owned).collect())
            .unwrap_or_default(),
        failed_units: facts
            .get("units")
            .map(|t| t.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::{Count, Health, health, new_warning_lines, parse_health, snapshot};
    use crate::target::local::LocalTransport;

    /// The facts are this machine's, as the kernel itself gives them.
    #[test]
    fn snapshot_of_this_machine_reads_what_the_kernel_says() {
        let mut t = LocalTransport::new();
        let facts = snapshot(&mut t, &["kernel.ostype".to_owned()]).expect("runs");
        let read = |path: &str| std::fs::read_to_string(path).expect("readable");
        assert_eq!(facts["release"], read("/proc/sys/kernel/osrelease").trim());
        assert_eq!(
            facts["boot_id"],
            read("/proc/sys/kernel/random/boot_id").trim()
        );
        assert_eq!(facts["cmdline"], read("/proc/cmdline").trim());
        assert_eq!(facts["sysctl.kernel.ostype"], "Linux");
        assert_eq!(
            facts["cpus_online"],
            read("/sys/devices/system/cpu/online").trim()
        );
        // The fingerprint facts of issue 10 §5, as the kernel gives them.
        // A kernel without module support has no /proc/modules: the fact is then empty.
        let modules = std::fs::read_to_string("/proc/modules")
            .map(|m| m.lines().count().to_string())
            .unwrap_or_default();
        assert_eq!(facts["modules"], modules);
        let microcode = read("/proc/cpuinfo")
            .lines()
            .find(|l| l.starts_with("microcode"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_owned())
            .unwrap_or_default();
        assert_eq!(facts["microcode"], microcode);
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        assert_eq!(facts["thp"], thp.trim());
        if let Ok(entries) = std::fs::read_dir("/sys/devices/system/cpu/vulnerabilities") {
            assert_eq!(facts["mitigations"].lines().count(), entries.count());
        }
        // The running kernel's config, where this machine shows one, normalised as a
        // build's is.
        let shown = if std::path::Path::new("/proc/config.gz").exists() {
            std::process::Command::new("zcat")
                .arg("/proc/config.gz")
                .output()
                .ok()
                .map(|o| o.stdout)
        } else {
            std::fs::read(format!("/boot/config-{}", facts["release"])).ok()
        };
        match shown {
            Some(config) => {
                let config = String::from_utf8_lossy(&config);
                assert_eq!(
                    facts["config_normalised_sha256"],
                    crate::build::kconfig::normalised_sha256(&config)
                );
                if config.contains("CONFIG_CC_VERSION_TEXT=") {
                    assert!(
                        facts["toolchain"].contains("CONFIG_CC_VERSION_TEXT="),
                        "{facts:?}"
                    );
                }
            }
            None => assert_eq!(facts["config_normalised_sha256"], ""),
        }
        let h = health(&mut t).expect("runs");
        assert!(matches!(h.dmesg_warnings, Count::Counted(_)), "{h:?}");
    }

    /// The health check's output is read field by field; a count that is not a number is
    /// kept as printed, never taken for zero.
    #[test]
    fn health_reads_counts_lines_and_units_and_keeps_an_unreadable_count() {
        let h = parse_health(
            "@@count\n2\n@@lines\n[ 1.0] WARNING: a\n[ 2.0] BUG: b\n@@units\nx.service y.mount\n",
        );
        assert_eq!(h.dmesg_warnings, Count::Counted(2));
        assert_eq!(h.dmesg_lines, ["[ 1.0] WARNING: a", "[ 2.0] BUG: b"]);
        assert_eq!(h.failed_units, ["x.service", "y.mount"]);
        let garbled = parse_health("@@count\ngrep: not found\n@@lines\n@@units\n");
        assert_eq!(
            garbled.dmesg_warnings,
            Count::Unreadable("grep: not found".to_owned())
        );
        assert_eq!(
            parse_health("").dmesg_warnings,
            Count::Unreadable(String::new())
        );
    }

    /// The lines a point added are exactly the lines the second reading has beyond the
    /// first (issue 37, item 1): an old warning is not quoted again, a repeated line counts
    /// once per time it was logged, a line that left the ring buffer is no new line, and a
    /// fresh boot's own lines are all new.
    #[test]
    fn new_warning_lines_are_exactly_those_the_second_reading_adds() {
        let reading = |lines: &[&str]| Health {
            dmesg_warnings: Count::Counted(u32::try_from(lines.len()).expect("small")),
            dmesg_lines: lines.iter().map(|l| (*l).to_owned()).collect(),
            failed_units: Vec::new(),
        };
        let old = "[ 1.0] WARNING: at boot";
        let new = "[ 9.0] WARNING: in the run";
        assert_eq!(
            new_warning_lines(&reading(&[old]), &reading(&[old, new])),
            [new]
        );
        assert_eq!(
            new_warning_lines(&reading(&[old, old]), &reading(&[old, old, old])),
            [old]
        );
        assert_eq!(
            new_warning_lines(
                &reading(&[old, "[ 2.0] BUG: x"]),
                &reading(&["[ 2.0] BUG: x", new])
            ),
            [new]
        );
        assert_eq!(
            new_warning_lines(&Health::fresh_boot(), &reading(&[old, new])),
            [old, new]
        );
        assert!(new_warning_lines(&reading(&[old]), &reading(&[old])).is_empty());
    }
}
