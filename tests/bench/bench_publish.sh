#!/usr/bin/env bash
# ferry publish against its anchors, side by side in one run, to s3rver (the
# test servers' S3, talked to directly) and to a local file:// bucket:
#   1. republish of an unchanged tree of COUNT (default 10000) files of 1-20
#      KB (the file count is what a no-op costs; sizes keep the setup short):
#      ferry publish (the stat cache: no file read) vs `aws s3 sync` and
#      `rclone sync` of the same unchanged tree (both list the bucket and
#      compare sizes and times); ferry also to file://. Prints the median
#      wall time and how many files ferry read (its --json files_read).
#   2. first publish of FIRST_COUNT (default 2000) files of 20-200 KB
#      (incompressible) with a fresh stat cache, vs `aws s3 sync` and
#      `rclone sync --transfers 16`, each to a fresh prefix.
# ROUNDS (default 3) interleaved rounds; medians, ratios (anchor / ferry:
# above 1 ferry is faster), peak RSS, the load average (the machine is
# shared: figures under load say so).
# Usage: bench_publish.sh FERRY
set -euo pipefail
ferry=$(readlink -f "$1")
count=${COUNT:-10000} first_count=${FIRST_COUNT:-2000} rounds=${ROUNDS:-3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/bench-publish.XXXXXX)
source "$here/benchlib.sh"
source "$here/netlib.sh"
trap 'net_stop; rm -rf "$work"' EXIT

net_start loopback
endpoint=$FERRY_TEST_S3RVER_URL bucket=$FERRY_TEST_S3_BUCKET
export AWS_ACCESS_KEY_ID=$FERRY_TEST_S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$FERRY_TEST_S3_SECRET_KEY
export AWS_DEFAULT_REGION=us-east-1 AWS_CONFIG_FILE=$work/aws-config AWS_ENDPOINT_URL=$endpoint
export AWS_SHARED_CREDENTIALS_FILE=$work/aws-credentials AWS_PAGER=""
: > "$AWS_CONFIG_FILE"
unset AWS_CA_BUNDLE   # rclone refuses a custom CA bundle on its own transport (http endpoint anyway)
# An rclone config file in the work dir: an inline remote (":s3,endpoint=http://...:")
# cannot carry the endpoint URL (its colon ends the option list: rclone then
# dialled a host named "http").
export RCLONE_CONFIG=$work/rclone.conf
cat > "$RCLONE_CONFIG" <<CONF
[bench]
type = s3
provider = Other
endpoint = $endpoint
access_key_id = $AWS_ACCESS_KEY_ID
secret_access_key = $AWS_SECRET_ACCESS_KEY
force_path_style = true
CONF
rc_remote=bench:$bucket
export FERRY_CACHE=$work/cache
ratio() { echo "scale=2; $1 / $2" | bc; }
m() { median "${walls[$1]}"; }

# 1. Republish of an unchanged tree.
tree=$work/tree
/usr/bin/python3 - "$tree" "$count" <<'PY'
import os, random, sys
d, n = sys.argv[1], int(sys.argv[2]); r = random.Random(7)
for i in range(n):
    sub = os.path.join(d, f"{i // 1000:02d}")
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, f"{i:05d}.bin"), "wb") as f:
        f.write(os.urandom(r.randint(1000, 20000)))
PY
sleep 0.3   # files older than the stat cache's racy window (docs/sync.md)
"$ferry" publish -q "$tree" "s3://$bucket/ferry-re" --endpoint-url "$endpoint"
"$ferry" publish -q "$tree" "file://$work/bucket"
aws s3 sync --only-show-errors "$tree" "s3://$bucket/aws-re"
rclone sync --transfers 16 "$tree" "$rc_remote/rclone-re"
for r in $(seq "$rounds"); do
  run ferry_again "$ferry" publish -q "$tree" "s3://$bucket/ferry-re" --endpoint-url "$endpoint"
  run ferry_again_file "$ferry" publish -q "$tree" "file://$work/bucket"
  run aws_again aws s3 sync --only-show-errors "$tree" "s3://$bucket/aws-re"
  run rclone_again rclone sync --transfers 16 "$tree" "$rc_remote/rclone-re"
done
"$ferry" publish --json "$tree" "s3://$bucket/ferry-re" --endpoint-url "$endpoint" > "$work/again.json"
read -r files_read unchanged < <(/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['files_read'], d['unchanged'])" "$work/again.json")
echo "republish of an unchanged $count-file tree (median of $rounds): ferry s3 $(m ferry_again) ms (files read: $files_read, unchanged: $unchanged), ferry file:// $(m ferry_again_file) ms, aws s3 sync $(m aws_again) ms, rclone sync $(m rclone_again) ms"
echo "  ratio (anchor / ferry s3): aws $(ratio "$(m aws_again)" "$(m ferry_again)")x, rclone $(ratio "$(m rclone_again)" "$(m ferry_again)")x; ferry peak RSS ${rss[ferry_again]} KiB"

# 2. First publish.
first=$work/first
make_objects "$first" "$first_count"
cat "$first"/* > /dev/null
for r in $(seq "$rounds"); do
  rm -rf "$FERRY_CACHE"
  run ferry_first "$ferry" publish -q "$first" "s3://$bucket/ferry-$r" --endpoint-url "$endpoint"
  run aws_first aws s3 sync --only-show-errors "$first" "s3://$bucket/aws-$r"
  run rclone_first rclone sync --transfers 16 "$first" "$rc_remote/rclone-$r"
done
echo "first publish of $first_count files, $objects_bytes bytes (median of $rounds): ferry $(m ferry_first) ms, aws s3 sync $(m aws_first) ms, rclone sync --transfers 16 $(m rclone_first) ms"
echo "  ratio (anchor / ferry): aws $(ratio "$(m aws_first)" "$(m ferry_first)")x, rclone $(ratio "$(m rclone_first)" "$(m ferry_first)")x; ferry peak RSS ${rss[ferry_first]} KiB"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
