//! What a kernel's `.config` says of how the kernel was built, for matched builds (issue 33,
//! item 3): the config normalised (only the lines that merely name a build dropped) and its
//! SHA-256, and the toolchain Kbuild recorded in it (`CONFIG_CC_VERSION_TEXT`, the linker).
//! Also the same reading of a version string (`/proc/version`, an image's banner): who built
//! it, its build number and time, its compiler and linker.
//!
//! Pure text in, text out: the host's `.config` of a build and the target's config of a
//! released kernel are normalised by the same rule ([`normalise`] here, [`NORMALISE_SHELL`]
//! on the target, which a test keeps byte-equal), so the two kinds of kernels compare.

use sha2::{Digest as _, Sha256};

/// The config options that only name a build, dropped by [`normalise`]: the text appended to
/// the release (`LOCALVERSION`, and whether git's state is appended, `LOCALVERSION_AUTO`), and
/// the build-ID salt (`BUILD_SALT`, which distributions set to the release). They change
/// `uname -r` and nothing the kernel does. The compiler's lines (`CONFIG_CC_VERSION_TEXT`,
/// `CONFIG_GCC_VERSION`, …) stay: Kbuild derives options from the toolchain, so another
/// compiler is another config too (and the compiler is compared as a field of its own).
pub const NAMING_OPTIONS: [&str; 3] = ["LOCALVERSION", "LOCALVERSION_AUTO", "BUILD_SALT"];

/// The shell pipeline that normalises a config on its stdin exactly as [`normalise`] does
/// (POSIX grep and sort, byte order), for a target's running kernel.
pub const NORMALISE_SHELL: &str = "grep -E '^(CONFIG_[A-Za-z0-9_]+=|# CONFIG_[A-Za-z0-9_]+ is not set$)' | grep -vE '^(# )?CONFIG_(LOCALVERSION|LOCALVERSION_AUTO|BUILD_SALT)[= ]' | LC_ALL=C sort";

/// The option a config line sets (`X` of `CONFIG_X=y` and of `# CONFIG_X is not set`), when
/// the line sets one.
fn option_of(line: &str) -> Option<&str> {
    let name_ok =
        |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if let Some(rest) = line.strip_prefix("CONFIG_") {
        let (name, _) = rest.split_once('=')?;
        return name_ok(name).then_some(name);
    }
    let name = line
        .strip_prefix("# CONFIG_")?
        .strip_suffix(" is not set")?;
    name_ok(name).then_some(name)
}

/// The config as compared: its option lines (`CONFIG_X=…` and `# CONFIG_X is not set`)
/// without [`NAMING_OPTIONS`], in byte order, each ending in a newline. Comments, blank lines
/// and the order Kconfig wrote them in are not part of a config's meaning.
#[must_use]
pub fn normalise(text: &str) -> String {
    let mut lines: Vec<&str> = text
        .split('\n')
        .filter(|line| option_of(line).is_some_and(|name| !NAMING_OPTIONS.contains(&name)))
        .collect();
    lines.sort_unstable();
    let mut out = String::with_capacity(text.len());
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Hex SHA-256 of the normalised config.
#[must_use]
pub fn normalised_sha256(text: &str) -> String {
    hex::encode(Sha256::digest(normalise(text).as_bytes()))
}

/// The value of option `name` (`CONFIG_<name>=`), quotes removed.
fn value<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("CONFIG_{name}=");
    text.split('\n').find_map(|line| {
        let v = line.strip_prefix(&key)?;
        Some(
            v.strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(v),
        )
    })
}

/// The compiler Kbuild used, as `CONFIG_CC_VERSION_TEXT` names it (the first line of
/// `$(CC) --version`); `None` for a config older than Linux 5.8 or none.
#[must_use]
pub fn compiler(text: &str) -> Option<String> {
    value(text, "CC_VERSION_TEXT")
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// The linker Kbuild used: `GNU ld 2.40` from `CONFIG_LD_IS_BFD=y` and `CONFIG_LD_VERSION=24000`
/// (Kbuild's `scripts/ld-version.sh` encodes 2.40 as 24000), `LLD 16.0.6` from
/// `CONFIG_LD_IS_LLD=y` and `CONFIG_LLD_VERSION`; `None` when the config does not say.
#[must_use]
pub fn linker(text: &str) -> Option<String> {
    let (name, version) = if value(text, "LD_IS_LLD") == Some("y") {
        ("LLD", value(text, "LLD_VERSION")?)
    } else {
        ("GNU ld", value(text, "LD_VERSION")?)
    };
    let n: u64 = version.trim().parse().ok().filter(|n| *n > 0)?;
    let (major, minor, patch) = (n / 10000, n / 100 % 100, n % 100);
    Some(if patch == 0 {
        format!("{name} {major}.{minor}")
    } else {
        format!("{name} {major}.{minor}.{patch}")
    })
}

/// A linker's `--version` line (`GNU ld (GNU Binutils for Debian) 2.40`, `Debian LLD 16.0.6`)
/// in the form of [`linker`] (`GNU ld 2.40`, `LLD 16.0.6`), so that a linker read from a
/// config and one read from a version string compare; the line as it is when neither.
#[must_use]
pub fn linker_of_line(line: &str) -> String {
    let line = line.trim();
    let version = line
        .split_whitespace()
        .rev()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()) && w.contains('.'));
    let name = if line.contains("GNU ld") {
        "GNU ld"
    } else if line.contains("LLD") {
        "LLD"
    } else {
        return line.to_owned();
    };
    match version {
        Some(v) => {
            // `2.40.0` and `2.40` are one version, as Kbuild's encoding has it.
            let v = v
                .strip_suffix(".0")
                .filter(|s| s.contains('.'))
                .unwrap_or(v);
            format!("{name} {v}")
        }
        None => line.to_owned(),
    }
}

/// The compiler and linker of a version string's toolchain part (`gcc-12 (Debian 12.2.0-14)
/// 12.2.0, GNU ld (GNU Binutils for Debian) 2.40`; before Linux 5.8 only the compiler).
#[must_use]
pub fn toolchain_of_banner(text: &str) -> (String, Option<String>) {
    match text.rsplit_once(", ") {
        Some((cc, ld)) if ld.contains("ld") || ld.contains("LLD") => {
            (cc.trim().to_owned(), Some(linker_of_line(ld)))
        }
        _ => (text.trim().to_owned(), None),
    }
}

/// The Kbuild metadata a version string carries: `KBUILD_BUILD_USER@KBUILD_BUILD_HOST`, the
/// build number (`#N`, `KBUILD_BUILD_VERSION`) and the build's time (`KBUILD_BUILD_TIMESTAMP`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kbuild {
    /// `KBUILD_BUILD_USER`.
    pub user: String,
    /// `KBUILD_BUILD_HOST`.
    pub host: String,
    /// `KBUILD_BUILD_VERSION`, without its `#`.
    pub number: String,
    /// `KBUILD_BUILD_TIMESTAMP`, as the version string ends.
    pub timestamp: String,
}

/// Reads [`Kbuild`] from a version string's `user@host` and build line (`#2 SMP
/// PREEMPT_DYNAMIC Thu Dec  3 10:12:54 UTC 2026`: the number, the flags Kbuild adds from the
/// config, then the timestamp).
#[must_use]
pub fn kbuild(built_by: &str, build: &str) -> Kbuild {
    let (user, host) = built_by.split_once('@').unwrap_or((built_by, ""));
    let mut words = build.split_whitespace().peekable();
    let number = match words.peek() {
        Some(w) if w.starts_with('#') => words.next().unwrap_or_default()[1..].to_owned(),
        _ => String::new(),
    };
    while words
        .peek()
        .is_some_and(|w| matches!(*w, "SMP" | "PREEMPT" | "PREEMPT_RT" | "PREEMPT_DYNAMIC"))
    {
        words.next();
    }
    Kbuild {
        user: user.to_owned(),
        host: host.to_owned(),
        number,
        timestamp: words.collect::<Vec<_>>().join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::{
        NORMALISE_SHELL, compiler, kbuild, linker, linker_of_line, normalise, normalised_sha256,
        toolchain_of_banner,
    };

    const CONFIG: &str = "#\n# Automatically generated file; DO NOT EDIT.\n# Linux/x86 6.1.192 Kernel Configuration\n#\nCONFIG_CC_VERSION_TEXT=\"gcc (Debian 12.2.0-14+deb12u1) 12.2.0\"\nCONFIG_CC_IS_GCC=y\nCONFIG_GCC_VERSION=120200\nCONFIG_LD_IS_BFD=y\nCONFIG_LD_VERSION=24000\n\n#\n# General setup\n#\n# CONFIG_WERROR is not set\nCONFIG_LOCALVERSION=\"-aba-lab\"\n# CONFIG_LOCALVERSION_AUTO is not set\nCONFIG_BUILD_SALT=\"\"\nCONFIG_SMP=y\n";

    #[test]
    fn normalising_drops_only_the_lines_that_name_the_build() {
        let n = normalise(CONFIG);
        assert_eq!(
            n,
            "# CONFIG_WERROR is not set\nCONFIG_CC_IS_GCC=y\nCONFIG_CC_VERSION_TEXT=\"gcc (Debian 12.2.0-14+deb12u1) 12.2.0\"\nCONFIG_GCC_VERSION=120200\nCONFIG_LD_IS_BFD=y\nCONFIG_LD_VERSION=24000\nCONFIG_SMP=y\n"
        );
        // Another local version, comments moved, another order: the same config.
        let renamed = CONFIG
            .replace("-aba-lab", "-patched")
            .replace("# General setup\n", "")
            .replace("CONFIG_SMP=y\n", "")
            .replacen("#\n", "#\nCONFIG_SMP=y\n", 1);
        assert_eq!(normalised_sha256(&renamed), normalised_sha256(CONFIG));
        // Another option, or the compiler's own lines: another config.
        let other = CONFIG.replace("# CONFIG_WERROR is not set", "CONFIG_WERROR=y");
        assert_ne!(normalised_sha256(&other), normalised_sha256(CONFIG));
        let gcc13 = CONFIG.replace("120200", "130200");
        assert_ne!(normalised_sha256(&gcc13), normalised_sha256(CONFIG));
        // An option whose name merely starts like a naming one stays.
        assert!(normalise("CONFIG_LOCALVERSIONX=y\n").contains("LOCALVERSIONX"));
    }

    /// The target's pipeline gives the very bytes of [`normalise`], so a released kernel's
    /// config (read on its target) and a build's `.config` (read here) compare.
    #[test]
    fn the_shell_pipeline_normalises_like_the_rust() {
        use std::io::Write as _;
        let text = format!("{CONFIG}CONFIG_A_Z=\"x y\"\nCONFIG_a=1\n# CONFIG_B is not set \nno\n");
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(NORMALISE_SHELL)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh runs");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(text.as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("runs");
        assert_eq!(String::from_utf8_lossy(&out.stdout), normalise(&text));
    }

    #[test]
    fn the_toolchain_is_read_from_the_config_and_from_a_version_string() {
        assert_eq!(
            compiler(CONFIG).as_deref(),
            Some("gcc (Debian 12.2.0-14+deb12u1) 12.2.0")
        );
        assert_eq!(linker(CONFIG).as_deref(), Some("GNU ld 2.40"));
        assert_eq!(
            linker("CONFIG_LD_IS_BFD=y\nCONFIG_LD_VERSION=23850\n").as_deref(),
            Some("GNU ld 2.38.50")
        );
        assert_eq!(
            linker("CONFIG_LD_IS_LLD=y\nCONFIG_LD_VERSION=0\nCONFIG_LLD_VERSION=160006\n")
                .as_deref(),
            Some("LLD 16.0.6")
        );
        assert_eq!(linker("CONFIG_LD_VERSION=0\n"), None);
        assert_eq!(compiler("CONFIG_X=y\n"), None);
        assert_eq!(
            linker_of_line("GNU ld (GNU Binutils for Debian) 2.40"),
            "GNU ld 2.40"
        );
        assert_eq!(linker_of_line("GNU ld version 2.40.0"), "GNU ld 2.40");
        assert_eq!(linker_of_line("Debian LLD 16.0.6"), "LLD 16.0.6");
        assert_eq!(
            toolchain_of_banner(
                "gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40"
            ),
            (
                "gcc-12 (Debian 12.2.0-14) 12.2.0".to_owned(),
                Some("GNU ld 2.40".to_owned())
            )
        );
        assert_eq!(
            toolchain_of_banner("gcc 12.2.0"),
            ("gcc 12.2.0".to_owned(), None)
        );
    }

    #[test]
    fn kbuild_metadata_is_read_from_the_version_string() {
        let k = kbuild(
            "root@vm",
            "#2 SMP PREEMPT_DYNAMIC Thu Dec  3 10:12:54 UTC 2026",
        );
        assert_eq!(
            (k.user.as_str(), k.host.as_str(), k.number.as_str()),
            ("root", "vm", "2")
        );
        assert_eq!(k.timestamp, "Thu Dec 3 10:12:54 UTC 2026");
        let debian = kbuild(
            "debian-kernel@lists.debian.org",
            "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)",
        );
        assert_eq!(debian.host, "lists.debian.org");
        assert_eq!(debian.timestamp, "Debian 6.1.76-1 (2024-02-01)");
        assert_eq!(kbuild("x", "Sun Dec 6").number, "");
    }
}
