#!/usr/bin/env bash
# console-tap.sh NAME OUTFILE
# Copies VM NAME's serial console (out/run/NAME/serial.sock) to OUTFILE, each line prefixed
# with the host's wall clock (seconds since the epoch), until the VM exits or the tap is
# killed. For boot-phase timings; console.log (QEMU's own log) is written regardless.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../common.sh
. "$(dirname "$0")/../common.sh"
(($# == 2)) || die "usage: console-tap.sh NAME OUTFILE"
lab_valid_name "$1"
sock=$LAB_RUN/$1/serial.sock
for _ in $(seq 50); do [[ -S $sock ]] && break; sleep 0.1; done
[[ -S $sock ]] || die "no serial socket $sock (is $1 running?)"
exec python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
out = open(sys.argv[2], "a", buffering=1)
out.write("%.3f === tap connected\n" % time.time())
buf = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    t = time.time()
    buf += d
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        line = line.replace(b"\r", b"").decode("utf-8", "replace")
        # OVMF and the loaders draw with escape sequences: keep the text only
        import re
        line = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\x1bc", "", line)
        out.write("%.3f %s\n" % (t, line))
if buf:
    out.write("%.3f %s\n" % (time.time(), buf.decode("utf-8", "replace")))
out.write("%.3f === tap closed\n" % time.time())
' "$sock" "$2"
