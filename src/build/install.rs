//! Installing a kernel built on the host on the target before the switch to it, and removing
//! what aba installed (`aba clean`).
//!
//! The image and the initrd go into the build's own folder (`<install_dir>/vmlinuz`,
//! `initrd.img`); modules go to `/lib/modules/<release>` with a marker, `.aba-installed`,
//! holding their SHA-256. A file already there with the recorded SHA-256 is not sent again,
//! so a campaign on a target that keeps its files pays the upload once per build. A
//! `/lib/modules/<release>` that aba did not install (the distribution's own kernel of that
//! release) is never replaced or removed. `aba clean` removes only what aba's ledger on the
//! target says it installed (`aba::campaign::ledger`), never what a journal lists.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::{
    modules::{self, ModulesError},
    record::{FileError, KernelBuild},
};
use crate::{
    campaign::ledger::{InstalledEntry, LedgerError},
    recipe::ident::Release,
    target::{
        quote::sh_quote,
        transport::{Transport, TransportError},
    },
};

/// The marker in a modules folder aba installed.
pub const MODULES_MARKER: &str = ".aba-installed";

/// Deadline of the commands around an upload (hashing, unpacking modules).
const STEP_TIMEOUT: Duration = Duration::from_secs(600);

/// One file or folder aba put on the target, as the journal lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Installed {
    /// Its path on the target.
    pub path: String,
    /// Hex SHA-256 of what was installed (for modules: of the folder or archive on the host).
    pub sha256: String,
    /// False when the target already held it and nothing was sent.
    pub sent: bool,
}

/// Why a build could not be installed.
#[derive(Debug, Error)]
pub enum InstallError {
    /// A host file changed or cannot be read: the same request would fail again.
    #[error(transparent)]
    Host(#[from] FileError),
    /// The modules on the host changed or cannot be read.
    #[error(transparent)]
    Modules(#[from] ModulesError),
    /// The target holds modules of the release that aba did not install.
    #[error(
        "/lib/modules/{release} exists on the target and was not installed by aba: it is never replaced; remove it or drop `modules` from the build"
    )]
    ForeignModules {
        /// The release.
        release: String,
    },
    /// The transport failed.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// aba's ledger on the target could not be used.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The journal lists installed items; the ledger holds none for the campaign.
    #[error(
        "{}:{line}: field `installed`: the journal lists {count} item(s) installed on the target, but aba's ledger there ({ledger}) holds none for this campaign, so nothing was removed. aba removes only what it recorded itself on the machine (docs/security.md): this results directory comes from elsewhere, or an aba older than the ledger ran the campaign. Remove by hand what you know aba installed: the folders under /boot/aba-kernels/ (or the target's workdir/kernels/), and the /lib/modules/<release> folders that hold a `.aba-installed` marker",
        journal.display()
    )]
    NotInLedger {
        /// The journal.
        journal: std::path::PathBuf,
        /// The first `installed` record's line.
        line: usize,
        /// How many items the journal lists.
        count: usize,
        /// The ledger folder.
        ledger: String,
    },
    /// A command on the target failed.
    #[error("`{command}` failed on the target: {outcome}{stderr}")]
    Target {
        /// What it did.
        command: String,
        /// How it ended.
        outcome: String,
        /// Its stderr's last lines, after a colon.
        stderr: String,
    },
}

/// Puts `build` on the target: image and initrd into its folder, modules under
/// `/lib/modules/<release>`; what the target already holds is kept. Returns each one, sent
/// or not, in that order.
pub fn install(
    transport: &mut dyn Transport,
    build: &KernelBuild,
) -> Result<Vec<Installed>, InstallError> {
    let release = &build.version.release;
    let mut files = vec![(build.target_image(), &build.image, "image")];
    if let (Some(path), Some(initrd)) = (build.target_initrd(), &build.initrd) {
        files.push((path, initrd, "initrd"));
    }
    let modules_dir = format!("/lib/modules/{release}");
    let probe = format!(
        "mkdir -p {dir} || exit 1; for f in {files}; do if [ -f \"$f\" ]; then sha256sum \"$f\"; fi; done; m={m}; if [ -f \"$m/{MODULES_MARKER}\" ]; then echo \"modules $(cat \"$m/{MODULES_MARKER}\")\"; elif [ -e \"$m\" ]; then echo 'modules foreign'; fi",
        dir = sh_quote(&build.install_dir),
        files = files
            .iter()
            .map(|(p, _, _)| sh_quote(p))
            .collect::<Vec<_>>()
            .join(" "),
        m = sh_quote(&modules_dir),
    );
    let held = on_target(transport, "looking for installed files", &probe)?;
    let mut done = Vec::new();
    for (path, file, what) in files {
        let already = held.lines().any(|l| {
            l.split_once(char::is_whitespace)
                .is_some_and(|(sha, p)| sha == file.sha256 && p.trim() == path)
        });
        if !already {
            let data = file.content(what)?;
            transport.upload(&data, &path, 0o644)?;
        }
        done.push(Installed {
            path,
            sha256: file.sha256.clone(),
            sent: !already,
        });
    }
    if let Some(m) = &build.modules {
        let marker = held.lines().find_map(|l| l.strip_prefix("modules "));
        match marker {
            Some("foreign") => {
                return Err(InstallError::ForeignModules {
                    release: release.clone(),
                });
            }
            Some(sha) if sha.trim() == m.sha256 => {}
            _ => install_modules(transport, m, release, &modules_dir)?,
        }
        done.push(Installed {
            path: modules_dir,
            sha256: m.sha256.clone(),
            sent: marker.is_none_or(|sha| sha.trim() != m.sha256),
        });
    }
    Ok(done)
}

/// Sends the modules as one tar stream, unpacks it beside `/lib/modules/<release>`, then
/// moves it in place with its marker (an older copy aba installed goes first).
fn install_modules(
    transport: &mut dyn Transport,
    m: &super::record::HostModules,
    release: &str,
    dir: &str,
) -> Result<(), InstallError> {
    let data = modules::payload(m, release)?;
    let gzip = m.archive && modules::archive_gzip(std::path::Path::new(&m.path)) == Some(true);
    let archive = format!("/lib/modules/.aba-{release}.tar");
    let stage = format!("/lib/modules/.aba-{release}.stage");
    transport.upload(&data, &archive, 0o600)?;
    drop(data);
    // A folder is shipped as `<release>/…`, an archive holds `lib/modules/<release>/…`.
    let inside = if m.archive {
        format!("{stage}/lib/modules/{release}")
    } else {
        format!("{stage}/{release}")
    };
    let script = format!(
        "set -e; s={stage}; rm -rf \"$s\"; mkdir -p \"$s\"; tar -x{z}f {archive} -C \"$s\"; rm -f {archive}; [ -d {inside} ] || {{ echo 'the archive holds no lib/modules/'{rel} >&2; rm -rf \"$s\"; exit 1; }}; if [ -e {dir} ] && [ ! -f {dir}/{MODULES_MARKER} ]; then echo {dir}' was not installed by aba' >&2; rm -rf \"$s\"; exit 1; fi; rm -rf {dir}; mv {inside} {dir}; rm -rf \"$s\"; echo {sha} > {dir}/{MODULES_MARKER}; if command -v depmod >/dev/null; then depmod -a {rel} || true; fi",
        stage = sh_quote(&stage),
        z = if gzip { "z" } else { "" },
        archive = sh_quote(&archive),
        inside = sh_quote(&inside),
        dir = sh_quote(dir),
        rel = sh_quote(release),
        sha = sh_quote(&m.sha256),
    );
    on_target(transport, "installing the modules", &script).map(drop)
}

/// Removes from the target what the ledger `entry` says aba installed, only where each item
/// is aba's: a kernel file (`vmlinuz`, `initrd.img`) directly inside one of the install
/// folders aba created (then the folder, once empty), a `/lib/modules/<release>` folder whose
/// marker holds the recorded SHA-256. Returns what it removed, in words, and the items it
/// refused, each with why.
pub fn remove(
    transport: &mut dyn Transport,
    entry: &InstalledEntry,
) -> Result<(Vec<String>, Vec<String>), InstallError> {
    let mut script = String::new();
    let mut refused = Vec::new();
    for item in &entry.items {
        let p = sh_quote(&item.path);
        match ours(entry, &item.path) {
            Ok(Ours::KernelFile) => script.push_str(&format!(
                "if [ -f {p} ] && [ ! -L {p} ]; then rm -f {p} && echo \"removed \"{p}; fi; rmdir \"$(dirname {p})\" 2>/dev/null; "
            )),
            Ok(Ours::Modules) => script.push_str(&format!(
                "if [ ! -L {p} ] && [ -f {p}/{MODULES_MARKER} ] && [ \"$(cat {p}/{MODULES_MARKER})\" = {sha} ]; then rm -rf {p} && echo \"removed \"{p}; fi; ",
                sha = sh_quote(&item.sha256)
            )),
            Err(reason) => refused.push(format!(
                "`{}` is not removed: {reason}",
                crate::text::quoted(&item.path)
            )),
        }
    }
    if script.is_empty() {
        return Ok((Vec::new(), refused));
    }
    // One round trip for the lot.
    script.push_str("true");
    let out = on_target(transport, "removing installed files", &script)?;
    let removed = out
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| crate::text::one_line(l).into_owned())
        .collect();
    Ok((removed, refused))
}

/// What kind of aba's own item a path is.
enum Ours {
    /// An image or initrd in an install folder.
    KernelFile,
    /// A modules folder with aba's marker.
    Modules,
}

/// Whether `path` is an item aba installs, given the install folders it created.
fn ours(entry: &InstalledEntry, path: &str) -> Result<Ours, String> {
    if let Some(release) = path.strip_prefix("/lib/modules/") {
        return match Release::new(release) {
            Ok(_) if !release.contains('/') => Ok(Ours::Modules),
            _ => Err("not a release's modules folder".to_owned()),
        };
    }
    let Some((dir, name)) = path.rsplit_once('/') else {
        return Err("not an absolute path".to_owned());
    };
    if !matches!(name, "vmlinuz" | "initrd.img") {
        return Err(
            "aba installs only `vmlinuz` and `initrd.img` into a build's folder".to_owned(),
        );
    }
    if !entry.install_dirs.iter().any(|d| d == dir) || !install_dir_shape(dir) {
        return Err("not inside an install folder aba created".to_owned());
    }
    Ok(Ours::KernelFile)
}

/// `/…/<label>-<12 hex digits>`, at least two folders deep, without `.`, `..` or empty parts:
/// the shape of every install folder aba makes.
fn install_dir_shape(dir: &str) -> bool {
    let Some(rest) = dir.strip_prefix('/') else {
        return false;
    };
    let parts: Vec<&str> = rest.split('/').collect();
    let plain = parts
        .iter()
        .all(|p| !p.is_empty() && *p != "." && *p != ".." && !p.chars().any(char::is_control));
    let last = parts.last().copied().unwrap_or_default();
    let named = last.rsplit_once('-').is_some_and(|(label, sha)| {
        !label.is_empty() && sha.len() == 12 && sha.bytes().all(|b| b.is_ascii_hexdigit())
    });
    plain && parts.len() >= 2 && named
}

/// `aba preflight`'s line for a kernel built on the host: the tools the install and the
/// build proof use are there, and the install folder's file system (and `/lib/modules`'s,
/// when there are modules) has room for the files, twice over for an upload's temporary copy.
pub fn preflight(
    transport: &mut dyn Transport,
    what: &str,
    build: &KernelBuild,
) -> Result<crate::target::check::CheckItem, TransportError> {
    use crate::target::check::CheckItem;
    let files = build.image.bytes + build.initrd.as_ref().map_or(0, |f| f.bytes);
    let modules = build.modules.as_ref().map_or(0, |m| m.bytes);
    let tools = if build.modules.is_some() {
        "sha256sum mkdir tar"
    } else {
        "sha256sum mkdir"
    };
    let script = format!(
        r#"for t in {tools}; do command -v $t >/dev/null || {{ echo "$t not found on the target" >&2; exit 1; }}; done; room() {{ d=$1; while [ ! -d "$d" ]; do d=$(dirname "$d"); done; df -Pk "$d" | awk 'NR==2 {{print $4}}'; }}; a=$(room {dir}); [ $((a * 1024)) -ge {need} ] || {{ echo "the install folder has $((a / 1024)) MiB free; the build needs {need_text} (twice its files)" >&2; exit 1; }}; if [ {modules} -gt 0 ]; then m=$(room /lib/modules); [ $((m * 1024)) -ge {mneed} ] || {{ echo "/lib/modules has $((m / 1024)) MiB free; the modules need {mneed_text}" >&2; exit 1; }}; fi; echo ok"#,
        dir = sh_quote(&build.install_dir),
        need = 2 * files,
        need_text = crate::text::bytes(2 * files),
        modules = modules,
        mneed = 2 * modules,
        mneed_text = crate::text::bytes(2 * modules),
    );
    let out = transport.exec(&script, Duration::from_secs(60))?;
    let detail = format!(
        "built on this host ({}): {} installed into {} at the switch{}",
        build.at,
        crate::text::bytes(files),
        build.install_dir,
        if build.modules.is_some() {
            format!(", modules into /lib/modules/{}", build.version.release)
        } else {
            String::new()
        }
    );
    Ok(if out.outcome.success() {
        CheckItem::ok(what, detail)
    } else {
        CheckItem::fail(
            what,
            crate::text::last_lines(&out.stderr_text(), 2).join(" / "),
            "free space on the target, or install the missing tools",
        )
    })
}

fn on_target(
    transport: &mut dyn Transport,
    what: &str,
    script: &str,
) -> Result<String, InstallError> {
    let out = transport.exec(script, STEP_TIMEOUT)?;
    if out.outcome.success() {
        return Ok(out.stdout_text());
    }
    let stderr = crate::text::last_lines(&out.stderr_text(), 3).join(" / ");
    Err(InstallError::Target {
        command: what.to_owned(),
        outcome: out.outcome.to_string(),
        stderr: if stderr.is_empty() {
            String::new()
        } else {
            format!(": {stderr}")
        },
    })
}
