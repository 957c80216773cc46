#!/usr/bin/env bash
# start-vm.sh NAME PORT [KVER] [EXTRA_CMDLINE...]
# Starts lab VM NAME in the background (QEMU -daemonize), booting KVER (default: the
# first built kernel) with -kernel/-initrd, forwarding 127.0.0.1:PORT to guest port 22.
# Run files: out/run/NAME/{qemu.pid,console.log,serial.sock,monitor.sock,vm.env}
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

(($# >= 2)) || die "usage: start-vm.sh NAME PORT [KVER] [EXTRA_CMDLINE...]"
name=$1 port=$2
shift 2
lab_valid_name "$name"
lab_valid_port "$port"
kver=""
if (($#)); then kver=$1; shift; fi
[[ -n $kver ]] || kver=$(lab_default_kver)
extra="$*"

kernel=$LAB_BOOTFS/vmlinuz-$kver
[[ -f $kernel ]] || die "no kernel $kernel (built: $(lab_kvers); run build-target.sh)"
[[ -f $LAB_INITRD && -f $LAB_BOOTIMG ]] || die "no $LAB_INITRD / $LAB_BOOTIMG; run build-target.sh"

rd=$LAB_RUN/$name
pidfile=$rd/qemu.pid
mkdir -p "$rd"
if [[ -s $pidfile ]] && lab_pid_alive "$(cat "$pidfile")"; then
    die "VM $name is already running (pid $(cat "$pidfile")); stop-vm.sh $name first"
fi
if [[ -n $(ss -Htln "sport = :$port") ]]; then
    die "port $port is already in use: $(ss -Htlnp "sport = :$port" | head -n 1)"
fi
rm -f "$pidfile" "$rd/serial.sock" "$rd/monitor.sock"

cmdline=$LAB_CMDLINE_BASE${extra:+ $extra}
cpu=()
[[ -n $LAB_CPU ]] && cpu=(-cpu "$LAB_CPU")
# shellcheck disable=SC2206
qextra=($LAB_QEMU_EXTRA)

printf '\n=== start-vm %s port=%s kver=%s at %s (host %s) cmdline: %s\n' \
    "$name" "$port" "$kver" "$(date -u +%FT%T.%3NZ)" "$(now)" "$cmdline" >>"$rd/console.log"
{
    echo "NAME=$name"; echo "PORT=$port"; echo "KVER=$kver"; echo "CMDLINE='$cmdline'"
    echo "STARTED=$(now)"
} >"$rd/vm.env"

"$LAB_QEMU" -name "lab-$name" -accel "$LAB_ACCEL" -smp "$LAB_SMP" -m "$LAB_MEM" "${cpu[@]}" \
    -nodefaults -no-user-config -display none \
    -daemonize -pidfile "$pidfile" \
    -chardev "socket,id=ser0,path=$rd/serial.sock,server=on,wait=off,logfile=$rd/console.log,logappend=on" \
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
