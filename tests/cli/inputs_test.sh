#!/usr/bin/env bash
# Trees as users and attackers have them, through the one walker and input
# classification that hash, convert, split and pack share: FIFOs, devices,
# links, unreadable folders, hidden and stray files, outputs inside the
# source, huge non-images, temp-file names, single-file converts.
set -euo pipefail
FERRY=$1 SAMPLES=$2
source "$(dirname "$0")/testlib.sh"
T="timeout 120"  # a hang fails the test instead of stopping the suite
png=$SAMPLES/images/png/rgb8.png
jpg=$(ls "$SAMPLES"/dataset/cat/*.jpg 2> /dev/null | head -1 || true)
[ -n "$jpg" ] || jpg=$(find "$SAMPLES/images/jpeg" -name '*.jpg' | head -1)

# --- A1: FIFOs, devices, sockets are skipped with the reason; nothing hangs.
mkdir -p t/c t/d
cp "$png" t/c/a.png; cp "$png" t/d/b.png; cp "$jpg" t/d/c.jpg
mkfifo t/c/pipe
ln -s /dev/zero t/c/zero.png
ln -s /dev/null t/d/null
expect_rc 0 $T "$FERRY" hash t
[ "$(wc -l < out.txt)" -eq 3 ] || fail "hash: want 3 hash lines: $(cat out.txt)"
grep -q 't/c/pipe: skipped: not a regular file (FIFO)' err.txt || fail "hash: FIFO not reported"
grep -q 't/c/zero.png: skipped: not a regular file (character device)' err.txt \
  || fail "hash: device link not reported"
expect_rc 0 $T "$FERRY" convert t conv --size 32 -j 2
grep -q '3 converted, 0 up to date, 3 skipped' err.txt || fail "convert: $(cat err.txt)"
expect_rc 0 $T "$FERRY" convert t conv --size 32 -j 2 -v
grep -q 'c/pipe: skipped: not a regular file (FIFO)' err.txt || fail "convert -v: no reason"
expect_rc 0 $T "$FERRY" split t --out sp
grep -q '3 items (3 skipped' err.txt || fail "split: $(cat err.txt)"
expect_rc 0 $T "$FERRY" pack t pk --size 32 --ratios 1 --names all
python3 -c "import json,sys; d=json.load(open('pk/dataset.json')); \
assert d['records']==3 and d['skipped']==3, d" || fail "pack: skipped not recorded"

# --- A2: an unreadable folder and a dangling link: reported, the rest done, exit 1.
# (Run as nobody: root reads any folder.)
mkdir -p u/a u/locked; cp "$png" u/a/x.png; cp "$png" u/locked/y.png
ln -s nowhere u/a/dangling.png
chmod 755 u u/a; chmod 000 u/locked; chmod 755 "$work"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
expect_rc 1 as_nobody $T "$FERRY" hash u
grep -q "u/a/x.png" out.txt || fail "hash printed nothing for the readable file"
grep -q "u/locked" err.txt || fail "hash: unreadable folder not named"
grep -q "u/a/dangling.png" err.txt || fail "hash: dangling link not named"
mkdir -m 777 usplit
expect_rc 1 as_nobody $T "$FERRY" split u --out usplit/s
[ -s usplit/s/split.json ] || fail "split wrote nothing after an unreadable folder"
grep -q "locked" err.txt || fail "split: unreadable folder not named"
chmod 755 u/locked

# --- A3: an output inside the source is not an input, on any rerun.
mkdir -p raw/c; cp "$png" raw/c/a.png; cp "$png" raw/c/b.png
expect_rc 0 "$FERRY" convert raw raw/jpeg --size 32
expect_rc 0 "$FERRY" convert raw raw/jpeg --size 32
expect_rc 0 "$FERRY" convert raw/ ./raw/jpeg/ --size 32
[ ! -e raw/jpeg/jpeg ] || fail "convert converted its own outputs"
grep -q '0 converted, 2 up to date, 0 skipped' err.txt || fail "rerun: $(cat err.txt)"
mkdir -p dot/c; cp "$png" dot/c/a.png
(cd dot && "$FERRY" convert . jpeg --size 32 -q && "$FERRY" convert . jpeg --size 32 -q)
[ "$(find dot -name '*.jpg' | wc -l)" -eq 1 ] || fail "convert . jpeg: $(find dot)"
expect_rc 2 "$FERRY" convert raw raw/ --size 32
grep -q 'is the source' err.txt || fail "convert into the source itself accepted"
expect_rc 0 "$FERRY" split raw/c --out raw/c/splits --ratios 1 --names all
expect_rc 0 "$FERRY" split raw/c --out raw/c/splits --ratios 1 --names all
[ "$(wc -l < raw/c/splits/all.txt)" -eq 2 ] || fail "split took its outputs as items"

# --- A4 + issue 9.1: hidden and non-image files are not items; stray files
# do not fail a pack; a file named as an image that is not one does.
mkdir -p ds/cat ds/dog
cp "$SAMPLES"/dataset/cat/* ds/cat/; cp "$SAMPLES"/dataset/coffee/* ds/dog/
echo readme > ds/README.txt; echo x > ds/cat/.DS_Store; echo n > ds/dog/notes.txt
mkdir ds/.thumbs; cp "$png" ds/.thumbs/t.png
n=$(($(ls "$SAMPLES"/dataset/cat | wc -l) + $(ls "$SAMPLES"/dataset/coffee | wc -l)))
expect_rc 0 "$FERRY" split ds --out dsplit --json
python3 -c "import json; d=json.load(open('out.txt')); assert d['items']==$n and d['skipped']==4, d" \
  || fail "split counted stray files: $(cat out.txt)"
expect_rc 0 "$FERRY" pack ds dpk --size 32 --json
python3 -c "import json; d=json.load(open('out.txt')); assert d['records']==$n and d['skipped']==4 and d['failed']==0, d" \
  || fail "pack: $(cat out.txt)"
grep -q '"skipped_files"' dpk/dataset.json || fail "dataset.json lists no skipped files"
expect_rc 0 "$FERRY" pack ds dpk2 --size 32 --include-hidden --json
python3 -c "import json; d=json.load(open('out.txt')); assert d['records']==$n+1, d" \
  || fail "--include-hidden: $(cat out.txt)"
echo "not an image" > ds/dog/fake.jpg
expect_rc 1 "$FERRY" pack ds dpk3 --size 32
grep -q 'dog/fake.jpg: .*not a PNG or JPEG' err.txt || fail "fake.jpg not a failure: $(cat err.txt)"
rm ds/dog/fake.jpg
# An image beside the class folders has no class: skipped with the reason.
cp "$png" ds/top.png
expect_rc 0 "$FERRY" pack ds dpk4 --size 32 -v
grep -q 'top.png: skipped: no class' err.txt || fail "root image: $(cat err.txt)"
# No class folders at all: an unlabelled dataset.
mkdir flat; cp "$png" flat/a.png; cp "$png" flat/b.png
expect_rc 0 "$FERRY" split flat --out flats --ratios 1 --names all --json
python3 -c "import json; d=json.load(open('out.txt')); assert d['items']==2, d" || fail "flat tree"

# --- B5: a multi-GB non-image is skipped from its first bytes; a huge file
# named and signed as an image is refused from its size, before any read.
mkdir -p big/c; cp "$png" big/c/a.png
truncate -s 3G big/c/video.mp4
{ head -c 16 "$png"; } > big/c/huge.png; truncate -s 3G big/c/huge.png
limit=""
# ASan maps TBs of shadow: no ulimit there. (Not "ldd | grep -q": with
# pipefail, grep quitting early fails the pipeline through SIGPIPE.)
case "$(ldd "$FERRY")" in *libasan*) ;; *) limit="ulimit -v 1500000;" ;; esac
expect_rc 1 bash -c "$limit exec $T '$FERRY' convert big bigout --size 32"
grep -q '1 converted, 0 up to date, 1 skipped' err.txt || fail "3G inputs: $(cat err.txt)"
grep -q 'huge.png: .*above the limit' err.txt || fail "huge.png: $(cat err.txt)"

# --- C9: only ferry's own temporary files are ever removed.
mkdir -p notes/sub; echo keep > notes/draft.tmp-2024; echo keep > notes/sub/x.tmp-0123456789ab
cp "$png" notes/photo.png
(cd notes && expect_rc 0 "$FERRY" convert photo.png photo.jpg --size 32)
[ -e notes/draft.tmp-2024 ] && [ -e notes/sub/x.tmp-0123456789ab ] || fail "user files deleted"
[ -z "$(ls -A notes | grep ferry)" ] || fail "single convert left state: $(ls -A notes)"
mkdir -p tree/c; cp "$png" tree/c/a.png
mkdir -p treeout/c; echo keep > treeout/c/a.jpg.tmp-0123456789ab
echo stale > "treeout/c/.ferry-tmp-99999999-0123456789ab-a.jpg"
expect_rc 0 "$FERRY" convert tree treeout --size 32
[ -e treeout/c/a.jpg.tmp-0123456789ab ] || fail "tree convert deleted a user file"
[ ! -e "treeout/c/.ferry-tmp-99999999-0123456789ab-a.jpg" ] || fail "stale temp of a dead run kept"

# --- C10: concurrent single-file converts into one folder all succeed.
mkdir -p conc/in conc/out
for i in $(seq 1 40); do cp "$png" conc/in/p$i.png; done
pids=()
for i in $(seq 1 40); do
  "$FERRY" convert conc/in/p$i.png conc/out/ --size 16 -q 2> conc/err$i & pids+=($!)
done
bad=0; for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
[ "$bad" -eq 0 ] || { cat conc/err*; fail "$bad of 40 concurrent converts failed"; }
[ "$(ls conc/out | wc -l)" -eq 40 ] || fail "concurrent: $(ls -A conc/out | head)"

# --- C11: a folder as the destination of one file.
mkdir outdir
expect_rc 0 "$FERRY" convert "$png" outdir --size 16
[ -s outdir/rgb8.jpg ] || fail "convert FILE DIR wrote no DIR/name.jpg"
expect_rc 0 "$FERRY" convert "$png" newdir/ --size 16
[ -s newdir/rgb8.jpg ] || fail "convert FILE NEWDIR/ wrote no NEWDIR/name.jpg"

# --- C12: a non-image never claims an output name.
mkdir -p stem/c; cp "$png" stem/c/0001.png; echo '{}' > stem/c/0001.json; echo t > stem/c/0002.txt
expect_rc 0 "$FERRY" convert stem stemout --size 16
[ -s stemout/c/0001.jpg ] || fail "0001.json blocked 0001.png: $(cat err.txt)"
grep -q '1 converted, 0 up to date, 2 skipped (not inputs; -v says why), 0 failed' err.txt || fail "stem: $(cat err.txt)"

# --- Issue 10.22: a tree path with a line break cannot be one line of a
# split list: that file fails (named), the rest is split, exit 1.
mkdir -p nl/c; cp "$png" nl/c/a.png; cp "$png" "nl/c/b
c.png"
expect_rc 1 "$FERRY" split nl --out nls --ratios 1 --names all
[ "$(wc -l < nls/all.txt)" -eq 1 ] || fail "split list broken by a newline name"
grep -q 'line break' err.txt || fail "newline name not reported: $(cat err.txt)"

# --- Review findings: devices named on the command line are refused, FIFOs
# read as pipes (never as an empty success), output folders that hold the
# user's inputs are refused, other runs' outputs inside SRC are not inputs.
expect_rc 1 $T "$FERRY" hash /dev/zero
grep -q 'not a regular file (character device)' err.txt || fail "hash /dev/zero: $(cat err.txt)"
expect_rc 2 $T "$FERRY" verify /dev/zero
set +e; $T "$FERRY" hash --check /dev/zero > out.txt 2> err.txt; rc=$?; set -e
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "hash --check /dev/zero: exit $rc"
printf 'path,label\na.png,cat\nb.png,cat\n' > good.csv
expect_rc 0 "$FERRY" split --list good.csv --out fl --ratios 1 --names all
mkfifo lf.csv
( sleep 1; cat good.csv > lf.csv ) &
expect_rc 0 $T "$FERRY" split --list lf.csv --out fl --ratios 1 --names all
wait
[ "$(wc -l < fl/all.txt)" -eq 2 ] || fail "a FIFO listing was read as empty"
mkdir -p w/cat w/dog; cp "$png" w/cat/1.png; cp "$png" w/cat/2.png; cp "$png" w/dog/3.png
expect_rc 2 "$FERRY" split w --out w/cat
grep -q 'inside the source' err.txt || fail "split --out into an input folder: $(cat err.txt)"
expect_rc 2 "$FERRY" convert w w/dog --size 16
[ ! -e w/dog/3.jpg ] || fail "convert wrote into an input folder"
mkdir -p r2/a; cp "$png" r2/a/1.png
expect_rc 0 "$FERRY" convert r2 r2/jpeg --size 16
(cd r2 && "$FERRY" convert . out --size 16 -q)
[ ! -e r2/out/jpeg ] || fail "another run's outputs were converted again"

# A listing naming one file under two spellings lists it twice: refused.
printf 'path,label\n./a.png,cat\na.png,cat\n' > dup.csv
expect_rc 2 "$FERRY" split --list dup.csv --out dups --ratios 1 --names all
grep -q 'listed twice' err.txt || fail "./a.png and a.png accepted: $(cat err.txt)"
printf 'path,label\nsub/../a.png,cat\n' > up.csv
expect_rc 2 "$FERRY" split --list up.csv --out dups --ratios 1 --names all
grep -q "'..' part" err.txt || fail "sub/../a.png accepted: $(cat err.txt)"

echo "inputs CLI tests passed"
