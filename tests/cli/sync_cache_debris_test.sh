#!/usr/bin/env bash
# What a crash, a disk fault or a stray command leaves among the cache's own
# files never fails every later sync, and never hangs one: each case is
# followed by two bounded syncs that must both succeed (a hang is exit 124).
set -euo pipefail
FERRY=$1 PUBLISH=$2
source "$(dirname "$0")/testlib.sh"

mkdir -p tree/sub outside
for i in 0 1 2; do head -c $((3000 + i)) /dev/urandom > "tree/sub/f$i.bin"; done
"$PUBLISH" tree bucket > /dev/null
m=$(ls bucket/.ferry/manifests)
h=$(basename "$(find bucket/.ferry/objects -type f | sort | head -1)")

# fresh: a synced cache, then DEST gone and every object dropped, so that
# the next sync fetches (and meets what is left in partial/).
fresh() {
  rm -rf cache d .d.ferry-views
  expect_rc 0 timeout 60 "$FERRY" sync bucket d --cache cache
  rk=$(ls cache/objects)
  rm -rf d .d.ferry-views "cache/objects/$rk"
  mkdir -p "cache/partial/$rk"
}
twice() {
  expect_rc 0 timeout 60 "$FERRY" sync bucket d --cache cache
  diff -r --exclude='.ferry-*' tree d || fail "$1: d differs"
  expect_rc 0 timeout 60 "$FERRY" sync bucket d --cache cache
}

# 1. partial/: a FIFO, a device, a link, a folder where a download's part
# file, journal or adopted copy belongs (before: "is not a regular file" or
# "is a folder" on every run).
for what in fifo dev link dir; do
  for name in "$h.ferry-part" "$h.ferry-part.journal" "$h" "$h.adopt"; do
    fresh
    p="cache/partial/$rk/$name"
    case $what in
      fifo) mkfifo "$p" ;;
      dev) mknod "$p" c 1 3 ;;
      link) ln -s "$work/outside/x" "$p" ;;
      dir) mkdir -p "$p/inside" ;;
    esac
    twice "$what at $name"
    [ ! -e outside/x ] || fail "$what at $name: written through the link"
  done
done

# 2. A file where ferry's own folders belong: partial/<rk>, objects/<rk>,
# objects/<rk>/<xx> (before: "exists and is not a directory" every run).
fresh; rm -rf "cache/partial/$rk"; echo x > "cache/partial/$rk"; twice "partial/<rk>"
fresh; echo x > "cache/objects/$rk"; twice "objects/<rk>"
fresh; mkdir -p "cache/objects/$rk"; mkfifo "cache/objects/$rk/${h:0:2}"
twice "objects/<rk>/<xx>"

# 3. A folder at a cached manifest's name (before: the rename into it failed).
fresh; rm -f "cache/manifests/$m"; mkdir -p "cache/manifests/$m/inside"
twice "manifest folder"
[ -f "cache/manifests/$m" ] || fail "the manifest's folder was not replaced"

# 4. The index: a FIFO at -journal hung every sync; at -wal or -shm every
# sync failed ("disk I/O error"); a link had SQLite write where it points.
for name in index.sqlite-journal index.sqlite-wal index.sqlite-shm index.sqlite; do
  fresh
  rm -f "cache/$name"; mkfifo "cache/$name"
  expect_rc 0 timeout 60 "$FERRY" sync bucket d --cache cache
  grep -q "warning: removed .*cache/$name: not a regular file" err.txt ||
    { cat err.txt; fail "the FIFO at $name removed silently"; }
  rm d; twice "FIFO at $name"
  fresh
  echo keep > outside/db
  rm -f "cache/$name"; ln -s "$work/outside/db" "cache/$name"
  if [ "$name" = index.sqlite ]; then
    # It may lead to the real index (its pins): named, left for its owner.
    expect_rc 4 timeout 60 "$FERRY" sync bucket d --cache cache
    grep -q "index.sqlite: is a symbolic link" err.txt || { cat err.txt; fail "link"; }
    [ -L cache/index.sqlite ] || fail "the link at index.sqlite was removed"
    rm cache/index.sqlite
  else
    twice "link at $name"
  fi
  [ "$(cat outside/db)" = keep ] || fail "written through the link at $name"
done
fresh; mkdir -p cache/index.sqlite-wal/inside
expect_rc 4 timeout 60 "$FERRY" sync bucket d --cache cache
grep -q "index.sqlite-wal: is a folder where the cache's index belongs" err.txt ||
  { cat err.txt; fail "the folder at -wal is not named"; }
rm -rf cache/index.sqlite-wal

# 5. A damaged index is set aside (warning), the sync goes on; the objects'
# files are found again (nothing fetched).
rm -rf cache d .d.ferry-views
expect_rc 0 "$FERRY" sync bucket d --cache cache
rm -f d
head -c 8192 /dev/urandom > cache/index.sqlite
expect_rc 0 timeout 60 "$FERRY" sync --json bucket d --cache cache
grep -q "warning: the cache's index was damaged" err.txt || { cat err.txt; fail "no warning"; }
[ -f cache/index.sqlite.damaged ] || fail "the damaged index is not kept"
/usr/bin/python3 -c "import json; r=json.load(open('out.txt')); assert r['objects_fetched']==0, r"
# --json carries what stderr warned of (before: no "warnings" key).
/usr/bin/python3 - out.txt <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))["warnings"]
assert len(w) == 1 and w[0].startswith("the cache's index was damaged"), w
PY
expect_rc 0 timeout 60 "$FERRY" sync --json bucket d --cache cache
/usr/bin/python3 -c "import json; w=json.load(open('out.txt'))['warnings']; assert w == [], w"
diff -r --exclude='.ferry-*' tree d || fail "d differs after the damaged index"
# A dry run changes nothing: it reads such an index as empty, and says so.
rm -f d
head -c 8192 /dev/urandom > cache/index.sqlite
cp cache/index.sqlite damaged.copy
expect_rc 0 timeout 60 "$FERRY" sync --dry-run bucket d --cache cache
grep -q "warning: the cache's index cannot be read (.*not a database" err.txt ||
  { cat err.txt; fail "dry run"; }
cmp cache/index.sqlite damaged.copy || fail "a dry run changed the damaged index"
# A dry run removes nothing of the index's names.
rm -f cache/index.sqlite-shm; mkfifo cache/index.sqlite-shm
expect_rc 0 timeout 60 "$FERRY" sync --dry-run bucket d --cache cache
[ -p cache/index.sqlite-shm ] || fail "a dry run removed the FIFO at -shm"
rm -f cache/index.sqlite-shm

# 6. An unmanaged remote (no .ferry): what a killed download left at its
# partial names, replaced by a FIFO and a folder.
mkdir -p plain && head -c 3000000 /dev/urandom > plain/big.bin
rm -rf cache u .u.ferry-views
# Killed once its part file is there (waited for: a sanitizer build starts
# slowly), well before 3 MB at 500 KB/s.
"$FERRY" sync --bwlimit 500k "file://$work/plain" u --cache cache > /dev/null 2>&1 &
pid=$!
part=
for _ in $(seq 300); do
  part=$(ls -d cache/partial/*/u-*.ferry-part 2> /dev/null | head -1 || true)
  [ -n "$part" ] && break
  sleep 0.1
done
kill -9 "$pid" 2> /dev/null || true
wait "$pid" 2> /dev/null || true
[ -n "$part" ] || fail "the unmanaged sync made no part file in 30 s"
rm -f "$part" "$part.journal"
mkfifo "$part"
mkdir -p "$part.journal/inside"
expect_rc 0 timeout 60 "$FERRY" sync "file://$work/plain" u --cache cache
cmp plain/big.bin u/big.bin || fail "unmanaged: big.bin differs"
echo OK
