#!/usr/bin/env bash
# Benchmark: `ferry hash` vs `xxhsum -H2` (the anchor), same data, same run,
# files in the page cache. Prints seconds (best of N), throughput and the
# ratio xxhsum_time / ferry_time (above 1: ferry is faster).
#   bench_hash.sh [FERRY] [WORKDIR]
# Targets (issue #2): large file, -j 1: >= 0.9x; 10,000 small files, -j 2: >= 1.5x.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FERRY=$(realpath "${1:-$root/build/bin/ferry}")
work=${2:-$(mktemp -d /tmp/ferry-bench-hash.XXXXXX)}
RUNS=${RUNS:-5}
LARGE_MB=${LARGE_MB:-2048}
SMALL_FILES=${SMALL_FILES:-10000}
command -v xxhsum > /dev/null || { echo "needs xxhsum (apt: xxhash)"; exit 1; }

mkdir -p "$work"
source "$here/benchlib.sh"
if [ ! -f "$work/large.bin" ]; then
  echo "making ${LARGE_MB} MiB file and $SMALL_FILES small files in $work ..."
  head -c $((LARGE_MB * 1024 * 1024)) /dev/urandom > "$work/large.bin"
  /usr/bin/python3 - "$work/small" "$SMALL_FILES" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(2)
for i in range(n):
    d = os.path.join(root, f"d{i % 100:02d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i:05d}.bin"), "wb") as f:
        f.write(rng.randbytes(rng.randint(1024, 64 * 1024)))
PY
  (cd "$work" && find small -type f | LC_ALL=C sort > small.list)
fi
cat "$work/large.bin" > /dev/null; find "$work/small" -type f -exec cat {} + > /dev/null

ratio() { echo "scale=2; $1 / $2" | bc; }

cd "$work"
small_mb=$(du -sm --apparent-size small | cut -f1)
for _ in $(seq "$RUNS"); do
  run x_large xxhsum -H2 large.bin
  run f_large "$FERRY" hash -j 1 large.bin
  run x_small xargs -a small.list xxhsum -H2
  run f_small "$FERRY" hash -j 2 small
  run f_small1 "$FERRY" hash -j 1 small
done
secs() { echo "scale=3; ${best[$1]} / 1000" | bc; }
x_large=$(secs x_large) f_large=$(secs f_large) x_small=$(secs x_small)
f_small=$(secs f_small) f_small1=$(secs f_small1)
run both "$FERRY" hash -j 2 large.bin small
rss=${rss[both]}

printf '%-34s %9s %9s %8s\n' "case" "xxhsum s" "ferry s" "ratio"
printf '%-34s %9s %9s %8s   (%s MB/s vs %s MB/s)\n' "large file ${LARGE_MB} MiB, -j 1" \
  "$x_large" "$f_large" "$(ratio "$x_large" "$f_large")" \
  "$(echo "$LARGE_MB*1.048576/$f_large" | bc)" "$(echo "$LARGE_MB*1.048576/$x_large" | bc)"
printf '%-34s %9s %9s %8s\n' "$SMALL_FILES small files ($small_mb MB), -j 1" \
  "$x_small" "$f_small1" "$(ratio "$x_small" "$f_small1")"
printf '%-34s %9s %9s %8s\n' "$SMALL_FILES small files ($small_mb MB), -j 2" \
  "$x_small" "$f_small" "$(ratio "$x_small" "$f_small")"
echo "ferry hash -j 2 peak RSS over both: ${rss} KiB"
