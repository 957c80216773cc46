//! The machine a campaign ran on, in one sentence of the mail (issue 29): the seed mails name
//! the CPU, its count and its frequency policy before any number, and env/ records them, yet
//! report.txt named none. Every fact is the first done point's record as the machine printed
//! it (untrusted: escaped and cut); a fact the record lacks is left out, never guessed. Facts
//! that differ between boots are the environment check's business, reported beside the
//! verdicts.

use std::fmt::Write as _;

use crate::{analysis::environment::EnvironmentCheck, campaign::load::cpu_count, text::untrusted};

/// Longest fact quoted (a CPU model string is about 50 characters).
const FACT_CHARS: usize = 80;

/// `Machine, as read back at point a#1: AMD EPYC 7B13; 2 CPUs online (0-1), SMT off; cpufreq
/// governor performance on 2 CPUs; turbo on.`; `None` without a record.
#[must_use]
pub fn machine_sentence(environment: &EnvironmentCheck) -> Option<String> {
    let first = environment.points.first()?;
    let fact = |name: &str| {
        first
            .facts
            .get(name)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
            .map(|v| untrusted(v, FACT_CHARS).into_owned())
    };
    let mut parts = Vec::new();
    if let Some(model) = fact("cpu_model") {
        parts.push(model);
    }
    let mut cpus = match fact("cpus_online") {
        Some(list) => match cpu_count(&list) {
            Some(1) => format!("1 CPU online ({list})"),
            Some(n) => format!("{n} CPUs online ({list})"),
            None => format!("CPUs online {list}"),
        },
        None => String::new(),
    };
    if let Some(smt) = fact("smt") {
        if !cpus.is_empty() {
            cpus.push_str(", ");
        }
        let _ = write!(cpus, "SMT {smt}");
    }
    if !cpus.is_empty() {
        parts.push(cpus);
    }
    parts.push(match fact("governors") {
        Some(governors) => governors_text(&governors),
        None => "no cpufreq governor readable".to_owned(),
    });
    match (fact("no_turbo").as_deref(), fact("boost").as_deref()) {
        (Some("1"), _) | (_, Some("0")) => parts.push("turbo off".to_owned()),
        (Some("0"), _) | (_, Some("1")) => parts.push("turbo on".to_owned()),
        _ => {}
    }
    Some(format!(
        "Machine, as read back at point {}: {}.",
        environment.point_name(&first.point),
        parts.join("; ")
    ))
}

/// `2 performance;` (uniq -c over the CPUs, as recorded) as `cpufreq governor performance on 2
/// CPUs`; a record in another shape is quoted as it is.
fn governors_text(recorded: &str) -> String {
    let entries: Option<Vec<(u32, &str)>> = recorded
        .split(';')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|e| {
            let (count, name) = e.split_once(' ')?;
            Some((count.parse().ok()?, name.trim()))
        })
        .collect();
    match entries.as_deref() {
        Some([(count, name)]) => {
            format!("cpufreq governor {name} on {count} CPU{}", plural(*count))
        }
        Some(several) if !several.is_empty() => {
            let each: Vec<String> = several
                .iter()
                .map(|(count, name)| format!("{name} on {count} CPU{}", plural(*count)))
                .collect();
            format!("cpufreq governors {}", each.join(", "))
        }
        _ => format!("cpufreq governors {recorded}"),
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::machine_sentence;
    use crate::analysis::environment::{EnvironmentCheck, PointEnv};

    fn check(facts: &[(&str, &str)]) -> EnvironmentCheck {
        EnvironmentCheck {
            points: vec![PointEnv {
                point: "a-a".to_owned(),
                kernel: "a".to_owned(),
                file: "env/a-a-1.json".to_owned(),
                facts: facts
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect::<BTreeMap<_, _>>(),
            }],
            ..EnvironmentCheck::default()
        }
    }

    #[test]
    fn the_machine_is_said_as_its_record_reads() {
        let said = machine_sentence(&check(&[
            ("cpu_model", " Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz"),
            ("cpus_online", "0-63"),
            ("smt", "on"),
            ("governors", "32 performance;32 powersave;"),
            ("no_turbo", "1"),
        ]));
        assert_eq!(
            said.as_deref(),
            Some(
                "Machine, as read back at point a#1: Intel(R) Xeon(R) Gold 6338 CPU @ \
                 2.00GHz; 64 CPUs online (0-63), SMT on; cpufreq governors performance on 32 \
                 CPUs, powersave on 32 CPUs; turbo off."
            )
        );
    }

    /// A VM without cpufreq says so; facts it lacks are left out; nothing is said without
    /// a record.
    #[test]
    fn what_the_record_lacks_is_not_guessed() {
        let said = machine_sentence(&check(&[
            ("cpu_model", "AMD EPYC"),
            ("cpus_online", "0"),
            ("smt", "notsupported"),
            ("governors", ""),
            ("boost", ""),
        ]));
        assert_eq!(
            said.as_deref(),
            Some(
                "Machine, as read back at point a#1: AMD EPYC; 1 CPU online (0), SMT \
                 notsupported; no cpufreq governor readable."
            )
        );
        assert_eq!(
            machine_sentence(&check(&[("governors", "1 performance;"), ("boost", "1")])).as_deref(),
            Some(
                "Machine, as read back at point a#1: cpufreq governor performance on 1 CPU; \
                 turbo on."
            )
        );
        assert_eq!(machine_sentence(&EnvironmentCheck::default()), None);
    }

    #[test]
    fn a_hostile_record_is_escaped_and_cut() {
        let long = "x".repeat(500);
        let said = machine_sentence(&check(&[("cpu_model", "evil\x1b[2Jcpu"), ("smt", &long)]))
            .expect("a sentence");
        assert!(!said.contains('\x1b'), "{said}");
        assert!(said.len() < 300, "{said}");
    }
}
