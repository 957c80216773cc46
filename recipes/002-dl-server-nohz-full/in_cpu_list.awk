# SPDX-License-Identifier: MIT
#
# in_cpu_list.awk: prints 1 when CPU `c` is in the CPU list on standard input (the format of
# /sys/devices/system/cpu/nohz_full and of nohz_full=: "2-3,6-53,56"), else 0. An empty
# list, or "(null)" (a kernel without nohz_full CPUs), holds no CPU.
#
#   awk -v c=2 -f in_cpu_list.awk </sys/devices/system/cpu/nohz_full
BEGIN { FS = ","; found = 0 }
{
	for (i = 1; i <= NF; i++) {
		if ($i !~ /^[0-9]+(-[0-9]+)?$/)
			continue
		n = split($i, r, "-")
		lo = r[1] + 0
		hi = (n == 2 ? r[2] : r[1]) + 0
		if (c + 0 >= lo && c + 0 <= hi)
			found = 1
	}
}
END { print found }
