#!/usr/bin/env bash
# power-cycle.sh NAME PORT KVER [EXTRA_CMDLINE...]
# The lab's "power switch + netboot": cut power (stop-vm --hard) and boot KVER.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
(($# >= 3)) || die "usage: power-cycle.sh NAME PORT KVER [EXTRA_CMDLINE...]"
"$LAB_DIR/stop-vm.sh" "$1" --hard
exec "$LAB_DIR/start-vm.sh" "$@"
