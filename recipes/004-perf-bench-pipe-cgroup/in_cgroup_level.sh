#!/bin/sh
# SPDX-License-Identifier: MIT
#
# in_cgroup_level.sh LEVEL COMMAND [ARG...]: move this shell into cgroup depth LEVEL (root,
# 1, 2 or 3, as created by `cgroup_nest.sh setup`), then exec COMMAND there, so the command
# and every thread it creates run at that depth.
#
# On cgroup v2 the process first joins aba-l1 (the threaded domain); for levels 2 and 3 its
# one thread then moves down with cgroup.threads. The threads COMMAND creates inherit that
# cgroup. On cgroup v1 the process moves with cgroup.procs directly.
#
# Prints the cgroup it ended up in on stderr ("in_cgroup_level: level 2 = /aba-l1/aba-l2").
# Needs root. Exit status: COMMAND's, or 1 when the move fails, 2 on bad usage.
set -eu

die() {
	echo "in_cgroup_level: $*" >&2
	exit 1
}

[ $# -ge 2 ] || {
	echo "usage: $0 root|1|2|3 COMMAND [ARG...]" >&2
	exit 2
}
level=$1
shift
case "$level" in
root | 0) depth=0 ;;
1 | 2 | 3) depth=$level ;;
*)
	echo "in_cgroup_level: LEVEL must be root, 1, 2 or 3, not '$level'" >&2
	exit 2
	;;
esac

here=$(dirname "$0")
info=$(sh "$here/cgroup_nest.sh" show) || exit 1
kind=$(echo "$info" | awk '/^hierarchy:/ { print $3 }')
mnt=$(echo "$info" | awk '/^hierarchy:/ { print $5 }')
dir=$mnt
if [ "$depth" -gt 0 ]; then
	dir=$(echo "$info" | awk -v n="$depth" '$1 == "level" && $2 == n":" { print $3 }')
	[ -d "$dir" ] || die "$dir does not exist; run 'cgroup_nest.sh setup' first"
fi

move() { # $1 = value, $2 = file
	printf '%s\n' "$1" >"$2" 2>/dev/null || die "cannot write $1 to $2"
}

if [ "$kind" = v2 ] && [ "$depth" -ge 2 ]; then
	move $$ "$(echo "$info" | awk '$1 == "level" && $2 == "1:" { print $3 }')/cgroup.procs"
	move $$ "$dir/cgroup.threads"
else
	move $$ "$dir/cgroup.procs"
fi

# Report where we are, as the kernel sees it: the v2 line (0::) or the v1 line with cpu.
now=$(awk -F: -v k="$kind" 'k == "v2" && $1 == "0" { print $3 } k == "v1" && $2 ~ /(^|,)cpu(,|$)/ { print $3 }' /proc/$$/cgroup)
want=${dir#"$mnt"}
[ -n "$want" ] || want=/
[ "$now" = "$want" ] || die "ended up in $now instead of $want"
echo "in_cgroup_level: level $level = $now (cgroup $kind)" >&2
exec "$@"
