#!/usr/bin/env bash
# up.sh [NAME] [PORT]: make the lab ready for aba: build it if needed (host packages on a
# fresh machine, then the image from Debian debs), start VM NAME (default lab1) on PORT (default 10022) if it
# is not running, and wait until it accepts logins.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
name=${1:-lab1} port=${2:-10022}

"$LAB_DIR/host-deps.sh"
"$LAB_DIR/build-target.sh" --check >/dev/null 2>&1 || "$LAB_DIR/build-target.sh"

pidfile=$LAB_RUN/$name/qemu.pid
if [[ -s $pidfile ]] && lab_pid_alive "$(cat "$pidfile")"; then
    echo "VM $name is already running (pid $(cat "$pidfile"))" >&2
else
    "$LAB_DIR/start-vm.sh" "$name" "$port"
fi
"$LAB_DIR/wait-ssh.sh" "$port" 120
echo "lab VM $name ready on 127.0.0.1:$port" >&2
