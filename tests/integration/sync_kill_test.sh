#!/usr/bin/env bash
# ferry sync from nginx (http) killed with -9 at random moments of a cold and
# an incremental sync, each followed by a rerun: DEST is at every moment
# missing, the old tree or the new one (never a mix); after the rerun it
# equals the published tree byte for byte, the cache index matches the
# object files, and no part, journal, lock or temporary file is left. Then
# two syncs on one cache at once: both complete, each object fetched once.
# Then block reuse (a fresh cache, --basis the previous version: signatures
# and several ranges to a GET) killed the same way.
set -euo pipefail
ferry=$1 publish=$2
. "${FERRY_TEST_SERVERS_ENV:?}"
. "$(dirname "$0")/../cli/testlib.sh"
root=$FERRY_TEST_HTTP_ROOT/synckill url=$FERRY_TEST_HTTP_URL/synckill
brroot=$FERRY_TEST_HTTP_ROOT/synckill-br brurl=$FERRY_TEST_HTTP_URL/synckill-br
rm -rf "$root" "$brroot"
trap 'rm -rf "$work" "$root" "$brroot"' EXIT

mkdir -p tree/small
for i in $(seq 0 39); do head -c $((100000 + i)) /dev/urandom > "tree/small/f$i.bin"; done
for i in 0 1 2; do head -c $((20000000 + i)) /dev/urandom > "tree/shard-$i.tar"; done
printf '{}' > tree/dataset.json
"$publish" tree "$root" > /dev/null
mkdir nodes
args=(sync -q --connections 4 --part-size 4M --bwlimit 30M "$url" nodes/ds --cache cache)

# same_tree A B: equal files (ferry's view files left out).
same_tree() { diff -r --exclude='.ferry-sync*' --exclude=.ferry-view.lock "$1" "$2" > /dev/null; }
# DEST now: missing, or exactly one of the trees given.
dest_is_whole() {
  [ -e nodes/ds ] || return 0
  for t in "$@"; do same_tree "$t" nodes/ds && return 0; done
  fail "DEST is a mix after a kill"
}
# Nothing of a download or a temporary left; the index has exactly the
# object files.
clean_cache() {
  local left
  left=$(find cache nodes \( -name '*.ferry-part' -o -name '*.journal' -o -name '*.lock' \
         -o -name '*.adopt' -o -name '.ferry-tmp-*' -o -name '.ds.ferry-tmp' \) \
         ! -name '.ferry-view.lock' ! -name '.*.ferry-sync.lock' -print)
  [ -z "$left" ] || fail "left behind: $left"
  /usr/bin/python3 - <<'PY' || fail "index and object files differ"
import os, sqlite3, sys
rows = {(rk, h) for rk, h in sqlite3.connect("cache/index.sqlite").execute("SELECT rk, hash FROM objects")}
files = set()
for rk in os.listdir("cache/objects"):
    for fan in os.listdir(f"cache/objects/{rk}"):
        for h in os.listdir(f"cache/objects/{rk}/{fan}"):
            files.add((rk, h))
sys.exit(0 if rows == files and rows else 1)
PY
}

# Until a part file's journal holds a record (a part synced): a kill then
# leaves bytes the rerun must not fetch again. Bounded (20 s).
wait_journal() {
  local j len size
  for _ in $(seq 400); do
    for j in $(find cache/partial -name '*.ferry-part.journal' 2>/dev/null); do
      len=$(od -An -tu4 -j8 -N4 "$j" 2>/dev/null | tr -d ' ') size=$(stat -c %s "$j" 2>/dev/null || echo 0)
      [ -n "$len" ] && [ "$size" -gt $((16 + len)) ] && return 0
    done
    sleep 0.05
  done
}

# Until the cold sync's half-built view holds a file (a hard link into the
# cache) while a download is still in progress: objects are linked into the
# new view as they land. True once seen; false after 20 s.
wait_early_link() {
  local v
  for _ in $(seq 400); do
    for v in nodes/.ds.ferry-views/*/; do
      [ -d "$v" ] && [ ! -e "$v/.ferry-sync.json" ] || continue
      [ -n "$(find "$v" -type f ! -name '.ferry*' -links +1 -print -quit 2>/dev/null)" ] || continue
      [ -n "$(find cache/partial -name '*.ferry-part' -print -quit 2>/dev/null)" ] && return 0
    done
    sleep 0.05
  done
  return 1
}

resumed=0 kills=0
for round in cold incremental; do
  if [ $round = incremental ]; then
    cp -r tree old
    for i in 3 17 29; do head -c 90000 /dev/urandom > "tree/small/f$i.bin"; done
    head -c 21000000 /dev/urandom > tree/shard-1.tar
    rm tree/small/f5.bin
    "$publish" tree "$root" > /dev/null
  fi
  for i in $(seq 5); do
    if [ $round = cold ]; then rm -rf cache nodes/ds nodes/.ds.ferry-views; fi
    if [ $round = incremental ] && [ "$i" -gt 1 ]; then
      # back to v1 in DEST so that every kill lands in an incremental sync
      "$ferry" sync -q "$url@$v1" nodes/ds --cache cache
    fi
    "$ferry" "${args[@]}" & pid=$!
    # The first kill of a round after a journalled part, the second of the
    # cold round once objects are linked into the half-built view while
    # others download, the others at random moments.
    if [ "$i" = 1 ]; then
      wait_journal
    elif [ $round = cold ] && [ "$i" = 2 ]; then
      wait_early_link || { kill -9 $pid 2>/dev/null || true; fail "no object was linked into the view while others downloaded"; }
    else
      sleep "0.$((RANDOM % 8 + 1))"
    fi
    kill -9 $pid 2>/dev/null && kills=$((kills + 1))
    wait $pid 2>/dev/null || true
    if [ $round = cold ]; then dest_is_whole tree; else dest_is_whole old tree; fi
    "$ferry" sync --json --connections 4 --part-size 4M "$url" nodes/ds --cache cache > out.json \
      || { cat out.json; fail "rerun after kill $i ($round)"; }
    r=$(/usr/bin/python3 -c "import json; print(json.load(open('out.json'))['bytes_resumed'])")
    resumed=$((resumed + r))
    same_tree tree nodes/ds || fail "DEST differs from the tree after the rerun ($round $i)"
    clean_cache
    # The half-built view was rebuilt; no other view (or trash) is left once
    # the rerun's cleaner is done.
    for _ in $(seq 200); do
      [ "$(ls -A nodes/.ds.ferry-views | wc -l)" = 1 ] && break
      sleep 0.05
    done
    [ "$(ls -A nodes/.ds.ferry-views | wc -l)" = 1 ] || fail "views left: $(ls -A nodes/.ds.ferry-views)"
    [ $round = cold ] && v1=$(/usr/bin/python3 -c "import json; print(json.load(open('out.json'))['manifest_id'])")
  done
done
echo "kills=$kills bytes_resumed=$resumed"
[ "$resumed" -gt 0 ] || fail "no kill left a download to resume"

# A no-op over http is exactly one request (nginx's access log).
log=${FERRY_TEST_HTTP_ACCESS_LOG:-}
if [ -n "$log" ]; then
  sleep 0.5; before=$(wc -l < "$log")
  "$ferry" sync --json "$url" nodes/ds --cache cache > out.json
  grep -q '"unchanged":true' out.json || fail "not a no-op: $(cat out.json)"
  sleep 0.5; after=$(wc -l < "$log")
  echo "no-op: $((after - before)) request(s): $(tail -n 1 "$log" | cut -f1)"
  [ $((after - before)) = 1 ] || fail "no-op sent $((after - before)) requests"
fi

# Two syncs on one (empty) cache at once, into two DESTs.
rm -rf cache2
"$ferry" sync --json --connections 4 "$url" nodes/a --cache cache2 > a.json & pa=$!
"$ferry" sync --json --connections 4 "$url" nodes/b --cache cache2 > b.json & pb=$!
wait $pa || fail "first concurrent sync"
wait $pb || fail "second concurrent sync"
same_tree tree nodes/a && same_tree tree nodes/b || fail "concurrent syncs"
fetched=$(/usr/bin/python3 -c "import json; print(sum(json.load(open(f))['objects_fetched'] for f in ('a.json','b.json')))")
objects=$(find cache2/objects -type f | wc -l)
echo "concurrent: objects=$objects fetched=$fetched"
[ "$fetched" = "$objects" ] || fail "an object was fetched twice ($fetched for $objects)"
echo ok

# Block reuse over http, killed: v2 of an 8 MB shard rewrites 700 bytes in
# place every 50,000 and inserts 300 bytes every 400,000 (~1 MB of ranges,
# many GETs of several ranges each at --bwlimit 512K: ~2 s), published with
# signatures by ferry publish. A fresh cache with --basis v1's folder takes
# the block-reuse path; each run is killed at a random moment, then rerun:
# DEST missing or v2 at every moment, v2 after the rerun, the cache clean.
mkdir br1
head -c 8000000 /dev/urandom > br1/shard.tar
printf '{}' > br1/dataset.json
cp -r br1 br2
/usr/bin/python3 - <<'PY'
import os
b = bytearray(open("br2/shard.tar", "rb").read())
for at in range(1000, len(b) - 1000, 50000):
    b[at:at + 700] = os.urandom(700)
for at in range(len(b) - 200000, 0, -400000):
    b[at:at] = os.urandom(300)
open("br2/shard.tar", "wb").write(b)
PY
"$ferry" publish -q br1 "file://$brroot" --tag v1 || fail "publish br1"
"$ferry" publish -q br2 "file://$brroot" --tag v2 || fail "publish br2"
blocks=0 brkills=0
for i in $(seq 4); do
  rm -rf cache nodes/ds nodes/.ds.ferry-views
  "$ferry" sync -q --connections 2 --bwlimit 512K "$brurl@v2" nodes/ds --cache cache --basis br1 & pid=$!
  sleep "0.$((RANDOM % 9 + 1))"
  kill -9 $pid 2>/dev/null && brkills=$((brkills + 1))
  wait $pid 2>/dev/null || true
  dest_is_whole br2
  "$ferry" sync --json --connections 2 "$brurl@v2" nodes/ds --cache cache --basis br1 > out.json \
    || { cat out.json; fail "block-reuse rerun after kill $i"; }
  same_tree br2 nodes/ds || fail "DEST differs from v2 after the block-reuse rerun $i"
  clean_cache
  blocks=$((blocks + $(/usr/bin/python3 -c "import json; print(json.load(open('out.json'))['paths']['blocks']['objects'])")))
done
echo "block reuse: kills=$brkills reruns by block reuse=$blocks"
[ "$brkills" -gt 0 ] && [ "$blocks" -gt 0 ] || fail "no kill landed in a block-reuse sync"
