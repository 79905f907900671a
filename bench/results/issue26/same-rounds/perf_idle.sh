#!/usr/bin/env bash
# Waits for compare.py's _queries daemon, lets ingest finish (its rows metric stops moving), then perf-records
# that daemon for 10 s of the idle query phase.
out=${1:-/tmp/perf-idle.data}
for _ in $(seq 1200); do
  pid=$(pgrep -f "hbingest run --config .*_queries_" | head -1)
  [ -n "$pid" ] && break; sleep 0.5
done
[ -z "$pid" ] && { echo "no queries daemon"; exit 1; }
cfg=$(tr '\0' ' ' < /proc/$pid/cmdline | grep -o '\-\-config [^ ]*' | cut -d' ' -f2)
port=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['http']['listen'].split(':')[1])" "$cfg")
echo "pid $pid config $cfg port $port"
prev=-1
for _ in $(seq 600); do
  cur=$(curl -s "127.0.0.1:$port/metrics" | awk '/^hbingest_rows_written_all_total/ {s+=$2} END {print s+0}')
  [ "$cur" = "$prev" ] && [ "$cur" != "0" ] && break
  prev=$cur; sleep 1
done
echo "ingest done at $cur rows; recording"
perf record -F 499 -g -p "$pid" -o "$out" -- sleep 10 2>&1 | tail -2
