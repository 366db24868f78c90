#!/usr/bin/env bash
# ferry sync --in-place on file:// remotes (tests/testutil/publish_tree stands
# in for ferry publish): DEST a plain folder updated file by file; a no-op in
# one request; only what changed placed; files ferry placed and the new
# version drops removed, other files kept (removed with --delete); a kill -9
# midway and a rerun; a symbolic link on a file's way; a FIFO or a link
# to a device at a file's name refused; switching between a
# view DEST and an --in-place DEST refused both ways; ferry verify on a pack
# output synced --in-place.
set -euo pipefail
FERRY=$1 PUBLISH=$2 SAMPLES=$3
source "$(dirname "$0")/testlib.sh"

field() { /usr/bin/python3 -c "import json,sys; print(json.load(open('out.txt'))['$1'])"; }
# same_files TREE DEST: DEST holds TREE's files (and maybe others).
same_files() {
  (cd "$1" && find . -type f | sort) | while read -r f; do
    cmp -s "$1/$f" "$2/$f" || fail "$2/$f differs from $1/$f"
  done
}
# only TREE DEST EXTRA...: DEST has exactly TREE's files plus EXTRA (and
# ferry's .ferry-sync* state).
only() {
  local tree=$1 dest=$2; shift 2
  same_files "$tree" "$dest"
  local want got
  want=$( (cd "$tree" && find . -type f; for e in "$@"; do echo "./$e"; done) | sort)
  got=$(cd "$dest" && find . \( -type f -o -type l \) ! -name '.ferry-sync*' | sort)
  [ "$want" = "$got" ] || fail "files in $dest: $got, want $want"
}

mkdir -p tree/sub
for i in 0 1 2 3 4 5; do head -c $((4000 + i)) /dev/urandom > "tree/sub/f$i.bin"; done
printf 'hello\n' > tree/readme.txt
"$PUBLISH" tree bucket > /dev/null

# Cold into a folder with a file of the user's: kept; no link, no views.
mkdir ds && printf 'mine\n' > ds/user.txt
expect_rc 0 "$FERRY" sync --json --in-place bucket ds --cache cache
[ "$(field files_placed)" = 7 ] || { cat out.txt; fail "cold placed"; }
[ -d ds ] && [ ! -L ds ] || fail "DEST is not a plain folder"
[ ! -e .ds.ferry-views ] || fail "views folder made"
[ "$(field view)" = "$work/ds" ] || fail "view $(field view)"
only tree ds user.txt
expect_rc 0 "$FERRY" sync --check ds
grep -q "all good" out.txt || fail "check"

# No-op: one request, nothing touched.
expect_rc 0 "$FERRY" sync --json --in-place bucket ds --cache cache
[ "$(field unchanged)" = True ] && [ "$(field requests)" = 1 ] || { cat out.txt; fail "no-op"; }

# Incremental: one changed, one added, one dropped; the user's file stays.
ino=$(stat -c %i ds/sub/f0.bin)
head -c 6000 /dev/urandom > tree/sub/f1.bin
printf 'new\n' > tree/new.txt
rm tree/sub/f2.bin
"$PUBLISH" tree bucket > /dev/null
expect_rc 0 "$FERRY" sync --json --in-place bucket ds --cache cache
[ "$(field objects_fetched)" = 2 ] && [ "$(field files_placed)" = 2 ] \
  && [ "$(field files_kept)" = 5 ] && [ "$(field files_removed)" = 1 ] \
  || { cat out.txt; fail "incremental counts"; }
only tree ds user.txt
[ "$(stat -c %i ds/sub/f0.bin)" = "$ino" ] || fail "an unchanged file was replaced"

# A dropped folder goes with its last file; --delete removes other files.
mkdir -p tree/gone && printf 'x\n' > tree/gone/g.txt
"$PUBLISH" tree bucket > /dev/null
expect_rc 0 "$FERRY" sync --in-place bucket ds --cache cache
rm -r tree/gone
"$PUBLISH" tree bucket > /dev/null
expect_rc 0 "$FERRY" sync --in-place bucket ds --cache cache
[ ! -e ds/gone ] || fail "emptied folder left"
mkdir -p ds/junk && printf 'j\n' > ds/junk/j.txt
printf 'x\n' > tree/readme.txt
"$PUBLISH" tree bucket > /dev/null
expect_rc 0 "$FERRY" sync --json --in-place --delete bucket ds --cache cache
only tree ds
[ ! -e ds/junk ] || fail "--delete left a folder"

# kill -9 after 2 of 4 files are placed: DEST is a mix, the state says
# "not complete" (no no-op), the rerun finishes and removes what the
# version drops; no temporary left.
for i in 0 1 3 4; do head -c 5000 /dev/urandom > "tree/sub/f$i.bin"; done
rm tree/new.txt
"$PUBLISH" tree bucket > /dev/null
FERRY_TEST_SYNC_PAUSE_AFTER=2 FERRY_TEST_SYNC_PAUSE_FILE=$work/paused \
  "$FERRY" sync -q --in-place bucket ds --cache cache &
pid=$!
for _ in $(seq 300); do [ -e paused ] && break; sleep 0.1; done
[ -e paused ] || fail "sync never reached the pause"
kill -9 $pid; wait $pid 2>/dev/null || true
changed=0
for i in 0 1 3 4; do cmp -s "tree/sub/f$i.bin" "ds/sub/f$i.bin" && changed=$((changed + 1)); done
[ "$changed" = 2 ] || fail "after the kill $changed files are new, want 2"
[ -e ds/.ferry-sync-pending ] || fail "no pending list"
expect_rc 0 "$FERRY" sync --json --in-place bucket ds --cache cache
[ "$(field unchanged)" = False ] || fail "a killed sync taken as done"
only tree ds
[ -z "$(find ds -name '*.ferry-tmp' -o -name '.ferry-sync-pending')" ] || fail "leftovers"
expect_rc 0 "$FERRY" sync --json --in-place bucket ds --cache cache
[ "$(field unchanged)" = True ] || fail "not a no-op after the rerun"

# A file removed from DEST, one written in it (same size, through its link
# into the cache) and one replaced by other bytes of its size: the next sync
# (the ref unchanged) is no no-op, puts them back and fetches only the object
# the write damaged; then a no-op again.
rm ds/readme.txt
chmod u+w ds/sub/f0.bin
printf 'EVIL' | dd of=ds/sub/f0.bin bs=1 conv=notrunc status=none
size=$(wc -c < ds/sub/f1.bin) && rm ds/sub/f1.bin
head -c "$size" /dev/zero > ds/sub/f1.bin
expect_rc 0 "$FERRY" sync --json --in-place bucket ds --cache cache
[ "$(field unchanged)" = False ] && [ "$(field objects_fetched)" = 1 ] \
  || { cat out.txt; fail "changed --in-place DEST: not repaired as it should"; }
only tree ds
expect_rc 0 "$FERRY" sync --json --in-place bucket ds --cache cache
[ "$(field unchanged)" = True ] || fail "not a no-op after the repair"

# A symbolic link on a file's way is not followed: nothing written outside.
mkdir outside ds2
ln -s ../outside ds2/sub
expect_rc 4 "$FERRY" sync --in-place bucket ds2 --cache cache
grep -q "symbolic link" err.txt || { cat err.txt; fail "link message"; }
[ -z "$(ls outside)" ] || fail "wrote through the link"

# A FIFO (or a link to a device) at a file's name is not replaced by the
# file: the sync fails naming it (exit 4), the FIFO and /dev/null untouched.
mkdir ds3 && mkfifo ds3/readme.txt
expect_rc 4 "$FERRY" sync --in-place bucket ds3 --cache cache
grep -q "ds3/readme.txt: not a regular file (FIFO)" err.txt || { cat err.txt; fail "FIFO message"; }
[ -p ds3/readme.txt ] || fail "FIFO replaced"
rm ds3/readme.txt && ln -s /dev/null ds3/readme.txt
expect_rc 4 "$FERRY" sync --in-place bucket ds3 --cache cache
grep -Eq "ds3/readme.txt: (not a regular file \(character device\)|a link to /dev/null)" err.txt || { cat err.txt; fail "device message"; }
[ -L ds3/readme.txt ] && [ -c /dev/null ] || fail "link to a device replaced"

# A view DEST and an --in-place DEST do not turn into each other.
expect_rc 0 "$FERRY" sync bucket view --cache cache
expect_rc 2 "$FERRY" sync --in-place bucket view --cache cache
grep -q "is a view made by ferry sync without --in-place" err.txt || fail "view -> in-place message"
[ -L view ] || fail "view touched"
expect_rc 2 "$FERRY" sync bucket ds --cache cache
grep -q "was synced with --in-place" err.txt || fail "in-place -> view message"
[ -d ds ] && [ ! -L ds ] || fail "in-place DEST touched"

# A pack output synced --in-place verifies as the original does (ferry's
# .ferry-sync* files are not extras).
cp -r "$SAMPLES/dataset" data
"$FERRY" pack data packed --size 64 --shard-records 8 -q
"$PUBLISH" packed pbucket > /dev/null
expect_rc 0 "$FERRY" sync --in-place pbucket pk --cache cache
expect_rc 0 "$FERRY" verify pk
expect_rc 0 "$FERRY" verify pk --deep

echo "sync --in-place CLI: all passed"
