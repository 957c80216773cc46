//! Whether other work competed for the target's CPUs: the load average of the last minute
//! (`/proc/loadavg`'s first field: tasks runnable or in uninterruptible sleep, averaged) above
//! the number of CPUs online means more tasks wanted a CPU than there were, and the samples
//! carry that competition as noise. A campaign that measured CVs of 23–31 % on a loaded
//! machine said nothing of it (issue 29), though env/ records both numbers.

/// The load read against the CPUs online, when the load exceeds them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overload {
    /// The 1-minute load average as the kernel printed it (`3.10`).
    pub load: String,
    /// CPUs online.
    pub cpus: u32,
}

/// The 1-minute load average and the CPUs online, as the machine printed them.
#[derive(Clone, Debug, PartialEq)]
pub struct Load {
    /// The 1-minute load average as printed (`0.87`).
    pub load: String,
    value: f64,
    /// CPUs online.
    pub cpus: u32,
}

impl Load {
    /// `loadavg` (the text of `/proc/loadavg`) and `cpus_online` (the text of
    /// `/sys/devices/system/cpu/online`, `0-3,6`) read; `None` when either is not what the
    /// kernel prints (the machine's own answer, not trusted to be well formed).
    pub fn read(loadavg: &str, cpus_online: &str) -> Option<Load> {
        let load = loadavg.split_whitespace().next()?;
        let value: f64 = load.parse().ok().filter(|v: &f64| v.is_finite())?;
        Some(Load {
            load: load.to_owned(),
            value,
            cpus: cpu_count(cpus_online)?,
        })
    }

    /// The overload, when the load exceeds the CPUs online.
    pub fn overload(self) -> Option<Overload> {
        (self.value > f64::from(self.cpus)).then_some(Overload {
            load: self.load,
            cpus: self.cpus,
        })
    }
}

/// The overload `loadavg` shows against `cpus_online` ([`Load::read`]); `None` when the load
/// is within the CPUs or either text cannot be read.
pub fn overload(loadavg: &str, cpus_online: &str) -> Option<Overload> {
    Load::read(loadavg, cpus_online)?.overload()
}

/// The number of CPUs in a kernel CPU list (`0-3,6` is 5); `None` for anything else.
pub fn cpu_count(list: &str) -> Option<u32> {
    let mut count: u32 = 0;
    for part in list.trim().split(',') {
        let n = match part.split_once('-') {
            Some((first, last)) => {
                let (first, last): (u32, u32) = (first.parse().ok()?, last.parse().ok()?);
                last.checked_sub(first)?.checked_add(1)?
            }
            None => {
                part.parse::<u32>().ok()?;
                1
            }
        };
        count = count.checked_add(n)?;
    }
    (count > 0).then_some(count)
}

impl std::fmt::Display for Overload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the load average of the last minute was {} with {} CPU{} online: more tasks \
             wanted a CPU than there were, and work competing with the workloads adds to \
             their noise",
            self.load,
            self.cpus,
            if self.cpus == 1 { "" } else { "s" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{Overload, cpu_count, overload};

    #[test]
    fn cpu_lists_count_their_cpus_and_anything_else_is_unknown() {
        assert_eq!(cpu_count("0-3,6\n"), Some(5));
        assert_eq!(cpu_count("0"), Some(1));
        for bad in ["", "x", "3-1", "0-", "0,,1", "0-4294967295,1"] {
            assert_eq!(cpu_count(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_load_above_the_cpus_online_is_an_overload() {
        assert_eq!(
            overload("3.10 2.00 1.50 5/127 30274", "0-1"),
            Some(Overload {
                load: "3.10".to_owned(),
                cpus: 2
            })
        );
        assert_eq!(overload("2.00 9 9 1/1 1", "0-1"), None);
        assert_eq!(overload("0.87 1.46 1.31 5/127 30274", "0-1"), None);
        for (load, cpus) in [("", "0-1"), ("NaN 1 1", "0"), ("inf 1 1", "0"), ("9", "")] {
            assert_eq!(overload(load, cpus), None, "{load:?} {cpus:?}");
        }
        assert_eq!(
            overload("1.50 0 0", "0").expect("overloaded").to_string(),
            "the load average of the last minute was 1.50 with 1 CPU online: more tasks \
             wanted a CPU than there were, and work competing with the workloads adds to \
             their noise"
        );
    }
}
