#!/usr/bin/env bash
# README command (b): install everything, build, and run every test — unit tests (under ASan+UBSan,
# and those of threaded code under TSan), the fuzz targets, then integration, robustness and fault tests
# against a real Kafka broker and a real HBase with its Thrift2/Thrift1 servers, which this script
# starts and stops on 127.0.0.1, with Toxiproxy between them and the daemon.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

scripts/install-deps.sh
# Compiling is most of this script's CPU on a fresh 2-core machine, so each tree is built the
# cheapest way that still tests what ships:
# - The optimized tree holds what the stack tier runs, with line tables only (-g1): GCC's full debug
#   info for optimized code (variable tracking) took about a third of the largest files' compile time.
#   The unit tests are built and run (and compiled by clang with -Werror) in the sanitizer tree
#   below: once is enough.
# - The sanitizer trees build their test executables as unity builds (CMake joins a test's sources
#   into a few files), which parse gtest and the shared headers once per batch instead of once per
#   file. The libraries stay one file at a time, as everywhere, and so does `build/`, whose compile
#   commands clang-tidy reads.
BUILD_DIR=build BUILD_TARGET=stack_tier_tests scripts/build.sh -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
# Sanitizer configuration: unit tests only (integration tests would time real JVMs, not our code).
# With clang the same build also holds the libFuzzer targets, so CI compiles the tree once for both.
sanitizer_build=(-DHBINGEST_SANITIZE=address -DHBINGEST_BUILD_BENCH=OFF -DHBINGEST_BUILD_INTEGRATION_TESTS=OFF
  -DHBINGEST_UNITY_TESTS=ON -DCMAKE_UNITY_BUILD=OFF)
if command -v clang++ >/dev/null; then
  sanitizer_build+=(-DHBINGEST_BUILD_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
fi
BUILD_DIR=build-asan BUILD_TYPE=Debug scripts/build.sh "${sanitizer_build[@]}"

echo "== unit tests (ASan+UBSan) ($(($(date +%s) - started)) s)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -L unit --output-on-failure -j2

# A private stack for this run: its own state dir, torn down on exit whatever happens.
export HBSTACK_DIR=${HBSTACK_DIR:-$(mktemp -d /tmp/hbingest-test-stack.XXXXXX)}
# Ports shifted by 1000 so a demo stack on the default ports can keep running.
export HBSTACK_PORT_OFFSET=${HBSTACK_PORT_OFFSET:-1000}
# With its Kerberos tier: a KDC of its own, a secure HBase with a SASL gateway, a GSSAPI Kafka listener
# (stack/README.md, "Kerberos"); the Kerberos tests run under the lock `kerberos` beside the rest.
export HBSTACK_KERBEROS=1
cleanup() { stack/hbstack down --purge >/dev/null 2>&1 || true; }
trap cleanup EXIT

# House style (clang-format, clang-tidy) and ThreadSanitizer (build and unit tests) in the
# background from here on, niced: the fuzz targets run for a fixed time whatever CPU they get, and
# the stack tier mostly waits on JVMs and injected faults, so the CPU is there; their result is
# checked after the stack tier. The log ends with when they finished, to tell whether they held
# the run up.
echo "== house style and ThreadSanitizer, in the background: build-tsan.log ($(($(date +%s) - started)) s)"
(
  nice -n 10 scripts/check-style.sh build && nice -n 10 scripts/tsan.sh
  status=$?
  echo "test.sh: house style and ThreadSanitizer ended with status $status at $(($(date +%s) - started)) s"
  exit "$status"
) >build-tsan.log 2>&1 &
tsan_pid=$!

# The stack's JVMs start meanwhile (a fuzz target runs for its seconds whatever CPU it gets).
echo "== stack starting in the background: build-stack-up.log ($(($(date +%s) - started)) s)"
stack/hbstack up </dev/null >build-stack-up.log 2>&1 &
stack_pid=$!

echo "== fuzz targets, 5 s each (after replaying their corpus), two at a time; longer runs: tests/fuzz/README.md ($(($(date +%s) - started)) s)"
FUZZ_BUILD_DIR=build-asan FUZZ_JOBS=2 scripts/fuzz.sh 5

echo "== stack up ($(($(date +%s) - started)) s)"
if ! wait "$stack_pid"; then
  cat build-stack-up.log
  echo "test.sh: stack/hbstack up failed (build-stack-up.log)" >&2
  exit 1
fi
cat build-stack-up.log
eval "$(stack/hbstack env)"

echo "== integration, robustness and fault tests against the real stack ($(($(date +%s) - started)) s)"
# Two at a time: files that stop or kill stack processes are RUN_SERIAL and run first, one by one;
# files whose faults hit only what they own pair up with the rest (tests/integration/CMakeLists.txt).
ctest --test-dir build -LE unit -E _NOT_BUILT --no-tests=error --output-on-failure -j2 --timeout 900
echo "== house style and ThreadSanitizer result ($(($(date +%s) - started)) s)"
if ! wait "$tsan_pid"; then
  tail -n 80 build-tsan.log
  echo "test.sh: house style or ThreadSanitizer failed (build-tsan.log)" >&2
  exit 1
fi
tail -n 3 build-tsan.log
echo "test.sh: all tests passed in $(( $(date +%s) - started )) s"
