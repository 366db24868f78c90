#!/usr/bin/env bash
# ferry convert from the command line: exit codes, per-file errors, --json,
# rerun after completion and after kill -9, dry run, thread-count independence.
set -euo pipefail
FERRY=$1 SAMPLES=$2
source "$(dirname "$0")/testlib.sh"
count_jpg() { find "$1" -name '*.jpg' -type f | wc -l; }

# The whole sample tree: every kind converts.
expect_rc 0 "$FERRY" convert "$SAMPLES" all --size 64 -j 2
[ "$(count_jpg all)" -eq 91 ] || fail "expected 91 outputs, got $(count_jpg all)"
grep -q '91 converted' err.txt || fail "no summary line"

# A bad file: reported by name, the rest converted, exit 1, listed in --json.
cp -r "$SAMPLES/dataset" src
head -c 3000 "$SAMPLES/images/png/rgb8.png" > src/cat/zz_truncated.png
echo "just text" > src/README.txt
expect_rc 1 "$FERRY" convert src out --size 48 -j 2 --json
/usr/bin/python3 - <<'PY'
import json
d = json.load(open("out.txt"))
s = d["summary"]
assert s["converted"] == 60 and s["failed"] == 1 and s["skipped"] == 1, s
assert d["failures"][0]["input"] == "cat/zz_truncated.png", d["failures"]
assert "truncated" in d["failures"][0]["error"], d["failures"]
PY
[ ! -e out/cat/zz_truncated.jpg ] || fail "output written for a bad input"

# Rerun: nothing to do but the bad file.
expect_rc 1 "$FERRY" convert src out --size 48 -j 2
grep -q '0 converted, 60 up to date' err.txt || { cat err.txt; fail "rerun reconverted"; }
rm src/cat/zz_truncated.png

# Same bytes whatever the thread count.
expect_rc 0 "$FERRY" convert src j1 --size 48 -j 1
expect_rc 0 "$FERRY" convert src j2 --size 48 -j 2
diff -r -x '.ferry-convert*' j1 j2 > /dev/null || fail "-j1 and -j2 outputs differ"

# Dry run writes nothing.
expect_rc 0 "$FERRY" convert src dry --size 48 --dry-run
[ ! -e dry ] || fail "dry run wrote files"
grep -q 'cat/cat_000.png -> cat/cat_000.jpg' out.txt || fail "dry run did not list work"

# Usage and IO errors.
expect_rc 2 "$FERRY" convert src x --mode bogus
expect_rc 2 "$FERRY" convert src x --size 0
expect_rc 2 "$FERRY" convert src x --size 10x20 --mode shorter
expect_rc 2 "$FERRY" convert src x --quality 101
expect_rc 4 "$FERRY" convert no/such/dir x
grep -q 'no/such/dir' err.txt || fail "missing source not named"

# kill -9 at random moments, then rerun: complete, valid, no stray files.
mkdir big
for i in 1 2 3 4 5 6; do cp -r src "big/copy$i"; done
total=$(find big -name '*.png' -o -name '*.jpg' | wc -l)
for delay in 0.05 0.1 0.2 0.3 0.15 0.25 0.08 0.12 0.4 0.05; do
  "$FERRY" convert big bigout --size 200 --mode cover -j 2 -q &
  pid=$!
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
done
expect_rc 0 "$FERRY" convert big bigout --size 200 --mode cover -j 2
[ "$(count_jpg bigout)" -eq "$total" ] || fail "after kills: $(count_jpg bigout) of $total outputs"
[ -z "$(find bigout -name '*.tmp-*')" ] || fail "temporary files left behind"
/usr/bin/python3 - <<'PY'
import glob
from PIL import Image
files = glob.glob("bigout/**/*.jpg", recursive=True)
for f in files:
    im = Image.open(f)
    im.load()
    assert im.size == (200, 200), (f, im.size)
print(f"{len(files)} outputs decode")
PY
# Issue 10 B6: an output too large for a JPEG or --max-pixels fails that file,
# decided from the header: under a 1 GB address-space limit (the old code
# built a 5,120,000x256 RGB image and aborted the batch) the rest converts.
mkdir huge
/usr/bin/python3 - <<'PY'
import struct, zlib
def png(path, w, h):
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    raw = (b"\0" + b"\x80" * (3 * w)) * h
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) +
                chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
png("huge/wide.png", 20000, 1)
png("huge/tall.png", 1, 40000)
PY
cp "$SAMPLES/images/png/rgb8.png" huge/ok.png
limit=""
# ASan maps TBs of shadow: no ulimit there. (Not "ldd | grep -q": with
# pipefail, grep quitting early fails the pipeline through SIGPIPE.)
case "$(ldd "$FERRY")" in *libasan*) ;; *) limit="ulimit -v 1000000;" ;; esac
expect_rc 1 bash -c "$limit exec \"\$@\"" _ "$FERRY" convert huge hugeout \
  --size 256 --mode shorter -j 2
grep -q 'wide.png.*5120000x256' err.txt || fail "oversize output not named: $(cat err.txt)"
grep -q 'tall.png' err.txt || fail "tall input not reported"
[ -f hugeout/ok.jpg ] || fail "the batch stopped at the oversize file"
[ ! -e hugeout/wide.jpg ] && [ ! -e hugeout/tall.jpg ] || fail "oversize output written"
# 1x40000 with --size 60000 overflowed into a 60000x1 JPEG.
expect_rc 1 "$FERRY" convert huge/tall.png tall.jpg --size 60000 --mode shorter
[ ! -e tall.jpg ] || fail "overflowed size written"
grep -q '60000x2147483647+' err.txt || fail "overflow not reported: $(cat err.txt)"
expect_rc 1 "$FERRY" convert "$SAMPLES/images/png/rgb8.png" big.jpg --size 2000 \
  --mode cover --max-pixels 1000000
grep -q 'limit 1000000' err.txt || fail "--max-pixels does not bound the output"

echo "cli convert: all checks passed"
