//! One QEMU lab VM for the bench (lab/README.md), with its own name and a free port, started
//! with the lab's scripts and stopped hard on drop; and its serial console read live from
//! `lab/out/run/NAME/serial.sock`, every line stamped with the host time it arrived.

use std::{
    io::{BufRead, BufReader},
    os::unix::net::UnixStream,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::{Arc, Mutex},
    thread,
    time::{Duration, SystemTime},
};

use crate::util::{free_port, run_ok, write};

/// The repository's `lab/`.
pub fn lab_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("lab")
}

/// Console lines with their host arrival times.
pub type Lines = Arc<Mutex<Vec<(SystemTime, String)>>>;

/// A running lab VM.
pub struct Vm {
    /// VM name.
    pub name: String,
    /// Forwarded SSH port.
    pub port: u16,
    /// Console lines so far.
    pub console: Lines,
}

fn script(name: &str) -> Command {
    let mut cmd = Command::new(lab_dir().join(name));
    cmd.stdin(Stdio::null());
    cmd
}

/// The kernels the lab image was built with (`lab/out/kvers`), default first.
pub fn kernels() -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(lab_dir().join("out/kvers"))
        .map_err(|e| format!("lab/out/kvers: {e} (is the lab built?)"))?;
    let k: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    if k.len() < 2 {
        return Err("the lab image has fewer than two kernels".into());
    }
    Ok(k)
}

impl Vm {
    /// Builds the lab image if needed, starts VM `name` on its default kernel, attaches to
    /// its console and waits for a login.
    pub fn start(name: &str) -> Result<Vm, String> {
        if !script("build-target.sh")
            .arg("--check")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
        {
            eprintln!("  building the lab image (lab/build-target.sh)");
            run_ok(&mut script("build-target.sh"))?;
        }
        let _ = run_ok(script("stop-vm.sh").args([name, "--hard"]));
        let port = free_port()?;
        run_ok(script("start-vm.sh").arg(name).arg(port.to_string()))?;
        let vm = Vm {
            name: name.to_owned(),
            port,
            console: Arc::new(Mutex::new(Vec::new())),
        };
        let sock = lab_dir().join("out/run").join(name).join("serial.sock");
        let mut stream = None;
        for _ in 0..100 {
            if let Ok(s) = UnixStream::connect(&sock) {
                stream = Some(s);
                break;
            }
            thread::sleep(Duration::from_millis(20));
        }
        let stream = stream.ok_or_else(|| format!("cannot attach to {}", sock.display()))?;
        let lines = vm.console.clone();
        thread::spawn(move || {
            let mut reader = BufReader::new(stream);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        let now = SystemTime::now();
                        let text = String::from_utf8_lossy(&buf).trim_end().to_owned();
                        lines.lock().expect("lock").push((now, text));
                    }
                }
            }
        });
        run_ok(script("wait-ssh.sh").arg(port.to_string()).arg("120"))?;
        Ok(vm)
    }

    /// An inventory with target `lab` (kexec) for this VM.
    pub fn inventory(&self, path: &Path) -> Result<(), String> {
        self.inventory_switching(path, "kexec")
    }

    /// An inventory with target `lab` for this VM, switching kernels by `switch`.
    pub fn inventory_switching(&self, path: &Path, switch: &str) -> Result<(), String> {
        let lab = lab_dir();
        let lab = lab.display();
        let (name, port) = (&self.name, self.port);
        let default = kernels()?.remove(0);
        write(
            path,
            &format!(
                "[targets.lab]\nhost = \"127.0.0.1\"\nport = {port}\nuser = \"root\"\n\
                 identity = \"{lab}/id_ed25519\"\nknown_hosts = \"{lab}/known_hosts\"\n\
                 ssh_config = \"/dev/null\"\nswitch = \"{switch}\"\nboot_timeout = \"120s\"\n\
                 boot_estimate = \"10s\"\nworkdir = \"/tmp/aba\"\n\
                 base_cmdline = \"console=ttyS0,115200 panic=-1 quiet\"\n\
                 console_log = \"{lab}/out/run/{name}/console.log\"\n\
                 power_cycle = \"{lab}/power-cycle.sh {name} {port} {default}\"\n"
            ),
        )
    }

    /// The console lines so far.
    pub fn lines(&self) -> Vec<(SystemTime, String)> {
        self.console.lock().expect("lock").clone()
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        let _ = run_ok(script("stop-vm.sh").args([self.name.as_str(), "--hard"]));
    }
}
