#!/usr/bin/env bash
# host-deps.sh: install every host program that aba's tests, benchmarks and lab scripts start,
# when missing: QEMU (x86, software emulation), the OpenSSH server (for the sshd tests on
# 127.0.0.1) and client tools, the shells the SSH wrapper is tested in, cpio and e2fsprogs (to
# build the lab image), a C compiler (the recipes' setup on the local target), make, flex, bison,
# bc and libelf-dev (the lab's own kernels, lab/kernel/build.sh). Needs root when
# something is missing; does nothing otherwise.
#
# The one place that says what the host needs: tests/integration/host_deps.rs reads the
# programs started by src/, tests/, bench/ and the lab scripts and fails when one is neither
# in this map, nor in a package every Debian system has (Essential or required), nor one of
# the machine's own tools below (the Rust toolchain and git, which no apt package provides
# here).
set -euo pipefail
machine=(cargo rustc git python3)
declare -A pkg=(
    [qemu-system-x86_64]=qemu-system-x86
    [sshd]=openssh-server
    [ssh]=openssh-client
    [ssh-keygen]=openssh-client
    [ssh-agent]=openssh-client
    [cpio]=cpio
    [mke2fs]=e2fsprogs
    # the distro target (lab/distro/build.sh, start-vm.sh with LAB_FLAVOR=distro)
    [mmdebstrap]=mmdebstrap
    [mcopy]=mtools
    [mkfs.fat]=dosfstools
    [sfdisk]=fdisk
    [qemu-img]=qemu-utils
    [unshare]=util-linux
    [ss]=iproute2
    [pgrep]=procps
    [pkill]=procps
    [ps]=procps
    [ssh-add]=openssh-client
    [objcopy]=binutils
    [xz]=xz-utils
    [zstd]=zstd
    [busybox]=busybox
    [dash]=dash
    [bash]=bash
    [cc]=gcc
    [gcc]=gcc
    # the lab's own kernels (lab/kernel/build.sh: Debian's linux-source-6.1, make bzImage)
    [make]=make
    [patch]=patch
    [flex]=flex
    [bison]=bison
    [bc]=bc
    [ld]=binutils
)
# Packages whose program or file is missing now.
scan() {
    missing=()
    for tool in "${!pkg[@]}"; do
        command -v "$tool" >/dev/null 2>&1 || [[ -x /usr/sbin/$tool ]] || missing+=("${pkg[$tool]}")
    done
    for f in "${!file_pkg[@]}"; do [[ -e $f ]] || missing+=("${file_pkg[$f]}"); done
    if ((${#missing[@]})); then
        mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
    fi
}
# files rather than tools (the distro target's UEFI firmware, libelf's headers)
declare -A file_pkg=(
    [/usr/share/OVMF/OVMF_CODE_4M.fd]=ovmf
    [/usr/share/OVMF/OVMF_VARS_4M.fd]=ovmf
    # the lab's own kernels: objtool (always built for x86-64 6.1) needs libelf
    [/usr/include/gelf.h]=libelf-dev
)
for tool in "${machine[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || echo "host-deps.sh: warning: $tool (part of this machine kind, not installable by apt here) is missing" >&2
done
scan
((${#missing[@]})) || exit 0
if [[ $(id -u) != 0 ]]; then
    echo "host-deps.sh: missing ${missing[*]}; install them: sudo apt-get install ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Installing one package can remove another that was there: a machine with a backported
# qemu-utils loses it when Debian's qemu-system-x86 comes in (their versions conflict), and
# the distro tests then find no qemu-img. So look again after each install, and install what
# went missing, from the same release as the rest; twice is enough to settle.
for round in 1 2 3; do
    echo "host-deps.sh: installing ${missing[*]}" >&2
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    scan
    ((${#missing[@]})) || exit 0
    echo "host-deps.sh: after round $round, missing again: ${missing[*]}" >&2
done
echo "host-deps.sh: ${missing[*]} still missing after installing; see apt's log (/var/log/apt/history.log)" >&2
exit 1
