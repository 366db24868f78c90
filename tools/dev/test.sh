#!/usr/bin/env bash
# README command 2: install what is missing, build, and run the whole test
# suite (unit, CLI, package, fuzz corpus replay, and integration tests against
# real nginx and s3rver, which ctest starts and stops itself).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/tools/dev/install-deps.sh"
"$root/tools/dev/build.sh"
cd "${BUILD_DIR:-$root/build}"
ctest -j 2 --output-on-failure --timeout 600
