//! Output aba keeps as evidence: a probe's stdout and stderr (`probes/<point>/<name>.out` and
//! `.err`) and a passing check's (`checks/<point>/<name>.out` and `.err`). Each stream is cut
//! at its `max_output` and the cut named on the file's last line; the file's SHA-256 is
//! journaled with it, so `aba verify` can tell the file is the one aba wrote.
//!
//! The files are read back as untrusted input (a results directory someone sent): a kept
//! file is opened only as a regular file, never through a link, and read up to its limit.

use std::{
    io::{self, Read as _},
    path::Path,
};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::results::atomic::write_atomic;

/// Where probes' output is kept, under the results directory.
pub const PROBES_DIR: &str = "probes";
/// Where passing checks' output is kept, under the results directory.
pub const CHECKS_DIR: &str = "checks";
/// The most bytes a kept file may have when read back: the largest `max_output` (1 GiB)
/// and its cut line.
pub const READ_LIMIT: u64 = (1 << 30) + 4096;

/// One kept output stream, as its record in the journal names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptFile {
    /// Relative to the results directory (`probes/b/perf.out`).
    pub path: String,
    /// Hex SHA-256 of the file as written (the cut line included).
    pub sha256: String,
    /// Bytes of the stream that were kept.
    pub bytes: u64,
    /// Bytes the command printed beyond `max_output`: counted, not kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_bytes: u64,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The line a cut file ends with: what was kept of how much.
#[must_use]
pub fn cut_line(kept: u64, dropped: u64) -> String {
    format!(
        "\n[aba: output cut at max_output: kept the first {kept} of {} bytes]\n",
        kept + dropped
    )
}

/// The relative path of a kept stream: `<dir>/<point>/<name>.<out|err>`.
#[must_use]
pub fn kept_path(dir: &str, point: &str, name: &str, stderr: bool) -> String {
    format!(
        "{dir}/{point}/{name}.{}",
        if stderr { "err" } else { "out" }
    )
}

/// Writes `output` (of which `dropped` more bytes were not kept) to `rel` under `root`,
/// atomically, with the cut line when something was cut.
pub fn keep(root: &Path, rel: &str, output: &[u8], dropped: u64) -> io::Result<KeptFile> {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut content = output.to_vec();
    if dropped > 0 {
        content.extend_from_slice(cut_line(output.len() as u64, dropped).as_bytes());
    }
    write_atomic(&path, &content)?;
    Ok(KeptFile {
        path: rel.to_owned(),
        sha256: hex::encode(Sha256::digest(&content)),
        bytes: output.len() as u64,
        dropped_bytes: dropped,
    })
}

/// Why a kept file is not the one its record names.
#[derive(Debug, thiserror::Error)]
pub enum KeptError {
    /// The record's path is not one aba writes.
    #[error(
        "the journal names `{0}`, which is not a kept output path (`probes/<point>/<name>.out|.err` or `checks/…`)"
    )]
    Path(String),
    /// The file could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The file, relative to the results directory.
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Its content changed since the record was written.
    #[error("{path} has SHA-256 {found}, but the journal recorded {recorded} when it was written")]
    Changed {
        /// The file, relative to the results directory.
        path: String,
        /// What the journal says.
        recorded: String,
        /// What the file has.
        found: String,
    },
}

/// True when `rel` has the shape of a kept output path: `probes/` or `checks/`, one folder,
/// one file ending in `.out` or `.err`, every part a plain name.
#[must_use]
pub fn is_kept_path(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let plain = |p: &str| {
        !p.is_empty()
            && !p.starts_with('.')
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    };
    matches!(parts.as_slice(), [dir, point, file]
        if (*dir == PROBES_DIR || *dir == CHECKS_DIR)
            && plain(point)
            && plain(file)
            && (file.ends_with(".out") || file.ends_with(".err")))
}

/// Checks that the file `kept` names under `root` is the one written: a regular file (never
/// a link), at most [`READ_LIMIT`] bytes, with the recorded SHA-256.
pub fn check(root: &Path, kept: &KeptFile) -> Result<(), KeptError> {
    if !is_kept_path(&kept.path) {
        return Err(KeptError::Path(
            crate::text::untrusted(&kept.path, 200).into_owned(),
        ));
    }
    let read_error = |source| KeptError::Read {
        path: kept.path.clone(),
        source,
    };
    let file = crate::input::open_data(&root.join(&kept.path)).map_err(read_error)?;
    let mut hasher = Sha256::new();
    let mut limited = file.take(READ_LIMIT + 1);
    let mut buf = vec![0u8; 64 << 10];
    let mut total = 0u64;
    loop {
        let n = limited.read(&mut buf).map_err(read_error)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        hasher.update(&buf[..n]);
    }
    if total > READ_LIMIT {
        return Err(read_error(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "it is larger than {}, more than aba ever keeps",
                crate::text::bytes(READ_LIMIT)
            ),
        )));
    }
    let found = hex::encode(hasher.finalize());
    if found == kept.sha256 {
        Ok(())
    } else {
        Err(KeptError::Changed {
            path: kept.path.clone(),
            recorded: crate::text::untrusted(&kept.sha256, 80).into_owned(),
            found,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{KeptError, check, cut_line, is_kept_path, keep};

    #[test]
    fn a_cut_stream_names_its_cut_and_verifies_until_changed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let kept = keep(dir.path(), "probes/b/perf.out", b"12345", 7).expect("written");
        let text = std::fs::read_to_string(dir.path().join("probes/b/perf.out")).expect("read");
        assert_eq!(text, format!("12345{}", cut_line(5, 7)));
        assert!(text.ends_with("kept the first 5 of 12 bytes]\n"), "{text}");
        assert_eq!((kept.bytes, kept.dropped_bytes), (5, 7));
        check(dir.path(), &kept).expect("unchanged");
        std::fs::write(dir.path().join("probes/b/perf.out"), "other").expect("write");
        assert!(matches!(
            check(dir.path(), &kept),
            Err(KeptError::Changed { .. })
        ));
    }

    #[test]
    fn a_record_cannot_name_a_file_outside_the_kept_folders_or_a_link() {
        for bad in [
            "../x.out",
            "probes/../../etc/passwd",
            "/etc/passwd",
            "probes/a/b/c.out",
            "raw/a/b.out",
            "probes/a/.out",
            "probes/a/x.txt",
        ] {
            assert!(!is_kept_path(bad), "{bad}");
        }
        assert!(is_kept_path("checks/original-a/kernel_warnings.err"));
        let dir = tempfile::tempdir().expect("tempdir");
        let kept = keep(dir.path(), "probes/a/p.out", b"x", 0).expect("written");
        std::fs::remove_file(dir.path().join("probes/a/p.out")).expect("rm");
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("probes/a/p.out"))
            .expect("link");
        assert!(matches!(
            check(dir.path(), &kept),
            Err(KeptError::Read { .. })
        ));
    }
}
