#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_kernel.sh [HZ]: is the running kernel the kind the measurements were made on?
# Both of the mail's machines ran PREEMPT_RT with CONFIG_HZ=1000; on another preemption
# model the ktimers/N handling of dlserver_nohz.sh does not apply, and the tick rates
# (1000.6/s and 1001.6/s with v2: CONFIG_HZ) mean something else at another HZ.
#
# Checks, and prints what it found:
#   PREEMPT_RT   /sys/kernel/realtime reads 1 (the file exists on PREEMPT_RT kernels only),
#                or the kernel config has CONFIG_PREEMPT_RT=y;
#   CONFIG_HZ    the kernel config (/boot/config-$(uname -r), else /proc/config.gz) has
#                CONFIG_HZ=HZ (default 1000).
# Exit status: 0 when both hold, 1 (with the reason on stderr) when not or when the kernel
# config cannot be read, 2 on bad usage.
set -u

want=${1:-1000}
case $want in
'' | *[!0-9]*)
	echo "usage: $0 [HZ]" >&2
	exit 2
	;;
esac

fail() {
	echo "check_kernel: $*" >&2
	exit 1
}

release=$(uname -r)
if [ -r "/boot/config-$release" ]; then
	config=$(cat "/boot/config-$release") || fail "cannot read /boot/config-$release"
	from="/boot/config-$release"
elif [ -r /proc/config.gz ] && config=$(gzip -dc /proc/config.gz 2>/dev/null); then
	from=/proc/config.gz
else
	config=""
	from=""
fi

realtime=$(cat /sys/kernel/realtime 2>/dev/null || echo absent)
echo "kernel: $release"
echo "sys_kernel_realtime: $realtime"
if [ "$realtime" != 1 ]; then
	printf '%s\n' "$config" | grep -qx 'CONFIG_PREEMPT_RT=y' ||
		fail "kernel $release is not PREEMPT_RT (/sys/kernel/realtime: $realtime${from:+, no CONFIG_PREEMPT_RT=y in $from}); the measurements need a PREEMPT_RT build"
fi

[ -n "$from" ] || fail "cannot verify CONFIG_HZ=$want: no /boot/config-$release and no /proc/config.gz (CONFIG_IKCONFIG_PROC)"
hz=$(printf '%s\n' "$config" | sed -n 's/^CONFIG_HZ=//p')
echo "config_hz: ${hz:-unset} (from $from)"
[ "$hz" = "$want" ] || fail "kernel $release has CONFIG_HZ=${hz:-unset}, not $want"
echo "check_kernel: PREEMPT_RT and CONFIG_HZ=$want"
