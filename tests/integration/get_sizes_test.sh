#!/usr/bin/env bash
# ferry get of objects at the edges of the part size, against S3 (s3rver
# behind the signature proxy) and nginx: empty, 1 byte, exactly --part-size
# and --part-size + 1; each as a single object and (S3) with -R, under a
# timeout so that a stall fails fast. s3rver answers a Range on an empty
# object with 206 "bytes 0-0/0" and Content-Length 1 but no body (the engine
# used to wait for that byte), and a Range 0-0 with the whole object. Objects
# whose size is known (-R) and at most one part go as one plain GET: no
# Range header at all (-v shows a range as [offset+length]).
set -euo pipefail
FERRY=$1
source "$(dirname "$0")/s3_cli_env.sh"
PART=65536
s3="s3://$FERRY_TEST_S3_BUCKET/get-sizes-$$"
http_root=$FERRY_TEST_HTTP_ROOT/get-sizes-$$
http=$FERRY_TEST_HTTP_URL/get-sizes-$$
names="empty one part part1"

mkdir -p src "$http_root"
: > src/empty
printf 'x' > src/one
head -c $PART /dev/urandom > src/part
head -c $((PART + 1)) /dev/urandom > src/part1
cp src/* "$http_root/"
expect_rc 0 "$FERRY" put -R src "$s3/"

# get WANT_RC ARGS...: ferry get that may not take more than 30 s.
get() {
  local want=$1; shift
  expect_rc "$want" timeout 30 "$FERRY" get --part-size $PART --retries 2 "$@"
}
same() {  # DIR: every object arrived whole, nothing else left
  for n in $names; do
    cmp "$1/$n" "src/$n" || fail "$1/$n differs"
  done
  [ -z "$(ls "$1" | grep ferry-part || true)" ] || fail "left in $1: $(ls "$1")"
}

for n in $names; do
  get 0 "$s3/$n" s3-one/
  get 0 "$http/$n" http-one/
done
same s3-one
same http-one

get 0 -v -R "$s3/" s3-tree/
same s3-tree
# Known sizes up to one part: plain GETs (no Range), the empty one no request.
grep -E "GET .*/(one|part) " err.txt | grep -q '\[' && fail "ranged: $(cat err.txt)"
grep -qE "GET .*/empty " err.txt && fail "empty object fetched: $(cat err.txt)"
grep -qE "GET .*/part1 \[" err.txt || fail "part1 not ranged: $(cat err.txt)"

# Into a file name, over a stale part file of another size.
printf 'stale' > s3-empty.bin.ferry-part
get 0 "$s3/empty" s3-empty.bin
[ -f s3-empty.bin ] && [ ! -s s3-empty.bin ] || fail "s3-empty.bin: $(ls -l)"
get 0 "$http/empty" http-empty.bin
[ -f http-empty.bin ] && [ ! -s http-empty.bin ] || fail "http-empty.bin"
echo ok
