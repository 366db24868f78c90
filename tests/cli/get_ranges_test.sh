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
. "$here/fake_s3lib.sh"

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
head -c 1000000 big.txt > small.txt
fake shrunk "" small.txt
expect_rc 0 "$ferry" get --json --part-size 1M "$url/big" shrunk
cmp shrunk small.txt || fail "shrunk object differs"
grep -q '"changed":1' out.txt || fail "no restart: $(cat out.txt)"
[ ! -e shrunk.ferry-part ] && [ ! -e shrunk.ferry-part.journal ] ||
  fail "left: $(ls)"
echo ok
