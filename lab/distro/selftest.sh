#!/usr/bin/env bash
# selftest.sh [NAME] [PORT]   (defaults: distro-selftest 10122)
# End-to-end proof of the distro lab target (lab/distro/build.sh) on a fresh disk, with a
# timings table and PASS/FAIL per item. One VM, one switch after another:
#   1  cold boot (fresh disk and EFI variables) -> default entry, audits: baseline, a failing
#      unit, kernel warning lines
#   2  kexec -l A + systemctl kexec (explicit cmdline + aba.test=1), clean unit shutdown, a
#      unit that fails at boot
#   3  plain reboot -> default
#   4  GRUB one-shot: custom.cfg entry with extra parameters, grub-reboot, reboot
#   5  plain reboot -> default; remove custom.cfg: GRUB as before
#   6  grub-reboot of a generated entry by id ('SUBMENU>ENTRY')
#   7  power-cycle.sh (host side) -> default
#   8  BLS one-shot: entry on the ESP (kernel copied there), bootctl set-oneshot, reboot
#   9  plain reboot -> default; remove the entry: systemd-boot as before
#  10  systemctl reboot --boot-loader-entry= (kernel-install's files)
#  11  leftovers: set-oneshot, then a power cut and a new QEMU process (EFI variables kept)
#  12  leftovers: grub-reboot, then at once a hard reset (system_reset, no sync)
#  13  clean up; graceful stop (ACPI power button)
# Columns (seconds from the trigger, host wall clock): trig = the trigger command's own
# time; down = old kernel gone ("reboot: Restarting system" on the console); fw = firmware
# done ("BdsDxe: starting"); kern = new kernel's time zero (host time - guest uptime); ird =
# initramfs /init; sysd = systemd (UserspaceTimestampMonotonic); sshd = "LAB: sshd ready";
# login = first ssh login on the new boot_id. Reboot and kexec triggers sleep 1 s first
# (detached, as aba does); that second is in every column.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../common.sh
. "$(dirname "$0")/../common.sh"
export LAB_FLAVOR=distro

name=${1:-distro-selftest} port=${2:-10122}
lab_valid_name "$name"
lab_valid_port "$port"
L=$LAB_DIR
O=$LAB_DISTRO_OUT
"$L/distro/build.sh" --check >/dev/null || die "the distro image is not up to date: run lab/distro/build.sh"
# shellcheck source=/dev/null
. "$O/info.env"
read -r KA KB _ <<<"$KVERS"
[[ -n ${KB:-} ]] || die "need two kernels (built: $KVERS)"
[[ $DEFAULT_KVER == "$KB" ]] || die "expected the newest kernel $KB to be the default"
BASE="root=UUID=$ROOT_UUID ro $LAB_DISTRO_CMDLINE"   # the entries' command line
GRUB_DEFAULT_CL="BOOT_IMAGE=/boot/vmlinuz-$KB $BASE"
SUBMENU="gnulinux-advanced-$ROOT_UUID"
rd=$LAB_RUN/$name
ts=$rd/console.ts
T_START=$(now)
fail=0
ROWS=() CHECKS=() NOTES=()
TIMEOUT=${LAB_DISTRO_SELFTEST_TIMEOUT:-600}   # per boot; a loaded 2-core host needs it

sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'; }
g() { "$L/lab-ssh.sh" "$port" "$@"; }
check() { # ITEM CONDITION-RESULT(0/1) DETAIL
    local r=PASS
    [[ $2 == 0 ]] || { r=FAIL; fail=1; }
    CHECKS+=("$(printf '%-4s %-62s %s' "$r" "$1" "$3")")
    log "$r $1 ${3:+($3)}"
}
note() { NOTES+=("$*"); log "note: $*"; }

TAP_PID=""
tap_start() {
    tap_stop
    "$L/distro/console-tap.sh" "$name" "$ts" 2>/dev/null &
    TAP_PID=$!
}
tap_stop() {
    [[ -n $TAP_PID ]] || return 0
    kill "$TAP_PID" 2>/dev/null || true
    wait "$TAP_PID" 2>/dev/null || true
    TAP_PID=""
}
REPORTED=0
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    ((REPORTED)) || { fail=1; echo "selftest.sh: stopped early (line ${BASH_LINENO[0]:-?})" >&2; report; }
    tap_stop
    "$L/stop-vm.sh" "$name" --hard >/dev/null 2>&1 || true
}
trap cleanup EXIT

# host time of the first console line after T0 matching ERE
ts_at() { awk -v t0="$1" -v re="$2" '$1 > t0 && $0 ~ re { print $1; exit }' "$ts" 2>/dev/null; }
# guest uptime printed by the first console marker after T0 ("LAB: <what> <uptime>")
ts_up() { awk -v t0="$1" -v re="$2" '$1 > t0 && $0 ~ re { print $NF; exit }' "$ts" 2>/dev/null; }

# Everything one boot's proof needs, in one login. The uptime comes last, for kernel zero.
# shellcheck disable=SC2016 # expanded in the guest
FACTS='v() { f=/sys/firmware/efi/efivars/$1-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f; if [ -e $f ]; then cat $f | tail -c +5 | tr -d "\000"; else echo -; fi; }
echo "rel=$(uname -r)"
echo "id=$(cat /proc/sys/kernel/random/boot_id)"
echo "cl=$(cat /proc/cmdline)"
echo "us=$(systemctl show -p UserspaceTimestampMonotonic --value)"
echo "sel=$(v LoaderEntrySelected)"
echo "oneshot=$(v LoaderEntryOneShot)"
echo "grubenv=$(grub-editenv /boot/grub/grubenv list | tr "\n" " ")"
echo "failed=$(systemctl list-units --failed --plain --no-legend | awk "{print \$1}" | tr "\n" " ")"
echo "recov=$(dmesg | grep -c "recovery complete")"
echo "up=$(cut -d" " -f1 /proc/uptime)"'
declare -A F
BOOT_ID=""
# boot WHAT T0 TRIG EXPECT_RELEASE EXPECT_CMDLINE(exact, or +TOKEN for "contains")
boot() {
    local what=$1 t0=$2 trig=$3 kv=$4 want=$5 old=$BOOT_ID out t_ret k0 login ok=OK down fw ird sshd sysd l key val
    if ! out=$("$L/wait-ssh.sh" -q --not-boot-id "${old:-none}" "$port" "$TIMEOUT"); then
        ROWS+=("$(printf '%-44s %5s %5s %5s %5s %5s %5s %5s %6s  %s' "$what" "$trig" - - - - - - - "FAIL: no login within $TIMEOUT s")")
        check "$what: login" 1 "no login within $TIMEOUT s"
        exit 1
    fi
    login=$(sub "$(now)" "$t0")
    out=$(g "$FACTS")
    t_ret=$(now)
    F=()
    while IFS= read -r l; do key=${l%%=*} val=${l#*=}; F[$key]=$val; done <<<"$out"
    k0=$(awk -v a="$t_ret" -v u="${F[up]}" 'BEGIN { printf "%.3f", a - u }')
    rel() { [[ -n $1 ]] && awk -v a="$1" -v b="$t0" 'BEGIN { printf "%.1f", a - b }' || echo -; }
    relu() { [[ -n $1 ]] && awk -v k="$k0" -v u="$1" -v b="$t0" 'BEGIN { printf "%.1f", k + u - b }' || echo -; }
    down=$(rel "$(ts_at "$t0" 'reboot: (Restarting system|Power down)|kexec_core: Starting new kernel')")
    fw=$(rel "$(ts_at "$t0" 'BdsDxe: starting')")
    ird=$(relu "$(ts_up "$t0" 'LAB: initramfs start')")
    sshd=$(relu "$(ts_up "$t0" 'LAB: sshd ready')")
    sysd=$(relu "$(awk -v u="${F[us]}" 'BEGIN { printf "%.3f", u / 1e6 }')")
    [[ ${F[rel]} == "$kv" ]] || ok="FAIL: kernel ${F[rel]} != $kv"
    [[ ${F[id]} != "$old" ]] || ok="FAIL: boot_id unchanged"
    if [[ $want == +* ]]; then
        [[ " ${F[cl]} " == *" ${want#+} "* ]] || ok="FAIL: cmdline lacks ${want#+}"
    else
        [[ ${F[cl]} == "$want" ]] || ok="FAIL: cmdline '${F[cl]}' != '$want'"
    fi
    ROWS+=("$(printf '%-44s %5s %5s %5s %5s %5s %5s %5s %6s  %s' "$what" "$trig" "$down" "$fw" "$(rel "$k0")" "$ird" "$sysd" "$sshd" "$login" "${ok%%:*} ${F[rel]} via ${F[sel]}")")
    check "$what: ${F[rel]}, cmdline ${want#+}" "$([[ $ok == OK ]] && echo 0 || echo 1)" "${ok#OK}login ${login}s"
    BOOT_ID=${F[id]}
}

trigger() { # detached, like aba: returns at once, the guest acts a second later
    g "nohup sh -c 'sleep 1; $1' >/dev/null 2>&1 &"
}
reboot_step() { # WHAT EXPECT_RELEASE EXPECT_CMDLINE [TRIGGER]
    local t0 tt
    t0=$(now)
    trigger "${4:-reboot}"
    tt=$(sub "$(now)" "$t0")
    boot "$1" "$t0" "$tt" "$2" "$3"
}
# loader state that must be the same before and after a one-shot (byte for byte)
loader_state() {
    # shellcheck disable=SC2016 # expanded in the guest
    g 'cd /boot/grub && sha256sum grub.cfg grubenv && ls -A /boot/grub | tr "\n" " " && echo
       cd /boot/efi && find loader EFI -type f ! -name random-seed | sort | xargs sha256sum
       ls -A /boot/efi | tr "\n" " "; echo
       ls /sys/firmware/efi/efivars | grep -E "^Loader(EntryOneShot|EntryDefault|ConfigTimeoutOneShot)" || true'
}

report() {
    REPORTED=1
    echo
    echo "== distro selftest $name port $port: A=$KA B=$KB (default) =="
    printf '%-44s %5s %5s %5s %5s %5s %5s %5s %6s  %s\n' step trig down fw kern ird sysd sshd login result
    printf '%s\n' "${ROWS[@]}"
    echo "kexec -l over ssh (incl. login): ${KEXEC_LOAD:--}s; graceful stop (system_powerdown -> QEMU gone): ${SHUTDOWN:--}s"
    echo
    printf '%s\n' "${CHECKS[@]}"
    echo
    ((${#NOTES[@]})) && printf 'note: %s\n' "${NOTES[@]}"
    echo "wall time: $(sub "$(now)" "$T_START") s; host load now: $(cut -d' ' -f1-3 /proc/loadavg)"
    if ((fail)); then echo "RESULT: FAIL"; else echo "RESULT: PASS"; fi
}

# ------------------------------------------------------------------ 1. cold boot ----------
"$L/stop-vm.sh" "$name" --hard >/dev/null
mkdir -p "$rd"
t0=$(now)
LAB_FRESH=1 "$L/start-vm.sh" "$name" "$port" 2>/dev/null
tt=$(sub "$(now)" "$t0")
tap_start
boot "1 cold boot (fresh disk) -> default" "$t0" "$tt" "$KB" "$GRUB_DEFAULT_CL"
check "1 cold boot went firmware -> systemd-boot -> GRUB" "$([[ ${F[sel]} == debian-grub.conf ]] && echo 0 || echo 1)" "LoaderEntrySelected=${F[sel]}"
check "1 no failed units on a clean boot" "$([[ -z ${F[failed]// /} ]] && echo 0 || echo 1)" "${F[failed]:-none}"
STATE0=$(loader_state)
GRUBENV0=${F[grubenv]}
P='WARNING:|BUG:|Oops|Call Trace:|cut here|general protection fault|Kernel panic'
BASELINE=$(g "dmesg --level=warn,err | sed 's/^\[ *[0-9.]*\] //' | tr '\n' '|'; echo; dmesg | grep -cE '$P' || true")
note "clean boot: dmesg --level=warn,err = ${BASELINE%%$'\n'*}; aba's pattern matches $(tail -n 1 <<<"$BASELINE") line(s)"
# audits: a failing unit, kernel warning lines
out=$(g "systemd-run --unit=aba-fail --quiet false; sleep 2; systemctl list-units --failed --plain --no-legend | awk '{print \$1}' | tr '\n' ' '")
check "1 failing unit: systemd-run --unit=aba-fail false" "$([[ $out == *aba-fail.service* ]] && echo 0 || echo 1)" "failed: $out"
out=$(g "systemctl reset-failed aba-fail.service; systemctl list-units --failed --plain --no-legend | wc -l")
check "1 systemctl reset-failed clears it" "$([[ $out == 0 ]] && echo 0 || echo 1)" "$out failed"
# shellcheck disable=SC2016 # expanded in the guest
out=$(g 'P="'"$P"'"; c0=$(dmesg | grep -cE "$P"); echo l >/proc/sysrq-trigger; sleep 1; c1=$(dmesg | grep -cE "$P")
    perl -e "\$p=\"/bin/true\"; syscall(59, \$p, 0, 0)"; w=$(dmesg --level=warn | grep -c "NULL argv"); c2=$(dmesg | grep -cE "$P")
    echo "<4>WARNING: aba-test injected warning" >/dev/kmsg; c3=$(dmesg | grep -cE "$P"); echo "$c0 $c1 $c2 $c3 $w"')
read -r c0 c1 c2 c3 w <<<"$out"
check "1 kernel trace: echo l >/proc/sysrq-trigger (real 'Call Trace:')" "$((c1 > c0 ? 0 : 1))" "pattern count $c0 -> $c1"
check "1 warn-level line: execve with NULL argv (aba's pattern misses it)" "$(((w >= 1 && c2 == c1) ? 0 : 1))" "warn lines $w, pattern count $c1 -> $c2"
check "1 synthetic: echo '<4>WARNING: …' >/dev/kmsg" "$((c3 > c2 ? 0 : 1))" "pattern count $c2 -> $c3"

# ------------------------------------------------------------------ 2. kexec -------------
# a unit whose ExecStop marks the console proves the units were stopped; a unit that fails
# at boot shows up in the next boot's failed list
g "systemd-run --unit=aba-stopmark --quiet --remain-after-exit -p 'ExecStop=/bin/sh -c \"echo LAB: units stopped >/dev/console\"' true
   printf '[Unit]\nDescription=aba lab: a unit that fails\n[Service]\nType=oneshot\nExecStart=/bin/false\n[Install]\nWantedBy=multi-user.target\n' >/etc/systemd/system/aba-fail-boot.service
   systemctl enable --quiet aba-fail-boot.service"
tl=$(now)
g "kexec -l /boot/vmlinuz-$KA --initrd=/boot/initrd.img-$KA --command-line='$BASE aba.test=1'"
KEXEC_LOAD=$(sub "$(now)" "$tl")
t0=$(now)
trigger "systemctl kexec"
tt=$(sub "$(now)" "$t0")
boot "2 kexec -> A (+aba.test=1)" "$t0" "$tt" "$KA" "$BASE aba.test=1"
check "2 kexec: units stopped first (ExecStop marker on the console)" "$([[ -n $(ts_at "$t0" 'LAB: units stopped') ]] && echo 0 || echo 1)" ""
check "2 kexec: root file system unmounted cleanly (no ext4 recovery)" "$([[ ${F[recov]} == 0 ]] && echo 0 || echo 1)" "recovery lines: ${F[recov]}"
check "2 kexec: /proc/cmdline is exactly the explicit one" "$([[ ${F[cl]} == "$BASE aba.test=1" ]] && echo 0 || echo 1)" "${F[cl]}"
check "2 a unit that fails at boot is listed as failed" "$([[ ${F[failed]} == *aba-fail-boot.service* ]] && echo 0 || echo 1)" "failed: ${F[failed]}"
g "systemctl disable --quiet aba-fail-boot.service; rm -f /etc/systemd/system/aba-fail-boot.service; systemctl daemon-reload; systemctl reset-failed"

# ------------------------------------------------------------------ 3. reboot ------------
reboot_step "3 reboot -> default" "$KB" "$GRUB_DEFAULT_CL"
check "3 no failed units after removing it" "$([[ -z ${F[failed]// /} ]] && echo 0 || echo 1)" "${F[failed]:-none}"

# ------------------------------------------------------------ 4./5. GRUB one-shot ---------
CUSTOM="menuentry 'aba one-shot: Linux $KA' --id aba-oneshot {
	insmod part_gpt
	insmod ext2
	search --no-floppy --fs-uuid --set=root $ROOT_UUID
	linux /boot/vmlinuz-$KA $BASE aba.grub=1
	initrd /boot/initrd.img-$KA
}"
g "cat >/boot/grub/custom.cfg" <<<"$CUSTOM"
out=$(g "grub-reboot aba-oneshot && grub-editenv /boot/grub/grubenv list | tr '\n' ' '")
check "4 grub-reboot aba-oneshot writes next_entry to grubenv" "$([[ $out == *next_entry=aba-oneshot* ]] && echo 0 || echo 1)" "grubenv: $out"
note "grubenv: pristine '$GRUBENV0'; after grub-reboot '$out'"
reboot_step "4 grub-reboot custom.cfg id -> A (+aba.grub=1)" "$KA" "BOOT_IMAGE=/boot/vmlinuz-$KA $BASE aba.grub=1"
check "4 GRUB cleared next_entry on boot (save_env on ext4)" "$([[ ${F[grubenv]} != *next_entry=aba* ]] && echo 0 || echo 1)" "grubenv: ${F[grubenv]}"
note "grubenv after the one-shot boot: '${F[grubenv]}'"
reboot_step "5 reboot -> default (custom.cfg still there)" "$KB" "$GRUB_DEFAULT_CL"
g "rm -f /boot/grub/custom.cfg"
STATE=$(loader_state)
if [[ $STATE == "$STATE0" ]]; then
    check "5 custom.cfg removed: loader state byte for byte as at the start" 0 ""
else
    d=$(diff <(echo "$STATE0") <(echo "$STATE") | grep '^[<>]' | tr '\n' ' ' || true)
    only_env=0
    [[ $(diff <(grep -v grubenv <<<"$STATE0") <(grep -v grubenv <<<"$STATE") | grep -c '^[<>]' || true) == 0 ]] || only_env=1
    check "5 custom.cfg removed: grub.cfg, ESP, EFI variables as at the start" "$only_env" "differs: $d"
    out=$(g "grub-editenv /boot/grub/grubenv list | tr '\n' ' '")
    note "grubenv is not byte-identical after a one-shot: GRUB's save_env leaves an empty 'next_entry=' ($out)"
fi

# ------------------------------------------------------------ 6. generated entry ----------
g "grub-reboot '$SUBMENU>gnulinux-$KA-advanced-$ROOT_UUID'"
reboot_step "6 grub-reboot 'SUBMENU>ENTRY' -> A" "$KA" "BOOT_IMAGE=/boot/vmlinuz-$KA $BASE"

# ------------------------------------------------------------------ 7. power -------------
t0=$(now)
"$L/power-cycle.sh" "$name" "$port" 2>/dev/null
tt=$(sub "$(now)" "$t0")
tap_start
boot "7 power-cycle.sh -> default" "$t0" "$tt" "$KB" "$GRUB_DEFAULT_CL"
note "after the power cut: ext4 recovery lines ${F[recov]}"

# ------------------------------------------------------------- 8./9. BLS one-shot ---------
BLS="title aba one-shot: Linux $KA
linux /aba/$KA/linux
initrd /aba/$KA/initrd.img
options $BASE aba.bls=1"
g "mkdir -p /boot/efi/aba/$KA && cp /boot/vmlinuz-$KA /boot/efi/aba/$KA/linux && cp /boot/initrd.img-$KA /boot/efi/aba/$KA/initrd.img && cat >/boot/efi/loader/entries/aba-bls.conf" <<<"$BLS"
out=$(g "bootctl set-oneshot aba-bls.conf; ls /sys/firmware/efi/efivars | grep -c LoaderEntryOneShot || true")
check "8 bootctl set-oneshot aba-bls.conf sets LoaderEntryOneShot" "$([[ ${out##*$'\n'} == 1 ]] && echo 0 || echo 1)" ""
reboot_step "8 bootctl set-oneshot -> A (+aba.bls=1)" "$KA" "+aba.bls=1"
note "a BLS boot's /proc/cmdline: '${F[cl]}'"
check "8 booted by systemd-boot from the one-shot entry" "$([[ ${F[sel]} == aba-bls.conf ]] && echo 0 || echo 1)" "LoaderEntrySelected=${F[sel]}"
check "8 systemd-boot consumed LoaderEntryOneShot" "$([[ ${F[oneshot]} == - ]] && echo 0 || echo 1)" "LoaderEntryOneShot=${F[oneshot]}"
reboot_step "9 reboot -> default (entry still there)" "$KB" "$GRUB_DEFAULT_CL"
g "rm -f /boot/efi/loader/entries/aba-bls.conf; rm -rf /boot/efi/aba"
STATE=$(loader_state)
d=$(diff <(grep -v grubenv <<<"$STATE0") <(grep -v grubenv <<<"$STATE") | grep '^[<>]' | tr '\n' ' ' || true)
check "9 entry removed: ESP, EFI variables, grub.cfg as at the start" "$([[ -z $d ]] && echo 0 || echo 1)" "${d:+differs: $d}"

# ----------------------------------------------- 10. systemctl reboot --boot-loader-entry -----
MID=$(g "cat /etc/machine-id")
BLS2="title aba one-shot 2: Linux $KA
linux /$MID/$KA/linux
initrd /$MID/$KA/initrd.img-$KA
options $BASE aba.bls=2"
g "cat >/boot/efi/loader/entries/aba-bls.conf" <<<"$BLS2"
out=$(g "systemctl reboot --boot-loader-entry=help 2>&1 | tr '\n' ' '")
if [[ " $out " == *" aba-bls.conf "* ]]; then
    reboot_step "10 systemctl reboot --boot-loader-entry= -> A" "$KA" "+aba.bls=2" "systemctl reboot --boot-loader-entry=aba-bls.conf"
    check "10 systemctl reboot --boot-loader-entry=aba-bls.conf works" "$([[ ${F[sel]} == aba-bls.conf ]] && echo 0 || echo 1)" "LoaderEntrySelected=${F[sel]}"
else
    check "10 systemctl reboot --boot-loader-entry=help lists aba-bls.conf" 1 "$out"
fi

# ------------------------------------------------------------------ 11./12. leftovers ----
g "bootctl set-oneshot aba-bls.conf"
t0=$(now)
"$L/power-cycle.sh" "$name" "$port" 2>/dev/null
tt=$(sub "$(now)" "$t0")
tap_start
boot "11 set-oneshot + power cut + new QEMU -> A" "$t0" "$tt" "$KA" "+aba.bls=2"
check "11 LoaderEntryOneShot survives a QEMU restart (vars file kept)" "$([[ ${F[sel]} == aba-bls.conf ]] && echo 0 || echo 1)" "LoaderEntrySelected=${F[sel]}, now LoaderEntryOneShot=${F[oneshot]}"
g "rm -f /boot/efi/loader/entries/aba-bls.conf"

g "cat >/boot/grub/custom.cfg" <<<"$CUSTOM"
g "sync; grub-reboot aba-oneshot"
t0=$(now)
"$L/monitor.sh" "$name" system_reset
tt=$(sub "$(now)" "$t0")
# Whatever it boots is the finding: the one-shot if grubenv reached the disk in time.
"$L/wait-ssh.sh" -q --not-boot-id "$BOOT_ID" "$port" "$TIMEOUT" >/dev/null || true
out=$(g "uname -r; grub-editenv /boot/grub/grubenv list | tr '\n' ' '")
if [[ ${out%%$'\n'*} == "$KA" ]]; then
    boot "12 grub-reboot + system_reset at once -> A" "$t0" "$tt" "$KA" "+aba.grub=1"
    note "grub-reboot then an immediate hard reset: the one-shot WAS taken (grubenv on disk); grubenv now '${F[grubenv]}'"
else
    boot "12 grub-reboot + system_reset at once -> lost" "$t0" "$tt" "$KB" "$GRUB_DEFAULT_CL"
    note "grub-reboot then an immediate hard reset: the one-shot was LOST (grubenv not on disk yet); grubenv now '${F[grubenv]}'; custom.cfg stays"
fi

# ------------------------------------------------------------------ 13. clean up -------
g "rm -f /boot/grub/custom.cfg; grub-editenv /boot/grub/grubenv unset next_entry"
STATE=$(loader_state)
d=$(diff <(grep -v grubenv <<<"$STATE0") <(grep -v grubenv <<<"$STATE") | grep '^[<>]' | tr '\n' ' ' || true)
check "13 after clean-up: ESP, EFI variables, grub.cfg as at the start" "$([[ -z $d ]] && echo 0 || echo 1)" "${d:+differs: $d}"
t0=$(now)
"$L/stop-vm.sh" "$name" 2>/dev/null
SHUTDOWN=$(sub "$(now)" "$t0")
tap_stop
trap - EXIT
check "13 stop-vm.sh: ACPI power-off" "$(grep -q 'reboot: Power down' "$ts" && echo 0 || echo 1)" "${SHUTDOWN}s"

report
exit "$fail"
