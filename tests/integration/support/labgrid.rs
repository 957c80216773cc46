//! A labgrid coordinator of a test's own on 127.0.0.1 (labgrid from PyPI in lab/out/labgrid,
//! lab/labgrid/install.sh), and an exporter that exports a lab VM as a place: its SSH as a
//! NetworkService, its serial console as a NetworkSerialPort and a power switch
//! (lab/labgrid/power-switch.py) as a NetworkPowerPort.

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use super::{
    cli::text,
    skip::skip,
    sshd::{Sshd, free_port},
};

pub fn venv_bin(program: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("lab/out/labgrid/venv/bin")
        .join(program)
}

/// A labgrid coordinator of its own on a free loopback port, with one place, stopped on drop.
pub struct Coordinator {
    child: Child,
    /// `HOST:PORT`.
    pub address: String,
    _dir: tempfile::TempDir,
}

impl Coordinator {
    /// `None` (after a visible skip) when labgrid is not installed.
    pub fn start(place: &str) -> Option<Coordinator> {
        if !venv_bin("labgrid-coordinator").exists() {
            skip("labgrid is not installed in lab/out/labgrid (run lab/labgrid/install.sh)");
            return None;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let address = format!("127.0.0.1:{}", free_port());
        let child = Command::new(venv_bin("labgrid-coordinator"))
            .args(["-l", &address])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("labgrid-coordinator starts");
        let coordinator = Coordinator {
            child,
            address,
            _dir: dir,
        };
        let started = Instant::now();
        while !coordinator.client(&["places"]).status.success() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the coordinator did not answer on {}",
                coordinator.address
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        let created = coordinator.client(&["-p", place, "create"]);
        assert!(created.status.success(), "{}", text(&created));
        Some(coordinator)
    }

    pub fn client(&self, args: &[&str]) -> std::process::Output {
        Command::new(venv_bin("labgrid-client"))
            .args(["-x", &self.address])
            .args(args)
            .output()
            .expect("labgrid-client runs")
    }

    /// `labgrid-client ARGS` as someone else: user `user` on host `lab`.
    pub fn client_as(&self, user: &str, args: &[&str]) -> std::process::Output {
        Command::new(venv_bin("labgrid-client"))
            .args(["-x", &self.address])
            .args(args)
            .env("LG_USERNAME", user)
            .env("LG_HOSTNAME", "lab")
            .output()
            .expect("labgrid-client runs")
    }

    /// What `labgrid-client -p PLACE show` says.
    pub fn show(&self, place: &str) -> String {
        let out = self.client(&["-p", place, "show"]);
        assert!(out.status.success(), "{}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// An inventory in `dir` whose target `box` is the sshd, held through this place.
    pub fn inventory(&self, sshd: &Sshd, dir: &Path, place: &str) -> PathBuf {
        sshd.inventory(
            dir,
            &format!(
                "reserve_timeout = \"5min\"\n[targets.box.labgrid]\ncoordinator = \"{}\"\nplace = \"{place}\"\nclient = \"{}\"\n",
                self.address,
                venv_bin("labgrid-client").display()
            ),
        )
    }
}

impl Drop for Coordinator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Coordinator {
    /// Starts an exporter named `name` on this coordinator with the resources of `yaml` (one
    /// group), and waits until the coordinator lists them.
    pub fn export(&self, name: &str, yaml: &str) -> Exporter {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("exporter.yaml");
        std::fs::write(&config, yaml).expect("write exporter.yaml");
        let log = std::fs::File::create(dir.path().join("exporter.log")).expect("log");
        let child = Command::new(venv_bin("labgrid-exporter"))
            .args(["-c", &self.address, "-n", name])
            .arg(&config)
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("labgrid-exporter starts");
        let exporter = Exporter { child, dir };
        let started = Instant::now();
        loop {
            let listed = self.client(&["resources"]);
            if String::from_utf8_lossy(&listed.stdout).contains(&format!("{name}/")) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the exporter's resources did not appear: {}\n{}",
                text(&listed),
                exporter.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        exporter
    }

    /// Adds the resources matching `pattern` (`EXPORTER/GROUP/*`) to `place`.
    pub fn add_match(&self, place: &str, pattern: &str) {
        let out = self.client(&["-p", place, "add-match", pattern]);
        assert!(out.status.success(), "{}", text(&out));
    }
}

/// An exporter, stopped on drop.
pub struct Exporter {
    child: Child,
    dir: tempfile::TempDir,
}

impl Exporter {
    /// What it logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("exporter.log")).unwrap_or_default()
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// lab/labgrid/power-switch.py on a free loopback port: GET /power/0/0 runs `off`,
/// /power/0/1 runs `on` (labgrid's `simplerest` model). Stopped on drop.
pub struct PowerSwitch {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    log: PathBuf,
}

impl PowerSwitch {
    /// Starts the switch; `off` and `on` are shell commands.
    pub fn start(dir: &Path, off: &str, on: &str) -> PowerSwitch {
        let port = free_port();
        let log = dir.join("power-switch.log");
        let child = Command::new("python3")
            .arg(super::lab::lab_dir().join("labgrid/power-switch.py"))
            .args([&port.to_string(), off, on])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log"))
            .spawn()
            .expect("power-switch.py starts");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the power switch did not listen"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        PowerSwitch { child, port, log }
    }

    /// What it logged (each request, each failed command).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for PowerSwitch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
