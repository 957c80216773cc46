#!/bin/sh
# Untimed write checks of the RT sysctls, as the thread ran them on both kernels ("Valid
# changes, invalid text, out-of-range values and invalid period/runtime combinations had
# matching return values and readback on both kernels. Rejected writes left the old values
# intact."). Each case writes, checks whether the write was accepted or rejected as it must
# be, and reads both values back. Prints one line per case and RESULT: PASS or RESULT: FAIL;
# restores the values the recipe's [sysctl] set (1000000 / 950000) whatever happens.
#
# Usage: rt_sysctl_writes.sh   (as root)
P=/proc/sys/kernel/sched_rt_period_us
R=/proc/sys/kernel/sched_rt_runtime_us
PERIOD=1000000
RUNTIME=950000
failed=0

restore() {
	echo "$PERIOD" > "$P" 2>/dev/null
	echo "$RUNTIME" > "$R" 2>/dev/null
}
trap restore EXIT INT TERM

# case NAME FILE VALUE accept|reject WANT_PERIOD WANT_RUNTIME
case_() {
	name=$1 file=$2 value=$3 want=$4 want_p=$5 want_r=$6
	if printf '%s\n' "$value" > "$file" 2>/dev/null; then got=accept; else got=reject; fi
	p=$(cat "$P") r=$(cat "$R")
	if [ "$got" = "$want" ] && [ "$p" = "$want_p" ] && [ "$r" = "$want_r" ]; then
		echo "ok   $name: write $got, period $p runtime $r"
	else
		echo "FAIL $name: write $got (want $want), period $p runtime $r (want $want_p $want_r)"
		failed=1
	fi
	restore
}

restore
case_ "valid runtime change" "$R" 900000 accept "$PERIOD" 900000
case_ "valid period change" "$P" 2000000 accept 2000000 "$RUNTIME"
case_ "same-value write" "$R" "$RUNTIME" accept "$PERIOD" "$RUNTIME"
case_ "runtime -1 (no limit)" "$R" -1 accept "$PERIOD" -1
case_ "invalid text" "$R" abc reject "$PERIOD" "$RUNTIME"
case_ "period out of range (0)" "$P" 0 reject "$PERIOD" "$RUNTIME"
case_ "runtime out of range (-2)" "$R" -2 reject "$PERIOD" "$RUNTIME"
case_ "runtime above period" "$R" 2000000 reject "$PERIOD" "$RUNTIME"
case_ "period below runtime" "$P" 500000 reject "$PERIOD" "$RUNTIME"

if [ "$failed" = 0 ]; then echo "RESULT: PASS"; else echo "RESULT: FAIL"; exit 1; fi
