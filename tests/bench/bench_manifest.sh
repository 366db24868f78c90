#!/usr/bin/env bash
# Benchmark: the manifest format (formats/manifest) at scale. Writes a
# manifest of N synthetic entries (~70 bytes each before compression; random
# hashes, so little compresses) streaming, reads it back streaming, and
# prints wall time and peak RSS of each side, RSS per entry, and the RSS of
# the same steps at N/10 (flat memory: the two should be about equal).
# Issue #12 targets: <= 400 bytes of RSS per entry for a 1,000,000-file
# manifest; read, diff and plan <= 2 s (this measures the read part).
#   bench_manifest.sh [MANIFEST_TOOL] [WORKDIR]      N=1000000
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
TOOL=$(realpath "${1:-$here/../../build/bin/manifest_tool}")
work=${2:-/tmp/ferry-bench-manifest}
N=${N:-1000000}
mkdir -p "$work"

run() {  # LABEL CMD... -> "LABEL: <json> wall S rss KB"
  local label=$1; shift
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" > "$work/out"
  read -r wall rss < "$work/time"
  echo "$label: $(cat "$work/out") wall ${wall}s peak_rss ${rss}KB"
  last_rss=$rss
}

for n in $((N / 10)) "$N"; do
  run "write $n" "$TOOL" synth "$n" "$work/m$n"
  w=$last_rss
  run "read  $n" "$TOOL" read "$work/m$n"
  r=$last_rss
  echo "  $n entries: $(stat -c %s "$work/m$n") bytes;" \
       "write $(echo "scale=1; $w * 1024 / $n" | bc) B/entry," \
       "read $(echo "scale=1; $r * 1024 / $n" | bc) B/entry"
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
