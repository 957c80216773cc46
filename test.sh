#!/usr/bin/env bash
# test.sh [cargo test args…]: aba's whole test suite, on a fresh Debian machine too.
# Installs every host program the tests need (lab/host-deps.sh: QEMU, OpenSSH server and client,
# busybox, cpio…; needs root when something is missing), builds the QEMU lab, the distro
# target and the lab's own kernels (lab/kernel/) from Debian packages if they are not built,
# and labgrid (PyPI, into lab/out/labgrid: lab/labgrid/install.sh),
# then runs the unit tests, the integration
# tests, and the lab and distro tests side by side, and prints how long each phase took and how many tests were skipped, and why.
# The SSH tests start their own sshd on 127.0.0.1; the lab tests start their own VMs under
# software emulation. With arguments, runs `cargo test ARGS…` after the same preparation.
# ABA_REQUIRE_ALL=1 (set by .ci/run) turns every skipped test into a failure.
set -euo pipefail
cd "$(dirname "$0")"
export ABA_SKIP_LOG=${ABA_SKIP_LOG:-$PWD/target/test-skips.log}
mkdir -p "$(dirname "$ABA_SKIP_LOG")"
: >"$ABA_SKIP_LOG"

phases=()
mark=$(date +%s)
phase() { # phase NAME: records the time since the previous mark under NAME
    local now
    now=$(date +%s)
    phases+=("$(printf '%-12s %5d s' "$1" $((now - mark)))")
    mark=$now
}
# The distro tests leave their VM up for the next one; whatever ends test.sh stops it.
stop_distro() { LAB_FLAVOR=distro lab/stop-vm.sh t-distro --hard >/dev/null 2>&1 || true; }
summary() {
    local status=$?
    stop_distro
    printf '\ntest.sh phases:\n'
    printf '  %s\n' "${phases[@]}"
    local skipped
    skipped=$(grep -c . "$ABA_SKIP_LOG" || true)
    if ((skipped)); then
        printf '%d test(s) skipped on this machine:\n' "$skipped"
        cut -f1,2 "$ABA_SKIP_LOG" | sed 's/\t/: /; s/^/  /'
    else
        printf 'no test skipped\n'
    fi
    exit "$status"
}
trap summary EXIT

lab/host-deps.sh
phase install
lab/build-target.sh --check >/dev/null 2>&1 || lab/build-target.sh
lab/distro/build.sh --check >/dev/null 2>&1 || lab/distro/build.sh
lab/kernel/build.sh --check >/dev/null 2>&1 || lab/kernel/build.sh
lab/labgrid/install.sh
phase lab-build
cargo test --locked --no-run "$@"
phase build
if (($#)); then
    cargo test --locked "$@"
    phase tests
    exit
fi
cargo test --locked --lib
phase unit
cargo test --locked --test integration -- --skip lab:: --skip distro::
phase integration
# The busybox lab and the distro target each emulate one guest at a time; on two cores they
# run side by side. The distro tests share one VM (t-distro), stopped when they are done.
distro_log=target/distro-tests.log
cargo test --locked --test integration -- distro:: --test-threads=1 >"$distro_log" 2>&1 &
distro_pid=$!
lab_status=0
cargo test --locked --test integration -- lab:: || lab_status=$?
distro_status=0
wait "$distro_pid" || distro_status=$?
stop_distro
printf '
--- distro tests (lab/distro, run beside the lab tests) ---
'
cat "$distro_log"
phase lab+distro
((lab_status == 0 && distro_status == 0)) || exit 1
