#!/usr/bin/env bash
# ferry put and ferry get against S3 (s3rver behind the signature-checking
# proxy): a small file (one PUT), a multipart file (parts in parallel), a
# tree with -R, a big file's parts grown without --part-size; back with ferry get (ranged GETs with If-Match) and get -R;
# byte-identical. Also put to a file:// destination, and a failed put
# (unknown bucket) exits 4 naming the file; a device or a /proc file named as
# a SRC fails by name and makes no object (each went up empty).
set -euo pipefail
FERRY=$1
source "$(dirname "$0")/s3_cli_env.sh"
b="s3://$FERRY_TEST_S3_BUCKET/put-get-$$"
mkdir -p tree/sub
head -c 1000 /dev/urandom > small.bin
head -c $((13 << 20)) /dev/urandom > big.bin
for i in 1 2 3; do head -c $((i * 7000)) /dev/urandom > "tree/sub/f$i"; done
printf 'x' > tree/top.txt

expect_rc 0 "$FERRY" put --json small.bin "$b/one/small.bin"
grep -q '"files_done":1' out.txt || fail "put small: $(cat out.txt)"
expect_rc 0 "$FERRY" put --json --part-size 5M --connections 4 big.bin "$b/one/"
grep -q '"requests":[5-9]' out.txt || fail "multipart requests: $(cat out.txt)"
expect_rc 0 "$FERRY" put -R tree "$b/tree/"
# Without --part-size a big object's parts grow to about two per connection
# (40 MiB at 2 connections: 4 parts of 10 MiB); a given --part-size is kept.
head -c $((40 << 20)) /dev/urandom > grow.bin
expect_rc 0 "$FERRY" put -v --connections 2 grow.bin "$b/grow/"
n=$(grep -c 'partNumber=' err.txt || true)
[ "$n" = 4 ] || fail "grown parts: $n PUTs of parts, not 4"
expect_rc 0 "$FERRY" put -v --connections 2 --part-size 8M grow.bin "$b/grow8/"
n=$(grep -c 'partNumber=' err.txt || true)
[ "$n" = 5 ] || fail "--part-size 8M: $n PUTs of parts, not 5"
# Parts stay within S3's bounds (real S3 refuses a part below 5 MiB but the
# last, at the end of the upload; s3rver takes it): --part-size 1M uploads
# 40 MiB in 8 parts of 5 MiB, and a 3 MiB file in one PUT.
expect_rc 0 "$FERRY" put -v --connections 2 --part-size 1M grow.bin "$b/grow1/"
n=$(grep -c 'partNumber=' err.txt || true)
[ "$n" = 8 ] || fail "--part-size 1M: $n PUTs of parts, not 8"
head -c $((3 << 20)) /dev/urandom > three.bin
expect_rc 0 "$FERRY" put -v --part-size 1M three.bin "$b/grow1/"
n=$(grep -c 'partNumber=\|uploads' err.txt || true)
[ "$n" = 0 ] || fail "--part-size 1M, 3 MiB: $n multipart requests, not 0"
expect_rc 0 "$FERRY" get "$b/grow1/grow.bin" "$b/grow1/three.bin" grow1back/
cmp grow1back/grow.bin grow.bin && cmp grow1back/three.bin three.bin ||
  fail "objects put with --part-size 1M differ"
expect_rc 0 "$FERRY" get "$b/grow/grow.bin" growback/
cmp growback/grow.bin grow.bin || fail "grown-part object differs"

expect_rc 0 "$FERRY" get --part-size 1M "$b/one/big.bin" "$b/one/small.bin" back/
cmp back/big.bin big.bin && cmp back/small.bin small.bin || fail "one/ differs"
expect_rc 0 "$FERRY" get -R "$b/tree/" backtree/
diff -r tree backtree || fail "tree differs"

expect_rc 0 "$FERRY" put -R tree "file://$work/copy/"
diff -r tree copy || fail "file:// put differs"

expect_rc 4 "$FERRY" put small.bin "s3://no-such-bucket-$$/x/"
grep -q "small.bin" err.txt || fail "failed put not named: $(cat err.txt)"

expect_rc 4 "$FERRY" put /dev/zero /proc/self/status small.bin "$b/named/"
grep -q "/dev/zero: not a regular file" err.txt &&
  grep -q "/proc/self/status: changed while being uploaded" err.txt ||
  fail "named sources: $(cat err.txt)"
expect_rc 0 "$FERRY" ls -R "$b/named/"
[ "$(cat out.txt)" = small.bin ] || fail "named/ holds: $(cat out.txt)"
echo ok
