#!/usr/bin/env bash
# lib/delta's block matcher against rdiff: `rdiff delta sig(NEW) BASIS` is
# the same search (its COPY commands say which blocks of NEW the basis holds
# and where). On files with every kind of edit ferry finds every block
# rdiff's COPYs cover, widened to the blocks equal to them (librsync points
# only at the first of equal blocks), and every place ferry gives holds the
# block's bytes. ferry finds more: the short last block anywhere (rdiff: only
# at the basis's end), and with FERRY_MATCH_EXHAUSTIVE=1 blocks inside
# stretches the greedy scan jumped over (a duplicated stretch at another
# phase); the test checks those extras are the expected ones. Also with the
# plain rolling scan and 1 thread.
# Usage: block_match_rdiff_test.sh DELTA_TOOL     (exit 77 without rdiff)
set -euo pipefail
tool=$1
command -v rdiff > /dev/null || { echo "rdiff missing: skipped"; exit 77; }
. "$(dirname "$0")/../../cli/testlib.sh"

/usr/bin/python3 - <<'PY'
import random
r = random.Random(5)
def rnd(n): return bytes(r.getrandbits(8) for _ in range(n))
old = bytearray(rnd(3 << 20))
old[700000:704000] = bytes(4000)                    # holds a zero block
old = bytes(old)
new = bytearray(old)
new[1000:1300] = bytes(300)                         # replaced
new[200000:200000] = rnd(5000)                      # inserted
del new[1500000:1512345]                            # removed
new[2000000:2000000] = old[100000:160000]           # a stretch duplicated
new[2500000:2500000] = bytes(40000)                 # zeros: equal blocks
new += b"tail" * 1000                               # appended
open("old", "wb").write(old)
open("new", "wb").write(bytes(new))
# A small one: 256-byte blocks, a short last block found mid-basis.
small_old = rnd(60000)
small_new = small_old[5000:5000 + 256 * 40] + rnd(700) + small_old[100:200]
open("small_old", "wb").write(small_old)
open("small_new", "wb").write(small_new)
PY

cat > check.py <<'PY'
import sys
new, basis, delta, fmap = (open(p, "rb").read() for p in sys.argv[1:5])
L = int(sys.argv[5])
n = (len(new) + L - 1) // L
block = lambda i: new[i * L:(i + 1) * L]
# rdiff's delta turns NEW into BASIS: COPY(pos, len) at output offset o says
# BASIS[o:o+len] == NEW[pos:pos+len].
assert delta[:4] == b"rs\x026"
i, out, covered = 4, 0, set()
while True:
    op = delta[i]; i += 1
    if op == 0: break
    if op <= 0x40: i += op; out += op
    elif op <= 0x44:
        w = 1 << (op - 0x41); ln = int.from_bytes(delta[i:i + w], "big")
        i += w + ln; out += ln
    else:
        k = op - 0x45; pw, lw = 1 << (k // 4), 1 << (k % 4)
        pos = int.from_bytes(delta[i:i + pw], "big"); i += pw
        ln = int.from_bytes(delta[i:i + lw], "big"); i += lw
        assert basis[out:out + ln] == new[pos:pos + ln]
        assert pos % L == 0
        covered.update(range(pos // L, (pos + ln + L - 1) // L))
        out += ln
assert out == len(basis), "rdiff delta does not rebuild the basis"
contents = {block(b) for b in covered}
rdiff_found = {b for b in range(n) if block(b) in contents}
ferry_found = set()
for line in fmap.decode().split("\n"):
    if not line: continue
    b, src, off = map(int, line.split())
    assert src == 0 and basis[off:off + len(block(b))] == block(b), line
    ferry_found.add(b)
print(f"blocks {n}: rdiff covers {len(covered)}, with equal blocks "
      f"{len(rdiff_found)}; ferry finds {len(ferry_found)}")
extra = sorted(ferry_found - rdiff_found)
print(f"  only ferry: {len(extra)} {extra[:3]}..{extra[-3:]}")
if rdiff_found - ferry_found:
    print("only rdiff:", sorted(rdiff_found - ferry_found)[:20])
    sys.exit(1)
want = int(sys.argv[6])
if len(extra) != want:
    print(f"ferry found {len(extra)} more than rdiff, want {want}")
    sys.exit(1)
PY

check() {  # NEW BASIS EXTRA (blocks ferry finds and rdiff does not) [ENV...]
  local new=$1 basis=$2 extra=$3 size bl
  shift 3
  size=$(stat -c %s "$new")
  rdiff -f signature "$new" "sig.$new"
  rdiff -f delta "sig.$new" "$basis" "delta.$new"
  bl=$(od -An -tu1 -j4 -N4 "sig.$new" | awk '{print $1*16777216+$2*65536+$3*256+$4}')
  expect_rc 0 env "$@" "$tool" match "sig.$new" "$size" "map.$new" "$basis"
  /usr/bin/python3 check.py "$new" "$basis" "delta.$new" "map.$new" "$bl" "$extra" ||
    fail "ferry's block map of $new differs from rdiff's COPYs"
  expect_rc 0 env "$@" FERRY_MATCH_PLAIN=1 FERRY_MATCH_THREADS=1 "$tool" match \
    "sig.$new" "$size" "map.plain.$new" "$basis"
  cmp "map.$new" "map.plain.$new" || fail "plain scan's map differs"
}
# new: the duplicated 60,000 bytes hold 32 whole blocks of 1792 bytes, at a
# phase other than the same bytes' blocks earlier in new: the greedy scans
# are past them (inside a match) when they come. small_new: its short last
# block, mid-basis.
check new old 0
check new old 32 FERRY_MATCH_EXHAUSTIVE=1
check small_new small_old 1
check small_new small_old 1 FERRY_MATCH_EXHAUSTIVE=1
echo "block_match_rdiff: ok"
