#!/usr/bin/env bash
# up.sh [NAME] [PORT]: make the lab ready for aba: build it if needed (host packages on a
# fresh machine, then the image from Debian debs), start VM NAME (default lab1) on PORT (default 10022) if it
# is not running, and wait until it accepts logins.
# LAB_FLAVOR=distro up.sh [NAME] [PORT] (or lab/distro/up.sh): the same for the distro VM
# (lab/distro/build.sh), default distro1 on 10122; its disk and EFI variables are kept
# from the last run unless LAB_FRESH=1.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
if [[ ${LAB_FLAVOR:-busybox} == distro ]]; then
    name=${1:-distro1} port=${2:-10122}
    export LAB_FLAVOR
    "$LAB_DIR/host-deps.sh"
    "$LAB_DIR/distro/build.sh" --check >/dev/null 2>&1 || "$LAB_DIR/distro/build.sh"
    wait_s=300
else
    name=${1:-lab1} port=${2:-10022}
    "$LAB_DIR/host-deps.sh"
    "$LAB_DIR/build-target.sh" --check >/dev/null 2>&1 || "$LAB_DIR/build-target.sh"
    wait_s=120
fi

pidfile=$LAB_RUN/$name/qemu.pid
if [[ -s $pidfile ]] && lab_pid_alive "$(cat "$pidfile")"; then
    echo "VM $name is already running (pid $(cat "$pidfile"))" >&2
else
    "$LAB_DIR/start-vm.sh" "$name" "$port"
fi
"$LAB_DIR/wait-ssh.sh" "$port" "$wait_s"
echo "lab VM $name ready on 127.0.0.1:$port" >&2
