//! Running things and timing them: wall time and the child's own `getrusage` (via `wait4`),
//! the real `aba` binary on a recipe, journal tailing with host timestamps, small statistics.

use std::{
    fs,
    io::{Read, Seek, SeekFrom},
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    thread,
    time::{Duration, Instant, SystemTime},
};

/// What one child process cost.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    /// Wall time from spawn to reaping.
    pub wall: Duration,
    /// User CPU of the child and every descendant it waited for.
    pub user: Duration,
    /// System CPU, likewise.
    pub sys: Duration,
    /// Peak resident set size of the child (or its largest waited-for descendant), bytes.
    pub max_rss: u64,
    /// Exit code (128 + signal when killed).
    pub code: i32,
}

impl Measured {
    /// User + system CPU.
    pub fn cpu(&self) -> Duration {
        self.user + self.sys
    }
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::from_secs(u64::try_from(tv.tv_sec).unwrap_or(0))
        + Duration::from_micros(u64::try_from(tv.tv_usec).unwrap_or(0))
}

/// Runs `cmd` to completion and measures it with `wait4`.
pub fn measure(cmd: &mut Command) -> Result<Measured, String> {
    let started = Instant::now();
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    let pid = i32::try_from(child.id()).map_err(|_| "pid out of range".to_owned())?;
    let mut status = 0;
    // SAFETY: rusage is plain old data; wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers for the duration of the call; `pid` is our unreaped child.
        let rc = unsafe { libc::wait4(pid, &raw mut status, 0, &raw mut usage) };
        if rc == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("wait4 {pid}: {err}"));
        }
    }
    let wall = started.elapsed();
    // The child is reaped; dropping the handle neither waits nor kills.
    drop(child);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    Ok(Measured {
        wall,
        user: timeval(usage.ru_utime),
        sys: timeval(usage.ru_stime),
        max_rss: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
        code,
    })
}

/// Runs `cmd` quietly and fails unless it exits 0; returns stdout.
pub fn run_ok(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{cmd:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The real `aba` binary and where its logs go.
pub struct Aba {
    /// `target/release/aba`.
    pub bin: PathBuf,
    /// Directory for logs and results.
    pub work: PathBuf,
}

/// One finished `aba run`.
pub struct Run {
    /// What the process cost.
    pub cost: Measured,
    /// The results directory it created.
    pub dir: PathBuf,
}

impl Aba {
    pub fn command(&self, log: &str) -> Result<Command, String> {
        let log_path = self.work.join(format!("{log}.log"));
        let out = fs::File::create(&log_path)
            .map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&self.bin);
        cmd.stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .env_remove("ABA_RESULTS")
            .env_remove("ABA_TARGETS");
        Ok(cmd)
    }

    /// A new, empty parent for one run's results directory.
    pub fn results_parent(&self, log: &str) -> Result<PathBuf, String> {
        let parent = self.work.join("results").join(log);
        let _ = fs::remove_dir_all(&parent);
        fs::create_dir_all(&parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        Ok(parent)
    }

    /// `aba run RECIPE [--targets T --target NAME]` into a fresh results parent; `watch` sees
    /// the results directory as soon as it exists (to tail its journal).
    pub fn run(
        &self,
        log: &str,
        recipe: &Path,
        target: Option<(&Path, &str)>,
        watch: Option<&JournalTail>,
    ) -> Result<Run, String> {
        let parent = self.results_parent(log)?;
        let mut cmd = self.command(log)?;
        cmd.arg("run").arg("--results").arg(&parent);
        if let Some((inventory, name)) = target {
            cmd.arg("--targets")
                .arg(inventory)
                .arg("--target")
                .arg(name);
        }
        cmd.arg(recipe);
        if let Some(tail) = watch {
            tail.watch(parent.clone());
        }
        let cost = measure(&mut cmd)?;
        let dir = single_dir(&parent)?;
        if cost.code != 0 {
            return Err(format!(
                "aba run {} exited {}; log: {}",
                recipe.display(),
                cost.code,
                self.work.join(format!("{log}.log")).display()
            ));
        }
        Ok(Run { cost, dir })
    }

    /// `aba report DIR`.
    pub fn report(&self, log: &str, dir: &Path) -> Result<Measured, String> {
        let mut cmd = self.command(log)?;
        cmd.arg("report").arg(dir);
        let cost = measure(&mut cmd)?;
        if cost.code != 0 {
            return Err(format!(
                "aba report exited {}; log: {}",
                cost.code,
                self.work.join(format!("{log}.log")).display()
            ));
        }
        Ok(cost)
    }
}

fn single_dir(parent: &Path) -> Result<PathBuf, String> {
    let dirs: Vec<PathBuf> = fs::read_dir(parent)
        .map_err(|e| format!("{}: {e}", parent.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    match &dirs[..] {
        [one] => Ok(one.clone()),
        _ => Err(format!(
            "expected one results directory in {}, found {}",
            parent.display(),
            dirs.len()
        )),
    }
}

/// Tails `journal.jsonl` of the next results directory created under a parent, stamping
/// each complete line with the host time it was seen (polled every 2 ms: records are
/// fsynced one by one, so a line's arrival is when aba finished that step).
pub struct JournalTail {
    lines: Arc<Mutex<Vec<(SystemTime, String)>>>,
    parent: Arc<Mutex<Option<PathBuf>>>,
    stop: Arc<AtomicBool>,
    handle: Option<thread::JoinHandle<()>>,
}

impl JournalTail {
    /// Starts the tailing thread (idle until [`JournalTail::watch`]).
    pub fn start() -> JournalTail {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let parent: Arc<Mutex<Option<PathBuf>>> = Arc::new(Mutex::new(None));
        let stop = Arc::new(AtomicBool::new(false));
        let (l, p, s) = (lines.clone(), parent.clone(), stop.clone());
        let handle = thread::spawn(move || tail_loop(&l, &p, &s));
        JournalTail {
            lines,
            parent,
            stop,
            handle: Some(handle),
        }
    }

    fn watch(&self, parent: PathBuf) {
        self.lines.lock().expect("lock").clear();
        *self.parent.lock().expect("lock") = Some(parent);
    }

    /// Every line seen so far, with its arrival time; stops watching.
    pub fn take(&self) -> Vec<(SystemTime, String)> {
        thread::sleep(Duration::from_millis(20));
        *self.parent.lock().expect("lock") = None;
        std::mem::take(&mut *self.lines.lock().expect("lock"))
    }
}

impl Drop for JournalTail {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn tail_loop(
    lines: &Mutex<Vec<(SystemTime, String)>>,
    parent: &Mutex<Option<PathBuf>>,
    stop: &AtomicBool,
) {
    let mut current: Option<(PathBuf, fs::File, u64, Vec<u8>)> = None;
    while !stop.load(Ordering::Relaxed) {
        thread::sleep(Duration::from_millis(2));
        let Some(watched) = parent.lock().expect("lock").clone() else {
            current = None;
            continue;
        };
        if current
            .as_ref()
            .is_none_or(|(p, ..)| !p.starts_with(&watched))
        {
            current = fs::read_dir(&watched)
                .ok()
                .and_then(|mut d| d.find_map(Result::ok))
                .map(|e| e.path().join("journal.jsonl"))
                .and_then(|j| fs::File::open(&j).ok().map(|f| (j, f, 0, Vec::new())));
        }
        let Some((_, file, offset, pending)) = current.as_mut() else {
            continue;
        };
        let mut buf = Vec::new();
        if file.seek(SeekFrom::Start(*offset)).is_err() || file.read_to_end(&mut buf).is_err() {
            continue;
        }
        if buf.is_empty() {
            continue;
        }
        let now = SystemTime::now();
        *offset += buf.len() as u64;
        pending.extend_from_slice(&buf);
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            lines
                .lock()
                .expect("lock")
                .push((now, String::from_utf8_lossy(&line).trim_end().to_owned()));
        }
    }
}

/// Median of a non-empty slice (0 when empty).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        f64::midpoint(v[n / 2 - 1], v[n / 2])
    }
}

/// A free TCP port on 127.0.0.1 (racy, as every such probe).
pub fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port: {e}"))
}

/// Parses an RFC 3339 time into a `SystemTime`.
pub fn parse_time(text: &str) -> Option<SystemTime> {
    let t =
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    let nanos = t.unix_timestamp_nanos();
    let nanos = u64::try_from(nanos).ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_nanos(nanos))
}

/// `a - b` in seconds, signed.
pub fn secs_between(a: SystemTime, b: SystemTime) -> f64 {
    match a.duration_since(b) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

/// Writes `text` to `path`.
pub fn write(path: &Path, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
