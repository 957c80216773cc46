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

# --- distro target (lab/distro/build.sh; start-vm.sh etc. with LAB_FLAVOR=distro) ------
# LAB_FLAVOR selects the VM the run scripts start: busybox (the initramfs lab above) or
# distro (a Debian 12 box with systemd, GRUB and systemd-boot under UEFI, lab/distro/).
# stop-vm.sh, power-cycle.sh and monitor.sh also read it from the VM's run directory.
LAB_FLAVOR=${LAB_FLAVOR:-}
LAB_DISTRO_OUT=${LAB_DISTRO_OUT:-$LAB_OUT/distro}
LAB_DISTRO_SUITE=${LAB_DISTRO_SUITE:-bookworm}
# apt sources for mmdebstrap, one per line (Debian's mirrors only)
LAB_DISTRO_MIRRORS=${LAB_DISTRO_MIRRORS:-"deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main"}
# packages besides minbase and the kernels (linux-image-<kver> for each of LAB_KVERS)
LAB_DISTRO_PKGS=${LAB_DISTRO_PKGS:-"systemd systemd-sysv udev dbus libpam-systemd openssh-server
kexec-tools initramfs-tools zstd systemd-boot grub-efi-amd64-bin grub2-common e2fsprogs
dosfstools iproute2 procps kmod efibootmgr"}
LAB_DISTRO_DISK_MB=${LAB_DISTRO_DISK_MB:-3072}   # whole GPT disk (sparse)
LAB_DISTRO_ESP_MB=${LAB_DISTRO_ESP_MB:-256}
# Fixed identities: the same image every build (systemd-boot's entry names derive from the
# machine id; fstab, grub.cfg and the BLS entries name the root by UUID).
LAB_DISTRO_MACHINE_ID=${LAB_DISTRO_MACHINE_ID:-ab0ab0ab0ab0ab0ab0ab0ab0ab0ab0ab}
LAB_DISTRO_ROOT_UUID=${LAB_DISTRO_ROOT_UUID:-ab0a0001-0000-4000-8000-0000000000a1}
LAB_DISTRO_ROOT_PARTUUID=${LAB_DISTRO_ROOT_PARTUUID:-ab0a0002-0000-4000-8000-0000000000a2}
LAB_DISTRO_ESP_PARTUUID=${LAB_DISTRO_ESP_PARTUUID:-ab0a0003-0000-4000-8000-0000000000a3}
LAB_DISTRO_DISK_GUID=${LAB_DISTRO_DISK_GUID:-ab0a0004-0000-4000-8000-0000000000a4}
LAB_DISTRO_ESP_SERIAL=${LAB_DISTRO_ESP_SERIAL:-AB0AE5F1}     # vfat volume id: UUID AB0A-E5F1
LAB_DISTRO_HOSTNAME=${LAB_DISTRO_HOSTNAME:-distro}
# Kernel command line of every boot entry (GRUB, BLS), after root=UUID=… ro
LAB_DISTRO_CMDLINE=${LAB_DISTRO_CMDLINE:-"console=ttyS0,115200 panic=-1 quiet"}
# The loader the firmware starts (\EFI\BOOT\BOOTX64.EFI): sd-boot (whose default entry
# chain-loads GRUB, so one VM serves grub-reboot and bootctl set-oneshot alike) or grub.
LAB_DISTRO_FIRST_LOADER=${LAB_DISTRO_FIRST_LOADER:-sd-boot}
LAB_DISTRO_BOOT_TRIM=${LAB_DISTRO_BOOT_TRIM:-1}   # 0: Debian's units as they come
LAB_DISTRO_MEM=${LAB_DISTRO_MEM:-1024}
LAB_DISTRO_SMP=${LAB_DISTRO_SMP:-1}
# qemu64 without SVM: with it the guest loads kvm_amd (1.1 MiB of modules) at every boot
LAB_DISTRO_CPU=${LAB_DISTRO_CPU:-qemu64,-svm}
# never kvm on this host; a bounded translation cache keeps QEMU's RSS at ~0.6 GiB (default
# 1 GiB cache: 1.6 GiB after a few reboots) and seemed to help reboots after a kexec
LAB_DISTRO_ACCEL=${LAB_DISTRO_ACCEL:-tcg,tb-size=256}
LAB_OVMF_CODE=${LAB_OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.fd}
LAB_OVMF_VARS=${LAB_OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}
LAB_FRESH=${LAB_FRESH:-0}   # start-vm.sh (distro): 1 = new disk overlay and EFI variables
LAB_DISTRO_DISK=$LAB_DISTRO_OUT/disk.img

LAB_DISTRO_WAIT_CONNECT_TIMEOUT=${LAB_DISTRO_WAIT_CONNECT_TIMEOUT:-10}   # wait-ssh.sh's ConnectTimeout
LAB_DISTRO_SSH_TIMEOUT=${LAB_DISTRO_SSH_TIMEOUT:-15}                     # lab-ssh.sh's ConnectTimeout

# The flavor of the VM started on PORT: LAB_FLAVOR if set, else what the run directory
# of the VM last started on that port records (empty if none).
lab_port_flavor() {
    local f
    [[ -n $LAB_FLAVOR ]] && { echo "$LAB_FLAVOR"; return; }
    for f in "$LAB_RUN"/*/vm.env; do
        [[ -e $f ]] || continue
        grep -qx "PORT=$1" "$f" && { sed -n 's/^FLAVOR=//p' "$f"; return; }
    done
    return 0
}
# The flavor of VM NAME: LAB_FLAVOR if set, else the one its run directory records.
lab_flavor() {
    local f=$LAB_FLAVOR
    [[ -n $f ]] || f=$(sed -n 's/^FLAVOR=//p' "$LAB_RUN/$1/vm.env" 2>/dev/null)
    case ${f:-busybox} in
        busybox | distro) echo "${f:-busybox}" ;;
        *) die "LAB_FLAVOR must be busybox or distro, not $f" ;;
    esac
}

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

# --- what the two image builds share (build-target.sh, distro/build.sh) --------------
# lab_build_mode HELP_LINES [ARG]: sets mode to build, check or force from the script's one
# argument; --help prints the script's header comment (lines 2..HELP_LINES).
lab_build_mode() {
    mode=build
    case ${2:-} in
        "") ;;
        --check) mode=check ;;
        --force) mode=force ;;
        -h | --help) sed -n "2,${1}p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $2 (try --help)" ;;
    esac
}
LAB_T0=$(date +%s.%N)
# step MESSAGE: a progress line with the seconds since the script started
step() { awk -v n="${0##*/}" -v a="$(now)" -v b="$LAB_T0" -v m="$*" 'BEGIN { printf "%s: [%5.1fs] %s\n", n, a - b, m }' >&2; }
# lab_cached_deb DIR PKG: the newest cached deb of PKG in DIR, if any
lab_cached_deb() {
    local f
    f=$(compgen -G "$1/${2}_*.deb" | sort -V | tail -n 1) || true
    [[ -n $f ]] && echo "$f"
    return 0
}
lab_apt_candidate() { apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p'; }
# lab_resolve_kvers DEBDIR SUFFIX: sets KVERS from LAB_KVERS. A kernel whose package
# (linux-image-<kver>SUFFIX) is cached in DEBDIR (unless LAB_REFRESH_DEBS=1) or in the
# archive is kept; one that left the archive is replaced by the nearest ABI of the same base
# and flavour (LAB_KVERS_STRICT=1: fail instead). In check mode nothing is looked up.
lab_resolve_kvers() {
    local debs=$1 suffix=$2 k pkg cand base flav abi best bestd n d dist
    KVERS=()
    for k in $LAB_KVERS; do
        pkg=linux-image-$k$suffix
        if [[ $LAB_REFRESH_DEBS != 1 && -n $(lab_cached_deb "$debs" "$pkg") ]]; then KVERS+=("$k"); continue; fi
        [[ $mode == check ]] && { KVERS+=("$k"); continue; }
        cand=$(lab_apt_candidate "$pkg")
        if [[ -n $cand && $cand != "(none)" ]]; then KVERS+=("$k"); continue; fi
        [[ $LAB_KVERS_STRICT == 1 ]] && die "kernel $pkg is not in the archive (nor in $debs)"
        [[ $k =~ ^([0-9.]+)-([0-9]+)-(.+)$ ]] || die "cannot parse kernel release $k"
        base=${BASH_REMATCH[1]} abi=${BASH_REMATCH[2]} flav=${BASH_REMATCH[3]}
        best="" bestd=999999
        while read -r n; do
            [[ $n =~ ^linux-image-${base//./\\.}-([0-9]+)-${flav}${suffix}$ ]] || continue
            d=${BASH_REMATCH[1]}
            [[ " ${KVERS[*]} $LAB_KVERS " == *" $base-$d-$flav "* ]] && continue
            cand=$(lab_apt_candidate "$n")
            [[ -n $cand && $cand != "(none)" ]] || continue
            dist=$((d > abi ? d - abi : abi - d))
            if ((dist < bestd || (dist == bestd && d > ${best:-0}))); then best=$d bestd=$dist; fi
        done < <(apt-cache pkgnames "linux-image-$base-" | sort -u)
        [[ -n $best ]] || die "kernel $pkg left the archive and no other $base-*-$flav kernel is available"
        log "WARNING: $pkg is no longer in the archive; using nearest $base-$best-$flav instead" \
            "(override with LAB_KVERS, or LAB_KVERS_STRICT=1 to fail)"
        KVERS+=("$base-$best-$flav")
    done
    ((${#KVERS[@]})) || die "LAB_KVERS is empty"
}

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
