#!/usr/bin/env bash
# start-vm.sh NAME PORT [KVER] [EXTRA_CMDLINE...]
# Starts lab VM NAME in the background (QEMU -daemonize), booting KVER (default: the
# first built kernel) with -kernel/-initrd, forwarding 127.0.0.1:PORT to guest port 22.
# Run files: out/run/NAME/{qemu.pid,console.log,serial.sock,monitor.sock,vm.env}
#
# LAB_FLAVOR=distro start-vm.sh NAME PORT
# Starts the distro VM (lab/distro/build.sh) under UEFI: its boot loader picks the kernel.
# Its disk is a qcow2 overlay on out/distro/disk.img and its EFI variables a copy of
# OVMF_VARS_4M.fd, both in out/run/NAME/ and kept across stops and starts like a real
# machine's disk and NVRAM; LAB_FRESH=1 (or a rebuilt image) starts from pristine ones.
#
# LAB_SERIAL_TCP=P (busybox VM): the serial console is served on 127.0.0.1:P instead of
# serial.sock, like a lab's console server (ser2net) behind a labgrid NetworkSerialPort;
# console.log keeps everything either way.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

(($# >= 2)) || die "usage: start-vm.sh NAME PORT [KVER] [EXTRA_CMDLINE...]"
name=$1 port=$2
shift 2
lab_valid_name "$name"
lab_valid_port "$port"
flavor=${LAB_FLAVOR:-busybox}
case $flavor in busybox | distro) ;; *) die "LAB_FLAVOR must be busybox or distro" ;; esac

rd=$LAB_RUN/$name
pidfile=$rd/qemu.pid
check_not_running() {
    mkdir -p "$rd"
    if [[ -s $pidfile ]] && lab_pid_alive "$(cat "$pidfile")"; then
        die "VM $name is already running (pid $(cat "$pidfile")); stop-vm.sh $name first"
    fi
    # A QEMU just killed by a power cycle can hold its forwarded port for a moment after
    # stop-vm saw it gone: its main thread is a zombie while another thread, which shares
    # the file table, is still exiting. Give it a few seconds before calling the port busy.
    local i
    for ((i = 0; i < 50; i++)); do
        [[ -z $(ss -Htln "sport = :$port") ]] && break
        sleep 0.1
    done
    if [[ -n $(ss -Htln "sport = :$port") ]]; then
        die "port $port is already in use: $(ss -Htlnp "sport = :$port" | head -n 1)"
    fi
    rm -f "$pidfile" "$rd/serial.sock" "$rd/monitor.sock"
}

if [[ $flavor == distro ]]; then
    (($# == 0)) || die "the distro VM boots what its boot loader chooses: start-vm.sh NAME PORT (no KVER or cmdline)"
    [[ -s $LAB_DISTRO_DISK && -s $LAB_DISTRO_OUT/build.stamp ]] || die "no $LAB_DISTRO_DISK; run lab/distro/build.sh"
    [[ -r $LAB_OVMF_CODE && -r $LAB_OVMF_VARS ]] || die "no $LAB_OVMF_CODE / $LAB_OVMF_VARS (run lab/host-deps.sh)"
    check_not_running
    disk=$rd/disk.qcow2 vars=$rd/OVMF_VARS.fd
    stamp=$(cat "$LAB_DISTRO_OUT/build.stamp")
    fresh=$LAB_FRESH
    if [[ $fresh != 1 && -s $disk && -s $vars && "$(cat "$rd/disk.stamp" 2>/dev/null)" != "$stamp" ]]; then
        log "$LAB_DISTRO_DISK was rebuilt since $name's disk was made: starting from a fresh disk and EFI variables"
        fresh=1
    fi
    if [[ $fresh == 1 || ! -s $disk || ! -s $vars ]]; then
        rm -f "$disk" "$vars" "$rd/disk.stamp"
        qemu-img create -q -f qcow2 -F raw -b "$LAB_DISTRO_DISK" "$disk"
        cp "$LAB_OVMF_VARS" "$vars"
        echo "$stamp" >"$rd/disk.stamp"
        state=fresh
    else
        state=kept
    fi
    printf '\n=== start-vm %s port=%s flavor=distro disk=%s at %s (host %s)\n' \
        "$name" "$port" "$state" "$(date -u +%FT%T.%3NZ)" "$(now)" >>"$rd/console.log"
    {
        echo "NAME=$name"; echo "PORT=$port"; echo "FLAVOR=distro"; echo "DISK=$disk"; echo "VARS=$vars"
        echo "STARTED=$(now)"
    } >"$rd/vm.env"
    cpu=()
    [[ -n $LAB_DISTRO_CPU ]] && cpu=(-cpu "$LAB_DISTRO_CPU")
    # shellcheck disable=SC2206
    qextra=($LAB_QEMU_EXTRA)
    "$LAB_QEMU" -name "lab-$name" -machine q35 -accel "$LAB_DISTRO_ACCEL" \
        -smp "$LAB_DISTRO_SMP" -m "$LAB_DISTRO_MEM" "${cpu[@]}" \
        -nodefaults -no-user-config -display none -vga none \
        -daemonize -pidfile "$pidfile" \
        -drive "if=pflash,format=raw,unit=0,readonly=on,file=$LAB_OVMF_CODE" \
        -drive "if=pflash,format=raw,unit=1,file=$vars" \
        -chardev "socket,id=ser0,path=$rd/serial.sock,server=on,wait=off,logfile=$rd/console.log,logappend=on" \
        -serial chardev:ser0 \
        -monitor "unix:$rd/monitor.sock,server=on,wait=off" \
        -drive "file=$disk,format=qcow2,if=none,id=disk,discard=unmap" \
        -device virtio-blk-pci,drive=disk,bootindex=0 \
        -netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$port-:22" \
        -device virtio-net-pci,netdev=n0,romfile= \
        -device virtio-rng-pci \
        "${qextra[@]}"
    log "started $name (pid $(cat "$pidfile")) flavor=distro port=$port disk=$state"
    exit 0
fi

kver=""
if (($#)); then kver=$1; shift; fi
[[ -n $kver ]] || kver=$(lab_default_kver)
extra="$*"

kernel=$LAB_BOOTFS/vmlinuz-$kver
[[ -f $kernel ]] || die "no kernel $kernel (built: $(lab_kvers); run build-target.sh)"
[[ -f $LAB_INITRD && -f $LAB_BOOTIMG ]] || die "no $LAB_INITRD / $LAB_BOOTIMG; run build-target.sh"

check_not_running

cmdline=$LAB_CMDLINE_BASE${extra:+ $extra}
serial="path=$rd/serial.sock"
if [[ -n ${LAB_SERIAL_TCP:-} ]]; then
    lab_valid_port "$LAB_SERIAL_TCP"
    serial="host=127.0.0.1,port=$LAB_SERIAL_TCP"
fi
cpu=()
[[ -n $LAB_CPU ]] && cpu=(-cpu "$LAB_CPU")
# shellcheck disable=SC2206
qextra=($LAB_QEMU_EXTRA)

printf '\n=== start-vm %s port=%s kver=%s at %s (host %s) cmdline: %s\n' \
    "$name" "$port" "$kver" "$(date -u +%FT%T.%3NZ)" "$(now)" "$cmdline" >>"$rd/console.log"
{
    echo "NAME=$name"; echo "PORT=$port"; echo "FLAVOR=busybox"; echo "KVER=$kver"; echo "CMDLINE='$cmdline'"
    echo "STARTED=$(now)"
} >"$rd/vm.env"

"$LAB_QEMU" -name "lab-$name" -accel "$LAB_ACCEL" -smp "$LAB_SMP" -m "$LAB_MEM" "${cpu[@]}" \
    -nodefaults -no-user-config -display none \
    -daemonize -pidfile "$pidfile" \
    -chardev "socket,id=ser0,$serial,server=on,wait=off,logfile=$rd/console.log,logappend=on" \
    -serial chardev:ser0 \
    -monitor "unix:$rd/monitor.sock,server=on,wait=off" \
    -kernel "$kernel" -initrd "$LAB_INITRD" -append "$cmdline" \
    -drive "file=$LAB_BOOTIMG,format=raw,if=none,id=boot,readonly=on" \
    -device virtio-blk-pci,drive=boot \
    -netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$port-:22" \
    -device virtio-net-pci,netdev=n0,romfile= \
    -device virtio-rng-pci \
    "${qextra[@]}"

log "started $name (pid $(cat "$pidfile")) kver=$kver port=$port cmdline=\"$cmdline\""
