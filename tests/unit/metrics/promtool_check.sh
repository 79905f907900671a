#!/usr/bin/env bash
# promtool_check.sh PROMTOOL SAMPLE_BINARY: fails unless promtool accepts the sample's exposition.
# A missing promtool is a failure, not a skip: scripts/install-deps.sh installs it (package prometheus).
set -euo pipefail
promtool=$1
sample=$2
if [[ ! -x $promtool ]]; then
  echo "promtool not found (install the Debian package 'prometheus')" >&2
  exit 1
fi
text=$("$sample")
# An empty exposition would pass trivially; make sure the sample printed every kind.
for needle in '# TYPE hbingest_events_consumed_total counter' '# TYPE hbingest_consumer_lag gauge' \
              'hbingest_write_latency_seconds_bucket{endpoint="127.0.0.1:19090",le="+Inf"} 5'; do
  if [[ $text != *"$needle"* ]]; then
    echo "sample output lacks: $needle" >&2
    exit 1
  fi
done
printf '%s\n' "$text" | "$promtool" check metrics
echo "promtool check metrics: ok"
