#!/usr/bin/env bash
# A transfer to a server nothing listens on gives up when the unreachable
# window ends (shortened here by FERRY_TEST_UNREACHABLE_MS): every item
# fails (exit 4) and the reason is said once, as a warning, without -v
# (and in --json's "warnings"), not once per item.
set -euo pipefail
ferry=$(realpath "$1")
source "$(dirname "$0")/testlib.sh"
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
urls=()
for i in 1 2 3 4 5 6; do urls+=("$base/f$i"); done
export FERRY_TEST_UNREACHABLE_MS=300

# One connection: 4 objects open at once, the others are never sent.
expect_rc 4 "$ferry" get --connections 1 "${urls[@]}" got/
[ "$(grep -c 'server unreachable' err.txt)" = 1 ] \
  || { cat err.txt; fail "the reason not said exactly once"; }
grep -q "^ferry: f6: Unavailable: $base: not sent: the run gave up on it$" err.txt \
  || { cat err.txt; fail "an item not sent is not said so"; }
tail -n 1 err.txt | grep -q "^ferry: warning: server unreachable: no request reached $base in 300 ms" \
  || { cat err.txt; fail "no warning at the end"; }
[ "$(grep -c '^ferry: f[1-6]: ' err.txt)" = 6 ] \
  || { cat err.txt; fail "not every item named as failed"; }

expect_rc 4 "$ferry" get --json --connections 1 "${urls[@]}" got/
/usr/bin/python3 - out.txt "$base" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["files_failed"] == 6, j
w = j["warnings"]
assert len(w) == 1 and w[0].startswith("server unreachable: no request reached " + sys.argv[2]), w
PY
[ "$(grep -c 'server unreachable' err.txt)" = 1 ] || { cat err.txt; fail "--json: said more than once"; }

# The synchronous requests follow the same rule (and say so the same way):
# a listing and a sync's first GET of its ref, which each made their own
# 1 + --retries tries before (`ferry sync` of a closed port: 24.8 s, 9
# requests, "Couldn't connect to server").
expect_rc 4 "$ferry" ls --no-sign-request --endpoint-url "$base" s3://b/p/
grep -q "^ferry: Unavailable: server unreachable: no request reached $base in 300 ms (connections refused or timed out): gave up$" err.txt \
  || { cat err.txt; fail "ls: not the unreachable message"; }
expect_rc 4 "$ferry" sync "$base/ds" dest/
grep -q "^ferry: Unavailable: server unreachable: no request reached $base in 300 ms" err.txt \
  || { cat err.txt; fail "sync: not the unreachable message"; }
