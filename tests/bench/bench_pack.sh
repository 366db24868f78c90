#!/usr/bin/env bash
# Benchmark: `ferry pack` (TFRecord, 7:2:1) vs `ferry convert` on the convert
# benchmark corpus, same image settings, same run, best of 3 interleaved
# rounds; plus the TFRecord framing microbenchmark. Target (issue #5): pack
# >= 0.9x convert's images/s; framing >= 2 GB/s; RSS flat.
#   bench_pack.sh [FERRY] [WORKDIR]       COUNT=300 ROUNDS=3
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
FERRY=$(realpath "${1:-$here/../../build/bin/ferry}")
work=${2:-/tmp/ferry-bench-convert}
COUNT=${COUNT:-300} ROUNDS=${ROUNDS:-3}
mkdir -p "$work"
source "$here/benchlib.sh"
ensure_corpus "$COUNT"
# One class folder of links to the corpus (links to directories are not walked).
if [ ! -d "$work/cls/all" ]; then
  mkdir -p "$work/cls/all"
  for f in "$corpus"/*; do ln -s "$f" "$work/cls/all/"; done
fi
for r in $(seq "$ROUNDS"); do
  rm -rf "$work/out-convert" "$work/out-pack"
  run convert "$FERRY" convert "$corpus" "$work/out-convert" --size 512 -j 2 -q
  run pack "$FERRY" pack "$work/cls" "$work/out-pack" --size 512 -j 2 -q
done
for t in convert pack; do
  echo "$t: $(echo "scale=2; ${best[$t]} / 1000" | bc) s, $(echo "scale=1; $COUNT * 1000 / ${best[$t]}" | bc) images/s, peak RSS $(( ${rss[$t]} / 1024 )) MB"
done
echo "pack / convert images/s: $(echo "scale=2; ${best[convert]} / ${best[pack]}" | bc)x"
bench_bin=$(dirname "$FERRY")/tfrecord_bench
if [ -x "$bench_bin" ]; then
  "$bench_bin" --benchmark_min_time=0.5 2>/dev/null | grep -E 'BM_' | awk '{print $1, $(NF-1), $NF}'
fi
