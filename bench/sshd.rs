//! A real OpenSSH server on 127.0.0.1 for the bench, as the integration tests start one: fresh
//! ed25519 host and client keys, a free port, `sshd -D -e` in its own process group, killed
//! with that group on drop. The same server answers aba, a ControlMaster loop and plain ssh.
//!
//! `SetEnv SHLVL=1` keeps bash from sourcing the user's `~/.bashrc` for every command (bash
//! does that when it sees it runs under sshd at shell level 1; on the bench machine root's
//! `.bashrc` runs `pyenv init`, 90 ms per command): the bench measures transports, not an rc
//! file. The test harness (tests/integration/support/sshd.rs) does the same.

use std::{
    ffi::OsString,
    fs,
    os::unix::process::CommandExt,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    thread,
    time::{Duration, Instant},
};

use crate::util::{free_port, run_ok};

/// One sshd.
pub struct Sshd {
    dir: PathBuf,
    /// Listening port on 127.0.0.1.
    pub port: u16,
    /// The user aba and ssh log in as (the one running the bench).
    pub user: String,
    child: Option<Child>,
}

impl Sshd {
    /// Keys and config in `dir`, sshd started and accepting a login (checked with `ssh`).
    pub fn start(dir: &Path) -> Result<Sshd, String> {
        fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        fs::create_dir_all("/run/sshd").map_err(|e| format!("/run/sshd: {e}"))?;
        for (name, comment) in [
            ("ssh_host_ed25519_key", "bench-host"),
            ("id_ed25519", "bench-client"),
        ] {
            let path = dir.join(name);
            let _ = fs::remove_file(&path);
            let _ = fs::remove_file(path.with_extension("pub"));
            run_ok(
                Command::new("ssh-keygen")
                    .args(["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f"])
                    .arg(&path),
            )?;
        }
        fs::copy(dir.join("id_ed25519.pub"), dir.join("authorized_keys"))
            .map_err(|e| e.to_string())?;
        let user = run_ok(Command::new("id").arg("-un"))?.trim().to_owned();
        let host_key =
            fs::read_to_string(dir.join("ssh_host_ed25519_key.pub")).map_err(|e| e.to_string())?;
        let host_key: Vec<&str> = host_key.split_whitespace().take(2).collect();
        let mut last = String::new();
        for _ in 0..5 {
            let port = free_port()?;
            fs::write(
                dir.join("known_hosts"),
                format!("[127.0.0.1]:{port} {}\n", host_key.join(" ")),
            )
            .map_err(|e| e.to_string())?;
            fs::write(
                dir.join("sshd_config"),
                format!(
                    "ListenAddress 127.0.0.1\nPort {port}\nHostKey {d}/ssh_host_ed25519_key\n\
                     PidFile {d}/sshd.pid\nAuthorizedKeysFile {d}/authorized_keys\n\
                     PubkeyAuthentication yes\nPasswordAuthentication no\n\
                     KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n\
                     PermitRootLogin prohibit-password\nMaxStartups 200\nMaxSessions 100\n\
                     LogLevel ERROR\nSetEnv SHLVL=1\n",
                    d = dir.display()
                ),
            )
            .map_err(|e| e.to_string())?;
            let log = fs::File::create(dir.join("sshd.log")).map_err(|e| e.to_string())?;
            let child = Command::new("/usr/sbin/sshd")
                .args(["-D", "-e", "-f"])
                .arg(dir.join("sshd_config"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .process_group(0)
                .spawn()
                .map_err(|e| format!("cannot start /usr/sbin/sshd: {e}"))?;
            let mut sshd = Sshd {
                dir: dir.to_path_buf(),
                port,
                user: user.clone(),
                child: Some(child),
            };
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if let Some(child) = &mut sshd.child
                    && let Ok(Some(status)) = child.try_wait()
                {
                    last = format!("sshd exited with {status}");
                    sshd.child = None;
                    break;
                }
                if Command::new("ssh")
                    .args(sshd.ssh_args())
                    .arg("true")
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
                {
                    return Ok(sshd);
                }
                thread::sleep(Duration::from_millis(50));
            }
            if sshd.child.is_some() {
                last = "no login within 20 s".into();
            }
        }
        Err(format!(
            "sshd did not start: {last}; log: {}",
            dir.join("sshd.log").display()
        ))
    }

    /// The client key.
    pub fn key(&self) -> PathBuf {
        self.dir.join("id_ed25519")
    }

    /// `known_hosts` with exactly this server's key.
    pub fn known_hosts(&self) -> PathBuf {
        self.dir.join("known_hosts")
    }

    /// OpenSSH client options up to and including the destination (no config files read).
    pub fn ssh_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["-F".into(), "/dev/null".into(), "-i".into()];
        args.push(self.key().into());
        for opt in [
            "IdentitiesOnly=yes".to_owned(),
            "BatchMode=yes".to_owned(),
            format!("UserKnownHostsFile={}", self.known_hosts().display()),
            "GlobalKnownHostsFile=/dev/null".to_owned(),
            "StrictHostKeyChecking=yes".to_owned(),
            "LogLevel=ERROR".to_owned(),
        ] {
            args.push("-o".into());
            args.push(opt.into());
        }
        args.push("-p".into());
        args.push(self.port.to_string().into());
        args.push(format!("{}@127.0.0.1", self.user).into());
        args
    }

    /// An aba inventory with target `box` (`switch = "none"`) for this server.
    pub fn inventory(&self, path: &Path, workdir: &Path) -> Result<(), String> {
        crate::util::write(
            path,
            &format!(
                "[targets.box]\nhost = \"127.0.0.1\"\nport = {}\nuser = \"{}\"\nidentity = \"{}\"\n\
                 known_hosts = \"{}\"\nssh_config = \"/dev/null\"\nswitch = \"none\"\nworkdir = \"{}\"\n",
                self.port,
                self.user,
                self.key().display(),
                self.known_hosts().display(),
                workdir.display()
            ),
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            if let Ok(pid) = i32::try_from(child.id()) {
                // SAFETY: kill(2) has no memory effects; the group is sshd's own (process_group(0)).
                unsafe {
                    libc::kill(-pid, libc::SIGTERM);
                }
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
