//! Reading and writing profile files, and scanning a target's profile directory.
//!
//! A profile comes from the tester's own directory, but it is still input aba did not just
//! write (a copy from a colleague, a file edited by hand): it is read as a regular file of at
//! most [`crate::input::CONFIG_LIMIT`], parsed with unknown keys refused, and every value is
//! checked (`model::Profile::validate`); a problem names the file and the field, never a
//! panic.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::{
    profile::model::Profile,
    recipe::{Diagnostics, diagnostic::Diagnostic},
};

/// Why a profile could not be read or written.
#[derive(Debug, Error)]
pub enum ProfileError {
    /// The file (or the directory) could not be read.
    #[error("cannot read noise profile {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Not TOML of the profile's shape: the place and the key.
    #[error("invalid noise profile: {0}")]
    Syntax(Diagnostics),
    /// A value that cannot be right, or a checksum that does not match.
    #[error("invalid noise profile {}: `{field}` {problem}", path.display())]
    Value {
        /// The file.
        path: PathBuf,
        /// The field (`series[0].all.between_var`).
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The file could not be written.
    #[error("cannot write noise profile {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl ProfileError {
    /// The file at fault.
    #[must_use]
    pub fn path(&self) -> Option<&Path> {
        match self {
            ProfileError::Read { path, .. }
            | ProfileError::Value { path, .. }
            | ProfileError::Write { path, .. } => Some(path),
            ProfileError::Syntax(d) => d.0.first().map(|d| d.file.as_path()),
        }
    }
}

/// Parses profile text as read from `path` and checks every value.
pub fn parse_profile(path: &Path, text: &str) -> Result<Profile, ProfileError> {
    let profile: Profile = toml::from_str(text).map_err(|e| {
        ProfileError::Syntax(Diagnostics(vec![Diagnostic::from_toml(path, text, &e)]))
    })?;
    profile.validate().map_err(|invalid| ProfileError::Value {
        path: path.to_path_buf(),
        field: invalid.field,
        problem: invalid.problem,
    })?;
    Ok(profile)
}

/// Reads and checks the profile at `path`; also returns its bytes (what a campaign copies
/// and hashes).
pub fn read_profile(path: &Path) -> Result<(Profile, Vec<u8>), ProfileError> {
    let text = crate::input::read_text(path, crate::input::CONFIG_LIMIT, "noise profile").map_err(
        |source| ProfileError::Read {
            path: path.to_path_buf(),
            source,
        },
    )?;
    let profile = parse_profile(path, &text)?;
    Ok((profile, text.into_bytes()))
}

/// Every `*.toml` profile in `dir`, by file name; a directory that does not exist holds none.
/// A file that is not a valid profile is an error naming it: a damaged profile is never
/// silently skipped, because it may be the one that should have been used.
pub fn scan_dir(dir: &Path) -> Result<Vec<(PathBuf, Profile, Vec<u8>)>, ProfileError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(ProfileError::Read {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let (profile, bytes) = read_profile(&path)?;
            Ok((path, profile, bytes))
        })
        .collect()
}

/// The text of a profile file: a header saying what it is, then the sealed profile.
#[must_use]
pub fn render_profile(profile: &Profile) -> String {
    let body = toml::to_string_pretty(profile).expect("invariant: a profile serialises");
    format!(
        "# aba noise profile (docs/profiles.md), written by `aba calibrate` from the campaign\n\
         # {}.\n\
         # Copy, rename or delete it freely; do not edit its values: `checksum` covers them,\n\
         # and a profile whose values changed is refused.\n{body}",
        crate::text::one_line(&profile.source.campaign)
    )
}

/// Writes `profile` to `path` atomically, creating its directory.
pub fn write_profile(path: &Path, profile: &Profile) -> Result<(), ProfileError> {
    let write = |source| ProfileError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(write)?;
    }
    crate::results::atomic::write_atomic(path, render_profile(profile).as_bytes()).map_err(write)
}

#[cfg(test)]
mod tests {
    use super::{
        ProfileError, parse_profile, read_profile, render_profile, scan_dir, write_profile,
    };
    use crate::profile::testdata::profile;

    #[test]
    fn a_written_profile_reads_back_and_a_tampered_one_names_its_file_and_field() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut p = profile();
        p.seal();
        let path = dir.path().join("lab").join("lab-aba.toml");
        write_profile(&path, &p).expect("written");
        let (back, bytes) = read_profile(&path).expect("reads");
        assert_eq!(back, p);
        assert!(
            String::from_utf8(bytes)
                .expect("text")
                .starts_with("# aba noise profile")
        );
        // A number edited by hand.
        let text = std::fs::read_to_string(&path).expect("text");
        let tampered = text.replacen("between_var = 1.1111111111111112", "between_var = 0.5", 1);
        assert_ne!(text, tampered, "{text}");
        std::fs::write(&path, tampered).expect("write");
        let err = read_profile(&path).expect_err("tampered");
        let shown = err.to_string();
        assert!(
            shown.starts_with(&format!(
                "invalid noise profile {}: `checksum` is sha256:",
                path.display()
            )),
            "{shown}"
        );
        assert!(matches!(err, ProfileError::Value { ref field, .. } if field == "checksum"));
        // The scan refuses the directory rather than skip the file.
        let err = scan_dir(&path.with_file_name("")).expect_err("refused");
        assert_eq!(err.path(), Some(path.as_path()));
        assert!(
            scan_dir(&dir.path().join("none"))
                .expect("absent")
                .is_empty()
        );
    }

    #[test]
    fn an_unknown_key_is_refused_at_its_line() {
        let mut p = profile();
        p.seal();
        let text = render_profile(&p).replace("boots = 6", "boots = 6\nbots = 7");
        let err = parse_profile(std::path::Path::new("p.toml"), &text).expect_err("unknown");
        let shown = err.to_string();
        assert!(
            shown.contains("p.toml:") && shown.contains("unknown field `bots`"),
            "{shown}"
        );
    }
}
