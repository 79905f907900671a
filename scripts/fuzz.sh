#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) into build-fuzz (or FUZZ_BUILD_DIR) and runs each for SECONDS (default
# 30, at most 60) over a temporary copy of its checked-in corpus; fails on any crash. FUZZ_JOBS
# (default 1) targets run at a time, each on one core. Longer runs: tests/fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-30}
if ! [[ $SECONDS_PER_TARGET =~ ^[0-9]+$ ]] || ((SECONDS_PER_TARGET < 1 || SECONDS_PER_TARGET > 60)); then
  echo "usage: scripts/fuzz.sh [SECONDS 1..60]" >&2
  exit 2
fi
if ! command -v clang >/dev/null || ! command -v clang++ >/dev/null; then
  echo "fuzz: SKIPPED (clang not installed; apt-get install clang libclang-rt-14-dev)"
  exit 0
fi
TARGETS=(keyspec_fuzz keyspec_roundtrip_fuzz event_decoder_fuzz field_path_fuzz avro_format_fuzz protobuf_format_fuzz
  config_fuzz events_handler_fuzz value_codec_fuzz sasl_frame_fuzz)
# FUZZ_BUILD_DIR may name a clang build already configured with -DHBINGEST_BUILD_FUZZ=ON (test.sh
# passes its sanitizer build); otherwise build-fuzz is configured for the fuzz targets alone.
build_dir=$(realpath -m "${FUZZ_BUILD_DIR:-build-fuzz}")
if ! grep -qs '^HBINGEST_BUILD_FUZZ:BOOL=ON$' "$build_dir/CMakeCache.txt"; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHBINGEST_BUILD_FUZZ=ON \
    -DHBINGEST_BUILD_TESTS=OFF -DHBINGEST_BUILD_BENCH=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
fi
cmake --build "$build_dir" --target "${TARGETS[@]}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
JOBS=${FUZZ_JOBS:-1}
if ! [[ $JOBS =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz: FUZZ_JOBS must be a positive number, not '$JOBS'" >&2
  exit 2
fi

# One target in its own directory (artifacts such as crash-* land there); its report in $work/$target.out.
fuzz_one() {
  local target=$1 dict=()
  mkdir -p "$work/$target" "$work/run-$target"
  cp -r "tests/fuzz/corpus/$target/." "$work/$target/"
  [[ -f tests/fuzz/$target.dict ]] && dict=(-dict="$PWD/tests/fuzz/$target.dict")  # the fuzzer runs in run-$target
  echo "fuzz: $target for ${SECONDS_PER_TARGET}s" >"$work/$target.out"
  if ! (cd "$work/run-$target" && "$build_dir/tests/fuzz/$target" "${dict[@]}" -max_total_time="$SECONDS_PER_TARGET" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$work/$target" </dev/null >"$work/$target.log" 2>&1); then
    {
      echo "fuzz: $target FAILED; crash input and log:"
      tail -n 60 "$work/$target.log"
    } >>"$work/$target.out"
    cp "$work/run-$target"/crash-* "$work/run-$target"/leak-* "$work/run-$target"/timeout-* \
      "$work/run-$target"/oom-* . 2>/dev/null || true
    return 1
  fi
  grep -E '^(Done|stat::number_of_executed_units|#[0-9]+ +DONE)' "$work/$target.log" | tail -n 2 >>"$work/$target.out" || true
}

declare -A pid_of
for target in "${TARGETS[@]}"; do
  while (($(jobs -rp | wc -l) >= JOBS)); do wait -n || true; done
  fuzz_one "$target" &
  pid_of[$target]=$!
done
failed=0
for target in "${TARGETS[@]}"; do
  if wait "${pid_of[$target]}"; then
    cat "$work/$target.out"
  else
    cat "$work/$target.out" >&2
    failed=1
  fi
done
exit "$failed"
