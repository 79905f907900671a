#!/usr/bin/env bash
# Instructions per event of the ingest CPU path (decode + row key + Thrift encoding), counted by
# valgrind's callgrind in build/bench/cpu_path_bench. Unlike the benchmark's times, the count does
# not move with other processes on the machine (2026-11-24: one binary's order time ranged over
# 1.0-1.8 us from run to run, its count by under 1 %), so a change of a few percent shows here.
#
#   bench/cpu_path_instructions.sh [order|login] [path/to/cpu_path_bench]
#
# Counts only inside EventDecoder::decode, KeySpec::encode and Thrift2PutEncoder::encode (callgrind
# --toggle-collect), so the benchmark's setup (generating the events) is left out. The encoder runs
# once per 500-row batch, and is counted per row it encoded.
set -euo pipefail

kind=${1:-order}
bench=${2:-build/bench/cpu_path_bench}
case $kind in order | login) ;; *) echo "usage: $0 [order|login] [cpu_path_bench]" >&2 && exit 2 ;; esac
[[ -x $bench ]] || { echo "$bench: not built (scripts/build.sh)" >&2 && exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed (scripts/install-deps.sh)" >&2 && exit 2; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out" --collect-atstart=no \
  --toggle-collect='hbingest::event_formats::EventDecoder::decode*' \
  --toggle-collect='hbingest::keyspec::KeySpec::encode*' \
  --toggle-collect='hbingest::connectors::Thrift2PutEncoder::encode*' \
  "$bench" --benchmark_filter="/$kind\$" --benchmark_min_time=0.05 >/dev/null 2>&1

# Events: the calls of JsonEvent::parse, once per decode.
events=$(callgrind_annotate --tree=caller "$out" 2>/dev/null |
  sed -nE 's/.*=> .*JsonEvent::parse\(.*\(([0-9,]+)x\).*/\1/p' | head -1 | tr -d ,)
[[ -n $events && $events -gt 0 ]] || { echo "found no decoded events in callgrind's output" >&2 && exit 1; }
inclusive=$(callgrind_annotate --inclusive=yes "$out" 2>/dev/null)
total=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }' <<<"$inclusive")

# Rows encoded: the calls of the binary writer's put_tput, once per row of a full batch. The encoder's
# count is divided by these, not by the events: a run stops part-way through a batch whose rows
# were decoded but not yet encoded, and dividing by the events moved its share by up to ~20 %.
rows=$(callgrind_annotate --tree=caller "$out" 2>/dev/null |
  awk '/^$/ { block = "" } { block = block "\n" $0 } /\*  .*BinaryWriter::put_tput\(/ && !done { print block; done = 1 }' |
  sed -nE 's/.*< .*\(([0-9,]+)x\).*/\1/p' | head -1 | tr -d ,)
[[ -n $rows && $rows -gt 0 ]] || { echo "found no encoded rows in callgrind's output" >&2 && exit 1; }

count_of() { grep -F "$1(" <<<"$inclusive" | head -1 | awk '{ gsub(",", "", $1); print $1 }'; }
encoder=$(count_of Thrift2PutEncoder::encode)
echo "$kind: $events events ($rows rows encoded), instructions per event"
for function in EventDecoder::decode JsonEvent::parse JsonEvent::append_text JsonEvent::field KeySpec::encode; do
  count=$(count_of "$function")
  [[ -n $count ]] && printf '  %-28s %7d\n' "$function" $((count / events))
done
printf '  %-28s %7d   (per row encoded)\n' "Thrift2PutEncoder::encode" $((encoder / rows))
printf '  %-28s %7d\n' "total" $(((total - encoder) / events + encoder / rows))
