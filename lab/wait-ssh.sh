#!/usr/bin/env bash
# wait-ssh.sh [-q] [--not-boot-id ID] PORT [TIMEOUT]
# Waits until a real ssh login works (or TIMEOUT, default LAB_WAIT_TIMEOUT=60 s, passes).
# Probes are real logins (ssh ... cat boot_id, ConnectTimeout LAB_WAIT_CONNECT_TIMEOUT=2),
# LAB_WAIT_INTERVAL (0.3 s) apart. A second probe may run while one is pending for at
# least LAB_WAIT_STAGGER (1 s), at most LAB_WAIT_PARALLEL (2) at once, each capped at
# LAB_WAIT_PROBE_MAX (8 s): a probe that got the banner of a dying sshd (right after a
# kexec/reboot) hangs in the key exchange and must not delay detection.
# Do not probe harder: under TCG every connection costs the guest an sshd re-exec, and
# 4 parallel probes with ConnectTimeout=1 made sshd too slow to ever send a banner in time.
# After 4 and after 8 probes without a login the limits double (a slow guest, not a dead one).
# With --not-boot-id, a login only counts when the guest's boot_id differs from ID
# (after a switch the old sshd may still answer for a moment).
# Prints the seconds waited (plus the new boot_id with --not-boot-id); exit 1 on timeout.
# The distro VM (LAB_FLAVOR=distro, or the VM in out/run/ that was started on PORT as one)
# gets longer limits: its sshd (re-exec, PAM, a logind session) takes 2-3 s per login when
# idle and over 8 s while the guest is still booting; 2 s probes never got a login then.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

quiet=0 old_id=""
while (($#)); do
    case $1 in
        -q) quiet=1; shift ;;
        --not-boot-id) old_id=${2:?}; shift 2 ;;
        -*) die "unknown option $1" ;;
        *) break ;;
    esac
done
(($# >= 1)) || die "usage: wait-ssh.sh [-q] [--not-boot-id ID] PORT [TIMEOUT]"
port=$1 limit=${2:-$LAB_WAIT_TIMEOUT}
lab_valid_port "$port"
if [[ $(lab_port_flavor "$port") == distro ]]; then
    LAB_WAIT_CONNECT_TIMEOUT=$LAB_DISTRO_WAIT_CONNECT_TIMEOUT
    LAB_WAIT_PROBE_MAX=${LAB_WAIT_PROBE_MAX:-30}
    LAB_WAIT_STAGGER=${LAB_WAIT_STAGGER:-2.0}
fi
LAB_WAIT_PARALLEL=${LAB_WAIT_PARALLEL:-2}
LAB_WAIT_STAGGER=${LAB_WAIT_STAGGER:-1.0}
LAB_WAIT_PROBE_MAX=${LAB_WAIT_PROBE_MAX:-8}
lab_ssh_args "$port" "$LAB_WAIT_CONNECT_TIMEOUT"

tmp=$(mktemp -d)
PIDS=()
finish() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap finish EXIT

t0=$(now) tries=0 last=0
declare -A OUT=()
elapsed() { awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }'; }
while :; do
    live=()
    for p in "${PIDS[@]}"; do
        if kill -0 "$p" 2>/dev/null; then live+=("$p"); continue; fi
        rc=0
        wait "$p" || rc=$?
        id=$(cat "${OUT[$p]}" 2>/dev/null || true)
        if ((rc == 0)) && [[ -n $id && $id != "$old_id" ]]; then
            el=$(elapsed)
            ((quiet)) || log "ssh on port $port up after ${el}s ($tries probes)"
            if [[ -n $old_id ]]; then echo "$el $id"; else echo "$el"; fi
            exit 0
        fi
    done
    PIDS=("${live[@]}")
    if awk -v e="$(elapsed)" -v l="$limit" 'BEGIN { exit !(e >= l) }'; then
        log "timeout: no ssh login on port $port within ${limit}s ($tries probes)"
        exit 1
    fi
    if ((${#PIDS[@]} == 0)) || { ((${#PIDS[@]} < LAB_WAIT_PARALLEL)) &&
        awk -v a="$(now)" -v b="$last" -v s="$LAB_WAIT_STAGGER" 'BEGIN { exit !(a - b >= s) }'; }; then
        last=$(now)
        tries=$((tries + 1))
        # A guest that sends no banner within the connect timeout is slow, not absent (TCG on
        # a loaded host: sshd re-execs for every connection, and QEMU replays every probe it
        # queued while the guest was down): after 4 probes without a login each later probe
        # waits twice as long, up to 4x, instead of adding connections at the same pace.
        if ((tries == 5 || tries == 9)); then
            ct=$((${ct:-$LAB_WAIT_CONNECT_TIMEOUT} * 2))
            lab_ssh_args "$port" "$ct"
            LAB_WAIT_PROBE_MAX=$((LAB_WAIT_PROBE_MAX * 2))
            LAB_WAIT_STAGGER=$(awk -v s="$LAB_WAIT_STAGGER" 'BEGIN { print s * 2 }')
        fi
        # timeout is our direct child, so finish() can stop it (and it stops ssh)
        timeout "$LAB_WAIT_PROBE_MAX" "${LAB_SSH_ARGV[@]}" 'cat /proc/sys/kernel/random/boot_id' \
            </dev/null >"$tmp/$tries.out" 2>/dev/null &
        PIDS+=("$!")
        OUT[$!]=$tmp/$tries.out
    fi
    sleep "$LAB_WAIT_INTERVAL"
done
