#!/usr/bin/env bash
# Issue 26, second run (2026-11-26 14:50-15:08 UTC): before and after in the same rounds (--baseline), and the CPU an idle query costs each process at two limits. The packed run: bench/compare.sh --events 200000 --rounds 2 --partitions 12 --packed --contenders hbingest,hbingest_packed,ceiling,ceiling_packed
set -uo pipefail
cd /work/main
export HBSTACK_DIR=/tmp/stack-bench HBSTACK_PORT_OFFSET=3000
O=/tmp/i26b-results; mkdir -p $O
B=/tmp/before/hbingest
E="--events 200000 --rounds 3 --partitions 12"
echo "== local $(date +%T)"; bench/compare.sh $E --contenders hbingest,baseline,ceiling --baseline $B --out $O/local.md > $O/local.log 2>&1; echo "exit $?"
echo "== link1ms $(date +%T)"; bench/compare.sh $E --contenders hbingest,baseline,ceiling --baseline $B --link-latency 1 --out $O/link1ms.md > $O/link1ms.log 2>&1; echo "exit $?"
echo "== queries limit 1000 at 5/s $(date +%T)"; (bench/results/issue26/same-rounds/perf_idle.sh $O/perf-q1000.data > $O/perf-q1000.log 2>&1 &); bench/compare.sh --events 100000 --rounds 1 --partitions 12 --contenders hbingest --warmup-runs 1 --queries --query-rate 5 --query-seconds 20 --query-limit 1000 --out $O/q1000.md > $O/q1000.log 2>&1; echo "exit $?"
echo "== queries limit 10 at 5/s $(date +%T)"; bench/compare.sh --events 100000 --rounds 1 --partitions 12 --contenders hbingest --warmup-runs 1 --queries --query-rate 5 --query-seconds 20 --query-limit 10 --out $O/q10.md > $O/q10.log 2>&1; echo "exit $?"
echo "== done $(date +%T)"
