#!/usr/bin/env bash
# Benchmark: lib/delta (tests/unit/delta/delta_tool) vs `rdiff` (the anchor,
# the same librsync), same files, same run, rounds interleaved, files in the
# page cache. A 256 MB random file `old`; `same` is a copy (unchanged data:
# every block matches), `changed` other random bytes (fully changed: no
# block matches, the rolling scan runs over every byte).
# Prints median seconds, MB/s and ratio rdiff_time / ferry_time (above 1:
# ferry is faster) for: signature, delta unchanged, delta fully changed, patch.
#   bench_delta.sh [DELTA_TOOL] [WORKDIR]       RUNS=3 SIZE_MB=256
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TOOL=$(realpath "${1:-$root/build/bin/delta_tool}")
work=${2:-$(mktemp -d /tmp/ferry-bench-delta.XXXXXX)}
RUNS=${RUNS:-3}
SIZE_MB=${SIZE_MB:-256}
command -v rdiff > /dev/null || { echo "needs rdiff (apt: rdiff)"; exit 1; }

mkdir -p "$work"
source "$here/benchlib.sh"
cd "$work"
random_files "$SIZE_MB"
rdiff -f signature old sig.anchor
rdiff -f delta sig.anchor changed delta.anchor

# Each step runs ferry then rdiff in odd rounds, rdiff then ferry in even
# ones (whoever goes second finds caches warmer).
step() {  # NAME FERRY_ARGS... -- RDIFF_ARGS...
  local name=$1 i; shift
  local -a f=() r=()
  for i in "$@"; do shift; [ "$i" = -- ] && break; f+=("$i"); done
  r=("$@")
  if [ $((round % 2)) = 1 ]; then
    run "${name}_ferry" "$TOOL" "${f[@]}"; run "${name}_rdiff" rdiff -f "${r[@]}"
  else
    run "${name}_rdiff" rdiff -f "${r[@]}"; run "${name}_ferry" "$TOOL" "${f[@]}"
  fi
}
for round in $(seq "$RUNS"); do
  step sig signature old sig.ferry -- signature old sig.rdiff
  step same delta sig.anchor same d.same.ferry -- delta sig.anchor same d.same.rdiff
  step changed delta sig.anchor changed d.changed.ferry -- delta sig.anchor changed d.changed.rdiff
  step patch patch old delta.anchor out.ferry -- patch old delta.anchor out.rdiff
done
cmp sig.ferry sig.rdiff && cmp d.same.ferry d.same.rdiff &&
  cmp d.changed.ferry d.changed.rdiff && cmp out.ferry changed ||
  { echo "outputs differ from rdiff's"; exit 1; }

echo "lib/delta vs rdiff, ${SIZE_MB} MiB, median of $RUNS interleaved rounds (nproc $(nproc), load $(cut -d' ' -f1 /proc/loadavg))"
printf '%-22s %10s %10s %10s %10s %8s\n' step ferry_s ferry_MB/s rdiff_s rdiff_MB/s ratio
for step in sig same changed patch; do
  f=$(median "${walls[${step}_ferry]}"); r=$(median "${walls[${step}_rdiff]}")
  case $step in
    sig) name="signature" ;; same) name="delta unchanged" ;;
    changed) name="delta fully changed" ;; patch) name="patch (all literal)" ;;
  esac
  printf '%-22s %10.2f %10.1f %10.2f %10.1f %8.2f\n' "$name" \
    "$(echo "$f / 1000" | bc -l)" "$(echo "$SIZE_MB * 1048.576 / $f" | bc -l)" \
    "$(echo "$r / 1000" | bc -l)" "$(echo "$SIZE_MB * 1048.576 / $r" | bc -l)" \
    "$(echo "$r / $f" | bc -l)"
done
echo "sizes: signature $(stat -c %s sig.ferry) B, delta unchanged $(stat -c %s d.same.ferry) B, fully changed $(stat -c %s d.changed.ferry) B"
echo "peak RSS KiB: ferry delta $(median "${rsss[changed_ferry]}"), rdiff delta $(median "${rsss[changed_rdiff]}")"
