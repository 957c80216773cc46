//! Sets of CPU numbers as Linux writes them (`0-3,6`): what the recipe's workloads are pinned
//! to, what a process may run on (`Cpus_allowed_list`), and where aba keeps its own processes
//! on the target while they run ([`RunnerCpus`], issue 17).

use std::{collections::BTreeSet, fmt};

/// The largest CPU number aba accepts (Linux's `NR_CPUS` is at most 8192), so that a set is
/// at most that many numbers whatever a list says.
pub const MAX_CPU: u32 = 8191;

/// A set of CPU numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuSet(BTreeSet<u32>);

impl CpuSet {
    /// Reads a CPU list (`2`, `0-3`, `1,4-7`; spaces around items allowed, as in
    /// `/proc/PID/status`); an empty text is the empty set.
    pub fn parse(text: &str) -> Result<CpuSet, String> {
        let mut set = BTreeSet::new();
        for item in text.trim().split(',').filter(|s| !s.trim().is_empty()) {
            let item = item.trim();
            let number = |s: &str| match s.trim().parse::<u32>() {
                Ok(n) if n <= MAX_CPU => Ok(n),
                Ok(_) => Err(format!("CPU {s} is above {MAX_CPU}")),
                Err(_) => Err(format!("{item:?} is not a CPU or a range")),
            };
            let (lo, hi) = match item.split_once('-') {
                Some((lo, hi)) => (number(lo)?, number(hi)?),
                None => {
                    let n = number(item)?;
                    (n, n)
                }
            };
            if lo > hi {
                return Err(format!("{item:?} is a range that ends before it starts"));
            }
            set.extend(lo..=hi);
        }
        Ok(CpuSet(set))
    }

    /// The CPU numbers, lowest first.
    pub fn cpus(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().copied()
    }

    /// True when no CPU is in the set.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every CPU of `self` or `other`.
    pub fn union(&self, other: &CpuSet) -> CpuSet {
        CpuSet(self.0.union(&other.0).copied().collect())
    }

    /// The CPUs of `self` that are not in `other`.
    pub fn minus(&self, other: &CpuSet) -> CpuSet {
        CpuSet(self.0.difference(&other.0).copied().collect())
    }

    /// The CPUs of both.
    pub fn intersection(&self, other: &CpuSet) -> CpuSet {
        CpuSet(self.0.intersection(&other.0).copied().collect())
    }
}

impl FromIterator<u32> for CpuSet {
    fn from_iter<I: IntoIterator<Item = u32>>(cpus: I) -> Self {
        CpuSet(cpus.into_iter().collect())
    }
}

/// The list form, ranges joined (`0-2,5`), as `taskset -c` reads it.
impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut items = Vec::new();
        let mut run: Option<(u32, u32)> = None;
        for &cpu in &self.0 {
            run = match run {
                Some((lo, hi)) if hi + 1 == cpu => Some((lo, cpu)),
                Some(done) => {
                    items.push(done);
                    Some((cpu, cpu))
                }
                None => Some((cpu, cpu)),
            };
        }
        items.extend(run);
        let text: Vec<String> = items
            .into_iter()
            .map(|(lo, hi)| {
                if lo == hi {
                    lo.to_string()
                } else {
                    format!("{lo}-{hi}")
                }
            })
            .collect();
        f.write_str(&text.join(","))
    }
}

/// Where aba's processes on an SSH target (the persistent runner and the sshd session that
/// carries it) may run while workloads run: the inventory's `runner_cpus`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum RunnerCpus {
    /// Every CPU the session may use except the ones the recipe pins workloads to; nowhere
    /// in particular when no workload is pinned (the default).
    #[default]
    Auto,
    /// Wherever the session starts (no pinning).
    Off,
    /// Exactly these CPUs.
    Only(CpuSet),
}

impl RunnerCpus {
    /// Reads `auto`, `off` or a CPU list.
    pub fn parse(text: &str) -> Result<RunnerCpus, String> {
        match text.trim() {
            "auto" => Ok(RunnerCpus::Auto),
            "off" => Ok(RunnerCpus::Off),
            list => match CpuSet::parse(list)? {
                set if set.is_empty() => Err("it names no CPU".to_owned()),
                set => Ok(RunnerCpus::Only(set)),
            },
        }
    }

    /// The CPUs the runner goes to, given the ones its session may use (`allowed`) and the
    /// ones workloads are pinned to (`avoid`): `Ok(None)` when it stays where it started
    /// (nothing to avoid, or it would go where it already is), `Err` with the reason when it
    /// cannot be kept off `avoid`.
    pub fn choose(&self, allowed: &CpuSet, avoid: &CpuSet) -> Result<Option<CpuSet>, String> {
        Ok(self.goal(allowed, avoid)?.filter(|goal| goal != allowed))
    }

    fn goal(&self, allowed: &CpuSet, avoid: &CpuSet) -> Result<Option<CpuSet>, String> {
        match self {
            RunnerCpus::Off => return Ok(None),
            RunnerCpus::Auto if avoid.is_empty() => return Ok(None),
            _ if allowed.is_empty() => {
                return Err("the target does not say which CPUs a process may use \
                            (no Cpus_allowed_list in /proc/self/status)"
                    .to_owned());
            }
            _ => {}
        }
        match self {
            RunnerCpus::Off => Ok(None),
            RunnerCpus::Auto => {
                let rest = allowed.minus(avoid);
                if rest.is_empty() {
                    Err(format!(
                        "the session may run on CPUs {allowed} only and workloads are pinned to \
                         {avoid}: no CPU is left for aba's processes"
                    ))
                } else {
                    Ok(Some(rest))
                }
            }
            RunnerCpus::Only(set) => {
                let usable = set.intersection(allowed);
                if usable.is_empty() {
                    return Err(format!(
                        "runner_cpus {set} is outside the CPUs the session may use ({allowed})"
                    ));
                }
                let shared = usable.intersection(avoid);
                if shared.is_empty() {
                    Ok(Some(usable))
                } else {
                    Err(format!(
                        "runner_cpus {set} includes CPU {shared}, which a workload is pinned to"
                    ))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{CpuSet, RunnerCpus};

    fn set(text: &str) -> CpuSet {
        CpuSet::parse(text).expect("valid list")
    }

    #[test]
    fn lists_read_and_print_as_linux_writes_them() {
        assert_eq!(set("0-3,6").to_string(), "0-3,6");
        assert_eq!(set(" 3,1,2 ,7\n").to_string(), "1-3,7");
        assert_eq!(set("").to_string(), "");
        assert!(set("").is_empty());
        assert_eq!(set("0-2").minus(&set("1")).to_string(), "0,2");
        assert_eq!(set("0").union(&set("2-3")).to_string(), "0,2-3");
        for bad in ["x", "3-1", "1-", "-1", "8192", "0-99999"] {
            assert!(CpuSet::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_runner_goes_where_no_workload_is_pinned() {
        let all = set("0-3");
        assert_eq!(RunnerCpus::Auto.choose(&all, &set("")), Ok(None));
        assert_eq!(
            RunnerCpus::Auto.choose(&all, &set("2-3")),
            Ok(Some(set("0-1")))
        );
        assert!(RunnerCpus::Auto.choose(&all, &all).is_err());
        assert_eq!(RunnerCpus::Off.choose(&all, &set("2")), Ok(None));
        // Workloads pinned to CPUs the session cannot use: nowhere to move to.
        assert_eq!(RunnerCpus::Auto.choose(&all, &set("7")), Ok(None));
        assert_eq!(
            RunnerCpus::Only(all.clone()).choose(&all, &set("")),
            Ok(None)
        );
        let only = RunnerCpus::parse("1").expect("list");
        assert_eq!(only.choose(&all, &set("2")), Ok(Some(set("1"))));
        assert!(only.choose(&all, &set("1")).is_err());
        assert!(only.choose(&set("2-3"), &set("")).is_err());
        assert!(only.choose(&set(""), &set("")).is_err());
        assert!(RunnerCpus::Auto.choose(&set(""), &set("2")).is_err());
        assert_eq!(RunnerCpus::parse(" auto "), Ok(RunnerCpus::Auto));
        assert_eq!(RunnerCpus::parse("off"), Ok(RunnerCpus::Off));
        assert!(RunnerCpus::parse("").is_err());
        assert!(RunnerCpus::parse("on").is_err());
    }
}
