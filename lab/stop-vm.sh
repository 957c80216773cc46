#!/usr/bin/env bash
# stop-vm.sh NAME [--hard]
# Stops lab VM NAME by the pid in out/run/NAME/qemu.pid: TERM, then KILL after
# LAB_STOP_GRACE (5) seconds; --hard sends KILL at once. No VM running: exit 0.
# The distro VM (FLAVOR=distro in its vm.env) is first asked to shut down cleanly: an ACPI
# power-button press (system_powerdown), up to LAB_DISTRO_STOP_GRACE (90) seconds for
# systemd to power off, then TERM and KILL as above. --hard is a power cut either way.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

(($# >= 1 && $# <= 2)) || die "usage: stop-vm.sh NAME [--hard]"
name=$1 hard=0
lab_valid_name "$name"
case ${2:-} in "") ;; --hard) hard=1 ;; *) die "unknown option: $2" ;; esac

rd=$LAB_RUN/$name
pidfile=$rd/qemu.pid
cleanup() { rm -f "$pidfile" "$rd/serial.sock" "$rd/monitor.sock"; }

pid=$(cat "$pidfile" 2>/dev/null || true)
if [[ ! $pid =~ ^[0-9]+$ ]] || ! lab_pid_alive "$pid"; then
    cleanup
    exit 0
fi
# only ever signal our own QEMU for this VM
if ! tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "-name lab-$name "; then
    log "pid $pid is not lab VM $name; removing stale pidfile"
    cleanup
    exit 0
fi
gone() { ! lab_pid_alive "$pid"; }
if ((hard)); then
    kill -KILL "$pid" 2>/dev/null || true
else
    if [[ $(lab_flavor "$name") == distro ]] && "$LAB_DIR/monitor.sh" "$name" system_powerdown >/dev/null 2>&1; then
        for ((i = 0; i < ${LAB_DISTRO_STOP_GRACE:-90} * 10; i++)); do gone && break; sleep 0.1; done
        gone || log "$name did not power off within ${LAB_DISTRO_STOP_GRACE:-90}s of system_powerdown"
    fi
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < LAB_STOP_GRACE * 10; i++)); do gone && break; sleep 0.1; done
    gone || { log "$name did not stop after ${LAB_STOP_GRACE}s; KILL"; kill -KILL "$pid" 2>/dev/null || true; }
fi
for ((i = 0; i < 100; i++)); do gone && break; sleep 0.05; done
gone || die "pid $pid of $name is still alive"
cleanup
printf '=== stop-vm %s%s at %s (host %s)\n' "$name" "$( ((hard)) && echo ' --hard')" \
    "$(date -u +%FT%T.%3NZ)" "$(now)" >>"$rd/console.log"
log "stopped $name (pid $pid)"
