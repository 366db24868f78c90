#!/usr/bin/env bash
# ferry publish / log / gc against S3 (s3rver behind the signature proxy,
# which enforces If-Match / If-None-Match on PUT as S3 does) and log read back
# over plain HTTP (nginx): a publish, an unchanged republish, a second
# version, two publisher processes racing (the loser exits 4 naming both
# versions, HEAD keeps the winner), gc, and `ferry log http://...` of a tree
# published into nginx's root.
set -euo pipefail
FERRY=$1
source "$(dirname "$0")/s3_cli_env.sh"
export FERRY_CACHE=$work/cache
json() { /usr/bin/python3 -c "import json,sys; d=json.load(open('out.txt')); print(eval(sys.argv[1]))" "$1"; }
r="s3://$FERRY_TEST_S3_BUCKET/publish-$$"
mkdir -p src/sub other
for i in 1 2 3; do head -c $((i * 5000)) /dev/urandom > "src/sub/f$i"; done
printf 'labels' > src/labels.txt
printf 'theirs' > other/t.txt
sleep 0.3

expect_rc 0 "$FERRY" publish src "$r" -m one --tag first --json
v1=$(json 'd["id"]')
[ "$(json 'd["objects_uploaded"]')" = 4 ] || fail "first publish: $(cat out.txt)"
expect_rc 0 "$FERRY" ls -R "$r/.ferry/refs/"
grep -qx HEAD out.txt && grep -qx tags/first out.txt || fail "refs: $(cat out.txt)"
expect_rc 0 "$FERRY" publish src "$r" --json
[ "$(json 'd["unchanged"]')" = True ] && [ "$(json 'd["files_read"]')" = 0 ] \
  || fail "unchanged republish: $(cat out.txt)"

head -c 7000 /dev/urandom > src/sub/f4
expect_rc 0 "$FERRY" publish src "$r" -m two --json
v2=$(json 'd["id"]')
[ "$(json 'd["objects_uploaded"]')" = 1 ] || fail "only the new object: $(cat out.txt)"
expect_rc 0 "$FERRY" log "$r" --json
[ "$(json '[v["id"] for v in d["versions"]]')" = "['$v2', '$v1']" ] || fail "log: $(cat out.txt)"
# The tags folder's own marker (an empty "tags/" object a console made) is
# no tag and nothing wrong: log says nothing of it, gc is not stopped.
curl -sf -X PUT --data-binary '' \
  "$FERRY_TEST_S3RVER_URL/$FERRY_TEST_S3_BUCKET/publish-$$/.ferry/refs/tags/" > /dev/null
expect_rc 0 "$FERRY" log "$r"
grep -q warning err.txt && fail "log warns of the tags marker: $(cat err.txt)"
expect_rc 0 "$FERRY" gc "$r" --dry-run

# Race: A stops before its HEAD write; B publishes; A's conditional PUT of
# HEAD gets 412 from the proxy and A exits 4.
manifests() { "$FERRY" ls "$r/.ferry/manifests/" | wc -l; }
n=$(manifests)
head -c 3000 /dev/urandom > src/sub/f5
FERRY_TEST_PUBLISH_PAUSE=$work/go "$FERRY" publish src "$r" -m A > a.out 2> a.err &
apid=$!
for _ in $(seq 300); do [ "$(manifests)" -gt "$n" ] && break; sleep 0.1; done
expect_rc 0 "$FERRY" publish other "$r" -m B --json
vb=$(json 'd["id"]')
touch go
set +e; wait $apid; arc=$?; set -e
[ "$arc" = 4 ] || { cat a.out a.err >&2; fail "loser exit $arc, want 4"; }
grep -q "remote changed since this publish started (parent $v2, now $vb)" a.err \
  || fail "loser's message: $(cat a.err)"
expect_rc 0 "$FERRY" log "$r" -n 1 --json
[ "$(json 'd["versions"][0]["id"]')" = "$vb" ] || fail "HEAD is not the winner's"

# gc: HEAD (B) and the tag stay; v2 and A's manifest and their objects go.
expect_rc 0 "$FERRY" gc "$r" --keep 1 --grace 0 --json
[ "$(json 'd["versions_kept"]')" = 2 ] && [ "$(json 'd["manifests_deleted"]')" = 2 ] \
  || fail "gc: $(cat out.txt)"
# s3rver has no ListMultipartUploads (501): gc says so and still succeeds;
# the listing request passed the signature check (a 403 would say so).
[ "$(json 'd["uploads_aborted"]')" = 0 ] || fail "gc uploads: $(cat out.txt)"
json 'd["uploads_note"]' | grep -q "does not list incomplete multipart uploads (HTTP 501)" \
  || fail "gc's uploads note: $(cat out.txt)"
grep -q "note: incomplete multipart uploads not looked at" err.txt \
  || fail "gc's note on stderr: $(cat err.txt)"
expect_rc 0 "$FERRY" log "$r" --ref first
grep -q "^$v1" out.txt || fail "the tagged version after gc"

# log over plain HTTP: a tree published into nginx's root.
expect_rc 0 "$FERRY" publish src "file://$FERRY_TEST_HTTP_ROOT/publish-$$" -m web
expect_rc 0 "$FERRY" log "$FERRY_TEST_HTTP_URL/publish-$$" --json
[ "$(json 'd["versions"][0]["message"]')" = web ] || fail "log over http: $(cat out.txt)"
expect_rc 2 "$FERRY" publish src "$FERRY_TEST_HTTP_URL/publish-$$"   # read-only
echo ok
