#!/usr/bin/env bash
# Issue 26 measurements, reduced scale (200,000 events, 2 rounds) to fit the session; run in a quiet window.
set -uo pipefail
cd /work/main
export HBSTACK_DIR=/tmp/stack-bench HBSTACK_PORT_OFFSET=3000
O=/tmp/i26-results; mkdir -p $O
B=/tmp/before/hbingest
E="--events 200000 --rounds 2 --partitions 12"
run_both() { name=$1; shift
  echo "== $name before $(date +%T)"; bench/compare.sh --hbingest $B $E "$@" --out $O/before-$name.md > $O/before-$name.log 2>&1; echo "exit $?"
  echo "== $name after $(date +%T)"; bench/compare.sh $E "$@" --out $O/after-$name.md > $O/after-$name.log 2>&1; echo "exit $?"; }
run_both local   --contenders hbingest,java,ceiling
run_both link1ms --contenders hbingest,ceiling --link-latency 1
run_both onecore --contenders hbingest,ceiling --client-cpus 0
echo "== restart $(date +%T)"; bench/restart.sh --membership both --repeats 1 --out $O/after-restart.md > $O/after-restart.log 2>&1; echo "exit $?"
echo "== queries after $(date +%T)"; bench/compare.sh $E --contenders hbingest,ceiling --queries --out $O/after-queries.md > $O/after-queries.log 2>&1; echo "exit $?"
# echo "== packed after $(date +%T)"; bench/compare.sh --events 200000 --rounds 1 --packed --out $O/after-packed.md > $O/after-packed.log 2>&1; echo "exit $?"
echo "== done $(date +%T)"
