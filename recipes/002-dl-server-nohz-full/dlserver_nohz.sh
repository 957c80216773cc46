#!/bin/sh
# SPDX-License-Identifier: MIT
#
# dlserver_nohz.sh: the fair (dl-)server on an isolated nohz_full CPU, in one run.
#
# A SCHED_FIFO busy loop hogs the CPU under test; fair (SCHED_OTHER) tasks next to it only
# run through the fair server's reservation (runtime/period in
# /sys/kernel/debug/sched/fair_server/cpuN). Two phases of SECONDS each:
#   A, latency:   the hog + `heartbeat`, a fair task that wants to wake every 50 ms;
#                 reported: the longest gap between two of its wakeups and, from the CPU's
#                 trace buffer, the tick and inactive-timer expiries and the tick_stop
#                 events of the phase (when tracefs can be used);
#   B, bandwidth: the hog + a fair busy loop; reported: the CPU share the loop got, and
#                 the CPU's local timer interrupts per second (the tick, when it runs).
# Plus the kernel warnings (dmesg "WARNING:" lines) that appeared during the run.
#
# Usage: dlserver_nohz.sh [-c CPU] [-d SECONDS] [-p PRIO] [-t MAX_TICK_HZ] [-s RUNTIME/PERIOD] [-n]
#   -c CPU          CPU under test; default: the first nohz_full CPU, else the first
#                   isolated one. It must be in /sys/devices/system/cpu/nohz_full (the
#                   check nohz_full): a kernel parameter in /proc/cmdline is no proof that
#                   the kernel made the CPU tickless
#   -d SECONDS      length of each phase, default 10
#   -p PRIO         SCHED_FIFO priority of the hog, default 80
#   -t MAX_TICK_HZ  also fail when phase B sees MAX_TICK_HZ or more local timer interrupts per second
#                   (off by default: the tick rate is a measurement, not a pass condition)
#   -s RUNTIME/PERIOD  the fair server's runtime and period in ns, for kernels whose debugfs
#                   cannot be read (lockdown); default: read them from debugfs
#   -n              dry run: check the environment, print what would run, start nothing
#
# Output: "key: value" lines, then one "check NAME: PASS|FAIL (...)" line per condition and
# "RESULT: PASS" or "RESULT: FAIL". The measurements:
#   cfs_bandwidth_pct: 5.09        fair loop's CPU share in phase B, percent
#   reserved_pct: 5.00             runtime/period of the CPU's fair server, percent
#   cfs_bandwidth_deviation_pct: 1.80  |share - reserved| / reserved, percent: how far the
#                                  server is from delivering exactly its reservation
#   tick_rate_hz: 54.1             local timer interrupts/s on the CPU in phase B
#   heartbeat_max_gap_ms: 1003.2   longest heartbeat gap in phase A
#   new_kernel_warnings: 0         dmesg WARNING lines that appeared during the run
#   phase_a_tick_expiries: 4       hrtimer_expire_entry of the tick (tick_nohz_handler, or
#                                  tick_sched_timer on older kernels) on the CPU in phase A
#   phase_a_inactive_timer_expiries: 108  hrtimer_expire_entry of inactive_task_timer
#   phase_a_tick_stop_success: 108        tick_stop events with success=1
#   phase_a_tick_stop_sched_dependency: 319  tick_stop events with dependency=SCHED
#   (the four phase_a_* lines need tracefs; without it "phase_a_trace: unavailable (...)")
# Pass conditions: the CPU is nohz_full, bandwidth within 0.4x..2.5x of the reservation
# (not starved, not wildly over it: the thread's test script's bounds), heartbeat gap below
# 1.5 server periods, no new kernel warning, and (with -t) the tick rate. A dry run (-n)
# checks the CPU and exits 1 when it is not nohz_full.
#
# Needs root, taskset and chrt, the heartbeat binary next to this script (cc -O2 -o
# heartbeat heartbeat.c) and debugfs (mounted for the run when it is not). On PREEMPT_RT
# the sleep timer of a fair task is expired by the ktimers/N thread (SCHED_FIFO 1), which
# the hog would starve, so the script raises ktimers/N above the hog for the run and
# restores it afterwards.
# Exit status: 0 PASS, 1 FAIL, 2 the test could not run.
set -u

CPU=""
DUR=10
PRIO=80
MAX_TICK=""
SERVER=""
DRY=0
HERE=$(cd "$(dirname "$0")" && pwd)
HEARTBEAT=$HERE/heartbeat
HB_PERIOD_MS=50

HOG=""
SPIN=""
HB=""
KT=""
KT_POLICY=""
KT_PRIO=""
TMP=""
MOUNTED=""
TR=""
OLDMASK=""
FAIL=0

die() {
	echo "dlserver_nohz: $*" >&2
	exit 2
}

usage() {
	echo "usage: $0 [-c CPU] [-d SECONDS] [-p PRIO] [-t MAX_TICK_HZ] [-s RUNTIME/PERIOD] [-n]" >&2
	exit 2
}

is_uint() {
	case $1 in '' | *[!0-9]*) return 1 ;; *) return 0 ;; esac
}

while getopts c:d:p:t:s:n opt; do
	case $opt in
	c) CPU=$OPTARG ;;
	d) DUR=$OPTARG ;;
	p) PRIO=$OPTARG ;;
	t) MAX_TICK=$OPTARG ;;
	s) SERVER=$OPTARG ;;
	n) DRY=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage
if ! is_uint "$DUR" || [ "$DUR" -lt 1 ]; then
	die "-d SECONDS must be a positive integer"
fi
if ! is_uint "$PRIO" || [ "$PRIO" -lt 1 ] || [ "$PRIO" -gt 98 ]; then
	die "-p PRIO must be 1..98"
fi
if [ -n "$MAX_TICK" ] && ! is_uint "$MAX_TICK"; then
	die "-t MAX_TICK_HZ must be an integer"
fi

# Nanoseconds on a monotonic-enough clock: GNU date, else /proc/uptime (10 ms resolution).
now_ns() {
	t=$(date +%s%N 2>/dev/null)
	case $t in
	'' | *[!0-9]*) awk '{ printf "%.0f\n", $1 * 1e9 }' /proc/uptime ;;
	*) echo "$t" ;;
	esac
}

# CPU time in ns of process $1: schedstat when the kernel has it, else utime+stime ticks.
cpu_time_ns() {
	if [ -r "/proc/$1/schedstat" ]; then
		awk '{ print $1 }' "/proc/$1/schedstat"
	else
		awk -v hz="$(getconf CLK_TCK)" '{ printf "%.0f\n", ($14 + $15) * 1e9 / hz }' "/proc/$1/stat"
	fi
}

# Local timer interrupts of CPU $CPU so far (x86 "LOC:", else the arch_timer line).
timer_irqs() {
	awk -v want="CPU$CPU" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == want) col = i + 1; next }
		col && $1 == "LOC:" { print $col; found = 1; exit }
		col && !fallback && /arch_timer/ { fallback = $col }
		END { if (!found) print (fallback == "" ? "" : fallback) }
	' /proc/interrupts
}

kernel_warnings() {
	dmesg 2>/dev/null | grep -c 'WARNING:'
}

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	for pid in $HOG $SPIN $HB; do
		kill -9 "$pid" 2>/dev/null
	done
	wait 2>/dev/null
	if [ -n "$KT" ] && [ -n "$KT_PRIO" ]; then
		chrt "$KT_POLICY" -p "$KT_PRIO" "$KT" 2>/dev/null
	fi
	if [ -n "$TR" ]; then
		echo 0 >"$TR/tracing_on" 2>/dev/null
		echo 0 >"$TR/events/timer/hrtimer_expire_entry/enable" 2>/dev/null
		echo 0 >"$TR/events/timer/tick_stop/enable" 2>/dev/null
		[ -z "$OLDMASK" ] || echo "$OLDMASK" >"$TR/tracing_cpumask" 2>/dev/null
	fi
	[ -z "$TMP" ] || rm -rf "$TMP"
	[ -z "$MOUNTED" ] || umount /sys/kernel/debug 2>/dev/null
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP

# ---- verdict lines
check() { # name, 1 = pass, detail
	if [ "$2" = 1 ]; then
		echo "check $1: PASS ($3)"
	else
		echo "check $1: FAIL ($3)"
		FAIL=1
	fi
}

# 1 when CPU $1 is in the CPU list $2 ("2-3,6-53"), else 0.
in_cpu_list() {
	[ -r "$HERE/in_cpu_list.awk" ] || die "$HERE/in_cpu_list.awk is missing"
	printf '%s\n' "$2" | awk -v c="$1" -f "$HERE/in_cpu_list.awk"
}

# ---- the CPU under test and what the kernel says about it
NOHZ=$(cat /sys/devices/system/cpu/nohz_full 2>/dev/null)
[ "$NOHZ" != "(null)" ] || NOHZ=""
ISOLATED=$(cat /sys/devices/system/cpu/isolated 2>/dev/null)
if [ -z "$CPU" ]; then
	LIST=${NOHZ:-$ISOLATED}
	[ -n "$LIST" ] || die "no nohz_full or isolated CPU; boot with nohz_full=/isolcpus= or pass -c CPU"
	CPU=${LIST%%[,-]*}
fi
is_uint "$CPU" || die "-c CPU must be a CPU number"
[ -d "/sys/devices/system/cpu/cpu$CPU" ] || die "CPU $CPU does not exist"
[ "$(cat "/sys/devices/system/cpu/cpu$CPU/online" 2>/dev/null || echo 1)" = 1 ] || die "CPU $CPU is offline"
taskset -c "$CPU" true 2>/dev/null || die "this shell may not run on CPU $CPU (cpuset?)"
[ -x "$HEARTBEAT" ] || die "$HEARTBEAT is missing; build it with: cc -O2 -o heartbeat heartbeat.c"
[ -n "$(timer_irqs)" ] || die "no local timer interrupt line for CPU $CPU in /proc/interrupts"

echo "kernel: $(uname -r)"
echo "cpu: $CPU"
echo "nohz_full: ${NOHZ:-none}"
echo "isolated: ${ISOLATED:-none}"
echo "phase_seconds: $DUR"
check nohz_full "$(in_cpu_list "$CPU" "$NOHZ")" \
	"CPU $CPU; /sys/devices/system/cpu/nohz_full: ${NOHZ:-none}"
# Measuring a CPU that ticks as usual says nothing about nohz_full: stop here (a dry run
# goes on to show the rest).
[ "$FAIL" = 0 ] || [ "$DRY" = 1 ] || die "CPU $CPU is not nohz_full; boot with nohz_full= naming it"

if [ "$DRY" = 0 ]; then
	[ "$(id -u)" = 0 ] || die "must run as root"
	if [ ! -d /sys/kernel/debug/sched ] && ! grep -q ' /sys/kernel/debug debugfs ' /proc/mounts; then
		mount -t debugfs none /sys/kernel/debug || die "cannot mount debugfs"
		MOUNTED=1 # unmounted again on exit
	fi
fi
FS=/sys/kernel/debug/sched/fair_server/cpu$CPU
if [ -n "$SERVER" ]; then
	FS_RUNTIME=${SERVER%%/*}
	FS_PERIOD=${SERVER#*/}
	echo "fair_server: taken from -s, not read from $FS"
elif FS_RUNTIME=$(cat "$FS/runtime" 2>/dev/null) && FS_PERIOD=$(cat "$FS/period" 2>/dev/null); then
	:
elif [ "$DRY" = 1 ]; then
	echo "dry run: $FS is not readable; assuming the defaults (50 ms / 1 s)"
	FS_RUNTIME=50000000
	FS_PERIOD=1000000000
else
	die "cannot read $FS: kernel without the fair server, debugfs unavailable or locked down (see -s)"
fi
if ! is_uint "$FS_RUNTIME" || ! is_uint "$FS_PERIOD" || [ "$FS_PERIOD" -eq 0 ]; then
	die "unreadable fair server parameters in $FS"
fi
[ "$FS_RUNTIME" -gt 0 ] || die "the fair server of CPU $CPU has runtime 0: nothing to test"
RESERVED=$(awk -v r="$FS_RUNTIME" -v p="$FS_PERIOD" 'BEGIN { printf "%.2f", 100 * r / p }')
MAX_GAP_MS=$(awk -v p="$FS_PERIOD" 'BEGIN { printf "%.0f", 1.5 * p / 1e6 }')
echo "fair_server_runtime_ns: $FS_RUNTIME"
echo "fair_server_period_ns: $FS_PERIOD"
echo "reserved_pct: $RESERVED"

HOG_CMD="taskset -c $CPU chrt -f $PRIO sh -c 'while :; do :; done'"
SPIN_CMD="taskset -c $CPU sh -c 'while :; do :; done'"
HB_CMD="taskset -c $CPU $HEARTBEAT $HB_PERIOD_MS $((DUR + 1))"
if [ "$DRY" = 1 ]; then
	echo "dry run: phase A would run: $HB_CMD, then $HOG_CMD for ${DUR}s"
	echo "dry run: phase B would run: $SPIN_CMD, then $HOG_CMD for ${DUR}s"
	echo "dry run: local timer interrupts of CPU $CPU so far: $(timer_irqs)"
	echo "dry run: kernel warnings in dmesg so far: $(kernel_warnings)"
	if [ "$FAIL" = 0 ]; then
		echo "RESULT: DRY-RUN"
	else
		echo "RESULT: FAIL"
	fi
	exit "$FAIL"
fi

TMP=$(mktemp -d) || die "mktemp failed"

# ---- PREEMPT_RT: keep the timer thread of the CPU above the hog
KT=$(pgrep -x "ktimers/$CPU" | head -n 1)
if [ -n "$KT" ]; then
	KT_POLICY=$(chrt -p "$KT" | awk -F': *' '/policy/ { print $2 }')
	KT_PRIO=$(chrt -p "$KT" | awk -F': *' '/priority/ { print $2 }')
	case $KT_POLICY in
	SCHED_FIFO) KT_POLICY=-f ;;
	SCHED_RR) KT_POLICY=-r ;;
	*) KT_POLICY=-o ;;
	esac
	chrt -f -p $((PRIO + 1)) "$KT" || die "cannot raise ktimers/$CPU above the hog"
	echo "ktimers: ktimers/$CPU raised from priority $KT_PRIO to $((PRIO + 1)) for the run"
fi

WARN0=$(kernel_warnings)

# ---- tracefs for the phase A counts: the CPU's own buffer, two timer events
TRACE_WHY=""
if [ -d /sys/kernel/tracing/events/timer ]; then
	TR=/sys/kernel/tracing
elif [ -d /sys/kernel/debug/tracing/events/timer ]; then
	TR=/sys/kernel/debug/tracing
else
	TRACE_WHY="no tracefs with timer events"
fi
# tracing_cpumask of CPU $CPU: hex, in comma-separated 32-bit words
MASK=$(awk -v c="$CPU" 'BEGIN { s = sprintf("%x", 2 ^ (c % 32)); for (i = 0; i < int(c / 32); i++) s = s ",00000000"; print s }')
if [ -n "$TR" ]; then
	if OLDMASK=$(cat "$TR/tracing_cpumask" 2>/dev/null) &&
		echo 0 >"$TR/tracing_on" &&
		echo "$MASK" >"$TR/tracing_cpumask" &&
		echo 1 >"$TR/events/timer/hrtimer_expire_entry/enable" &&
		echo 1 >"$TR/events/timer/tick_stop/enable"; then
		:
	else
		TRACE_WHY="cannot set up tracing in $TR"
	fi
fi

# Starts "$@" in the background, pinned by the command itself, and checks it stays alive.
start() {
	"$@" &
	last=$!
	sleep 0.2
	kill -0 "$last" 2>/dev/null || die "could not start: $*"
}

# ---- phase A: heartbeat latency
start taskset -c "$CPU" "$HEARTBEAT" "$HB_PERIOD_MS" $((DUR + 1)) >"$TMP/heartbeat"
HB=$last
sleep 0.3
start taskset -c "$CPU" chrt -f "$PRIO" sh -c 'while :; do :; done'
HOG=$last
if [ -z "$TRACE_WHY" ]; then
	: >"$TR/trace"
	echo 1 >"$TR/tracing_on"
fi
sleep "$DUR"
if [ -z "$TRACE_WHY" ]; then
	echo 0 >"$TR/tracing_on"
	cp "$TR/per_cpu/cpu$CPU/trace" "$TMP/phase-a" 2>/dev/null || TRACE_WHY="cannot read $TR/per_cpu/cpu$CPU/trace"
fi
kill -9 "$HOG"
wait "$HOG" 2>/dev/null
HOG=""
wait "$HB"
HB=""
GAP=$(awk '{ for (i = 1; i < NF; i++) if ($i == "max_gap_ms") print $(i + 1) }' "$TMP/heartbeat")
BEATS=$(awk '{ for (i = 1; i < NF; i++) if ($i == "beats") print $(i + 1) }' "$TMP/heartbeat")
[ -n "$GAP" ] || die "heartbeat reported nothing"

# ---- phase B: bandwidth and tick
start taskset -c "$CPU" sh -c 'while :; do :; done'
SPIN=$last
start taskset -c "$CPU" chrt -f "$PRIO" sh -c 'while :; do :; done'
HOG=$last
sleep 1
C0=$(cpu_time_ns "$SPIN")
L0=$(timer_irqs)
T0=$(now_ns)
sleep "$DUR"
C1=$(cpu_time_ns "$SPIN")
L1=$(timer_irqs)
T1=$(now_ns)
kill -9 "$HOG" "$SPIN"
wait "$HOG" "$SPIN" 2>/dev/null
HOG=""
SPIN=""

BW=$(awk -v c=$((C1 - C0)) -v w=$((T1 - T0)) 'BEGIN { printf "%.2f", 100 * c / w }')
# Lower is better for both under- and over-delivery of the reservation.
BW_DEV=$(awk -v b="$BW" -v r="$RESERVED" 'BEGIN { d = b - r; if (d < 0) d = -d; printf "%.2f", 100 * d / r }')
TICK=$(awk -v n=$((L1 - L0)) -v w=$((T1 - T0)) 'BEGIN { printf "%.1f", n * 1e9 / w }')
WARN1=$(kernel_warnings)
NEW_WARN=$((WARN1 - WARN0))
[ "$NEW_WARN" -ge 0 ] || NEW_WARN=0 # the ring buffer wrapped

echo "heartbeat_beats: $BEATS"
echo "heartbeat_max_gap_ms: $GAP"
echo "cfs_bandwidth_pct: $BW"
echo "cfs_bandwidth_ratio: $(awk -v b="$BW" -v r="$RESERVED" 'BEGIN { printf "%.2f", b / r }')"
echo "cfs_bandwidth_deviation_pct: $BW_DEV"
echo "tick_rate_hz: $TICK"
echo "new_kernel_warnings: $NEW_WARN"
if [ -z "$TRACE_WHY" ]; then
	echo "phase_a_tick_expiries: $(grep -E -c 'hrtimer_expire_entry:.*function=(tick_nohz_handler|tick_sched_timer)( |$)' "$TMP/phase-a")"
	echo "phase_a_inactive_timer_expiries: $(grep -E -c 'hrtimer_expire_entry:.*function=inactive_task_timer( |$)' "$TMP/phase-a")"
	echo "phase_a_tick_stop_success: $(grep -c 'tick_stop:.*success=1' "$TMP/phase-a")"
	echo "phase_a_tick_stop_sched_dependency: $(grep -c 'tick_stop:.*dependency=SCHED' "$TMP/phase-a")"
else
	echo "phase_a_trace: unavailable ($TRACE_WHY)"
fi
if [ "$NEW_WARN" -gt 0 ]; then
	dmesg | grep 'WARNING:' | tail -n "$NEW_WARN" | sed 's/^/new kernel warning: /'
fi

# ---- verdict
check cfs_bandwidth "$(awk -v b="$BW" -v r="$RESERVED" 'BEGIN { print (b >= 0.4 * r && b <= 2.5 * r) }')" \
	"$BW% against $RESERVED% reserved; 0.4x..2.5x passes"
check heartbeat "$(awk -v g="$GAP" -v m="$MAX_GAP_MS" 'BEGIN { print (g < m) }')" \
	"longest gap ${GAP} ms; below $MAX_GAP_MS ms (1.5 server periods) passes"
check kernel_warnings "$([ "$NEW_WARN" = 0 ] && echo 1 || echo 0)" "$NEW_WARN new"
if [ -n "$MAX_TICK" ]; then
	check tick_rate "$(awk -v t="$TICK" -v m="$MAX_TICK" 'BEGIN { print (t < m) }')" \
		"$TICK/s; below $MAX_TICK/s passes"
fi
if [ "$FAIL" = 0 ]; then
	echo "RESULT: PASS"
else
	echo "RESULT: FAIL"
fi
exit "$FAIL"
