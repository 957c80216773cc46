#!/usr/bin/env bash
# power-cycle.sh NAME PORT KVER [EXTRA_CMDLINE...]
# The lab's "power switch + netboot": cut power (stop-vm --hard) and boot KVER.
#
# power-cycle.sh NAME PORT            (the distro VM: LAB_FLAVOR=distro, or NAME's run files)
# Cuts power and starts it again with the same disk and EFI variables, like a real box's
# power switch: the firmware and the boot loader decide the kernel. For a reset button
# without a new QEMU process: monitor.sh NAME system_reset.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
(($# >= 2)) || die "usage: power-cycle.sh NAME PORT KVER [EXTRA_CMDLINE...]"
lab_valid_name "$1"
if [[ $(lab_flavor "$1") == distro ]]; then
    (($# == 2)) || die "the distro VM's boot loader picks the kernel: power-cycle.sh NAME PORT (got: ${*:3})"
    "$LAB_DIR/stop-vm.sh" "$1" --hard
    LAB_FLAVOR=distro LAB_FRESH=0 exec "$LAB_DIR/start-vm.sh" "$1" "$2"
fi
(($# >= 3)) || die "usage: power-cycle.sh NAME PORT KVER [EXTRA_CMDLINE...]"
"$LAB_DIR/stop-vm.sh" "$1" --hard
exec "$LAB_DIR/start-vm.sh" "$@"
