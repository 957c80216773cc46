#!/usr/bin/env bash
# up.sh [NAME] [PORT]: build the distro target if needed and boot VM NAME (default distro1)
# on 127.0.0.1:PORT (default 10122) until it accepts logins (lab/up.sh with LAB_FLAVOR=distro).
LAB_FLAVOR=distro exec "$(dirname "$0")/../up.sh" "$@"
