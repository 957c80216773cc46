#!/usr/bin/env bash
# test.sh [cargo test args…]: aba's whole test suite, on a fresh Debian machine too.
# Installs the host packages the tests need (QEMU, OpenSSH server and client, cpio; needs root
# when something is missing), builds the QEMU lab from Debian packages if it is not built,
# then runs `cargo test`. The SSH tests start their own sshd on 127.0.0.1; the lab tests start
# their own VMs under software emulation.
set -euo pipefail
cd "$(dirname "$0")"
lab/host-deps.sh
lab/build-target.sh --check >/dev/null 2>&1 || lab/build-target.sh
exec cargo test --locked "$@"
