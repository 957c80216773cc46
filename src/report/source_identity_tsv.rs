//! `source-identity.tsv`: one row per kernel built on the host, saying where its numbers came
//! from: the image and its SHA-256, the version string the boots proved, the config, the git
//! tree (commit, `git describe`, dirty, SHA-256 of the difference), the patches and the build
//! step. Written only when the campaign booted such a kernel.

use serde::Serialize;

use crate::{analysis::Analysis, build::record::KernelBuild, report::tsv::to_tsv};

/// The file's name in a results directory.
pub const FILE: &str = "source-identity.tsv";

/// The columns.
pub const HEADER: [&str; 21] = [
    "kernel",
    "release",
    "version",
    "image",
    "image_sha256",
    "image_bytes",
    "initrd_sha256",
    "config",
    "config_sha256",
    "modules_sha256",
    "source_dir",
    "git_describe",
    "git_commit",
    "git_dirty",
    "git_diff_sha256",
    "patches",
    "build_command",
    "build_s",
    "build_log",
    "builds_file",
    "install_dir",
];

#[derive(Serialize)]
struct Row {
    kernel: String,
    release: String,
    version: String,
    image: String,
    image_sha256: String,
    image_bytes: String,
    initrd_sha256: String,
    config: String,
    config_sha256: String,
    modules_sha256: String,
    source_dir: String,
    git_describe: String,
    git_commit: String,
    git_dirty: String,
    git_diff_sha256: String,
    patches: String,
    build_command: String,
    build_s: String,
    build_log: String,
    builds_file: String,
    install_dir: String,
}

/// The kernels of `analysis` built on the host, with their labels.
pub fn builds(analysis: &Analysis) -> Vec<(&str, &KernelBuild)> {
    analysis
        .kernels
        .iter()
        .filter_map(|k| {
            let build = k.bound.as_ref()?.build.as_deref()?;
            Some((k.label.as_str(), build))
        })
        .collect()
}

/// The file, or `None` when no kernel was built on the host.
#[must_use]
pub fn render(analysis: &Analysis) -> Option<Vec<u8>> {
    let builds = builds(analysis);
    if builds.is_empty() {
        return None;
    }
    let rows: Vec<Row> = builds
        .into_iter()
        .map(|(label, b)| {
            let source = b.source.as_ref();
            Row {
                kernel: label.to_owned(),
                release: b.version.release.clone(),
                version: b.version.to_string(),
                image: b.image.path.clone(),
                image_sha256: b.image.sha256.clone(),
                image_bytes: b.image.bytes.to_string(),
                initrd_sha256: b
                    .initrd
                    .as_ref()
                    .map(|f| f.sha256.clone())
                    .unwrap_or_default(),
                config: b
                    .config
                    .as_ref()
                    .map(|f| f.path.clone())
                    .unwrap_or_default(),
                config_sha256: b
                    .config
                    .as_ref()
                    .map(|f| f.sha256.clone())
                    .unwrap_or_default(),
                modules_sha256: b
                    .modules
                    .as_ref()
                    .map(|m| m.sha256.clone())
                    .unwrap_or_default(),
                source_dir: source.map(|s| s.dir.clone()).unwrap_or_default(),
                git_describe: source.map(|s| s.describe.clone()).unwrap_or_default(),
                git_commit: source.map(|s| s.commit.clone()).unwrap_or_default(),
                git_dirty: source
                    .map(|s| if s.dirty { "yes" } else { "no" }.to_owned())
                    .unwrap_or_default(),
                git_diff_sha256: source.map(|s| s.diff_sha256.clone()).unwrap_or_default(),
                patches: b
                    .patches
                    .iter()
                    .map(|p| format!("{}={}", p.path, p.sha256))
                    .collect::<Vec<_>>()
                    .join(";"),
                build_command: b
                    .built
                    .as_ref()
                    .map(|r| r.command.clone())
                    .unwrap_or_default(),
                build_s: b
                    .built
                    .as_ref()
                    .map(|r| format!("{:.1}", r.millis as f64 / 1000.0))
                    .unwrap_or_default(),
                build_log: b.built.as_ref().map(|r| r.log.clone()).unwrap_or_default(),
                builds_file: b.at.clone(),
                install_dir: b.install_dir.clone(),
            }
        })
        .collect();
    Some(to_tsv(&HEADER, &rows))
}
