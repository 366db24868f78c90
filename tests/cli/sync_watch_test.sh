#!/usr/bin/env bash
# ferry sync --watch on a file:// remote: stays running, picks up each new
# version (polled with a timeout, never a sleep taken as proof), reports a
# failed round and goes on, and SIGTERM ends it with exit 0 and nothing
# left behind. Usage errors end it at once.
set -euo pipefail
FERRY=$1 PUBLISH=$2
source "$(dirname "$0")/testlib.sh"
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2> /dev/null; rm -rf "$work"' EXIT

same_tree() { diff -r --exclude='.ferry-sync*' --exclude=.ferry-view.lock "$1" "$2" > /dev/null; }
# until SECONDS CMD...: runs CMD every 0.1 s until it succeeds; fails after
# SECONDS.
until_ok() {
  local n=$(($1 * 10)); shift
  for _ in $(seq "$n"); do "$@" && return 0; sleep 0.1; done
  fail "timed out waiting for: $*"
}
points_to() { [ "$(readlink nodes/ds 2> /dev/null)" = ".ds.ferry-views/$1" ]; }
alive() { kill -0 "$pid" 2> /dev/null || fail "the watcher exited: $(cat watch.err)"; }

mkdir -p tree
for i in 1 2 3; do head -c $((4000 * i)) /dev/urandom > "tree/f$i.bin"; done
v1=$("$PUBLISH" tree bucket)
mkdir nodes

expect_rc 2 "$FERRY" sync --watch 0 bucket nodes/ds --cache cache
expect_rc 2 "$FERRY" sync --watch 1 --dry-run bucket nodes/ds --cache cache
[ ! -e nodes/ds ] || fail "a usage error synced"

"$FERRY" sync --watch 1 --json bucket nodes/ds --cache cache > watch.out 2> watch.err &
pid=$!
until_ok 60 points_to "$v1"
same_tree tree nodes/ds || fail "first round"

# A new version is picked up by a later round.
head -c 9000 /dev/urandom > tree/f2.bin
printf 'new\n' > tree/new.txt
v2=$("$PUBLISH" tree bucket)
until_ok 60 points_to "$v2"
same_tree tree nodes/ds || fail "after v2"
alive

# A failed round (v3's manifest damaged in the bucket: exit 3) is reported,
# DEST stays; once the manifest is whole again a later round takes v3.
rm tree/f1.bin
v3=$("$PUBLISH" tree bucket)
m=bucket/.ferry/manifests/$v3
mv "$m" manifest.saved
head -c 100 manifest.saved > "$m"
until_ok 60 grep -q "manifest $v3" watch.err
alive
points_to "$v2" || fail "DEST changed to a damaged version"
mv manifest.saved "$m"
until_ok 60 points_to "$v3"
same_tree tree nodes/ds || fail "after v3"

# One JSON line per round that changed DEST (3), none for the no-ops; the
# third is printed just after DEST switched.
rounds() { [ "$(grep -c '"command":"sync"' watch.out)" = 3 ]; }
until_ok 60 rounds

# HEAD rewritten with the bytes it had (a restore, a touch: a new ETag, the
# same id): a round records the new ETag and prints nothing (every round
# printed a full sync line before).
state=$(cat nodes/ds/.ferry-sync.json)
cp bucket/.ferry/refs/HEAD head.saved
cp head.saved bucket/.ferry/refs/HEAD
recorded() { [ "$(cat nodes/ds/.ferry-sync.json)" != "$state" ]; }
until_ok 10 recorded
alive

# SIGTERM between rounds: exit 0, nothing left behind.
kill -TERM "$pid"
set +e; wait "$pid"; rc=$?; set -e
pid=
[ "$rc" = 0 ] || fail "exit $rc after SIGTERM: $(cat watch.err)"
left=$(find cache nodes \( -name '*.ferry-part' -o -name '*.journal' -o -name '*.lock' \
       -o -name '*.adopt' -o -name '.ferry-tmp-*' -o -name '.ds.ferry-tmp' \) \
       ! -name '.ferry-view.lock' ! -name '.ds.ferry-sync.lock' -print)
[ -z "$left" ] || fail "left behind: $left"
[ "$(ls nodes/.ds.ferry-views)" = "$v3" ] || fail "old views left: $(ls nodes/.ds.ferry-views)"
rounds || fail "rounds reported: $(cat watch.out)"
echo "sync --watch: all passed"
