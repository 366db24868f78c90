#!/usr/bin/env bash
# ferry sync from unmanaged remotes on real servers: a prefix of s3rver
# written by ferry put -R (no .ferry) — cold, a no-op that fetches nothing,
# one file changed with ferry put and only that one fetched again, --in-place;
# an object whose stored bytes no longer match its ETag's MD5 (exit 3, DEST as
# it was); nginx with --list URL (a changed file's new ETag fetches only it)
# and without --list (exit 2 saying so).
set -euo pipefail
FERRY=$1
source "$(dirname "$0")/s3_cli_env.sh"
export FERRY_CACHE=$work/cache
field() { /usr/bin/python3 -c "import json,sys; print(json.load(open('out.txt'))['$1'])"; }
same_tree() {
  diff -r --exclude='.ferry-sync*' --exclude=.ferry-view.lock "$1" "$2" \
    || fail "$1 and $2 differ"
}
prefix=unmanaged-$$
r="s3://$FERRY_TEST_S3_BUCKET/$prefix"
hroot=$FERRY_TEST_HTTP_ROOT/$prefix
trap 'rm -rf "$work" "$hroot"' EXIT

mkdir -p tree/sub
for i in 0 1 2 3; do head -c $((20000 + i)) /dev/urandom > "tree/sub/f$i.bin"; done
head -c $((6 << 20)) /dev/urandom > tree/big.bin  # multipart: no MD5 ETag
printf '{}' > tree/dataset.json
expect_rc 0 "$FERRY" put -R --part-size 5M tree "$r/"
expect_rc 0 "$FERRY" ls -R "$r/"
! grep -q '^\.ferry' out.txt || fail "put -R made .ferry"

# Cold.
expect_rc 0 "$FERRY" sync --json "$r" ds
[ "$(field unmanaged)" = True ] && [ "$(field objects_fetched)" = 6 ] \
  || { cat out.txt; fail "cold"; }
same_tree tree ds
# No-op: a listing, nothing fetched.
expect_rc 0 "$FERRY" sync --json "$r" ds
[ "$(field unchanged)" = True ] && [ "$(field objects_fetched)" = 0 ] \
  && [ "$(field requests)" = 2 ] || { cat out.txt; fail "no-op"; }
# One file changed with put: only it is fetched.
head -c 30000 /dev/urandom > tree/sub/f1.bin
expect_rc 0 "$FERRY" put tree/sub/f1.bin "$r/sub/f1.bin"
expect_rc 0 "$FERRY" sync --json "$r" ds
[ "$(field objects_fetched)" = 1 ] && [ "$(field bytes_fetched)" = 30000 ] \
  && [ "$(field files_cached)" = 5 ] || { cat out.txt; fail "incremental"; }
same_tree tree ds
expect_rc 0 "$FERRY" sync --check ds
# --in-place from the cache: nothing fetched but what the cache lacks.
expect_rc 0 "$FERRY" sync --json --in-place "$r" flat
same_tree tree flat

# The stored bytes of one object changed behind s3rver's back (same size, old
# ETag): a sync that fetches it (a new cache) finds its MD5 wrong, exit 3
# naming it, no DEST made.
obj=$FERRY_TEST_S3_ROOT/$FERRY_TEST_S3_BUCKET/$prefix/sub/f2.bin._S3rver_object
[ -f "$obj" ] || fail "no s3rver object file at $obj"
printf 'XXXX' | dd of="$obj" bs=1 seek=100 conv=notrunc status=none
expect_rc 3 "$FERRY" sync --json "$r" ds2 --cache "$work/cache2"
grep -q "f2.bin.*MD5" err.txt || { cat err.txt; fail "MD5 mismatch not named"; }
[ ! -e ds2 ] || fail "DEST made despite a bad object"

# nginx: --list URL; without it, a clear error.
mkdir -p "$hroot"
cp -r tree/sub "$hroot/"
printf 'sub/f0.bin\nsub/f1.bin\nsub/f3.bin\n' > "$hroot/files.txt"
url=$FERRY_TEST_HTTP_URL/$prefix
expect_rc 2 "$FERRY" sync "$url" hds
grep -q -- "--list" err.txt || { cat err.txt; fail "http without --list"; }
expect_rc 0 "$FERRY" sync --json --list "$url/files.txt" "$url" hds
[ "$(field objects_fetched)" = 3 ] || { cat out.txt; fail "http cold"; }
for f in f0 f1 f3; do cmp "tree/sub/$f.bin" "hds/sub/$f.bin" || fail "http $f"; done
[ ! -e hds/sub/f2.bin ] || fail "a file the list does not name"
expect_rc 0 "$FERRY" sync --json --list "$url/files.txt" "$url" hds
[ "$(field unchanged)" = True ] || { cat out.txt; fail "http no-op"; }
sleep 1.1  # nginx's ETag is mtime (seconds) and size
head -c 20003 /dev/urandom > "$hroot/sub/f3.bin"
expect_rc 0 "$FERRY" sync --json --list "$url/files.txt" "$url" hds
[ "$(field objects_fetched)" = 1 ] || { cat out.txt; fail "http incremental"; }
cmp "$hroot/sub/f3.bin" hds/sub/f3.bin || fail "http f3"
echo "sync unmanaged (S3, HTTP): all passed"
