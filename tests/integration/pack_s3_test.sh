#!/usr/bin/env bash
# A distributed ferry pack into S3 (s3rver behind the signature-checking
# proxy): plan, two workers (one killed between two uploads, then rerun: it
# keeps what it listed) and the merge write objects only; `ferry get -R` of
# OUT gives the bytes of a one-machine pack. A shard deleted from the bucket
# or replaced: the merge names it (exit 3); the worker's rerun redoes it.
set -euo pipefail
FERRY=$1 SAMPLES=$2
source "$(dirname "$0")/s3_cli_env.sh"
cp -r "$SAMPLES/dataset" data
r="s3://$FERRY_TEST_S3_BUCKET/pack-$$"
TF=(--size 64 --shard-records 7)
# Shards of a few KiB: --part-size 1K sends each as a multipart upload.
UP=(--tmp "$work/tmp" --part-size 1K)
expect_rc 0 "$FERRY" pack data one "${TF[@]}" -q

expect_rc 0 "$FERRY" pack data "$r" "${TF[@]}" --plan -q
FERRY_TEST_PACK_PAUSE_AFTER=4 FERRY_TEST_PACK_PAUSE_FILE=$work/paused \
  "$FERRY" pack data "$r" "${TF[@]}" "${UP[@]}" --worker 0/2 -q &
pid=$!
trap 'kill -9 $pid 2> /dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 600); do [ -e paused ] && break; kill -0 $pid 2> /dev/null || break; sleep 0.1; done
[ -e paused ] || fail "the worker did not pause"
kill -9 $pid; wait $pid 2> /dev/null || true
expect_rc 0 "$FERRY" ls "$r/"
grep -q 'train-00001-of-00006.tfrecord$' out.txt || fail "shard 1 not uploaded: $(cat out.txt)"
expect_rc 0 "$FERRY" pack data "$r" "${TF[@]}" "${UP[@]}" --worker 0/2 --json
/usr/bin/python3 -c 'import json; d = json.load(open("out.txt")); assert d["reused_shards"] == 1 and d["records"] == 28, d'
expect_rc 0 "$FERRY" pack data "$r" "${TF[@]}" "${UP[@]}" --worker 1/2 -q
[ -z "$(ls -A tmp)" ] || fail "local folders left: $(ls -A tmp)"

# A shard deleted from the bucket, another overwritten (a new ETag).
/usr/bin/python3 - "$FERRY_TEST_S3_BUCKET" "pack-$$" <<'PY'
import os, sys, botocore.session
from botocore.config import Config
bucket, prefix = sys.argv[1], sys.argv[2]
s3 = botocore.session.get_session().create_client(
    's3', endpoint_url=os.environ['FERRY_TEST_S3_URL'], region_name='us-east-1',
    config=Config(s3={'addressing_style': 'path'}, proxies={}))
s3.delete_object(Bucket=bucket, Key=prefix + '/train-00002-of-00006.tfrecord')
s3.put_object(Bucket=bucket, Key=prefix + '/val-00000-of-00002.tfrecord', Body=b'X')
PY
expect_rc 3 "$FERRY" pack data "$r" "${TF[@]}" --merge
grep -q 'train-00002-of-00006.tfrecord (missing' err.txt || fail "deleted shard not named: $(cat err.txt)"
grep -q 'val-00000-of-00002.tfrecord (damaged' err.txt || fail "overwritten shard not named: $(cat err.txt)"
expect_rc 3 "$FERRY" pack data "$r" "${TF[@]}" --merge --verify-remote
grep -q '2 of 9 planned shards' err.txt || fail "--verify-remote: $(cat err.txt)"
for i in 0 1; do expect_rc 0 "$FERRY" pack data "$r" "${TF[@]}" "${UP[@]}" --worker $i/2 -q; done
expect_rc 0 "$FERRY" pack data "$r" "${TF[@]}" --merge --verify-remote
expect_rc 0 "$FERRY" pack data "$r" "${TF[@]}" --merge
grep -q 'merged already' err.txt || fail "second merge: $(cat err.txt)"

expect_rc 0 "$FERRY" get -R "$r/" back/
diff -r -x .ferry-pack.lock one back > /dev/null || { diff -r -x .ferry-pack.lock one back | head >&2; fail "OUT differs from a one-machine pack"; }
echo ok
