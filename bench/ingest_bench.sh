#!/usr/bin/env bash
# Ingest throughput of the whole pipeline on the local stack: pre-produces N events with
# `hbingest gen` (so Kafka is not the bottleneck), then times the daemon from start until every
# event is stored or dead-lettered, reading its /metrics. Reports events/s, peak RSS and the
# daemon's CPU time (user + system, from /proc/PID/stat when the last event is stored) per event:
# CPU time, unlike wall time, does not depend on what else shares the machine's cores.
#
#   stack/hbstack up && bench/ingest_bench.sh [EVENTS] [WRITERS]
#
# PERF_DATA=FILE also samples the daemon with `perf record` (call graphs from DWARF, so the
# RelWithDebInfo build needs no frame pointers) from its start until the last event is stored.
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
if [ -n "${PERF_DATA:-}" ]; then
  perf record -q -F 999 --call-graph dwarf,16384 -p "$daemon" -o "$PERF_DATA" & perf=$!
fi
peak=0
while :; do
  done_events=$(( $(metric hbingest_rows_written_all_total || echo 0) + $(metric hbingest_dead_letters_total || echo 0) ))
  rss=$(awk '/VmRSS/ {print $2}' /proc/$daemon/status); [ "$rss" -gt "$peak" ] && peak=$rss
  [ "$done_events" -ge "$EVENTS" ] && break
  sleep 0.2
done
end=$(date +%s.%N)
# Fields 14 and 15 of /proc/PID/stat: utime and stime in clock ticks; 10: minor page faults (the command name, field 2,
# is "(hbingest)": no spaces, so plain field splitting holds).
read -r utime stime faults < <(awk '{print $14, $15, $10}' /proc/$daemon/stat)
ticks_per_s=$(getconf CLK_TCK)
if [ -n "${PERF_DATA:-}" ]; then kill -INT $perf; wait $perf || true; fi
kill -TERM $daemon; wait $daemon || true
rm -f "$config"
awk -v n="$EVENTS" -v s="$start" -v e="$end" -v w="$WRITERS" -v r="$peak" -v u="$utime" -v k="$stime" -v f="$faults" -v hz="$ticks_per_s" \
  'BEGIN {printf "| %d events | %d writers | %.1f s | %.0f events/s | peak RSS %.0f MiB | CPU %.2f s (user %.2f, sys %.2f): %.2f µs/event | %d page faults |\n",
          n, w, e-s, n/(e-s), r/1024, (u+k)/hz, u/hz, k/hz, (u+k)/hz/n*1e6, f}'
