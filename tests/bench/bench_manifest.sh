#!/usr/bin/env bash
# Benchmark: the manifest format (formats/manifest) at scale. Writes a
# manifest of N synthetic entries (~70 bytes each before compression; random
# hashes, so little compresses) streaming, reads it back streaming, and
# prints wall time and peak RSS of each side, RSS per entry, and the RSS of
# the same steps at N/10 (flat memory: the two should be about equal).
# Issue #12 targets: <= 400 bytes of RSS per entry for a 1,000,000-file
# manifest; read, diff and plan <= 2 s. Then, from the same build folder:
#   sync_plan_bench: sync's own read (sync::ReadManifest), plan
#     (Select, UniqueObjects) and a diff against the recorded version's
#     manifest (1% of the objects new), with wall, CPU and RSS per entry;
#   ferry sync --dry-run of a file:// bucket whose HEAD is that manifest
#     (ref, manifest, every check, plan; nothing fetched);
#   ferry gc of that bucket (the kept version's objects: 16 bytes each).
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
bin=$(dirname "$TOOL")
"$bin/sync_plan_bench" synth "$N" "$work" > /dev/null
run "sync plan $N" "$bin/sync_plan_bench" plan "$work"
bucket=$work/bucket
rm -rf "$bucket" "$work/cache" "$work/dest"
mkdir -p "$bucket/.ferry/manifests" "$bucket/.ferry/refs"
cp "$work/v2" "$bucket/.ferry/manifests/$(cat "$work/v2.id")"
cat "$work/v2.id" > "$bucket/.ferry/refs/HEAD"
/usr/bin/time -f '%e %U %S %M' -o "$work/time" "$bin/ferry" sync --dry-run -q \
  "file://$bucket" "$work/dest" --cache "$work/cache"
read -r wall user sys rss < "$work/time"
echo "ferry sync --dry-run, $N files: wall ${wall}s cpu $(echo "$user + $sys" | bc)s" \
     "peak_rss ${rss}KB ($(echo "$rss * 1024 / $N" | bc) B/entry)"
/usr/bin/time -f '%e %U %S %M' -o "$work/time" "$bin/ferry" gc -q "file://$bucket"
read -r wall user sys rss < "$work/time"
echo "ferry gc, $N objects kept: wall ${wall}s cpu $(echo "$user + $sys" | bc)s" \
     "peak_rss ${rss}KB ($(echo "$rss * 1024 / $N" | bc) B/object)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
