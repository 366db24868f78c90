#!/usr/bin/env bash
# ferry sync of one big file with 1% changed (issue 13 "Speed": a 10 GB file,
# peak RSS <= 128 MB, bytes <= 1.1x novel), by delta (path 2) and by block
# reuse (path 3), over nginx on the machine's loopback (bytes and RSS are the
# targets here, not wall; bench_delta_sync.sh has the slow links).
# The file: SIZE (default 10,000,000,000) bytes of AES-CTR keystream
# (incompressible). v2 edits it in EDITS (default 24) places spread over the
# file, PCT (default 1) percent of its size novel: one in three edits rewrites
# a stretch in place, one inserts new bytes (everything after shifts), one
# removes a stretch of the same length; the novel bytes (rewritten +
# inserted) are printed.
# Steps: publish v1 (file:// bucket), sync DEST to v1 (whole), then v2 is made
# from DEST's v1 file and published (signature and delta); the bucket's v1
# object and the source trees are removed as soon as they are not needed, so
# the disk holds at most about 3 x SIZE (checked first). Then, each once:
#   blocks  a fresh DEST and cache, --basis DEST (at v1), the bucket without
#           .ferry/deltas/: block reuse (the signature and the missing ranges),
#   deltas  DEST (its cache holds v1) -> v2 from the bucket: the delta.
# Printed for each: wall, peak RSS (/usr/bin/time), nginx's body bytes and
# their ratio to the novel bytes, requests, ferry's --json paths; each
# result is compared (cmp) with the bucket's v2 object.
# Usage: bench_delta_big.sh FERRY
set -euo pipefail
ferry=$(readlink -f "$1")
size=${SIZE:-10000000000} edits=${EDITS:-24} pct=${PCT:-1}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-delta-big.XXXXXX")
chmod 755 "$work"
source "$here/benchlib.sh"
source "$here/netlib.sh"
trap 'nginx_stop; rm -rf "$work"' EXIT
export FERRY_CACHE=$work/unused-cache
avail=$(df --output=avail -B1 "$work" | tail -1)
if [ "$avail" -lt $(( size * 33 / 10 )) ]; then
  echo "needs $(( size * 33 / 10 )) bytes free in $work, has $avail" >&2
  exit 1
fi
ratio() { echo "scale=3; $1 / $2" | bc; }
secs() { echo "scale=1; $1 / 1000" | bc; }
json() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

mkdir -p "$work/v1" "$work/www"
t0=$(date +%s)
{ openssl enc -aes-128-ctr -pass pass:ferry-v1 -nosalt -pbkdf2 < /dev/zero 2> /dev/null || true; } |
  head -c "$size" > "$work/v1/big.bin"
[ "$(stat -c %s "$work/v1/big.bin")" = "$size" ] || { echo "openssl made too few bytes" >&2; exit 1; }
echo "v1: $size bytes of AES-CTR keystream in $(( $(date +%s) - t0 )) s"
run publish_v1 "$ferry" publish "$work/v1" "file://$work/www/bucket" --tag v1 \
  --cache "$work/publish-cache"
echo "ferry publish v1: $(secs "${best[publish_v1]}") s, peak RSS ${rss[publish_v1]} KiB"

nport=$(free_port)
nginx_start "$nport" "$work/www"
url=http://127.0.0.1:$nport
dest=$work/dest cache=$work/cache
run sync_v1 "$ferry" sync "$url/bucket@v1" "$dest" --cache "$cache"
echo "ferry sync v1 (whole): $(secs "${best[sync_v1]}") s, peak RSS ${rss[sync_v1]} KiB"
rm -rf "$work/v1"
find "$work/www/bucket/.ferry/objects" -type f -delete   # v2 is published from v1's signature

# v2 from DEST's v1 file; prints the novel bytes.
mkdir -p "$work/v2"
novel=$(/usr/bin/python3 - "$dest/big.bin" "$work/v2/big.bin" "$edits" "$pct" <<'PY'
import os, random, sys
src, dst, edits, pct = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
size = os.path.getsize(src)
r = random.Random(13)
kinds = [("rewrite", "insert", "remove")[k % 3] for k in range(edits)]
n_novel = sum(k != "remove" for k in kinds)
length = int(size * pct / 100) // n_novel
slot = size // edits
novel = 0
with open(src, "rb") as i, open(dst, "wb") as o:
    def copy(n):
        while n > 0:
            n -= os.copy_file_range(i.fileno(), o.fileno(), n)
    at = 0
    for k, kind in enumerate(kinds):
        start = k * slot + r.randrange(slot - length)
        copy(start - at)
        if kind != "remove":
            o.write(os.urandom(length)); o.flush(); novel += length
        at = start + (0 if kind == "insert" else length)
        i.seek(at)
    copy(size - at)
print(novel)
PY
)
echo "v2: $(stat -c %s "$work/v2/big.bin") bytes, $edits edits, novel bytes: $novel"
run publish_v2 bash -c '"$1" publish "$2" "$3" --tag v2 --cache "$4" --json > "$5"' _ \
  "$ferry" "$work/v2" "file://$work/www/bucket" "$work/publish-cache" "$work/publish_v2.json"
echo "ferry publish v2: $(secs "${best[publish_v2]}") s, peak RSS ${rss[publish_v2]} KiB," \
  "$(json "$work/publish_v2.json" 'd["deltas_uploaded"]') delta of $(json "$work/publish_v2.json" 'd["delta_bytes"]') bytes"
rm -rf "$work/v2"
v2obj=$(find "$work/www/bucket/.ferry/objects" -type f)
echo "v2's signature: $(find "$work/www/bucket/.ferry/sigs" -type f -name "$(basename "$v2obj")*" -printf '%s') bytes"
cp -al "$work/www/bucket" "$work/www/blocks"
rm -rf "$work/www/blocks/.ferry/deltas"

case_run() {  # NAME URL DEST CACHE [ARGS...]
  local name=$1 u=$2 d=$3 c=$4; shift 4
  access_mark
  run "$name" bash -c '"$1" sync --json "$2" "$3" --cache "$4" "${@:6}" > "$5.json"' _ \
    "$ferry" "$u" "$d" "$c" "$work/$name" "$@"
  local bytes
  bytes=$(access_bytes)
  if ! cmp -s "$v2obj" "$d/big.bin"; then
    echo "  $name: DEST differs from v2: $(head -c 500 "$work/$name.err")" >&2
  fi
  printf '  %-7s %7s s  peak RSS %8s KiB (target <= 131072)  %12s bytes = %sx novel (target <= 1.1)  %s requests\n' \
    "$name" "$(secs "${best[$name]}")" "${rss[$name]}" "$bytes" "$(ratio "$bytes" "$novel")" "$(access_requests)"
  echo "          paths: $(json "$work/$name.json" 'd["paths"]')"
  access_parts | awk '{printf "          %-13s %3d requests %12d body bytes %6d header bytes\n", $1, $2, $3, $4}'
}
echo "== v1 -> v2, $size bytes, $edits edits, novel $novel bytes (load $(cut -d' ' -f1-3 /proc/loadavg))"
case_run blocks "$url/blocks@v2" "$work/dest-blocks" "$work/cache-blocks" --basis "$dest"
rm -rf "$work/dest-blocks" "$work/.dest-blocks.ferry-views" "$work/cache-blocks"
case_run deltas "$url/bucket@v2" "$dest" "$cache"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
