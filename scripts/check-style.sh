#!/usr/bin/env bash
# House style: clang-format (no diff allowed) and clang-tidy (.clang-tidy's checks, as errors) over
# every C++ file of the project. Needs a configured build dir for clang-tidy (compile_commands.json).
# Usage: scripts/check-style.sh [BUILD_DIR]   (default build/). Skips, saying so, without the tools.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}

mapfile -t sources < <(git ls-files '*.cpp' '*.h' | grep -v '^tests/fuzz/corpus/')
if ! command -v clang-format >/dev/null || ! command -v clang-tidy >/dev/null; then
  echo "check-style: clang-format/clang-tidy not installed (scripts/install-deps.sh installs them); skipped"
  exit 0
fi

echo "check-style: clang-format on ${#sources[@]} files"
clang-format --dry-run --Werror "${sources[@]}"

# clang-tidy reads the compile commands of the translation units; headers are checked through them.
mapfile -t units < <(git ls-files '*.cpp' | grep -v '^tests/fuzz/')
echo "check-style: clang-tidy on ${#units[@]} translation units"
printf '%s\n' "${units[@]}" | xargs -P "$(nproc)" -n 8 clang-tidy -p "$BUILD_DIR" --quiet 2> >(grep -v 'warnings generated' >&2)
echo "check-style: ok"
