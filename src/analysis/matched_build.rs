//! Matched builds (issue 33, item 3): every kernel of a campaign compared with the baseline,
//! field by field, on what it was built with (compiler, linker, normalised config, Kbuild
//! metadata, release length) and what it was built from (source, patches), each difference
//! marked as intended (the patch, the source, a name), expected (a build's number and time)
//! or not: a difference of the last kind means the comparison measures more than the patch.
//!
//! A kernel built on the host is read from its build record (the journal's `kernels`
//! record, [`crate::build::record::KernelBuild`]); a released kernel from its first done
//! point's environment record (`/proc/version` and the target's config). Pure: the caller
//! gives both; a field either side lacks (an older aba, a kernel without a config) is `not
//! recorded`, never guessed.

use serde::{Serialize, Serializer};

use crate::{
    build::{
        inputs::ReadFrom,
        kconfig::{self, Kbuild},
        record::KernelBuild,
        version::KernelVersion,
    },
    results::journal::Facts,
};

/// The environment record's facts this module reads (written by
/// `campaign::environment`): the normalised config's SHA-256 and the config's toolchain lines.
pub const CONFIG_NORMALISED_FACT: &str = "config_normalised_sha256";
/// The config's `CONFIG_CC_VERSION_TEXT`, `CONFIG_LD_*` and `CONFIG_LLD_VERSION` lines.
pub const TOOLCHAIN_FACT: &str = "toolchain";

/// One value of a kernel, with where it was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Value {
    /// The value, as the table shows it.
    pub text: String,
    /// Where it was read, in words.
    pub from: &'static str,
}

impl Value {
    /// The value on one line, a SHA-256 cut to its first 12 digits (for text, not tables).
    #[must_use]
    pub fn short(&self) -> String {
        let text = crate::text::one_line(&self.text);
        if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            format!("{}…", &text[..12])
        } else {
            text.into_owned()
        }
    }
}

/// How a kernel's field compares with the baseline's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Equal.
    Pass,
    /// Different, and nothing in the experiment asks for it.
    Differs,
    /// Different by design: what the kernel is (the patch, its source, its name).
    Intended(&'static str),
    /// Different in every pair of builds (a build's number and time), harmless.
    Expected(&'static str),
    /// One side does not say.
    NotRecorded,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Pass => f.write_str("PASS"),
            Status::Differs => f.write_str("DIFFERS"),
            Status::Intended(why) => write!(f, "DIFFERS (intended: {why})"),
            Status::Expected(why) => write!(f, "DIFFERS (expected: {why})"),
            Status::NotRecorded => f.write_str("not recorded"),
        }
    }
}

impl Serialize for Status {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One field of one kernel against the baseline.
#[derive(Clone, Debug, Serialize)]
pub struct MatchRow {
    /// The kernel compared.
    pub kernel: String,
    /// The field (`compiler`, `config_normalised_sha256`…).
    pub field: &'static str,
    /// The baseline's value.
    pub baseline: Option<Value>,
    /// The kernel's value.
    pub value: Option<Value>,
    /// How they compare.
    pub status: Status,
}

/// Every kernel against the baseline; no rows when no kernel could be compared.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MatchedBuilds {
    /// The baseline kernel.
    pub baseline: String,
    /// The rows, kernel by kernel in recipe order, fields in [`FIELDS`] order.
    pub rows: Vec<MatchRow>,
}

/// The fields, in table order.
pub const FIELDS: [&str; 12] = [
    "release",
    "release_length",
    "compiler",
    "linker",
    "config_normalised_sha256",
    "kbuild_user",
    "kbuild_host",
    "kbuild_number",
    "kbuild_timestamp",
    "source",
    "patches",
    "patch_message_ids",
];

// Each field's place in [`FIELDS`].
const RELEASE: usize = 0;
const RELEASE_LENGTH: usize = 1;
const COMPILER: usize = 2;
const LINKER: usize = 3;
const CONFIG: usize = 4;
const KBUILD_USER: usize = 5;
const KBUILD_HOST: usize = 6;
const KBUILD_NUMBER: usize = 7;
const KBUILD_TIMESTAMP: usize = 8;
const SOURCE: usize = 9;
const PATCHES: usize = 10;
const PATCH_MESSAGE_IDS: usize = 11;

/// What one kernel says of its build.
#[derive(Clone, Debug, Default)]
pub struct BuildSide {
    /// Whether it was built on the host (else a released kernel read on its target).
    pub built_here: bool,
    /// One entry per [`FIELDS`] entry.
    values: Vec<Option<Value>>,
}

impl BuildSide {
    /// The side of a kernel built on the host, from its record.
    #[must_use]
    pub fn of_build(build: &KernelBuild) -> BuildSide {
        let image = "the image's version string";
        let made = build.made_with.as_ref();
        let stated = |s: &crate::build::inputs::Stated| Value {
            text: s.value.clone(),
            from: s.from.words(),
        };
        let source = build
            .source
            .as_ref()
            .map(|s| Value {
                text: if s.dirty {
                    format!("git {} + diff {}", s.commit, s.diff_sha256)
                } else {
                    format!("git {}", s.commit)
                },
                from: "git in the build's tree",
            })
            .or_else(|| {
                made.and_then(|m| m.source_snapshot.as_ref())
                    .map(|s| Value {
                        text: format!("snapshot {} ({} files)", s.sha256, s.files),
                        from: "the build's tree",
                    })
            });
        let patches = Value {
            text: if build.patches.is_empty() {
                "none".to_owned()
            } else {
                build
                    .patches
                    .iter()
                    .map(|p| format!("{}={}", base_name(&p.path), p.sha256))
                    .collect::<Vec<_>>()
                    .join(" ")
            },
            from: "the builds file",
        };
        let messages = made.map(|m| Value {
            text: if m.patch_messages.is_empty() {
                "none".to_owned()
            } else {
                m.patch_messages
                    .iter()
                    .map(|p| p.message_id.clone())
                    .collect::<Vec<_>>()
                    .join(" ")
            },
            from: "the patch files",
        });
        let mut side = version_side(&build.version, image);
        side.built_here = true;
        side.values[COMPILER] = made.and_then(|m| m.compiler.as_ref()).map(stated);
        side.values[LINKER] = made.and_then(|m| m.linker.as_ref()).map(stated);
        side.values[CONFIG] = made
            .and_then(|m| m.config_normalised_sha256.clone())
            .map(|text| Value {
                text,
                from: ReadFrom::Config.words(),
            });
        side.values[SOURCE] = source;
        side.values[PATCHES] = Some(patches);
        side.values[PATCH_MESSAGE_IDS] = messages;
        side
    }

    /// The side of a released kernel, from an environment record of one of its boots; `None`
    /// when the record has no `/proc/version`.
    #[must_use]
    pub fn of_facts(facts: &Facts) -> Option<BuildSide> {
        let version = KernelVersion::parse_proc(facts.get("version")?).ok()?;
        let mut side = version_side(&version, ReadFrom::ProcVersion.words());
        let banner = version
            .compiler
            .as_deref()
            .map(kconfig::toolchain_of_banner);
        let toolchain = facts.get(TOOLCHAIN_FACT).map(String::as_str);
        let config = |text: Option<String>| {
            text.map(|text| Value {
                text,
                from: ReadFrom::TargetConfig.words(),
            })
        };
        let proc = |text: Option<String>| {
            text.map(|text| Value {
                text,
                from: ReadFrom::ProcVersion.words(),
            })
        };
        side.values[COMPILER] = config(toolchain.and_then(kconfig::compiler))
            .or_else(|| proc(banner.as_ref().map(|(cc, _)| cc.clone())));
        side.values[LINKER] = config(toolchain.and_then(kconfig::linker))
            .or_else(|| proc(banner.and_then(|(_, ld)| ld)));
        side.values[CONFIG] = config(
            facts
                .get(CONFIG_NORMALISED_FACT)
                .filter(|s| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()))
                .cloned(),
        );
        Some(side)
    }
}

/// The fields a version string gives: release, its length, the Kbuild metadata.
fn version_side(version: &KernelVersion, from: &'static str) -> BuildSide {
    let Kbuild {
        user,
        host,
        number,
        timestamp,
    } = kconfig::kbuild(&version.built_by, &version.build);
    let value = |text: String| {
        (!text.is_empty()).then(|| Value {
            text: crate::text::one_line(&text).into_owned(),
            from,
        })
    };
    let mut values = vec![None; FIELDS.len()];
    values[RELEASE] = value(version.release.clone());
    values[RELEASE_LENGTH] = value(version.release.len().to_string());
    values[KBUILD_USER] = value(user);
    values[KBUILD_HOST] = value(host);
    values[KBUILD_NUMBER] = value(number);
    values[KBUILD_TIMESTAMP] = value(timestamp);
    BuildSide {
        built_here: false,
        values,
    }
}

/// The last component of a host path.
fn base_name(path: &str) -> &str {
    path.rsplit('/').find(|c| !c.is_empty()).unwrap_or(path)
}

/// Why a differing field is fine, or `None` when it is not: `patched` says whether either
/// kernel has patches, `built` whether both were built on the host.
fn allowed(field: &str, baseline: &str, value: &str, patched: bool, built: bool) -> Status {
    let the_source = if patched {
        "the patch"
    } else {
        "the kernel's source"
    };
    match field {
        "release" if !built => Status::Intended("another release"),
        // Same version, another local version: a name. Another version: another source.
        "release" => {
            let base = |r: &str| r.split('-').next().unwrap_or(r).to_owned();
            if base(baseline) == base(value) {
                Status::Intended("names the build")
            } else {
                Status::Intended("the kernel's source")
            }
        }
        "kbuild_number" => Status::Expected("numbers the build"),
        "kbuild_timestamp" => Status::Expected("the build's time"),
        "source" => Status::Intended(the_source),
        "patches" | "patch_message_ids" => Status::Intended("the patch"),
        _ => Status::Differs,
    }
}

impl MatchedBuilds {
    /// Compares each of `kernels` (label and side, recipe order) with `baseline`'s side.
    #[must_use]
    pub fn compare(baseline: &str, kernels: &[(String, Option<BuildSide>)]) -> MatchedBuilds {
        let mut matched = MatchedBuilds {
            baseline: baseline.to_owned(),
            rows: Vec::new(),
        };
        let Some(Some(base)) = kernels
            .iter()
            .find(|(label, _)| label == baseline)
            .map(|(_, side)| side)
        else {
            return matched;
        };
        for (label, side) in kernels {
            let Some(side) = side.as_ref().filter(|_| label != baseline) else {
                continue;
            };
            let patched = [base, side]
                .iter()
                .any(|s| s.values[PATCHES].as_ref().is_some_and(|v| v.text != "none"));
            let built = base.built_here && side.built_here;
            for (i, field) in FIELDS.iter().enumerate() {
                let (b, v) = (&base.values[i], &side.values[i]);
                let status = match (b, v) {
                    (Some(b), Some(v)) if b.text == v.text => Status::Pass,
                    (Some(b), Some(v)) => allowed(field, &b.text, &v.text, patched, built),
                    _ => Status::NotRecorded,
                };
                matched.rows.push(MatchRow {
                    kernel: label.clone(),
                    field,
                    baseline: b.clone(),
                    value: v.clone(),
                    status,
                });
            }
        }
        matched
    }

    /// The rows that differ beyond what the experiment intends, kernel by kernel.
    #[must_use]
    pub fn beyond_intended(&self) -> Vec<(&str, Vec<&MatchRow>)> {
        let mut out: Vec<(&str, Vec<&MatchRow>)> = Vec::new();
        for row in self.rows.iter().filter(|r| r.status == Status::Differs) {
            match out.iter_mut().find(|(k, _)| *k == row.kernel) {
                Some((_, rows)) => rows.push(row),
                None => out.push((&row.kernel, vec![row])),
            }
        }
        out
    }

    /// The kernels compared, in order.
    #[must_use]
    pub fn kernels(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for row in &self.rows {
            if !out.contains(&row.kernel.as_str()) {
                out.push(&row.kernel);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::{BuildSide, MatchedBuilds, Status};
    use crate::{
        analysis::testkit::host_build, build::record::KernelBuild, results::journal::Facts,
    };

    fn build(number: u32, config: &str, patch: Option<&str>) -> KernelBuild {
        host_build(
            number,
            config,
            "gcc (Debian 12.2.0-14+deb12u1) 12.2.0",
            patch,
        )
    }

    fn statuses(m: &MatchedBuilds, kernel: &str) -> Vec<(String, String)> {
        m.rows
            .iter()
            .filter(|r| r.kernel == kernel)
            .map(|r| (r.field.to_owned(), r.status.to_string()))
            .collect()
    }

    #[test]
    fn the_patch_is_intended_and_another_config_is_not() {
        let sides = vec![
            (
                "original".to_owned(),
                Some(BuildSide::of_build(&build(1, "c", None))),
            ),
            (
                "patched".to_owned(),
                Some(BuildSide::of_build(&build(
                    2,
                    "c",
                    Some("/r/patched.patch"),
                ))),
            ),
            (
                "other".to_owned(),
                Some(BuildSide::of_build(&build(3, "d", None))),
            ),
        ];
        let m = MatchedBuilds::compare("original", &sides);
        let patched = statuses(&m, "patched");
        for (field, status) in [
            ("release", "PASS"),
            ("release_length", "PASS"),
            ("compiler", "PASS"),
            ("linker", "PASS"),
            ("config_normalised_sha256", "PASS"),
            ("kbuild_user", "PASS"),
            ("kbuild_host", "PASS"),
            ("kbuild_number", "DIFFERS (expected: numbers the build)"),
            ("kbuild_timestamp", "DIFFERS (expected: the build's time)"),
            ("source", "not recorded"),
            ("patches", "DIFFERS (intended: the patch)"),
            ("patch_message_ids", "DIFFERS (intended: the patch)"),
        ] {
            assert!(
                patched.contains(&(field.to_owned(), status.to_owned())),
                "{field}: {patched:?}"
            );
        }
        let beyond = m.beyond_intended();
        assert_eq!(beyond.len(), 1, "{beyond:?}");
        assert_eq!(beyond[0].0, "other");
        assert_eq!(beyond[0].1[0].field, "config_normalised_sha256");
        assert_eq!(m.kernels(), ["patched", "other"]);
    }

    #[test]
    fn a_released_kernel_is_read_from_its_environment_record() {
        let facts = |version: &str, config: &str| -> Facts {
            [
                ("version", version.to_owned()),
                ("config_normalised_sha256", config.repeat(64)),
                (
                    "toolchain",
                    "CONFIG_CC_VERSION_TEXT=\"gcc-12 (Debian 12.2.0-14) 12.2.0\"\nCONFIG_LD_IS_BFD=y\nCONFIG_LD_VERSION=24000".to_owned(),
                ),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect()
        };
        let a = BuildSide::of_facts(&facts(
            "Linux version 6.1.0-47-cloud-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1 (2025-11-09)",
            "a",
        ));
        let b = BuildSide::of_facts(&facts(
            "Linux version 6.1.0-50-cloud-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.164-1 (2026-01-10)",
            "b",
        ));
        let m = MatchedBuilds::compare(
            "a",
            &[
                ("a".to_owned(), a),
                ("b".to_owned(), b),
                ("c".to_owned(), None),
            ],
        );
        let b = statuses(&m, "b");
        for (field, status) in [
            ("release", "DIFFERS (intended: another release)"),
            ("release_length", "PASS"),
            ("compiler", "PASS"),
            ("linker", "PASS"),
            ("config_normalised_sha256", "DIFFERS"),
            ("kbuild_host", "PASS"),
            ("patches", "not recorded"),
        ] {
            assert!(
                b.contains(&(field.to_owned(), status.to_owned())),
                "{field}: {b:?}"
            );
        }
        let linker = m.rows.iter().find(|r| r.field == "linker").expect("row");
        assert_eq!(
            linker.value.as_ref().map(|v| (v.text.as_str(), v.from)),
            Some(("GNU ld 2.40", "the target's config"))
        );
        assert_eq!(m.kernels(), ["b"], "c has no record: not compared");
        // An environment record without /proc/version gives no side.
        assert!(BuildSide::of_facts(&Facts::new()).is_none());
        assert_eq!(Status::NotRecorded.to_string(), "not recorded");
    }
}
