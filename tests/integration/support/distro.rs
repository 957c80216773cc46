//! The distro target for integration tests: a Debian 12 box with systemd, GRUB and
//! systemd-boot under UEFI (lab/distro/, lab/README.md "The distro target").
//!
//! Its boots take minutes under emulation, so every distro test uses one VM, `t-distro`,
//! started by the first test that needs it and left running for the next (test.sh stops it
//! after the phase). The tests hold the lab's process-wide lock, run one after another and
//! leave the box on a default boot with no aba entry, which each test asserts.

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::{MutexGuard, OnceLock},
};

use super::lab::{lab_dir, lab_lock};

/// The VM's name (run files in lab/out/run/t-distro).
pub const NAME: &str = "t-distro";
/// Its forwarded SSH port on 127.0.0.1.
pub const PORT: u16 = 10142;
/// The box's default kernel (GRUB's default entry, the newest).
pub const DEFAULT_KERNEL: &str = "6.1.0-50-cloud-amd64";
/// The other kernel.
pub const OTHER_KERNEL: &str = "6.1.0-47-cloud-amd64";
/// The command line of the box's own entries.
pub const BASE_CMDLINE: &str =
    "root=UUID=ab0a0001-0000-4000-8000-0000000000a1 ro console=ttyS0,115200 panic=-1 quiet";

fn distro_run(script: &str, args: &[&str]) -> std::process::Output {
    Command::new(lab_dir().join(script))
        .args(args)
        .env("LAB_FLAVOR", "distro")
        .output()
        .unwrap_or_else(|e| panic!("cannot run lab/{script}: {e}"))
}

fn ensure_built() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        if !distro_run("distro/build.sh", &["--check"]).status.success() {
            let out = distro_run("distro/build.sh", &[]);
            assert!(
                out.status.success(),
                "lab/distro/build.sh failed (run test.sh, which installs the host packages):\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    });
}

/// The distro VM, up and accepting logins, for as long as the guard lives.
pub struct DistroVm {
    _guard: MutexGuard<'static, ()>,
}

impl DistroVm {
    /// Takes the lab lock and brings the VM up (a fresh disk and EFI variables the first
    /// time in this process; a VM that no longer answers is started again).
    pub fn get() -> DistroVm {
        let guard = lab_lock();
        ensure_built();
        static FRESH: OnceLock<()> = OnceLock::new();
        let mut first = false;
        FRESH.get_or_init(|| first = true);
        let port = PORT.to_string();
        let up = !first && distro_run("wait-ssh.sh", &[&port, "20"]).status.success();
        if !up {
            let _ = distro_run("stop-vm.sh", &[NAME, "--hard"]);
            let out = Command::new(lab_dir().join("start-vm.sh"))
                .args([NAME, &port])
                .env("LAB_FLAVOR", "distro")
                .env("LAB_FRESH", "1")
                .output()
                .expect("start-vm.sh");
            assert!(
                out.status.success(),
                "start-vm.sh: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let wait = distro_run("wait-ssh.sh", &[&port, "900"]);
            assert!(
                wait.status.success(),
                "the distro VM did not come up: {}",
                String::from_utf8_lossy(&wait.stderr)
            );
        }
        let vm = DistroVm { _guard: guard };
        // A test that failed may have left its campaign's lock marker; the distro tests run
        // one at a time, so none is live here.
        vm.ssh("rm -f /var/lib/aba/lock");
        vm
    }

    /// The VM's serial console log.
    pub fn console_log(&self) -> PathBuf {
        lab_dir().join("out/run").join(NAME).join("console.log")
    }

    /// Runs a command in the guest; returns stdout.
    pub fn ssh(&self, command: &str) -> String {
        let out = distro_run("lab-ssh.sh", &[&PORT.to_string(), command]);
        assert!(
            out.status.success(),
            "lab-ssh.sh {command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// What aba may have left in the boot loaders, one line each; empty when nothing: GRUB's
    /// custom.cfg and an `aba-` next_entry, BLS entries, copies and LoaderEntryOneShot.
    pub fn boot_loader_leftovers(&self) -> Vec<String> {
        self.ssh(
            "ls /boot/grub/custom.cfg /boot/grub/custom.cfg.aba-new /boot/efi/loader/entries/aba-*.conf 2>/dev/null; [ -d /boot/efi/aba ] && echo /boot/efi/aba; grub-editenv /boot/grub/grubenv list | grep '^next_entry=.' ; v=/sys/firmware/efi/efivars/LoaderEntryOneShot-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f; [ -f $v ] && echo \"LoaderEntryOneShot=$(tail -c +5 $v | tr -d '\\000')\"; true",
        )
        .lines()
        .map(str::to_owned)
        .filter(|l| !l.trim().is_empty())
        .collect()
    }

    /// An inventory with targets `kexec`, `grub` and `bls` on this VM in `dir/targets.toml`.
    pub fn inventory(&self, dir: &Path) -> PathBuf {
        let lab = lab_dir();
        let lab = lab.display();
        let common = format!(
            r#"host = "127.0.0.1"
port = {PORT}
user = "root"
identity = "{lab}/id_ed25519"
known_hosts = "{lab}/known_hosts"
boot_timeout = "600s"
boot_estimate = "120s"
connect_timeout = "10s"
dead_after = "30s"
workdir = "/tmp/aba"
base_cmdline = "{BASE_CMDLINE}"
console_log = "{lab}/out/run/{NAME}/console.log"
power_cycle = "{lab}/power-cycle.sh {NAME} {PORT}"
lock_file = "/var/lib/aba/lock"
"#
        );
        let text = format!(
            "[targets.kexec]\nswitch = \"kexec\"\n{common}\n[targets.grub]\nswitch = \"grub-reboot\"\n{common}\n[targets.bls]\nswitch = \"bls\"\n{common}\n"
        );
        let path = dir.join("targets.toml");
        std::fs::write(&path, text).expect("write inventory");
        path
    }
}
