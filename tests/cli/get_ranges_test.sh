#!/usr/bin/env bash
# ferry get against servers that misuse Range (tests/integration/fake_s3.py):
# one that ignores Range answers the first request with 200 and the whole
# object, which is used (small objects and multi-part ones, as one stream);
# one that sends a body past the asked range (endless) is an error at the
# overrun, never data, and no retry asks for an empty or inverted range.
set -euo pipefail
ferry=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/testlib.sh"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

# fake NAME MODE [BIG]: serves small (6 bytes) and big (big.txt: 3 MiB + 5,
# or BIG) over HTTP.
head -c 2359296 /dev/urandom | base64 -w0 > big.txt && printf abcde >> big.txt
fake() {
  /usr/bin/python3 -c 'import json,sys; json.dump({"small": "hello\n",
    "big": open(sys.argv[2]).read()}, open(sys.argv[1], "w"))' "$1.json" \
    "${3:-big.txt}"
  /usr/bin/python3 "$here/../integration/fake_s3.py" "$1.json" "$1.port" $2 &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$1.port" ] && break; sleep 0.1; done
  url=http://127.0.0.1:$(cat "$1.port")/b
}

# 3. Range ignored: 200 + the whole object to the first request is used.
fake norange ignore_range
expect_rc 0 "$ferry" get --json "$url/small" small
[ "$(cat small)" = hello ] || fail "small: $(cat small)"
grep -q '"retries":{}' out.txt || fail "retried: $(cat out.txt)"
for ps in 1M 64K; do
  expect_rc 0 "$ferry" get --json --part-size $ps "$url/big" big-$ps
  cmp big-$ps big.txt || fail "big --part-size $ps differs"
  grep -q '"requests":1,' out.txt && grep -q '"retries":{}' out.txt ||
    fail "big $ps: $(cat out.txt)"
done

# 9. A body past the asked range: an error at the overrun; retries ask
# only non-empty ranges; nothing under the final name.
fake endless endless
expect_rc 4 "$ferry" get --retries 2 --part-size 1M "$url/big" o
[ ! -e o ] || fail "an endless body became a file"
grep -q "body longer than asked" err.txt || fail "$(cat err.txt)"
while read -r key range; do
  [ "$range" = - ] && continue
  first=${range#bytes=}; last=${first#*-}; first=${first%-*}
  [ -z "$last" ] || [ "$last" -ge "$first" ] ||
    fail "asked an inverted range: $range"
done < endless.port.log

# 8. The object shrank between runs: the rerun's parts past the new end get
# 416 (s3rver answers so before If-Match): the part file and journal are
# discarded and the new object fetched from zero.
fake parts fail_from=2097152
expect_rc 4 "$ferry" get --retries 0 --part-size 1M "$url/big" shrunk
[ -e shrunk.ferry-part.journal ] || fail "no journal kept: $(ls)"
kill "${pids[-1]}"
head -c 1000000 big.txt > small.txt
fake shrunk "" small.txt
expect_rc 0 "$ferry" get --json --part-size 1M "$url/big" shrunk
cmp shrunk small.txt || fail "shrunk object differs"
grep -q '"changed":1' out.txt || fail "no restart: $(cat out.txt)"
[ ! -e shrunk.ferry-part ] && [ ! -e shrunk.ferry-part.journal ] ||
  fail "left: $(ls)"
echo ok
