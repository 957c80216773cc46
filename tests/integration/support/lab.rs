//! The QEMU lab for integration tests: real Debian kernels, real kexec, real sshd, under
//! software emulation on 127.0.0.1 (see lab/README.md).
//!
//! Lab tests take a process-wide lock: on a 2-core machine one emulated guest per test at a
//! time keeps boot times predictable. Each test gets its own VM name and a free port, an
//! inventory written into its temp dir, and a VM that is killed when the guard drops.

use std::{
    net::TcpListener,
    path::{Path, PathBuf},
    process::Command,
    sync::{Mutex, MutexGuard, OnceLock},
};

/// The repository's `lab/` directory.
pub fn lab_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("lab")
}

/// The last `n` lines of a VM's console log (what it printed as it failed), for a failed
/// assertion's message; empty when there is none.
pub fn console_tail(console_log: &Path, n: usize) -> String {
    let text = std::fs::read(console_log).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    aba::text::last_lines(&text, n).join("\n")
}

/// Default and second kernel of the lab image.
pub const KERNEL_A: &str = "6.1.0-47-cloud-amd64";
/// The other kernel.
pub const KERNEL_B: &str = "6.1.0-50-cloud-amd64";

/// The lab's process-wide lock: one emulated guest at a time (busybox or distro).
pub fn lab_lock() -> MutexGuard<'static, ()> {
    static LOCK: OnceLock<Mutex<()>> = OnceLock::new();
    LOCK.get_or_init(|| Mutex::new(()))
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn run(script: &str, args: &[&str]) -> std::process::Output {
    Command::new(lab_dir().join(script))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run lab/{script}: {e}"))
}

/// Builds the lab image once per test process (a no-op when it is up to date).
/// The lab's three kernels built from Debian's Linux source (lab/kernel/build.sh), built
/// once per test process if they are not up to date; returns `lab/out/kernel`.
pub fn built_kernels() -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        if !run("kernel/build.sh", &["--check"]).status.success() {
            let out = run("kernel/build.sh", &[]);
            assert!(
                out.status.success(),
                "lab/kernel/build.sh failed (run test.sh, which installs the host packages):\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    });
    lab_dir().join("out/kernel")
}

/// A real kernel image of the lab (Debian's `vmlinuz` of [`KERNEL_A`]), built if needed: a
/// bzImage for tests that read one without booting it.
pub fn real_kernel_image() -> PathBuf {
    ensure_built();
    lab_dir()
        .join("out/bootfs")
        .join(format!("vmlinuz-{KERNEL_A}"))
}

fn ensure_built() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let check = run("build-target.sh", &["--check"]);
        if !check.status.success() {
            let out = run("build-target.sh", &[]);
            assert!(
                out.status.success(),
                "lab/build-target.sh failed (run test.sh, which installs the host packages):\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    });
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// One running lab VM, stopped (hard) on drop.
pub struct LabVm {
    /// VM name (run files in lab/out/run/NAME).
    pub name: String,
    /// Forwarded SSH port on 127.0.0.1.
    pub port: u16,
    /// The lab lock, unless a [`LabPair`] holds it for both of its VMs.
    _guard: Option<MutexGuard<'static, ()>>,
    /// Virtual CPUs (`LAB_SMP`); the lab's default (one) when `None`.
    cpus: Option<u32>,
    /// More environment for lab/start-vm.sh (`LAB_SERIAL_TCP`).
    env: Vec<(String, String)>,
}

/// Two lab VMs at once (issue 13: several targets, a queue over two machines), under one hold
/// of the lab lock; both stopped on drop, before the lock is given back.
pub struct LabPair {
    /// The first VM (target `east` in [`LabPair::inventory`]).
    pub east: LabVm,
    /// The second VM (target `west`).
    pub west: LabVm,
    _guard: MutexGuard<'static, ()>,
}

impl LabPair {
    /// Starts `<prefix>-east` and `<prefix>-west` on [`KERNEL_A`], each on its own port.
    pub fn start(prefix: &str) -> LabPair {
        let guard = lab_lock();
        let east = LabVm::boot(&format!("{prefix}-east"), KERNEL_A, None, &[]);
        let west = LabVm::boot(&format!("{prefix}-west"), KERNEL_A, None, &[]);
        LabPair {
            east,
            west,
            _guard: guard,
        }
    }

    /// An inventory in `dir/targets.toml` with kexec targets `east` and `west`, each with its
    /// own lock marker, `boot_timeout` and no power switch: a VM the test kills stays down,
    /// as a machine that died in the night does.
    pub fn inventory(&self, dir: &Path, boot_timeout: &str) -> PathBuf {
        let text = [("east", &self.east), ("west", &self.west)]
            .iter()
            .map(|(target, vm)| vm.kexec_table(target, boot_timeout, "", false))
            .collect::<String>();
        let path = dir.join("targets.toml");
        std::fs::write(&path, text).expect("write inventory");
        path
    }
}

impl LabVm {
    /// Starts VM `name` on `kernel` and waits until it accepts logins.
    pub fn start(name: &str, kernel: &str) -> LabVm {
        LabVm::start_with_cpus(name, kernel, None)
    }

    /// [`LabVm::start`] with `cpus` virtual CPUs (`None`: the lab's default, one).
    pub fn start_with_cpus(name: &str, kernel: &str, cpus: Option<u32>) -> LabVm {
        LabVm::start_with_env(name, kernel, cpus, &[])
    }

    /// [`LabVm::start_with_cpus`] with more environment for lab/start-vm.sh (kept for
    /// [`LabVm::start_again`]).
    pub fn start_with_env(
        name: &str,
        kernel: &str,
        cpus: Option<u32>,
        env: &[(&str, &str)],
    ) -> LabVm {
        let guard = lab_lock();
        let mut vm = LabVm::boot(name, kernel, cpus, env);
        vm._guard = Some(guard);
        vm
    }

    /// [`LabVm::start`] for a caller that holds the lab lock.
    fn boot(name: &str, kernel: &str, cpus: Option<u32>, env: &[(&str, &str)]) -> LabVm {
        ensure_built();
        let _ = run("stop-vm.sh", &[name, "--hard"]);
        let vm = LabVm {
            name: name.to_owned(),
            port: free_port(),
            _guard: None,
            cpus,
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        };
        vm.start_again(kernel);
        vm
    }

    /// Starts the VM (again) on its port with `kernel` and waits until it accepts logins: a
    /// machine back after [`LabVm::kill`].
    pub fn start_again(&self, kernel: &str) {
        let port_text = self.port.to_string();
        let mut start = Command::new(lab_dir().join("start-vm.sh"));
        start.args([&self.name, &port_text, kernel]);
        if let Some(cpus) = self.cpus {
            start.env("LAB_SMP", cpus.to_string());
        }
        start.envs(self.env.iter().map(|(k, v)| (k, v)));
        let out = start
            .output()
            .unwrap_or_else(|e| panic!("cannot run lab/start-vm.sh: {e}"));
        assert!(
            out.status.success(),
            "start-vm.sh: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let wait = run("wait-ssh.sh", &[&port_text, "300"]);
        assert!(
            wait.status.success(),
            "the lab VM did not come up: {}",
            String::from_utf8_lossy(&wait.stderr)
        );
    }

    /// Pulls the VM's plug (QEMU killed): the machine is gone until [`LabVm::start_again`].
    pub fn kill(&self) {
        let out = run("stop-vm.sh", &[&self.name, "--hard"]);
        assert!(
            out.status.success(),
            "stop-vm.sh: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The serial console log.
    pub fn console_log(&self) -> PathBuf {
        lab_dir()
            .join("out/run")
            .join(&self.name)
            .join("console.log")
    }

    /// Runs a command in the guest with the lab's ssh client; returns stdout.
    pub fn ssh(&self, command: &str) -> String {
        let out = run("lab-ssh.sh", &[&self.port.to_string(), command]);
        assert!(
            out.status.success(),
            "lab-ssh.sh {command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// An inventory for this VM in `dir/targets.toml`, with targets `kexec` and `power`
    /// (`extra` is appended to both target tables).
    pub fn inventory(&self, dir: &Path, extra: &str) -> PathBuf {
        self.inventory_with_timeout(dir, "120s", extra)
    }

    /// Like [`LabVm::inventory`] with another `boot_timeout`.
    pub fn inventory_with_timeout(&self, dir: &Path, boot_timeout: &str, extra: &str) -> PathBuf {
        let lab = lab_dir();
        let lab = lab.display();
        let (name, port) = (&self.name, self.port);
        let text = format!(
            r#"{kexec}
[targets.power]
host = "127.0.0.1"
port = {port}
user = "root"
identity = "{lab}/id_ed25519"
known_hosts = "{lab}/known_hosts"
switch = "power"
boot_timeout = "{boot_timeout}"
console_log = "{lab}/out/run/{name}/console.log"
{extra}
[targets.power.power]
cycle = "{lab}/power-cycle.sh {name} {port} {{release}} {{params}}"
"#,
            kexec = self.kexec_table("kexec", boot_timeout, extra, true)
        );
        let path = dir.join("targets.toml");
        std::fs::write(&path, text).expect("write inventory");
        path
    }

    /// The inventory table of a kexec target `target` on this VM; with `power_cycle`, the
    /// lab's power switch brings a dead boot back (into [`KERNEL_A`]).
    fn kexec_table(
        &self,
        target: &str,
        boot_timeout: &str,
        extra: &str,
        power_cycle: bool,
    ) -> String {
        let lab = lab_dir();
        let lab = lab.display();
        let (name, port) = (&self.name, self.port);
        let power_cycle = if power_cycle {
            format!("power_cycle = \"{lab}/power-cycle.sh {name} {port} {KERNEL_A}\"\n")
        } else {
            String::new()
        };
        format!(
            r#"
[targets.{target}]
host = "127.0.0.1"
port = {port}
user = "root"
identity = "{lab}/id_ed25519"
known_hosts = "{lab}/known_hosts"
switch = "kexec"
boot_timeout = "{boot_timeout}"
base_cmdline = "console=ttyS0,115200 panic=-1 quiet"
console_log = "{lab}/out/run/{name}/console.log"
{power_cycle}{extra}
"#
        )
    }
}

impl Drop for LabVm {
    fn drop(&mut self) {
        let _ = run("stop-vm.sh", &[&self.name, "--hard"]);
    }
}
