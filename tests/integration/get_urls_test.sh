#!/usr/bin/env bash
# ferry get of http(s) URLs as written (as curl sends them): %-escapes kept,
# '+' kept, a query (presigned URL, token) kept, only characters that cannot
# be in a URL encoded (a space in any segment, UTF-8); the file is named by
# the decoded last segment without the query. Secrets in a URL (user:password@,
# signatures, tokens) never appear in -v, errors or --json.
set -euo pipefail
ferry=$1
. "${FERRY_TEST_SERVERS_ENV:?}"
. "$(dirname "$0")/../cli/testlib.sh"
root=$FERRY_TEST_HTTP_ROOT/cli-urls url=$FERRY_TEST_HTTP_URL/cli-urls
log=$FERRY_TEST_HTTP_ACCESS_LOG
mkdir -p "$root/d i r"
printf 'space' > "$root/sp ace"
printf 'plus' > "$root/plus+x"
printf 'dir' > "$root/d i r/x y"
printf 'utf8' > "$root/é.txt"
sent() { grep -qF "GET /cli-urls/$1 HTTP" "$log" || fail "not sent as '$1': $(grep cli-urls "$log" | tail -3)"; }

expect_rc 0 "$ferry" get "$url/sp%20ace" d/
[ "$(cat "d/sp ace")" = space ] || fail "sp%20ace: $(ls d)"
sent "sp%20ace"
expect_rc 0 "$ferry" get "$url/plus+x" d/
[ "$(cat d/plus+x)" = plus ] || fail "plus+x: $(ls d)"
sent "plus+x"
q='X-Amz-Credential=AK%2F20260101/us-east-1/s3/aws4_request&X-Amz-Signature=SIGSECRET1&token=TOKSECRET1'
expect_rc 0 "$ferry" get -v "$url/plus+x?$q" q/
[ "$(cat q/plus+x)" = plus ] || fail "query: $(ls q)"
sent "plus+x?$q"
expect_rc 0 "$ferry" get "$url/d i r/x y" "$url/é.txt" e/
[ "$(cat "e/x y")" = dir ] && [ "$(cat e/é.txt)" = utf8 ] || fail "encoded: $(ls e)"
sent "d%20i%20r/x%20y"
sent "%C3%A9.txt"

# Secrets: userinfo, signature and token values in -v, errors, --json, --dry-run.
hostport=${FERRY_TEST_HTTP_URL#http://}
bad="http://alice:s3cretPW@$hostport/cli-urls/nope?X-Amz-Signature=SIGSECRET2&token=TOKSECRET2"
expect_rc 4 "$ferry" get -v --json "$bad" n/
grep -q "nope" err.txt || fail "missing key not named: $(cat err.txt)"
cat out.txt err.txt > all.txt
expect_rc 0 "$ferry" get --dry-run "$bad" n/
cat out.txt err.txt >> all.txt
expect_rc 0 "$ferry" get -v "$url/plus+x?$q" p/
cat out.txt err.txt >> all.txt
grep -q "GET .*plus+x" all.txt || fail "no -v line: $(cat all.txt)"
if grep -E "s3cretPW|SIGSECRET|TOKSECRET" all.txt; then fail "a secret was printed"; fi
echo ok
