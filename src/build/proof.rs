//! Proving, after a boot, that the build running is the one aba installed: the version
//! string of `/proc/version` names the image's build (release, builder, build line), and
//! where the build's `.config` is known, the boot's own config (`/proc/config.gz`, else
//! `/boot/config-<release>`) has its SHA-256. A mismatch fails the point like a wrong
//! release: no sample is attributed to a build that did not run.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{record::KernelBuild, version::KernelVersion};
use crate::{
    kernel::proof::ProofFailure,
    target::transport::{Transport, TransportError},
};

/// Reads `/proc/version` and the SHA-256 of the boot's config, in one round trip.
const BUILD_FACTS: &str = "cat /proc/version; r=$(uname -r); if [ -r /proc/config.gz ]; then printf 'config /proc/config.gz %s\\n' \"$(zcat /proc/config.gz | sha256sum)\"; elif [ -r \"/boot/config-$r\" ]; then printf 'config /boot/config-%s %s\\n' \"$r\" \"$(sha256sum < \"/boot/config-$r\")\"; else echo 'config none'; fi";

/// How a boot's config compared with the build's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "config", rename_all = "snake_case")]
pub enum ConfigProof {
    /// The boot's config (read from `source`) has the build's SHA-256.
    Matched {
        /// `/proc/config.gz` or `/boot/config-<release>`.
        source: String,
    },
    /// The builds file names no config: nothing to compare.
    NotRecorded,
    /// The target shows no config of the running kernel (no `CONFIG_IKCONFIG_PROC`, no
    /// `/boot/config-<release>`): the config is not proven, and the journal says so.
    Unavailable,
}

impl std::fmt::Display for ConfigProof {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigProof::Matched { source } => write!(f, "config matched {source}"),
            ConfigProof::NotRecorded => f.write_str("config not recorded"),
            ConfigProof::Unavailable => f.write_str("config not shown by the target"),
        }
    }
}

/// What proved a build, for the journal's `build_proven` record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildProof {
    /// `/proc/version` of the boot.
    pub version: String,
    /// The config's comparison.
    #[serde(flatten)]
    pub config: ConfigProof,
}

/// Why the build facts could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BuildFactsError {
    /// The transport failed.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The command printed something else.
    #[error("cannot read the build of the running kernel: `cat /proc/version; …` printed {0:?}")]
    Garbled(String),
}

/// What the running boot says of its build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildFacts {
    /// `/proc/version`, trimmed.
    pub version: String,
    /// Where its config was read and its SHA-256, if it has one.
    pub config: Option<(String, String)>,
}

/// Reads the running boot's build facts.
pub fn read(transport: &mut dyn Transport) -> Result<BuildFacts, BuildFactsError> {
    let out = transport.exec(BUILD_FACTS, Duration::from_secs(60))?;
    let text = out.stdout_text();
    let garbled = || BuildFactsError::Garbled(format!("{text}{}", out.stderr_text()));
    if !out.outcome.success() {
        return Err(garbled());
    }
    let mut lines = text.lines();
    let version = lines.next().ok_or_else(garbled)?.trim().to_owned();
    let config = lines.next().ok_or_else(garbled)?;
    let config = match config.strip_prefix("config ") {
        Some("none") => None,
        Some(rest) => {
            let mut words = rest.split_whitespace();
            match (words.next(), words.next()) {
                (Some(source), Some(sha)) if sha.len() == 64 => {
                    Some((source.to_owned(), sha.to_owned()))
                }
                _ => return Err(garbled()),
            }
        }
        None => return Err(garbled()),
    };
    Ok(BuildFacts { version, config })
}

/// Checks `facts` against `build`.
pub fn prove(facts: &BuildFacts, build: &KernelBuild) -> Result<BuildProof, ProofFailure> {
    let wrong = || ProofFailure::WrongBuild {
        expected: build.version.to_string(),
        found: facts.version.clone(),
    };
    let running = KernelVersion::parse_proc(&facts.version).map_err(|_| wrong())?;
    if !build.version.same_build(&running) {
        return Err(wrong());
    }
    let config = match (&build.config, &facts.config) {
        (None, _) => ConfigProof::NotRecorded,
        (Some(_), None) => ConfigProof::Unavailable,
        (Some(want), Some((source, sha))) if *sha == want.sha256 => ConfigProof::Matched {
            source: source.clone(),
        },
        (Some(want), Some((source, sha))) => {
            return Err(ProofFailure::WrongConfig {
                read_from: source.clone(),
                expected: want.sha256.clone(),
                found: sha.clone(),
                config: want.path.clone(),
            });
        }
    };
    Ok(BuildProof {
        version: facts.version.clone(),
        config,
    })
}

#[cfg(test)]
mod tests {
    use super::{BuildFacts, ConfigProof, prove};
    use crate::{
        build::{
            record::{HostFile, KernelBuild},
            version::KernelVersion,
        },
        kernel::proof::ProofFailure,
    };

    const RUNNING: &str =
        "Linux version 6.1.158-aba-lab (root@b) (gcc 12.2.0) #2 SMP Thu Dec  3 10:12:54 UTC 2026";

    fn build(config: Option<&str>) -> KernelBuild {
        let file = |sha: &str| HostFile {
            path: "/b/x".into(),
            sha256: sha.into(),
            bytes: 1,
        };
        KernelBuild {
            at: "b.toml:2:10".into(),
            version: KernelVersion::parse_proc(RUNNING).expect("valid"),
            image: file("i"),
            initrd: None,
            modules: None,
            config: config.map(file),
            install_dir: "/tmp/aba/kernels/patched-0123456789ab".into(),
            source: None,
            patches: vec![],
            built: None,
            made_with: None,
        }
    }

    fn facts(version: &str, config: Option<&str>) -> BuildFacts {
        BuildFacts {
            version: version.into(),
            config: config.map(|c| ("/proc/config.gz".to_owned(), c.to_owned())),
        }
    }

    #[test]
    fn the_build_that_runs_is_proven_by_its_version_string_and_config() {
        let sha = "a".repeat(64);
        let proof = prove(&facts(RUNNING, Some(&sha)), &build(Some(&sha))).expect("proven");
        assert_eq!(
            proof.config,
            ConfigProof::Matched {
                source: "/proc/config.gz".into()
            }
        );
        let proof = prove(&facts(RUNNING, None), &build(Some(&sha))).expect("proven");
        assert_eq!(proof.config, ConfigProof::Unavailable);
        let proof = prove(&facts(RUNNING, Some(&sha)), &build(None)).expect("proven");
        assert_eq!(proof.config, ConfigProof::NotRecorded);
    }

    #[test]
    fn another_build_of_the_same_release_is_refused() {
        let stale = RUNNING.replace("#2 SMP Thu Dec  3 10:12:54", "#1 SMP Thu Dec  3 09:58:10");
        let err = prove(&facts(&stale, None), &build(None)).expect_err("another build");
        assert!(matches!(err, ProofFailure::WrongBuild { .. }));
        assert!(
            err.to_string().contains("#1 SMP Thu Dec  3 09:58:10"),
            "{err}"
        );
        let err = prove(
            &facts(RUNNING, Some(&"b".repeat(64))),
            &build(Some(&"a".repeat(64))),
        )
        .expect_err("another config");
        assert!(matches!(err, ProofFailure::WrongConfig { .. }), "{err}");
    }
}
