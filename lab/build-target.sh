#!/usr/bin/env bash
# Build the QEMU lab target from Debian packages:
#   out/debs/      apt-get download cache (reused; delete a deb to refetch it)
#   out/pkg/P/     each deb unpacked (cached by deb file name)
#   out/rootfs/    the initramfs tree (busybox init, sshd, kexec, modules, labbench)
#   out/initrd.img the initramfs (one image for every kernel)
#   out/bootfs/    vmlinuz-<kver>, config-<kver>, initrd.img, initrd.img-<kver>
#   out/boot.img   ext4 image of out/bootfs (attached read-only, mounted at /boot)
#   out/kvers      kernel releases built, one per line (first = default)
#   out/manifest.txt
# plus, once, the keys id_ed25519{,.pub} and ssh_host_ed25519_key{,.pub} and known_hosts.
#
# usage: build-target.sh [--check | --force]
#   (none)   build unless the outputs are already up to date
#   --check  exit 0 if up to date, 1 if a build is needed; changes nothing
#   --force  rebuild even if up to date
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
export LC_ALL=C

lab_build_mode 19 "$@"

need() { command -v "$1" >/dev/null || die "missing host tool: $1 ($2)"; }
need apt-get apt; need dpkg-deb dpkg; need cpio "apt-get install cpio"
need mke2fs e2fsprogs; need ssh-keygen openssh-client; need objcopy binutils
need gcc "apt-get install gcc libc6-dev"
case $LAB_INITRD_COMP in
    gzip) COMP=(gzip -6 -n) ;;
    zstd) need zstd zstd; COMP=(zstd -q -10 -T0) ;;
    xz) need xz xz-utils; COMP=(xz -q --check=crc32 -6 -T0) ;;
    none) COMP=(cat) ;;
    *) die "LAB_INITRD_COMP must be gzip, zstd, xz or none" ;;
esac

# ---------------------------------------------------------------- keys ----------
keys_ok() { [[ -s $LAB_KEY && -s $LAB_KEY.pub && -s $LAB_HOSTKEY && -s $LAB_HOSTKEY.pub ]]; }
known_hosts_text() {
    local kt kb
    read -r kt kb _ <"$LAB_HOSTKEY.pub"
    printf '[127.0.0.1]:* %s %s\n[localhost]:* %s %s\n' "$kt" "$kb" "$kt" "$kb"
}
ensure_keys() {
    if [[ ! -s $LAB_HOSTKEY ]]; then
        rm -f "$LAB_HOSTKEY" "$LAB_HOSTKEY.pub"
        ssh-keygen -q -t ed25519 -N '' -C aba-lab-host -f "$LAB_HOSTKEY"
        log "generated host key $LAB_HOSTKEY"
    fi
    if [[ ! -s $LAB_KEY ]]; then
        rm -f "$LAB_KEY" "$LAB_KEY.pub"
        ssh-keygen -q -t ed25519 -N '' -C aba-lab-client -f "$LAB_KEY"
        log "generated client key $LAB_KEY"
    fi
    [[ -s $LAB_HOSTKEY.pub ]] || ssh-keygen -y -f "$LAB_HOSTKEY" >"$LAB_HOSTKEY.pub"
    [[ -s $LAB_KEY.pub ]] || ssh-keygen -y -f "$LAB_KEY" >"$LAB_KEY.pub"
    chmod 600 "$LAB_KEY" "$LAB_HOSTKEY"
    if [[ "$(cat "$LAB_KNOWN_HOSTS" 2>/dev/null)" != "$(known_hosts_text)" ]]; then
        known_hosts_text >"$LAB_KNOWN_HOSTS"
        log "wrote $LAB_KNOWN_HOSTS"
    fi
}

# ---------------------------------------------------------------- debs ----------
# newest cached deb of a package, or nothing
cached_deb() { lab_cached_deb "$LAB_DEBS" "$1"; }
apt_download() { # pkgs...
    (($#)) || return 0
    mkdir -p "$LAB_DEBS"
    step "apt-get download $*"
    (cd "$LAB_DEBS" && apt-get -q -o APT::Sandbox::User=root download "$@") </dev/null >&2 ||
        die "apt-get download failed for: $*"
}

TOOL_PKGS=()
while IFS=: read -r p _ _; do
    [[ -n $p ]] || continue
    [[ " ${TOOL_PKGS[*]} " == *" $p "* ]] || TOOL_PKGS+=("$p")
done <<<"$LAB_TOOLS"

# Resolve LAB_KVERS against the cache and the archive (common.sh). Sets KVERS.
resolve_kvers() { lab_resolve_kvers "$LAB_DEBS" -unsigned; }

base_pkgs() {
    local k
    echo "$LAB_BUSYBOX_PKG"
    printf '%s\n' "${TOOL_PKGS[@]}"
    for k in "${KVERS[@]}"; do echo "linux-image-$k-unsigned"; done
}

ensure_debs() { # pkgs...
    local p missing=()
    for p in "$@"; do
        if [[ $LAB_REFRESH_DEBS == 1 || -z $(cached_deb "$p") ]]; then missing+=("$p"); fi
    done
    apt_download "${missing[@]}"
    for p in "$@"; do [[ -n $(cached_deb "$p") ]] || die "no deb for $p after download"; done
}

# ------------------------------------------------------------ fingerprint ---------
BUILD_VARS=(LAB_TOOLS LAB_BUSYBOX_PKG LAB_SH LAB_MODULES LAB_INITRD_COMP LAB_CONSOLE_SHELL
    LAB_GUEST_ADDR LAB_GUEST_HOSTNAME LAB_SSHD_MAXSTARTUPS LAB_CMDLINE_BASE)
fingerprint() {
    local v f
    {
        sha256sum "$LAB_DIR/build-target.sh" "$LAB_DIR/common.sh" "$LAB_DIR/labbench.c"
        cat "$LAB_KEY.pub" "$LAB_HOSTKEY.pub" "$LAB_KNOWN_HOSTS" 2>/dev/null || true
        for v in "${BUILD_VARS[@]}"; do printf '%s=%s\n' "$v" "${!v}"; done
        echo "KVERS=${KVERS[*]}"
        for f in "$LAB_DEBS"/*.deb; do [[ -e $f ]] && stat -c '%n %s' "$f"; done
        gcc --version | head -n 1
    } | sha256sum | cut -d' ' -f1
}
outputs_exist() {
    local k
    [[ -s $LAB_INITRD && -s $LAB_BOOTIMG && -s $LAB_OUT/manifest.txt && -s $LAB_OUT/kvers ]] || return 1
    for k in "${KVERS[@]}"; do [[ -s $LAB_BOOTFS/vmlinuz-$k ]] || return 1; done
}
up_to_date() {
    keys_ok || return 1
    local p
    while read -r p; do [[ -n $(cached_deb "$p") ]] || return 1; done < <(base_pkgs)
    outputs_exist || return 1
    [[ "$(cat "$LAB_OUT/build.stamp" 2>/dev/null)" == "$(fingerprint)" ]]
}

resolve_kvers
if [[ $mode == check ]]; then
    if up_to_date; then echo "up to date"; exit 0; else echo "build needed"; exit 1; fi
fi
mkdir -p "$LAB_OUT" "$LAB_DEBS" "$LAB_PKG"
ensure_keys
if [[ $mode == build ]] && up_to_date; then
    log "up to date ($(lab_kvers)); use --force to rebuild"
    exit 0
fi

mapfile -t BASE_PKGS < <(base_pkgs)
ensure_debs "${BASE_PKGS[@]}"
step "debs ready"

# ---------------------------------------------------------------- unpack ----------
declare -A PKGDIR PKGVER
unpack() { # pkg
    local p=$1 deb dir
    deb=$(cached_deb "$p")
    dir=$LAB_PKG/$p
    if [[ "$(cat "$dir/.deb" 2>/dev/null)" != "${deb##*/}" ]]; then
        rm -rf "$dir"
        mkdir -p "$dir"
        dpkg-deb -x "$deb" "$dir"
        echo "${deb##*/}" >"$dir/.deb"
    fi
    PKGDIR[$p]=$dir
    PKGVER[$p]=$(dpkg-deb -f "$deb" Version)
}
for p in "${BASE_PKGS[@]}"; do unpack "$p"; done
step "unpacked"

# ------------------------------------------------------- library resolution ---------
# Libraries come from the host (same Debian release). A soname that ldd reports as
# missing is looked up in unpacked lib packages (downloaded only then), and only the
# folder holding that soname goes on LD_LIBRARY_PATH (see NOTES pitfall 3).
LIB_LDLP=""
LIB_PKGS_FETCHED=0
fetch_lib_pkgs() {
    ((LIB_PKGS_FETCHED)) && return 0
    LIB_PKGS_FETCHED=1
    local -A inst=()
    local p s libs=()
    while read -r p s; do [[ $s == installed ]] && inst[${p%%:*}]=1; done \
        < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n')
    while read -r p; do
        [[ $p == lib* && $p != *-perl && -z ${inst[$p]:-} ]] && libs+=("$p")
    done < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
        --no-breaks --no-replaces --no-enhances "${TOOL_PKGS[@]}" 2>/dev/null |
        grep -v '^[[:space:]<]' | sort -u)
    log "lib packages not installed on the host: ${libs[*]:-none}"
    ((${#libs[@]})) || return 0
    ensure_debs "${libs[@]}"
    for p in "${libs[@]}"; do unpack "$p"; done
}
resolve_missing() { # binary...
    local so f missing
    for _ in 1 2 3 4 5 6 7 8; do
        missing=$(LD_LIBRARY_PATH=$LIB_LDLP ldd "$@" 2>/dev/null | awk '$2 == "=>" && $3 == "not" {print $1}' | sort -u)
        [[ -z $missing ]] && return 0
        fetch_lib_pkgs
        for so in $missing; do
            f=$(find "$LAB_PKG"/lib*/ \( -type f -o -type l \) -name "$so" -print -quit 2>/dev/null || true)
            [[ -n $f ]] || die "library $so (needed by $*) not found on the host nor in any lib package"
            LIB_LDLP=${LIB_LDLP:+$LIB_LDLP:}$(dirname "$f")
            log "using $so from ${f#"$LAB_PKG"/}"
        done
    done
    die "could not resolve libraries of $*"
}

# --------------------------------------------------------------- rootfs -------------
R=$LAB_OUT/rootfs.new
rm -rf "$R"
mkdir -p "$R"/{usr/bin,usr/sbin,usr/lib/x86_64-linux-gnu,usr/lib64,usr/lib/modules,usr/local/bin} \
    "$R"/{dev,proc,sys,run,tmp,boot,etc/ssh,etc/init.d,root/.ssh,var/log,var/empty,home,mnt}
ln -s usr/bin "$R/bin"; ln -s usr/sbin "$R/sbin"; ln -s usr/lib "$R/lib"; ln -s usr/lib64 "$R/lib64"
ln -s ../run "$R/var/run"
chmod 700 "$R/root" "$R/root/.ssh"; chmod 1777 "$R/tmp"; chmod 755 "$R/var/empty"
mknod -m 600 "$R/dev/console" c 5 1
mknod -m 666 "$R/dev/null" c 1 3

declare -A SRC # rootfs path -> where it came from
rootpath() { # normalise an absolute path to the merged-/usr layout
    case $1 in
        /bin/* | /sbin/* | /lib/* | /lib64/*) echo "/usr$1" ;;
        *) echo "$1" ;;
    esac
}
HOSTFILES=()
install_file() { # src dest-abs-path source-description
    local dest
    dest=$(rootpath "$2")
    [[ -n ${SRC[$dest]:-} && ! -L $R$dest ]] && return 0
    mkdir -p "$(dirname "$R$dest")"
    cp -L --remove-destination "$1" "$R$dest"
    SRC[$dest]=$3
}
install_libs() { # binary (already resolved)
    local lib src rel pkg
    while read -r lib; do
        [[ -n $lib ]] || continue
        src=$(readlink -f "$lib")
        if [[ $lib == "$LAB_PKG"/* ]]; then
            rel=${lib#"$LAB_PKG"/}; pkg=${rel%%/*}; rel=/${rel#*/}
            install_file "$src" "$rel" "$pkg ${PKGVER[$pkg]:-?} (deb)"
        else
            install_file "$src" "$lib" "host:$lib"
            HOSTFILES+=("$lib")
        fi
    done < <(LD_LIBRARY_PATH=$LIB_LDLP ldd "$1" 2>/dev/null |
        awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u)
}

# busybox and its applets
BB=${PKGDIR[$LAB_BUSYBOX_PKG]}/bin/busybox
[[ -x $BB ]] || BB=${PKGDIR[$LAB_BUSYBOX_PKG]}/usr/bin/busybox
[[ -x $BB ]] || die "busybox binary not found in $LAB_BUSYBOX_PKG"
install_file "$BB" /usr/bin/busybox "$LAB_BUSYBOX_PKG ${PKGVER[$LAB_BUSYBOX_PKG]} (deb)"
while read -r a; do
    a=$(rootpath "/$a")
    [[ -e $R$a || -L $R$a ]] && continue
    mkdir -p "$(dirname "$R$a")"
    ln -s /usr/bin/busybox "$R$a"
done < <("$BB" --list-full)
ln -s /usr/bin/busybox "$R/init"

# tools with their libraries
while IFS=: read -r p from to; do
    [[ -n $p ]] || continue
    f=${PKGDIR[$p]}$from
    [[ -f $f ]] || die "$from not found in package $p"
    resolve_missing "$f"
    install_file "$f" "$to" "$p ${PKGVER[$p]} (deb)"
    install_libs "$f"
done <<<"$LAB_TOOLS"
case $LAB_SH in
    busybox) ;;
    dash) [[ -x $R/usr/bin/dash ]] || die "LAB_SH=dash needs dash in LAB_TOOLS"; ln -sfn dash "$R/usr/bin/sh" ;;
    *) die "LAB_SH must be dash or busybox" ;;
esac
[[ -f ${PKGDIR[openssh-server]:-/nonexistent}/etc/ssh/moduli ]] &&
    install_file "${PKGDIR[openssh-server]}/etc/ssh/moduli" /etc/ssh/moduli "openssh-server ${PKGVER[openssh-server]} (deb)"
step "rootfs: busybox + tools + $(find "$R/usr/lib" "$R/usr/lib64" -name '*.so*' | wc -l) libraries"

# labbench (static)
LB=$LAB_OUT/labbench
if [[ ! -x $LB || $LAB_DIR/labbench.c -nt $LB ]]; then
    gcc -O2 -static -Wall -o "$LB.tmp" "$LAB_DIR/labbench.c"
    mv "$LB.tmp" "$LB"
fi
install_file "$LB" /usr/local/bin/labbench "lab/labbench.c (gcc -O2 -static)"

# kernel modules: resolve dependencies from .modinfo (no modules.dep in the debs)
modinfo_field() { # ko field
    local tmp=$LAB_OUT/.modinfo.tmp
    objcopy -O binary --only-section=.modinfo "$1" "$tmp"
    tr '\0' '\n' <"$tmp" | sed -n "s/^$2=//p"
    rm -f "$tmp"
}
for k in "${KVERS[@]}"; do
    kp=linux-image-$k-unsigned
    kdir=${PKGDIR[$kp]}/lib/modules/$k
    [[ -d $kdir ]] || die "no lib/modules/$k in $kp"
    declare -A MODPATH=() SEEN=()
    ORDER=()
    while read -r f; do b=${f##*/}; b=${b%.ko}; MODPATH[${b//-/_}]=$f; done < <(find "$kdir/kernel" -name '*.ko')
    addmod() {
        local m=${1//-/_} f d vm
        [[ -n ${SEEN[$m]:-} ]] && return 0
        SEEN[$m]=1
        f=${MODPATH[$m]:-}
        if [[ -z $f ]]; then
            grep -qE "/${m//_/[-_]}\.ko\$" "$kdir/modules.builtin" 2>/dev/null && return 0
            die "module $m not found for $k"
        fi
        vm=$(modinfo_field "$f" vermagic)
        [[ ${vm%% *} == "$k" ]] || die "vermagic of $f is '$vm', not $k"
        for d in $(modinfo_field "$f" depends | tr ',' ' '); do addmod "$d"; done
        ORDER+=("$f")
    }
    for m in $LAB_MODULES; do addmod "$m"; done
    mkdir -p "$R/usr/lib/modules/$k"
    : >"$R/usr/lib/modules/$k/lab-modules"
    for f in "${ORDER[@]}"; do
        install_file "$f" "/usr/lib/modules/$k/${f##*/}" "$kp ${PKGVER[$kp]} (deb)"
        echo "${f##*/}" >>"$R/usr/lib/modules/$k/lab-modules"
    done
    SRC[/usr/lib/modules/$k/lab-modules]=generated
    step "modules for $k: $(tr '\n' ' ' <"$R/usr/lib/modules/$k/lab-modules")"
done

# ------------------------------------------------------------ config files ------------
gen() { # path mode  (content on stdin)
    mkdir -p "$(dirname "$R$1")"
    cat >"$R$1"
    chmod "$2" "$R$1"
    SRC[$1]=generated
}
gen /etc/passwd 644 <<'EOF'
root:x:0:0:root:/root:/bin/sh
sshd:x:100:65534:sshd privsep:/run/sshd:/bin/false
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
gen /etc/group 644 <<'EOF'
root:x:0:
tty:x:5:
nogroup:x:65534:
EOF
gen /etc/shadow 600 <<'EOF'
root:*:19000:0:99999:7:::
sshd:*:19000:0:99999:7:::
nobody:*:19000:0:99999:7:::
EOF
gen /etc/nsswitch.conf 644 <<'EOF'
passwd: files
group: files
shadow: files
hosts: files
EOF
gen /etc/hosts 644 <<EOF
127.0.0.1 localhost
${LAB_GUEST_ADDR%/*} $LAB_GUEST_HOSTNAME
EOF
echo "$LAB_GUEST_HOSTNAME" | gen /etc/hostname 644
ln -s /proc/mounts "$R/etc/mtab"
gen /etc/os-release 644 <<'EOF'
PRETTY_NAME="aba QEMU lab (busybox initramfs, Debian 12 packages)"
NAME="aba-lab"
ID=aba-lab
ID_LIKE=debian
VERSION_ID="12"
EOF
gen /etc/profile 644 <<'EOF'
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PS1='\u@\h:\w\$ '
EOF
gen /etc/ssh/sshd_config 644 <<EOF
# aba QEMU lab sshd (generated by build-target.sh)
Port 22
ListenAddress 0.0.0.0
HostKey /etc/ssh/ssh_host_ed25519_key
PidFile /run/sshd.pid
PermitRootLogin prohibit-password
PubkeyAuthentication yes
AuthorizedKeysFile .ssh/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
StrictModes yes
MaxStartups $LAB_SSHD_MAXSTARTUPS
MaxSessions 64
PrintMotd no
PrintLastLog no
X11Forwarding no
AcceptEnv LANG LC_*
SetEnv PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
Subsystem sftp /usr/lib/openssh/sftp-server
LogLevel INFO
EOF
gen /etc/ssh/ssh_host_ed25519_key 600 <"$LAB_HOSTKEY"
gen /etc/ssh/ssh_host_ed25519_key.pub 644 <"$LAB_HOSTKEY.pub"
gen /root/.ssh/authorized_keys 600 <"$LAB_KEY.pub"

{
    echo "# aba QEMU lab inittab (busybox init)"
    echo "::sysinit:/etc/init.d/rcS"
    echo "::respawn:/etc/init.d/sshd-run"
    [[ $LAB_CONSOLE_SHELL == 1 ]] && echo "ttyS0::respawn:-/bin/ash"
    echo "::ctrlaltdel:/sbin/reboot"
    echo "::shutdown:/etc/init.d/rcK"
} | gen /etc/inittab 644

gen /etc/init.d/rcS 755 <<EOF
#!/bin/sh
# aba QEMU lab: early boot (busybox init sysinit)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc -o nosuid,nodev,noexec proc /proc
mount -t sysfs -o nosuid,nodev,noexec sysfs /sys
mount -t devtmpfs -o mode=0755,nosuid devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=0620,ptmxmode=0666 devpts /dev/pts
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /run
mkdir -p /run/sshd /run/lock
chmod 0755 /run/sshd
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
mount -t debugfs debugfs /sys/kernel/debug
hostname -F /etc/hostname
kv=\$(uname -r)
if [ -f /lib/modules/\$kv/lab-modules ]; then
    while read -r m; do
        insmod /lib/modules/\$kv/\$m || echo "LAB: WARNING insmod \$m failed"
    done </lib/modules/\$kv/lab-modules
else
    echo "LAB: WARNING no modules for kernel \$kv"
fi
ip link set lo up
n=0
while [ ! -e /sys/class/net/eth0 ] && [ \$n -lt 250 ]; do usleep 20000; n=\$((n + 1)); done
ip addr add $LAB_GUEST_ADDR dev eth0 && ip link set eth0 up || echo "LAB: WARNING eth0 not configured"
n=0
while [ ! -b /dev/vda ] && [ \$n -lt 250 ]; do usleep 20000; n=\$((n + 1)); done
mount -t ext4 -o ro /dev/vda /boot || echo "LAB: WARNING /boot not mounted"
read -r up _ </proc/uptime
echo "LAB: up kernel=\$kv boot_id=\$(cat /proc/sys/kernel/random/boot_id) uptime=\$up"
EOF

gen /etc/init.d/sshd-run 755 <<'EOF'
#!/bin/sh
# aba QEMU lab: sshd in the foreground (respawned by init). Copies sshd's log to the
# console and prints "LAB: sshd ready <uptime>" as soon as sshd is listening.
mkdir -p /run/sshd
chmod 0755 /run/sshd
/usr/sbin/sshd -D -e 2>&1 | while IFS= read -r line; do
    printf '%s\n' "$line"
    case $line in
    *"Server listening on 0.0.0.0 port"*)
        read -r up _ </proc/uptime
        echo "LAB: sshd ready $up"
        ;;
    esac
done
sleep 1
EOF

gen /etc/init.d/rcK 755 <<'EOF'
#!/bin/sh
# aba QEMU lab: shutdown
umount /boot 2>/dev/null
exit 0
EOF

# -------------------------------------------------------------- initramfs -------------
rm -rf "$LAB_OUT/rootfs"
mv "$R" "$LAB_OUT/rootfs"
R=$LAB_OUT/rootfs
(cd "$R" && find . -print0 | sort -z | cpio --null -o -H newc --owner=0:0 --quiet) |
    "${COMP[@]}" >"$LAB_INITRD.tmp"
mv "$LAB_INITRD.tmp" "$LAB_INITRD"
step "initramfs $(du -m --apparent-size "$LAB_INITRD" | cut -f1) MiB ($LAB_INITRD_COMP, $(du -sm --apparent-size "$R" | cut -f1) MiB unpacked)"

# ---------------------------------------------------------------- /boot ---------------
B=$LAB_OUT/bootfs.new
rm -rf "$B"
mkdir -p "$B"
cp "$LAB_INITRD" "$B/initrd.img"
for k in "${KVERS[@]}"; do
    kp=${PKGDIR[linux-image-$k-unsigned]}
    ln "$kp/boot/vmlinuz-$k" "$B/vmlinuz-$k" 2>/dev/null || cp "$kp/boot/vmlinuz-$k" "$B/vmlinuz-$k"
    cp "$kp/boot/config-$k" "$B/config-$k"
    ln "$B/initrd.img" "$B/initrd.img-$k"
done
rm -rf "$LAB_BOOTFS"
mv "$B" "$LAB_BOOTFS"
size=$(du -sm --apparent-size "$LAB_BOOTFS" | cut -f1)
size=$((size + size / 8 + 8))
rm -f "$LAB_BOOTIMG.tmp"
truncate -s "${size}M" "$LAB_BOOTIMG.tmp"
mke2fs -q -F -t ext4 -L labboot -m 0 -E root_owner=0:0 -d "$LAB_BOOTFS" "$LAB_BOOTIMG.tmp"
mv "$LAB_BOOTIMG.tmp" "$LAB_BOOTIMG"
printf '%s\n' "${KVERS[@]}" >"$LAB_OUT/kvers"
step "boot.img ${size} MiB"

# -------------------------------------------------------------- manifest ---------------
declare -A HOSTPKG
if ((${#HOSTFILES[@]})); then
    while IFS= read -r line; do
        [[ $line == diversion* ]] && continue
        HOSTPKG[${line#*: }]=${line%%: *}
    done < <(dpkg -S "${HOSTFILES[@]}" "${HOSTFILES[@]/#//usr}" 2>/dev/null || true)
fi
{
    echo "# aba QEMU lab build manifest (generated by lab/build-target.sh)"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
    echo "kernels: ${KVERS[*]}  (default: ${KVERS[0]})"
    echo "default cmdline: $LAB_CMDLINE_BASE"
    echo "initrd.img: $(stat -c %s "$LAB_INITRD") bytes, $LAB_INITRD_COMP, sha256 $(sha256sum <"$LAB_INITRD" | cut -d' ' -f1)"
    echo "boot.img: $(stat -c %s "$LAB_BOOTIMG") bytes, ext4"
    echo "host key: $(ssh-keygen -l -E sha256 -f "$LAB_HOSTKEY.pub")"
    echo
    echo "## debs used (out/debs)"
    for p in "${!PKGDIR[@]}"; do printf '%s %s %s\n' "$p" "${PKGVER[$p]}" "$(cached_deb "$p" | xargs basename)"; done | sort
    echo
    echo "## /boot (out/boot.img)"
    (cd "$LAB_BOOTFS" && find . -type f -printf '/boot/%P %s bytes, inode %i\n' | sort)
    echo
    echo "## rootfs (initramfs): path  <-  source"
    (cd "$R" && find . -mindepth 1 -printf '/%P\t%y\t%l\n' | sort) | while IFS=$'\t' read -r f t l; do
        case $t in
            l) printf '%s -> %s\n' "$f" "$l" ;;
            d) ;;
            *)
                s=${SRC[$f]:-generated}
                if [[ $s == host:* ]]; then
                    s=${s#host:}
                    s="${HOSTPKG[$s]:-${HOSTPKG[/usr$s]:-unknown}} (host $s)"
                fi
                printf '%s  <-  %s\n' "$f" "$s"
                ;;
        esac
    done
} >"$LAB_OUT/manifest.txt"

fingerprint >"$LAB_OUT/build.stamp"
step "done: kernels ${KVERS[*]}; see $LAB_OUT/manifest.txt"
