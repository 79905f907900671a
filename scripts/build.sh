#!/usr/bin/env bash
# Configures and builds hbingest into $BUILD_DIR (default build/). Extra arguments go to cmake.
# BUILD_TARGET: build only that target (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} -DHBINGEST_WERROR=ON "$@" >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" ${BUILD_TARGET:+--target "$BUILD_TARGET"}
