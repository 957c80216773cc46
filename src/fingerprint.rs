//! The environment fingerprint: the facts of a point's environment record (`env/…json`) that
//! move benchmark results besides the kernel itself, which ones a recipe's per-kernel command
//! line may change on purpose, and how two sets of points are compared on them (issue 10 §5).
//!
//! Pure: it reads records that were already written and never talks to a target. The
//! environment script (`campaign::environment`) prints these facts under these names; the
//! analysis compares them between the points of a campaign, and a noise profile must match
//! them. What identifies the kernel itself (release, version, config, command line) is not a
//! fingerprint fact: it is proven at every boot and differs between kernels by design.

use std::collections::BTreeMap;

use crate::results::journal::Facts;

/// One fact of the fingerprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FactSpec {
    /// Its name in the environment record (`microcode`).
    pub name: &'static str,
    /// In words, for messages (`microcode revision`).
    pub what: &'static str,
    /// Kernel parameters that change it: a recipe that gives one kernel such a parameter and
    /// not the other explains a difference of this fact between the two kernels.
    pub set_by: &'static [&'static str],
}

/// Parameters that select CPU vulnerability mitigations (Documentation/admin-guide/
/// kernel-parameters.txt); `mitigations=auto,nosmt` and `nosmt` also turn SMT off.
const MITIGATION_PARAMS: &[&str] = &[
    "mitigations",
    "nosmt",
    "pti",
    "nopti",
    "kpti",
    "spectre_v2",
    "spectre_v2_user",
    "spectre_bhi",
    "nospectre_v1",
    "nospectre_v2",
    "spec_store_bypass_disable",
    "nospec_store_bypass_disable",
    "ssbd",
    "l1tf",
    "l1d_flush",
    "mds",
    "tsx",
    "tsx_async_abort",
    "mmio_stale_data",
    "retbleed",
    "srbds",
    "gather_data_sampling",
    "reg_file_data_sampling",
    "spec_rstack_overflow",
    "indirect_target_selection",
];

/// The facts compared between points and held by a noise profile, in report order.
pub const FACTS: &[FactSpec] = &[
    FactSpec {
        name: "cpu_model",
        what: "CPU model",
        set_by: &[],
    },
    FactSpec {
        name: "microcode",
        what: "microcode revision",
        set_by: &["dis_ucode_ldr"],
    },
    FactSpec {
        name: "smt",
        what: "SMT",
        set_by: &["nosmt", "mitigations"],
    },
    FactSpec {
        name: "cpus_online",
        what: "CPUs online",
        set_by: &[
            "maxcpus",
            "nr_cpus",
            "possible_cpus",
            "nosmt",
            "mitigations",
        ],
    },
    FactSpec {
        name: "thp",
        what: "transparent hugepages",
        set_by: &["transparent_hugepage"],
    },
    FactSpec {
        name: "mitigations",
        what: "CPU vulnerability mitigations",
        set_by: MITIGATION_PARAMS,
    },
    FactSpec {
        name: "cpufreq_driver",
        what: "cpufreq driver",
        set_by: &["intel_pstate", "amd_pstate", "cpufreq.off"],
    },
    FactSpec {
        name: "governors",
        what: "cpufreq governors",
        set_by: &["cpufreq.default_governor", "intel_pstate", "amd_pstate"],
    },
    FactSpec {
        name: "epp",
        what: "energy-performance preference",
        set_by: &["intel_pstate", "amd_pstate"],
    },
    FactSpec {
        name: "no_turbo",
        what: "intel_pstate no_turbo",
        set_by: &["intel_pstate"],
    },
    FactSpec {
        name: "boost",
        what: "cpufreq boost",
        set_by: &["intel_pstate", "amd_pstate"],
    },
    FactSpec {
        name: "clocksource",
        what: "clocksource",
        set_by: &["clocksource", "tsc", "notsc", "hpet", "nohpet"],
    },
    FactSpec {
        name: "modules",
        what: "loaded modules",
        set_by: &[
            "module_blacklist",
            "modprobe.blacklist",
            "initcall_blacklist",
        ],
    },
];

/// The spec of a fingerprint fact; sysctls read back (`sysctl.<name>`) are facts too, which
/// no kernel parameter explains.
#[must_use]
pub fn spec(name: &str) -> Option<FactSpec> {
    FACTS.iter().copied().find(|f| f.name == name)
}

/// `microcode revision`, `sysctl kernel.sched_rt_runtime_us`.
#[must_use]
pub fn describe(name: &str) -> String {
    match (spec(name), name.strip_prefix("sysctl.")) {
        (Some(f), _) => f.what.to_owned(),
        (None, Some(sysctl)) => format!("sysctl {sysctl}"),
        (None, None) => name.to_owned(),
    }
}

/// Whether `name` is a fact the fingerprint compares.
#[must_use]
pub fn is_fact(name: &str) -> bool {
    spec(name).is_some() || name.starts_with("sysctl.")
}

/// The fingerprint facts of one environment record, by name (facts the record lacks, as an
/// older aba's do, are absent: they are not compared).
#[must_use]
pub fn of_record(record: &Facts) -> BTreeMap<String, String> {
    record
        .iter()
        .filter(|(k, _)| is_fact(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// A kernel parameter's name: `mitigations` of `mitigations=off`.
fn param_name(param: &str) -> &str {
    param.split_once('=').map_or(param, |(name, _)| name)
}

/// Whether the two kernels' own parameters differ in one that sets `fact`: then a difference
/// of the fact between them is the recipe's doing, not the machine's.
#[must_use]
pub fn explained(fact: &str, own_a: &[String], own_b: &[String]) -> bool {
    let Some(spec) = spec(fact) else {
        return false;
    };
    let sets = |p: &String| spec.set_by.contains(&param_name(p));
    own_a.iter().filter(|p| sets(p)).any(|p| !own_b.contains(p))
        || own_b.iter().filter(|p| sets(p)).any(|p| !own_a.contains(p))
}

/// One point's fingerprint, for a comparison.
#[derive(Clone, Copy, Debug)]
pub struct PointFacts<'a> {
    /// Point label.
    pub point: &'a str,
    /// Its kernel.
    pub kernel: &'a str,
    /// The kernel's own parameters in the recipe (`[kernels.X] cmdline`).
    pub own_params: &'a [String],
    /// Its environment record.
    pub facts: &'a Facts,
}

/// Which points a difference is between.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "between", rename_all = "snake_case")]
pub enum Scope {
    /// Boots of one kernel.
    Boots {
        /// The kernel.
        kernel: String,
    },
    /// Two kernels, and no parameter the recipe gives one of them explains it.
    Kernels {
        /// The first kernel (in boot order).
        first: String,
        /// The other.
        second: String,
    },
}

/// A fingerprint fact that is not the same at every point it should be.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Difference {
    /// The fact's name (`microcode`).
    pub fact: String,
    /// Between which points.
    pub scope: Scope,
    /// Each distinct value with the points that had it, in boot order of first appearance.
    pub values: Vec<(String, Vec<String>)>,
}

impl Difference {
    /// The kernels it involves.
    #[must_use]
    pub fn kernels(&self) -> Vec<&str> {
        match &self.scope {
            Scope::Boots { kernel } => vec![kernel.as_str()],
            Scope::Kernels { first, second } => vec![first.as_str(), second.as_str()],
        }
    }

    /// `microcode revision differs between the boots of a: 0xb4 at a-a; 0xb6 at a-b`.
    #[must_use]
    pub fn text(&self) -> String {
        self.text_named(&|point| point.to_owned())
    }

    /// [`Difference::text`] with each point shown as `name` shows it: `… 0xb4 at a#1; 0xb6
    /// at a#2` with [`crate::point_name::point_name`], for a reader.
    #[must_use]
    pub fn text_named(&self, name: &dyn Fn(&str) -> String) -> String {
        let whom = match &self.scope {
            Scope::Boots { kernel } => format!("between the boots of {kernel}"),
            Scope::Kernels { first, second } => format!("between {first} and {second}"),
        };
        let values: Vec<String> = self
            .values
            .iter()
            .map(|(value, points)| {
                let shown = if value.is_empty() {
                    "(none)".to_owned()
                } else {
                    crate::text::cut(&crate::text::one_line(value), 120).into_owned()
                };
                let points: Vec<String> = points.iter().map(|p| name(p)).collect();
                format!("{shown} at {}", points.join(", "))
            })
            .collect();
        format!(
            "{} differs {whom}: {}",
            describe(&self.fact),
            values.join("; ")
        )
    }
}

/// Whether two kernels' values of `fact` agree. For the mitigations, only the vulnerabilities
/// both kernels report are compared: a newer kernel that knows one more (`vmscape: Not
/// affected`) is the kernel itself, not its environment.
fn agree_between(fact: &str, a: &str, b: &str) -> bool {
    if fact != "mitigations" {
        return a == b;
    }
    let entries = |text: &str| -> BTreeMap<String, String> {
        text.lines()
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
            .collect()
    };
    let (a, b) = (entries(a), entries(b));
    a.iter().all(|(k, v)| b.get(k).is_none_or(|w| w == v))
}

/// Groups `points` by the value of `fact`: each distinct value with its points, in order.
fn grouped(points: &[&PointFacts<'_>], fact: &str) -> Vec<(String, Vec<String>)> {
    let mut values: Vec<(String, Vec<String>)> = Vec::new();
    for p in points {
        let value = p.facts.get(fact).cloned().unwrap_or_default();
        match values.iter_mut().find(|(v, _)| *v == value) {
            Some((_, at)) => at.push(p.point.to_owned()),
            None => values.push((value, vec![p.point.to_owned()])),
        }
    }
    values
}

/// Every difference among `points` (in boot order): a fact that differs between boots of one
/// kernel, or between two kernels when no per-kernel parameter of the recipe explains it. A
/// fact is compared only where every point's record has it (an older aba's records lack the
/// newer facts).
#[must_use]
pub fn differences(points: &[PointFacts<'_>]) -> Vec<Difference> {
    let mut names: Vec<&str> = FACTS.iter().map(|f| f.name).collect();
    let mut sysctls: Vec<&str> = points
        .iter()
        .flat_map(|p| p.facts.keys())
        .map(String::as_str)
        .filter(|k| k.starts_with("sysctl."))
        .collect();
    sysctls.sort_unstable();
    sysctls.dedup();
    names.extend(sysctls);
    let mut kernels: Vec<&str> = Vec::new();
    for p in points {
        if !kernels.contains(&p.kernel) {
            kernels.push(p.kernel);
        }
    }
    let mut out = Vec::new();
    for fact in names {
        if points.is_empty() || points.iter().any(|p| !p.facts.contains_key(fact)) {
            continue;
        }
        let of = |kernel: &str| -> Vec<&PointFacts<'_>> {
            points.iter().filter(|p| p.kernel == kernel).collect()
        };
        for kernel in &kernels {
            let values = grouped(&of(kernel), fact);
            if values.len() > 1 {
                out.push(Difference {
                    fact: fact.to_owned(),
                    scope: Scope::Boots {
                        kernel: (*kernel).to_owned(),
                    },
                    values,
                });
            }
        }
        for (i, first) in kernels.iter().enumerate() {
            for second in &kernels[i + 1..] {
                let (a, b) = (of(first), of(second));
                if explained(fact, a[0].own_params, b[0].own_params) {
                    continue;
                }
                // A difference inside one kernel is already named; between kernels only the
                // values one kernel never had at any boot of the other count.
                fn value<'f>(p: &PointFacts<'f>, fact: &str) -> &'f str {
                    p.facts.get(fact).map_or("", String::as_str)
                }
                let seen = |ps: &[&PointFacts<'_>], v: &str| {
                    ps.iter().any(|p| agree_between(fact, value(p, fact), v))
                };
                if a.iter().all(|p| !seen(&b, value(p, fact))) {
                    let mut both = a.clone();
                    both.extend(b.iter().copied());
                    out.push(Difference {
                        fact: fact.to_owned(),
                        scope: Scope::Kernels {
                            first: (*first).to_owned(),
                            second: (*second).to_owned(),
                        },
                        values: grouped(&both, fact),
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{PointFacts, Scope, differences, explained, of_record};
    use crate::results::journal::Facts;

    fn facts(pairs: &[(&str, &str)]) -> Facts {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_microcode_update_between_boots_of_one_kernel_is_named() {
        let a1 = facts(&[("microcode", "0xb4"), ("thp", "always"), ("uptime", "5")]);
        let b = facts(&[("microcode", "0xb4"), ("thp", "always"), ("uptime", "9")]);
        let a2 = facts(&[("microcode", "0xb6"), ("thp", "always"), ("uptime", "7")]);
        let none: Vec<String> = Vec::new();
        let points = [
            PointFacts {
                point: "a-a",
                kernel: "a",
                own_params: &none,
                facts: &a1,
            },
            PointFacts {
                point: "b",
                kernel: "b",
                own_params: &none,
                facts: &b,
            },
            PointFacts {
                point: "a-b",
                kernel: "a",
                own_params: &none,
                facts: &a2,
            },
        ];
        let diffs = differences(&points);
        assert_eq!(diffs.len(), 1, "{diffs:?}");
        assert_eq!(
            diffs[0].scope,
            Scope::Boots {
                kernel: "a".to_owned()
            }
        );
        assert_eq!(
            diffs[0].text(),
            "microcode revision differs between the boots of a: 0xb4 at a-a; 0xb6 at a-b"
        );
        // uptime is not a fingerprint fact.
        assert!(!of_record(&a1).contains_key("uptime"));
    }

    #[test]
    fn between_kernels_only_the_recipes_own_parameters_explain_a_difference() {
        let a = facts(&[("thp", "[always] madvise never"), ("mitigations", "x")]);
        let b = facts(&[("thp", "always [madvise] never"), ("mitigations", "x")]);
        let plain: Vec<String> = Vec::new();
        let madvise = vec!["transparent_hugepage=madvise".to_owned()];
        let point = |p, k, own, f| PointFacts {
            point: p,
            kernel: k,
            own_params: own,
            facts: f,
        };
        let unexplained = differences(&[point("a", "a", &plain, &a), point("b", "b", &plain, &b)]);
        assert_eq!(unexplained.len(), 1);
        assert_eq!(
            unexplained[0].text(),
            "transparent hugepages differs between a and b: [always] madvise never at a; \
             always [madvise] never at b"
        );
        let explained_by_recipe =
            differences(&[point("a", "a", &plain, &a), point("b", "b", &madvise, &b)]);
        assert!(explained_by_recipe.is_empty(), "{explained_by_recipe:?}");
        assert!(explained("thp", &plain, &madvise));
        assert!(!explained("microcode", &plain, &madvise));
        assert!(!explained("thp", &madvise, &madvise));
    }

    #[test]
    fn a_vulnerability_only_the_newer_kernel_knows_is_the_kernel_itself() {
        let old = facts(&[(
            "mitigations",
            "mds: Not affected\nretbleed: Mitigation: IBRS",
        )]);
        let new = facts(&[(
            "mitigations",
            "mds: Not affected\nretbleed: Mitigation: IBRS\nvmscape: Not affected",
        )]);
        let changed = facts(&[("mitigations", "mds: Not affected\nretbleed: Vulnerable")]);
        let none: Vec<String> = Vec::new();
        let point = |p, k, f| PointFacts {
            point: p,
            kernel: k,
            own_params: &none,
            facts: f,
        };
        assert!(differences(&[point("a", "a", &old), point("b", "b", &new)]).is_empty());
        let diffs = differences(&[point("a", "a", &old), point("c", "c", &changed)]);
        assert_eq!(diffs.len(), 1, "{diffs:?}");
        // Between boots of one kernel every line counts.
        assert_eq!(
            differences(&[point("a-a", "a", &old), point("a-b", "a", &new)]).len(),
            1
        );
    }

    #[test]
    fn facts_an_older_record_lacks_are_not_compared() {
        let old = facts(&[("cpu_model", "X")]);
        let new = facts(&[("cpu_model", "X"), ("microcode", "0x1")]);
        let none: Vec<String> = Vec::new();
        let diffs = differences(&[
            PointFacts {
                point: "a-a",
                kernel: "a",
                own_params: &none,
                facts: &old,
            },
            PointFacts {
                point: "a-b",
                kernel: "a",
                own_params: &none,
                facts: &new,
            },
        ]);
        assert!(diffs.is_empty(), "{diffs:?}");
    }
}
