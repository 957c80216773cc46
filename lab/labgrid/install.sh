#!/usr/bin/env bash
# lab/labgrid/install.sh [--check]: installs labgrid (coordinator, exporter and client) from
# PyPI into lab/out/labgrid/venv, an ignored folder, for the tests that run aba against a real
# labgrid coordinator on 127.0.0.1 (tests/integration/labgrid.rs). --check exits 0 when the
# pinned version is there. Nothing is installed system-wide.
set -euo pipefail
cd "$(dirname "$0")/.."
version=26.0.1
venv=out/labgrid/venv
installed() { [[ -x $venv/bin/labgrid-client ]] && "$venv/bin/pip" show labgrid 2>/dev/null | grep -qx "Version: $version"; }
if [[ ${1:-} == --check ]]; then
    installed
    exit
fi
installed && exit 0
start=$(date +%s)
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "labgrid==$version"
echo "labgrid/install.sh: labgrid $version in lab/$venv ($(($(date +%s) - start)) s)"
