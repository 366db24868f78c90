#!/usr/bin/env bash
# lib/delta against Debian's rdiff (librsync's own CLI), both directions:
# signatures byte-identical, ferry's deltas applied by `rdiff patch` (also
# after the zstd round trip the bucket stores them in), rdiff's signatures
# and deltas read and applied by ferry, MD4 and rollsum signatures refused.
# Usage: rdiff_interop_test.sh DELTA_TOOL     (exit 77 without rdiff/zstd)
set -euo pipefail
tool=$1
command -v rdiff > /dev/null || { echo "rdiff missing: skipped"; exit 77; }
command -v zstd > /dev/null || { echo "zstd missing: skipped"; exit 77; }
. "$(dirname "$0")/../../cli/testlib.sh"

# old: 3 MB of random bytes; new: some replaced, some inserted, some removed,
# a tail appended (every kind of edit shifts what follows).
/usr/bin/python3 - <<'PY'
import random
r = random.Random(13)
old = bytes(r.getrandbits(8) for _ in range(3 << 20))
new = bytearray(old)
new[1000:1300] = bytes(300)
new[200000:200000] = bytes(r.getrandbits(8) for _ in range(5000))
del new[1500000:1512345]
new += b"tail" * 1000
open("old", "wb").write(old)
open("new", "wb").write(bytes(new))
open("other", "wb").write(bytes(r.getrandbits(8) for _ in range(3 << 20)))
PY

# 1. Signatures: the same bytes as rdiff's at librsync's minimum strong sum
#    for the size (`rdiff -S -1`: 7 for 3 MB): 11 bytes a block.
expect_rc 0 "$tool" signature old sig.ferry
rdiff signature -S -1 old sig.rdiff
cmp sig.ferry sig.rdiff || fail "signature differs from rdiff -S -1's"
[ "$(od -An -tu1 -j11 -N1 sig.ferry | tr -d ' ')" = 7 ] ||
  fail "strong sum length is not 7"

# 2. ferry's delta, applied by rdiff (raw and after zstd -d); the same bytes
#    as rdiff's delta from the same signature.
expect_rc 0 "$tool" delta sig.ferry new delta.ferry
rdiff delta sig.ferry new delta.rdiff
cmp delta.ferry delta.rdiff || fail "delta differs from rdiff's"
[ "$(stat -c %s delta.ferry)" -lt 100000 ] || fail "delta not small"
rdiff patch old delta.ferry out.rdiff
cmp out.rdiff new || fail "rdiff patch of ferry's delta"
zstd -q -19 delta.ferry -o delta.ferry.zst
zstd -q -d delta.ferry.zst -o delta.unzst
rdiff patch old delta.unzst out.zst
cmp out.zst new || fail "rdiff patch of ferry's delta after zstd"

# 3. rdiff's delta and signature (other block sizes and strong sums too),
#    read and applied by ferry.
expect_rc 0 "$tool" patch old delta.rdiff out.ferry
cmp out.ferry new || fail "ferry patch of rdiff's delta"
# The 32-byte strong sums ferry published before (rdiff's default) too.
for args in "-b 1024" "-S 32" "-b 4096 -S 16" "-b 65536 -S 24"; do
  # shellcheck disable=SC2086
  rdiff -f signature $args old sig.args
  expect_rc 0 "$tool" delta sig.args new delta.args
  rdiff -f patch old delta.args out.args
  cmp out.args new || fail "rdiff patch of ferry's delta from rdiff signature $args"
  rdiff -f delta sig.args new delta.args2
  expect_rc 0 "$tool" patch old delta.args2 out.args2
  cmp out.args2 new || fail "ferry patch of rdiff delta $args"
done

# 4. Refused signature kinds: MD4 (either rollsum), the old rollsum.
rdiff signature -H md4 old sig.md4
expect_rc 3 "$tool" delta sig.md4 new d.md4
grep -q MD4 err.txt || fail "MD4 refusal does not say MD4: $(cat err.txt)"
rdiff signature -H md4 -R rollsum old sig.md4r
expect_rc 3 "$tool" delta sig.md4r new d.md4r
grep -q MD4 err.txt || fail "MD4 refusal does not say MD4"
rdiff signature -R rollsum old sig.roll
expect_rc 3 "$tool" delta sig.roll new d.roll
grep -q rollsum err.txt || fail "rollsum refusal: $(cat err.txt)"
rdiff signature -S 4 old sig.short
expect_rc 3 "$tool" delta sig.short new d.short
grep -q "strong sum" err.txt || fail "-S 4 refusal: $(cat err.txt)"

# 5. Damaged deltas made by rdiff: cut short, a byte after the end, the
#    output capped below the new size, a basis that is too short.
head -c $(( $(stat -c %s delta.rdiff) - 1 )) delta.rdiff > delta.cut
expect_rc 3 "$tool" patch old delta.cut out.cut
grep -q truncated err.txt || fail "cut delta: $(cat err.txt)"
{ cat delta.rdiff; printf x; } > delta.extra
expect_rc 3 "$tool" patch old delta.extra out.extra
expect_rc 3 "$tool" patch old delta.rdiff out.cap $(( $(stat -c %s new) - 1 ))
grep -q "more than" err.txt || fail "cap: $(cat err.txt)"
head -c 100000 old > old.short
expect_rc 3 "$tool" patch old.short delta.rdiff out.short
grep -q "past the end" err.txt || fail "short basis: $(cat err.txt)"

# 6. A delta applied to another basis of the same size: bytes come out (the
#    delta names no basis), and they are not the new file: the caller's hash
#    catches it.
expect_rc 0 "$tool" patch other delta.rdiff out.other
cmp -s out.other new && fail "patching another basis reproduced the new file"
echo "rdiff interop: ok"
