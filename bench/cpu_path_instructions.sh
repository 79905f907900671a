#!/usr/bin/env bash
# Instructions per event of the ingest CPU path (decode + row key + Thrift encoding), counted by
# valgrind's callgrind in build/bench/cpu_path_bench, for one event kind in one input format. Unlike
# the benchmark's times, the count does not move with other processes on the machine (2026-11-24:
# one binary's order time ranged over 1.0-1.8 us from run to run, its count by under 1 %), so a
# change of a few percent shows here.
#
#   bench/cpu_path_instructions.sh [order|login] [json|json_schema|avro|protobuf] [path/to/cpu_path_bench]
#
# Counts only inside EventDecoder::decode, KeySpec::encode and Thrift2PutEncoder::encode (callgrind
# --toggle-collect), and only in the benchmark's timed loop (it zeroes callgrind's counts when the
# loop starts), so the setup (generating and converting the events, fetching and parsing the
# schemas, comparing every event's row with its JSON twin's) is left out. The encoder runs once per
# 500-row batch, and is counted per row it encoded.
set -euo pipefail

kind=${1:-order}
format=${2:-json}
bench=${3:-build/bench/cpu_path_bench}
usage="usage: $0 [order|login] [json|json_schema|avro|protobuf] [cpu_path_bench]"
case $kind in order | login) ;; *) echo "$usage" >&2 && exit 2 ;; esac
# Per format: its InputFormat::parse, what that calls to read the bytes, and its record's cell text
# and field lookups (the decoder's and the key spec's).
case $format in
  json) functions="JsonFormat::parse JsonEvent::parse JsonEvent::append_text JsonEvent::field" ;;
  json_schema) functions="JsonSchemaFormat::parse read_confluent_frame JsonEvent::parse JsonEvent::append_text JsonEvent::field" ;;
  avro) functions="AvroFormat::parse Checker::value AvroRecord::view AvroRecord::append_text AvroRecord::field" ;;
  # (the wire bytes read in place; libprotobuf's parse and record for messages left to it)
  protobuf) functions="ProtobufFormat::parse Checker::check ProtobufWireRecord::append_text ProtobufWireRecord::field Message::ParsePartialFromArray MessageLite::ParsePartialFromArray ProtobufRecord::append_text ProtobufRecord::field" ;;
  *) echo "$usage" >&2 && exit 2 ;;
esac
[[ -x $bench ]] || { echo "$bench: not built (scripts/build.sh)" >&2 && exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed (scripts/install-deps.sh)" >&2 && exit 2; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out" --collect-atstart=no \
  --toggle-collect='hbingest::event_formats::EventDecoder::decode*' \
  --toggle-collect='hbingest::keyspec::KeySpec::encode*' \
  --toggle-collect='hbingest::connectors::Thrift2PutEncoder::encode*' \
  "$bench" --benchmark_filter="/$kind/$format\$" --benchmark_min_time=0.2 >/dev/null 2>&1

# Events: the benchmark loop's calls of EventDecoder::decode (one per event, in every format).
tree=$(callgrind_annotate --tree=caller --threshold=100 --auto=no "$out" 2>/dev/null)
events=$(awk '/^$/ { block = "" } { block = block "\n" $0 }
  /\*  .*EventDecoder::decode\(/ && !done { if (block ~ /< [^\n]*BM_CpuPath/) { print block; done = 1 } }' <<<"$tree" |
  sed -nE 's/.*< .*BM_CpuPath.*\(([0-9,]+)x\).*/\1/p' | head -1 | tr -d ,)
[[ -n $events && $events -gt 0 ]] || { echo "found no decoded events in callgrind's output" >&2 && exit 1; }
inclusive=$(callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$out" 2>/dev/null)
total=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }' <<<"$inclusive")

# Rows encoded: the calls of the binary writer's put_tput, once per row of a full batch. The encoder's
# count is divided by these, not by the events: a run stops part-way through a batch whose rows
# were decoded but not yet encoded, and dividing by the events moved its share by up to ~20 %.
rows=$(awk '/^$/ { block = "" } { block = block "\n" $0 } /\*  .*BinaryWriter::put_tput\(/ && !done { print block; done = 1 }' <<<"$tree" |
  sed -nE 's/.*< .*\(([0-9,]+)x\).*/\1/p' | head -1 | tr -d ,)
[[ -n $rows && $rows -gt 0 ]] || { echo "found no encoded rows in callgrind's output" >&2 && exit 1; }

# A function's inclusive count: its largest entry (callgrind lists inlined parts by source file).
count_of() { { grep -F "$1(" <<<"$inclusive" || true; } | head -1 | awk '{ gsub(",", "", $1); print $1 }'; }
encoder=$(count_of Thrift2PutEncoder::encode)
echo "$kind/$format: $events events ($rows rows encoded), instructions per event"
for function in EventDecoder::decode $functions KeySpec::encode; do
  count=$(count_of "$function")
  [[ -n $count ]] && printf '  %-40s %7d\n' "$function" $((count / events))
done
printf '  %-40s %7d   (per row encoded)\n' "Thrift2PutEncoder::encode" $((encoder / rows))
printf '  %-40s %7d\n' "total" $(((total - encoder) / events + encoder / rows))
