#!/usr/bin/env python3
"""A network power switch for the lab VM, as labgrid's `simplerest` power model speaks it.

usage: power-switch.py PORT OFF_COMMAND ON_COMMAND

Serves http://127.0.0.1:PORT/power/{index}/{value}: a GET with value 0 cuts the power (runs
OFF_COMMAND, e.g. `lab/stop-vm.sh NAME --hard`), with value 1 restores it (runs ON_COMMAND,
e.g. `lab/start-vm.sh NAME PORT KVER`), and without a value answers 1 or 0. A labgrid
exporter exports it as the place's NetworkPowerPort (model `simplerest`), so
`labgrid-client power cycle` drives the QEMU process like a real switch drives a board's
supply: the place's power goes through the coordinator, not through aba. Loopback only.
"""

import http.server
import subprocess
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    port, off, on = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    state = {"on": True}

    class Switch(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            parts = self.path.strip("/").split("/")
            if len(parts) < 2 or parts[0] != "power" or not parts[1].isdigit():
                self.send_error(404)
                return
            value = parts[2] if len(parts) > 2 else ""
            if value in ("0", "1"):
                command = on if value == "1" else off
                done = subprocess.run(["sh", "-c", command], capture_output=True, text=True)
                if done.returncode != 0:
                    sys.stderr.write(f"{command}: exit {done.returncode}\n{done.stderr}")
                    self.send_error(500, f"power command failed: exit {done.returncode}")
                    return
                state["on"] = value == "1"
                body = value
            elif value == "":
                body = "1" if state["on"] else "0"
            else:
                self.send_error(400)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, format, *args):
            sys.stderr.write("power-switch: " + format % args + "\n")

    http.server.HTTPServer(("127.0.0.1", port), Switch).serve_forever()


if __name__ == "__main__":
    main()
