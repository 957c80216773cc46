//! The persistent runner on a lab VM (issue 17): dash on a real Debian kernel under QEMU,
//! reached through QEMU's user network. One runner takes every run of the connection; a run
//! killed at its deadline, what a run leaves behind, output beyond the cap and a lost session
//! each leave nothing running in the guest (checked from a second login); on a guest with two
//! CPUs, the runner and sshd move off the CPU a recipe pins to.

use std::time::{Duration, Instant};

use aba::target::{
    cpu_set::CpuSet,
    ssh::{SshTarget, SshTransport},
    transport::{ExitOutcome, Transport},
};

use crate::support::lab::{KERNEL_A, LabVm, lab_dir};

const SECOND: Duration = Duration::from_secs(1);

fn target(vm: &LabVm) -> SshTarget {
    let lab = lab_dir();
    let mut target = SshTarget::new("127.0.0.1");
    target.port = Some(vm.port);
    target.user = Some("root".into());
    target.identity = Some(lab.join("id_ed25519"));
    target.known_hosts = Some(lab.join("known_hosts"));
    target.ssh_config = Some("/dev/null".into());
    target
}

/// The pids of the guest's processes whose command line holds `needle`, one per line, from a
/// second login (whose own command line holds the pattern, written so that it does not match
/// itself).
fn guest_processes(vm: &LabVm, needle: &str) -> String {
    let (head, last) = needle.split_at(needle.len() - 1);
    vm.ssh(&format!(
        "for d in /proc/[0-9]*; do c=$(tr '\\000' ' ' < $d/cmdline 2>/dev/null); \
         case $c in *\"{head}\"[{last}]*) echo ${{d#/proc/}};; esac; done"
    ))
}

/// Waits until the guest has no process holding `needle` (a kill takes a moment under TCG).
fn assert_gone(vm: &LabVm, needle: &str) {
    let deadline = Instant::now() + 20 * SECOND;
    loop {
        let left = guest_processes(vm, needle);
        if left.trim().is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "still running in the guest: {left}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn the_runner_keeps_every_guarantee_on_a_lab_vm() {
    // Two virtual CPUs, for the pinning at the end.
    let vm = LabVm::start_with_cpus("t-runner", KERNEL_A, Some(2));
    let mut ssh = SshTransport::connect(&target(&vm)).expect("connect");

    // Runs, one after the other, through one runner: status, streams, its own $$.
    let out = ssh
        .run_workload("echo $$ $0; echo err >&2; exit 4", 60 * SECOND, 1 << 20)
        .expect("run");
    assert_eq!(out.outcome, ExitOutcome::Exited(4));
    assert!(
        out.stdout_text().ends_with(" sh\n"),
        "{}",
        out.stdout_text()
    );
    assert_eq!(out.stderr_text(), "err\n");
    let runners = guest_processes(&vm, "aba-runner");
    assert_eq!(runners.lines().count(), 1, "{runners}");

    // Deadline: the run and its child die, the next run goes through the same runner.
    let out = ssh
        .run_workload("sleep 7771 & sleep 7772; echo never", 3 * SECOND, 1 << 20)
        .expect("run");
    assert_eq!(out.outcome, ExitOutcome::TimedOut);
    assert_gone(&vm, "sleep 777");
    let out = ssh
        .run_workload("echo next", 60 * SECOND, 1 << 20)
        .expect("run");
    assert_eq!(out.stdout_text(), "next\n");
    assert_eq!(
        guest_processes(&vm, "aba-runner"),
        runners,
        "the same runner"
    );

    // What a run leaves behind is killed and named; the next run's output is its own.
    let out = ssh
        .run_workload(
            "setsid sleep 7773 & setsid env -i sleep 7775 & ( while :; do sleep 1; done ) & labbench 5",
            60 * SECOND,
            1 << 20,
        )
        .expect("run");
    assert!(out.outcome.success(), "{out:?}");
    assert!(out.leftovers.len() >= 3, "{:?}", out.leftovers);
    assert_gone(&vm, "sleep 7773");
    // Out of the session and without the run's token: the run's cgroup still holds it.
    assert_gone(&vm, "sleep 7775");
    assert_gone(&vm, "labbench 5");

    // Output beyond the cap is counted, not kept.
    let out = ssh
        .run_workload(
            "head -c 3000000 /dev/zero; echo done >&2",
            60 * SECOND,
            4096,
        )
        .expect("run");
    assert_eq!(out.stdout.len(), 4096);
    assert_eq!(out.dropped, [3_000_000 - 4096, 0]);
    assert_eq!(out.stderr_text(), "done\n");

    // The session is killed in the guest mid-run: a lost connection, and the run dies with it.
    let runner_pid = runners.trim().to_owned();
    let session = vm
        .ssh(&format!(
            "read -r s < /proc/{runner_pid}/stat; set -- ${{s##*) }}; echo $2"
        ))
        .trim()
        .to_owned();
    let killer = {
        let port = vm.port;
        std::thread::spawn(move || {
            std::thread::sleep(3 * SECOND);
            let _ = std::process::Command::new(lab_dir().join("lab-ssh.sh"))
                .args([&port.to_string(), &format!("kill -9 {session}")])
                .output();
        })
    };
    let err = ssh
        .run_workload("sleep 7774", 120 * SECOND, 1 << 20)
        .expect_err("the connection is lost");
    killer.join().expect("killer");
    assert!(err.is_connection_lost(), "{err}");
    assert_gone(&vm, "sleep 7774");
    assert_gone(&vm, "aba-runner");
    assert_eq!(
        vm.ssh("ls -d /sys/fs/cgroup/aba-runner-* 2>/dev/null; true")
            .trim(),
        "",
        "the runner's cgroup went with it"
    );

    // A recipe pins a workload to CPU 1: the runner (dash) and the guest's sshd move to CPU 0
    // with busybox's taskset; every run and the exec path's commands get both CPUs back, a
    // pinned run gets CPU 1.
    let mut ssh = SshTransport::connect(&target(&vm)).expect("connect");
    ssh.keep_off_cpus(&CpuSet::parse("1").expect("a CPU"));
    let out = ssh
        .run_workload(
            "cpus() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$1/status; }
runner=$(cut -d' ' -f4 /proc/$PPID/stat)
sshd=$(cut -d' ' -f4 /proc/$runner/stat)
echo $(cpus self) $(cpus $runner) $(cpus $sshd) $(cat /proc/$sshd/comm)",
            60 * SECOND,
            1 << 20,
        )
        .expect("run");
    assert_eq!(out.stdout_text(), "0-1 0 0 sshd\n", "{}", out.stderr_text());
    let pinned = ssh
        .run_workload(
            "exec taskset -c 1 grep Cpus_allowed_list: /proc/self/status",
            60 * SECOND,
            1 << 20,
        )
        .expect("run");
    assert_eq!(pinned.stdout_text(), "Cpus_allowed_list:\t1\n");
    let exec = ssh
        .exec("grep Cpus_allowed_list: /proc/self/status", 60 * SECOND)
        .expect("exec");
    assert_eq!(exec.stdout_text(), "Cpus_allowed_list:\t0-1\n");
    assert_eq!(ssh.take_notice(), None);
}
