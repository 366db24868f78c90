#!/usr/bin/env bash
# ferry verify: a clean pack output passes; every kind of damage is found and
# placed exactly (file, record, offset, what); nothing is ever modified.
set -euo pipefail
FERRY=$1 SAMPLES=$2
source "$(dirname "$0")/testlib.sh"
# has FILE RECORD OFFSET WHAT: the --json report in out.txt lists that problem.
has() {
  /usr/bin/python3 - "$@" <<'PY' || { cat out.txt >&2; fail "no problem $*"; }
import json, sys
f, rec, off, what = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
d = json.load(open("out.txt"))
ok = any(p["file"] == f and p["record"] == rec and p["offset"] == off and p["what"] == what for p in d["problems"])
sys.exit(0 if ok else 1)
PY
}
cp -r "$SAMPLES/dataset" data
"$FERRY" pack data tf --size 64 --shard-records 8 -q
"$FERRY" pack data wds --format wds --size 64 --shard-records 8 -q
expect_rc 0 "$FERRY" verify tf --deep
expect_rc 0 "$FERRY" verify wds --deep -j 2
sum_before=$(find tf -type f -exec md5sum {} + | sort | md5sum)

# One flipped byte in each region of record 1 of a TFRecord shard.
shard=train-00001-of-00006.tfrecord
read -r off size < <(sed -n 2p "tf/$shard.idx")
flip() {  # copy, then flip the byte at $1 in the copy's shard
  rm -rf t; cp -r tf t
  /usr/bin/python3 -c "import sys; p='t/$shard'; b=bytearray(open(p,'rb').read()); b[$1]^=0x40; open(p,'wb').write(b)"
}
flip $((off + 1));          expect_rc 3 "$FERRY" verify t --json; has "$shard" 1 "$off" length_crc; has "$shard" -1 -1 hash
flip $((off + 9));          expect_rc 3 "$FERRY" verify t --json; has "$shard" 1 "$off" length_crc
flip $((off + 12 + 100));   expect_rc 3 "$FERRY" verify t --json; has "$shard" 1 $((off + 12)) data_crc
flip $((off + size - 2));   expect_rc 3 "$FERRY" verify t --json; has "$shard" 1 $((off + 12)) data_crc
# The single shard alone gives the same record and offset.
expect_rc 3 "$FERRY" verify "t/$shard" --json; has "$shard" 1 $((off + 12)) data_crc

# A tar header: the checksum fails at that header's offset.
tshard=train-00002-of-00006.tar
rm -rf w; cp -r wds w
/usr/bin/python3 -c "
import sys; p='w/$tshard'; b=bytearray(open(p,'rb').read())
# the third entry's header: walk headers by size
pos=0
for _ in range(2):
    size=int(b[pos+124:pos+135].decode(),8); pos+=512+(size+511)//512*512
b[pos+10]^=1; open(p,'wb').write(b); open('hdr_off','w').write(str(pos))"
expect_rc 3 "$FERRY" verify w --json
/usr/bin/python3 -c "
import json; d=json.load(open('out.txt')); off=int(open('hdr_off').read())
assert any(p['file']=='$tshard' and p['offset']==off and p['what']=='tar' for p in d['problems']), d"

# A wids index that lies about a shard.
rm -rf w; cp -r wds w
/usr/bin/python3 -c "
import json; p='w/train.wids.json'; d=json.load(open(p)); d['shardlist'][1]['nsamples'] += 1; json.dump(d, open(p,'w'))"
expect_rc 3 "$FERRY" verify w --json; has train.wids.json -1 -1 index

# Truncation, deletion, an added file, swapped indexes.
rm -rf t; cp -r tf t; truncate -s -100 "t/$shard"
last=$(($(wc -l < "tf/$shard.idx") - 1))
expect_rc 3 "$FERRY" verify t --json; has "$shard" "$last" "$(tail -1 "tf/$shard.idx" | cut -d' ' -f1)" truncated
rm -rf t; cp -r tf t; rm t/val-00000-of-00002.tfrecord; echo hi > t/notes.txt
expect_rc 3 "$FERRY" verify t --json
has val-00000-of-00002.tfrecord -1 -1 missing; has notes.txt -1 -1 extra
rm -rf t; cp -r tf t
mv t/train-00000-of-00006.tfrecord.idx x.idx; mv t/train-00003-of-00006.tfrecord.idx t/train-00000-of-00006.tfrecord.idx
mv x.idx t/train-00003-of-00006.tfrecord.idx
expect_rc 3 "$FERRY" verify t --json
has train-00000-of-00006.tfrecord.idx -1 -1 index; has train-00003-of-00006.tfrecord.idx -1 -1 index

# A planted cross-split duplicate.
i=0
for f in data/cat/*; do cp "$f" "data/space/dup_$i.${f##*.}"; i=$((i + 1)); [ $i -lt 10 ] || break; done
# By default a pack keeps identical files in one split: its own verify passes.
expect_rc 0 "$FERRY" pack data noleak --size 64 -q
expect_rc 0 "$FERRY" verify noleak
# --drop-duplicates leaves the copies out and lists them as dropped.
expect_rc 0 "$FERRY" pack data dropped --size 64 -q --drop-duplicates
expect_rc 0 "$FERRY" verify dropped
/usr/bin/python3 -c "
import json; d=json.load(open('dropped/dataset.json')); n=json.load(open('noleak/dataset.json'))
assert len(d['dropped']) == 10 and d['records'] == n['records'] - 10 and not d['failed'], d['dropped']"
# --allow-leakage: declared in dataset.json, a warning for verify (exit 0).
expect_rc 0 "$FERRY" pack data leak --size 64 -q --allow-leakage --split-mode stable
expect_rc 0 "$FERRY" verify leak --json
/usr/bin/python3 -c "
import json; d=json.load(open('out.txt'))
assert d['clean'] and not d['problems'], d
assert any(p['what']=='leakage' and 'identical' in p['detail'] for p in d['warnings']), d"
# Leakage the output does not declare stays an integrity failure.
sed -i 's/"allowed":true/"allowed":false/' leak/dataset.json
expect_rc 3 "$FERRY" verify leak --json
/usr/bin/python3 -c "
import json; d=json.load(open('out.txt'))
assert any(p['what']=='leakage' and 'identical' in p['detail'] for p in d['problems']), d"

# A hash-listed tree: the list `ferry hash .` writes ("./cat/..."), as
# hash --check takes it, also with "././" or ".//"; and without the "./".
(cd data && "$FERRY" hash . > ../dot.xxh128)
grep -q '  \./cat/' dot.xxh128 || fail "no ./ names in: $(head -2 dot.xxh128)"
(cd data && "$FERRY" hash --check -q ../dot.xxh128) || fail "hash --check"
expect_rc 0 "$FERRY" verify data --hashes dot.xxh128
sed 's#  \./#  ././/#' dot.xxh128 > dots.xxh128
expect_rc 0 "$FERRY" verify data --hashes dots.xxh128
sed 's#  \./#  #' dot.xxh128 > list.xxh128
expect_rc 0 "$FERRY" verify data --hashes list.xxh128
# "a/./b" and "a//b" name a/b too; a name with ".." (or absolute) is no file
# of the folder: a problem, not an OK (it was read outside and passed).
sed 's#  \./cat/#  cat/./#; s#  \./dog/#  dog//#' dot.xxh128 > inner.xxh128
expect_rc 0 "$FERRY" verify data --hashes inner.xxh128
head -c 100 /dev/urandom > outside.bin
(cd data && "$FERRY" hash ../outside.bin) >> list.xxh128
expect_rc 3 "$FERRY" verify data --hashes list.xxh128 --json
has ../outside.bin -1 -1 name
# A listed file that is a link out of the folder: its bytes are not the
# folder's (a problem, though they match); one to a file inside is fine. A
# name listed twice is a problem.
ln -s ../outside.bin data/out.bin
ln -s cat/cat_002.png data/in.png
cp dot.xxh128 links.xxh128
(cd data && "$FERRY" hash ./out.bin ./in.png) >> links.xxh128
expect_rc 3 "$FERRY" verify data --hashes links.xxh128 --json
has out.bin -1 -1 link
/usr/bin/python3 -c "
import json; d=json.load(open('out.txt'))
assert len(d['problems']) == 1, d['problems']"
rm data/out.bin
sed '1p' dot.xxh128 > twice.xxh128
(cd data && "$FERRY" hash ./in.png) >> twice.xxh128
expect_rc 3 "$FERRY" verify data --hashes twice.xxh128 --json
has "$(sed -n '1s#^[0-9a-f]*  \./##p' dot.xxh128)" -1 -1 name
rm data/in.png
echo x >> data/cat/cat_000.png; rm data/cat/cat_001.png; echo new > data/new.txt
expect_rc 3 "$FERRY" verify data --hashes dot.xxh128 --json
has cat/cat_000.png -1 -1 hash; has cat/cat_001.png -1 -1 missing; has new.txt -1 -1 extra

# Nothing was modified by any verify.
[ "$(find tf -type f -exec md5sum {} + | sort | md5sum)" = "$sum_before" ] || fail "verify modified files"
expect_rc 4 "$FERRY" verify no/such/path
echo "cli verify: all checks passed"
