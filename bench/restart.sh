#!/usr/bin/env bash
# How long ingest stops when daemons start, crash and restart, on the local stack: a cold start to the
# first stored row, kill -9 -> first row stored again, and a rolling restart of three daemons in one
# group (per partition the longest gap), each with kafka.group_instance_id unset and set. Rows
# verified; prints a report. See bench/README.md ("Restarts").
#
#   bench/restart.sh                                   # every scenario, dynamic and static membership
#   bench/restart.sh --scenarios kill --repeats 1      # a quick check
#   bench/restart.sh --help
#
# Respects HBSTACK_DIR / HBSTACK_PORT_OFFSET (the stack it starts or reuses) and needs a build
# (build/hbingest).
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python bench/tools/restart.py "$@"
