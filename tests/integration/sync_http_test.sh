#!/usr/bin/env bash
# ferry sync over HTTP (nginx), directly and through the fault proxy, and
# over S3 (s3rver behind the signature proxy):
# - a no-op sync is exactly one request: a GET of .ferry/refs/HEAD with
#   If-None-Match, answered 304 (nginx's access log);
# - a changed ref is picked up, its id read by that one GET (200);
# - a byte flipped on the way in a part of an object: that part alone is
#   fetched again (retries.part-hash 1) and DEST equals the tree;
# - a byte flipped in every answer: exit 3, DEST as it was, the object not
#   in the cache;
# - an object of another size than the manifest's: exit 3 at its first
#   answer's headers, fetched once, nothing cached;
# - over S3 the same: a no-op is one GET answered 304 (-v lists every
#   request), a new version one GET of the ref.
set -euo pipefail
ferry=$1
source "$(dirname "$0")/s3_cli_env.sh"
name=synchttp-$$
root=$FERRY_TEST_HTTP_ROOT/$name url=$FERRY_TEST_HTTP_URL/$name
faulty=$FERRY_TEST_FAULT_HTTP_URL/$name control=$FERRY_TEST_FAULT_HTTP_CONTROL
log=$FERRY_TEST_HTTP_ACCESS_LOG
trap 'rm -rf "$work" "$root"; curl -s -X POST "$control/__reset" > /dev/null || true' EXIT
json() { /usr/bin/python3 -c "import json,sys; d=json.load(open('out.txt')); print(eval(sys.argv[1]))" "$1"; }
same_tree() { diff -r --exclude='.ferry-sync*' --exclude=.ferry-view.lock "$1" "$2" > /dev/null; }
# Waits (up to 10 s) until the access log has more than N lines; prints the
# lines after the first N.
log_after() {
  for _ in $(seq 200); do
    [ "$(wc -l < "$log")" -gt "$1" ] && break
    sleep 0.05
  done
  sleep 0.2  # a second line would be there by now
  tail -n +$(($1 + 1)) "$log"
}
rule() { curl -sf -X POST -d "$1" "$control/rule" > /dev/null || fail "rule $1"; }

mkdir -p tree
for i in 1 2 3; do head -c $((30000 * i)) /dev/urandom > "tree/f$i.bin"; done
head -c 300000 /dev/urandom > tree/big.bin
export FERRY_CACHE=$work/pubcache
# --no-packs: what follows checks the per-object GETs of files below 1 MiB
# (packs: tests/integration/sync_delta_http_test.cc SyncPackHttpTest).
expect_rc 0 "$ferry" publish tree "file://$root" --part-size 64K --json --no-packs
mkdir nodes
sync=(sync --json --cache cache)

expect_rc 0 "$ferry" "${sync[@]}" "$url" nodes/ds
same_tree tree nodes/ds || fail "first sync"

# No-op: one request, the conditional GET of the ref, 304.
n=$(wc -l < "$log")
expect_rc 0 "$ferry" "${sync[@]}" "$url" nodes/ds
[ "$(json 'd["unchanged"]')" = True ] && [ "$(json 'd["requests"]')" = 1 ] \
  || fail "no-op: $(cat out.txt)"
lines=$(log_after "$n")
echo "no-op: $lines"
[ "$(printf '%s\n' "$lines" | wc -l)" = 1 ] || fail "no-op sent more than one request: $lines"
printf '%s\n' "$lines" | awk -F'\t' -v p="/$name/.ferry/refs/HEAD" \
  '$1 ~ p && $3 == 304 && $8 != "-" {ok=1} END {exit !ok}' \
  || fail "not a 304 to If-None-Match: $lines"

# A new version: the same one GET answers 200 with the new id.
head -c 5000 /dev/urandom > tree/f4.bin
expect_rc 0 "$ferry" publish tree "file://$root" --part-size 64K --no-packs
# nginx's ETag is mtime (seconds) + size: a ref rewritten within the second
# of the last one, at the same size, keeps its ETag. Not what is tested here.
touch -d "@$(($(date +%s) + 5))" "$root/.ferry/refs/HEAD"
n=$(wc -l < "$log")
expect_rc 0 "$ferry" "${sync[@]}" "$url" nodes/ds
[ "$(json 'd["unchanged"]')" = False ] && [ "$(json 'd["objects_fetched"]')" = 1 ] \
  || fail "changed ref: $(cat out.txt)"
same_tree tree nodes/ds || fail "DEST after the change"
lines=$(log_after "$n")
[ "$(printf '%s\n' "$lines" | grep -c '/.ferry/refs/HEAD')" = 1 ] \
  || fail "the ref was read more than once: $lines"
printf '%s\n' "$lines" | grep '/.ferry/refs/HEAD' | awk -F'\t' '$3 == 200 {ok=1} END {exit !ok}' \
  || fail "the ref's GET was not a 200: $lines"

# A byte flipped on the way in part 2 of big.bin's object (64 KiB parts, the
# manifest's): that part alone comes again.
big=$(/usr/bin/python3 -c "import xxhash,sys; print(xxhash.xxh3_128_hexdigest(open('tree/big.bin','rb').read()))")
rule "{\"action\": \"flip\", \"path\": \"$big\", \"range_only\": true, \"nth\": 3, \"bytes\": 100}"
expect_rc 0 "$ferry" "${sync[@]}" "$faulty" nodes/fresh
[ "$(json 'd["retries"].get("part-hash")')" = 1 ] || fail "part-hash retries: $(cat out.txt)"
same_tree tree nodes/fresh || fail "DEST after a flipped byte"

# Flipped every time: exit 3, DEST as it was, nothing of the object cached.
curl -sf -X POST "$control/__reset" > /dev/null
rule "{\"action\": \"flip\", \"path\": \"$big\", \"times\": 0, \"bytes\": 7}"
expect_rc 3 "$ferry" sync --json --retries 2 "$faulty" nodes/bad --cache cache-bad
[ ! -e nodes/bad ] || fail "DEST appeared after a corrupt object"
[ -z "$(find cache-bad/objects -name "$big" 2>/dev/null)" ] || fail "a corrupt object in the cache"
grep -q "big.bin" err.txt && grep -q "XXH3-64" err.txt || fail "message: $(cat err.txt)"

# The server's object of another size than the manifest's (one part either
# way, so its part hash cannot tell before the bytes land): exit 3 at the
# first answer's headers, one GET of it (no refetch), nothing cached.
f1=$(/usr/bin/python3 -c "import xxhash,sys; print(xxhash.xxh3_128_hexdigest(open('tree/f1.bin','rb').read()))")
obj=$root/.ferry/objects/${f1:0:2}/$f1
cp "$obj" f1.keep
head -c 40000 /dev/urandom > "$obj"
n=$(wc -l < "$log")
expect_rc 3 "$ferry" sync --json "$url" nodes/size --cache cache-size
grep -q "has 40000 bytes, the manifest says 30000" err.txt || fail "size message: $(cat err.txt)"
[ ! -e nodes/size ] || fail "DEST appeared after a wrong size"
[ -z "$(find cache-size -name "$f1*" 2>/dev/null)" ] || fail "a part or object of the wrong size in the cache"
gets=$(log_after "$n" | grep -c "$f1" || true)
[ "$gets" = 1 ] || fail "$gets requests for the object of the wrong size"
cp f1.keep "$obj"

# S3: the no-op is one request, a 304; a new version one GET of the ref.
s3="s3://$FERRY_TEST_S3_BUCKET/$name"
expect_rc 0 "$ferry" publish tree "$s3" --part-size 64K
expect_rc 0 "$ferry" sync --json "$s3" nodes/s3 --cache cache
same_tree tree nodes/s3 || fail "sync from S3"
expect_rc 0 "$ferry" sync --json -v "$s3" nodes/s3 --cache cache
[ "$(json 'd["unchanged"]')" = True ] || fail "S3 no-op: $(cat out.txt)"
[ "$(grep -c ' -> ' err.txt)" = 1 ] && grep -q "GET .*/.ferry/refs/HEAD -> 304" err.txt \
  || fail "S3 no-op requests: $(cat err.txt)"
printf 'more\n' > tree/f5.txt
expect_rc 0 "$ferry" publish tree "$s3" --part-size 64K
expect_rc 0 "$ferry" sync --json -v "$s3" nodes/s3 --cache cache
same_tree tree nodes/s3 || fail "S3 after a new version"
[ "$(grep -c 'refs/HEAD -> ' err.txt)" = 1 ] && grep -q "GET .*/.ferry/refs/HEAD -> 200" err.txt \
  || fail "S3 ref reads: $(cat err.txt)"
echo ok
