//! A real OpenSSH server on 127.0.0.1 for one test: fresh ed25519 host and client keys in a
//! temp dir, a free port, `sshd -D -e` as a child that is killed (with everything it started)
//! on drop. Helpers find the per-connection sshd process serving a client (to kill or freeze
//! it), restart the listener with the same host key, and look for leftover processes.
//!
//! Needs root, `/usr/sbin/sshd` (Debian `openssh-server`) and `ssh-keygen`. Panics on setup
//! failures: a harness that cannot start is a failed test, never a skipped one.

use std::{
    collections::HashMap,
    fs,
    io::Read,
    net::{SocketAddr, TcpListener, TcpStream},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    thread,
    time::{Duration, Instant},
};

use aba::target::ssh::SshTarget;

/// How long a freshly started sshd may take to accept a login on a loaded 2-core machine.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// One sshd for one test.
pub struct Sshd {
    dir: tempfile::TempDir,
    port: u16,
    user: String,
    child: Option<Child>,
}

impl Sshd {
    /// Generates keys and config, starts sshd on a free port and waits until a login works.
    pub fn start() -> Sshd {
        fs::create_dir_all("/run/sshd").expect("create /run/sshd (privilege separation dir)");
        let dir = tempfile::Builder::new()
            .prefix("aba-sshd-")
            .tempdir()
            .expect("temp dir");
        keygen(&dir.path().join("ssh_host_ed25519_key"), "aba-test-host");
        keygen(&dir.path().join("id_ed25519"), "aba-test-client");
        fs::copy(
            dir.path().join("id_ed25519.pub"),
            dir.path().join("authorized_keys"),
        )
        .expect("write authorized_keys");
        fs::write(dir.path().join("ssh_config"), "").expect("write empty ssh_config");
        let user = run_text(Command::new("id").arg("-un")).trim().to_owned();
        let mut sshd = Sshd {
            dir,
            port: 0,
            user,
            child: None,
        };
        // A port freed by the probe can be taken by someone else before sshd binds it.
        for attempt in 1..=5 {
            sshd.port = free_port();
            fs::write(
                sshd.dir.path().join("known_hosts"),
                format!("[127.0.0.1]:{} {}\n", sshd.port, sshd.host_public_key()),
            )
            .expect("write known_hosts");
            match sshd.spawn() {
                Ok(()) => return sshd,
                Err(why) if attempt < 5 => eprintln!("sshd start attempt {attempt}: {why}"),
                Err(why) => panic!("sshd did not start: {why}\n{}", sshd.log()),
            }
        }
        unreachable!("the loop returns or panics")
    }

    fn spawn(&mut self) -> Result<(), String> {
        let dir = self.dir.path();
        let config = dir.join("sshd_config");
        fs::write(
            &config,
            format!(
                "ListenAddress 127.0.0.1\nPort {port}\nHostKey {dir}/ssh_host_ed25519_key\n\
                 PidFile {dir}/sshd.pid\nAuthorizedKeysFile {dir}/authorized_keys\n\
                 PubkeyAuthentication yes\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n\
                 PermitRootLogin prohibit-password\nSubsystem sftp internal-sftp\n\
                 MaxStartups 200\nLogLevel VERBOSE\nSetEnv SHLVL=1\n",
                port = self.port,
                dir = dir.display()
            ),
        )
        .map_err(|e| format!("write sshd_config: {e}"))?;
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("sshd.log"))
            .map_err(|e| format!("open log: {e}"))?;
        let child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("spawn /usr/sbin/sshd: {e}"))?;
        self.child = Some(child);
        let started = Instant::now();
        loop {
            if let Some(child) = &mut self.child
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                return Err(format!("sshd exited with {status}"));
            }
            if self.login_works() {
                return Ok(());
            }
            if started.elapsed() > READY_TIMEOUT {
                self.kill();
                return Err(format!("no login possible within {READY_TIMEOUT:?}"));
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// One raw ssh2 login with the client key (not through aba's transport).
    fn login_works(&self) -> bool {
        let Ok(tcp) = TcpStream::connect_timeout(&self.addr(), Duration::from_secs(1)) else {
            return false;
        };
        let Ok(mut session) = ssh2::Session::new() else {
            return false;
        };
        session.set_timeout(5_000);
        session.set_tcp_stream(tcp);
        session.handshake().is_ok()
            && session
                .userauth_pubkey_file(&self.user, None, &self.client_key(), None)
                .is_ok()
            && session.authenticated()
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// The listening port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The temp dir holding keys, config, log.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The user tests log in as (the one running them).
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The authorized client private key.
    pub fn client_key(&self) -> PathBuf {
        self.dir.path().join("id_ed25519")
    }

    /// A known_hosts file with exactly `[127.0.0.1]:port <host key>`.
    pub fn known_hosts(&self) -> PathBuf {
        self.dir.path().join("known_hosts")
    }

    /// An empty client config, so tests never read the real `~/.ssh/config`.
    pub fn empty_ssh_config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// `ssh-ed25519 AAAA…` of the host key.
    pub fn host_public_key(&self) -> String {
        let text = fs::read_to_string(self.dir.path().join("ssh_host_ed25519_key.pub"))
            .expect("read host public key");
        text.split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `SHA256:…` of the host key, as `ssh-keygen -lf` prints it.
    pub fn host_fingerprint(&self) -> String {
        let out = run_text(
            Command::new("ssh-keygen")
                .arg("-lf")
                .arg(self.dir.path().join("ssh_host_ed25519_key.pub")),
        );
        out.split_whitespace()
            .nth(1)
            .expect("ssh-keygen -lf prints a fingerprint")
            .to_owned()
    }

    /// A target that logs in with the client key and trusts the host via `known_hosts()`,
    /// with the default timeouts.
    pub fn target(&self) -> SshTarget {
        let mut target = SshTarget::new("127.0.0.1");
        target.port = Some(self.port);
        target.user = Some(self.user.clone());
        target.identity = Some(self.client_key());
        target.known_hosts = Some(self.known_hosts());
        target.ssh_config = Some(self.empty_ssh_config());
        target
    }

    /// A new client key pair `name`/`name.pub` in the temp dir, not authorized.
    pub fn new_client_key(&self, name: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        keygen(&path, name);
        path
    }

    /// The sshd process that does the I/O for the client connected from `client`, found
    /// through the socket's inode in `/proc/net/tcp`: the holder without a `[priv]`,
    /// `[preauth]`, `[net]`… tag (`sshd: root`, `sshd: user@notty`; a root login has no
    /// separate monitor). Waits until there is exactly one, since right after login the
    /// pre-auth child may still be exiting.
    pub fn serving_pid(&self, client: SocketAddr) -> u32 {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let holders = self.socket_holders(client);
            let serving: Vec<u32> = holders
                .iter()
                .copied()
                .filter(|pid| {
                    let title = cmdline(*pid);
                    title.starts_with("sshd") && !title.contains('[')
                })
                .collect();
            if let [pid] = serving[..] {
                return pid;
            }
            assert!(
                Instant::now() < deadline,
                "no single sshd process serves {client}; socket holders: {:?}",
                holders
                    .iter()
                    .map(|p| format!("{p}: {}", cmdline(*p).trim_end()))
                    .collect::<Vec<_>>()
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    fn socket_holders(&self, client: SocketAddr) -> Vec<u32> {
        let tcp = fs::read_to_string("/proc/net/tcp").expect("read /proc/net/tcp");
        let (local, remote) = (
            format!(":{:04X}", self.port),
            format!(":{:04X}", client.port()),
        );
        let Some(inode) = tcp
            .lines()
            .skip(1)
            .map(|line| line.split_whitespace().collect::<Vec<_>>())
            .find(|f| f.len() > 9 && f[1].ends_with(&local) && f[2].ends_with(&remote))
            .map(|f| f[9].to_owned())
        else {
            return Vec::new();
        };
        pids()
            .into_iter()
            .filter(|pid| holds_socket(*pid, &inode))
            .collect()
    }

    /// SIGKILLs the listener and every process below it (connections, shells, commands).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let root = child.id();
            // Freeze first so nothing forks between listing and killing. Kill what either
            // listing found: a frozen process whose parent was already dying (a session the
            // test killed) is reparented away from the tree before the second listing, and
            // would otherwise stay stopped for good.
            let mut frozen = descendants(root);
            frozen.push(root);
            signal_all(&frozen, libc::SIGSTOP);
            let mut tree = descendants(root);
            tree.push(root);
            tree.extend(
                frozen
                    .into_iter()
                    .filter(|pid| !tree.contains(pid))
                    .collect::<Vec<_>>(),
            );
            signal_all(&tree, libc::SIGKILL);
            let _ = child.wait();
        }
    }

    /// Starts sshd again on the same port with the same keys (after [`Sshd::kill`]), waiting
    /// until it accepts a login.
    pub fn start_again(&mut self) {
        self.kill();
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            match self.spawn() {
                Ok(()) => return,
                Err(why) if Instant::now() < deadline => {
                    eprintln!("sshd restart: {why}");
                    thread::sleep(Duration::from_millis(100));
                }
                Err(why) => panic!("sshd did not restart: {why}\n{}", self.log()),
            }
        }
    }

    /// Every sshd process below the listener that serves a logged-in connection
    /// (`sshd: user@notty`), without the pre-auth and privilege-separation helpers.
    pub fn sessions(&self) -> Vec<u32> {
        let Some(child) = &self.child else {
            return Vec::new();
        };
        descendants(child.id())
            .into_iter()
            .filter(|pid| {
                let title = cmdline(*pid);
                title.starts_with("sshd") && title.contains('@') && !title.contains('[')
            })
            .collect()
    }

    /// Replaces the host key with a new one and restarts sshd on the same port: what a
    /// reinstalled or impersonated machine looks like. known_hosts keeps the old key.
    pub fn change_host_key(&mut self) {
        self.kill();
        let key = self.dir.path().join("ssh_host_ed25519_key");
        let _ = fs::remove_file(&key);
        let _ = fs::remove_file(key.with_extension("pub"));
        keygen(&key, "aba-test-host-2");
        let known = fs::read_to_string(self.known_hosts()).expect("read known_hosts");
        self.start_again();
        fs::write(self.known_hosts(), known).expect("keep the old known_hosts");
    }

    /// An aba target inventory for this sshd (`switch = "none"`) in `dir/targets.toml`, as
    /// target `box`; `extra` lines go into the target table.
    pub fn inventory(&self, dir: &Path, extra: &str) -> PathBuf {
        let text = format!(
            "[targets.box]\nhost = \"127.0.0.1\"\nport = {port}\nuser = \"{user}\"\nidentity = \"{key}\"\nknown_hosts = \"{known}\"\nssh_config = \"{config}\"\nswitch = \"none\"\nworkdir = \"{work}\"\nlock_file = \"{lock}\"\n{extra}\n",
            port = self.port,
            user = self.user,
            key = self.client_key().display(),
            known = self.known_hosts().display(),
            config = self.empty_ssh_config().display(),
            work = dir.join("remote-work").display(),
            lock = dir.join("remote-lock").display(),
        );
        let path = dir.join("targets.toml");
        fs::write(&path, text).expect("write inventory");
        path
    }

    /// Everything sshd logged so far, for failure messages.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Processes whose command line contains `needle` (never this test process).
pub fn processes_matching(needle: &str) -> Vec<u32> {
    let me = std::process::id();
    pids()
        .into_iter()
        .filter(|pid| *pid != me && cmdline(*pid).contains(needle))
        .collect()
}

/// Waits up to `limit` for every process matching `needle` to be gone; returns survivors
/// with their command lines.
pub fn survivors_after(needle: &str, limit: Duration) -> Vec<String> {
    let deadline = Instant::now() + limit;
    loop {
        let left = processes_matching(needle);
        if left.is_empty() || Instant::now() >= deadline {
            return left
                .into_iter()
                .map(|pid| format!("{pid}: {}", cmdline(pid)))
                .collect();
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// A unique number for a test's remote processes, usable as `sleep <marker>` so that even the
/// sleeps carry it in their command line. Any process still carrying it is killed on drop, so
/// a failing test leaves nothing behind.
pub struct Marker(pub String);

impl Marker {
    /// `<sshd port><tag:03>`: unique across concurrently running tests (ports are).
    pub fn new(sshd: &Sshd, tag: u16) -> Marker {
        Marker(format!("{}{:03}", sshd.port(), tag % 1000))
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        signal_all(&processes_matching(&self.0), libc::SIGKILL);
    }
}

/// Sends `signal` to `pid`.
pub fn signal(pid: u32, signal: i32) {
    signal_all(&[pid], signal);
}

fn signal_all(pids: &[u32], signal: i32) {
    for pid in pids {
        if let Ok(pid) = i32::try_from(*pid) {
            // SAFETY: kill(2) has no memory effects; a vanished pid only yields ESRCH.
            unsafe {
                libc::kill(pid, signal);
            }
        }
    }
}

fn keygen(path: &Path, comment: &str) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .expect("run ssh-keygen");
    assert!(status.success(), "ssh-keygen failed for {}", path.display());
}

fn run_text(command: &mut Command) -> String {
    let out = command.output().expect("run helper command");
    assert!(out.status.success(), "{command:?} failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind a probe socket")
        .port()
}

fn pids() -> Vec<u32> {
    fs::read_dir("/proc")
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

fn cmdline(pid: u32) -> String {
    let mut raw = Vec::new();
    let _ =
        fs::File::open(format!("/proc/{pid}/cmdline")).and_then(|mut f| f.read_to_end(&mut raw));
    String::from_utf8_lossy(&raw).replace('\0', " ")
}

fn parent(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces: parse after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

fn descendants(root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for pid in pids() {
        if let Some(ppid) = parent(pid) {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut found = Vec::new();
    let mut todo = vec![root];
    while let Some(pid) = todo.pop() {
        for child in children.get(&pid).into_iter().flatten() {
            found.push(*child);
            todo.push(*child);
        }
    }
    found
}

fn holds_socket(pid: u32, inode: &str) -> bool {
    let target = format!("socket:[{inode}]");
    fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| {
            fds.filter_map(Result::ok)
                .any(|fd| fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy() == target))
        })
        .unwrap_or(false)
}
