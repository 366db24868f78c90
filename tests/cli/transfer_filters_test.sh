#!/usr/bin/env bash
# ferry put -R / get -R on file:// buckets: --exclude/--include (repeatable,
# in order, the last match wins, fnmatch on the relative path with '*'
# matching '/' too), a usage error without -R, and put -R never uploads
# ferry's own working files (a real pack output's .ferry-pack-state and
# .ferry-pack.lock, downloads in progress, temporaries, sync views' state).
set -euo pipefail
FERRY=$1 SAMPLES=$2
source "$(dirname "$0")/testlib.sh"

# keys URL: the bucket's keys, one a line.
keys() { "$FERRY" ls -R "$1" | sort; }

mkdir -p tree/sub/deep tree/logs
for f in a.txt b.bin sub/c.txt sub/d.bin sub/deep/e.txt logs/x.log; do
  printf '%s' "$f" > "tree/$f"
done

expect_rc 0 "$FERRY" put -R --exclude '*.txt' tree "file://$work/b1/"
printf 'b.bin\nlogs/x.log\nsub/d.bin\n' > want.txt
keys "file://$work/b1/" > got.txt
diff want.txt got.txt || fail "exclude *.txt"

# In order: everything out, then *.txt back in, then sub/deep/* out again.
expect_rc 0 "$FERRY" put -R --exclude '*' --include '*.txt' \
  --exclude 'sub/deep/*' tree "file://$work/b2/"
printf 'a.txt\nsub/c.txt\n' > want.txt
keys "file://$work/b2/" > got.txt
diff want.txt got.txt || fail "exclude, include, exclude in order"
# The same filters the other way round: the last match wins.
expect_rc 0 "$FERRY" put -R --include '*.txt' --exclude '*' tree "file://$work/b3/"
[ -z "$(keys "file://$work/b3/")" ] || fail "include then exclude *: $(keys "file://$work/b3/")"

# get -R: the same rules on the keys below the prefix.
expect_rc 0 "$FERRY" put -R tree "file://$work/all/"
expect_rc 0 "$FERRY" get -R --exclude 'sub/*' --include '*/e.txt' \
  "file://$work/all/" got/
(cd got && find . -type f | sed 's|^\./||' | sort) > got.txt
printf 'a.txt\nb.bin\nlogs/x.log\nsub/deep/e.txt\n' > want.txt
diff want.txt got.txt || fail "get -R filters"
cmp got/sub/deep/e.txt tree/sub/deep/e.txt || fail "e.txt differs"
expect_rc 0 "$FERRY" get -R --dry-run --exclude '*.bin' "file://$work/all/" dry/
grep -q "b.bin" out.txt && fail "dry-run lists an excluded key: $(cat out.txt)"
grep -q "a.txt" out.txt || fail "dry-run: $(cat out.txt)"
# One '/' between the prefix as given and the key (it printed all//a.txt),
# for put too.
grep -qxF "get file://$work/all/a.txt -> dry/a.txt" out.txt ||
  fail "dry-run URL: $(cat out.txt)"
expect_rc 0 "$FERRY" put -R --dry-run tree "file://$work/b5/"
grep -qxF "put tree/a.txt -> file://$work/b5/a.txt" out.txt ||
  fail "put dry-run URL: $(cat out.txt)"

# Filters name paths below a folder: without -R they are a usage error.
expect_rc 2 "$FERRY" put --exclude '*.txt' tree/a.txt "file://$work/b4/"
grep -q "need -R" err.txt || fail "put without -R: $(cat err.txt)"
expect_rc 2 "$FERRY" get --include '*.txt' "file://$work/all/a.txt" one.txt
grep -q "need -R" err.txt || fail "get without -R: $(cat err.txt)"

# ferry's own files: a real pack output, plus what downloads, atomic
# writes and sync views leave.
cp -r "$SAMPLES/dataset" data
expect_rc 0 "$FERRY" pack data packed --size 64 --shard-records 7 -j 1
[ -e packed/.ferry-pack-state ] && [ -e packed/.ferry-pack.lock ] \
  || fail "pack left other names: $(ls -A packed)"
printf 'p' > packed/shard.tar.ferry-part
printf 'j' > packed/shard.tar.ferry-part.journal
printf 't' > packed/.ferry-tmp-12345-0123456789ab-dataset.json
printf 's' > packed/.ferry-sync.json
printf 'l' > packed/.ferry-view.lock
printf 'c' > packed/.ferry-convert
mkdir -p packed/.v.ferry-views/abc
printf 'v' > packed/.v.ferry-views/abc/f
printf 'k' > packed/keep.ferry-partial   # not ours: goes
expect_rc 0 "$FERRY" put -R packed "file://$work/pk/"
keys "file://$work/pk/" > got.txt
grep -q 'ferry-\(pack\|part\.\|part$\|tmp\|sync\|view\|convert\)' got.txt \
  && fail "working files uploaded: $(cat got.txt)"
grep -qx 'keep.ferry-partial' got.txt || fail "keep.ferry-partial missing"
grep -qx 'dataset.json' got.txt || fail "dataset.json missing"
n_shards=$(ls packed | grep -c '\.tfrecord$')
[ "$(grep -c '\.tfrecord$' got.txt)" -eq "$n_shards" ] || fail "shards: $(cat got.txt)"
# The copy is a dataset ferry verify accepts.
expect_rc 0 "$FERRY" get -R --exclude "keep.*" "file://$work/pk/" back/
expect_rc 0 "$FERRY" verify back
echo ok
