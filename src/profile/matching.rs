//! Whether a noise profile holds for a campaign (issue 10 §2, §5): a profile is pooled only
//! into a campaign of the same target whose baseline is the same release with the same
//! parameters and tuning, on a machine with the same fingerprint, and only into the series it
//! measured with the same samples, warm-ups and definition.
//!
//! Two stages, because a campaign is planned before its first boot: the static match needs only
//! the recipe and the target (`aba check`, and `aba run` choosing which profile to copy), the
//! run-time match reads what the baseline's boots recorded (release, command line, tuning read
//! back, machine facts) and is made by the analysis, from the results directory alone. Each
//! mismatch is said in words naming the profile's field.

use std::collections::BTreeMap;

use sha2::{Digest as _, Sha256};

use crate::{
    profile::model::{Profile, Scope, SeriesProfile},
    recipe::{Case, Metric, Recipe, Workload, model::Stream, resolved::Extract},
};

/// The recipe's tuning as `name=value`: sysctls in file order, then governor, EPP and turbo.
#[must_use]
pub fn requested_tuning(recipe: &Recipe) -> Vec<String> {
    let mut out: Vec<String> = recipe
        .sysctls
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    out.extend(recipe.tuning.settings());
    out
}

/// `/proc/cmdline` without the boot loader's `BOOT_IMAGE=` and `initrd=`, which name files,
/// not settings.
#[must_use]
pub fn normalize_cmdline(cmdline: &str) -> String {
    cmdline
        .split_whitespace()
        .filter(|p| !p.starts_with("BOOT_IMAGE=") && !p.starts_with("initrd="))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The tuning a boot read back, with the optional knobs it lacked as `absent`.
#[must_use]
pub fn tuning_seen(
    settings: &BTreeMap<String, String>,
    skipped: &[String],
) -> BTreeMap<String, String> {
    let mut out = settings.clone();
    for knob in skipped {
        out.insert(knob.clone(), "absent".to_owned());
    }
    out
}

/// SHA-256 of what defines one series' measurement: the case's command, environment and CPU
/// list, the metric's extraction, the recipe's setup commands and the content of the files
/// it copies. A profile of another command or another program is another benchmark.
///
/// The files' content is the bytes the loader read ([`FileCopy::content`]), not the disk:
/// analysis stays pure, and the hash is the one a profile recorded for an unchanged file.
///
/// [`FileCopy::content`]: crate::recipe::resolved::FileCopy::content
#[must_use]
pub fn definition_sha256(
    recipe: &Recipe,
    workload: &Workload,
    case: &Case,
    metric: &Metric,
) -> String {
    let mut h = Sha256::new();
    let mut field = |name: &str, value: &[u8]| {
        h.update(name.as_bytes());
        h.update([0]);
        h.update((value.len() as u64).to_le_bytes());
        h.update(value);
    };
    field("run", case.render(&workload.run).as_bytes());
    for (k, v) in &workload.env {
        field("env", format!("{k}={}", case.render(v)).as_bytes());
    }
    if let Some(cpu) = &workload.cpu {
        field("cpu", cpu.to_string().as_bytes());
    }
    let extract = match &metric.extract {
        Extract::Json(pointer) => format!("json {pointer}"),
        Extract::Regex(re) => format!("regex {}", re.as_str()),
        Extract::Number => "number".to_owned(),
    };
    field("extract", extract.as_bytes());
    let stream = match metric.stream {
        Stream::Stdout => "stdout",
        Stream::Stderr => "stderr",
    };
    field("stream", stream.as_bytes());
    field("divide", metric.divide.to_string().as_bytes());
    field("multiply", metric.multiply.to_string().as_bytes());
    field("unit", metric.unit.as_bytes());
    for command in &recipe.setup.commands {
        field("setup", command.as_bytes());
    }
    for file in &recipe.files {
        field("file", file.remote.as_str().as_bytes());
        field("content", &file.content);
    }
    hex::encode(h.finalize())
}

/// Why `profile` cannot hold for campaigns of `recipe` on `target`, from the recipe alone:
/// target, baseline release, parameters, tuning. Empty when it may hold (the run-time match
/// still decides).
#[must_use]
pub fn static_mismatches(profile: &Profile, recipe: &Recipe, target: &str) -> Vec<String> {
    let fp = &profile.fingerprint;
    let mut out = Vec::new();
    if fp.target != target {
        out.push(format!(
            "`fingerprint.target` is {}, this campaign runs on {target}",
            fp.target
        ));
    }
    let baseline = &recipe.analysis.baseline;
    let Some(kernel) = recipe.kernels.get(baseline) else {
        return out;
    };
    if !kernel.release.is_running() && kernel.release.as_str() != fp.release {
        out.push(format!(
            "`fingerprint.release` is {}, the baseline {baseline} is {}",
            fp.release, kernel.release
        ));
    }
    let params = recipe.cmdline_for(baseline);
    if params != fp.params {
        out.push(format!(
            "`fingerprint.params` are [{}], the baseline {baseline} gets [{}]",
            fp.params.join(" "),
            params.join(" ")
        ));
    }
    let tuning = requested_tuning(recipe);
    if tuning != fp.requested_tuning {
        out.push(format!(
            "`fingerprint.requested_tuning` is [{}], the recipe asks for [{}]",
            fp.requested_tuning.join(" "),
            tuning.join(" ")
        ));
    }
    out
}

/// The profile's entry for one series of `recipe`, or why there is none that holds.
pub fn series_match<'p>(
    profile: &'p Profile,
    recipe: &Recipe,
    workload: &Workload,
    case: &Case,
    metric: &Metric,
) -> Result<&'p SeriesProfile, String> {
    let Some(s) = profile.series(workload.name.as_str(), &case.name, metric.name.as_str()) else {
        return Err("the profile has no entry for it".to_owned());
    };
    let i = profile
        .series
        .iter()
        .position(|x| std::ptr::eq(x, s))
        .expect("invariant: found in the list");
    if s.samples != workload.samples {
        return Err(format!(
            "`series[{i}].samples` is {} in the profile, {} here",
            s.samples, workload.samples
        ));
    }
    if s.warmup != workload.warmup {
        return Err(format!(
            "`series[{i}].warmup` is {} in the profile, {} here",
            s.warmup, workload.warmup
        ));
    }
    if definition_sha256(recipe, workload, case, metric) == s.definition_sha256 {
        Ok(s)
    } else {
        Err(format!(
            "`series[{i}].definition_sha256` differs: the command, its environment, the \
             metric's extraction, the setup or a copied file changed"
        ))
    }
}

/// What one boot of the baseline recorded, for the run-time match.
#[derive(Clone, Debug)]
pub struct BootSeen<'a> {
    /// Point label.
    pub point: &'a str,
    /// `uname -r` as proven.
    pub release: Option<&'a str>,
    /// `/proc/cmdline` as proven.
    pub cmdline: Option<&'a str>,
    /// Tuning read back ([`tuning_seen`]).
    pub tuning: BTreeMap<String, String>,
    /// Machine facts of its environment record; `None` without a readable record.
    pub facts: Option<&'a BTreeMap<String, String>>,
}

/// Why `profile` does not hold for the boots a campaign's baseline actually had; `shared_boot`
/// says the campaign's points ran in one boot (run-to-run).
#[must_use]
pub fn runtime_mismatches(
    profile: &Profile,
    boots: &[BootSeen<'_>],
    shared_boot: bool,
) -> Vec<String> {
    let fp = &profile.fingerprint;
    let mut out = Vec::new();
    let scope = if shared_boot {
        Scope::RunToRun
    } else {
        Scope::Boot
    };
    if scope != profile.scope {
        out.push(format!(
            "`scope` is {}, this campaign's points are {}",
            profile.scope.words(),
            scope.words()
        ));
    }
    if boots.is_empty() {
        out.push(
            "no boot of the baseline is done, so the fingerprint cannot be checked".to_owned(),
        );
    }
    for boot in boots {
        if let Some(release) = boot.release
            && release != fp.release
        {
            out.push(format!(
                "`fingerprint.release` is {}, {} booted {release}",
                fp.release, boot.point
            ));
        }
        if let Some(cmdline) = boot.cmdline {
            let seen = normalize_cmdline(cmdline);
            if seen != fp.cmdline {
                out.push(format!(
                    "`fingerprint.cmdline` is `{}`, {} booted with `{seen}`",
                    fp.cmdline, boot.point
                ));
            }
        }
        if boot.tuning != fp.tuning {
            out.push(format!(
                "`fingerprint.tuning` is {}, {} read back {}",
                map_text(&fp.tuning),
                boot.point,
                map_text(&boot.tuning)
            ));
        }
        match boot.facts {
            None => out.push(format!(
                "{} has no readable environment record, so its machine cannot be compared",
                boot.point
            )),
            Some(facts) => {
                for (name, want) in &fp.machine {
                    if let Some(got) = facts.get(name)
                        && got != want
                    {
                        out.push(format!(
                            "`fingerprint.machine.{name}` ({}) is {} in the profile, {} at {}",
                            crate::fingerprint::describe(name),
                            shown(want),
                            shown(got),
                            boot.point
                        ));
                    }
                }
            }
        }
    }
    out.dedup();
    out
}

/// A fact's value, on one line and cut.
fn shown(value: &str) -> String {
    if value.is_empty() {
        "(none)".to_owned()
    } else {
        crate::text::cut(&crate::text::one_line(value), 80).into_owned()
    }
}

/// `{governor=performance, kernel.x=1}`.
fn map_text(map: &BTreeMap<String, String>) -> String {
    let items: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("{k}={}", shown(v)))
        .collect();
    format!("{{{}}}", items.join(", "))
}

#[cfg(test)]
mod tests {
    use std::{collections::BTreeMap, path::Path};

    use super::{
        BootSeen, definition_sha256, normalize_cmdline, runtime_mismatches, series_match,
        static_mismatches,
    };
    use crate::{
        profile::testdata::{LAB_RECIPE, profile},
        recipe::{FilesFrom, Loader, parse},
    };

    #[test]
    fn a_definition_hashes_the_files_as_loaded_and_never_reads_them_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bench = dir.path().join("bench.sh");
        let program = "#!/bin/sh\necho '{\"wall_ns\": 1}'\n";
        std::fs::write(&bench, program).expect("write");
        let path = dir.path().join("r.toml");
        let text = format!("{LAB_RECIPE}[files]\n\"bench.sh\" = \"bench.sh\"\n");
        std::fs::write(&path, &text).expect("write");
        let recipe = Loader::default().load(&path).expect("valid");
        let w = &recipe.workloads[0];
        let case = w.case_at(0);
        let hash = |r: &crate::recipe::Recipe| definition_sha256(r, w, &case, &w.metrics[0]);
        // What the hash read from the disk gave for this file before the loader kept its
        // bytes: the profiles written then still hold.
        const BEFORE: &str = "cb7c5956291254a279043426b07501fe773f4a31a9f252049a213955d874eedb";
        assert_eq!(hash(&recipe), BEFORE);
        // A results directory's copy of the file hashes alike.
        let copies = dir.path().join("results/files");
        std::fs::create_dir_all(&copies).expect("mkdir");
        std::fs::write(copies.join("bench.sh"), program).expect("write");
        let copied = Loader {
            files: FilesFrom::Copied(&copies),
            ..Loader::default()
        }
        .parse(&dir.path().join("results/recipe.toml"), &text)
        .expect("valid");
        assert_eq!(hash(&copied), BEFORE);
        // The file changed after loading: the loaded recipe keeps what it read, and only a
        // recipe loaded again sees the change.
        std::fs::write(&bench, "#!/bin/sh\necho changed\n").expect("write");
        assert_eq!(hash(&recipe), BEFORE);
        let reloaded = Loader::default().load(&path).expect("valid");
        assert_ne!(hash(&reloaded), BEFORE);
        // Removed, it is not read either.
        std::fs::remove_file(&bench).expect("remove");
        std::fs::remove_file(copies.join("bench.sh")).expect("remove");
        assert_eq!(hash(&recipe), BEFORE);
        assert_eq!(hash(&copied), BEFORE);
        let mut held = profile();
        held.series[0].definition_sha256 = BEFORE.to_owned();
        assert!(series_match(&held, &recipe, w, &case, &w.metrics[0]).is_ok());
    }

    #[test]
    fn a_profile_of_the_same_baseline_matches_statically_and_a_changed_one_says_why() {
        let recipe = parse(Path::new("r.toml"), LAB_RECIPE).expect("valid");
        let p = profile();
        assert!(static_mismatches(&p, &recipe, "lab").is_empty());
        let other = parse(
            Path::new("r.toml"),
            &LAB_RECIPE.replace("6.1.0-47-cloud-amd64", "6.1.0-48-cloud-amd64"),
        )
        .expect("valid");
        assert_eq!(
            static_mismatches(&p, &other, "lab2"),
            [
                "`fingerprint.target` is lab, this campaign runs on lab2",
                "`fingerprint.release` is 6.1.0-47-cloud-amd64, the baseline a is 6.1.0-48-cloud-amd64",
            ]
        );
        // The series: its sample count, then its definition.
        let w = &recipe.workloads[0];
        let case = w.case_at(0);
        let err = series_match(&p, &recipe, w, &case, &w.metrics[0]).expect_err("definition");
        assert!(
            err.starts_with("`series[0].definition_sha256` differs"),
            "{err}"
        );
        let fewer = parse(
            Path::new("r.toml"),
            &LAB_RECIPE.replace("samples = 9", "samples = 5"),
        )
        .expect("valid");
        let w = &fewer.workloads[0];
        assert_eq!(
            series_match(&p, &fewer, w, &case, &w.metrics[0]).expect_err("samples"),
            "`series[0].samples` is 9 in the profile, 5 here"
        );
    }

    #[test]
    fn the_boots_a_campaign_had_must_have_the_profiles_fingerprint() {
        let p = profile();
        let fp = &p.fingerprint;
        let mut machine = fp.machine.clone();
        let cmdline = format!("BOOT_IMAGE=/vmlinuz {}", fp.cmdline);
        let same = BootSeen {
            point: "a-a",
            release: Some(&fp.release),
            cmdline: Some(&cmdline),
            tuning: fp.tuning.clone(),
            facts: Some(&fp.machine),
        };
        assert!(runtime_mismatches(&p, std::slice::from_ref(&same), false).is_empty());
        machine.insert("microcode".to_owned(), "0x2".to_owned());
        let updated = BootSeen {
            point: "a-b",
            facts: Some(&machine),
            tuning: BTreeMap::new(),
            ..same.clone()
        };
        assert_eq!(
            runtime_mismatches(&p, &[same, updated], true),
            [
                "`scope` is boot-to-boot, this campaign's points are run-to-run only: all points \
                 in one boot, boots unmeasured",
                "`fingerprint.tuning` is {kernel.sched_rt_runtime_us=950000}, a-b read back {}",
                "`fingerprint.machine.microcode` (microcode revision) is 0x1 in the profile, 0x2 \
                 at a-b",
            ]
        );
        assert_eq!(normalize_cmdline("BOOT_IMAGE=/x initrd=/y quiet"), "quiet");
    }
}
