# shellcheck shell=bash disable=SC2034
# Shared settings for the QEMU lab scripts. Sourced, not executed.
# Every value can be overridden from the environment (LAB_*=... ./script).

LAB_DIR=${LAB_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
LAB_OUT=${LAB_OUT:-$LAB_DIR/out}

# --- build (build-target.sh) -------------------------------------------------
# Kernel ABI strings; the package is linux-image-<kver>-unsigned. The first one is
# the default kernel of start-vm.sh.
LAB_KVERS=${LAB_KVERS:-"6.1.0-47-cloud-amd64 6.1.0-50-cloud-amd64"}
# Set to 1 to fail instead of substituting the nearest available ABI when a kernel
# has left the archive and is not in the deb cache.
LAB_KVERS_STRICT=${LAB_KVERS_STRICT:-0}
# Userland packages: pkg:path-in-package:path-in-rootfs
LAB_TOOLS=${LAB_TOOLS:-"openssh-server:/usr/sbin/sshd:/usr/sbin/sshd
openssh-sftp-server:/usr/lib/openssh/sftp-server:/usr/lib/openssh/sftp-server
kexec-tools:/sbin/kexec:/usr/sbin/kexec
dash:/bin/dash:/usr/bin/dash
coreutils:/usr/bin/timeout:/usr/bin/timeout
coreutils:/usr/bin/nohup:/usr/bin/nohup
coreutils:/usr/bin/nice:/usr/bin/nice
util-linux:/usr/bin/chrt:/usr/bin/chrt"}
LAB_BUSYBOX_PKG=${LAB_BUSYBOX_PKG:-busybox-static}
# /bin/sh (root's login shell, so also what ssh commands run in): dash, as on Debian,
# or busybox (ash). busybox ash runs its own applets before PATH, so with it `timeout`
# would be busybox's (exit 143 on expiry) instead of GNU coreutils' (exit 124).
LAB_SH=${LAB_SH:-dash}
# Top-level modules loaded at boot (dependencies are resolved from .modinfo).
LAB_MODULES=${LAB_MODULES:-"virtio_pci virtio_net virtio_blk virtio_rng"}
LAB_INITRD_COMP=${LAB_INITRD_COMP:-gzip}   # gzip | zstd | xz | none
LAB_CONSOLE_SHELL=${LAB_CONSOLE_SHELL:-1}  # root shell on ttyS0
LAB_GUEST_ADDR=${LAB_GUEST_ADDR:-10.0.2.15/24}
LAB_GUEST_HOSTNAME=${LAB_GUEST_HOSTNAME:-lab}
LAB_SSHD_MAXSTARTUPS=${LAB_SSHD_MAXSTARTUPS:-50:30:100}
LAB_REFRESH_DEBS=${LAB_REFRESH_DEBS:-0}    # 1: download again even if cached

# --- keys ----------------------------------------------------------------------
LAB_KEY=${LAB_KEY:-$LAB_DIR/id_ed25519}
LAB_HOSTKEY=${LAB_HOSTKEY:-$LAB_DIR/ssh_host_ed25519_key}
LAB_KNOWN_HOSTS=${LAB_KNOWN_HOSTS:-$LAB_DIR/known_hosts}

# --- VM (start-vm.sh) ------------------------------------------------------------
# host tools: qemu-system-x86_64
LAB_QEMU=${LAB_QEMU:-qemu-system-x86_64}
LAB_ACCEL=${LAB_ACCEL:-tcg,tb-size=64}     # never kvm on this host
LAB_SMP=${LAB_SMP:-1}
LAB_MEM=${LAB_MEM:-512}
LAB_CPU=${LAB_CPU:-}                        # empty: QEMU default (qemu64)
LAB_CMDLINE_BASE=${LAB_CMDLINE_BASE:-"console=ttyS0,115200 panic=-1 quiet"}
LAB_QEMU_EXTRA=${LAB_QEMU_EXTRA:-}          # extra QEMU args (word-split)
LAB_STOP_GRACE=${LAB_STOP_GRACE:-5}         # seconds between TERM and KILL

# --- ssh (lab-ssh.sh, wait-ssh.sh) -------------------------------------------------
LAB_HOST=${LAB_HOST:-127.0.0.1}
LAB_USER=${LAB_USER:-root}
LAB_SSH_TIMEOUT=${LAB_SSH_TIMEOUT:-5}       # ConnectTimeout of lab-ssh.sh
LAB_WAIT_CONNECT_TIMEOUT=${LAB_WAIT_CONNECT_TIMEOUT:-2}
LAB_WAIT_INTERVAL=${LAB_WAIT_INTERVAL:-0.3}
LAB_WAIT_TIMEOUT=${LAB_WAIT_TIMEOUT:-60}
LAB_SSH_EXTRA=${LAB_SSH_EXTRA:-}            # extra ssh args, placed first (they win)

# --- derived -----------------------------------------------------------------------
LAB_DEBS=$LAB_OUT/debs
LAB_PKG=$LAB_OUT/pkg
LAB_RUN=$LAB_OUT/run
LAB_INITRD=$LAB_OUT/initrd.img
LAB_BOOTFS=$LAB_OUT/bootfs
LAB_BOOTIMG=$LAB_OUT/boot.img

die() { echo "${0##*/}: $*" >&2; exit 1; }
log() { echo "${0##*/}: $*" >&2; }
now() { date +%s.%N; }

# Kernel releases actually built (a kernel may have been substituted); falls back
# to LAB_KVERS before the first build.
lab_kvers() {
    if [[ -s $LAB_OUT/kvers ]]; then
        paste -sd' ' "$LAB_OUT/kvers"
    else
        echo "$LAB_KVERS"
    fi
}
lab_default_kver() { local k; read -r k _ <<<"$(lab_kvers)"; echo "$k"; }

# A process that exists and is not a zombie (a killed, daemonized QEMU is reparented
# to PID 1, which may take a while to reap it; the zombie holds no sockets).
lab_pid_alive() {
    local st
    kill -0 "$1" 2>/dev/null || return 1
    st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
    [[ ${st:0:1} != Z ]]
}

lab_valid_name() { [[ $1 =~ ^[A-Za-z0-9_.-]+$ ]] || die "bad VM name: $1"; }
lab_valid_port() { if ! [[ $1 =~ ^[0-9]+$ ]] || (($1 < 1 || $1 > 65535)); then die "bad port: $1"; fi; }

# ssh argument vector used by lab-ssh.sh and wait-ssh.sh: lab_ssh_args PORT CONNECT_TIMEOUT
lab_ssh_args() {
    local port=$1 ct=$2
    # shellcheck disable=SC2206
    LAB_SSH_ARGV=(ssh $LAB_SSH_EXTRA -F /dev/null -i "$LAB_KEY" -o IdentitiesOnly=yes
        -o BatchMode=yes -o UserKnownHostsFile="$LAB_KNOWN_HOSTS"
        -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes
        -o ConnectTimeout="$ct" -p "$port" "$LAB_USER@$LAB_HOST")
}
