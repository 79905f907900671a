#!/usr/bin/env bash
# ThreadSanitizer run: builds build-tsan (clang when installed, else gcc) and runs the unit tests of
# code that runs threads of its own (declared THREADS in their CMakeLists: writer pool, pipeline over
# fakes, table watch, parallel scans, HTTP server, query engine, schema cache, ticket keeper, fake
# gateways): TSan finds nothing in single-threaded parsers, so only the target `threaded_unit_tests`
# is built (the other tests show as <target>_NOT_BUILT). Not the Kafka ones (KafkaSource,
# KafkaProducer, DeadLetterProducer, the pipeline on the mock cluster): Debian's librdkafka starts
# its threads with C11 thrd_create, which neither GCC 12's nor clang 14's TSan runtime intercepts,
# and they crash inside it (SEGV in __tsan_func_entry) before any test code runs. Test executables
# are unity builds, as in the ASan tree of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
compilers=()
if command -v clang++ >/dev/null; then compilers=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++); fi
BUILD_DIR=build-tsan BUILD_TYPE=Debug BUILD_TARGET=threaded_unit_tests scripts/build.sh -DHBINGEST_SANITIZE=thread -DHBINGEST_BUILD_BENCH=OFF \
  -DHBINGEST_BUILD_INTEGRATION_TESTS=OFF -DHBINGEST_UNITY_TESTS=ON -DCMAKE_UNITY_BUILD=OFF "${compilers[@]}"
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/sanitizers/tsan_suppressions.txt" \
  ctest --test-dir build-tsan -L unit -E "Kafka|DeadLetterProducer|_NOT_BUILT" --no-tests=error --output-on-failure -j2
