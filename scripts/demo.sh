#!/usr/bin/env bash
# README command (a): install everything, build, start the local stack (Kafka + HBase + Thrift2),
# create the table, run the daemon on a generated login/order stream with a live progress line,
# and answer a query over the rows it wrote. The stack stays up afterwards (stack/hbstack down).
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS=${EVENTS:-50000}
RATE=${RATE:-10000}
CONFIG=config/examples/local.yaml

scripts/install-deps.sh
BUILD_DIR=build scripts/build.sh
HB=build/hbingest

stack/hbstack status >/dev/null 2>&1 || true
stack/hbstack up || { echo "demo: the local stack did not start (see above)"; exit 1; }
eval "$(stack/hbstack env)"

echo "== bootstrap: table pre-split on the salt buckets, TTL 10 min"
$HB bootstrap --config "$CONFIG"

echo "== daemon: consuming topic 'events' (Ctrl-C twice to abort)"
$HB run --config "$CONFIG" --progress &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null || true; wait $daemon 2>/dev/null || true' EXIT

$HB gen --brokers "$HBINGEST_KAFKA_BOOTSTRAP" --topic events --partitions 4 --rate "$RATE" --count "$EVENTS" --invalid-fraction 0.01 >/dev/null
# Wait until the daemon has consumed everything (lag 0 on its /metrics) or 120 s pass.
for _ in $(seq 1 120); do
  lag=$(curl -sf http://127.0.0.1:8080/metrics | awk '/^hbingest_consumer_lag\{/ {s+=$2} END {print s+0}')
  consumed=$(curl -sf http://127.0.0.1:8080/metrics | awk '/^hbingest_events_consumed_total\{/ {s+=$2} END {print s+0}')
  [ "${consumed%.*}" -ge "$EVENTS" ] && [ "${lag%.*}" -eq 0 ] && break
  sleep 1
done
sleep 2
kill -TERM $daemon; wait $daemon || true
trap - EXIT

now=$(date +%s%3N)
echo
echo "== query: the 5 newest logins of the last 10 minutes (n-way parallel scan, one per salt bucket)"
$HB query --config "$CONFIG" --event-id login --from $((now - 600000)) --to "$((now + 60000))" --limit 5 --order desc
echo
echo "== the same over HTTP: hbingest serve --config $CONFIG, then"
echo "   curl 'http://127.0.0.1:8080/v1/events?event_id=order&from=<RFC3339|ms>&to=...&limit=10'"
echo "demo: done. The stack is still running: stack/hbstack status | stack/hbstack down"
