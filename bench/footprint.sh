#!/bin/sh
# footprint.sh SECONDS: what runs next to a workload that only sleeps (issue 17 item 3).
# For the SECONDS this script sleeps: the CPU ticks and context switches of every sshd process
# and of every other process below an sshd that is not this script or its child (aba's runner
# and the run's supervisor, a login shell), summed over the processes alive before and after the sleep; the
# whole system's context switches and forks; the packets of every interface but lo. The
# counters are read with shell builtins around the sleep, so the only process this script adds
# inside the window is `sleep` itself (one fork, a few context switches, counted in the system
# figures and said so by the bench). POSIX sh and awk (dash, busybox); Linux /proc.
set -eu
secs=${1:-10}
me=$$

# One line per process: pid ppid kind ticks voluntary nonvoluntary ns (kind: sshd or other;
# ns: the scheduler's run time from /proc/PID/schedstat, exact where ticks are sampled; 0 on a
# kernel without CONFIG_SCHED_INFO).
snap() {
    for d in /proc/[0-9]*; do
        p=${d#/proc/}
        s=$(cat "$d/stat" 2>/dev/null) || continue
        comm=${s#*(}
        comm=${comm%%)*}
        set -- ${s##*) }
        kind=other
        case $comm in sshd*) kind=sshd ;; esac
        v=0
        n=0
        while read -r key value; do
            case $key in
            voluntary_ctxt_switches:) v=$value ;;
            nonvoluntary_ctxt_switches:) n=$value ;;
            esac
        done <"$d/status" 2>/dev/null || continue
        ns=0
        read -r ns rest 2>/dev/null <"$d/schedstat" || ns=0
        echo "$p $2 $kind $((${12} + ${13})) $v $n $ns"
    done
}

# Sets ctxt, forks, rx and tx: system-wide context switches and forks, non-lo packets.
system() {
    while read -r key value rest; do
        case $key in
        ctxt) ctxt=$value ;;
        processes) forks=$value ;;
        esac
    done </proc/stat
    rx=0
    tx=0
    while read -r line; do
        case $line in
        *:*) ;;
        *) continue ;;
        esac
        name=${line%%:*}
        [ "$name" = lo ] && continue
        set -- ${line#*:}
        rx=$((rx + $2))
        tx=$((tx + ${10}))
    done </proc/net/dev
}

tmp=${TMPDIR:-/tmp}/footprint.$$
snap | sed 's/^/B /' >"$tmp"
system
c1=$ctxt f1=$forks r1=$rx t1=$tx
sleep "$secs"
system
snap | sed 's/^/A /' >>"$tmp"
awk -v me="$me" -v secs="$secs" -v sys="$c1 $f1 $r1 $t1 $ctxt $forks $rx $tx" '
    $1 == "B" { t[$2] = $5; v[$2] = $6; n[$2] = $7; ns[$2] = $8 }
    $1 == "A" { parent[$2] = $3; kind[$2] = $4; at[$2] = $5; av[$2] = $6; an[$2] = $7; ans[$2] = $8 }
    # "sshd", "aba" (below an sshd, not this script or its child) or "" (anything else).
    function side(p,   q, hops) {
        if (kind[p] == "sshd") return "sshd"
        for (q = p; q != "" && q > 1 && hops < 64; q = parent[q]) {
            if (q == me) return ""
            if (kind[q] == "sshd") return "aba"
            hops++
        }
        return ""
    }
    END {
        for (p in at) {
            if (!(p in t)) continue
            s = side(p)
            if (s == "") continue
            procs[s]++
            ticks[s] += at[p] - t[p]
            vol[s] += av[p] - v[p]
            inv[s] += an[p] - n[p]
            run[s] += ans[p] - ns[p]
        }
        split(sys, x, " ")
        printf "seconds %d\n", secs
        for (i = 1; i <= 2; i++) {
            s = i == 1 ? "sshd" : "aba"
            printf "%s_processes %d\n%s_ticks %d\n%s_voluntary %d\n%s_nonvoluntary %d\n%s_ns %.0f\n",
                s, procs[s], s, ticks[s], s, vol[s], s, inv[s], s, run[s]
        }
        printf "system_ctxt %d\nsystem_forks %d\nrx_packets %d\ntx_packets %d\n",
            x[5] - x[1], x[6] - x[2], x[7] - x[3], x[8] - x[4]
    }' "$tmp"
rm -f "$tmp"
