#!/usr/bin/env bash
# Benchmark: `ferry verify` (no --deep) on a pack output in the page cache
# against `xxhsum -H2` over the same files, same run, best of 3. Target
# (issue #6): verify >= 0.8x xxhsum's throughput; -j 2 uses both cores.
#   bench_verify.sh [FERRY] [WORKDIR]      COPIES=10 (x 300 images at 1024 px)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
FERRY=$(realpath "${1:-$here/../../build/bin/ferry}")
work=${2:-/tmp/ferry-bench-convert}
COUNT=${COUNT:-300} COPIES=${COPIES:-10}
mkdir -p "$work"
source "$here/benchlib.sh"
ensure_corpus "$COUNT"
src="$work/verify-src-$COPIES"
if [ ! -d "$src" ]; then
  for c in $(seq "$COPIES"); do
    mkdir -p "$src/class$c"
    for f in "$corpus"/*; do ln -s "$f" "$src/class$c/"; done
  done
fi
out="$work/verify-pack-$COPIES"
[ -f "$out/dataset.json" ] || "$FERRY" pack "$src" "$out" --size 1024 --quality 95 -j 2 -q
cat "$out"/* > /dev/null
mb=$(du -sm --apparent-size "$out" | cut -f1)
for _ in 1 2 3; do
  run xxhsum bash -c "xxhsum -H2 '$out'/*"
  run verify1 "$FERRY" verify "$out" -j 1
  run verify2 "$FERRY" verify "$out" -j 2
done
x=${best[xxhsum]} v1=${best[verify1]} v2=${best[verify2]}
echo "pack output: $mb MB, $(ls "$out" | grep -c -E 'tfrecord$') shards"
echo "xxhsum -H2:           ${x} ms  ($(echo "$mb * 1000 / $x" | bc) MB/s)"
echo "ferry verify -j 1:    ${v1} ms  ($(echo "$mb * 1000 / $v1" | bc) MB/s)  ratio $(echo "scale=2; $x / $v1" | bc)x"
echo "ferry verify -j 2:    ${v2} ms  ($(echo "$mb * 1000 / $v2" | bc) MB/s)  ratio $(echo "scale=2; $x / $v2" | bc)x"
