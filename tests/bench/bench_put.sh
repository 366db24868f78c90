#!/usr/bin/env bash
# Uploads to s3rver (the test servers' S3, tests/integration/servers.sh),
# talked to directly (VIA=proxy: through the signature-checking proxy, which
# recomputes every signature in Python and is slower than s3rver itself):
#   1. one BIG (default 1G) file of random bytes;
#   2. COUNT (default 10000) files of 20-200 KB (fixed-seed sizes, random
#      bytes) as a tree;
# each by `ferry put -R` (defaults: 16 connections, multipart above 8 MiB)
# and `aws s3 cp --recursive` (Debian's awscli, /usr/bin/aws, its defaults),
# and, for what s3rver itself can take, `curl --parallel --parallel-max 16`
# of unsigned single PUTs (the big file as 16 slices of BIG/16: no multipart
# completion to pay for). ROUNDS (default 3) interleaved rounds; prints the
# median wall times, the ratios (anchor / ferry: above 1 ferry is faster),
# ferry / the curl ceiling, and peak RSS. Every run's upload is checked (object
# count and bytes on s3rver's disk; round 1: every byte).
# FERRY_BASE=other/ferry also runs that build in the same rounds
# (before/after); ANCHORS="aws curl" (default) picks the others; CASES="big
# small" (default) the cases.
# Usage: bench_put.sh FERRY
set -euo pipefail
ferry=$(readlink -f "$1")
count=${COUNT:-10000} rounds=${ROUNDS:-3} big=${BIG:-1G} via=${VIA:-direct}
anchors=${ANCHORS-aws curl} cases=${CASES:-big small}
base=${FERRY_BASE:+$(readlink -f "$FERRY_BASE")}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/bench-put.XXXXXX)
source "$here/benchlib.sh"
source "$here/netlib.sh"
trap 'net_stop; rm -rf "$work"' EXIT

net_start loopback
endpoint=$FERRY_TEST_S3RVER_URL
[ "$via" = proxy ] && endpoint=$FERRY_TEST_S3_URL
bucket=$FERRY_TEST_S3_BUCKET store=$FERRY_TEST_S3_ROOT/$FERRY_TEST_S3_BUCKET
export AWS_ACCESS_KEY_ID=$FERRY_TEST_S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$FERRY_TEST_S3_SECRET_KEY
export AWS_DEFAULT_REGION=us-east-1 AWS_CONFIG_FILE=$work/aws-config
export AWS_SHARED_CREDENTIALS_FILE=$work/aws-credentials AWS_PAGER=""
: > "$AWS_CONFIG_FILE"

mkdir -p "$work/big" "$work/slices"
head -c "$big" /dev/urandom > "$work/big/big.bin"
big_bytes=$(stat -c %s "$work/big/big.bin")
split -n 16 -d "$work/big/big.bin" "$work/slices/s"
make_objects "$work/small" "$count"
small_bytes=$objects_bytes
echo "s3rver $via ($endpoint); $big_bytes-byte file; $count files, $small_bytes bytes; load $(cut -d' ' -f1-3 /proc/loadavg)"

# curl_config DIR PREFIX: a curl config putting each file of DIR under PREFIX/.
curl_config() {
  local f
  for f in "$1"/*; do
    printf 'upload-file = "%s"\nurl = "%s/%s/%s/%s"\n' "$f" "$FERRY_TEST_S3RVER_URL" "$bucket" "$2" "${f##*/}"
  done
}
# check NAME SRC_DIR PREFIX ROUND: PREFIX holds SRC_DIR's files (round 1: the
# same bytes); then it is removed from s3rver's disk.
declare -A failed
check() {
  /usr/bin/python3 - "$2" "$store/$3" "$4" <<'PY' || { failed[$1]=1; tail -c 300 "$work/$1.err" >&2; }
import os, sys
src, dst, full = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
want = {f: os.path.getsize(os.path.join(src, f)) for f in os.listdir(src)}
got = {}
for root, _, files in os.walk(dst):
    for f in files:
        if f.endswith("._S3rver_object"):
            rel = os.path.relpath(os.path.join(root, f), dst)[:-len("._S3rver_object")]
            got[rel] = os.path.getsize(os.path.join(root, f))
if got != want:
    sys.exit(f"  {dst}: {len(got)} objects, {sum(got.values())} bytes; want {len(want)}, {sum(want.values())}")
if full:
    for f in want:
        with open(os.path.join(src, f), "rb") as a, open(os.path.join(dst, f + "._S3rver_object"), "rb") as b:
            if a.read() != b.read():
                sys.exit(f"  {dst}/{f}: other bytes than the source")
PY
  rm -rf "${store:?}/$3"
}

curl_config "$work/small" small-curl > "$work/small.curl"
curl_config "$work/slices" big-curl > "$work/big.curl"

aws=(/usr/bin/aws --endpoint-url "$endpoint" s3 cp --recursive --only-show-errors)
# one TOOL CASE ROUND
one() {
  local src=$work/$2 to=$2-$1
  case $1 in
    ferry) run "ferry_$2" "$ferry" put -q -R --endpoint-url "$endpoint" "$src/" "s3://$bucket/$to/" ;;
    base) run "base_$2" "$base" put -q -R --endpoint-url "$endpoint" "$src/" "s3://$bucket/$to/" ;;
    aws) run "aws_$2" "${aws[@]}" "$src/" "s3://$bucket/$to/" ;;
    curl) run "curl_$2" curl -sSf --parallel --parallel-max 16 -K "$work/$2.curl" -o /dev/null
      [ "$2" = big ] && src=$work/slices ;;
  esac
  check "$1_$2" "$src" "$to" "$3"
}
for round in $(seq "$rounds"); do
  for c in $cases; do
    for t in ferry ${base:+base} $anchors; do one "$t" "$c" "$round"; done
  done
done

declare -A title=([base]="ferry put -R (FERRY_BASE)" [aws]="aws s3 cp --recursive"
  [curl]="curl, 16 parallel unsigned PUTs")
report() {  # CASE TITLE
  local f t m
  f=$(median "${walls[ferry_$1]}")
  echo "$2 (median of $rounds; load $(cut -d' ' -f1-3 /proc/loadavg)):"
  printf '  %-34s %8s ms  peak RSS %7s KiB%s\n' "ferry put -R" "$f" "${rss[ferry_$1]}" "${failed[ferry_$1]:+  FAILED}"
  for t in ${base:+base} $anchors; do
    m=$(median "${walls[${t}_$1]}")
    printf '  %-34s %8s ms  peak RSS %7s KiB  ratio %sx%s\n' "${title[$t]}" "$m" "${rss[${t}_$1]}" \
      "$(echo "scale=2; $m / $f" | bc)" "${failed[${t}_$1]:+  FAILED}"
  done
  for t in ferry ${base:+base} $anchors; do echo "  walls $t:${walls[${t}_$1]}"; done
}
for c in $cases; do
  case $c in
    big) report big "one $big_bytes-byte file" ;;
    small) report small "$count files of 20-200 KB" ;;
  esac
done
echo "(ratio = other / ferry: above 1 ferry is faster; for curl, ferry's share of what s3rver can take)"
