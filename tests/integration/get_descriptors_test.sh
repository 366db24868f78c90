#!/usr/bin/env bash
# ferry get and put under a low descriptor limit (ulimit -n, as a Slurm job
# or container may set): the HTTP engine sizes its connections, the
# downloads it opens ahead and the files waiting for one syncfs to the
# process's RLIMIT_NOFILE, so every object arrives (before: with 64
# descriptors, 136 of 400 small objects; the rest "Too many open files").
# 400 small objects (one URL each from nginx, -R from S3) and a 3 MiB one in
# 12 journalled parts, at limits of 20, 32 and 64.
set -euo pipefail
FERRY=$1
source "$(dirname "$0")/s3_cli_env.sh"
s3="s3://$FERRY_TEST_S3_BUCKET/get-fds-$$"
http_root=$FERRY_TEST_HTTP_ROOT/get-fds-$$
http=$FERRY_TEST_HTTP_URL/get-fds-$$

mkdir -p src "$http_root"
for i in $(seq 400); do head -c $((1000 + i)) /dev/urandom > "src/f$i"; done
head -c $((3 << 20)) /dev/urandom > src/big
cp src/* "$http_root/"
expect_rc 0 "$FERRY" put -R src "$s3/"
urls=()
for f in src/*; do urls+=("$http/${f#src/}"); done

same() {  # DIR: every object arrived whole, nothing else left
  [ "$(ls "$1" | wc -l)" = 401 ] || fail "$1: $(ls "$1" | wc -l) files"
  diff -r src "$1" > /dev/null || fail "$1 differs from src"
}
for n in 20 32 64; do
  (ulimit -n $n; exec timeout 120 "$FERRY" get -q --part-size 256K \
    "${urls[@]}" "$PWD/http-$n/") > "http-$n.err" 2>&1 \
    || fail "nofile $n, http: $(tail -3 "http-$n.err")"
  same "http-$n"
  (ulimit -n $n; exec timeout 120 "$FERRY" get -q -R --part-size 256K \
    "$s3/" "$PWD/s3-$n/") > "s3-$n.err" 2>&1 \
    || fail "nofile $n, s3: $(tail -3 "s3-$n.err")"
  same "s3-$n"
  (ulimit -n $n; exec timeout 120 "$FERRY" put -q -R --part-size 256K \
    src/ "$s3-put-$n/") > "put-$n.err" 2>&1 \
    || fail "nofile $n, put: $(tail -3 "put-$n.err")"
  expect_rc 0 "$FERRY" get -q -R "$s3-put-$n/" "back-$n/"
  same "back-$n"
done
echo ok
