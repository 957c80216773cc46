#!/usr/bin/env bash
# selftest.sh [NAME] [PORT]
# End-to-end proof of the lab, with host wall-clock timings:
#   cold boot (A) -> kexec A->B (+cmdline token) -> kexec B->A -> kexec into a panicking
#   cmdline (falls back to the -kernel default) -> power cycle into B -> guest reboot
#   (stays on B) -> reset button -> guest facts. Every switch is verified by uname -r,
#   a new boot_id and /proc/cmdline. The VM is stopped at the end.
# Columns: trigger = how long the triggering command took to return;
#   kernel = new kernel's time zero (host time at check - guest uptime), from trigger start;
#   sshd = "LAB: sshd ready" (guest uptime) mapped to host time, from trigger start;
#   login = first successful ssh login on the new boot, from trigger start.
# For the detached kexec, the guest waits 1 s (sleep 1) before kexec -e; that second is
# included in the kexec rows.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

name=${1:-selftest} port=${2:-10022}
read -r KA KB _ <<<"$(lab_kvers)"
[[ -n ${KB:-} ]] || die "need two kernels (built: $(lab_kvers))"
L=$LAB_DIR
BASE=$LAB_CMDLINE_BASE
fail=0
ROWS=()

sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }
ssh_() { "$L/lab-ssh.sh" "$port" "$@"; }
conlog=$LAB_RUN/$name/console.log
conpos() { stat -c %s "$conlog" 2>/dev/null || echo 0; }
# last "LAB: sshd ready <uptime>" written to the console after byte offset $1
sshd_ready_since() { tail -c +"$(($1 + 1))" "$conlog" 2>/dev/null | tr -d '\r' | sed -n 's/.*LAB: sshd ready \([0-9.]*\).*/\1/p' | tail -n 1; }

BOOT_ID=""
# check NAME T0 TRIGGER_SECONDS CONSOLE_POS EXPECT_KVER TOKEN OLD_BOOT_ID
check() {
    local what=$1 t0=$2 trig=$3 pos=$4 kv=$5 tok=$6 old=$7 login info got_k got_id got_cl up t_ret kz sr srel ok=OK
    if ! "$L/wait-ssh.sh" -q --not-boot-id "${old:-none}" "$port" 90 >/dev/null; then
        ROWS+=("$(printf '%-44s %7s %7s %7s %7s  %s' "$what" "$trig" - - - "FAIL: no login within 90s")")
        fail=1
        return 1
    fi
    login=$(sub "$(now)" "$t0")
    info=$(ssh_ 'uname -r; cat /proc/sys/kernel/random/boot_id; cat /proc/cmdline; cut -d" " -f1 /proc/uptime')
    t_ret=$(now)
    { read -r got_k; read -r got_id; read -r got_cl; read -r up; } <<<"$info"
    kz=$(sub "$(sub "$t_ret" "$up")" "$t0")
    sr=$(sshd_ready_since "$pos")
    srel=-
    [[ -n $sr ]] && srel=$(awk -v k="$kz" -v s="$sr" 'BEGIN { printf "%.2f", k + s }')
    [[ $got_k == "$kv" ]] || ok="FAIL: kernel $got_k != $kv"
    [[ $got_id != "$old" ]] || ok="FAIL: boot_id unchanged"
    if [[ -n $tok ]]; then
        [[ " $got_cl " == *" $tok "* ]] || ok="FAIL: cmdline lacks $tok"
    else
        [[ $got_cl == "$BASE" ]] || ok="FAIL: cmdline '$got_cl' != default"
    fi
    [[ $ok == OK ]] || fail=1
    ROWS+=("$(printf '%-44s %7s %7s %7s %7s  %s' "$what" "$trig" "$kz" "$srel" "$login" "$ok ($got_k; cmdline: $got_cl)")")
    BOOT_ID=$got_id
    log "$what: $ok, login after ${login}s"
}

kexec_to() { # WHAT KVER TOKEN-or-empty EXTRA-cmdline
    local what=$1 kv=$2 tok=$3 cl="$BASE${4:+ $4}" tl t0 tt pos old=$BOOT_ID
    tl=$(now)
    ssh_ "kexec -l /boot/vmlinuz-$kv --initrd=/boot/initrd.img-$kv --command-line='$cl'"
    LOADS+=("$(sub "$(now)" "$tl")")
    pos=$(conpos)
    t0=$(now)
    ssh_ "nohup sh -c 'sleep 1; kexec -e' >/dev/null 2>&1 &"
    tt=$(sub "$(now)" "$t0")
    check "$what" "$t0" "$tt" "$pos" "$5" "$tok" "$old"
}

trap '"$L/stop-vm.sh" "$name" >/dev/null 2>&1 || true' EXIT
"$L/build-target.sh" --check >/dev/null || die "build is not up to date: run build-target.sh"
"$L/stop-vm.sh" "$name" --hard >/dev/null
LOADS=()

# 1. cold boot on A
pos=$(conpos); t0=$(now)
"$L/start-vm.sh" "$name" "$port" "$KA" 2>/dev/null
tt=$(sub "$(now)" "$t0")
check "cold boot (start-vm, $KA)" "$t0" "$tt" "$pos" "$KA" "" ""

# 2./3. kexec A -> B -> A with cmdline tokens
kexec_to "kexec -e A->B (+aba.test=1)" "$KB" aba.test=1 aba.test=1 "$KB"
kexec_to "kexec -e B->A (+aba.test=2)" "$KA" aba.test=2 aba.test=2 "$KA"

# 4. kexec into a panicking cmdline: panic=-1 reboots into the -kernel default (A)
kexec_to "kexec B rdinit=/nonexistent -> panic -> A" "$KB" "" rdinit=/nonexistent "$KA"
grep -q 'Kernel panic' "$conlog" && log "console shows the kernel panic"

# 5. power cycle into B
old=$BOOT_ID pos=$(conpos); t0=$(now)
"$L/power-cycle.sh" "$name" "$port" "$KB" aba.pc=1 2>/dev/null
tt=$(sub "$(now)" "$t0")
check "power-cycle.sh into B (+aba.pc=1)" "$t0" "$tt" "$pos" "$KB" aba.pc=1 "$old"

# 6. reboot in the guest: the "netboot default" is now B with its cmdline
old=$BOOT_ID pos=$(conpos); t0=$(now)
ssh_ reboot
tt=$(sub "$(now)" "$t0")
check "guest reboot (stays on B)" "$t0" "$tt" "$pos" "$KB" aba.pc=1 "$old"

# 7. reset button
old=$BOOT_ID pos=$(conpos); t0=$(now)
"$L/monitor.sh" "$name" system_reset
tt=$(sub "$(now)" "$t0")
check "monitor system_reset (stays on B)" "$t0" "$tt" "$pos" "$KB" aba.pc=1 "$old"

# guest facts
t0=$(now); ssh_ true; one=$(sub "$(now)" "$t0")
# shellcheck disable=SC2016 # expanded in the guest
FACTS=$(ssh_ '
echo "uname -r: $(uname -r)"
echo "/bin/sh -> $(readlink /bin/sh)"
for c in timeout setsid nohup cat sha256sum uname stat mkdir chmod kill sleep sysctl taskset dmesg nice chrt kexec labbench systemctl; do
  p=$(command -v $c) || p=MISSING; printf "%s=%s " $c "$p"; done; echo
timeout 1 sleep 3; echo "timeout expiry exit status: $?"
sysctl -w kernel.sched_rt_runtime_us=950000 >/dev/null && echo "sysctl -w kernel.sched_rt_runtime_us=950000: ok" || echo "sysctl -w: FAILED"
echo "sched_rt_period_us=$(cat /proc/sys/kernel/sched_rt_period_us) sched_rt_runtime_us=$(cat /proc/sys/kernel/sched_rt_runtime_us)"
[ -e /sys/devices/system/cpu/cpu0/cpufreq ] && echo "cpufreq: present" || echo "cpufreq: absent (no cpu0/cpufreq)"
[ -e /sys/kernel/random/boot_id ] && echo "/sys/kernel/random/boot_id: present" || echo "/sys/kernel/random/boot_id: absent; /proc/sys/kernel/random/boot_id=$(cat /proc/sys/kernel/random/boot_id)"
dmesg >/dev/null && echo "dmesg: ok ($(dmesg | wc -l) lines)"
echo "uptime: $(cat /proc/uptime)"
echo "labbench 100: $(labbench 100) ns"
')

echo
echo "== selftest $name port $port: A=$KA B=$KB (seconds, host wall clock) =="
printf '%-44s %7s %7s %7s %7s  %s\n' step trigger kernel sshd login result
printf '%s\n' "${ROWS[@]}"
echo "kexec -l over ssh (incl. login): ${LOADS[*]}"
echo "one ssh command (new connection): $one"
echo "QEMU RSS now: $(($(ps -o rss= -p "$(cat "$LAB_RUN/$name/qemu.pid")") / 1024)) MiB (LAB_ACCEL=$LAB_ACCEL, -m $LAB_MEM)"
echo "$FACTS"
"$L/stop-vm.sh" "$name"
trap - EXIT
exit "$fail"
