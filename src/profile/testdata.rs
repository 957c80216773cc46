//! A profile for unit tests: 6 boots of kernel `a` on target `lab`, one series.

use std::collections::BTreeMap;

use crate::profile::model::{Estimate, Fingerprint, Profile, Scope, SeriesProfile, Source};

/// An estimate with boot SD 1% of a mean of 100 and within-boot CV 1% at 9 samples.
pub fn estimate() -> Estimate {
    Estimate {
        mean: 100.0,
        between_var: 1.0 + 1.0 / 9.0,
        between_dof: 5.0,
        within_var: 1.0,
        within_dof: 48.0,
        boot_var: 1.0,
        boot_effect_p: Some(0.001),
        between_sd_pct: (1.0_f64 + 1.0 / 9.0).sqrt(),
        boot_sd_pct: 1.0,
        within_cv_pct: 1.0,
    }
}

/// The profile, unsealed (its checksum is empty).
pub fn profile() -> Profile {
    let machine: BTreeMap<String, String> = [
        ("cpu_model", "QEMU Virtual CPU version 2.5+"),
        ("microcode", "0x1"),
        ("thp", "always [madvise] never"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    Profile {
        format: 1,
        checksum: String::new(),
        created: "2026-07-23T20:00:00Z".to_owned(),
        aba: "0.1.0".to_owned(),
        scope: Scope::Boot,
        boots: 6,
        source: Source {
            recipe: "lab-aba".to_owned(),
            recipe_sha256: "ab".repeat(32),
            campaign: "lab-aba-calibration-20260723T200000Z".to_owned(),
        },
        fingerprint: Fingerprint {
            target: "lab".to_owned(),
            kernel: "a".to_owned(),
            release: "6.1.0-47-cloud-amd64".to_owned(),
            params: vec!["aba.lab=1".to_owned(), "aba.kernel=a".to_owned()],
            cmdline: "console=ttyS0,115200 panic=-1 quiet aba.lab=1 aba.kernel=a".to_owned(),
            requested_tuning: vec!["kernel.sched_rt_runtime_us=950000".to_owned()],
            tuning: [("kernel.sched_rt_runtime_us".to_owned(), "950000".to_owned())]
                .into_iter()
                .collect(),
            machine,
        },
        series: vec![SeriesProfile {
            workload: "labbench".to_owned(),
            case: "mloops=10".to_owned(),
            metric: "labbench".to_owned(),
            unit: "ns".to_owned(),
            warmup: 1,
            samples: 9,
            definition_sha256: "cd".repeat(32),
            all: estimate(),
            drop_first: Some(estimate()),
        }],
    }
}

/// A recipe the test profile holds for (bar the definition hash, which a test sets).
pub const LAB_RECIPE: &str = r#"
version = 1
name = "lab-aba"
description = "unit"
sequence = ["a", "b", "a"]
warmup = 1
samples = 9
[kernels.a]
release = "6.1.0-47-cloud-amd64"
cmdline = "aba.kernel=a"
[kernels.b]
release = "6.1.0-50-cloud-amd64"
[boot]
cmdline = "aba.lab=1"
[sysctl]
"kernel.sched_rt_runtime_us" = 950000
[[workload]]
name = "labbench"
run = "labbench {mloops} --json"
matrix = { mloops = ["10"] }
metric = { json = "/wall_ns", unit = "ns", better = "lower" }
[analysis]
detect_pct = 2.0
"#;
