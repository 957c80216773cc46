#!/usr/bin/env bash
# monitor.sh NAME 'HMP command'
# Sends one human-monitor command to lab VM NAME (e.g. system_reset, 'info status')
# through out/run/NAME/monitor.sock and prints the reply.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
(($# == 2)) || die "usage: monitor.sh NAME 'HMP command'"
lab_valid_name "$1"
sock=$LAB_RUN/$1/monitor.sock
[[ -S $sock ]] || die "no monitor socket $sock (is $1 running?)"
exec python3 -c '
import re, socket, sys, time
sock, cmd = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sock)
def until_prompt(buf=b""):
    while not buf.endswith(b"(qemu) "):
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        if not d:
            break
        buf += d
    return buf
until_prompt()
s.sendall(cmd.encode() + b"\n")
out = until_prompt().decode("utf-8", "replace")
out = re.sub(r"\x1b\[[0-9;]*[A-Za-z]|\x1b[()][A-Za-z0-9]", "", out).replace("\r", "")
lines = out.split("\n")
if lines and lines[0].strip().endswith(cmd.strip()):
    lines = lines[1:]
if lines and lines[-1].startswith("(qemu)"):
    lines = lines[:-1]
text = "\n".join(lines).strip()
if text:
    print(text)
' "$sock" "$2"
