//! Matched builds (issue 33, item 3), without booting anything: builds whose build step is a
//! shell command that makes an image and a `.config` in a temporary folder are recorded
//! (compiler, linker, normalised config, Kbuild metadata, patches and their Message-IDs) and
//! compared with the baseline's field by field, by `aba build` (before any target is touched)
//! and by `aba report` on a results directory whose journal holds the builds
//! (`matched-build.tsv`, report.txt). recipes/005's three lab builds are compared too where
//! the lab kernels are built (lab/kernel/build.sh; `lab/out` may be a link to them).

use std::path::{Path, PathBuf};

use aba::{
    build::{
        file::BuildsFile,
        prepare::{Steps, make},
    },
    kernel::binding::{BoundKernel, Origin},
    recipe::ident::{KernelLabel, Release, TargetPath},
    results::journal::Event,
};

use crate::support::cli::{aba, on_target, text, write};

/// A minimal x86 bzImage as far as aba reads one: the setup header's `HdrS` magic at 0x202
/// and, at 0x20E, the pointer (less 0x200) to the version string `version`.
fn bzimage(version: &str) -> Vec<u8> {
    let mut image = vec![0u8; 0x400];
    image[0x202..0x206].copy_from_slice(b"HdrS");
    let pointer: u16 = 0x100;
    image[0x20E..0x210].copy_from_slice(&pointer.to_le_bytes());
    let at = usize::from(pointer) + 0x200;
    image[at..at + version.len()].copy_from_slice(version.as_bytes());
    image
}

/// The `.config` every build starts from: Kbuild's header, the toolchain lines, a local
/// version (which names the build, so it is not compared) and two options.
const CONFIG: &str = "#\n# Automatically generated file; DO NOT EDIT.\n# Linux/x86 6.1.192 Kernel Configuration\n#\nCONFIG_CC_VERSION_TEXT=\"gcc (Debian 12.2.0-14+deb12u1) 12.2.0\"\nCONFIG_CC_IS_GCC=y\nCONFIG_GCC_VERSION=120200\nCONFIG_LD_IS_BFD=y\nCONFIG_LD_VERSION=24000\n# CONFIG_WERROR is not set\nCONFIG_LOCALVERSION=\"-aba-lab\"\nCONFIG_SMP=y\n";

/// A folder with the sources the build commands use (`src/`: an image per build and the
/// base config; two patches, one a mail with a Message-ID) and a builds file for `labels`
/// whose commands make `out/<label>/{bzImage,config}`: `original`; `patched`, its patch
/// applied and its local version renamed (`patched_config` edits its config further);
/// `null-patch`; `other`, built with one more config option. `release` names an image's
/// release (default `6.1.192-aba-lab`).
fn builds(dir: &Path, labels: &[&str], release: &[(&str, &str)], patched_config: &str) -> PathBuf {
    std::fs::create_dir_all(dir.join("src")).expect("mkdir");
    let all = ["original", "patched", "null-patch", "other"];
    for (n, label) in all.iter().enumerate() {
        let release = release
            .iter()
            .find(|(l, _)| l == label)
            .map_or("6.1.192-aba-lab", |(_, r)| r);
        let version = format!(
            "{release} (root@vm) #{} Sun Dec  6 12:11:{:02} UTC 2026\0",
            n + 1,
            n * 10
        );
        std::fs::write(dir.join(format!("src/{label}.img")), bzimage(&version)).expect("image");
    }
    write(dir, "src/base.config", CONFIG);
    write(
        dir,
        "patched.patch",
        "From 0123 Mon Sep 17 00:00:00 2001\nFrom: A Developer <a@example.org>\nMessage-ID: <20261206.1-fix@example.org>\nSubject: [PATCH] sched/rt: slow the read\n\n---\n--- a/kernel/sched/rt.c\n+++ b/kernel/sched/rt.c\n",
    );
    write(
        dir,
        "null.patch",
        "--- a/kernel/sched/rt.c\n+++ b/kernel/sched/rt.c\n",
    );
    let patched = format!("sed 's/-aba-lab/-patched/{patched_config}'");
    let tables = [
        ("original", "cat", None),
        ("patched", patched.as_str(), Some("patched.patch")),
        ("null-patch", "cat", Some("null.patch")),
        (
            "other",
            "sed 's/# CONFIG_WERROR is not set/CONFIG_WERROR=y/'",
            None,
        ),
    ];
    let mut text = String::from("version = 1\n");
    for (label, config, patch) in tables.iter().filter(|(l, _, _)| labels.contains(l)) {
        text.push_str(&format!(
            "[kernels.{label}]\ncommand = \"mkdir -p out/{label} && cp src/{label}.img out/{label}/bzImage && {config} src/base.config > out/{label}/config\"\nimage = \"out/{label}/bzImage\"\nconfig = \"out/{label}/config\"\n{}",
            patch.map_or_else(String::new, |p| format!("patches = [\"{p}\"]\n"))
        ));
    }
    write(dir, "builds.toml", &text)
}

const RECIPE: &str = r#"
version = 1
name = "matched"
description = "three builds of one tree and one with another config option"
sequence = ["original", "patched", "original", "null-patch", "original", "other", "original"]
[kernels.original]
release = "6.1.192-aba-lab"
[kernels.patched]
release = "6.1.192-aba-lab"
[kernels.null-patch]
release = "6.1.192-aba-lab"
[kernels.other]
release = "6.1.192-aba-lab"
[[workload]]
name = "w"
run = "echo 1"
metric = { number = true, better = "lower" }
[analysis]
baseline = "original"
"#;

/// The line `aba build` prints for `kernel`'s `field`.
fn row<'a>(stdout: &'a str, kernel: &str, field: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            l.starts_with("  ") && words.first() == Some(&kernel) && words.get(1) == Some(&field)
        })
        .unwrap_or_else(|| panic!("no row {kernel} {field}: {stdout}"))
}

/// Issue 33's proof without the lab: the patched and null-patch builds match the original
/// on compiler, linker and (normalised) config and differ, as intended, by their patches; the
/// build made with another config option is flagged on its config alone.
#[test]
fn aba_build_compares_every_build_with_the_baseline_field_by_field() {
    let tmp = tempfile::tempdir().expect("tmp");
    let builds = builds(
        tmp.path(),
        &["original", "patched", "null-patch", "other"],
        &[],
        "",
    );
    let recipe = write(tmp.path(), "r.toml", RECIPE);
    let out = aba(
        tmp.path(),
        &[
            "build",
            recipe.to_str().expect("utf-8"),
            "--builds",
            builds.to_str().expect("utf-8"),
            "--logs",
            "logs",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .contains("compiler gcc (Debian 12.2.0-14+deb12u1) 12.2.0 (from the build's .config)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("linker   GNU ld 2.40 (from the build's .config)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Message-ID <20261206.1-fix@example.org>"),
        "{stdout}"
    );
    assert!(
        stdout.contains("matched builds: each kernel against the baseline original"),
        "{stdout}"
    );
    for kernel in ["patched", "null-patch"] {
        for field in [
            "release",
            "release_length",
            "compiler",
            "linker",
            "config_normalised_sha256",
            "kbuild_user",
            "kbuild_host",
        ] {
            assert!(
                row(&stdout, kernel, field).ends_with(" PASS"),
                "{kernel} {field}: {stdout}"
            );
        }
        assert!(
            row(&stdout, kernel, "patches").ends_with("DIFFERS (intended: the patch)"),
            "{stdout}"
        );
        assert!(
            row(&stdout, kernel, "kbuild_timestamp")
                .ends_with("DIFFERS (expected: the build's time)"),
            "{stdout}"
        );
    }
    assert!(
        row(&stdout, "patched", "patch_message_ids").ends_with("DIFFERS (intended: the patch)"),
        "{stdout}"
    );
    let config = row(&stdout, "other", "config_normalised_sha256");
    assert!(config.contains(" DIFFERS: "), "{stdout}");
    for field in ["compiler", "linker", "patches", "release_length"] {
        assert!(
            row(&stdout, "other", field).ends_with(" PASS"),
            "other {field}: {stdout}"
        );
    }

    // `aba check` says the same in a line per kernel, before anything runs.
    let inventory = write(
        tmp.path(),
        "targets.toml",
        "[targets.lab]\nhost = \"127.0.0.1\"\nport = 1\nuser = \"root\"\nknown_hosts = \"known_hosts\"\nswitch = \"kexec\"\n",
    );
    let out = on_target(
        tmp.path(),
        "check",
        &recipe,
        &inventory,
        "lab",
        &["--builds", builds.to_str().expect("utf-8")],
    );
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("kernel patched against the baseline original: 7 of 12 fields PASS; differ as intended or expected: kbuild_number, kbuild_timestamp, patches, patch_message_ids; not recorded: source; nothing beyond"),
        "{stdout}"
    );
    assert!(
        flat.contains("kernel other against the baseline original: 8 of 12 fields PASS; differ as intended or expected: kbuild_number, kbuild_timestamp; not recorded: source; DIFFERS beyond: config_normalised_sha256 ("),
        "{stdout}"
    );
}

/// recipes/005's three lab builds (lab/kernel/build.sh), as they are: PASS on compiler,
/// linker and config, the patched source (its patch) DIFFERS as intended.
#[test]
fn the_lab_builds_of_recipe_005_match_but_for_their_patches() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if !root.join("lab/out/kernel/null-patch/bzImage").is_file() {
        crate::support::skip::skip(
            "the lab kernels of recipes/005 are not built (lab/kernel/build.sh makes them)",
        );
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let out = aba(
        tmp.path(),
        &[
            "build",
            root.join("recipes/005-lab-built-kernels.toml")
                .to_str()
                .expect("utf-8"),
            "--builds",
            root.join("recipes/005-lab-built-kernels/lab-builds.toml")
                .to_str()
                .expect("utf-8"),
            "--no-build",
            "--logs",
            "logs",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for kernel in ["patched", "null-patch"] {
        for field in [
            "compiler",
            "linker",
            "config_normalised_sha256",
            "release_length",
        ] {
            assert!(
                row(&stdout, kernel, field).ends_with(" PASS"),
                "{kernel} {field}: {stdout}"
            );
        }
        assert!(
            row(&stdout, kernel, "patches").ends_with("DIFFERS (intended: the patch)"),
            "{stdout}"
        );
    }
}

/// The builds of `file` as the journal's `kernels` record binds them.
fn kernels_record(file: &Path, labels: &[&str]) -> String {
    let builds = BuildsFile::load(file).expect("builds file");
    let kernels = labels
        .iter()
        .map(|label| {
            let spec = builds.kernel(label).expect("a build");
            let build = make(spec, &Steps::Skip).expect("recorded");
            BoundKernel {
                label: KernelLabel::new(label).expect("label"),
                release: Release::new(&build.version.release).expect("release"),
                release_from: Origin::Build {
                    at: build.at.clone(),
                },
                image: TargetPath::new("/tmp/aba/kernels/x/vmlinuz").expect("path"),
                image_from: Origin::Build {
                    at: build.at.clone(),
                },
                initrd: TargetPath::new("/boot/initrd.img").expect("path"),
                initrd_from: Origin::Recipe,
                build: Some(Box::new(build)),
            }
        })
        .collect();
    serde_json::to_string(&Event::Kernels { kernels }).expect("serialises")
}

/// `aba report` on a campaign whose journal holds its builds writes `matched-build.tsv`
/// (both values, the status and where each was read) and says in report.txt that the
/// patched build differs beyond its patch: here its release is longer (the fixture's
/// releases) and it was made with another config option. The same campaign without builds
/// (as an older aba wrote it) has no such file.
#[test]
fn aba_report_writes_matched_build_tsv_and_flags_what_the_patch_does_not_explain() {
    let tmp = tempfile::tempdir().expect("tmp");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/mail-rt-sysctl");
    let dir = tmp.path().join("results/mail-rt-sysctl");
    std::fs::create_dir_all(&dir).expect("mkdir");
    for name in ["recipe.toml", "samples.csv", "journal.jsonl"] {
        std::fs::copy(fixture.join(name), dir.join(name)).expect("copy");
    }
    let out = aba(tmp.path(), &["report", dir.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !dir.join("matched-build.tsv").exists(),
        "no builds, no table"
    );

    // The patched build's command makes another config option too.
    let file = builds(
        &tmp.path().join("b"),
        &["original", "patched"],
        &[("original", "7.2.0-orig"), ("patched", "7.2.0-rtfix")],
        "; s/CONFIG_SMP=y/# CONFIG_SMP is not set/",
    );
    let made = aba(
        tmp.path(),
        &[
            "build",
            dir.join("recipe.toml").to_str().expect("utf-8"),
            "--builds",
            file.to_str().expect("utf-8"),
            "--logs",
            "logs",
        ],
    );
    assert!(made.status.success(), "{}", text(&made));
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).expect("journal");
    let (header, rest) = journal.split_once('\n').expect("a header");
    std::fs::write(
        dir.join("journal.jsonl"),
        format!(
            "{header}\n{}\n{rest}",
            kernels_record(&file, &["original", "patched"])
        ),
    )
    .expect("write");
    let out = aba(tmp.path(), &["report", dir.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{}", text(&out));
    let tsv = std::fs::read_to_string(dir.join("matched-build.tsv")).expect("written");
    let lines: Vec<&str> = tsv.lines().collect();
    assert_eq!(
        lines[0],
        "baseline\tkernel\tfield\tbaseline_value\tkernel_value\tstatus\tread_from"
    );
    let field = |name: &str| -> Vec<&str> {
        lines
            .iter()
            .find(|l| l.split('\t').nth(2) == Some(name))
            .unwrap_or_else(|| panic!("no {name}: {tsv}"))
            .split('\t')
            .collect()
    };
    assert_eq!(
        field("compiler"),
        [
            "original",
            "patched",
            "compiler",
            "gcc (Debian 12.2.0-14+deb12u1) 12.2.0",
            "gcc (Debian 12.2.0-14+deb12u1) 12.2.0",
            "PASS",
            "the build's .config"
        ]
    );
    assert_eq!(field("release")[5], "DIFFERS (intended: names the build)");
    assert_eq!(field("release_length")[3..6], ["10", "11", "DIFFERS"]);
    assert_eq!(field("config_normalised_sha256")[5], "DIFFERS");
    assert_eq!(field("patches")[5], "DIFFERS (intended: the patch)");
    assert_eq!(field("kbuild_user")[5], "PASS");
    let report = std::fs::read_to_string(dir.join("report.txt")).expect("report");
    let flat = report.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "BUILDS DIFFER beyond the intended patch: patched against original: release_length (10 vs 11), config_normalised_sha256 ("
        ),
        "{report}"
    );
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("readme");
    assert!(readme.contains("`matched-build.tsv`"), "{readme}");
}
