#!/usr/bin/env bash
# ferry sync's delta path (docs/delta.md "Sync side") through the CLI:
# --dry-run and --json report the objects patched and the delta bytes they
# take (the sizes of the stored deltas); --basis DIR lends its files' blocks
# (block reuse); then a kill -9 loop over a chain of
# versions (the last two without deltas: block reuse from DEST's previous
# files): after every kill DEST is one whole version, and the final run
# leaves DEST byte-identical to the last one, checked, with nothing left in
# the cache's partial/ folder; a renamed shard is made from the cached object
# of its old path.
set -euo pipefail
FERRY=$1
source "$(dirname "$0")/testlib.sh"
export FERRY_CACHE=$work/pubcache
json() { /usr/bin/python3 -c "import json,sys; d=json.load(open('out.txt')); print(eval(sys.argv[1]))" "$1"; }
# Writes version $1 of the tree into src/: 6 shards of 8 MiB, each edited a
# little in every version (bytes replaced, bytes inserted), and a small file.
make_version() {
  /usr/bin/python3 - "$1" <<'PY'
import os, random, sys
v = int(sys.argv[1])
os.makedirs("src", exist_ok=True)
for s in range(6):
    data = bytearray(random.Random(s).randbytes(8 << 20))
    for i in range(1, v + 1):
        r = random.Random(1000 * s + i)
        at = r.randrange(len(data) - 300)
        data[at:at + 200] = r.randbytes(200)
        at = r.randrange(len(data))
        data[at:at] = r.randbytes(1000)
    open(f"src/shard-{s}.tfrecord", "wb").write(data)
open("src/labels.txt", "w").write(f"version {v}\n")
PY
}
publish() {
  make_version "$1"
  expect_rc 0 "$FERRY" publish src "file://$work/bucket" --json
  json 'd["id"]'
}
same_tree() {  # DEST equal to the tree in $2 (ferry's own files left out)
  diff -r -x '.ferry-sync*' -x '.ferry-view.lock' "$1/" "$2/" > /dev/null
}

# 1. v1 synced; v2 by deltas: the plan, then the run, count the same bytes.
v1=$(publish 1)
cp -r src v1tree
expect_rc 0 "$FERRY" sync --json bucket nodes/ds --cache cache
v2=$(publish 2)
cp -r src v2tree
delta_bytes=$(cat bucket/.ferry/deltas/* | wc -c)
[ "$(ls bucket/.ferry/deltas | wc -l)" = 6 ] || fail "publish made $(ls bucket/.ferry/deltas | wc -l) deltas, want 6"
expect_rc 0 "$FERRY" sync --dry-run --json bucket nodes/ds --cache cache
[ "$(json 'd["paths"]["delta"]["objects"]')" = 6 ] || fail "plan: $(cat out.txt)"
[ "$(json 'd["paths"]["delta"]["bytes_fetched"]')" = "$delta_bytes" ] || fail "plan bytes: $(cat out.txt)"
[ "$(json 'd["paths"]["whole"]["objects"]')" = 1 ] || fail "plan whole: $(cat out.txt)"
[ "$(json 'd["bytes_fetched"]')" = $((delta_bytes + 10)) ] || fail "plan total: $(cat out.txt)"
expect_rc 0 "$FERRY" sync --json bucket nodes/ds --cache cache
same_tree nodes/ds v2tree || fail "v2 differs"
[ "$(json 'd["paths"]["delta"]["objects"]')" = 6 ] || fail "run: $(cat out.txt)"
[ "$(json 'd["paths"]["delta"]["bytes_fetched"]')" = "$delta_bytes" ] || fail "run bytes: $(cat out.txt)"
[ "$(json 'd["paths"]["delta"]["bytes_produced"]')" = "$(cat v2tree/shard-* | wc -c)" ] || fail "produced: $(cat out.txt)"
[ "$(json 'd["paths"]["delta"]["fallbacks"]')" = 0 ] || fail "fallbacks: $(cat out.txt)"
[ "$(json 'd["paths"]["whole"]["objects"]')" = 1 ] || fail "whole: $(cat out.txt)"
[ "$(json 'd["bytes_fetched"]')" = $((delta_bytes + 10)) ] || fail "total: $(cat out.txt)"
[ "$delta_bytes" -lt $((6 * (8 << 20) / 50)) ] || fail "deltas not small: $delta_bytes"
echo "v2: $delta_bytes delta bytes for $(cat v2tree/shard-* | wc -c) bytes of shards"
# A new DEST with a fresh cache and --basis v1's tree: block reuse. The plan
# gives the signatures' bytes and at most the shards for the ranges.
shard_bytes=$(cat v2tree/shard-* | wc -c)
expect_rc 0 "$FERRY" sync --dry-run --json bucket nodes/fresh --cache cache-fresh --basis v1tree
[ "$(json 'd["paths"]["blocks"]["objects"]')" = 6 ] || fail "--basis plan: $(cat out.txt)"
[ "$(json 'd["paths"]["blocks"]["range_bytes_at_most"]')" = "$shard_bytes" ] || fail "--basis plan ranges: $(cat out.txt)"
sig_bytes=$(json 'd["paths"]["blocks"]["bytes_fetched"]')
[ "$(json 'd["bytes_fetched"]')" = $((sig_bytes + shard_bytes + 10)) ] || fail "--basis plan total: $(cat out.txt)"
[ "$sig_bytes" -gt 0 ] && [ "$sig_bytes" -lt $((shard_bytes / 50)) ] || fail "--basis plan signatures: $sig_bytes"
[ ! -e nodes/fresh ] || fail "a dry run made DEST"
expect_rc 0 "$FERRY" sync --json bucket nodes/fresh --cache cache-fresh --basis v1tree
same_tree nodes/fresh v2tree || fail "--basis: v2 differs"
[ "$(json 'd["paths"]["blocks"]["objects"]')" = 6 ] || fail "--basis: $(cat out.txt)"
[ "$(json 'd["paths"]["blocks"]["bytes_fetched"] < 6 * (8 << 20) // 10')" = True ] || fail "--basis bytes: $(cat out.txt)"

# 2. kill -9 at random moments while syncing v3..v6 one after another: a
# killed run leaves DEST a whole version; each run goes on with the version
# it was given until one finishes.
# v5 and v6 without their deltas: block reuse (path 3) from DEST's files.
ids=()
for v in 3 4 5 6; do ids+=("$(publish $v)"); cp -r src "v${v}tree"; done
for v in 5 6; do
  for f in v${v}tree/shard-*; do rm "bucket/.ferry/deltas/"*"-$(xxhsum -H2 < "$f" | cut -d' ' -f1)"; done
done
[ "$(ls bucket/.ferry/deltas | wc -l)" = 18 ] || fail "deltas left: $(ls bucket/.ferry/deltas | wc -l), want 18"
rounds=0 killed_in_patch=0
for i in 0 1 2 3; do
  v=$((i + 3))
  for attempt in $(seq 20); do
    "$FERRY" sync -q "bucket@${ids[$i]}" nodes/ds --cache cache > /dev/null 2>&1 &
    pid=$!
    sleep "$((attempt / 4)).$((RANDOM % 10))$((RANDOM % 10))"  # later: longer
    if kill -9 "$pid" 2> /dev/null; then
      wait "$pid" 2> /dev/null || true
      rounds=$((rounds + 1))
      if [ -n "$(find cache/partial -name '*.patch' -o -name '*.blocks' 2> /dev/null)" ]; then
        killed_in_patch=$((killed_in_patch + 1))
      fi
      ok=0
      for t in v$((v - 1))tree v${v}tree; do same_tree nodes/ds "$t" && ok=1; done
      [ "$ok" = 1 ] || fail "after a kill DEST is neither v$((v - 1)) nor v$v"
    else
      wait "$pid" || fail "sync of v$v failed"
      break
    fi
  done
  expect_rc 0 "$FERRY" sync --json "bucket@${ids[$i]}" nodes/ds --cache cache
  same_tree nodes/ds "v${v}tree" || fail "v$v differs after the kills"
  if [ "$v" -lt 5 ]; then  # v5's and v6's listed deltas are gone: they fail
    [ "$(json 'd["paths"]["delta"]["fallbacks"]')" = 0 ] || fail "fallbacks: $(cat out.txt)"
  fi
  [ "$(json 'd["paths"]["blocks"]["fallbacks"]')" = 0 ] || fail "block fallbacks: $(cat out.txt)"
done
expect_rc 0 "$FERRY" sync --check nodes/ds
left=$(find cache/partial -type f)
[ -z "$left" ] || fail "left in partial/: $left"
echo "kill loop: $rounds kills, $killed_in_patch with a patch or block reuse in progress"

# 3. v7 renames shard-0 and inserts 1,000 bytes after its first 8 MiB part:
# no delta (a new path), no file there in DEST; the cached object of v6's
# shard-0 shares that part's XXH3-64 and is the basis (docs/delta.md "Other
# cached objects as bases"): --json paths.blocks counts its bytes.
/usr/bin/python3 - <<'PY'
import os
d = open("src/shard-0.tfrecord", "rb").read()
os.remove("src/shard-0.tfrecord")
at = (8 << 20) + 1000
open("src/renamed-0.tfrecord", "wb").write(d[:at] + os.urandom(1000) + d[at:])
PY
expect_rc 0 "$FERRY" publish src "file://$work/bucket" --json
cp -r src v7tree
expect_rc 0 "$FERRY" sync --json bucket nodes/ds --cache cache
same_tree nodes/ds v7tree || fail "v7 differs"
[ "$(json 'd["paths"]["blocks"]["objects"]')" = 1 ] || fail "rename: $(cat out.txt)"
[ "$(json 'd["paths"]["whole"]["objects"]')" = 0 ] || fail "rename came whole: $(cat out.txt)"
[ "$(json 'd["paths"]["blocks"]["bytes_copied"] > (8 << 20)')" = True ] || fail "rename copied: $(cat out.txt)"
[ "$(json 'd["paths"]["blocks"]["bytes_fetched"] < (1 << 20)')" = True ] || fail "rename fetched: $(cat out.txt)"
echo "rename: $(json 'd["paths"]["blocks"]')"
echo "sync deltas: ok"
