#!/usr/bin/env bash
# bench/run.sh [--short] [--only 1,2,3,4,5,6,7]: aba's speed targets (issue 6), measured as ratios
# inside one run on this machine, then the verdict simulator (issue 9), the reproduction
# simulator (issue 18), the noise-profile simulator (issue 10), the extended-campaign
# simulator (issue 10 §4) and the bisection simulator (issue 32). Each prints one table (measured, target, met/missed) and the
# details behind each figure. Never judges: exits 0 whenever every figure could be measured,
# met or missed; non-zero only when the bench itself could not run something.
#
# Builds what it needs (target/release/aba and the bench programs, through `cargo bench`; the
# QEMU lab image when it is missing), starts what it needs (an sshd on 127.0.0.1 with fresh
# keys, a lab VM with its own name and port) and stops it again. --short is CI's mode: fewer
# samples, a shorter lab campaign, 100,000 synthetic samples instead of 1,000,000 (and 10,000
# instead of 100,000 for the scaling ratio, a 10^5-digit value instead of 10^6), and the
# simulators' sub-grids of 200 campaigns (pairs) per cell instead of the full grids of 2,000
# (tens of minutes each; docs/statistics.md and docs/report.md hold full runs). --only selects
# speed items and skips the simulators.
# How each figure is measured: docs/performance.md, docs/statistics.md and bench/*.rs.
set -euo pipefail
cd "$(dirname "$0")/.."
lab/host-deps.sh
lab/build-target.sh --check >/dev/null 2>&1 || lab/build-target.sh
cargo bench --locked --bench perf -- "$@"
verdicts=()
for arg in "$@"; do
    case $arg in
    --short) verdicts+=(--short) ;;
    --only) exit 0 ;;
    esac
done
cargo bench --locked --bench verdicts -- "${verdicts[@]}"
cargo bench --locked --bench verdicts -- --cases "${verdicts[@]}"
cargo bench --locked --bench reproduction -- "${verdicts[@]}"
cargo bench --locked --bench profiles -- "${verdicts[@]}"
cargo bench --locked --bench sequential -- "${verdicts[@]}"
cargo bench --locked --bench bisect -- "${verdicts[@]}"
