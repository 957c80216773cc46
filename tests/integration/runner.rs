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

use aba::target::{
    ssh::{SshTarget, SshTransport},
    transport::{ExitOutcome, Transport},
};

use crate::support::sshd::{Marker, Sshd, processes_matching, signal, survivors_after};

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
