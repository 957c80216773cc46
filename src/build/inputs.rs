//! What a kernel built on the host was made with, recorded when the campaign starts, so that
//! the builds of a campaign can be compared field by field (`matched-build.tsv`, issue 33
//! item 3): the compiler and the linker (each with where it was read), the normalised
//! config's SHA-256, the Kbuild variables of aba's environment, the source snapshot of a tree
//! that is not git, and the Message-ID each patch file carries.
//!
//! The Kbuild metadata that went into the kernel (user, host, number, time) is the image's
//! version string, already in the record ([`super::version::KernelVersion`]); the
//! environment's `KBUILD_BUILD_*` are kept beside it because a build command inherits them.

use std::{
    collections::BTreeMap,
    process::{Command, Stdio},
};

use serde::{Deserialize, Serialize};

use super::{
    file::BuildSpec,
    kconfig,
    record::{FileError, read_file},
    version::KernelVersion,
};

/// Where a recorded value was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadFrom {
    /// The build's `.config` (`CONFIG_CC_VERSION_TEXT`, `CONFIG_LD_VERSION`): what Kbuild used.
    Config,
    /// The image's version string (an uncompressed image's banner).
    Image,
    /// `gcc --version` or `ld --version` on this host when the campaign started: the tools
    /// on `PATH`, not necessarily the ones the build used.
    Host,
    /// `/proc/version` of the running kernel on the target.
    ProcVersion,
    /// The config of the running kernel on the target (`/proc/config.gz`,
    /// `/boot/config-<release>`).
    TargetConfig,
}

impl ReadFrom {
    /// In words, for the reports.
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            ReadFrom::Config => "the build's .config",
            ReadFrom::Image => "the image's version string",
            ReadFrom::Host => "this host's PATH",
            ReadFrom::ProcVersion => "/proc/version",
            ReadFrom::TargetConfig => "the target's config",
        }
    }
}

/// A value and where it was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stated {
    /// The value.
    pub value: String,
    /// Where it was read.
    pub from: ReadFrom,
}

/// The SHA-256 of a source tree that is not a git checkout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceSnapshot {
    /// Hex SHA-256 over its files (see [`super::source::snapshot`]).
    pub sha256: String,
    /// How many files it covers.
    pub files: u64,
}

/// A patch file's `Message-ID` header (the mail it came from, for `b4` and lore).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatchMessage {
    /// The patch file, as the record's `patches` name it.
    pub patch: String,
    /// The `<…>` identifier.
    pub message_id: String,
}

/// What a build was made with (every field optional: a journal of an older aba has none).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildInputs {
    /// The compiler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiler: Option<Stated>,
    /// The linker (binutils' `ld` or LLD), as `GNU ld 2.40`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linker: Option<Stated>,
    /// Hex SHA-256 of the normalised `.config` ([`kconfig::normalise`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_normalised_sha256: Option<String>,
    /// `KBUILD_BUILD_USER`, `KBUILD_BUILD_HOST`, `KBUILD_BUILD_TIMESTAMP`,
    /// `KBUILD_BUILD_VERSION` as aba's environment had them (the set ones only).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub kbuild_env: BTreeMap<String, String>,
    /// The source snapshot, when `dir` is given and is not a git tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_snapshot: Option<SourceSnapshot>,
    /// The patches' Message-IDs, for those that carry one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patch_messages: Vec<PatchMessage>,
}

/// The Kbuild variables a build command inherits from aba.
pub const KBUILD_VARIABLES: [&str; 4] = [
    "KBUILD_BUILD_USER",
    "KBUILD_BUILD_HOST",
    "KBUILD_BUILD_TIMESTAMP",
    "KBUILD_BUILD_VERSION",
];

/// Records what the build of `spec` (whose image says `version`) was made with; `config` is
/// the `.config`'s text when the builds file names one.
pub fn record(
    spec: &BuildSpec,
    version: &KernelVersion,
    config: Option<&str>,
) -> Result<BuildInputs, FileError> {
    let banner = version
        .compiler
        .as_deref()
        .map(kconfig::toolchain_of_banner);
    let compiler = config
        .and_then(kconfig::compiler)
        .map(|value| Stated {
            value,
            from: ReadFrom::Config,
        })
        .or_else(|| {
            banner.as_ref().map(|(cc, _)| Stated {
                value: cc.clone(),
                from: ReadFrom::Image,
            })
        })
        .or_else(|| {
            host_tool("gcc").map(|value| Stated {
                value,
                from: ReadFrom::Host,
            })
        });
    let linker = config
        .and_then(kconfig::linker)
        .map(|value| Stated {
            value,
            from: ReadFrom::Config,
        })
        .or_else(|| {
            banner
                .as_ref()
                .and_then(|(_, ld)| ld.clone())
                .map(|value| Stated {
                    value,
                    from: ReadFrom::Image,
                })
        })
        .or_else(|| {
            host_tool("ld").map(|line| Stated {
                value: kconfig::linker_of_line(&line),
                from: ReadFrom::Host,
            })
        });
    let kbuild_env = KBUILD_VARIABLES
        .iter()
        .filter_map(|name| {
            let value = std::env::var(name).ok()?;
            Some((
                (*name).to_owned(),
                crate::text::one_line(&value).into_owned(),
            ))
        })
        .collect();
    let mut patch_messages = Vec::new();
    for patch in &spec.patches {
        let data = read_file(patch, "patch")?;
        if let Some(message_id) = message_id(&String::from_utf8_lossy(&data)) {
            patch_messages.push(PatchMessage {
                patch: patch.display().to_string(),
                message_id,
            });
        }
    }
    Ok(BuildInputs {
        compiler,
        linker,
        config_normalised_sha256: config.map(kconfig::normalised_sha256),
        kbuild_env,
        source_snapshot: None,
        patch_messages,
    })
}

/// The first line of `<tool> --version` on this host, when it runs.
fn host_tool(tool: &str) -> Option<String> {
    let out = Command::new(tool)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next()?.trim();
    (out.status.success() && !line.is_empty()).then(|| crate::text::one_line(line).into_owned())
}

/// The `Message-ID` of a patch file: the header of its mail (the lines before the first
/// blank one, as `git format-patch --thread`, `b4 am` and a mailbox write it), folded lines
/// unfolded; `None` without one.
#[must_use]
pub fn message_id(text: &str) -> Option<String> {
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim().is_empty() {
            return None;
        }
        // An mbox separator, or the continuation of a folded field.
        if line.starts_with("From ") || line.starts_with([' ', '\t']) {
            continue;
        }
        // A line that is no header field ends the header (a plain diff has none).
        let (name, value) = line
            .split_once(':')
            .filter(|(name, _)| !name.is_empty() && !name.contains(char::is_whitespace))?;
        if !name.eq_ignore_ascii_case("message-id") {
            continue;
        }
        let mut value = value.trim().to_owned();
        while lines
            .peek()
            .is_some_and(|l| l.starts_with([' ', '\t']) && !l.trim().is_empty())
        {
            value.push_str(lines.next().unwrap_or_default().trim());
        }
        let start = value.find('<')?;
        let end = start + value[start..].find('>')?;
        let id = &value[start..=end];
        return (id.len() > 2 && id.len() <= 998 && !id.chars().any(char::is_control))
            .then(|| id.to_owned());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::message_id;

    #[test]
    fn a_patch_mail_names_its_message_id_and_a_plain_diff_does_not() {
        let mail = "From 1234 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.org>\nMessage-Id: <20260101.1-x@example.org>\nSubject: [PATCH] sched: fix\n\nbody\nMessage-ID: <not@header>\n";
        assert_eq!(
            message_id(mail).as_deref(),
            Some("<20260101.1-x@example.org>")
        );
        let folded = "Subject: a long\n subject\nMessage-ID:\n <folded@example.org>\n\n";
        assert_eq!(message_id(folded).as_deref(), Some("<folded@example.org>"));
        assert_eq!(message_id("--- a/x\n+++ b/x\n"), None);
        assert_eq!(message_id("Subject: x\n\nMessage-ID: <in@body>\n"), None);
        assert_eq!(message_id("Message-ID: none\n"), None);
    }
}
