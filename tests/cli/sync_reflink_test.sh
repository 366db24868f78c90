#!/usr/bin/env bash
# ferry sync with the cache on another file system than DEST, where no hard
# link can be made: views and --in-place files are reflinked (FICLONE) where
# the file systems can share blocks, copied where not.
#  1. cache on a tmpfs (/dev/shm, no reflinks): every file copied.
#  2. one btrfs image mounted twice (hard links cannot cross mounts, reflinks
#     can): every file reflinked, its extents shared (filefrag). Needs root,
#     mkfs.btrfs and loop devices; skipped (exit 77 at the end) without them.
set -euo pipefail
FERRY=$1 PUBLISH=$2
source "$(dirname "$0")/testlib.sh"
mnts=()
cleanup() {
  for m in "${mnts[@]}"; do umount "$m" 2>/dev/null || true; done
  rm -rf "$work" "${shm:-}"
}
trap cleanup EXIT

field() { /usr/bin/python3 -c "import json,sys; print(json.load(open('out.txt'))['$1'])"; }
same_tree() {
  diff -r --exclude='.ferry-sync*' --exclude=.ferry-view.lock "$1" "$2" \
    || fail "$1 and $2 differ"
}
mkdir -p tree/sub
for i in 0 1 2; do head -c $((70000 + i)) /dev/urandom > "tree/sub/f$i.bin"; done
"$PUBLISH" tree bucket > /dev/null

# 1. tmpfs cache: copies.
if [ -d /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ] \
   && [ "$(stat -c %d /dev/shm)" != "$(stat -c %d "$work")" ]; then
  shm=$(mktemp -d /dev/shm/ferry-reflink.XXXXXX)
  expect_rc 0 "$FERRY" sync --json bucket view --cache "$shm/cache"
  [ "$(field files_copied)" = 3 ] && [ "$(field files_reflinked)" = 0 ] \
    || { cat out.txt; fail "tmpfs: copies"; }
  same_tree tree view
  expect_rc 0 "$FERRY" sync --json --in-place bucket flat --cache "$shm/cache"
  [ "$(field files_copied)" = 3 ] || { cat out.txt; fail "tmpfs in place: copies"; }
  same_tree tree flat
  echo "tmpfs: copied"
else
  echo "no tmpfs on another file system: part 1 skipped"
fi

# 2. btrfs mounted twice: reflinks.
skip() { echo "SKIP: $*"; exit 77; }
command -v mkfs.btrfs > /dev/null || skip "no mkfs.btrfs"
[ "$(id -u)" = 0 ] || skip "not root"
truncate -s 200M img
mkfs.btrfs -q img > /dev/null 2>&1 || skip "mkfs.btrfs failed"
mkdir a b
mount -o loop img a 2> /dev/null || skip "cannot mount a loop device"
mnts+=("$work/a")
mount -o loop img b 2> /dev/null || skip "cannot mount it twice"
mnts=("$work/b" "${mnts[@]}")
mkdir a/cache b/nodes
expect_rc 0 "$FERRY" sync --json bucket b/nodes/view --cache a/cache
[ "$(field files_reflinked)" = 3 ] && [ "$(field files_copied)" = 0 ] \
  || { cat out.txt; fail "btrfs: reflinks"; }
same_tree tree b/nodes/view
filefrag -v b/nodes/view/sub/f0.bin | grep -q shared || fail "extents not shared"
expect_rc 0 "$FERRY" sync --json --in-place bucket b/nodes/flat --cache a/cache
[ "$(field files_reflinked)" = 3 ] || { cat out.txt; fail "btrfs in place: reflinks"; }
same_tree tree b/nodes/flat
echo "sync reflinks: all passed"
