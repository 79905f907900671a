#!/usr/bin/env bash
# Side-by-side ingest comparison on the local stack: hbingest `run` (default config) against a Java
# KafkaConsumer + BufferedMutator peer and the raw putMultiple ceiling, rounds alternated, rows
# verified after every run; writes bench/RESULTS.md. See bench/README.md ("Ingest comparison").
#
#   bench/compare.sh                                # 500,000 events, 12 partitions, 3 rounds
#   bench/compare.sh --events 50000 --rounds 1      # a quick check
#   bench/compare.sh --sweep | --queries            # writer-settings sweep | queries during ingest
#   bench/compare.sh --packed --events 200000       # packed rows (one cell per event) against fields
#   bench/compare.sh --help
#
# Respects HBSTACK_DIR / HBSTACK_PORT_OFFSET (the stack it starts or reuses) and needs a build:
# scripts/build.sh (build/hbingest, build/bench/putmultiple_ceiling).
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python bench/tools/compare.py "$@"
