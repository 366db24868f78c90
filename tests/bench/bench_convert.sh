#!/usr/bin/env bash
# Benchmark: `ferry convert` vs a Pillow script and vipsthumbnail (the
# anchors), on the same PNG corpus, same settings (fit 512, q90, 4:2:0), two
# workers each, inputs in the page cache. Rounds are interleaved and the best
# wall time of each tool is kept (the machine is shared and noisy).
# Prints images/s, ratios, peak RSS, and the mean absolute pixel difference
# of each tool's outputs against Pillow's.
#   bench_convert.sh [FERRY] [WORKDIR]        COUNT=300 ROUNDS=3 SIZE=512
# Target (issue #3): ferry >= 3x Pillow and >= 3x vipsthumbnail.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
FERRY=$(realpath "${1:-$here/../../build/bin/ferry}")
work=${2:-/tmp/ferry-bench-convert}
COUNT=${COUNT:-300} ROUNDS=${ROUNDS:-3} SIZE=${SIZE:-512}
for t in vipsthumbnail /usr/bin/python3 /usr/bin/time; do
  command -v "$t" > /dev/null || { echo "needs $t: tools/dev/install-deps.sh --bench"; exit 1; }
done
mkdir -p "$work"
source "$here/benchlib.sh"
ensure_corpus "$COUNT"

vips_all="ls '$corpus'/*.png | xargs -P 2 -n 25 vipsthumbnail -s ${SIZE}x${SIZE} \
  -o '$work/out-vips/%s.jpg[Q=90,strip,subsample_mode=on]'"
for r in $(seq "$ROUNDS"); do
  # Fresh outputs each round (ferry would keep up-to-date ones).
  rm -rf "$work"/out-{ferry,pillow,vips} && mkdir -p "$work"/out-{ferry,pillow,vips}
  run ferry "$FERRY" convert "$corpus" "$work/out-ferry" --size "$SIZE" --quality 90 -j 2 -q
  run pillow /usr/bin/python3 "$here/pillow_convert.py" "$corpus" "$work/out-pillow" "$SIZE" 2
  run vips bash -c "$vips_all"
done

ips() { echo "scale=1; $COUNT * 1000 / $1" | bc; }
printf '%-8s %8s %10s %10s\n' tool seconds images/s "peak RSS"
for t in ferry pillow vips; do
  printf '%-8s %8s %10s %8s MB\n' "$t" "$(echo "scale=2; ${best[$t]} / 1000" | bc)" \
    "$(ips "${best[$t]}")" "$(( ${rss[$t]:-0} / 1024 ))"
done
echo "ferry / pillow:        $(echo "scale=2; ${best[pillow]} / ${best[ferry]}" | bc)x"
echo "ferry / vipsthumbnail: $(echo "scale=2; ${best[vips]} / ${best[ferry]}" | bc)x"
echo "ferry  vs pillow: $(/usr/bin/python3 "$here/compare_outputs.py" "$work/out-pillow" "$work/out-ferry")"
echo "vips   vs pillow: $(/usr/bin/python3 "$here/compare_outputs.py" "$work/out-pillow" "$work/out-vips")"
