//! One campaign per machine. Two campaigns on one target interleave their reboots and run
//! their workloads side by side, and neither records it; so before the first command that
//! changes a target, aba takes its lock:
//!
//! - a **host-side lock**: an `flock`ed file in the lock directory (`$ABA_LOCK_DIR`, else
//!   `$XDG_STATE_HOME/aba/locks`, else `~/.local/state/aba/locks`), named after the machine's
//!   address and port, so two inventory names for one machine collide. The kernel releases it
//!   when the holder dies, however it dies; the file also says who holds it.
//! - a **marker on the target** (the inventory's `lock_file`, default `/var/lib/aba/lock`):
//!   one JSON line naming the campaign (results directory, host, user, pid, start time). It
//!   survives reboots where the file system does, keeps campaigns started from other hosts
//!   away, and is checked again after every boot.
//!
//! A second campaign refuses at once naming the holder, or waits with `--wait`. A marker left
//! by a campaign whose process is gone (killed) is reported with the command that clears it;
//! aba never breaks another campaign's lock by itself. The campaign that left it takes it back
//! on `aba resume`. The built-in `local` target has the host-side lock only.

use std::{
    fs::{File, OpenOptions},
    io::{Read as _, Seek as _, Write as _},
    os::{
        fd::AsRawFd,
        unix::fs::{DirBuilderExt as _, OpenOptionsExt as _},
    },
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::{
    campaign::reservation::{HookRun, Reservation},
    interrupt,
    inventory::Target,
    target::{
        host::HostCommandError,
        quote::sh_quote,
        transport::{Transport, TransportError},
    },
};

/// How often a waiting campaign looks again.
const WAIT_POLL: Duration = Duration::from_secs(2);

/// Who holds a target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The campaign's results directory (absolute).
    pub campaign: String,
    /// The host aba runs on.
    pub host: String,
    /// The user aba runs as.
    pub user: String,
    /// aba's process id on that host.
    pub pid: u32,
    /// When the lock was taken (RFC 3339, UTC).
    pub started: String,
    /// The recipe's name.
    pub recipe: String,
    /// The inventory name of the target.
    pub target: String,
}

impl Holder {
    /// This process, running the campaign in `campaign` on `target`.
    pub fn this_process(campaign: &Path, recipe: &str, target: &str) -> Holder {
        let campaign = std::path::absolute(campaign).unwrap_or_else(|_| campaign.to_path_buf());
        Holder {
            campaign: campaign.display().to_string(),
            host: hostname(),
            user: std::env::var("USER").unwrap_or_else(|_| "root".to_owned()),
            pid: std::process::id(),
            started: crate::results::journal::now_rfc3339(),
            recipe: recipe.to_owned(),
            target: target.to_owned(),
        }
    }

    /// The same campaign: a resume takes back what it left.
    fn same_campaign(&self, other: &Holder) -> bool {
        self.host == other.host && self.campaign == other.campaign
    }

    /// The process a message may tell the user to stop: a complete record's pid above 1.
    /// Never 0 (`kill 0` signals the user's own process group) nor 1 (init), never a pid
    /// from a record that is missing who or where it is (half written, or forged).
    pub fn stoppable_pid(&self) -> Option<u32> {
        let complete = [&self.campaign, &self.host, &self.user, &self.started]
            .iter()
            .all(|field| !field.trim().is_empty());
        (complete && self.pid > 1 && i32::try_from(self.pid).is_ok()).then_some(self.pid)
    }

    /// Whether the holding process still runs, as far as this host can tell.
    fn liveness(&self) -> Liveness {
        if self.host != hostname() {
            return Liveness::Unknown;
        }
        let Ok(pid) = i32::try_from(self.pid) else {
            return Liveness::Gone;
        };
        // SAFETY: kill(2) with signal 0 only checks that the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        if alive && pid != 0 {
            Liveness::Running
        } else {
            Liveness::Gone
        }
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A record read from a lock file or a target's marker: anyone could have written it.
        let shown = |text: &str| crate::text::untrusted(text, RECORD_SHOWN).into_owned();
        write!(
            f,
            "campaign {} (recipe {}, pid {} of {} on {}, since {})",
            shown(&self.campaign),
            shown(&self.recipe),
            self.pid,
            shown(&self.user),
            shown(&self.host),
            shown(&self.started)
        )
    }
}

/// Whether a holder is still there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    /// Its process runs on this host.
    Running,
    /// It ran on this host and its process is gone (killed, crashed).
    Gone,
    /// It runs on another host; this one cannot tell.
    Unknown,
}

/// Why a target could not be locked.
#[derive(Debug, Error)]
pub enum LockError {
    /// Another campaign holds the target.
    #[error("target `{target}` is in use by {holder}{}", match live {
        Liveness::Running => "",
        Liveness::Gone => ", whose process is gone (killed?): its lock was left behind",
        Liveness::Unknown => " on another host",
    })]
    Busy {
        /// The target.
        target: String,
        /// Who holds it.
        holder: Box<Holder>,
        /// Whether the holder still runs.
        live: Liveness,
    },
    /// Another aba of this host holds the host-side lock and has not written its record
    /// yet (it started a moment ago): nobody can be named, so nothing is to be stopped.
    #[error(
        "target `{target}` is being taken by another aba on this host that is starting: it holds the host-side lock file {} and has not written who it is yet",
        path.display()
    )]
    Starting {
        /// The target.
        target: String,
        /// The host-side lock file.
        path: PathBuf,
    },
    /// The lock directory or file on the host could not be used.
    #[error("cannot use the host-side lock file {}", path.display())]
    Host {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The target could not be reached or its marker could not be written.
    #[error("cannot check the lock marker {path} on target `{target}`: {reason}")]
    Marker {
        /// The target.
        target: String,
        /// The marker's path on the target.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The connection was lost while the marker was checked after a boot: the engine
    /// reconnects and checks again (the check is safe to repeat), as after any other step.
    #[error("cannot check the lock marker {path} on target `{target}`")]
    ConnectionLost {
        /// The target.
        target: String,
        /// The marker's path on the target.
        path: String,
        /// The lost connection (boxed: it is rare, and the error stays small).
        #[source]
        source: Box<TransportError>,
    },
    /// The inventory's `reserve` command failed: the lab scheduler did not grant the machine.
    #[error("cannot reserve target `{target}`")]
    Reserve {
        /// The target.
        target: String,
        /// The command's failure (boxed: the error stays small).
        #[source]
        source: Box<HostCommandError>,
    },
    /// Ctrl-C while waiting.
    #[error("interrupted while waiting for target `{0}`")]
    Interrupted(String),
}

/// A target held by this campaign: the host-side lock (released when this value is dropped)
/// and, for a remote target, the marker's path.
#[derive(Debug)]
pub struct TargetLock {
    /// First, so that it is given back before the host-side lock (dropped in field order).
    reservation: Option<Reservation>,
    file: File,
    path: PathBuf,
    holder: Holder,
    target: String,
    marker: Option<String>,
    /// The power-cycle command run because the target did not answer when the lock was taken.
    revived: Option<String>,
    /// A marker of this same campaign found on the target is left as it is (not rewritten
    /// with this process's record): `aba restore` of a killed campaign must leave the marker
    /// naming that campaign's process for `aba resume`, not its own short-lived pid.
    keep_own_marker: bool,
    /// Whether the marker was this campaign's already and was left as it is.
    kept_own_marker: bool,
}

/// Brings back a target that does not answer when a campaign is resumed, and returns the
/// command it ran. The runner that was killed may have left the machine in a kernel that hung
/// as it booted; `aba resume` must recover from that as the engine does after any switch (the
/// inventory's `power_cycle`), not give up on the night.
pub type Revive<'a> = &'a mut dyn FnMut(&mut dyn Transport) -> Result<String, String>;

impl TargetLock {
    /// Takes `target` for `holder`: the host-side lock first, then the marker on the target
    /// through `transport` (connected here). With `wait`, waits while another live campaign
    /// holds either; a stale marker is never waited for (nothing would remove it). A target
    /// that does not answer within its boot timeout is given to `revive` when there is one
    /// (a resumed campaign power-cycles it: see [`Revive`]), then waited for once more.
    pub fn acquire(
        target: &Target,
        key: &str,
        holder: Holder,
        transport: &mut dyn Transport,
        wait: bool,
        revive: Option<Revive<'_>>,
    ) -> Result<TargetLock, LockError> {
        TargetLock::acquire_with(target, key, holder, transport, wait, revive, false)
    }

    /// Takes `target` for `aba restore` of the campaign `holder` names: as
    /// [`TargetLock::acquire`] without waiting or reviving, but a marker that is already this
    /// campaign's (a killed run's) is left untouched ([`TargetLock::kept_own_marker`]).
    pub fn acquire_for_restore(
        target: &Target,
        key: &str,
        holder: Holder,
        transport: &mut dyn Transport,
    ) -> Result<TargetLock, LockError> {
        TargetLock::acquire_with(target, key, holder, transport, false, None, true)
    }

    /// [`TargetLock::acquire`], and with `keep_own_marker` [`TargetLock::acquire_for_restore`].
    fn acquire_with(
        target: &Target,
        key: &str,
        holder: Holder,
        transport: &mut dyn Transport,
        wait: bool,
        revive: Option<Revive<'_>>,
        keep_own_marker: bool,
    ) -> Result<TargetLock, LockError> {
        let path = lock_dir()
            .map_err(|source| LockError::Host {
                path: PathBuf::from("(lock directory)"),
                source,
            })?
            .join(format!("{}.lock", file_name(key)));
        let file = lock_host(&path, &target.name, wait)?;
        let mut lock = TargetLock {
            reservation: None,
            file,
            path,
            holder,
            target: target.name.clone(),
            marker: target.lock_file.clone(),
            revived: None,
            keep_own_marker,
            kept_own_marker: false,
        };
        lock.write_host_record()?;
        // The scheduler is asked once this host's own lock is held, and before the target is
        // touched; a marker refused below drops the lock, which gives the machine back.
        lock.reservation = Reservation::take(target, &lock.holder.campaign).map_err(|source| {
            LockError::Reserve {
                target: target.name.clone(),
                source: Box::new(source),
            }
        })?;
        if lock.marker.is_some() {
            let mut deadline = Instant::now() + target.boot_timeout.max(Duration::from_secs(120));
            if let Err(e) = transport.reconnect(deadline) {
                let (TransportError::Connect { .. }, Some(revive)) = (&e, revive) else {
                    return Err(lock.marker_error(&e.to_string()));
                };
                // The runner this campaign resumes may have left the machine in a boot that
                // hung: bring it back the way the engine would after a switch.
                let command = revive(transport).map_err(|reason| {
                    lock.marker_error(&format!(
                        "{e}; the power-cycle command that should bring it back failed: {reason}"
                    ))
                })?;
                lock.revived = Some(command);
                deadline = Instant::now() + target.boot_timeout.max(Duration::from_secs(120));
                transport.reconnect(deadline).map_err(|again| {
                    lock.marker_error(&format!("{again} (even after the power-cycle command)"))
                })?;
            }
            loop {
                match lock.claim_marker_once(transport) {
                    Err(Claim::Lock(LockError::Busy {
                        live: Liveness::Running | Liveness::Unknown,
                        ..
                    })) if wait => sleep_or_interrupt(&lock.target)?,
                    // A killed campaign's target may be rebooting into its one-shot kernel
                    // (resume comes at once): the old boot answers, then goes. Wait for the
                    // next one within the boot timeout, like a switch would.
                    Err(Claim::Lost(e)) if Instant::now() < deadline => {
                        transport.disconnect();
                        sleep_or_interrupt(&lock.target)?;
                        transport
                            .reconnect(deadline)
                            .map_err(|_| lock.marker_error(&transport_reason(&e)))?;
                    }
                    Err(Claim::Lost(e)) => return Err(lock.marker_error(&transport_reason(&e))),
                    Err(Claim::Lock(e)) => return Err(e),
                    Ok(claimed) => {
                        lock.kept_own_marker = claimed == Claimed::KeptOwn;
                        break;
                    }
                }
            }
        }
        Ok(lock)
    }

    /// Whether the target's marker was this campaign's already and was left as it is
    /// ([`TargetLock::acquire_for_restore`]); otherwise this process wrote it.
    pub fn kept_own_marker(&self) -> bool {
        self.kept_own_marker
    }

    /// The power-cycle command run while the lock was taken, if the target had to be
    /// brought back (the engine journals it as a warning).
    pub fn revived(&self) -> Option<&str> {
        self.revived.as_deref()
    }

    /// The inventory's `reserve` run, once, for the journal.
    pub fn take_reserved(&self) -> Option<HookRun> {
        self.reservation.as_ref()?.take_reserved()
    }

    /// Runs the inventory's `release` (once; after the marker is removed).
    pub fn release_reservation(&self) -> Option<HookRun> {
        self.reservation.as_ref()?.release()
    }

    /// Who holds the target: this campaign.
    pub fn holder(&self) -> &Holder {
        &self.holder
    }

    /// The start of this campaign's marker record, as written (`"campaign":…,"host":…`),
    /// which is how the target-side script recognises it.
    fn ours(&self) -> String {
        format!(
            "\"campaign\":{},\"host\":{}",
            serde_json::Value::String(self.holder.campaign.clone()),
            serde_json::Value::String(self.holder.host.clone())
        )
    }

    fn marker_error(&self, reason: &str) -> LockError {
        LockError::Marker {
            target: self.target.clone(),
            path: self.marker.clone().unwrap_or_default(),
            reason: reason.to_owned(),
        }
    }

    fn write_host_record(&mut self) -> Result<(), LockError> {
        let mut line = serde_json::to_string(&self.holder).expect("invariant: a holder serialises");
        line.push('\n');
        let io = |source| LockError::Host {
            path: self.path.clone(),
            source,
        };
        self.file.set_len(0).map_err(io)?;
        self.file.rewind().map_err(io)?;
        self.file.write_all(line.as_bytes()).map_err(io)?;
        self.file.sync_data().map_err(io)
    }

    /// A lock on a host-side file in `dir` with a marker at `marker` on the target, for the
    /// engine's tests over a scripted machine (which answers the marker script with success).
    #[cfg(test)]
    pub(crate) fn for_engine_tests(dir: &Path, marker: &str) -> TargetLock {
        let path = dir.join("scripted.lock");
        let file = File::create(&path).expect("test lock file");
        let holder = Holder::this_process(dir, "scripted", "scripted");
        TargetLock {
            reservation: None,
            file,
            path,
            holder,
            target: "scripted".to_owned(),
            marker: Some(marker.to_owned()),
            revived: None,
            keep_own_marker: false,
            kept_own_marker: false,
        }
    }

    /// Writes the marker unless another campaign's is there (then [`LockError::Busy`]). Run
    /// again after every boot: a target whose marker did not survive the reboot gets it back,
    /// one that another campaign took stops this one. A lost connection is
    /// [`LockError::ConnectionLost`], with the transport's error for the engine's reconnect.
    pub fn claim_marker(&self, transport: &mut dyn Transport) -> Result<(), LockError> {
        self.claim_marker_once(transport)
            .map(drop)
            .map_err(|e| match e {
                Claim::Lock(e) => e,
                Claim::Lost(source) => LockError::ConnectionLost {
                    target: self.target.clone(),
                    path: self.marker.clone().unwrap_or_default(),
                    source: Box::new(source),
                },
            })
    }

    /// [`TargetLock::claim_marker`], telling a lost connection apart.
    fn claim_marker_once(&self, transport: &mut dyn Transport) -> Result<Claimed, Claim> {
        let Some(file) = &self.marker else {
            return Ok(Claimed::Written);
        };
        let record = serde_json::to_string(&self.holder).expect("invariant: a holder serialises");
        let ours = self.ours();
        let dir = file
            .rsplit_once('/')
            .map_or("/", |(d, _)| if d.is_empty() { "/" } else { d });
        // `set -C` makes the first write exclusive, so two hosts claiming at once cannot both
        // win; a marker that is already ours is rewritten, or kept (exit 5) for a restore.
        let own = if self.keep_own_marker {
            "exit 5".to_owned()
        } else {
            format!(
                "printf '%s\\n' {r} > \"$f.tmp\" && mv -f \"$f.tmp\" \"$f\" && exit 0; exit 4",
                r = sh_quote(&record)
            )
        };
        let script = format!(
            "f={f}; mkdir -p {d} || exit 4; \
             if (set -C; printf '%s\\n' {r} > \"$f\") 2>/dev/null; then exit 0; fi; \
             cur=$(cat \"$f\" 2>/dev/null); \
             case \"$cur\" in *{o}*) {own};; esac; \
             printf '%s\\n' \"$cur\"; exit 3",
            f = sh_quote(file),
            d = sh_quote(dir),
            r = sh_quote(&record),
            o = sh_quote(&ours),
        );
        let out = transport
            .exec(&script, Duration::from_secs(60))
            .map_err(|e| match e {
                TransportError::ConnectionLost { .. } | TransportError::Connect { .. } => {
                    Claim::Lost(e)
                }
                other => Claim::Lock(self.marker_error(&transport_reason(&other))),
            })?;
        match &out.outcome {
            crate::target::transport::ExitOutcome::Exited(0) => Ok(Claimed::Written),
            crate::target::transport::ExitOutcome::Exited(5) if self.keep_own_marker => {
                Ok(Claimed::KeptOwn)
            }
            crate::target::transport::ExitOutcome::Exited(3) => {
                let text = out.stdout_text();
                match serde_json::from_str::<Holder>(text.trim()) {
                    Ok(other) if other.same_campaign(&self.holder) => Ok(Claimed::KeptOwn),
                    Ok(other) => Err(Claim::Lock(LockError::Busy {
                        target: self.target.clone(),
                        live: other.liveness(),
                        holder: Box::new(other),
                    })),
                    Err(_) => Err(Claim::Lock(self.marker_error(&format!(
                        "it holds something aba did not write: {}",
                        shown_record(&text)
                    )))),
                }
            }
            other => Err(Claim::Lock(
                self.marker_error(&format!("{other}: {}", out.stderr_text().trim())),
            )),
        }
    }

    /// Removes the marker if it is still this campaign's (end of a run, failure, Ctrl-C).
    pub fn release_marker(&self, transport: &mut dyn Transport) -> Result<(), LockError> {
        let Some(file) = &self.marker else {
            return Ok(());
        };
        let ours = self.ours();
        let script = format!(
            "f={f}; case \"$(cat \"$f\" 2>/dev/null)\" in *{o}*) rm -f \"$f\";; esac",
            f = sh_quote(file),
            o = sh_quote(&ours),
        );
        let out = transport
            .exec(&script, Duration::from_secs(60))
            .map_err(|e| self.marker_error(&transport_reason(&e)))?;
        if out.outcome.success() {
            Ok(())
        } else {
            Err(self.marker_error(&format!("{}: {}", out.outcome, out.stderr_text().trim())))
        }
    }
}

/// What a successful marker claim did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Claimed {
    /// This process's record is on the target now (new, or rewritten over its own).
    Written,
    /// The marker was this campaign's already and was left as it is.
    KeptOwn,
}

/// Why a marker claim did not succeed.
enum Claim {
    /// The connection went (the target is rebooting): worth reconnecting.
    Lost(TransportError),
    /// Anything else.
    Lock(LockError),
}

impl Drop for TargetLock {
    fn drop(&mut self) {
        // The kernel drops the flock with the file; an empty file says nobody holds it.
        let _ = self.file.set_len(0);
    }
}

/// Clears the locks of `target` that no running campaign of this host holds: the host-side
/// record (when its flock is free) and the marker on the target (unless its holder runs on
/// this host). Returns what was removed; [`LockError::Busy`] when a live campaign holds it.
pub fn release_stale(
    target: &Target,
    key: &str,
    transport: &mut dyn Transport,
) -> Result<Vec<String>, LockError> {
    let path = lock_dir()
        .map_err(|source| LockError::Host {
            path: PathBuf::from("(lock directory)"),
            source,
        })?
        .join(format!("{}.lock", file_name(key)));
    let mut released = Vec::new();
    if std::fs::symlink_metadata(&path).is_ok() {
        let mut file = lock_host(&path, &target.name, false)?;
        let text = read_record(&mut file);
        if !text.trim().is_empty() {
            released.push(format!(
                "host-side record {}: {}",
                path.display(),
                shown_record(&text)
            ));
        }
        file.set_len(0).map_err(|source| LockError::Host {
            path: path.clone(),
            source,
        })?;
    }
    let Some(marker) = &target.lock_file else {
        return Ok(released);
    };
    let marker_error = |reason: String| LockError::Marker {
        target: target.name.clone(),
        path: marker.clone(),
        reason,
    };
    let out = transport
        .exec(
            &format!("cat {} 2>/dev/null", sh_quote(marker)),
            Duration::from_secs(60),
        )
        .map_err(|e| marker_error(transport_reason(&e)))?;
    let text = out.stdout_text();
    if text.trim().is_empty() {
        return Ok(released);
    }
    if let Ok(holder) = serde_json::from_str::<Holder>(text.trim())
        && holder.liveness() == Liveness::Running
    {
        return Err(LockError::Busy {
            target: target.name.clone(),
            holder: Box::new(holder),
            live: Liveness::Running,
        });
    }
    let out = transport
        .exec(
            &format!("rm -f {}", sh_quote(marker)),
            Duration::from_secs(60),
        )
        .map_err(|e| marker_error(transport_reason(&e)))?;
    if !out.outcome.success() {
        return Err(marker_error(out.stderr_text().trim().to_owned()));
    }
    released.push(format!(
        "marker {marker} on `{}`: {}",
        target.name,
        shown_record(&text)
    ));
    Ok(released)
}

fn transport_reason(e: &TransportError) -> String {
    e.to_string()
}

/// The most of a lock record aba reads: a record it wrote is a few hundred bytes; a file that
/// someone filled (megabytes, escapes) is read this far and shown cut and escaped.
const RECORD_LIMIT: u64 = 4096;

/// How many characters of a lock record a message shows.
const RECORD_SHOWN: usize = 400;

/// The start of the lock record in `file` (at most [`RECORD_LIMIT`] bytes), as text.
fn read_record(file: &mut File) -> String {
    let mut data = Vec::new();
    let _ = file.rewind();
    let _ = (&*file).take(RECORD_LIMIT).read_to_end(&mut data);
    let _ = file.rewind();
    String::from_utf8_lossy(&data).into_owned()
}

/// A lock record as a message shows it: one line, escaped, cut.
fn shown_record(text: &str) -> String {
    crate::text::untrusted(text.trim(), RECORD_SHOWN).into_owned()
}

/// Takes the `flock` of `path`; with `wait`, keeps trying while another process holds it.
fn lock_host(path: &Path, target: &str, wait: bool) -> Result<File, LockError> {
    let io = |source| LockError::Host {
        path: path.to_path_buf(),
        source,
    };
    // Never through a link (it would truncate whatever file it names), never a FIFO or a
    // device; created private.
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| {
            io(if e.raw_os_error() == Some(libc::ELOOP) {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "it is a symbolic link; aba does not follow links to lock files (remove it)",
                )
            } else {
                e
            })
        })?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it is not a regular file (remove it)",
        )));
    }
    let mut file = file;
    // A holder of this host that is gone may still hold the flock for a moment through a
    // child it forked (a command between fork and exec keeps every descriptor until its copy
    // of the holder's memory is released): that is waited out, briefly, never reported.
    let mut orphaned_until: Option<Instant> = None;
    loop {
        // SAFETY: flock(2) on a descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(file);
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(io(err));
        }
        if !wait {
            let text = read_record(&mut file);
            let gone = serde_json::from_str::<Holder>(text.trim())
                .is_ok_and(|h| h.liveness() == Liveness::Gone);
            let until = *orphaned_until.get_or_insert_with(|| Instant::now() + ORPHANED_FLOCK);
            if gone && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
            // The holder writes its record right after it takes the flock: until then (or
            // while it rewrites it) the file is empty or cut, and the holder is starting.
            return Err(match serde_json::from_str::<Holder>(text.trim()) {
                Ok(holder) => LockError::Busy {
                    target: target.to_owned(),
                    live: Liveness::Running,
                    holder: Box::new(holder),
                },
                Err(_) => LockError::Starting {
                    target: target.to_owned(),
                    path: path.to_path_buf(),
                },
            });
        }
        sleep_or_interrupt(target)?;
    }
}

/// How long a flock whose recorded holder is gone is waited for (see [`lock_host`]).
const ORPHANED_FLOCK: Duration = Duration::from_secs(3);

fn sleep_or_interrupt(target: &str) -> Result<(), LockError> {
    let until = Instant::now() + WAIT_POLL;
    while Instant::now() < until {
        if interrupt::requested() {
            return Err(LockError::Interrupted(target.to_owned()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// The directory of host-side lock files. The folders it creates are private (mode 0700); one
/// that exists keeps its mode: `$ABA_LOCK_DIR` may name a folder shared on purpose.
pub fn lock_dir() -> std::io::Result<PathBuf> {
    let dir = if let Some(dir) = std::env::var_os("ABA_LOCK_DIR") {
        PathBuf::from(dir)
    } else if let Some(state) = std::env::var_os("XDG_STATE_HOME") {
        PathBuf::from(state).join("aba/locks")
    } else {
        let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from);
        home.join(".local/state/aba/locks")
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)?;
    Ok(dir)
}

/// `host:port` as a file name.
fn file_name(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// This host's name.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into the buffer.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".to_owned();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::{Claimed, Holder, Liveness, LockError, TargetLock, lock_host};
    use crate::{error::Error, target::local::LocalTransport};

    fn holder(pid: u32) -> Holder {
        Holder {
            campaign: "/r/x".into(),
            host: super::hostname(),
            user: "u".into(),
            pid,
            started: "t".into(),
            recipe: "r".into(),
            target: "t".into(),
        }
    }

    #[test]
    fn a_second_host_lock_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.lock");
        let first = lock_host(&path, "box", false).expect("first");
        assert!(lock_host(&path, "box", false).is_err());
        drop(first);
        lock_host(&path, "box", false).expect("free again");
    }

    /// Two campaigns started 5 ms apart: the second finds the flock taken and the record not
    /// yet written. It reads as "starting", never as a holder of pid 0 with `kill 0` (which
    /// would signal the user's own process group).
    #[test]
    fn a_holder_that_has_not_written_its_record_reads_as_starting_without_a_kill_hint() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.lock");
        let _first = lock_host(&path, "box", false).expect("first");
        let refused = lock_host(&path, "box", false).expect_err("held");
        assert!(
            matches!(&refused, LockError::Starting { target, .. } if target == "box"),
            "{refused:?}"
        );
        let shown = Error::lock("cannot run", refused).render();
        assert!(shown.contains("is starting"), "{shown}");
        assert!(!shown.contains("kill"), "{shown}");
        assert!(!shown.contains("pid 0"), "{shown}");
    }

    /// Only a complete record's pid above 1 is ever offered to `kill`.
    #[test]
    fn only_a_complete_records_pid_above_one_is_stoppable() {
        assert_eq!(holder(4242).stoppable_pid(), Some(4242));
        for pid in [0, 1, u32::MAX] {
            assert_eq!(holder(pid).stoppable_pid(), None, "pid {pid}");
        }
        let mut cut = holder(4242);
        cut.started = String::new();
        assert_eq!(cut.stoppable_pid(), None);
        for pid in [0, 1] {
            let busy = LockError::Busy {
                target: "box".into(),
                holder: Box::new(holder(pid)),
                live: Liveness::Running,
            };
            let shown = Error::lock("cannot run", busy).render();
            assert!(!shown.contains("kill"), "{shown}");
            assert!(shown.contains("--wait"), "{shown}");
        }
        let busy = LockError::Busy {
            target: "box".into(),
            holder: Box::new(holder(4242)),
            live: Liveness::Running,
        };
        let shown = Error::lock("cannot run", busy).render();
        assert!(shown.contains("(kill 4242)"), "{shown}");
    }

    /// `aba restore` of a killed campaign (issue 37, item 7): the target's marker, which
    /// names the killed process, is left byte for byte, not rewritten with the restore's own
    /// pid (which would be gone a moment later); a marker the restore had to write is its own
    /// and goes again. `aba resume` still rewrites the campaign's marker with its pid.
    #[test]
    fn a_restore_leaves_a_killed_campaigns_marker_as_it_was() {
        let dir = tempfile::tempdir().expect("tempdir");
        let marker = dir.path().join("marker");
        let mut lock = TargetLock::for_engine_tests(dir.path(), marker.to_str().expect("utf-8"));
        let mut killed = lock.holder.clone();
        killed.pid = 4242;
        killed.started = "the killed run's start".into();
        let record = format!(
            "{}\n",
            serde_json::to_string(&killed).expect("a holder serialises")
        );
        std::fs::write(&marker, &record).expect("marker");
        let mut transport = LocalTransport::new();

        lock.keep_own_marker = true;
        let claimed = lock.claim_marker_once(&mut transport).ok();
        assert_eq!(claimed, Some(Claimed::KeptOwn));
        assert_eq!(std::fs::read_to_string(&marker).expect("read"), record);

        std::fs::remove_file(&marker).expect("rm");
        let claimed = lock.claim_marker_once(&mut transport).ok();
        assert_eq!(claimed, Some(Claimed::Written));
        lock.release_marker(&mut transport).expect("released");
        assert!(!marker.exists());

        std::fs::write(&marker, &record).expect("marker");
        lock.keep_own_marker = false;
        let claimed = lock.claim_marker_once(&mut transport).ok();
        assert_eq!(claimed, Some(Claimed::Written));
        let now = std::fs::read_to_string(&marker).expect("read");
        assert!(
            now.contains(&format!("\"pid\":{}", std::process::id())),
            "{now}"
        );
    }

    #[test]
    fn liveness_is_read_from_the_process_table() {
        assert_eq!(holder(std::process::id()).liveness(), Liveness::Running);
        assert_eq!(holder(u32::MAX - 1).liveness(), Liveness::Gone);
        let mut other = holder(1);
        other.host = "elsewhere.invalid".into();
        assert_eq!(other.liveness(), Liveness::Unknown);
    }
}
