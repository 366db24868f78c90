#!/usr/bin/env bash
# --cache-limit shared by syncs of different remotes into one cache at once:
# a sync counts what another one reserved (its downloads to come) when it
# makes its room, and refuses before fetching anything when both do not
# fit; the cache never ends above the limit. A sync killed (kill -9) with
# its reservation recorded blocks no later sync.
#
# Deterministic: the test holds every object lock of the cache (POSIX
# locks over the 64 files of cache/locks/; a sync's are OFD locks on one
# byte each), so a sync that made its room waits there, before its first
# download, until the test lets go.
set -euo pipefail
FERRY=$1 PUBLISH=$2
source "$(dirname "$0")/testlib.sh"
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

limit=15728640  # 15MiB
for r in a b; do
  mkdir "t$r"
  head -c 5000000 /dev/urandom > "t$r/1.bin"
  head -c 5000000 /dev/urandom > "t$r/2.bin"
  "$PUBLISH" "t$r" "bucket$r" > /dev/null
done
mkdir nodes

same_tree() {
  diff -r --exclude='.ferry-sync*' --exclude=.ferry-view.lock "$1" "$2" \
    || fail "$1 and $2 differ"
}
cache_bytes() { find cache/objects cache/partial -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}'; }
hold() {
  mkdir -p cache/locks
  rm -f held
  /usr/bin/python3 -c '
import fcntl, os, signal
fds = []
for i in range(64):
    fd = os.open("cache/locks/objects-%d" % i, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.lockf(fd, fcntl.LOCK_EX)
    fds.append(fd)
open("held", "w").close()
signal.pause()' &
  holder=$!
  pids+=($holder)
  until [ -e held ]; do
    kill -0 $holder 2> /dev/null || fail "the lock holder died"
    sleep 0.1
  done
}
release() { kill $holder; wait $holder 2> /dev/null || true; }
# How many processes wait for one of the held locks.
waiters() {
  local inodes
  inodes=$(stat -c '%i' cache/locks/objects-* | paste -sd'|')
  grep -Ec -- "-> +(OFDLCK|POSIX) .*:($inodes) " /proc/locks || true
}
# until_waiting N PID: until N processes wait for the locks, or PID ended.
until_waiting() {
  for _ in $(seq 600); do
    [ "$(waiters)" -ge "$1" ] && return 0
    kill -0 "$2" 2> /dev/null || return 0
    sleep 0.1
  done
  fail "nobody waits for the locks"
}

# 1. A makes its room (10 MB to fetch) and waits before its downloads; B
# makes its room then. Before, B counted only the objects in the cache
# (none yet), fitted, and both fetched: 20,000,000 bytes under 15MiB.
hold
"$FERRY" sync --json bucketa nodes/a --cache cache --cache-limit 15MiB > a.json 2> a.err &
pa=$!
pids+=($pa)
until_waiting 1 $pa
kill -0 $pa 2> /dev/null || { cat a.err; fail "A ended before its downloads"; }
"$FERRY" sync bucketb nodes/b --cache cache --cache-limit 15MiB > b.out 2> b.err &
pb=$!
pids+=($pb)
until_waiting 2 $pb
if kill -0 $pb 2> /dev/null; then
  release
  wait $pa || true
  wait $pb || true
  fail "B made its room while A's downloads were to come; the cache ended at $(cache_bytes) bytes, limit $limit"
fi
set +e; wait $pb; rb=$?; set -e
[ "$rb" = 4 ] || { cat b.out b.err; fail "B -> exit $rb, want 4"; }
grep -q "ResourceExhausted: cache .*: needs 10000000 more bytes; 10000000 in use (10000000 of them reserved by other syncs running now), 0 of them evictable" b.err \
  || { cat b.err; fail "B's refusal does not say why"; }
[ ! -e nodes/b ] || fail "the refused sync made its DEST"
release
wait $pa || { cat a.err; fail "A failed"; }
same_tree ta nodes/a
size=$(cache_bytes)
[ "$size" -le $limit ] || fail "the cache holds $size bytes, limit $limit"
[ "$size" = 10000000 ] || fail "the cache holds $size bytes, not A's 10000000"

# 2. Afterwards, on its own, B refuses as before: A's view pins 10 MB.
expect_rc 4 "$FERRY" sync bucketb nodes/b --cache cache --cache-limit 15MiB
grep -q "needs 10000000 more bytes; 10000000 in use, 0 of them evictable" err.txt \
  || { cat err.txt; fail "B's refusal on its own"; }
# A refused sync leaves no view folder behind (before: an empty
# .b.ferry-views/<id> per refused version, and the views folder, until a
# sync of that version succeeded), however often it is refused; one into a
# DEST that is a view keeps that view, and only it.
for _ in 1 2 3; do
  expect_rc 4 "$FERRY" sync bucketb nodes/b --cache cache --cache-limit 15MiB
done
[ ! -e nodes/.b.ferry-views ] || { find nodes/.b.ferry-views; fail "the refused sync left its view"; }
[ ! -e nodes/b ] || fail "the refused sync made its DEST"
views_a=$(ls -A nodes/.a.ferry-views)
expect_rc 4 "$FERRY" sync bucketb nodes/a --cache cache --cache-limit 15MiB
[ "$(ls -A nodes/.a.ferry-views)" = "$views_a" ] \
  || { ls -A nodes/.a.ferry-views; fail "the refused sync into a view left its view"; }
same_tree ta nodes/a

# 3. A's view gone (its objects evictable). C (1 MB) makes its room, then B
# (evicting A's objects), and both wait; B is killed (kill -9) there, C
# completes. A's room then leaves B's reservation out (its slot's lock went
# with it), where B's 10 MB, counted, made it refuse. C held the first slot
# (B the second), and A takes the first again: B's is not reused.
rm -rf nodes/a nodes/.a.ferry-views
mkdir tc && head -c 1000000 /dev/urandom > tc/1.bin && "$PUBLISH" tc bucketc > /dev/null
hold
"$FERRY" sync bucketc nodes/c --cache cache --cache-limit 15MiB > c.out 2> c.err &
pc=$!
pids+=($pc)
until_waiting 1 $pc
kill -0 $pc 2> /dev/null || { cat c.err; fail "C ended before its downloads"; }
"$FERRY" sync bucketb nodes/b --cache cache --cache-limit 15MiB > b.out 2> b.err &
pb=$!
pids+=($pb)
until_waiting 2 $pb
kill -0 $pb 2> /dev/null || { cat b.err; fail "B ended before its downloads"; }
{ kill -9 $pb && wait $pb; } 2> /dev/null || true
release
wait $pc || { cat c.err; fail "C failed"; }
expect_rc 0 "$FERRY" sync --json bucketa nodes/a --cache cache --cache-limit 15MiB
same_tree ta nodes/a
same_tree tc nodes/c
size=$(cache_bytes)
[ "$size" -le $limit ] || fail "the cache holds $size bytes, limit $limit"
echo "ok"
