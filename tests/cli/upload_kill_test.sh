#!/usr/bin/env bash
# A put or publish to a file:// remote killed (kill -9) mid-upload leaves its
# temporary file (.ferry-tmp-<pid>-<id>-<name>) in the bucket. The next put
# or publish writing into that folder removes it once it is 60 s old (no
# writer holding its lock), and ferry gc removes it from anywhere under
# .ferry/; a live writer's temporary is kept, whatever its age or pid: a
# second put into the same folder at once, and a lock held on a temporary
# named by a pid that is gone here (a writer on another machine).
set -euo pipefail
FERRY=$1
source "$(dirname "$0")/testlib.sh"
export FERRY_CACHE=$work/cache SOURCE_DATE_EPOCH=1700000000
temps() { find "$1" -name '.ferry-tmp-*' 2>/dev/null | LC_ALL=C sort; }
# Waits (up to 10 s) for a temporary file below $1; prints it.
wait_temp() {
  for _ in $(seq 100); do
    t=$(temps "$1" | head -1)
    [ -n "$t" ] && { echo "$t"; return; }
    sleep 0.1
  done
  fail "no temporary file appeared below $1"
}
old() { touch -d '-2 minutes' "$@"; }

head -c $((32 << 20)) /dev/urandom > big.bin
printf 'small' > small.txt

# put, killed mid-upload (--bwlimit: 32 MiB take 16 s).
mkdir -p bucket
"$FERRY" put big.bin "file://$work/bucket/d/big.bin" --bwlimit 2M -q &
pid=$!
t=$(wait_temp bucket/d)
kill -9 $pid; wait $pid 2>/dev/null || true
[ -e "$t" ] || fail "the killed put left no temporary"
[ ! -e bucket/d/big.bin ] || fail "a killed put published a part"
# Young: its writer might not have taken its lock yet (or be on a machine
# whose locks this one does not see): kept.
expect_rc 0 "$FERRY" put small.txt "file://$work/bucket/d/small.txt"
[ -e "$t" ] || fail "a young temporary was removed"
old "$t"
expect_rc 0 "$FERRY" put small.txt "file://$work/bucket/d/small2.txt"
[ -z "$(temps bucket)" ] || fail "put left temporaries: $(temps bucket)"

# Two puts into one folder at once: the second removes nothing of the first,
# however old its temporary looks, and both complete.
"$FERRY" put big.bin "file://$work/bucket/e/big.bin" --bwlimit 8M -q &
slow=$!
t=$(wait_temp bucket/e)
old "$t"
for i in 1 2 3; do
  expect_rc 0 "$FERRY" put small.txt "file://$work/bucket/e/s$i.txt"
done
wait $slow || fail "the first put failed"
cmp big.bin bucket/e/big.bin || fail "the first put's object is damaged"
[ -z "$(temps bucket)" ] || fail "temporaries left: $(temps bucket)"

# A writer elsewhere: its pid (here gone) means nothing; its lock is held.
true & dead=$!; wait $dead
held="bucket/e/.ferry-tmp-$dead-0000000000ab-x"
printf 'partial' > "$held"
old "$held"
/usr/bin/python3 - "$held" <<'EOF' &
import fcntl, os, struct, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY)
fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0))
open(sys.argv[1] + ".locked", "w").close()
time.sleep(60)
EOF
locker=$!
for _ in $(seq 100); do [ -e "$held.locked" ] && break; sleep 0.1; done
rm -f "$held.locked"
expect_rc 0 "$FERRY" put small.txt "file://$work/bucket/e/s4.txt"
[ -e "$held" ] || fail "a locked temporary was removed"
kill $locker; wait $locker 2>/dev/null || true
expect_rc 0 "$FERRY" put small.txt "file://$work/bucket/e/s5.txt"
[ ! -e "$held" ] || fail "its writer gone, the temporary was kept"

# publish, killed mid-upload of an object; gc and the rerun clean up.
mkdir src
printf 'one' > src/a.txt
expect_rc 0 "$FERRY" publish src "file://$work/pub" -m first
cp big.bin src/big.bin
"$FERRY" publish src "file://$work/pub" --bwlimit 2M -q &
pid=$!
t=$(wait_temp pub/.ferry/objects)
kill -9 $pid; wait $pid 2>/dev/null || true
[ -e "$t" ] || fail "the killed publish left no temporary"
cp "$t" "pub/.ferry/objects/$(basename "$t")"   # a copy gc alone will see
old "$t" "pub/.ferry/objects/$(basename "$t")"
expect_rc 0 "$FERRY" gc "file://$work/pub" --dry-run --json
grep -q '"temps_deleted":2' out.txt || fail "gc --dry-run: $(cat out.txt)"
[ "$(temps pub | wc -l)" = 2 ] || fail "gc --dry-run removed something"
expect_rc 0 "$FERRY" publish src "file://$work/pub" -m second
[ "$(temps pub)" = "pub/.ferry/objects/$(basename "$t")" ] ||
  fail "publish left temporaries in the folders it wrote: $(temps pub)"
expect_rc 0 "$FERRY" gc "file://$work/pub"
grep -q 'deleted 1 temporary files' out.txt || fail "gc: $(cat out.txt)"
[ -z "$(temps pub)" ] || fail "gc left temporaries: $(temps pub)"
echo PASS
