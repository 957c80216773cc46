#!/bin/sh
# SPDX-License-Identifier: MIT
#
# kernel_config.sh OPTION...: what the running kernel was built with, one line per option:
#   CONFIG_UCLAMP_TASK=y
#   CONFIG_RT_GROUP_SCHED=n     ("# ... is not set", or absent from the config)
# read from /boot/config-$(uname -r), else /proc/config.gz (CONFIG_IKCONFIG_PROC), and the
# line "kernel_config: FILE" saying which. For correctness checks of a recipe: a check that
# must_match '(?m)^CONFIG_X=y$' passes on a kernel built with X and fails on one without,
# which `expect_fail` can name.
# Exit status: 0 when the config was read (whatever it says), 1 when it cannot be read, 2 on
# bad usage.
set -u

[ $# -gt 0 ] || {
	echo "usage: $0 CONFIG_OPTION..." >&2
	exit 2
}
for option in "$@"; do
	case $option in
	CONFIG_*) ;;
	*)
		echo "kernel_config: $option is not a CONFIG_ option" >&2
		exit 2
		;;
	esac
done

release=$(uname -r)
if [ -r "/boot/config-$release" ]; then
	from="/boot/config-$release"
	config=$(cat "$from") || exit 1
elif [ -r /proc/config.gz ] && config=$(gzip -dc /proc/config.gz 2>/dev/null); then
	from=/proc/config.gz
else
	echo "kernel_config: no /boot/config-$release and no /proc/config.gz: cannot tell how kernel $release was built" >&2
	exit 1
fi
echo "kernel_config: $from"
for option in "$@"; do
	value=$(printf '%s\n' "$config" | sed -n "s/^$option=//p" | head -n 1)
	echo "$option=${value:-n}"
done
