#!/usr/bin/env bash
# host-deps.sh: install what the lab and aba's tests need on the host, when missing:
# QEMU (x86, software emulation), the OpenSSH server (for the sshd tests on 127.0.0.1) and
# client tools, cpio and e2fsprogs (to build the lab image). Needs root when something is
# missing; does nothing otherwise.
set -euo pipefail
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
)
missing=()
for tool in "${!pkg[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || [[ -x /usr/sbin/$tool ]] || missing+=("${pkg[$tool]}")
done
# files rather than tools (the distro target's UEFI firmware)
declare -A file_pkg=(
    [/usr/share/OVMF/OVMF_CODE_4M.fd]=ovmf
    [/usr/share/OVMF/OVMF_VARS_4M.fd]=ovmf
)
for f in "${!file_pkg[@]}"; do [[ -e $f ]] || missing+=("${file_pkg[$f]}"); done
((${#missing[@]})) || exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
if [[ $(id -u) != 0 ]]; then
    echo "host-deps.sh: missing ${missing[*]}; install them: sudo apt-get install ${missing[*]}" >&2
    exit 1
fi
echo "host-deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
