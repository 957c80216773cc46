#!/bin/sh
# SPDX-License-Identifier: MIT
#
# kernel_warnings.sh count FILE | since FILE: kernel warnings (dmesg "WARNING:" lines) that
# appear during a point, for a recipe's "no new kernel warnings" check.
#   count FILE   writes the number of WARNING lines in dmesg now to FILE (in the setup);
#   since FILE   prints "new_kernel_warnings_this_point: N", N the lines since `count`, then
#                those lines (a check must_match '(?m)^new_kernel_warnings_this_point: 0$').
# A ring buffer that wrapped since `count` can hide warnings and makes N negative, which
# fails such a check too.
# Exit status: 0 when dmesg and FILE could be read, 1 otherwise, 2 on bad usage.
set -u

[ $# -eq 2 ] || {
	echo "usage: $0 count|since FILE" >&2
	exit 2
}
log=$(dmesg 2>/dev/null) || {
	echo "kernel_warnings: cannot read dmesg (root needed?)" >&2
	exit 1
}
now=$(printf '%s\n' "$log" | grep -c 'WARNING:')
case $1 in
count)
	echo "$now" >"$2" || exit 1
	echo "kernel warnings so far: $now"
	;;
since)
	before=$(cat "$2" 2>/dev/null) || {
		echo "kernel_warnings: cannot read $2 (written by: $0 count $2)" >&2
		exit 1
	}
	case $before in '' | *[!0-9]*)
		echo "kernel_warnings: $2 holds no count: $before" >&2
		exit 1
		;;
	esac
	echo "new_kernel_warnings_this_point: $((now - before))"
	printf '%s\n' "$log" | grep 'WARNING:' | tail -n +$((before + 1))
	;;
*)
	echo "usage: $0 count|since FILE" >&2
	exit 2
	;;
esac
exit 0
