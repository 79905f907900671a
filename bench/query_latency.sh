#!/usr/bin/env bash
# The query benchmark as a user with a remote cluster sees it: build/bench/query_bench queries the
# gateway directly (loopback) and through Toxiproxy with an added round trip of each of
# $QUERY_LATENCY_RTT_MS milliseconds (default "1 2 4", i.e. 0.5, 1 and 2 ms per direction; empty:
# loopback only).
# Toxiproxy's latency toxic takes whole milliseconds per direction, so an odd round trip puts the
# extra millisecond on the response direction only.
#
#   eval "$(stack/hbstack env)"
#   bench/query_latency.sh --rows 300000 --buckets 10,20,100 --repeat 15
#
# Arguments go to query_bench (QUERY_BENCH overrides the binary). The gateway is $HBINGEST_THRIFT2.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bench=${QUERY_BENCH:-$root/build/bench/query_bench}
server=$root/.tools/bin/toxiproxy-server
upstream=${HBINGEST_THRIFT2:?set HBINGEST_THRIFT2 (eval "\$(stack/hbstack env)")}
[[ -x $bench ]] || { echo "query_latency: $bench is missing: build first" >&2; exit 1; }
[[ -x $server ]] || { echo "query_latency: $server is missing: run scripts/install-deps.sh" >&2; exit 1; }

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

api_port=$(free_port)
api=http://127.0.0.1:$api_port
log=$(mktemp -t query-latency-toxiproxy.XXXXXX.log)
"$server" -host 127.0.0.1 -port "$api_port" >"$log" 2>&1 &
toxiproxy_pid=$!
trap 'kill "$toxiproxy_pid" 2>/dev/null; wait "$toxiproxy_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  curl -sf "$api/version" >/dev/null && break
  sleep 0.1
done
curl -sf "$api/version" >/dev/null || { echo "query_latency: toxiproxy did not start (log: $log)" >&2; exit 1; }

toxiproxy() {  # METHOD PATH JSON
  curl -sf -X "$1" -H 'Content-Type: application/json' -d "$3" "$api$2" >/dev/null ||
    { echo "query_latency: toxiproxy $1 $2 failed" >&2; exit 1; }
}

vias=()
for rtt in ${QUERY_LATENCY_RTT_MS-1 2 4}; do
  name=rtt${rtt}ms
  listen=127.0.0.1:$(free_port)
  toxiproxy POST /proxies "{\"name\":\"$name\",\"listen\":\"$listen\",\"upstream\":\"$upstream\",\"enabled\":true}"
  up=$((rtt / 2))
  down=$((rtt - up))
  for stream in upstream downstream; do
    ms=$up
    [[ $stream == downstream ]] && ms=$down
    ((ms > 0)) || continue
    toxiproxy POST "/proxies/$name/toxics" \
      "{\"name\":\"lat_$stream\",\"type\":\"latency\",\"stream\":\"$stream\",\"toxicity\":1.0,\"attributes\":{\"latency\":$ms,\"jitter\":0}}"
  done
  vias+=(--via "$name=$listen")
done

"$bench" --thrift2 "$upstream" "${vias[@]}" "$@"
