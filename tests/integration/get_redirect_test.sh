#!/usr/bin/env bash
# ferry get of http(s) URLs that redirect (the test nginx's /rNNN/, /away/,
# /tohttp/, /loop/ locations, tests/integration/servers.sh): every redirect
# status is followed, a multi-part object's parts go to the final URL,
# --header values reach the same origin (its /private/ needs the token) and
# never another one (that server's log shows the headers it got), https ->
# http is refused, and a loop stops after 10 hops.
set -euo pipefail
ferry=$1
. "${FERRY_TEST_SERVERS_ENV:?}"
. "$(dirname "$0")/../cli/testlib.sh"
url=$FERRY_TEST_HTTP_URL root=$FERRY_TEST_HTTP_ROOT
log=$FERRY_TEST_HTTP_ACCESS_LOG other=$FERRY_TEST_HTTP_OTHER_ACCESS_LOG
tok="Authorization: Bearer $FERRY_TEST_HTTP_TOKEN"
mkdir -p "$root/cli-redir" "$root/private/cli-redir"
head -c 3000000 /dev/urandom > "$root/cli-redir/big.bin"
cp "$root/cli-redir/big.bin" "$root/private/cli-redir/big.bin"
printf small > "$root/cli-redir/small"
# new LOG: the lines LOG got since the last `mark LOG`.
declare -A seen
mark() { seen[$1]=$(wc -l < "$1"); }
new() { tail -n +$(( ${seen[$1]} + 1 )) "$1"; }

for code in 301 302 303 307 308; do
  expect_rc 0 "$ferry" get "$url/r$code/cli-redir/small" "s$code"
  [ "$(cat "s$code")" = small ] || fail "$code: $(cat "s$code")"
done

# The same origin: the token goes along (else /private/ answers 401); the
# first request is redirected, every part after it asks the final URL.
mark "$log"
expect_rc 0 "$ferry" get --part-size 1M --header "$tok" \
  "$url/r302/private/cli-redir/big.bin" big
cmp big "$root/cli-redir/big.bin" || fail "redirected multi-part differs"
[ "$(new "$log" | grep -c "^GET /r302/")" = 1 ] ||
  fail "parts asked the first URL: $(new "$log")"
[ "$(new "$log" | grep -c "^GET /private/cli-redir/big.bin HTTP/1.1	bytes=.*	206	")" -ge 2 ] ||
  fail "no ranged parts at the final URL: $(new "$log")"

# Another origin (another port): followed, parts there too, and neither
# header reaches it.
mark "$log"; mark "$other"
expect_rc 0 "$ferry" get --part-size 1M --header "$tok" \
  --header "X-Ferry-Test: secret" "$url/away/cli-redir/big.bin" away
cmp away "$root/cli-redir/big.bin" || fail "redirected away: differs"
[ "$(new "$log" | grep -c "^GET /away/")" = 1 ] || fail "$(new "$log")"
[ "$(new "$other" | grep -c "^GET /cli-redir/big.bin ")" -ge 3 ] ||
  fail "parts not at the other origin: $(new "$other")"
new "$other" | awk -F'\t' '$3 != "-" || $4 != "-" {bad = 1} END {exit bad}' ||
  fail "a --header value went to another origin: $(new "$other")"
grep -q secret out.txt err.txt && fail "a header value printed"

# https -> http: refused, nothing written.
expect_rc 4 "$ferry" get --ca-bundle "$FERRY_TEST_CA_BUNDLE" \
  "$FERRY_TEST_HTTPS_URL/tohttp/cli-redir/small" down
grep -q "from https to http refused" err.txt || fail "$(cat err.txt)"
[ ! -e down ] && [ ! -e down.ferry-part ] || fail "a downgrade wrote a file"

# A loop: 10 redirects followed, then a clear error.
mark "$log"
expect_rc 4 "$ferry" get "$url/loop/x" loop
grep -q "more than 10 redirects" err.txt || fail "$(cat err.txt)"
[ "$(new "$log" | grep -c "^GET /loop/")" = 11 ] ||
  fail "loop: $(new "$log" | grep -c "^GET /loop/") requests"
echo ok
