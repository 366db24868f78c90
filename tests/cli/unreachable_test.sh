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

# A publish whose server goes away before its uploads (fake_s3.py answers
# its 5 requests, the ref, a listing and 3 HEADs, then exits): the uploads
# find no server, and publish shows what put shows, each failure and the
# one warning (before: only "src/f1: upload failed (...) and 2 more").
# --no-packs: three uploads, one a file (packs would make them one).
here=$(cd "$(dirname "$0")" && pwd)
mkdir src && for i in 1 2 3; do echo "file $i" > "src/f$i"; done
echo '{}' > objects.json
/usr/bin/python3 "$here/../integration/fake_s3.py" objects.json s3.port exit_after=5 &
fake_pid=$!
trap 'kill $fake_pid 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -s s3.port ] && break; sleep 0.1; done
s3=http://127.0.0.1:$(cat s3.port)
FERRY_CACHE=$PWD/cache expect_rc 4 "$ferry" publish --json --no-sign-request \
  --no-packs --endpoint-url "$s3" src s3://b/ds
[ "$(grep -c "^ferry: src/f[123]: Unavailable: PUT $s3/" err.txt)" = 3 ] \
  || { cat err.txt; fail "publish: not every failed upload named"; }
[ "$(grep -c "^ferry: warning: server unreachable: no request reached $s3 in 300 ms" err.txt)" = 1 ] \
  || { cat err.txt; fail "publish: the warning not said once"; }
tail -n 1 err.txt | grep -q "^ferry: IOError: 3 of 3 uploads failed: src/f" \
  || { cat err.txt; fail "publish: no summary"; }
/usr/bin/python3 - out.txt "$s3" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["command"] == "publish" and j["files_failed"] == 3, j
assert len(j["failures"]) == 3, j
w = j["warnings"]
assert len(w) == 1 and w[0].startswith("server unreachable: no request reached " + sys.argv[2]), w
PY
