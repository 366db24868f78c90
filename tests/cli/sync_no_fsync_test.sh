#!/usr/bin/env bash
# ferry sync --no-fsync: no fsync, fdatasync or syncfs at all (downloads into
# the cache, the view, DEST's state, the cache's SQLite index; strace -y
# names the file of each call), for a view and --in-place, the tree arrives
# whole; without the flag the same sync does sync its downloads, view and
# index (so the check can fail). One object of several parts (journalled),
# several small ones.
set -euo pipefail
# strace runs ferry below; LeakSanitizer cannot run under ptrace (CI's ASan build).
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
FERRY=$1
here=$(cd "$(dirname "$0")" && pwd)
source "$here/testlib.sh"
command -v strace > /dev/null || { echo "no strace: skipped"; exit 77; }

mkdir -p tree/sub
head -c 300000 /dev/urandom > tree/big.bin  # 5 parts of 64 KiB
for i in 0 1 2; do head -c $((3000 + i)) /dev/urandom > "tree/sub/f$i.bin"; done
export FERRY_CACHE=$work/pubcache
expect_rc 0 "$FERRY" publish tree "file://$work/bucket" --part-size 64K
mkdir nodes

# syncs NAME [FLAGS]: syncs the bucket into nodes/NAME with cache-NAME under
# strace; prints how many sync calls were made on its downloads (partial/);
# all calls are in trace-NAME.txt.
syncs() {
  local name=$1
  shift
  strace -f -qq -y -e trace=fsync,fdatasync,syncfs,sync_file_range \
    -o "trace-$name.txt" "$FERRY" sync "$@" bucket "nodes/$name" \
    --cache "cache-$name" > out.txt 2> err.txt || { cat err.txt; fail "sync $name"; }
  diff -r --exclude='.ferry-sync*' --exclude=.ferry-view.lock tree "nodes/$name" \
    > /dev/null || fail "nodes/$name differs from the tree"
  grep -c "<$(realpath "$work")/cache-$name/partial/" "trace-$name.txt" || true
}

n=$(syncs durable)
[ "$n" -gt 0 ] || fail "no sync of the cache's downloads without --no-fsync: $(cat trace-durable.txt)"
grep -q "index.sqlite" trace-durable.txt || fail "no sync of the cache's index without --no-fsync"
grep -q "ferry-views" trace-durable.txt || fail "no sync of the view without --no-fsync"
n=$(syncs nosync --no-fsync)
[ "$n" = 0 ] || fail "--no-fsync made $n sync calls on the cache: $(grep cache-nosync trace-nosync.txt)"
[ ! -s trace-nosync.txt ] || fail "--no-fsync made sync calls: $(cat trace-nosync.txt)"
expect_rc 0 "$FERRY" sync --check nodes/nosync
n=$(syncs inplace --no-fsync --in-place)
[ ! -s trace-inplace.txt ] || fail "--no-fsync --in-place made sync calls: $(cat trace-inplace.txt)"
echo "sync --no-fsync: all passed"
