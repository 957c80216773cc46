//! The ledger of what aba changed on a machine: the sysctls and CPU frequency files it is
//! about to tune (with the values found, to put back) and the kernel files it installed.
//!
//! Machine state is not results data. A results directory is made to be shared, so its
//! journal is input from a stranger: a forged `tuning_saved` record must never choose what
//! `aba restore` writes as root, nor a forged `installed` record what `aba clean` deletes.
//! What aba will act on later is therefore recorded on the machine itself, in a folder only
//! the user aba runs as there (root, on a tuned or switched machine) can write:
//!
//! - the `local` target: `$ABA_STATE_DIR/ledger/` (default `/var/lib/aba/ledger/`) on this
//!   host;
//! - any other target: `ledger/` beside its lock marker (the inventory's `lock_file`,
//!   default `/var/lib/aba/lock`), on the target.
//!
//! One JSON file per campaign (named by [`CampaignKey`], a digest of its journal header) and,
//! for tuning, per boot: `tuning-<campaign>-<boot_id>.json`, `installed-<campaign>.json`. A
//! folder or file that is a link, not owned by that user or writable by others is refused.
//! The files are written and read through the target's transport, so the same code serves
//! the local machine and SSH targets.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use thiserror::Error;

use crate::{
    build::install::Installed,
    inventory::Target,
    results::journal::{Event, SavedValue},
    target::{
        quote::sh_quote,
        transport::{Transport, TransportError},
    },
};

/// The variable that moves the `local` target's state folder (tests, unusual hosts).
pub const STATE_DIR_ENV: &str = "ABA_STATE_DIR";

/// The `local` target's state folder unless [`STATE_DIR_ENV`] says otherwise.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/aba";

/// The format of the ledger's files.
const FORMAT: u32 = 1;

/// A ledger file is small (tens of settings, a few kernel files); more is not aba's.
const MAX_ENTRY: usize = 1 << 20;

/// Deadline of one ledger command.
const TIMEOUT: Duration = Duration::from_secs(60);

/// What names a campaign in the ledger: the first 32 hex digits of the SHA-256 of its
/// journal header's name, recipe digest, target and start time. A copy of a results
/// directory names the same campaign, and acts only on what that campaign recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CampaignKey(String);

impl CampaignKey {
    /// The key of the campaign whose journal starts with `header` (a journal without a
    /// campaign header has the key of empty fields).
    #[must_use]
    pub fn of(header: Option<&Event>) -> CampaignKey {
        let empty = String::new();
        let parts = match header {
            Some(Event::Campaign {
                name,
                recipe_sha256,
                target,
                time,
                ..
            }) => [name, recipe_sha256, target, time],
            _ => [&empty, &empty, &empty, &empty],
        };
        let mut digest = Sha256::new();
        for part in parts {
            digest.update(part.as_bytes());
            digest.update([0]);
        }
        CampaignKey(hex::encode(&digest.finalize()[..16]))
    }

    /// The hex digits.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The values tuning found on one boot, recorded before its first write.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuningEntry {
    /// [`FORMAT`].
    pub format: u32,
    /// The campaign's key.
    pub campaign: String,
    /// The boot the values belong to.
    pub boot_id: String,
    /// The results directory, for a reader of the ledger.
    pub results: String,
    /// Each file with its content before the change, in write order.
    pub values: Vec<SavedValue>,
}

/// What a campaign installed for its kernels built on the host.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstalledEntry {
    /// [`FORMAT`].
    pub format: u32,
    /// The campaign's key.
    pub campaign: String,
    /// The results directory, for a reader of the ledger.
    pub results: String,
    /// The install folders aba created (`<base>/<label>-<sha>`).
    pub install_dirs: Vec<String>,
    /// Each file or modules folder, as the journal's `installed` record lists it.
    pub items: Vec<Installed>,
}

/// Why the ledger could not be used.
#[derive(Debug, Error)]
pub enum LedgerError {
    /// The target could not be reached.
    #[error("cannot reach aba's ledger on the target")]
    Transport(#[from] TransportError),
    /// The folder or a file is a link, another user's, writable by others, or unwritable.
    #[error("aba's ledger {dir} on the target cannot be used: {reason}")]
    Unusable {
        /// The ledger folder.
        dir: String,
        /// What the target said.
        reason: String,
    },
    /// A file is not one aba wrote.
    #[error("{path} on the target is not a ledger file of this aba: {reason}")]
    Garbled {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
}

/// The ledger of one target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ledger {
    dir: String,
}

/// The shell lines that refuse a ledger folder `$L` that is a link, not a folder, not this
/// user's, or writable by group or others (exit 3, the reason on stderr).
const GUARD: &str = r#"if [ -L "$L" ] || [ ! -d "$L" ] || [ ! -O "$L" ]; then echo "$L is a link, not a folder, or not owned by $(id -un)" >&2; exit 3; fi; case $(stat -c %a "$L") in *[2367]?|*[2367]) echo "$L is writable by other users" >&2; exit 3;; esac; "#;

impl Ledger {
    /// The ledger of `target`: its state folder's `ledger/` (see the module's doc).
    #[must_use]
    pub fn of(target: &Target) -> Ledger {
        let state = match &target.lock_file {
            Some(marker) => match marker.rsplit_once('/') {
                Some(("", _)) | None => "/".to_owned(),
                Some((parent, _)) => parent.to_owned(),
            },
            None => std::env::var(STATE_DIR_ENV)
                .ok()
                .filter(|d| d.starts_with('/'))
                .unwrap_or_else(|| DEFAULT_STATE_DIR.to_owned()),
        };
        Ledger::at(&format!("{}/ledger", state.trim_end_matches('/')))
    }

    /// The ledger in folder `dir` of the target.
    #[must_use]
    pub fn at(dir: &str) -> Ledger {
        Ledger {
            dir: dir.to_owned(),
        }
    }

    /// Its folder on the target.
    #[must_use]
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// The path of the tuning file of `campaign` on `boot_id`.
    #[must_use]
    pub fn tuning_path(&self, campaign: &CampaignKey, boot_id: &str) -> String {
        format!(
            "{}/tuning-{}-{}.json",
            self.dir,
            campaign.0,
            file_word(boot_id)
        )
    }

    /// The path of the installed file of `campaign`.
    #[must_use]
    pub fn installed_path(&self, campaign: &CampaignKey) -> String {
        format!("{}/installed-{}.json", self.dir, campaign.0)
    }

    /// Records the values tuning found on `boot_id` before it changes them; the entries of
    /// other boots go (a reboot reset what they hold).
    pub fn record_tuning(
        &self,
        transport: &mut dyn Transport,
        campaign: &CampaignKey,
        boot_id: &str,
        results: &str,
        values: Vec<SavedValue>,
    ) -> Result<(), LedgerError> {
        let entry = TuningEntry {
            format: FORMAT,
            campaign: campaign.0.clone(),
            boot_id: boot_id.to_owned(),
            results: results.to_owned(),
            values,
        };
        let prune = format!(
            r#"for f in "$L"/tuning-*.json; do case "$f" in *-{boot}.json) ;; *) rm -f "$f";; esac; done; "#,
            boot = file_word(boot_id)
        );
        self.write(
            transport,
            &self.tuning_path(campaign, boot_id),
            &serde_json::to_string(&entry).expect("invariant: strings serialise"),
            &prune,
        )
    }

    /// The values recorded for `campaign` on `boot_id`, if any.
    pub fn tuning(
        &self,
        transport: &mut dyn Transport,
        campaign: &CampaignKey,
        boot_id: &str,
    ) -> Result<Option<TuningEntry>, LedgerError> {
        let path = self.tuning_path(campaign, boot_id);
        let entry: Option<TuningEntry> = self.read(transport, &path)?;
        match entry {
            Some(e) if e.campaign != campaign.0 || e.boot_id != boot_id || e.format != FORMAT => {
                Err(LedgerError::Garbled {
                    path,
                    reason: "it names another campaign, boot or format".to_owned(),
                })
            }
            other => Ok(other),
        }
    }

    /// Drops the tuning file of `campaign` on `boot_id` (its values were put back).
    pub fn forget_tuning(
        &self,
        transport: &mut dyn Transport,
        campaign: &CampaignKey,
        boot_id: &str,
    ) -> Result<(), LedgerError> {
        self.remove(transport, &self.tuning_path(campaign, boot_id))
    }

    /// Adds what one switch installed into `install_dir` to the campaign's record.
    pub fn record_installed(
        &self,
        transport: &mut dyn Transport,
        campaign: &CampaignKey,
        results: &str,
        install_dir: &str,
        items: &[Installed],
    ) -> Result<(), LedgerError> {
        let mut entry = self
            .installed(transport, campaign)?
            .unwrap_or(InstalledEntry {
                format: FORMAT,
                campaign: campaign.0.clone(),
                results: results.to_owned(),
                ..InstalledEntry::default()
            });
        if !entry.install_dirs.iter().any(|d| d == install_dir) {
            entry.install_dirs.push(install_dir.to_owned());
        }
        for item in items {
            if !entry.items.contains(item) {
                entry.items.push(item.clone());
            }
        }
        self.write(
            transport,
            &self.installed_path(campaign),
            &serde_json::to_string(&entry).expect("invariant: strings serialise"),
            "",
        )
    }

    /// What `campaign` installed, if it installed anything.
    pub fn installed(
        &self,
        transport: &mut dyn Transport,
        campaign: &CampaignKey,
    ) -> Result<Option<InstalledEntry>, LedgerError> {
        let path = self.installed_path(campaign);
        let entry: Option<InstalledEntry> = self.read(transport, &path)?;
        match entry {
            Some(e) if e.campaign != campaign.0 || e.format != FORMAT => {
                Err(LedgerError::Garbled {
                    path,
                    reason: "it names another campaign or format".to_owned(),
                })
            }
            other => Ok(other),
        }
    }

    /// Replaces the installed record of `campaign` with `entry`, or drops it when `None`.
    pub fn set_installed(
        &self,
        transport: &mut dyn Transport,
        campaign: &CampaignKey,
        entry: Option<&InstalledEntry>,
    ) -> Result<(), LedgerError> {
        let path = self.installed_path(campaign);
        match entry {
            Some(e) => self.write(
                transport,
                &path,
                &serde_json::to_string(e).expect("invariant: strings serialise"),
                "",
            ),
            None => self.remove(transport, &path),
        }
    }

    /// Writes `text` to `path` in the ledger folder (created 0700 when missing), through a
    /// temporary file renamed over it, after `also` (more shell lines run in the folder).
    fn write(
        &self,
        transport: &mut dyn Transport,
        path: &str,
        text: &str,
        also: &str,
    ) -> Result<(), LedgerError> {
        let script = format!(
            r#"L={dir}; umask 077; [ -L "$L" ] || mkdir -p "$L" || exit 3; {GUARD}{also}t={tmp}; rm -f "$t"; printf '%s\n' {text} > "$t" && mv -f "$t" {path} || {{ rm -f "$t"; exit 3; }}"#,
            dir = sh_quote(&self.dir),
            tmp = sh_quote(&format!("{path}.tmp")),
            text = sh_quote(text),
            path = sh_quote(path),
        );
        self.run(transport, &script).map(drop)
    }

    /// Removes `path` from the ledger folder, if both are there.
    fn remove(&self, transport: &mut dyn Transport, path: &str) -> Result<(), LedgerError> {
        let script = format!(
            r#"L={dir}; [ -e "$L" ] || [ -L "$L" ] || exit 0; {GUARD}rm -f {path}"#,
            dir = sh_quote(&self.dir),
            path = sh_quote(path),
        );
        self.run(transport, &script).map(drop)
    }

    /// Reads and parses `path` of the ledger folder; `None` when the folder or file is absent.
    fn read<T: serde::de::DeserializeOwned>(
        &self,
        transport: &mut dyn Transport,
        path: &str,
    ) -> Result<Option<T>, LedgerError> {
        let script = format!(
            r#"L={dir}; F={path}; [ -e "$L" ] || [ -L "$L" ] || exit 0; {GUARD}[ -e "$F" ] || [ -L "$F" ] || exit 0; if [ -L "$F" ] || [ ! -f "$F" ] || [ ! -O "$F" ]; then echo "$F is a link, not a file, or not owned by $(id -un)" >&2; exit 3; fi; case $(stat -c %a "$F") in *[2367]?|*[2367]) echo "$F is writable by other users" >&2; exit 3;; esac; echo @@ledger; head -c {max} "$F""#,
            dir = sh_quote(&self.dir),
            path = sh_quote(path),
            max = MAX_ENTRY + 1,
        );
        let out = self.run(transport, &script)?;
        let Some(text) = out.strip_prefix("@@ledger\n") else {
            return Ok(None);
        };
        if text.len() > MAX_ENTRY {
            return Err(LedgerError::Garbled {
                path: path.to_owned(),
                reason: format!("larger than {}", crate::text::bytes(MAX_ENTRY as u64)),
            });
        }
        serde_json::from_str(text)
            .map(Some)
            .map_err(|e| LedgerError::Garbled {
                path: path.to_owned(),
                reason: e.to_string(),
            })
    }

    fn run(&self, transport: &mut dyn Transport, script: &str) -> Result<String, LedgerError> {
        let out = transport.exec(script, TIMEOUT)?;
        if out.outcome.success() {
            return Ok(out.stdout_text());
        }
        Err(LedgerError::Unusable {
            dir: self.dir.clone(),
            reason: crate::text::one_line(
                &crate::text::last_lines(&out.stderr_text(), 2).join(" / "),
            )
            .into_owned(),
        })
    }
}

/// `text` with every character but letters, digits and `-` replaced by `_`: a boot_id as
/// part of a file name.
fn file_word(text: &str) -> String {
    text.chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{CampaignKey, Ledger};
    use crate::{
        results::journal::{Event, SavedValue},
        target::local::LocalTransport,
    };

    fn header(time: &str) -> Event {
        Event::Campaign {
            format: 1,
            aba: "t".into(),
            name: "n".into(),
            recipe_sha256: "x".into(),
            target: "local".into(),
            points: vec![],
            time: time.into(),
            limits: None,
        }
    }

    #[test]
    fn a_recorded_entry_reads_back_and_other_boots_are_pruned() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let ledger = Ledger::at(&tmp.path().join("ledger").display().to_string());
        let key = CampaignKey::of(Some(&header("t1")));
        assert_ne!(key, CampaignKey::of(Some(&header("t2"))));
        let mut t = LocalTransport::new();
        assert_eq!(ledger.tuning(&mut t, &key, "b1").expect("read"), None);
        let value = |v: &str| SavedValue {
            path: "/proc/sys/kernel/x".into(),
            value: v.into(),
        };
        ledger
            .record_tuning(&mut t, &key, "b1", "/r", vec![value("it's \"1\"\t2")])
            .expect("record");
        let back = ledger
            .tuning(&mut t, &key, "b1")
            .expect("read")
            .expect("there");
        assert_eq!(back.values, vec![value("it's \"1\"\t2")]);
        ledger
            .record_tuning(&mut t, &key, "b2", "/r", vec![value("3")])
            .expect("record");
        assert_eq!(ledger.tuning(&mut t, &key, "b1").expect("read"), None);
        ledger.forget_tuning(&mut t, &key, "b2").expect("forget");
        assert_eq!(ledger.tuning(&mut t, &key, "b2").expect("read"), None);
    }

    #[test]
    fn a_ledger_others_can_write_or_a_linked_one_is_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("ledger");
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let key = CampaignKey::of(Some(&header("t1")));
        let mut t = LocalTransport::new();
        let ledger = Ledger::at(&dir.display().to_string());
        let e = ledger.tuning(&mut t, &key, "b1").expect_err("refused");
        assert!(e.to_string().contains("writable by other users"), "{e}");
        let linked = tmp.path().join("linked");
        std::os::unix::fs::symlink(tmp.path(), &linked).expect("link");
        let e = Ledger::at(&linked.display().to_string())
            .record_tuning(&mut t, &key, "b1", "/r", Vec::new())
            .expect_err("refused");
        assert!(e.to_string().contains("is a link"), "{e}");
    }
}
