//! What a campaign records of a kernel built on the host: the files aba installs with their
//! SHA-256, the version string the image embeds, the source it came from. The journal keeps
//! it in the kernel's entry of the `kernels` record, so that `aba resume` installs and proves
//! the very build the campaign started with, and the report can say where every number came
//! from (`source-identity.tsv`).

use std::{
    io::Read as _,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use thiserror::Error;

use super::version::{KernelVersion, VersionError};

/// The largest file aba reads into memory to install it (an image, an initrd, a modules
/// archive): uploads go from memory, and memory must stay bounded.
pub const MAX_INSTALL_BYTES: u64 = 1 << 30;

/// A file on this host, as it was when the campaign started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostFile {
    /// Its path on the host.
    pub path: String,
    /// Hex SHA-256 of its content.
    pub sha256: String,
    /// Its size.
    pub bytes: u64,
}

/// Modules to install under `/lib/modules/<release>`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostModules {
    /// The `INSTALL_MOD_PATH` folder, or the archive.
    pub path: String,
    /// True for a tar archive, false for a folder.
    pub archive: bool,
    /// Hex SHA-256: of the archive, or of the folder's files (their paths, sizes and
    /// contents, in name order).
    pub sha256: String,
    /// The archive's size, or the files' total.
    pub bytes: u64,
}

/// Where a build came from, when its build step ran in a git tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceIdentity {
    /// The tree.
    pub dir: String,
    /// `git describe --always --tags --dirty`.
    pub describe: String,
    /// `git rev-parse HEAD`.
    pub commit: String,
    /// Whether tracked files differed from the commit.
    pub dirty: bool,
    /// Hex SHA-256 of `git diff HEAD` (of the empty text when clean).
    pub diff_sha256: String,
}

/// A build step that ran for this campaign.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildRun {
    /// The command.
    pub command: String,
    /// How long it took, in milliseconds.
    pub millis: u64,
    /// Its log, relative to the results directory.
    pub log: String,
}

/// A kernel built on the host, as the campaign installs and proves it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelBuild {
    /// `builds-file:line:column` of its table.
    pub at: String,
    /// The version string its image embeds; the boot must show the same build.
    pub version: KernelVersion,
    /// The image.
    pub image: HostFile,
    /// The initrd aba installs with it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initrd: Option<HostFile>,
    /// The modules aba installs, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modules: Option<HostModules>,
    /// The `.config`, if known: the boot's own config must have its SHA-256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<HostFile>,
    /// The folder on the target aba installs the image and initrd into.
    pub install_dir: String,
    /// The source tree's identity, when it is a git tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceIdentity>,
    /// The patch files the build applies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<HostFile>,
    /// The build step, when it ran for this campaign.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub built: Option<BuildRun>,
    /// What it was made with (compiler, linker, normalised config…), for matched builds;
    /// absent from the journal of an older aba.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made_with: Option<super::inputs::BuildInputs>,
}

impl KernelBuild {
    /// The image's path on the target.
    pub fn target_image(&self) -> String {
        format!("{}/vmlinuz", self.install_dir)
    }

    /// The initrd's path on the target, when aba installs one.
    pub fn target_initrd(&self) -> Option<String> {
        self.initrd
            .as_ref()
            .map(|_| format!("{}/initrd.img", self.install_dir))
    }
}

/// A file of a build that cannot be used.
#[derive(Debug, Error)]
pub enum FileError {
    /// It could not be read.
    #[error("cannot read the {what} {}", path.display())]
    Read {
        /// Image, initrd, config…
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It is larger than aba installs.
    #[error("the {what} {} is {}, more than the {} aba installs", path.display(), crate::text::bytes(*bytes), crate::text::bytes(MAX_INSTALL_BYTES))]
    TooLarge {
        /// Image, initrd, modules.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
    },
    /// The image has no version string aba can read.
    #[error("the image {} cannot prove its build: {source}", path.display())]
    Version {
        /// The image.
        path: PathBuf,
        /// Why.
        #[source]
        source: VersionError,
    },
    /// A file differs from the one the campaign started with.
    #[error(
        "the {what} {path} changed since the campaign started (SHA-256 {recorded}, now {now}): a rebuilt kernel is another experiment; start a new campaign"
    )]
    Changed {
        /// Image, initrd…
        what: &'static str,
        /// The file.
        path: String,
        /// The recorded hash.
        recorded: String,
        /// The hash now.
        now: String,
    },
}

/// Reads a regular file of at most [`MAX_INSTALL_BYTES`] (a FIFO or device is refused).
pub fn read_file(path: &Path, what: &'static str) -> Result<Vec<u8>, FileError> {
    let read = |source| FileError::Read {
        what,
        path: path.to_path_buf(),
        source,
    };
    let file = crate::input::open_regular(path).map_err(read)?;
    let mut data = Vec::new();
    file.take(MAX_INSTALL_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(read)?;
    if data.len() as u64 > MAX_INSTALL_BYTES {
        return Err(FileError::TooLarge {
            what,
            path: path.to_path_buf(),
            bytes: data.len() as u64,
        });
    }
    Ok(data)
}

impl HostFile {
    /// The record of `data`, read from `path`.
    pub fn of(path: &Path, data: &[u8]) -> HostFile {
        HostFile {
            path: path.display().to_string(),
            sha256: sha256_hex(data),
            bytes: data.len() as u64,
        }
    }

    /// Reads and records the file at `path`.
    pub fn read(path: &Path, what: &'static str) -> Result<HostFile, FileError> {
        Ok(HostFile::of(path, &read_file(path, what)?))
    }

    /// Reads the file again for an install: its content, which must still be what was
    /// recorded.
    pub fn content(&self, what: &'static str) -> Result<Vec<u8>, FileError> {
        let data = read_file(Path::new(&self.path), what)?;
        let now = sha256_hex(&data);
        if now != self.sha256 {
            return Err(FileError::Changed {
                what,
                path: self.path.clone(),
                recorded: self.sha256.clone(),
                now,
            });
        }
        Ok(data)
    }
}

/// Hex SHA-256 of `data`.
pub fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}
