//! This machine's CPUs for the tests of aba keeping its own processes off the CPUs a recipe
//! pins workloads to (issue 17 item 2).

use aba::target::cpu_set::CpuSet;

use crate::support::skip;

/// The CPUs this test process may use (`Cpus_allowed_list`), which what it starts inherits.
pub fn own_cpus() -> CpuSet {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list");
    CpuSet::parse(line).expect("a CPU list")
}

/// This process's CPUs, split into the last one (which the tests pin a workload to) and the
/// rest (where aba's processes go).
pub struct Split {
    pub all: CpuSet,
    pub pinned: CpuSet,
    pub rest: CpuSet,
}

/// The split, or `None` after a visible skip: it needs `taskset` and two CPUs.
pub fn split_cpus() -> Option<Split> {
    if !skip::need("taskset") {
        return None;
    }
    let all = own_cpus();
    let Some(last) = all.cpus().last().filter(|_| all.cpus().count() >= 2) else {
        skip::skip(&format!(
            "this process may use CPUs {all} only; keeping the runner off a pinned CPU needs two"
        ));
        return None;
    };
    let pinned = CpuSet::parse(&last.to_string()).expect("one CPU");
    let rest = all.minus(&pinned);
    Some(Split { all, pinned, rest })
}

/// A shell command that prints the CPUs its own process may use.
pub const OWN: &str = "sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status";

/// A one-point recipe of the running kernel whose setup and teardown must run on all of
/// `split`'s CPUs, with a workload `free` (`free_run`, which prints 1 when aba's processes
/// are where they should be) and a workload `pinned` to `split.pinned` that prints 2 when it
/// runs there; two samples each.
pub fn pinning_recipe(split: &Split, free_run: &str) -> String {
    let Split { all, pinned, .. } = split;
    format!(
        r#"
version = 1
name = "pinned"
description = "aba stays off the pinned CPU"
sequence = ["this"]
warmup = 0
samples = 2
point_retries = 0
[setup]
run = ['''test "$({OWN})" = "{all}"''']
[teardown]
run = ['''test "$({OWN})" = "{all}"''']
[kernels.this]
release = "running"
[[workload]]
name = "free"
run = '''
{free_run}
'''
retries = 0
metric = {{ number = true, unit = "n", better = "lower" }}
[[workload]]
name = "pinned"
run = '''test "$({OWN})" = "{pinned}" && echo 2'''
cpu = "{pinned}"
retries = 0
metric = {{ number = true, unit = "n", better = "lower" }}
"#
    )
}
