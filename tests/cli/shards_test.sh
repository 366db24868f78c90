#!/usr/bin/env bash
# Shards, verify and inspect under hostile input (issue 10 F27-F31, D16-D19,
# C13; issue 9 item 6): each block is one regression, its item named.
set -euo pipefail
FERRY=$1 SAMPLES=$2 HERE=$(cd "$(dirname "$0")" && pwd)
source "$(dirname "$0")/testlib.sh"
PY=/usr/bin/python3
check() { $PY "$HERE/check_shards.py" "$1" > /dev/null || fail "checker rejected $1"; }
# problems WHAT: the --json report in out.txt, as "file record offset" lines.
problems() {
  $PY -c "
import json, sys
for p in json.load(open('out.txt'))['problems']:
    if p['what'] == sys.argv[1]: print(p['file'], p['record'], p['offset'], p['detail'])" "$1"
}
whats() { $PY -c "import json; print(' '.join(sorted({p['what'] + ':' + p['file'] for p in json.load(open('out.txt'))['problems']})))"; }
cp -r "$SAMPLES/dataset" data
# Outputs several blocks read.
"$FERRY" pack data wds --format wds --size 32 --shard-records 8 -q
"$FERRY" pack data tf --size 32 --shard-records 8 -q
"$FERRY" pack data gz --compress gzip --size 32 --ratios 1 --names all --shard-records 10 -q
g=gz/all-00000-of-00006.tfrecord.gz
# icc_pngs DIR: rgb.png and cmyk.png with an iCCP profile of that colour space.
icc_pngs() {
  mkdir -p "$1"
  $PY - "$SAMPLES/images/png/rgb8.png" "$1/rgb.png" "$1/cmyk.png" <<'PY'
import sys, struct, zlib
png = open(sys.argv[1], 'rb').read()
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
def profile(space):
    p = bytearray(132); p[0:4] = struct.pack('>I', 132); p[12:16] = b'mntr'; p[16:20] = space
    p[20:24] = b'XYZ '; p[36:40] = b'acsp'; return bytes(p)
for out, space in ((sys.argv[2], b'RGB '), (sys.argv[3], b'CMYK')):
    iccp = chunk(b'iCCP', b'test\0\0' + zlib.compress(profile(space)))
    open(out, 'wb').write(png[:33] + iccp + png[33:])
PY
}

# --- F27: WebDataset keys are whole, however long the split name; names
f27() {
# that cannot fit tar's 100 bytes are refused.
long=$(printf 's%.0s' $(seq 60))  # 60 bytes
expect_rc 0 "$FERRY" pack data wlong --format wds --size 32 --ratios 1 --names "$long" --shard-records 5
check wlong
$PY - wlong/"$long"-00000-of-*.tar <<'PY' || fail "long split name: keys collide"
import sys, tarfile
names = tarfile.open(sys.argv[1]).getnames()
assert len(names) == len(set(names)), names
# webdataset: key = up to the first dot; a repeated suffix in a key is an error
keys = {}
for n in names:
    k, ext = n.split(".", 1)
    assert ext not in keys.setdefault(k, set()), ("duplicate file name", n)
    keys[k].add(ext)
assert len(keys) == 5, keys
PY
head -1 wlong/"$long"-00000-of-*.tar.idx | grep -q '^v1.2 5$' || fail "DALI index of the long-name shard"
toolong=$(printf 's%.0s' $(seq 86))
expect_rc 2 "$FERRY" pack data wx --format wds --ratios 1 --names "$toolong"
grep -q 'at most 85' err.txt || fail "too-long split name: no clear error"
}

# --- F31: wids: no index for an empty split, escaped URLs; verify reads
# labels.txt; a .tar.gz shard is a tar.
f31_empty() {
expect_rc 0 "$FERRY" pack data w31 --format wds --size 32 --ratios 1:0 --names train,empty
[ ! -e w31/empty.wids.json ] || fail "an empty split got a wids index"
expect_rc 0 "$FERRY" verify w31
}
f31_url() {
expect_rc 0 "$FERRY" pack data w31 --format wds --size 32 --ratios 1 --names 'tr#a?b:c' --shard-records 25
$PY -c "
import json; d = json.load(open('w31/tr#a?b:c.wids.json'))
urls = [s['url'] for s in d['shardlist']]
assert urls and all('%23' in u and '%3F' in u and '%3A' in u and '#' not in u for u in urls), urls"
expect_rc 0 "$FERRY" verify w31
}
f31_labels() {
expect_rc 0 "$FERRY" verify wds
sed -i 's/^cat$/dog/' wds/labels.txt
expect_rc 3 "$FERRY" verify wds --json
problems labels | grep -q "^labels.txt 0 " || fail "an edited labels.txt passes verify"
}
f31_targz() {
gzip -c -n wds/train-00000-of-00006.tar > val.tar.gz
expect_rc 0 "$FERRY" verify val.tar.gz --json
$PY -c "
import json; d = json.load(open('out.txt'))
assert d['records'] == 8 and not d['problems'], d"
expect_rc 0 "$FERRY" inspect val.tar.gz --json
$PY -c "import json; d = json.load(open('out.txt')); assert d['kind'] == 'webdataset.gz' and d['records'] == 8, d"
}

# --- F28: gzip TFRecord framing as TF reads it.
f28_garbage() {
expect_rc 0 "$FERRY" verify "$g"
cp "$g" garbage.tfrecord.gz; printf 'garbage!' >> garbage.tfrecord.gz
expect_rc 3 "$FERRY" verify garbage.tfrecord.gz --json
problems gzip | grep -q "not a gzip member" || fail "garbage after the gzip stream passes verify"
expect_rc 3 "$FERRY" inspect garbage.tfrecord.gz
}
f28_concat() {
cat "$g" "$g" > two.tfrecord.gz  # TF (since 2.5) reads both members
expect_rc 0 "$FERRY" verify two.tfrecord.gz --json
$PY -c "import json; d = json.load(open('out.txt')); assert d['records'] == 20, d"
$PY -c "
import gzip, struct
b = gzip.open('two.tfrecord.gz').read(); n = 0; i = 0
while i < len(b):
    (ln,) = struct.unpack('<Q', b[i:i+8]); i += 16 + ln; n += 1
assert n == 20, n"
}
f28_trailer() {
cp "$g" crc.tfrecord.gz
size=$(stat -c %s crc.tfrecord.gz)
$PY -c "p='crc.tfrecord.gz'; b=bytearray(open(p,'rb').read()); b[-8]^=1; open(p,'wb').write(b)"
expect_rc 3 "$FERRY" verify crc.tfrecord.gz --json
problems gzip | grep -q "trailer.*CRC-32" || fail "a flipped trailer CRC is not named"
if problems truncated | grep -q .; then fail "a trailer CRC is reported as a truncated record"; fi
read -r _ _ off _ < <(problems gzip)
[ "$off" -le "$size" ] || fail "gzip problem at offset $off past the end ($size)"
expect_rc 3 "$FERRY" inspect crc.tfrecord.gz
grep -q 'trailer' out.txt || fail "inspect does not name the gzip trailer"
}

# --- F29: the first real cause, in the right record, no cascade.
f29_tar() {
t=wds/train-00000-of-00006.tar
# The .cls header of sample 3 (entries: cls, jpg, json per sample).
cp "$t" cls.tar; cp "$t.idx" cls.tar.idx
$PY - cls.tar <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, 'rb').read()); pos = 0
for _ in range(9):
    size = int(b[pos+124:pos+135].decode(), 8); pos += 512 + (size + 511) // 512 * 512
assert b[pos:pos+100].rstrip(b'\0').endswith(b'.cls'), b[pos:pos+40]
b[pos+130] ^= 1; open(p, 'wb').write(b); open('cls_off', 'w').write(str(pos))
PY
expect_rc 3 "$FERRY" verify cls.tar --json
[ "$(whats)" = "tar:cls.tar" ] || fail "tar damage cascades: $(whats)"
problems tar | grep -q "^cls.tar 3 $(cat cls_off) " || fail "tar damage not in record 3: $(problems tar)"
expect_rc 3 "$FERRY" inspect cls.tar
grep -q 'record 3' out.txt || fail "inspect names no record for tar damage"
}
# A TFRecord cut at a record boundary: the shard is truncated, not its index.
f29_cut() {
s=tf/train-00000-of-00006.tfrecord
cp "$s" cut.tfrecord; cp "$s.idx" cut.tfrecord.idx
read -r o _ < <(sed -n 6p cut.tfrecord.idx)
truncate -s "$o" cut.tfrecord
expect_rc 3 "$FERRY" verify cut.tfrecord --json
[ "$(whats)" = "truncated:cut.tfrecord" ] || fail "a cut at a record boundary blames: $(whats)"
problems truncated | grep -q "^cut.tfrecord 5 $o " || fail "cut: $(problems truncated)"
}

# --- F30: the schema is the majority's; the odd record is flagged alone.
f30() {
$PY - wds/train-00000-of-00006.tar nojpg.tar <<'PY'
import sys, tarfile, io
src = tarfile.open(sys.argv[1]); out = tarfile.open(sys.argv[2], 'w', format=tarfile.USTAR_FORMAT)
first = src.getmembers()[0].name.split('.')[0]
for m in src.getmembers():
    if m.name == first + '.jpg':
        continue
    out.addfile(m, src.extractfile(m))
out.close()
PY
expect_rc 3 "$FERRY" verify nojpg.tar --json
n=$(problems schema | wc -l)
[ "$n" -eq 1 ] || fail "schema: $n problems, want 1: $(problems schema)"
problems schema | grep -q "^nojpg.tar 0 " || fail "schema: not sample 0: $(problems schema)"
}

# --- D16: every option enters the fingerprint (--keep-icc, --max-pixels).
d16_convert() {
icc_pngs icc
expect_rc 0 "$FERRY" convert icc icc_out
expect_rc 0 "$FERRY" convert icc icc_out --keep-icc
grep -q ICC_PROFILE icc_out/rgb.jpg || fail "convert --keep-icc rerun reused outputs made without it"
}
# D19: a CMYK profile is not copied into an RGB output.
d19() {
icc_pngs icc
expect_rc 0 "$FERRY" convert icc icc_out --keep-icc
grep -q ICC_PROFILE icc_out/rgb.jpg || fail "--keep-icc lost an RGB profile"
if grep -q ICC_PROFILE icc_out/cmyk.jpg; then fail "a CMYK profile was copied into an RGB JPEG"; fi
}
d16_pack() {
icc_pngs icc
cp icc/rgb.png data/cat/zz_icc.png
expect_rc 0 "$FERRY" pack data picc --size 32 --shard-records 8
expect_rc 0 "$FERRY" pack data picc --size 32 --shard-records 8 --keep-icc --json
$PY -c "import json; d = json.load(open('out.txt')); assert d['reused_shards'] == 0, d"
$PY -c "import json; d = json.load(open('picc/dataset.json')); assert d['options']['keep_icc'] is True, d['options']"
expect_rc 0 "$FERRY" pack data picc --size 32 --shard-records 8 --keep-icc --max-pixels 100000000 --json
$PY -c "import json; d = json.load(open('out.txt')); assert d['reused_shards'] == 0, d"
rm data/cat/zz_icc.png
}

# --- D17: a resumed pack lists failures as a clean run does.
d17() {
head -c 2000 "$SAMPLES/images/png/rgb8.png" > data/cat/zz_broken.png
expect_rc 1 "$FERRY" pack data bad --size 32 --shard-records 8
cp bad/dataset.json clean.json
expect_rc 1 "$FERRY" pack data bad --size 32 --shard-records 8
if ! cmp -s clean.json bad/dataset.json; then
  diff clean.json bad/dataset.json >&2 || true
  fail "a resumed pack rewrites failures"
fi
rm data/cat/zz_broken.png
}

# --- D18: a rerun does not reuse a shard whose index was changed.
d18() {
total=$(ls tf/*.tfrecord | wc -l)
sed -i '1s/^0 /1 /' tf/train-00001-of-*.tfrecord.idx
expect_rc 0 "$FERRY" pack data tf --size 32 --shard-records 8 --json
$PY -c "import json; d = json.load(open('out.txt')); assert 0 < d['reused_shards'] < $total, d"
expect_rc 0 "$FERRY" verify tf
}

# --- C13: a rerun with other shard sizes leaves no old shards behind;
c13() {
# files pack did not name are left alone.
echo mine > tf/notes.txt; echo mine > tf/train-1.tfrecord
expect_rc 0 "$FERRY" pack data tf --size 32 --shard-records 20
$PY -c "
import glob, json
d = json.load(open('tf/dataset.json'))
want = {'tf/' + s['name'] + x for s in d['splits']['train']['shards'] for x in ('', '.idx')}
want.add('tf/train-1.tfrecord')
got = set(glob.glob('tf/train-*'))
assert got == want, sorted(got ^ want)" || fail "stale shards left"
[ -f tf/notes.txt ] || fail "a user's file was removed"
rm tf/notes.txt tf/train-1.tfrecord
check tf
expect_rc 0 "$FERRY" verify tf
expect_rc 0 "$FERRY" pack data tf --size 32 --shard-records 20 --format wds
if ls tf | grep -q tfrecord; then fail "TFRecord shards left after a WebDataset rerun"; fi
check tf
}

# --- Issue 9 item 6: inspect identifies its input by its bytes.
i9_6() {
expect_rc 0 "$FERRY" inspect "$SAMPLES/images/png/rgb16.png"
grep -q 'png image, .*16-bit, 3 channels' out.txt || fail "inspect png: $(cat out.txt)"
expect_rc 0 "$FERRY" inspect "$SAMPLES/images/jpeg/exif_orientation_6.jpg" --json
$PY -c "
import json; d = json.load(open('out.txt'))
assert d['kind'] == 'image' and d['format'] == 'jpeg' and d['orientation'] == 6 and d['bit_depth'] == 8 and d['width'] > 0, d"
cp wds/train-00000-of-00006.tar renamed.bin
expect_rc 0 "$FERRY" inspect renamed.bin --json
$PY -c "import json; d = json.load(open('out.txt')); assert d['kind'] == 'webdataset' and d['records'] == 8, d"
head -c 3000 /dev/urandom > noise.tfrecord.txt
expect_rc 2 "$FERRY" inspect noise.tfrecord.txt
grep -q 'not a shard, dataset or image' err.txt || fail "inspect of noise: $(cat out.txt err.txt)"
}

# ONLY=NAME runs one block (to watch it fail on an older ferry).
for block in ${ONLY:-f27 f31_empty f31_url f31_labels f31_targz f28_garbage f28_concat f28_trailer f29_tar f29_cut f30 d16_convert d19 d16_pack d17 d18 c13 i9_6}; do (mkdir "$block"; cd "$block"; cp -r ../data ../wds ../tf ../gz .; "$block"); done
echo "cli shards: all checks passed"
