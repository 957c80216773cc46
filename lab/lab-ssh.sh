#!/usr/bin/env bash
# lab-ssh.sh PORT [cmd...]
# ssh to the lab VM as root with the lab key and strict known_hosts.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
(($# >= 1)) || die "usage: lab-ssh.sh PORT [cmd...]"
lab_valid_port "$1"
# the distro VM's sshd may take several seconds for a banner while it is busy
[[ $(lab_port_flavor "$1") == distro ]] && LAB_SSH_TIMEOUT=$LAB_DISTRO_SSH_TIMEOUT
lab_ssh_args "$1" "$LAB_SSH_TIMEOUT"
shift
exec "${LAB_SSH_ARGV[@]}" "$@"
