#!/usr/bin/env bash
# Configures and builds ferry into BUILD_DIR (default: build/), two jobs.
# Extra arguments go to cmake's configure step; BUILD_TARGET limits the build.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja "$@" > "$build/configure.log" 2>&1 \
  || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j 2 ${BUILD_TARGET:+--target "$BUILD_TARGET"}
