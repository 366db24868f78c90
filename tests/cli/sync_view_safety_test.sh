#!/usr/bin/env bash
# ferry sync views against their users and other users: files a user puts
# into a view are kept when the view goes; a views folder that is a link or
# another user's folder is refused; bytes changed or removed in a view (or
# in the cache behind it) are repaired by the next sync.
set -euo pipefail
FERRY=$1 PUBLISH=$2
source "$(dirname "$0")/testlib.sh"

field() { /usr/bin/python3 -c "import json,sys; print(json.load(open('out.txt'))['$1'])"; }

mkdir -p tree/sub
for i in 0 1 2 3; do head -c $((3000 + i)) /dev/urandom > "tree/sub/f$i.bin"; done
printf 'hello\n' > tree/readme.txt
"$PUBLISH" tree bucket > /dev/null

# 1. A user's files in the view survive the switch to the next version: the
# old view is moved aside whole, with a warning naming them.
expect_rc 0 "$FERRY" sync bucket u1 --cache cache
echo notes > u1/notes.txt
mkdir u1/mine && echo x > u1/mine/y
printf 'v2\n' > tree/readme.txt
"$PUBLISH" tree bucket > /dev/null
expect_rc 0 "$FERRY" sync bucket u1 --cache cache
grep -q "warning: .*2 file(s) ferry did not place (mine/, notes.txt)" err.txt \
  || { cat err.txt; fail "no warning naming the user's files"; }
aside=$(ls -d .u1.ferry-old-*)
[ "$(cat "$aside/notes.txt")" = notes ] || fail "notes.txt lost"
[ "$(cat "$aside/mine/y")" = x ] || fail "mine/y lost"
[ ! -e u1/notes.txt ] || fail "the new view holds the old view's extras"
[ "$(cat u1/readme.txt)" = v2 ] || fail "not switched"
# A view holding only ferry's files still goes, silently.
printf 'v3\n' > tree/readme.txt
"$PUBLISH" tree bucket > /dev/null
expect_rc 0 "$FERRY" sync --json bucket u1 --cache cache
[ "$(field old_views_removed)" = 1 ] || fail "old view kept"
[ "$(ls -d .u1.ferry-old-* | wc -l)" = 1 ] || fail "a clean view was moved aside"
[ "$(ls .u1.ferry-views)" = "$(basename "$(readlink u1)")" ] || fail "old view left"

# 3. Bytes written through a view (same size) change the cache's object
# that other DESTs link: a new DEST gets the object re-fetched, and each
# DEST's next sync (no longer a no-op) rebuilds its view from good bytes.
expect_rc 0 "$FERRY" sync bucket u2 --cache cache
chmod u+w u1/sub/f1.bin
printf 'EVIL' | dd of=u1/sub/f1.bin bs=1 conv=notrunc status=none
cmp -s u2/sub/f1.bin tree/sub/f1.bin && fail "u2 does not share the object"
expect_rc 0 "$FERRY" sync --json bucket u3 --cache cache
[ "$(field objects_fetched)" = 1 ] || { cat out.txt; fail "tampered object linked"; }
cmp u3/sub/f1.bin tree/sub/f1.bin || fail "u3 got the tampered bytes"
for d in u1 u2; do
  expect_rc 0 "$FERRY" sync --json bucket $d --cache cache
  [ "$(field unchanged)" = False ] || fail "$d: a no-op over a changed view"
  cmp $d/sub/f1.bin tree/sub/f1.bin || fail "$d not repaired"
  diff -r --exclude='.ferry-*' tree $d || fail "$d differs"
done
# A file removed from a view comes back; then the no-op is one request again.
rm u1/readme.txt u1/sub/f2.bin
expect_rc 0 "$FERRY" sync --json bucket u1 --cache cache
[ "$(field objects_fetched)" = 0 ] || { cat out.txt; fail "fetched for a removed link"; }
diff -r --exclude='.ferry-*' tree u1 || fail "removed files not restored"
expect_rc 0 "$FERRY" sync --json bucket u1 --cache cache
[ "$(field unchanged)" = True ] || fail "no no-op after the repair"
[ "$(field requests)" = 1 ] || { cat out.txt; fail "no-op made more than one request"; }
# Another DEST linking the same objects (their ctime changes) is no reason
# to rebuild: u1 is still a no-op.
expect_rc 0 "$FERRY" sync bucket u4 --cache cache
expect_rc 0 "$FERRY" sync --json bucket u1 --cache cache
[ "$(field unchanged)" = True ] || fail "another DEST's links broke u1's no-op"
# That no-op recorded the new stamps: the next one does not read the cache's
# index (here unreadable).
mkdir index_aside && mv cache/index.sqlite* index_aside/
echo garbage > cache/index.sqlite
expect_rc 0 "$FERRY" sync --json bucket u1 --cache cache
[ "$(field unchanged)" = True ] || fail "u1's no-op asked the cache again"
rm cache/index.sqlite* && mv index_aside/* cache/ && rmdir index_aside
expect_rc 0 "$FERRY" sync --check u1
[ -z "$(ls -d .u*.ferry-old-* | grep -v '^.u1.ferry-old' || true)" ] \
  || fail "a repaired view was moved aside as if it held a user's files"
# A no-op killed while it rewrote the stamps leaves its temporary in the
# view: ferry's own, so the view still goes silently at the next version.
touch "$(readlink u1)/.ferry-tmp-999999-0000000000ab-.ferry-sync-stamps"
printf 'v4\n' > tree/readme.txt
"$PUBLISH" tree bucket > /dev/null
expect_rc 0 "$FERRY" sync --json bucket u1 --cache cache
[ "$(field old_views_removed)" = 1 ] && [ "$(ls -d .u1.ferry-old-* | wc -l)" = 1 ] \
  || { cat out.txt err.txt; fail "a view with a stamps temporary was kept"; }

# 2. The views folder: a link (to another user's folder) or another user's
# folder is refused, before anything is written there.
if [ "$(id -u)" = 0 ]; then
  mkdir -m 1777 shared evil
  chown nobody evil
  ln -s "$work/evil" shared/.ds.ferry-views
  chown -h nobody shared/.ds.ferry-views
  expect_rc 4 "$FERRY" sync bucket shared/ds --cache cache
  grep -q "is not a folder of yours" err.txt || { cat err.txt; fail "message"; }
  [ -z "$(ls -A evil)" ] || fail "a view was built in another user's folder"
  [ ! -e shared/ds ] && [ ! -L shared/ds ] || fail "DEST made"
  rm shared/.ds.ferry-views
  mkdir shared/.ds.ferry-views && chown nobody shared/.ds.ferry-views
  expect_rc 4 "$FERRY" sync bucket shared/ds --cache cache
  grep -q "is not a folder of yours" err.txt || { cat err.txt; fail "message"; }
  rmdir shared/.ds.ferry-views
  # Made by ferry, then handed to another user: the no-op does not trust it.
  expect_rc 0 "$FERRY" sync bucket shared/ds --cache cache
  chown -R nobody shared/.ds.ferry-views
  expect_rc 4 "$FERRY" sync bucket shared/ds --cache cache
  grep -q "is not a folder of yours" err.txt || { cat err.txt; fail "no-op trusted it"; }
fi

# 4. A FIFO in place of one of ferry's own files never hangs a sync (each
# open waited for a writer): a view's state and stamps, its lock (opened by
# the old view's cleaner), the cache's cleaners lock, a cached manifest.
# Each run is bounded; a hang is exit 124.
sync_in() { expect_rc "$1" timeout 60 "$FERRY" sync "${@:2}"; }
sync_in 0 bucket f1 --cache fcache
v=$(readlink f1)
rm "$v/.ferry-sync-stamps" && mkfifo "$v/.ferry-sync-stamps"
sync_in 0 --json bucket f1 --cache fcache
[ "$(field unchanged)" = False ] || fail "a view with a FIFO for stamps is intact"
diff -r --exclude='.ferry-*' tree f1 || fail "f1 differs"
v=$(readlink f1)
rm "$v/.ferry-sync.json" && mkfifo "$v/.ferry-sync.json"
sync_in 2 --check f1  # not a regular file (as a device): named, not waited for
grep -q "not a regular file (FIFO)" err.txt || { cat err.txt; fail "message"; }
sync_in 0 bucket f1 --cache fcache
diff -r --exclude='.ferry-*' tree f1 || fail "f1 differs"
v=$(readlink f1)
rm "$v/.ferry-view.lock" && mkfifo "$v/.ferry-view.lock"
printf 'v5\n' > tree/readme.txt
"$PUBLISH" tree bucket > /dev/null
sync_in 0 bucket f1 --cache fcache
rm -f fcache/locks/cleaners && mkfifo fcache/locks/cleaners
sync_in 0 bucket f2 --cache fcache
printf 'v6\n' > tree/readme.txt
"$PUBLISH" tree bucket > /dev/null
m=$(ls -t bucket/.ferry/manifests | head -1)
rm -f "fcache/manifests/$m" && mkfifo "fcache/manifests/$m"
sync_in 0 bucket f2 --cache fcache
diff -r --exclude='.ferry-*' tree f2 || fail "f2 differs"
[ -f "fcache/manifests/$m" ] || fail "the cached manifest's FIFO was not replaced"
# A mirror of the bucket (the same manifest id from another remote) synced
# into a DEST that shows the original's view: the new view is built beside
# it and swapped in, the shown one never emptied. It was emptied and built
# again in place, and the sync failed (exit 4, NotFound adopting a file
# from it): DEST showed an empty dataset.
cp -a bucket mirror
expect_rc 0 "$FERRY" sync bucket m1 --cache mcache
orig=$(readlink m1)
exec 8< m1/readme.txt
expect_rc 0 "$FERRY" sync mirror m1 --cache mcache
[ "$(readlink m1)" != "$orig" ] || fail "the mirror's view was built in the shown one"
diff -r --exclude='.ferry-*' tree m1 || fail "m1 differs after the mirror's sync"
[ "$(cat <&8)" = "$(cat tree/readme.txt)" ] || fail "a reader of the old view lost its file"
exec 8<&-
expect_rc 0 "$FERRY" sync --json mirror m1 --cache mcache
diff -r --exclude='.ferry-*' tree m1 || fail "m1 differs after a second sync"
# That second sync is a no-op: --json names the folder DEST shows (it named
# <id>, the original's view or a folder no longer there).
[ "$(field unchanged)" = True ] || fail "the mirror's second sync was no no-op"
[ "$(field view)" = "$PWD/$(readlink m1)" ] \
  || fail "--json view $(field view), DEST shows $(readlink m1)"
# An unmanaged remote's old view that a reader kept, then damaged (a file
# removed), is not swapped back in as it is when the remote returns to that
# listing: it is rebuilt beside it. It was reused unchecked: exit 0, DEST
# without the file, --check exit 3.
mkdir plain && cp tree/readme.txt tree/sub/f0.bin plain/
expect_rc 0 "$FERRY" sync plain p1 --cache pcache
kept=$PWD/$(readlink p1)
exec 9< "$kept/.ferry-view.lock" && flock -s 9
echo new > plain/new.txt
expect_rc 0 "$FERRY" sync plain p1 --cache pcache
[ -d "$kept" ] || fail "the view a reader holds went"
rm -f "$kept/readme.txt" && rm plain/new.txt
expect_rc 0 "$FERRY" sync plain p1 --cache pcache
exec 9<&-
expect_rc 0 "$FERRY" sync --check p1
diff -r --exclude='.ferry-*' plain p1 || fail "p1 differs from plain"
echo OK
