#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cgroup_nest.sh: three nested cgroups with the cpu controller, for running a benchmark at
# cgroup depth 0 (the root), 1, 2 or 3.
#
#   cgroup_nest.sh setup      create aba-l1, aba-l1/aba-l2, aba-l1/aba-l2/aba-l3
#   cgroup_nest.sh teardown   remove them again (they must be empty)
#   cgroup_nest.sh show       print the hierarchy in use and the three paths
#
# cgroup v2 is used when its cpu controller is available. Its "no internal processes" rule
# forbids a process in aba-l1 while aba-l1 hands the cpu controller down to aba-l2, so
# aba-l2 and aba-l3 are made threaded: aba-l1 becomes the threaded domain, and the threads
# of a process in it may sit at any level below (see in_cgroup_level.sh). On a host whose
# cpu controller is still bound to cgroup v1 (a "hybrid" mount), the v1 cpu hierarchy is
# used instead, where nesting needs no special mode.
#
# Needs root. Exit status: 0 on success, 1 on failure (with a message on stderr).
set -eu

NAMES="aba-l1 aba-l2 aba-l3"

die() {
	echo "cgroup_nest: $*" >&2
	exit 1
}

# The mount point of the cgroup2 file system, if any.
v2_mount() {
	awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts
}

# The mount point of the cgroup v1 hierarchy that has the cpu controller, if any.
v1_cpu_mount() {
	awk '$3 == "cgroup" { n = split($4, o, ","); for (i = 1; i <= n; i++) if (o[i] == "cpu") { print $2; exit } }' /proc/mounts
}

# Prints "v2 MOUNT" or "v1 MOUNT": the hierarchy whose cpu controller we can use.
hierarchy() {
	v2=$(v2_mount)
	if [ -n "$v2" ] && [ -r "$v2/cgroup.controllers" ] &&
		tr ' ' '\n' <"$v2/cgroup.controllers" | grep -qx cpu; then
		echo "v2 $v2"
		return
	fi
	v1=$(v1_cpu_mount)
	[ -n "$v1" ] || die "no cgroup hierarchy with the cpu controller (cgroup v2 without cpu, no v1 cpu mount)"
	echo "v1 $v1"
}

# Prints the directory of level $2 (1..3) under mount $1.
level_dir() {
	dir=$1
	i=0
	for name in $NAMES; do
		i=$((i + 1))
		dir=$dir/$name
		[ "$i" -lt "$2" ] || break
	done
	echo "$dir"
}

# Writes $1 into file $2, with a readable error when the kernel refuses.
put() {
	if ! printf '%s\n' "$1" >"$2" 2>/dev/null; then
		die "cannot write '$1' to $2"
	fi
}

enable_cpu() { # $1 = cgroup directory whose children should get the cpu controller
	tr ' ' '\n' <"$1/cgroup.subtree_control" | grep -qx cpu || put +cpu "$1/cgroup.subtree_control"
}

setup() {
	[ "$(id -u)" = 0 ] || die "must run as root"
	h=$(hierarchy)
	kind=${h%% *}
	mnt=${h#* }
	if [ "$kind" = v2 ]; then
		enable_cpu "$mnt"
		l1=$(level_dir "$mnt" 1)
		l2=$(level_dir "$mnt" 2)
		l3=$(level_dir "$mnt" 3)
		mkdir -p "$l1"
		[ -d "$l2" ] || mkdir "$l2"
		[ "$(cat "$l2/cgroup.type")" = threaded ] || put threaded "$l2/cgroup.type"
		enable_cpu "$l1"
		[ -d "$l3" ] || mkdir "$l3"
		[ "$(cat "$l3/cgroup.type")" = threaded ] || put threaded "$l3/cgroup.type"
		enable_cpu "$l2"
		for d in "$l1" "$l2" "$l3"; do
			tr ' ' '\n' <"$d/cgroup.controllers" | grep -qx cpu ||
				die "$d did not get the cpu controller"
		done
	else
		mkdir -p "$(level_dir "$mnt" 3)"
	fi
	echo "cgroup_nest: cgroup $kind at $mnt: $(level_dir "$mnt" 3) ready"
}

teardown() {
	h=$(hierarchy)
	mnt=${h#* }
	for n in 3 2 1; do
		d=$(level_dir "$mnt" "$n")
		[ ! -d "$d" ] || rmdir "$d" || die "cannot remove $d (still in use?)"
	done
	echo "cgroup_nest: removed the levels under $mnt"
}

show() {
	h=$(hierarchy)
	echo "hierarchy: cgroup ${h%% *} at ${h#* }"
	for n in 1 2 3; do
		echo "level $n: $(level_dir "${h#* }" "$n")"
	done
}

case "${1:-}" in
setup) setup ;;
teardown) teardown ;;
show) show ;;
*)
	echo "usage: $0 setup|teardown|show" >&2
	exit 2
	;;
esac
