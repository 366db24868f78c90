#!/usr/bin/env bash
# Benchmark: the block-reuse scan (lib/delta MatchBlocks, through
# tests/unit/delta/delta_tool match) vs `rdiff delta` doing the same search
# (signature of the NEW file, basis the OLD one: its COPY commands are the
# block map), same files, same run, rounds interleaved, files in the page
# cache. OLD: 256 MiB of random bytes. NEW, three ways:
#   same     a copy (unchanged: every block at its own offset)
#   inserts  4 KiB of new bytes inserted every ~10 MiB (everything after
#            each insert shifted)
#   changed  other random bytes (fully changed: the rolling scan runs over
#            every byte)
# ferry runs with NEW's part hashes (`delta_tool parts`, as a manifest has
# them for sync) on 1 thread (per core) and on one per core (nproc), and on
# 1 thread from the signature alone (`sig`). Prints the median wall seconds,
# MB/s of basis scanned, rdiff_time / ferry_time, and MB/s per CPU second
# (user + sys: what one core does, whatever the load).
#   bench_block_match.sh [DELTA_TOOL] [WORKDIR]       RUNS=3 SIZE_MB=256
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TOOL=$(realpath "${1:-$root/build/bin/delta_tool}")
work=${2:-$(mktemp -d /tmp/ferry-bench-match.XXXXXX)}
RUNS=${RUNS:-3}
SIZE_MB=${SIZE_MB:-256}
command -v rdiff > /dev/null || { echo "needs rdiff (apt: rdiff)"; exit 1; }

mkdir -p "$work"
source "$here/benchlib.sh"
cd "$work"
random_files "$SIZE_MB"
if [ ! -f inserts ] || [ inserts -ot old ]; then
  /usr/bin/python3 - <<'PY'
import os
old = open("old", "rb").read()
step, ins = 10 << 20, 4096
parts = []
for at in range(0, len(old), step):
    parts.append(old[at:at + step - 12345])
    parts.append(os.urandom(ins))
    parts.append(old[at + step - 12345:at + step])
open("inserts", "wb").write(b"".join(parts))
PY
fi
for f in same inserts changed; do
  rdiff -f signature "$f" "sig.$f"
  "$TOOL" parts "$f" "parts.$f" > /dev/null
done
cat old same inserts changed sig.* parts.* > /dev/null
nproc=$(nproc)

for round in $(seq "$RUNS"); do
  for f in same inserts changed; do
    size=$(stat -c %s "$f")
    ferry1=(env FERRY_MATCH_THREADS=1 FERRY_MATCH_PARTS="parts.$f" "$TOOL" match "sig.$f" "$size" "map.$f" old)
    ferryn=(env FERRY_MATCH_THREADS="$nproc" FERRY_MATCH_PARTS="parts.$f" "$TOOL" match "sig.$f" "$size" "map.$f" old)
    ferrys=(env FERRY_MATCH_THREADS=1 "$TOOL" match "sig.$f" "$size" "map.$f.sig" old)
    if [ $((round % 2)) = 1 ]; then
      run "${f}_ferry1" "${ferry1[@]}"; run "${f}_ferryn" "${ferryn[@]}"
      run "${f}_ferrys" "${ferrys[@]}"
      run "${f}_rdiff" rdiff -f delta "sig.$f" old "delta.$f"
    else
      run "${f}_rdiff" rdiff -f delta "sig.$f" old "delta.$f"
      run "${f}_ferrys" "${ferrys[@]}"
      run "${f}_ferryn" "${ferryn[@]}"; run "${f}_ferry1" "${ferry1[@]}"
    fi
  done
done

echo "block-reuse scan vs rdiff delta (sig of new, basis old), ${SIZE_MB} MiB basis, median of $RUNS interleaved rounds (nproc $nproc, load $(cut -d' ' -f1 /proc/loadavg))"
printf '%-9s %9s %10s %9s %10s %9s %9s %10s %8s %8s %11s %11s %11s\n' new ferry1_s \
  ferry1_MB/s ferryN_s ferryN_MB/s sig1_s rdiff_s rdiff_MB/s ratio1 ratioN \
  ferry1_cpuMB sig1_cpuMB rdiff_cpuMB
for f in same inserts changed; do
  f1=$(median "${walls[${f}_ferry1]}"); fn=$(median "${walls[${f}_ferryn]}")
  fs=$(median "${walls[${f}_ferrys]}"); r=$(median "${walls[${f}_rdiff]}")
  c1=$(median "${cpus[${f}_ferry1]}"); cs=$(median "${cpus[${f}_ferrys]}")
  cr=$(median "${cpus[${f}_rdiff]}")
  mbs() { echo "$SIZE_MB * 1048.576 / $1" | bc -l; }
  printf '%-9s %9.2f %10.1f %9.2f %10.1f %9.2f %9.2f %10.1f %8.2f %8.2f %11.1f %11.1f %11.1f\n' "$f" \
    "$(echo "$f1 / 1000" | bc -l)" "$(mbs "$f1")" "$(echo "$fn / 1000" | bc -l)" \
    "$(mbs "$fn")" "$(echo "$fs / 1000" | bc -l)" "$(echo "$r / 1000" | bc -l)" \
    "$(mbs "$r")" "$(echo "$r / $f1" | bc -l)" "$(echo "$r / $fn" | bc -l)" \
    "$(mbs "$c1")" "$(mbs "$cs")" "$(mbs "$cr")"
  FERRY_MATCH_PARTS="parts.$f" "$TOOL" match "sig.$f" "$(stat -c %s "$f")" "map.$f" old | sed "s/^/  $f: /"
  cmp -s "map.$f" "map.$f.sig" || echo "  $f: the map with part hashes differs from the signature's alone"
done
echo "peak RSS KiB (changed): ferry 1 thread $(median "${rsss[changed_ferry1]}"), $nproc threads $(median "${rsss[changed_ferryn]}"), rdiff $(median "${rsss[changed_rdiff]}")"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
