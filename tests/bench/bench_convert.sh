#!/usr/bin/env bash
# Benchmark: `ferry convert` vs a Pillow script and vipsthumbnail (the
# anchors), on three PNG corpora (make_corpus.py), same settings (q90, 4:2:0),
# two workers each, inputs in the page cache. Rounds are interleaved (the
# machine is shared and noisy) and the median wall time of each tool is kept.
#   photos  COUNT=300 crops 480-1280 px, 80 % RGB        fit 512
#   small   400 RGB crops 200-500 px                     fit 224
#   nonrgb  300 crops 480-1280 px, 30 % RGBA/gray/palette/16-bit  fit 512
# Per corpus: images/s, ratios, peak RSS; ferry's CPU time per image (user +
# sys over all cores) beside the inflate-only floor (png_inflate_floor: the
# IDAT inflate with libdeflate, one core); and the mean absolute pixel
# difference of each tool's outputs against Pillow's.
#   bench_convert.sh [FERRY] [WORKDIR]      ROUNDS=5 CORPORA="photos small nonrgb"
# FERRY_BASE=other/ferry also runs that build in the same rounds (before/after).
# CPU-time ratios are printed too: less sensitive than wall time to other
# load on the machine.
# Target (issue #9): ferry >= 3.2x Pillow on each corpus.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
FERRY=$(realpath "${1:-$here/../../build/bin/ferry}")
work=${2:-/tmp/ferry-bench-convert}
ROUNDS=${ROUNDS:-5} CORPORA=${CORPORA:-photos small nonrgb}
for t in vipsthumbnail /usr/bin/python3 /usr/bin/time bc; do
  command -v "$t" > /dev/null || { echo "needs $t: tools/dev/install-deps.sh --bench"; exit 1; }
done
floor_bin=$(dirname "$FERRY")/png_inflate_floor
mkdir -p "$work"
source "$here/benchlib.sh"

bench_corpus() {  # MIX COUNT SIZE
  local mix=$1 count=$2 size=$3 t
  ensure_corpus "$count" "$mix"
  local load0
  load0=$(cut -d' ' -f1 /proc/loadavg)
  unset best rss walls cpus
  declare -gA best rss walls cpus
  local vips_all="ls '$corpus'/*.png | xargs -P 2 -n 25 vipsthumbnail -s ${size}x${size} \
    -o '$work/out-vips/%s.jpg[Q=90,strip,subsample_mode=on]'"
  for _ in $(seq "$ROUNDS"); do
    # Fresh outputs each round (ferry would keep up-to-date ones).
    rm -rf "$work"/out-{ferry,pillow,vips} && mkdir -p "$work"/out-{ferry,pillow,vips}
    run ferry "$FERRY" convert "$corpus" "$work/out-ferry" --size "$size" --quality 90 -j 2 -q
    if [ -n "${FERRY_BASE:-}" ]; then
      rm -rf "$work/out-base"
      run base "$FERRY_BASE" convert "$corpus" "$work/out-base" --size "$size" --quality 90 -j 2 -q
    fi
    run pillow /usr/bin/python3 "$here/pillow_convert.py" "$corpus" "$work/out-pillow" "$size" 2
    run vips bash -c "$vips_all"
  done
  local tools="ferry pillow vips"
  if [ -n "${FERRY_BASE:-}" ]; then tools+=" base"; fi
  declare -A med cpu
  for t in $tools; do
    med[$t]=$(median "${walls[$t]}")
    cpu[$t]=$(median "${cpus[$t]}")
  done
  echo "== $mix: $count PNGs, fit $size, median of $ROUNDS interleaved rounds (load before: $load0, after: $(cut -d' ' -f1 /proc/loadavg))"
  printf '%-8s %8s %10s %10s\n' tool seconds images/s "peak RSS"
  for t in $tools; do
    printf '%-8s %8s %10s %8s MB\n' "$t" "$(echo "scale=2; ${med[$t]} / 1000" | bc)" \
      "$(echo "scale=1; $count * 1000 / ${med[$t]}" | bc)" "$(( ${rss[$t]:-0} / 1024 ))"
  done
  echo "ferry / pillow:        $(echo "scale=2; ${med[pillow]} / ${med[ferry]}" | bc)x"
  echo "ferry / vipsthumbnail: $(echo "scale=2; ${med[vips]} / ${med[ferry]}" | bc)x"
  if [ -n "${FERRY_BASE:-}" ]; then
    echo "base  / pillow:        $(echo "scale=2; ${med[pillow]} / ${med[base]}" | bc)x"
  fi
  echo "CPU time ferry/pillow: $(echo "scale=2; ${cpu[pillow]} / ${cpu[ferry]}" | bc)x, ferry/vips $(echo "scale=2; ${cpu[vips]} / ${cpu[ferry]}" | bc)x"
  if [ -n "${FERRY_BASE:-}" ]; then
    echo "CPU time base/pillow:  $(echo "scale=2; ${cpu[pillow]} / ${cpu[base]}" | bc)x"
  fi
  echo "ferry CPU per image:   $(echo "scale=2; ${cpu[ferry]} / $count" | bc) ms (user+sys, all cores)"
  if [ -n "${FERRY_BASE:-}" ]; then
    echo "base  CPU per image:   $(echo "scale=2; ${cpu[base]} / $count" | bc) ms"
  fi
  if [ -x "$floor_bin" ]; then
    echo "inflate-only floor:    $("$floor_bin" "$corpus"/*.png | awk '{print $2}') ms (libdeflate, one core)"
  fi
  echo "ferry  vs pillow: $(/usr/bin/python3 "$here/compare_outputs.py" "$work/out-pillow" "$work/out-ferry")"
  echo "vips   vs pillow: $(/usr/bin/python3 "$here/compare_outputs.py" "$work/out-pillow" "$work/out-vips")"
}

for c in $CORPORA; do
  case $c in
    photos) bench_corpus photos "${COUNT:-300}" 512 ;;
    small) bench_corpus small 400 224 ;;
    nonrgb) bench_corpus nonrgb 300 512 ;;
    *) echo "unknown corpus $c"; exit 2 ;;
  esac
done
