#!/usr/bin/env bash
# ferry publish's signatures and deltas (docs/delta.md) read by Debian's
# rdiff and zstd: the stored signature is `rdiff signature -S -1`'s, and the stored
# delta, after `zstd -d`, is applied by `rdiff patch` to the parent's object
# to give the new file. gc drops them with their objects. (exit 77 without
# rdiff or zstd)
set -euo pipefail
FERRY=$1
command -v rdiff > /dev/null || { echo "rdiff missing: skipped"; exit 77; }
command -v zstd > /dev/null || { echo "zstd missing: skipped"; exit 77; }
source "$(dirname "$0")/testlib.sh"
export FERRY_CACHE=$work/cache SOURCE_DATE_EPOCH=1700000000
json() { /usr/bin/python3 -c "import json,sys; d=json.load(open('out.txt')); print(eval(sys.argv[1]))" "$1"; }
obj() { echo "bucket/.ferry/objects/${1:0:2}/$1"; }
hash() { xxhsum -H2 < "$1" | cut -d' ' -f1; }

mkdir src
/usr/bin/python3 - <<'PY'
import random
r = random.Random(7)
v1 = bytes(r.getrandbits(8) for _ in range(3 << 20))
v2 = bytearray(v1); v2[5000:5100] = bytes(100); v2[2000000:2000000] = b"new record" * 300
open("src/shard-0.tfrecord", "wb").write(v1)
open("v2", "wb").write(bytes(v2))
PY
cp src/shard-0.tfrecord v1
sleep 0.3
expect_rc 0 "$FERRY" publish src "file://$work/bucket" --json
[ "$(json 'd["signatures_uploaded"]')" = 1 ] || fail "signature: $(cat out.txt)"
a=$(hash v1)
# librsync's minimum strong sum for the size (7 bytes for 3 MiB)
rdiff signature -S -1 v1 sig.rdiff
cmp sig.rdiff "bucket/.ferry/sigs/$a" || fail "stored signature is not rdiff -S -1's"

cp v2 src/shard-0.tfrecord
sleep 0.3
expect_rc 0 "$FERRY" publish src "file://$work/bucket" --json
[ "$(json 'd["deltas_uploaded"]')" = 1 ] || fail "delta: $(cat out.txt)"
b=$(hash v2)
d="bucket/.ferry/deltas/$a-$b"
[ -f "$d" ] || fail "no $d"
[ "$(stat -c %s "$d")" -lt 200000 ] || fail "delta not small: $(stat -c %s "$d")"
[ "$(json 'd["delta_bytes"]')" = "$(stat -c %s "$d")" ] || fail "delta_bytes"
zstd -q -d "$d" -o delta.raw
rdiff patch "$(obj "$a")" delta.raw out.v2
cmp out.v2 v2 || fail "rdiff patch of the stored delta does not give v2"
# The delta is refined (docs/delta.md): its literals are the 100 replaced
# and 3,000 inserted bytes, not the 1,664-byte blocks around them.
[ "$(json 'd["deltas_refined"]')" = 1 ] || fail "not refined: $(cat out.txt)"
literals=$(/usr/bin/python3 - delta.raw <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
assert d[:4] == b"rs\x026", "magic"
i, lit = 4, 0
while True:
    op = d[i]; i += 1
    if op == 0:
        break
    if op <= 0x40:
        n = op
    elif op <= 0x44:
        w = 1 << (op - 0x41); n = int.from_bytes(d[i:i + w], "big"); i += w
    else:
        k = op - 0x45; i += (1 << (k // 4)) + (1 << (k % 4)); continue
    lit += n; i += n
assert i == len(d), "bytes after END"
print(lit)
PY
)
[ "$literals" = 3100 ] || fail "delta literals: $literals bytes, not the 3100 novel ones"

# gc keeping only HEAD: v1's object, signature and the delta from it go.
expect_rc 0 "$FERRY" gc "file://$work/bucket" --keep 1 --grace 0s --json
[ "$(json 'd["sigs_deleted"]')" = 1 ] || fail "gc sigs: $(cat out.txt)"
[ "$(json 'd["deltas_deleted"]')" = 1 ] || fail "gc deltas: $(cat out.txt)"
[ ! -e "$d" ] && [ ! -e "bucket/.ferry/sigs/$a" ] || fail "gc left v1's sig or delta"
[ -f "bucket/.ferry/sigs/$b" ] || fail "gc removed HEAD's signature"
echo "publish deltas: ok"
