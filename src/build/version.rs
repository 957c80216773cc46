//! The version string a kernel build embeds, read from its image on the host and from
//! `/proc/version` on the target: the two must name the same build.
//!
//! `uname -r` alone cannot tell two builds of one release apart (a rebuilt patched kernel, a
//! forgotten `make install`). The version string can: besides the release it carries who
//! built it where (`user@host`) and the build's own line (`#3 SMP PREEMPT_DYNAMIC Thu Dec 3
//! 10:12:54 UTC 2026`: the build counter of the build directory and the build's time).
//!
//! An x86 `bzImage` holds it in its real-mode setup code, where the boot protocol's
//! `kernel_version` field (the 16-bit word at offset 0x20E, plus 0x200) points, as
//! `<release> (<user>@<host>) <build line>`. `/proc/version` prints
//! `Linux version <release> (<user>@<host>) (<compiler>) <build line>`. An uncompressed image
//! of another architecture (arm64's `Image`) carries the `/proc/version` banner itself.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Where the boot protocol's setup header magic `HdrS` sits in a bzImage.
const HEADER_MAGIC_AT: usize = 0x202;
/// Where its `kernel_version` pointer sits.
const VERSION_POINTER_AT: usize = 0x20E;
/// What the pointer is relative to.
const SETUP_BASE: usize = 0x200;
/// The banner `/proc/version` and an uncompressed image start with.
const BANNER: &str = "Linux version ";
/// A version string longer than this is not one.
const MAX_LEN: usize = 512;

/// A kernel build's identity as its version string gives it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelVersion {
    /// `uname -r`.
    pub release: String,
    /// `user@host` that built it.
    pub built_by: String,
    /// The compiler and linker, when the source says (`/proc/version` and an image's
    /// banner do; a bzImage's setup string does not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiler: Option<String>,
    /// The build line: `#N SMP … <build time>`.
    pub build: String,
}

/// Why an image's version string could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VersionError {
    /// Neither a bzImage setup header nor a banner.
    #[error(
        "no kernel version string in it: not an x86 bzImage (no `HdrS` setup header) and no uncompressed `Linux version` banner"
    )]
    NotFound,
    /// Found, but not in the expected shape.
    #[error("its version string {0:?} is not `<release> (<user>@<host>) <build>`")]
    Garbled(String),
}

impl KernelVersion {
    /// Reads the version string of a kernel image.
    pub fn from_image(image: &[u8]) -> Result<KernelVersion, VersionError> {
        if let Some(text) = bzimage_string(image) {
            return KernelVersion::parse_setup(&text);
        }
        let needle = BANNER.as_bytes();
        let at = image
            .windows(needle.len())
            .position(|w| w == needle)
            .ok_or(VersionError::NotFound)?;
        let text = c_string(&image[at..]).ok_or(VersionError::NotFound)?;
        KernelVersion::parse_proc(&text)
    }

    /// Reads `/proc/version` (or an image's banner).
    pub fn parse_proc(text: &str) -> Result<KernelVersion, VersionError> {
        let garbled = || VersionError::Garbled(text.trim().to_owned());
        let rest = text.trim().strip_prefix(BANNER).ok_or_else(garbled)?;
        let (release, rest) = rest.split_once(' ').ok_or_else(garbled)?;
        let (built_by, rest) = parenthesised(rest).ok_or_else(garbled)?;
        let (compiler, build) = match parenthesised(rest) {
            Some((compiler, build)) => (Some(compiler), build),
            None => (None, rest),
        };
        KernelVersion::new(release, built_by, compiler, build).ok_or_else(garbled)
    }

    /// Reads a bzImage's setup string: `<release> (<user>@<host>) <build>`.
    fn parse_setup(text: &str) -> Result<KernelVersion, VersionError> {
        let garbled = || VersionError::Garbled(text.trim().to_owned());
        let (release, rest) = text.trim().split_once(' ').ok_or_else(garbled)?;
        let (built_by, build) = parenthesised(rest).ok_or_else(garbled)?;
        KernelVersion::new(release, built_by, None, build).ok_or_else(garbled)
    }

    fn new(release: &str, built_by: &str, compiler: Option<&str>, build: &str) -> Option<Self> {
        let build = build.trim();
        (!release.is_empty() && !build.is_empty()).then(|| KernelVersion {
            release: release.to_owned(),
            built_by: built_by.to_owned(),
            compiler: compiler.map(str::to_owned),
            build: build.to_owned(),
        })
    }

    /// True when `other` is the same build: release, builder and build line agree (the
    /// compiler is left out: a bzImage's setup string does not carry it).
    pub fn same_build(&self, other: &KernelVersion) -> bool {
        self.release == other.release
            && self.built_by == other.built_by
            && self.build == other.build
    }
}

impl fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}) {}", self.release, self.built_by, self.build)
    }
}

/// The setup string a bzImage's header points at, when `image` is one.
fn bzimage_string(image: &[u8]) -> Option<String> {
    if image.get(HEADER_MAGIC_AT..HEADER_MAGIC_AT + 4)? != b"HdrS" {
        return None;
    }
    let word = image.get(VERSION_POINTER_AT..VERSION_POINTER_AT + 2)?;
    let pointer = usize::from(u16::from_le_bytes([word[0], word[1]]));
    if pointer == 0 {
        return None;
    }
    c_string(image.get(pointer + SETUP_BASE..)?)
}

/// The NUL- or newline-terminated printable text at the start of `bytes`, at most
/// [`MAX_LEN`] long.
fn c_string(bytes: &[u8]) -> Option<String> {
    let end = bytes
        .iter()
        .take(MAX_LEN)
        .position(|b| *b == 0 || *b == b'\n')?;
    let text = std::str::from_utf8(&bytes[..end]).ok()?;
    text.chars()
        .all(|c| !c.is_control())
        .then(|| text.to_owned())
}

/// `(inner) rest` with balanced parentheses (a compiler's own version has some): the inner
/// text and the rest after it, trimmed.
fn parenthesised(text: &str) -> Option<(&str, &str)> {
    let text = text.trim_start();
    let body = text.strip_prefix('(')?;
    let mut depth = 1usize;
    for (i, c) in body.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&body[..i], body[i + 1..].trim_start()));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{KernelVersion, VersionError};

    const PROC: &str = "Linux version 6.1.158-aba-lab (root@builder) (gcc (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #2 SMP PREEMPT_DYNAMIC Thu Dec  3 10:12:54 UTC 2026\n";

    /// A bzImage's first page with the setup header and the string it points at.
    fn bzimage(text: &str) -> Vec<u8> {
        let mut image = vec![0u8; 0x1000];
        image[0x202..0x206].copy_from_slice(b"HdrS");
        let at = 0x300usize;
        let pointer = u16::try_from(at - 0x200).expect("small");
        image[0x20E..0x210].copy_from_slice(&pointer.to_le_bytes());
        image[at..at + text.len()].copy_from_slice(text.as_bytes());
        image
    }

    #[test]
    fn proc_version_reads_release_builder_compiler_and_build_line() {
        let v = KernelVersion::parse_proc(PROC).expect("parses");
        assert_eq!(v.release, "6.1.158-aba-lab");
        assert_eq!(v.built_by, "root@builder");
        assert_eq!(
            v.compiler.as_deref(),
            Some("gcc (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40")
        );
        assert_eq!(
            v.build,
            "#2 SMP PREEMPT_DYNAMIC Thu Dec  3 10:12:54 UTC 2026"
        );
    }

    #[test]
    fn a_bzimage_names_the_same_build_as_the_proc_version_of_its_boot() {
        let image = bzimage(
            "6.1.158-aba-lab (root@builder) #2 SMP PREEMPT_DYNAMIC Thu Dec  3 10:12:54 UTC 2026",
        );
        let from_image = KernelVersion::from_image(&image).expect("reads");
        assert_eq!(from_image.compiler, None);
        let running = KernelVersion::parse_proc(PROC).expect("parses");
        assert!(from_image.same_build(&running));
        let rebuilt = KernelVersion {
            build: "#3 SMP PREEMPT_DYNAMIC Thu Dec  3 11:40:02 UTC 2026".into(),
            ..running.clone()
        };
        assert!(
            !from_image.same_build(&rebuilt),
            "another build of one release"
        );
        assert_eq!(
            from_image.to_string(),
            "6.1.158-aba-lab (root@builder) #2 SMP PREEMPT_DYNAMIC Thu Dec  3 10:12:54 UTC 2026"
        );
    }

    #[test]
    fn an_uncompressed_image_is_read_by_its_banner() {
        let mut image = vec![7u8; 64];
        image.extend_from_slice(PROC.as_bytes());
        image.push(0);
        let v = KernelVersion::from_image(&image).expect("reads");
        assert_eq!(v.release, "6.1.158-aba-lab");
    }

    #[test]
    fn other_files_are_refused_with_the_reason() {
        assert_eq!(
            KernelVersion::from_image(b"#!/bin/sh\necho not a kernel\n"),
            Err(VersionError::NotFound)
        );
        assert!(matches!(
            KernelVersion::from_image(&bzimage("6.1")),
            Err(VersionError::Garbled(_))
        ));
        assert!(matches!(
            KernelVersion::parse_proc("Linux version 6.1 (unbalanced"),
            Err(VersionError::Garbled(_))
        ));
        let mut image = bzimage("x");
        image[0x20E] = 0xff;
        image[0x20F] = 0xff;
        assert_eq!(
            KernelVersion::from_image(&image),
            Err(VersionError::NotFound)
        );
    }
}
