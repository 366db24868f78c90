#!/usr/bin/env bash
# ferry sync from unmanaged remotes (no .ferry/refs/HEAD): a file:// tree
# written by ferry put -R and by hand, listed; a no-op is the listing; a
# changed file is the only one fetched; --in-place; --list FILE (only the
# files it names, a missing one an error); ferry's own names never synced;
# a fake S3 whose ETag is the MD5 of other bytes: exit 3, DEST untouched;
# a published remote without its HEAD: an error, not an unmanaged remote;
# two syncs at once on one cache fetch each file once; --cache-limit keeps
# the cached files a sync links; no lock file per file, also after a
# failed download.
set -euo pipefail
FERRY=$1
here=$(cd "$(dirname "$0")" && pwd)
source "$here/testlib.sh"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

field() { /usr/bin/python3 -c "import json,sys; print(json.load(open('out.txt'))['$1'])"; }
same_tree() {
  diff -r --exclude='.ferry-sync*' --exclude=.ferry-view.lock "$1" "$2" \
    || fail "$1 and $2 differ"
}

mkdir -p src/sub
for i in 0 1 2 3 4; do head -c $((3000 + i)) /dev/urandom > "src/sub/f$i.bin"; done
printf 'labels\n' > src/labels.txt
expect_rc 0 "$FERRY" put -R src "file://$work/plain"
[ ! -e plain/.ferry ] || fail "put -R made a .ferry"
printf 'lock\n' > plain/.ferry-lock  # ferry's own name: never synced

# Cold: listed, every file fetched, a view as for a managed remote.
expect_rc 0 "$FERRY" sync --json "file://$work/plain" ds --cache cache
[ "$(field unmanaged)" = True ] && [ "$(field objects_fetched)" = 6 ] \
  && [ "$(field files_listed)" = 6 ] || { cat out.txt; fail "cold"; }
[ -L ds ] || fail "DEST is not a view link"
same_tree src ds
expect_rc 0 "$FERRY" sync --check ds
grep -q "all good" out.txt || fail "check"

# No-op: the listing only.
expect_rc 0 "$FERRY" sync --json plain ds --cache cache
[ "$(field unchanged)" = True ] && [ "$(field objects_fetched)" = 0 ] \
  || { cat out.txt; fail "no-op"; }

# One file rewritten with put, one added, one removed: only two fetched.
head -c 4000 /dev/urandom > src/sub/f2.bin
printf 'more\n' > src/more.txt
expect_rc 0 "$FERRY" put src/sub/f2.bin "file://$work/plain/sub/f2.bin"
expect_rc 0 "$FERRY" put src/more.txt "file://$work/plain/more.txt"
rm src/sub/f4.bin plain/sub/f4.bin
expect_rc 0 "$FERRY" sync --json plain ds --cache cache
[ "$(field objects_fetched)" = 2 ] && [ "$(field files_cached)" = 4 ] \
  && [ "$(field bytes_fetched)" = 4005 ] || { cat out.txt; fail "incremental"; }
same_tree src ds

# A file removed from the view: the next sync (nothing listed changed) puts
# it back from the cache; then a no-op again.
rm ds/more.txt
expect_rc 0 "$FERRY" sync --json plain ds --cache cache
[ "$(field unchanged)" = False ] && [ "$(field objects_fetched)" = 0 ] \
  || { cat out.txt; fail "a file removed from a view"; }
same_tree src ds
expect_rc 0 "$FERRY" sync --json plain ds --cache cache
[ "$(field unchanged)" = True ] || { cat out.txt; fail "no no-op after the repair"; }

# --in-place from the same remote, then a change.
# (the cache knows each listed file's hash: nothing fetched again)
expect_rc 0 "$FERRY" sync --json --in-place plain flat --cache cache
[ "$(field objects_fetched)" = 0 ] && [ "$(field files_cached)" = 6 ] \
  || { cat out.txt; fail "another DEST fetched again"; }
[ -d flat ] && [ ! -L flat ] || fail "--in-place made a link"
same_tree src flat
head -c 100 /dev/urandom > plain/labels.txt && cp plain/labels.txt src/labels.txt
expect_rc 0 "$FERRY" sync --json --in-place plain flat --cache cache
[ "$(field objects_fetched)" = 1 ] && [ "$(field files_placed)" = 1 ] || { cat out.txt; fail "in-place change"; }
same_tree src flat
# A file removed from it and one written in it (through its link into the
# cache): put back by the next sync, the damaged object fetched again.
rm flat/sub/f0.bin
chmod u+w flat/labels.txt
printf 'X' | dd of=flat/labels.txt bs=1 conv=notrunc status=none
expect_rc 0 "$FERRY" sync --json --in-place plain flat --cache cache
[ "$(field unchanged)" = False ] && [ "$(field objects_fetched)" = 1 ] \
  || { cat out.txt; fail "a changed --in-place DEST"; }
same_tree src flat
expect_rc 0 "$FERRY" sync --json --in-place plain flat --cache cache
[ "$(field unchanged)" = True ] || { cat out.txt; fail "no no-op after the repair"; }

# Two syncs of the remote into two DESTs on one new cache at once: each
# file fetched once in all.
"$FERRY" sync --json plain two1 --cache cache3 > two1.json &
p1=$!
"$FERRY" sync --json plain two2 --cache cache3 > two2.json &
p2=$!
wait $p1 && wait $p2 || fail "a concurrent sync failed"
n=$(/usr/bin/python3 -c "import json; print(sum(json.load(open(f))['objects_fetched'] for f in ('two1.json', 'two2.json')))")
[ "$n" = 6 ] || { cat two1.json two2.json; fail "fetched $n objects for 6 files"; }
same_tree src two1
same_tree src two2
left=$(find cache3 -name '*.lock')
[ -z "$left" ] || fail "lock files left: $left"

# A sync that looked the files up before another one fetched them (held
# here behind the cache's eviction lock: --cache-limit) takes their locks
# once the other let go, and finds them cached: nothing fetched twice.
mkdir cache4 && : > cache4/lock
exec 8< cache4/lock
flock 8
"$FERRY" sync --json --cache-limit 1G plain late --cache cache4 > late.json 2> late.err &
late=$!
pids+=($late)
for _ in $(seq 600); do
  grep -Eq -- "-> FLOCK +ADVISORY +WRITE +$late " /proc/locks && break
  kill -0 $late 2> /dev/null || break
  sleep 0.1
done
expect_rc 0 "$FERRY" sync --json plain early --cache cache4
[ "$(field objects_fetched)" = 6 ] || { cat out.txt; fail "early sync"; }
flock -u 8 && exec 8<&-
wait $late || { cat late.err; fail "the late sync failed"; }
n=$(/usr/bin/python3 -c "import json; r=json.load(open('late.json')); print(r['objects_fetched'], r['files_cached'])")
[ "$n" = "0 6" ] || { cat late.json; fail "the late sync fetched again (fetched, cached: $n)"; }
same_tree src late

# --cache-limit never evicts the cached files the sync links: a and b (of a
# DEST since removed: unpinned) and x (pinned by limx) leave no room for c
# and d, and the sync (and its dry run) refuses, every time, before
# fetching. It evicted a, fetched c and d, then failed ("a: left the cache
# during the sync"), and each rerun the same way. With limx's view gone, x
# goes and a and b are linked from the cache.
mkdir lim
for f in a b; do head -c 1000 /dev/urandom > lim/$f; done
expect_rc 0 "$FERRY" sync lim lim1 --cache cache6
rm -rf lim1 .lim1.ferry-views
head -c 1000 /dev/urandom > lim/x
expect_rc 0 "$FERRY" sync --exclude a --exclude b lim limx --cache cache6
for f in c d; do head -c 1000 /dev/urandom > lim/$f; done
for run in 1 2; do
  for dry in --dry-run ""; do
    expect_rc 4 "$FERRY" sync $dry --cache-limit 4500 --exclude x lim lim2 --cache cache6
    grep -q "needs 2000 more bytes; 3000 in use, 0 of them evictable" err.txt \
      || { cat err.txt; fail "cache limit, run $run $dry"; }
  done
done
[ ! -e lim2 ] || fail "DEST made for a cache limit refused"
rm -rf .limx.ferry-views
expect_rc 0 "$FERRY" sync --json --cache-limit 4500 --exclude x lim lim2 --cache cache6
[ "$(field files_cached)" = 2 ] && [ "$(field objects_fetched)" = 2 ] \
  && [ "$(field evicted_bytes)" = 1000 ] || { cat out.txt; fail "cache limit with room"; }
cmp lim/a lim2/a || fail "lim2/a"

# An empty prefix (a mistyped one) is an error, not an empty dataset.
mkdir empty
expect_rc 4 "$FERRY" sync --in-place empty flat --cache cache
grep -q "has no .ferry/refs/HEAD and no files" err.txt || { cat err.txt; fail "empty remote"; }
same_tree src flat

# --list: only the files it names; a name that is not there fails.
printf '# two files\nsub/f0.bin\n./labels.txt\n\n' > names.txt
expect_rc 0 "$FERRY" sync --json --list names.txt plain listed --cache cache
[ "$(cd listed && find . -type f ! -name '.ferry-*' | sort | tr '\n' ' ')" = "./labels.txt ./sub/f0.bin " ] \
  || fail "--list files: $(cd listed && find . -type f)"
printf 'sub/nope.bin\n' > names.txt
expect_rc 4 "$FERRY" sync --list names.txt plain listed2 --cache cache
grep -q "nope.bin" err.txt || { cat err.txt; fail "missing listed file not named"; }
[ ! -e listed2 ] || fail "DEST made for a bad list"

# A published remote whose HEAD is lost is not synced as an unmanaged one:
# DEST synced from it before, or its .ferry/ keys, make it an error (exit
# 4); DEST stays as it was.
FERRY_CACHE=$work/pubcache expect_rc 0 "$FERRY" publish src "file://$work/pub"
expect_rc 0 "$FERRY" sync pub pubds --cache cache
mv pub/.ferry/refs/HEAD headless
expect_rc 4 "$FERRY" sync --in-place pub flat --cache cache
grep -q "has .ferry/ keys but no .ferry/refs/HEAD" err.txt || { cat err.txt; fail "headless remote, new DEST"; }
same_tree src flat
# A HEAD that is there but no object (a FIFO, a folder) is named as such,
# for a new DEST and for one synced from it; nothing waits on the FIFO.
for kind in fifo dir; do
  if [ $kind = fifo ]; then mkfifo pub/.ferry/refs/HEAD; else mkdir pub/.ferry/refs/HEAD; fi
  for d in flat2 pubds; do
    expect_rc 4 timeout 60 "$FERRY" sync pub $d --cache cache
    grep -q "refs/HEAD: is there but cannot be read as a ref" err.txt || { cat err.txt; fail "HEAD a $kind, DEST $d"; }
    # Told as to a reader: not publish's "remove it to start a new history".
    grep -q "the bucket's publisher must restore it" err.txt &&
      ! grep -q "new history" err.txt || { cat err.txt; fail "HEAD a $kind: remedy"; }
  done
  rm -rf pub/.ferry/refs/HEAD
done
[ ! -e flat2 ] || fail "DEST made for an unreadable HEAD"
same_tree src pubds
rm -rf pub/.ferry/objects pub/.ferry/manifests
expect_rc 4 "$FERRY" sync pub pubds --cache cache
grep -q "has no ref HEAD, but .*pubds was synced from it" err.txt || { cat err.txt; fail "headless remote, managed DEST"; }
same_tree src pubds

# An ETag that is the MD5 of other bytes: exit 3 naming the file; DEST as
# it was.
export AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=y AWS_REGION=us-east-1
export AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent
unset AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_SESSION_TOKEN || true
# fake_s3 NAME [MODES]: serves NAME.json (tests/integration/fake_s3.py); sets
# endpoint. Waited for as long as it runs (a loaded machine starts python
# slowly).
fake_s3() {
  /usr/bin/python3 "$here/../integration/fake_s3.py" "$1.json" "$1.port" "${2:-}" &
  pids+=($!)
  for _ in $(seq 1200); do
    [ -s "$1.port" ] || kill -0 "${pids[-1]}" 2> /dev/null || break
    [ -s "$1.port" ] && break
    sleep 0.1
  done
  [ -s "$1.port" ] || fail "fake S3 $1 did not start"
  endpoint=http://127.0.0.1:$(cat "$1.port")
}
printf '{"d/a.txt": "alpha", "d/b.txt": "beta"}' > s3.json
fake_s3 s3 bad_md5=d/b.txt
expect_rc 3 "$FERRY" sync --endpoint-url "$endpoint" s3://b/d s3ds --cache cache
grep -q "b.txt.*MD5" err.txt || { cat err.txt; fail "MD5 mismatch not named"; }
[ ! -e s3ds ] || fail "DEST made despite a bad object"

# A download that fails half-way keeps its part for the next run, and no
# lock file (a file's lock is a byte of <cache>/locks/objects-<n>), nor does
# the rerun (another server: another port, so the part is not resumed).
/usr/bin/python3 -c 'import json; json.dump({"p/big.txt": "x" * 1500000}, open("parts.json", "w"))'
fake_s3 parts fail_from=1048576
expect_rc 4 "$FERRY" sync --retries 0 --part-size 1M --endpoint-url "$endpoint" s3://b/p partds --cache cache5
[ -n "$(find cache5/partial -name '*.ferry-part.journal')" ] || fail "no part kept: $(find cache5/partial)"
left=$(find cache5 -name '*.lock')
[ -z "$left" ] || fail "lock files left: $left"
kill "${pids[-1]}"
rm parts.port
fake_s3 parts
expect_rc 0 "$FERRY" sync --json --part-size 1M --endpoint-url "$endpoint" s3://b/p partds --cache cache5
[ "$(wc -c < partds/big.txt)" = 1500000 ] || fail "partds/big.txt"
left=$(find cache5 -name '*.lock')
[ -z "$left" ] || fail "lock files left: $left"

echo "sync unmanaged CLI: all passed"
