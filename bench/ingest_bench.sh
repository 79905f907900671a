#!/usr/bin/env bash
# Ingest throughput of the whole pipeline on the local stack: pre-produces N events with
# `hbingest gen` (so Kafka is not the bottleneck), then times the daemon from start until every
# event is stored or dead-lettered, reading its /metrics. Reports events/s and peak RSS.
#
#   stack/hbstack up && bench/ingest_bench.sh [EVENTS] [WRITERS]
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS=${1:-300000}
WRITERS=${2:-4}
HB=${HB:-build/hbingest}
eval "$(stack/hbstack env)"
run=$(date +%s)
topic=bench_ingest_$run
table=bench_ingest_$run
port=$((20000 + RANDOM % 10000))
config=$(mktemp /tmp/ingest-bench.XXXXXX.yaml)
cat > "$config" <<YAML
kafka: {bootstrap_servers: "$HBINGEST_KAFKA_BOOTSTRAP", group_id: "g_$run", topics: [$topic], statistics_interval: 1s}
hbase: {endpoints: ["$HBINGEST_THRIFT2"]}
writer: {writers: $WRITERS}
routes: [{event_types: [login, order], table: $table, preset: events, preset_params: {buckets: "8"}}]
table: {create_table: true}
dlq: {topic: ${topic}_dlq}
http: {listen: "127.0.0.1:$port"}
logging: {level: warn}
YAML
$HB gen --brokers "$HBINGEST_KAFKA_BOOTSTRAP" --topic "$topic" --partitions 4 --count "$EVENTS" --time-spread 2m >&2
metric() { curl -sf "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 ~ "^"m"({|$)" {s+=$2} END {printf "%d", s}'; }
start=$(date +%s.%N)
$HB run --config "$config" & daemon=$!
peak=0
while :; do
  done_events=$(( $(metric hbingest_rows_written_all_total || echo 0) + $(metric hbingest_dead_letters_total || echo 0) ))
  rss=$(awk '/VmRSS/ {print $2}' /proc/$daemon/status); [ "$rss" -gt "$peak" ] && peak=$rss
  [ "$done_events" -ge "$EVENTS" ] && break
  sleep 0.2
done
end=$(date +%s.%N)
kill -TERM $daemon; wait $daemon || true
rm -f "$config"
awk -v n="$EVENTS" -v s="$start" -v e="$end" -v w="$WRITERS" -v r="$peak" \
  'BEGIN {printf "| %d events | %d writers | %.1f s | %.0f events/s | peak RSS %.0f MiB |\n", n, w, e-s, n/(e-s), r/1024}'
