#!/usr/bin/env bash
# ferry sync with its cache on a small tmpfs (so also on another file system
# than DEST: the view is made of checked copies, not links): a full cache is a
# clean IO error (exit 4) naming the file, DEST is not made, nothing is
# half-installed; with room, a rerun completes and resumes the synced parts.
# A failed sync's unfinished view does not keep its objects pinned: the next
# sync (another version) evicts them when the file system is full (its
# failed download's part dropped first, so that the index can record that).
set -euo pipefail
ferry=$1 publish=$2
. "${FERRY_TEST_SERVERS_ENV:?}"
. "$(dirname "$0")/../cli/testlib.sh"
root=$FERRY_TEST_HTTP_ROOT/syncfull url=$FERRY_TEST_HTTP_URL/syncfull
rm -rf "$root"
mkdir -p tree small nodes
head -c $((6 << 20)) /dev/urandom > tree/big.bin
printf 'small\n' > tree/small.txt
# Parts of 512 KiB in the manifest: sync fetches an object in its manifest's
# part size, and a 6 MiB object of one part would have nothing to resume.
FERRY_CACHE=$work/pubcache "$ferry" publish tree "file://$root" --part-size 512K > /dev/null
if ! mount -t tmpfs -o size=3m tmpfs small 2>/dev/null; then
  echo "skipped: cannot mount a tmpfs (needs root)"; exit 77
fi
trap 'umount "$work/small" "$work/small2" "$work/small3" 2>/dev/null; rm -rf "$work" "$root"' EXIT
expect_rc 4 "$ferry" sync --connections 1 --part-size 512K "$url" nodes/ds --cache small/cache
grep -q "big.bin" err.txt && grep -qi "no space" err.txt || fail "message: $(cat err.txt)"
[ ! -e nodes/ds ] || fail "DEST made from a failed sync"
[ -z "$(find small/cache/objects -type f)" ] || [ "$(find small/cache/objects -type f | wc -l)" = 1 ] \
  || fail "objects: $(find small/cache/objects -type f)"
mount -o remount,size=16m small
expect_rc 0 "$ferry" sync --json --connections 1 --part-size 512K "$url" nodes/ds --cache small/cache
grep -q '"bytes_resumed":[1-9]' out.txt || fail "nothing resumed: $(cat out.txt)"
diff -r --exclude='.ferry-sync*' --exclude=.ferry-view.lock tree nodes/ds || fail "DEST differs"
[ "$(stat -c %h nodes/ds/big.bin)" = 1 ] || fail "a link across file systems?"
expect_rc 0 "$ferry" sync --check nodes/ds

# v1 (two 2 MiB files, one missing on the remote) fails after the other was
# cached, on a 3 MiB tmpfs; v2 (one 1.5 MiB file) then fits only if v1's
# cached file is evicted: on ENOSPC, with the disk full (parts of 512 KiB:
# the failed download keeps what it wrote, as the first part above).
mkdir -p small2 v1 v2
head -c $((2 << 20)) /dev/urandom > v1/a.bin
head -c $((2 << 20)) /dev/urandom > v1/b.bin
head -c $((3 << 19)) /dev/urandom > v2/c.bin
mount -t tmpfs -o size=3m tmpfs small2
FERRY_CACHE=$work/pubcache "$ferry" publish v1 "file://$work/r" --part-size 512K > /dev/null
b=$("$ferry" hash v1/b.bin | cut -c1-32)
rm "r/.ferry/objects/${b:0:2}/$b"
expect_rc 4 "$ferry" sync --connections 1 "file://$work/r" nodes/d1 --cache small2/cache
grep -q "b.bin: NotFound" err.txt || fail "v1 message: $(cat err.txt)"
[ "$(find small2/cache/objects -type f | wc -l)" = 1 ] || fail "v1 cached: $(find small2/cache/objects -type f)"
FERRY_CACHE=$work/pubcache "$ferry" publish v2 "file://$work/r" --part-size 512K > /dev/null
expect_rc 0 "$ferry" sync --json --connections 1 "file://$work/r" nodes/d2 --cache small2/cache
grep -q '"evicted_objects":1,' out.txt || fail "v1's object not evicted: $(cat out.txt)"
diff -r --exclude='.ferry-sync*' --exclude=.ferry-view.lock v2 nodes/d2 || fail "v2 DEST differs"

# 40 files of 200,000 bytes in one 8,000,000-byte pack, on a 12 MiB tmpfs
# (they fit as 40 objects): the pack's download and the files cut out of it
# do not fit side by side. Cutting hit ENOSPC; the files cut before it were
# neither landed nor failed: the sync failed (exit 4, 18 of 40 objects), 22
# files left in partial/. Now they go in, the download goes, and the rest is
# fetched once more: the first sync completes, partial/ empty.
mkdir -p packs small3
for i in $(seq 10 49); do head -c 200000 /dev/urandom > "packs/f$i"; done
FERRY_CACHE=$work/pubcache "$ferry" publish packs "file://$work/rp" > /dev/null
mount -t tmpfs -o size=12m tmpfs small3
expect_rc 0 "$ferry" sync --connections 1 "file://$work/rp" nodes/dp --cache small3/cache
diff -r --exclude='.ferry-sync*' --exclude=.ferry-view.lock packs nodes/dp || fail "packs DEST differs"
[ -z "$(find small3/cache/partial -type f)" ] || fail "left in partial: $(find small3/cache/partial -type f)"
expect_rc 0 "$ferry" sync --check nodes/dp
echo ok
