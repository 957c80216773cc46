//! The persistent runner (issue 17) against a real OpenSSH server on 127.0.0.1: workload runs
//! go through one long-lived shell on one channel (one sshd session for any number of runs),
//! report output, status and signals as the exec path does, and keep its guarantees: a run
//! dies at its deadline and with a lost connection, output beyond the cap is counted, what a
//! run leaves behind is killed and named, and a target that refuses the runner gets the exec
//! path with one notice.

use std::{
    thread,
    time::{Duration, Instant},
};

use aba::{
    results::samples::SampleTable,
    target::{
        cpu_set::{CpuSet, RunnerCpus},
        ssh::{SshTarget, SshTransport},
        transport::{ExitOutcome, Transport},
    },
};

use crate::support::{
    cli::{assert_verified, campaign_dir, run_on, text, write},
    cpus::{Split, pinning_recipe, split_cpus},
    sshd::{Marker, Sshd, processes_matching, signal, survivors_after},
};

const SECOND: Duration = Duration::from_secs(1);

#[track_caller]
fn connect(target: &SshTarget) -> SshTransport {
    SshTransport::connect(target).unwrap_or_else(|e| panic!("connect: {e}"))
}

/// How many commands sshd started so far (`LogLevel VERBOSE` logs each channel's session).
fn commands_started(sshd: &Sshd) -> usize {
    sshd.log().matches("Starting session: ").count()
}

#[test]
fn many_runs_share_one_session_and_read_like_the_exec_path() {
    let sshd = Sshd::start();
    let mut ssh = connect(&sshd.target());
    let before = commands_started(&sshd);
    let commands = [
        "echo out; echo err >&2; exit 3",
        "echo \"it's $((6*7))\"; printf 'no newline'",
        "for i in 1 2\ndo echo line $i\ndone",
        "echo \"$ABA_RUN\" | wc -c; echo $0",
        "kill -s TERM $$",
        "printf '\\036aba-runner-fake end 0\\n'; echo after",
    ];
    for command in commands {
        let runner = ssh
            .run_workload(command, 10 * SECOND, 1 << 20)
            .expect("run");
        let exec = ssh.exec(command, 10 * SECOND).expect("exec");
        assert_eq!(runner.outcome, exec.outcome, "{command}");
        assert_eq!(runner.stdout_text(), exec.stdout_text(), "{command}");
        assert_eq!(runner.stderr_text(), exec.stderr_text(), "{command}");
        assert!(
            runner.leftovers.is_empty(),
            "{command}: {:?}",
            runner.leftovers
        );
    }
    let first = ssh
        .run_workload("echo out; echo err >&2; exit 3", 10 * SECOND, 1 << 20)
        .expect("run");
    assert_eq!(first.outcome, ExitOutcome::Exited(3));
    assert_eq!(
        (first.stdout_text(), first.stderr_text()),
        ("out\n".to_owned(), "err\n".to_owned())
    );
    // One command for the runner, one per exec: the runs opened no session of their own.
    assert_eq!(
        commands_started(&sshd) - before,
        1 + commands.len(),
        "{}",
        sshd.log()
    );
    assert_eq!(ssh.take_notice(), None);
}

#[test]
fn a_run_dies_at_its_deadline_and_the_runner_goes_on() {
    let sshd = Sshd::start();
    let mut ssh = connect(&sshd.target());
    let mark = Marker::new(&sshd, 1);
    let started = Instant::now();
    let out = ssh
        .run_workload(
            &format!("echo started; sleep {}; echo never", mark.0),
            SECOND,
            1 << 20,
        )
        .expect("run");
    assert_eq!(out.outcome, ExitOutcome::TimedOut);
    assert_eq!(out.stdout_text(), "started\n");
    assert!(
        started.elapsed() < 5 * SECOND,
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(survivors_after(&mark.0, SECOND), Vec::<String>::new());
    let before = commands_started(&sshd);
    let next = ssh
        .run_workload("echo next", 10 * SECOND, 1 << 20)
        .expect("run");
    assert_eq!(next.stdout_text(), "next\n");
    assert_eq!(commands_started(&sshd), before, "the same runner ran it");
}

#[test]
fn output_beyond_the_cap_is_counted_and_the_next_run_reads_clean() {
    let sshd = Sshd::start();
    let mut ssh = connect(&sshd.target());
    let out = ssh
        .run_workload(
            "head -c 20000000 /dev/zero; echo done >&2",
            30 * SECOND,
            4096,
        )
        .expect("run");
    assert_eq!(out.outcome, ExitOutcome::Exited(0));
    assert_eq!(out.stdout.len(), 4096);
    assert_eq!(out.dropped, [20_000_000 - 4096, 0]);
    assert_eq!(out.stderr_text(), "done\n");
    let next = ssh
        .run_workload("echo next", 10 * SECOND, 4096)
        .expect("run");
    assert_eq!(
        (next.stdout_text(), next.stderr_text()),
        ("next\n".to_owned(), String::new())
    );
}

/// A daemon that leaves the session and keeps stdout open, a plain background child, and a
/// shell loop in a subshell (no exec: found by the runner's process group): the run ends
/// when its own process exits, each is killed and named, the next run's output is its own.
#[test]
fn what_a_run_leaves_behind_is_killed_and_named() {
    // host tools: setsid
    let sshd = Sshd::start();
    let mut ssh = connect(&sshd.target());
    let detached = Marker::new(&sshd, 4);
    let child = Marker::new(&sshd, 5);
    let started = Instant::now();
    // The half second lets the background jobs exec `sleep` before the run ends (under load a
    // forked child may still be a shell, and is named `sh`).
    let out = ssh
        .run_workload(
            &format!(
                "setsid sleep {} & sleep {} & ( while :; do sleep 1; done ) & sleep 0.5; echo result",
                detached.0, child.0
            ),
            30 * SECOND,
            1 << 20,
        )
        .expect("run");
    assert_eq!(
        (out.outcome.clone(), out.stdout_text()),
        (ExitOutcome::Exited(0), "result\n".to_owned())
    );
    assert!(
        started.elapsed() < 10 * SECOND,
        "the run waited for its children: {:?}",
        started.elapsed()
    );
    for mark in [&detached, &child] {
        assert!(
            out.leftovers.iter().any(|l| l.ends_with(" sleep")),
            "{:?}",
            out.leftovers
        );
        assert_eq!(survivors_after(&mark.0, SECOND), Vec::<String>::new());
    }
    assert!(out.leftovers.len() >= 3, "{:?}", out.leftovers);
    let next = ssh
        .run_workload("echo next", 10 * SECOND, 1 << 20)
        .expect("run");
    assert_eq!(next.stdout_text(), "next\n");
    assert!(next.leftovers.is_empty(), "{:?}", next.leftovers);
}

/// Whether this machine has a cgroup v2 hierarchy this user may create a cgroup in, beside its
/// own: what the runner needs to hold a run's processes by more than its token.
fn writable_cgroup2() -> Option<std::path::PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    let mount = mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        (f.get(2) == Some(&"cgroup2")).then(|| f[1].to_owned())
    })?;
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = own
        .lines()
        .find_map(|l| l.strip_prefix("0::"))?
        .trim_end_matches('/');
    let probe = std::path::PathBuf::from(format!("{mount}{own}/aba-probe-{}", std::process::id()));
    std::fs::create_dir(&probe).ok()?;
    let _ = std::fs::remove_dir(&probe);
    Some(std::path::PathBuf::from(format!("{mount}{own}")))
}

/// A daemon that leaves the run's session and clears its environment (`setsid env -i`) is
/// neither in the run's process group nor marked by its token: the run's cgroup holds it,
/// so it is killed and named like any leftover, and the runner's cgroup goes with the runner
/// (issue 37 item 6).
#[test]
fn a_daemon_that_clears_its_environment_is_killed_and_named() {
    // host tools: setsid env
    let Some(parent) = writable_cgroup2() else {
        crate::support::skip::skip(
            "no cgroup v2 hierarchy this user may create a cgroup in (the runner then finds a run's processes by token and group only)",
        );
        return;
    };
    let sshd = Sshd::start();
    let mut ssh = connect(&sshd.target());
    let escaped = Marker::new(&sshd, 6);
    let out = ssh
        .run_workload(
            &format!(
                "setsid env -i sleep {} & setsid env -i sh -c 'sleep {}' & sleep 0.5; echo result",
                escaped.0, escaped.0
            ),
            30 * SECOND,
            1 << 20,
        )
        .expect("run");
    assert_eq!(out.stdout_text(), "result\n");
    assert!(
        out.leftovers
            .iter()
            .filter(|l| l.ends_with(" sleep"))
            .count()
            >= 2,
        "{:?}",
        out.leftovers
    );
    assert_eq!(survivors_after(&escaped.0, SECOND), Vec::<String>::new());
    let runners = || {
        std::fs::read_dir(&parent)
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with("aba-runner-"))
                    .count()
            })
            .unwrap_or(0)
    };
    drop(ssh);
    let deadline = Instant::now() + 10 * SECOND;
    while runners() > 0 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        runners(),
        0,
        "the runner's cgroup in {} is gone",
        parent.display()
    );
}

#[test]
fn a_lost_connection_is_reported_and_the_run_dies_with_it() {
    let sshd = Sshd::start();
    let mut ssh = connect(&sshd.target());
    ssh.run_workload("true", 10 * SECOND, 1024)
        .expect("the runner starts");
    let serving = sshd.serving_pid(ssh.local_addr().expect("connected"));
    let mark = Marker::new(&sshd, 1);
    let needle = format!("sleep {}", mark.0);
    let killer = {
        let needle = needle.clone();
        thread::spawn(move || {
            let deadline = Instant::now() + 10 * SECOND;
            while processes_matching(&needle).is_empty() && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(10));
            }
            signal(serving, libc::SIGKILL);
        })
    };
    let err = ssh
        .run_workload(&format!("echo hi >&2; sleep {}", mark.0), 30 * SECOND, 1024)
        .expect_err("the connection must be lost");
    killer.join().expect("killer thread");
    assert!(err.is_connection_lost(), "{err}");
    assert!(!ssh.is_connected());
    assert_eq!(survivors_after(&needle, 3 * SECOND), Vec::<String>::new());
}

/// A site that allows only some commands (an `authorized_keys` forced command) refuses the
/// runner: runs take the exec path, and the transport says so once.
#[test]
fn a_target_that_refuses_the_runner_gets_the_exec_path_and_one_notice() {
    let sshd = Sshd::start();
    let keys = sshd.dir().join("authorized_keys");
    let key = std::fs::read_to_string(&keys).expect("authorized_keys");
    let forced = "command=\"case \\\"$SSH_ORIGINAL_COMMAND\\\" in *aba-runner*) echo 'this site runs listed commands only' >&2; exit 1;; *) exec /bin/sh -c \\\"$SSH_ORIGINAL_COMMAND\\\";; esac\" ";
    std::fs::write(&keys, format!("{forced}{key}")).expect("write authorized_keys");
    let mut ssh = connect(&sshd.target());
    let out = ssh
        .run_workload("echo through exec", 10 * SECOND, 1024)
        .expect("run");
    assert_eq!(out.stdout_text(), "through exec\n");
    let notice = ssh.take_notice().expect("a notice");
    assert!(
        notice.contains("persistent runner could not start")
            && notice.contains("this site runs listed commands only"),
        "{notice}"
    );
    let before = commands_started(&sshd);
    for _ in 0..3 {
        ssh.run_workload("true", 10 * SECOND, 1024).expect("run");
    }
    assert_eq!(commands_started(&sshd) - before, 3, "one exec per run");
    assert_eq!(ssh.take_notice(), None, "said once");
}

/// What a command reads of the CPUs of itself, the runner (its grandparent through the
/// supervisor), and the sshd process that serves the runner.
const WHERE: &str = "cpus() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$1/status; }
runner=$(cut -d' ' -f4 /proc/$PPID/stat)
sshd=$(cut -d' ' -f4 /proc/$runner/stat)
echo \"$(cpus self) $(cpus $runner) $(cpus $sshd) $(cat /proc/$sshd/comm)\"";

/// Runs [`WHERE`] through the runner and checks the CPUs of the run, the runner and the sshd
/// process serving it (whose name it also checks).
#[track_caller]
fn assert_runs_where(ssh: &mut SshTransport, expected: [&CpuSet; 3]) {
    let out = ssh.run_workload(WHERE, 10 * SECOND, 4096).expect("run");
    let words: Vec<String> = out
        .stdout_text()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        words.len(),
        4,
        "{:?} {:?}",
        out.stdout_text(),
        out.stderr_text()
    );
    assert!(
        words[3].starts_with("sshd"),
        "the runner's parent is {}",
        words[3]
    );
    assert_eq!(
        words[..3],
        expected.map(ToString::to_string),
        "run, runner, sshd"
    );
}

/// A recipe that pins a workload to a CPU keeps aba's runner and the sshd process carrying it
/// off that CPU, and every command (a run through the runner, a command on the exec path of
/// the same connection) gets the session's CPUs back; a workload pinned by `taskset -c` runs
/// where it asked. With no CPU left, or `runner_cpus = "off"`, nothing moves; the first says
/// so once.
#[test]
fn the_runner_and_its_sshd_stay_off_the_cpus_workloads_are_pinned_to() {
    let Some(Split { all, pinned, rest }) = split_cpus() else {
        return;
    };
    let sshd = Sshd::start();

    let mut ssh = connect(&sshd.target());
    ssh.keep_off_cpus(&pinned);
    assert_runs_where(&mut ssh, [&all, &rest, &rest]);
    let on_pinned = ssh
        .run_workload(
            &format!("exec taskset -c {pinned} grep Cpus_allowed_list: /proc/self/status"),
            10 * SECOND,
            4096,
        )
        .expect("pinned run");
    assert!(
        on_pinned
            .stdout_text()
            .trim()
            .ends_with(&format!("\t{pinned}")),
        "{:?}",
        on_pinned.stdout_text()
    );
    let exec = ssh
        .exec(
            "sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status",
            10 * SECOND,
        )
        .expect("exec");
    assert_eq!(exec.stdout_text().trim(), all.to_string(), "exec path");
    assert_eq!(ssh.take_notice(), None);

    let mut crowded = connect(&sshd.target());
    crowded.keep_off_cpus(&all);
    let out = crowded.run_workload(WHERE, 10 * SECOND, 4096).expect("run");
    let notice = crowded.take_notice().expect("a notice");
    assert!(notice.contains("could not be kept off CPUs"), "{notice}");
    let all_three = format!("{all} {all} {all}");
    assert!(
        out.stdout_text().starts_with(&all_three),
        "{}",
        out.stdout_text()
    );

    let mut off = sshd.target();
    off.runner_cpus = RunnerCpus::Off;
    let mut stays = connect(&off);
    stays.keep_off_cpus(&pinned);
    let out = stays.run_workload(WHERE, 10 * SECOND, 4096).expect("run");
    assert!(
        out.stdout_text().starts_with(&all_three),
        "{}",
        out.stdout_text()
    );
    assert_eq!(stays.take_notice(), None);
}

/// Through the binary: a campaign whose recipe pins one workload to a CPU runs its samples
/// with the runner and the sshd serving it off that CPU (the engine tells the transport), a
/// pinned run where it asked, an unpinned run and the setup on every CPU; no warning, and
/// every row of samples.csv is journaled.
#[test]
fn a_campaign_that_pins_a_workload_keeps_aba_off_its_cpu() {
    let Some(split) = split_cpus() else {
        return;
    };
    let sshd = Sshd::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = sshd.inventory(tmp.path(), "");
    let recipe = write(
        tmp.path(),
        "r.toml",
        &pinning_recipe(
            &split,
            &format!(
                "{WHERE} >&2\nset -- $(cpus self) $(cpus $runner) $(cpus $sshd)\n\
                 test \"$1 $2 $3\" = \"{all} {rest} {rest}\" && echo 1",
                all = split.all,
                rest = split.rest
            ),
        ),
    );
    let out = run_on(tmp.path(), &recipe, &targets, "box", "results");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let dir = campaign_dir(&tmp.path().join("results"));
    let table = SampleTable::read(&dir.join("samples.csv")).expect("samples");
    let values: Vec<(String, Option<f64>)> = table
        .rows
        .iter()
        .map(|r| (table.text(r.workload).to_owned(), r.value))
        .collect();
    assert_eq!(
        values,
        [
            ("free".to_owned(), Some(1.0)),
            ("free".to_owned(), Some(1.0)),
            ("pinned".to_owned(), Some(2.0)),
            ("pinned".to_owned(), Some(2.0)),
        ]
    );
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).expect("journal");
    assert!(!journal.contains("could not be kept off"), "{journal}");
    assert_verified(&dir);
}

/// A runner that stops answering is dropped and the next run starts another on the same
/// connection, forked by the sshd process moved for the first: runs still get the session's
/// CPUs back, the exec path too.
#[test]
fn a_runner_started_after_a_dropped_one_keeps_giving_runs_their_cpus_back() {
    let Some(Split { all, pinned, rest }) = split_cpus() else {
        return;
    };
    let sshd = Sshd::start();
    let mut ssh = connect(&sshd.target());
    ssh.keep_off_cpus(&pinned);
    let first = ssh
        .run_workload("cut -d' ' -f4 /proc/$PPID/stat", 10 * SECOND, 4096)
        .expect("run");
    let runner: u32 = first
        .stdout_text()
        .trim()
        .parse()
        .expect("the runner's pid");
    signal(runner, libc::SIGSTOP);
    let stuck = ssh.run_workload("true", SECOND, 4096).expect("run");
    assert_eq!(stuck.outcome, ExitOutcome::TimedOut);
    signal(runner, libc::SIGKILL);
    assert_runs_where(&mut ssh, [&all, &rest, &rest]);
    let exec = ssh
        .exec(crate::support::cpus::OWN, 10 * SECOND)
        .expect("exec");
    assert_eq!(exec.stdout_text().trim(), all.to_string());
}
