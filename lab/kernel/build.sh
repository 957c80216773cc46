#!/usr/bin/env bash
# Build the lab's own minimal x86-64 kernels from Debian's kernel source package, three
# variants from one tree, for aba's end-to-end test of host-built kernels:
#   original     the source as Debian ships it (a full build)
#   patched      + recipes/005-lab-built-kernels/patched.patch (an incremental rebuild)
#   null-patch   - that, + recipes/005-lab-built-kernels/null.patch (an incremental rebuild)
# then the tree is reverted to pristine. All three have the same `uname -r`; only their
# build number (#1, #2, #3) and timestamp in /proc/version differ. Config: allnoconfig +
# lab/kernel/lab.config + olddefconfig, no modules; they boot the busybox lab VM by kexec.
#   out/kernel/debs/           apt-get download cache of linux-source-6.1 (reused)
#   out/kernel/src/            its tarball unpacked once (src.deb names the deb it came from)
#   out/kernel/build/          the one build tree (make O=), kept for incremental builds
#   out/kernel/VARIANT/        bzImage, config (the .config used), build.log, version
#                              (the version string embedded in bzImage)
#   out/kernel/release         the common release (`uname -r`)
#   out/kernel/manifest.txt
#
# usage: lab/kernel/build.sh [--check | --force]
#   (none)   build unless the outputs are already up to date
#   --check  exit 0 if up to date, 1 if a build is needed; changes nothing
#   --force  rebuild the three kernels from a clean build tree (no download, no unpack)
# Environment: LAB_KERNEL_JOBS (make -j, default: the number of CPUs), LAB_REFRESH_DEBS=1
# (download the source package again), LAB_KERNEL_OUT (default lab/out/kernel).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../common.sh
. "$(dirname "$0")/../common.sh"
export LC_ALL=C

lab_build_mode 23 "$@"

KDIR=$LAB_DIR/kernel
ROOT=$(cd "$LAB_DIR/.." && pwd)
RECIPE=$ROOT/recipes/005-lab-built-kernels
FRAGMENT=$KDIR/lab.config
SRC_PKG=${LAB_KERNEL_SRC_PKG:-linux-source-6.1}
KOUT=${LAB_KERNEL_OUT:-$LAB_OUT/kernel}
KDEBS=$KOUT/debs
KSRC=$KOUT/src
KBUILD=$KOUT/build
JOBS=${LAB_KERNEL_JOBS:-$(nproc)}
VARIANTS=(original patched null-patch)
declare -A PATCH=([original]="" [patched]=$RECIPE/patched.patch [null-patch]=$RECIPE/null.patch)
declare -A BUILDNO=([original]=1 [patched]=2 [null-patch]=3)
# The release must not depend on the tree: an unset LOCALVERSION would append "+" to a
# release built in a git work tree (scripts/setlocalversion).
export LOCALVERSION=

for f in "$FRAGMENT" "${PATCH[patched]}" "${PATCH[null-patch]}"; do
    [[ -s $f ]] || die "missing $f (a committed input of this build)"
done

# ------------------------------------------------------------ fingerprint ---------
src_deb() { lab_cached_deb "$KDEBS" "$SRC_PKG"; }
fingerprint() { # deb
    {
        echo "deb=${1##*/}"
        for f in "$KDIR/build.sh" "$FRAGMENT" "${PATCH[patched]}" "${PATCH[null-patch]}"; do
            printf '%s %s\n' "${f##*/}" "$(sha256sum <"$f" | cut -d' ' -f1)"
        done
        gcc --version 2>/dev/null | head -n 1
    } | sha256sum | cut -d' ' -f1
}
outputs_exist() {
    local v
    [[ -s $KOUT/release && -s $KOUT/manifest.txt ]] || return 1
    for v in "${VARIANTS[@]}"; do
        [[ -s $KOUT/$v/bzImage && -s $KOUT/$v/config && -s $KOUT/$v/build.log && -s $KOUT/$v/version ]] || return 1
    done
}
up_to_date() {
    local deb
    deb=$(src_deb)
    [[ -n $deb ]] && outputs_exist && [[ "$(cat "$KOUT/build.stamp" 2>/dev/null)" == "$(fingerprint "$deb")" ]]
}

if [[ $mode == check ]]; then
    if up_to_date; then echo "up to date"; exit 0; else echo "build needed"; exit 1; fi
fi
if [[ $mode == build ]] && up_to_date; then
    log "up to date ($(cat "$KOUT/release"): ${VARIANTS[*]}); use --force to rebuild"
    exit 0
fi

# ---------------------------------------------------------------- host tools ---------
need() { command -v "$1" >/dev/null || die "missing host tool: $1 (apt-get install $2, or run lab/host-deps.sh)"; }
need apt-get apt; need dpkg-deb dpkg; need tar tar; need xz xz-utils; need patch patch
need make make; need gcc "gcc libc6-dev"; need ld binutils; need flex flex; need bison bison
need bc bc; need flock util-linux
# host tools: make gcc ld flex bison bc xz
# (started by make: kconfig needs flex and bison, kernel/time bc, objtool libelf's gelf.h)
[[ -e /usr/include/gelf.h ]] || die "missing libelf-dev (objtool needs gelf.h): apt-get install libelf-dev, or run lab/host-deps.sh"

mkdir -p "$KOUT"
exec 9>"$KOUT/.lock"
if ! flock -n 9; then
    log "another build.sh is running; waiting for it"
    flock 9
    if [[ $mode == build ]] && up_to_date; then
        log "up to date ($(cat "$KOUT/release")) after the other build"
        exit 0
    fi
fi
rm -f "$KOUT/build.stamp"
last=$(now)
lap() { # sets LAP to the seconds since the previous lap
    local t
    t=$(now)
    LAP=$(awk -v a="$t" -v b="$last" 'BEGIN { printf "%.1f", a - b }')
    last=$t
}

# ---------------------------------------------------------------- source ----------
deb=$(src_deb)
if [[ $LAB_REFRESH_DEBS == 1 || -z $deb ]]; then
    mkdir -p "$KDEBS"
    (cd "$KDEBS" && apt-get -q -o APT::Sandbox::User=root download "$SRC_PKG") </dev/null >&2 ||
        die "apt-get download $SRC_PKG failed (is deb.debian.org bookworm in the apt sources, and apt-get update done?)"
    deb=$(src_deb)
    [[ -n $deb ]] || die "no $SRC_PKG deb in $KDEBS after apt-get download"
    lap
    step "downloaded ${deb##*/} ($(du -m "$deb" | cut -f1) MB, $LAP s)"
fi

# The tree that a killed run left patched is put back first (with the patch as applied).
revert_applied() {
    if [[ -s $KOUT/applied.patch ]]; then
        patch -p1 -R -s -d "$KSRC" <"$KOUT/applied.patch" ||
            die "cannot revert $KOUT/applied.patch in $KSRC; delete $KSRC to unpack again"
        rm -f "$KOUT/applied.patch"
    fi
}
if [[ "$(cat "$KOUT/src.deb" 2>/dev/null)" != "${deb##*/}" || ! -s $KSRC/Makefile ]]; then
    rm -rf "$KSRC" "$KSRC.new" "$KOUT/src.deb" "$KOUT/applied.patch" "$KBUILD"
    mkdir -p "$KSRC.new"
    dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards "./usr/src/$SRC_PKG.tar.*" |
        tar -xJ --strip-components=1 -C "$KSRC.new" ||
        die "cannot unpack usr/src/$SRC_PKG.tar.xz from $deb"
    [[ -s $KSRC.new/Makefile ]] || die "no kernel Makefile in usr/src/$SRC_PKG.tar.xz of $deb"
    mv "$KSRC.new" "$KSRC"
    echo "${deb##*/}" >"$KOUT/src.deb"
    lap
    step "unpacked $SRC_PKG into $KSRC ($(du -sm "$KSRC" | cut -f1) MB, $LAP s)"
else
    revert_applied
fi
srcver=$(dpkg-deb -f "$deb" Version)

# ---------------------------------------------------------------- configure ----------
KMAKE=(make -C "$KSRC" O="$KBUILD")
if [[ $mode == force ]]; then rm -rf "$KBUILD"; fi
mkdir -p "$KBUILD"
{
    "${KMAKE[@]}" allnoconfig KCONFIG_ALLCONFIG="$FRAGMENT"
    "${KMAKE[@]}" olddefconfig
} >"$KOUT/configure.log" 2>&1 || { tail -n 20 "$KOUT/configure.log" >&2; die "configuring failed; see $KOUT/configure.log"; }
lost=()
while IFS= read -r line; do
    case $line in
        CONFIG_*=*) grep -qxF -- "$line" "$KBUILD/.config" || lost+=("$line") ;;
        "# CONFIG_"*" is not set") grep -q "^${line:2:-11}=" "$KBUILD/.config" && lost+=("$line") ;;
    esac
done <"$FRAGMENT"
((${#lost[@]} == 0)) || die "lab.config lines that did not make it into .config (a missing dependency?): ${lost[*]}"
release=$("${KMAKE[@]}" -s kernelrelease)
[[ $release =~ ^[0-9]+\.[0-9]+\.[0-9]+-aba-lab$ ]] || die "unexpected release '$release' (wanted <version>-aba-lab)"
lap
step "configured $release: allnoconfig + lab.config + olddefconfig, $(grep -c '=y$' "$KBUILD/.config") options =y ($LAP s)"

# ---------------------------------------------------------------- builds ----------
# the version string a bzImage carries (x86 boot protocol: kernel_version at 0x20E, + 0x200)
bzimage_version() {
    local off
    off=$(od -An -tu2 -j $((0x20E)) -N 2 "$1" | tr -d ' ')
    [[ -n $off && $off != 0 ]] || return 1
    dd if="$1" bs=1 skip=$((off + 0x200)) count=256 status=none | tr '\0' '\n' | sed -n 1p
}
build_variant() { # variant kind
    local v=$1 kind=$2 p=${PATCH[$1]} out=$KOUT/$1 blog ver
    rm -rf "$out"
    mkdir -p "$out"
    blog=$out/build.log
    {
        echo "# lab/kernel/build.sh: $v ($kind) of $SRC_PKG $srcver, release $release, $(date -u +%FT%TZ)"
        if [[ -n $p ]]; then
            echo "# patch -p1 < ${p#"$ROOT/"}"
            patch -p1 --dry-run -s -d "$KSRC" <"$p" && patch -p1 -d "$KSRC" <"$p"
        fi
    } >"$blog" 2>&1 || { cat "$blog" >&2; die "$v: ${p##*/} does not apply to $SRC_PKG $srcver"; }
    if [[ -n $p ]]; then cp "$p" "$KOUT/applied.patch"; fi
    echo "# ${KMAKE[*]} -j$JOBS KBUILD_BUILD_VERSION=${BUILDNO[$v]} LOCALVERSION= bzImage" >>"$blog"
    if ! "${KMAKE[@]}" -j"$JOBS" KBUILD_BUILD_VERSION="${BUILDNO[$v]}" bzImage >>"$blog" 2>&1; then
        tail -n 30 "$blog" >&2
        die "$v: make bzImage failed; see $blog"
    fi
    [[ "$("${KMAKE[@]}" -s kernelrelease)" == "$release" ]] || die "$v: the release changed"
    cp "$KBUILD/arch/x86/boot/bzImage" "$out/bzImage"
    cp "$KBUILD/.config" "$out/config"
    ver=$(bzimage_version "$out/bzImage") || die "$v: no kernel_version string in bzImage"
    [[ $ver == "$release "*"#${BUILDNO[$v]} "* ]] || die "$v: bzImage says '$ver', not $release #${BUILDNO[$v]}"
    echo "$ver" >"$out/version"
    revert_applied
    lap
    step "$v: $kind build, $(du -k "$out/bzImage" | cut -f1) KiB bzImage ($LAP s)"
}
if [[ -e $KBUILD/vmlinux ]]; then first=incremental; else first=full; fi
build_variant original "$first"
build_variant patched incremental
build_variant null-patch incremental
echo "$release" >"$KOUT/release"

{
    echo "# lab/kernel/build.sh outputs"
    echo "source: $SRC_PKG $srcver (${deb##*/})"
    echo "release: $release"
    echo "config: allnoconfig + lab/kernel/lab.config + olddefconfig, sha256 $(sha256sum <"$KBUILD/.config" | cut -d' ' -f1)"
    echo "compiler: $(gcc --version | head -n 1)"
    for v in "${VARIANTS[@]}"; do
        echo
        echo "[$v]"
        echo "patch: ${PATCH[$v]:+${PATCH[$v]#"$ROOT/"}}"
        echo "bzImage: $(stat -c %s "$KOUT/$v/bzImage") bytes, sha256 $(sha256sum <"$KOUT/$v/bzImage" | cut -d' ' -f1)"
        echo "version: $(cat "$KOUT/$v/version")"
    done
} >"$KOUT/manifest.txt"
fingerprint "$deb" >"$KOUT/build.stamp"
step "done: $release (${VARIANTS[*]}) in $KOUT"
