//! Proving which kernel booted: `boot_id` changed, `uname -r` is the expected release, every
//! requested parameter is in `/proc/cmdline`. No sample is ever attributed to a boot that
//! failed this proof.

use std::time::Duration;

use crate::target::transport::{Transport, TransportError};

/// What the target says about its current boot; journaled as the boot that answered when a
/// proof refused it (`point_failed`'s `answered`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BootFacts {
    /// `/proc/sys/kernel/random/boot_id`: new on every boot, kexec included.
    pub boot_id: String,
    /// `uname -r`.
    pub release: String,
    /// `/proc/cmdline`, trimmed.
    pub cmdline: String,
}

/// The command that reads [`BootFacts`] in one round trip.
const FACTS: &str = "cat /proc/sys/kernel/random/boot_id; uname -r; cat /proc/cmdline";

/// Why facts could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FactsError {
    /// The transport failed.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The command ran but printed something else.
    #[error("cannot read boot facts: `{FACTS}` printed {0:?}")]
    Garbled(String),
}

/// Reads the current boot's facts.
pub fn read_facts(transport: &mut dyn Transport) -> Result<BootFacts, FactsError> {
    let out = transport.exec(FACTS, Duration::from_secs(30))?;
    let text = out.stdout_text();
    let mut lines = text.lines();
    match (
        lines.next(),
        lines.next(),
        lines.next(),
        out.outcome.success(),
    ) {
        (Some(id), Some(release), Some(cmdline), true) if !id.trim().is_empty() => Ok(BootFacts {
            boot_id: id.trim().to_owned(),
            release: release.trim().to_owned(),
            cmdline: cmdline.trim().to_owned(),
        }),
        _ => Err(FactsError::Garbled(format!("{text}{}", out.stderr_text()))),
    }
}

/// Why a boot is not the one the point asked for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProofFailure {
    /// The boot_id did not change: the switch did not happen (or the old kernel still answers).
    #[error("boot_id {boot_id} did not change: the target did not reboot")]
    SameBoot {
        /// The unchanged boot_id.
        boot_id: String,
    },
    /// Another kernel booted, typically the default one after the requested kernel failed.
    #[error("the target runs {found}, not {expected} (uname -r)")]
    WrongRelease {
        /// Expected release.
        expected: String,
        /// What `uname -r` printed.
        found: String,
    },
    /// The release is right but another build of it runs (a stale install, a rebuilt image
    /// the boot loader still has an older copy of): its `/proc/version` names another build.
    #[error(
        "another build of the release runs: /proc/version says `{found}`, the installed image is `{expected}`"
    )]
    WrongBuild {
        /// The image's version string.
        expected: String,
        /// `/proc/version`.
        found: String,
    },
    /// The running kernel's config is not the build's `.config`.
    #[error(
        "the running kernel's config ({read_from}, SHA-256 {found}) is not the build's {config} (SHA-256 {expected})"
    )]
    WrongConfig {
        /// Where the running config was read.
        read_from: String,
        /// The build's config's hash.
        expected: String,
        /// The running config's hash.
        found: String,
        /// The build's config file.
        config: String,
    },
    /// Requested parameters are missing from `/proc/cmdline`.
    #[error("/proc/cmdline lacks {}: `{cmdline}`", missing.join(" "))]
    MissingParams {
        /// The missing parameters.
        missing: Vec<String>,
        /// The actual command line.
        cmdline: String,
    },
}

/// Checks `facts` against what the point requested. `previous_boot_id` is the boot of the
/// previous point when a fresh boot is required, else `None`.
pub fn prove(
    facts: &BootFacts,
    expected_release: &str,
    params: &[String],
    previous_boot_id: Option<&str>,
) -> Result<(), ProofFailure> {
    if previous_boot_id == Some(facts.boot_id.as_str()) {
        return Err(ProofFailure::SameBoot {
            boot_id: facts.boot_id.clone(),
        });
    }
    if facts.release != expected_release {
        return Err(ProofFailure::WrongRelease {
            expected: expected_release.to_owned(),
            found: facts.release.clone(),
        });
    }
    let present: Vec<&str> = facts.cmdline.split_whitespace().collect();
    let missing: Vec<String> = params
        .iter()
        .filter(|p| !present.contains(&p.as_str()))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return Err(ProofFailure::MissingParams {
            missing,
            cmdline: facts.cmdline.clone(),
        });
    }
    Ok(())
}

/// `cmdline` without the boot loader's `BOOT_IMAGE=` and `initrd=`, and without any parameter
/// whose name `params` sets: with no `params`, the base every kexec or BLS command line starts
/// from; with a point's parameters, that base as the point's kernel gets it.
pub fn base_cmdline(cmdline: &str, recipe_params: &[String]) -> String {
    let name = |p: &str| p.split_once('=').map_or(p, |(k, _)| k).to_owned();
    let ours: Vec<String> = recipe_params.iter().map(|p| name(p)).collect();
    cmdline
        .split_whitespace()
        .filter(|p| !p.starts_with("BOOT_IMAGE=") && !p.starts_with("initrd="))
        .filter(|p| !ours.contains(&name(p)))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::{BootFacts, ProofFailure, base_cmdline, prove};

    fn facts() -> BootFacts {
        BootFacts {
            boot_id: "b2".into(),
            release: "6.1.0-50-cloud-amd64".into(),
            cmdline: "console=ttyS0,115200 panic=-1 quiet aba.test=1".into(),
        }
    }

    #[test]
    fn a_matching_fresh_boot_is_proven() {
        let params = vec!["quiet".to_owned(), "aba.test=1".to_owned()];
        assert_eq!(
            prove(&facts(), "6.1.0-50-cloud-amd64", &params, Some("b1")),
            Ok(())
        );
    }

    #[test]
    fn each_mismatch_is_named() {
        assert!(matches!(
            prove(&facts(), "6.1.0-50-cloud-amd64", &[], Some("b2")),
            Err(ProofFailure::SameBoot { .. })
        ));
        assert!(matches!(
            prove(&facts(), "6.1.0-47-cloud-amd64", &[], None),
            Err(ProofFailure::WrongRelease { .. })
        ));
        let err = prove(
            &facts(),
            "6.1.0-50-cloud-amd64",
            &["aba.test".to_owned()],
            None,
        )
        .expect_err("a prefix is not the parameter");
        assert_eq!(
            err.to_string(),
            "/proc/cmdline lacks aba.test: `console=ttyS0,115200 panic=-1 quiet aba.test=1`"
        );
    }

    #[test]
    fn base_cmdline_drops_boot_loader_and_recipe_parameters() {
        assert_eq!(
            base_cmdline(
                "BOOT_IMAGE=/vmlinuz-6.1 root=/dev/sda1 ro initrd=/initrd quiet",
                &[]
            ),
            "root=/dev/sda1 ro quiet"
        );
        let recipe = vec![
            "aba.kernel=b".to_owned(),
            "mitigations=off".to_owned(),
            "quiet".to_owned(),
        ];
        assert_eq!(
            base_cmdline(
                "console=ttyS0 mitigations=auto quiet aba.kernel=a panic=-1",
                &recipe
            ),
            "console=ttyS0 panic=-1"
        );
    }
}
