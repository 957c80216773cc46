//! A cgroup of its own for each command on the local target, where this machine has a cgroup
//! v2 hierarchy aba may write: every process the command starts is born in it, whatever it
//! does afterwards. A daemon that leaves the session and clears its environment
//! (`setsid env -i sleep 600 &`) carries neither the run's `ABA_RUN` token nor its process
//! group ([`super::leftovers`]), but it cannot leave the cgroup: it is found, killed and named
//! like any leftover. Where no cgroup can be made (cgroup v1 only, no write access), the token
//! and the group are all there is, as before. The SSH runner does the same on the target in
//! shell (`ssh/runner.rs`).

use std::{
    fs::File,
    io::Read as _,
    os::fd::{AsRawFd as _, RawFd},
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

/// A command's cgroup: removed when dropped, once its members are gone.
pub(crate) struct RunCgroup {
    dir: PathBuf,
    /// Its `cgroup.procs`, open for writing before the fork.
    procs: File,
}

impl RunCgroup {
    /// A new cgroup `aba-run-<token>` beside this process's own, or `None` where this machine
    /// has no cgroup v2 hierarchy this process may create one in.
    pub(crate) fn create(token: &str) -> Option<RunCgroup> {
        let parent = own_cgroup()?;
        sweep_stale(&parent);
        let dir = parent.join(format!("{PREFIX}{}-{token}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        match std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("cgroup.procs"))
        {
            Ok(procs) => Some(RunCgroup { dir, procs }),
            Err(_) => {
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    /// The descriptor the child writes `0` to between fork and exec, which moves it (one
    /// system call, no allocation).
    pub(crate) fn join_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// Kills every member but `except` (the command's own process, killed with its group by
    /// the caller); returns them as `PID command line`.
    pub(crate) fn kill_members(&self, except: u32) -> Vec<(u32, String)> {
        let mut killed = Vec::new();
        for pid in members(&self.dir) {
            if pid == except || pid == std::process::id() {
                continue;
            }
            if let Some(named) = super::leftovers::kill_and_name(pid) {
                killed.push((pid, named));
            }
        }
        killed
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        remove(&self.dir);
    }
}

/// The start of a command cgroup's name; then aba's pid, `-`, the run's token.
const PREFIX: &str = "aba-run-";

/// Removes `dir` once its members are gone (killed members leave as they exit: a moment).
fn remove(dir: &Path) {
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        match std::fs::remove_dir(dir) {
            Ok(()) => return,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(_) if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => return,
        }
    }
}

/// The cgroups of aba processes that are gone (killed before they could remove them): what
/// is still in one is the leftover of a command that outlived its aba, and goes now.
fn sweep_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let stale = entry.path();
        for member in members(&stale) {
            super::leftovers::kill_and_name(member);
        }
        remove(&stale);
    }
}

/// The processes in the cgroup `dir` (none when it cannot be read).
fn members(dir: &Path) -> Vec<u32> {
    let mut text = String::new();
    let _ = File::open(dir.join("cgroup.procs")).and_then(|mut f| f.read_to_string(&mut text));
    text.lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// This process's cgroup in the cgroup v2 hierarchy, as a directory of the mounted tree.
fn own_cgroup() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    let mount = mounts.lines().find_map(|l| {
        let mut f = l.split(' ');
        let (_, at, kind) = (f.next()?, f.next()?, f.next()?);
        (kind == "cgroup2").then(|| at.to_owned())
    })?;
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    // `/` (the root, or a namespace's root) joins as the mount itself.
    Some(PathBuf::from(format!(
        "{mount}{}",
        own.trim_end_matches('/')
    )))
}
