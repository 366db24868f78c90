#!/usr/bin/env bash
# ferry publish / log / gc on file:// buckets: a first publish and an
# unchanged republish that reads no file, hostile trees (FIFO, links out of
# the tree, a newline in a name, ferry's own working files), --dry-run writes
# nothing, a HEAD naming a missing or corrupt manifest (exit 4 / 3, nothing
# overwritten) or that cannot be read (a FIFO, a folder, a link out; or
# .ferry/refs no folder; or a --tag that cannot be replaced: exit 4,
# nothing written), two publisher processes racing (the loser exits 4 naming both
# versions), log's lines (a message escaped as names; a tag that is an empty
# folder told), gc. S3: tests/integration/publish_s3_test.sh.
set -euo pipefail
FERRY=$1
source "$(dirname "$0")/testlib.sh"
export FERRY_CACHE=$work/cache SOURCE_DATE_EPOCH=1700000000
json() { /usr/bin/python3 -c "import json,sys; d=json.load(open('out.txt')); print(eval(sys.argv[1]))" "$1"; }
listing() { (cd "$1" && find . -type f | LC_ALL=C sort); }

mkdir -p src/sub outside/dir
printf 'one' > src/a.txt
printf 'two' > src/sub/b.bin
printf 'odd' > "$(printf 'src/line\nbreak')"
printf 'secret-ish' > outside/file
ln -s "$work/outside/file" src/link-out       # leads outside: skipped
ln -s "$work/outside/dir" src/dir-out          # a link to a folder: skipped
mkfifo src/fifo                                # skipped, never opened
touch src/.ferry-pack.lock src/x.ferry-part    # ferry's working files
sleep 0.3   # older than the stat cache's racy window

expect_rc 0 "$FERRY" publish src "file://$work/bucket" -m "first" --tag v1 --json
[ "$(json 'd["files"]')" = 3 ] || fail "files published: $(cat out.txt)"
[ "$(json 'd["files_read"]')" = 3 ] || fail "first publish reads every file"
[ "$(json 'd["skipped"]')" = 3 ] || fail "the FIFO and the links out and to a folder are skipped"
[ "$(json 'd["ref_write"]')" = conditional ] || fail "file:// HEAD is written conditionally"
v1=$(json 'd["id"]')
[ "$(cat bucket/.ferry/refs/HEAD)" = "$v1" ] || fail "HEAD names the version"
[ "$(cat bucket/.ferry/refs/tags/v1)" = "$v1" ] || fail "the tag names the version"
[ -f "bucket/.ferry/manifests/$v1" ] || fail "manifest stored under its id"
# Files below 1 MiB go up in one pack, their bytes one after another in
# path order (a.txt, "line\nbreak", sub/b.bin); nothing as its own object.
[ "$(json 'd["packs_uploaded"]')" = 1 ] || fail "one pack: $(cat out.txt)"
[ "$(cat bucket/.ferry/packs/*/*)" = oneoddtwo ] || fail "pack: $(cat bucket/.ferry/packs/*/*)"
[ ! -e bucket/.ferry/objects ] || fail "small files went up as objects: $(find bucket/.ferry/objects)"
# --no-packs: each its own object under its XXH3-128 (what a ferry before
# packs reads).
expect_rc 0 "$FERRY" publish src "file://$work/loose" --no-packs --json
h=$(xxhsum -H2 < src/a.txt | cut -d' ' -f1)
[ "$(cat "loose/.ferry/objects/${h:0:2}/$h")" = one ] || fail "object under its XXH3-128"
[ ! -e loose/.ferry/packs ] || fail "--no-packs made packs"
grep -rq secret-ish bucket && fail "the file a link out of the tree names went up"

# Unchanged: no file content read, no new version, nothing written.
before=$(listing bucket)
expect_rc 0 "$FERRY" publish src bucket --json
[ "$(json 'd["unchanged"]')" = True ] || fail "unchanged tree: $(cat out.txt)"
[ "$(json 'd["files_read"]')" = 0 ] || fail "a republish of an unchanged tree read files"
[ "$(listing bucket)" = "$before" ] || fail "an unchanged republish wrote to the bucket"
expect_rc 0 "$FERRY" publish src bucket
grep -q "nothing to publish" out.txt || fail "unchanged tree not said: $(cat out.txt)"

# --dry-run writes nothing to the bucket.
printf 'three' > src/c.txt
expect_rc 0 "$FERRY" publish src bucket --dry-run --json
[ "$(json 'd["objects_uploaded"]')" = 1 ] || fail "dry run counts the new object"
[ "$(listing bucket)" = "$before" ] || fail "--dry-run wrote to the bucket"

expect_rc 0 "$FERRY" publish src bucket --dry-run --json --exclude '*.txt' --include c.txt
[ "$(json 'd["files"]')" = 3 ] || fail "--exclude/--include in order: $(cat out.txt)"

expect_rc 0 "$FERRY" publish src bucket -m "second"
grep -q "1 objects uploaded" out.txt || fail "only the new file goes up: $(cat out.txt)"
expect_rc 0 "$FERRY" log bucket --json
[ "$(json 'len(d["versions"])')" = 2 ] || fail "log shows two versions"
[ "$(json 'd["versions"][1]["id"]')" = "$v1" ] || fail "log goes back to v1"
[ "$(json 'd["versions"][1]["tags"]')" = "['v1']" ] || fail "log names tags"
[ "$(json 'd["versions"][0]["message"]')" = second ] || fail "log shows messages"
[ "$(json 'd["versions"][0]["files"]')" = 4 ] || fail "log shows file counts"
v2=$(json 'd["versions"][0]["id"]')
expect_rc 0 "$FERRY" log bucket
[ "$(wc -l < out.txt)" = 2 ] && head -1 out.txt | grep -q "^$v2 .*4 files.*second" \
  || fail "log text: $(cat out.txt)"
# A message with a line break, an ESC, quotes and UTF-8: the line for a person
# shows it escaped as names are (it showed JSON's escapes), --json as given.
# An empty folder at a tag's name is told, as other unreadable tags are.
expect_rc 0 "$FERRY" publish src msgs -m "$(printf 'a\nb\033[2J "q" caf\xc3\xa9\\')"
mkdir -p msgs/.ferry/refs/tags/void
expect_rc 0 "$FERRY" log msgs
[ "$(wc -l < out.txt)" = 1 ] && grep -qF '  a\x0ab\x1b[2J "q" café\\' out.txt \
  || fail "log message not shown as Printable: $(cat out.txt)"
grep -q '^ferry: warning: msgs/\.ferry/refs/tags/void/: a folder: not read as a tag$' \
  err.txt || fail "empty folder at a tag's name not told: $(cat err.txt)"
expect_rc 0 "$FERRY" log msgs --json
[ "$(json 'd["versions"][0]["message"]')" = "$(printf 'a\nb\033[2J "q" caf\xc3\xa9\\')" ] \
  || fail "--json message: $(cat out.txt)"

# Usage errors.
expect_rc 2 "$FERRY" publish src bucket --tag 'no/slash'
# A tag of 32 hex digits would read as a manifest id (REMOTE@<id>): refused.
expect_rc 2 "$FERRY" publish src bucket --tag 0123456789abcdef0123456789ABCDEF
grep -q "manifest id" err.txt || fail "the message says why: $(cat err.txt)"
[ ! -e bucket/.ferry/refs/tags/0123456789abcdef0123456789ABCDEF ] || fail "hex tag written"
expect_rc 2 "$FERRY" publish src/a.txt bucket
expect_rc 2 "$FERRY" gc bucket --grace soon
expect_rc 2 "$FERRY" gc bucket --keep 0
expect_rc 4 "$FERRY" log empty-bucket

# HEAD naming a missing manifest (exit 4) or a corrupt one (exit 3): refused
# before anything is written.
cp -a bucket broken
mv "broken/.ferry/manifests/$v2" saved
printf 'four' > src/d.txt
before=$(listing broken)
expect_rc 4 "$FERRY" publish src broken
grep -q "names manifest $v2.*nothing published" err.txt || fail "missing manifest: $(cat err.txt)"
[ "$(listing broken)" = "$before" ] || fail "a publish onto a broken HEAD wrote"
cp saved "broken/.ferry/manifests/$v2"
printf '\x01' | dd of="broken/.ferry/manifests/$v2" bs=1 seek=20 conv=notrunc 2> /dev/null
before=$(listing broken)
expect_rc 3 "$FERRY" publish src broken
[ "$(listing broken)" = "$before" ] || fail "a publish onto a corrupt HEAD wrote"
[ "$(cat broken/.ferry/refs/HEAD)" = "$v2" ] || fail "HEAD overwritten"
expect_rc 3 "$FERRY" log broken

# A HEAD that is there but cannot be read (a FIFO, a folder, a link out of
# the bucket): refused (exit 4) naming it, nothing written, HEAD left as it
# is, the FIFO never opened (timeout); read as missing, it began a new
# history over it.
cp saved "broken/.ferry/manifests/$v2"
for kind in fifo folder link; do
  rm broken/.ferry/refs/HEAD
  case $kind in
    fifo) mkfifo broken/.ferry/refs/HEAD ;;
    folder) mkdir broken/.ferry/refs/HEAD ;;
    link) ln -s "$work/saved" broken/.ferry/refs/HEAD ;;
  esac
  before=$(listing broken; ls -l broken/.ferry/refs)
  expect_rc 4 timeout 60 "$FERRY" publish src broken
  grep -q "broken/.ferry/refs/HEAD: is there but cannot be read" err.txt \
    || fail "$kind HEAD: $(cat err.txt)"
  [ "$(listing broken; ls -l broken/.ferry/refs)" = "$before" ] \
    || fail "a publish onto a $kind HEAD wrote"
  rm -r broken/.ferry/refs/HEAD
  echo "$v2" > broken/.ferry/refs/HEAD
done

# Every entry of a bucket and its type (links, FIFOs and folders too, and
# ferry's temporary files).
entries() { (cd "$1" && find . -printf '%y %p\n' | LC_ALL=C sort); }

# .ferry/refs no folder (a dangling link, a file, a FIFO, a link to
# /dev/null): refused (exit 4) naming .ferry/refs, nothing written. Read as
# no HEAD, publish uploaded objects and a parentless manifest, then failed
# at the HEAD write; the others said a bare "Not a directory".
mkdir src3 && printf 'fresh' > src3/fresh.txt
mv broken/.ferry/refs refs-kept
for kind in dangling file fifo null; do
  case $kind in
    dangling) ln -s /nonexistent broken/.ferry/refs ;;
    file) echo "$v2" > broken/.ferry/refs ;;
    fifo) mkfifo broken/.ferry/refs ;;
    null) ln -s /dev/null broken/.ferry/refs ;;
  esac
  before=$(entries broken)
  expect_rc 4 timeout 60 "$FERRY" publish src3 broken
  grep -q "broken/.ferry/refs: is there but is no folder" err.txt \
    || fail "refs a $kind: $(cat err.txt)"
  [ "$(entries broken)" = "$before" ] \
    || fail "a publish with refs a $kind wrote"
  rm broken/.ferry/refs
done
mv refs-kept broken/.ferry/refs

# A tag that cannot be replaced (a folder, a FIFO, a link out of the
# bucket): refused (exit 4) naming it before HEAD moves, nothing written.
# Read as no tag, HEAD moved and then the write failed ("Is a directory"),
# or the FIFO was replaced.
mkdir -p broken/.ferry/refs/tags
for kind in folder fifo link; do
  case $kind in
    folder) mkdir broken/.ferry/refs/tags/t2 ;;
    fifo) mkfifo broken/.ferry/refs/tags/t2 ;;
    link) ln -s "$work/saved" broken/.ferry/refs/tags/t2 ;;
  esac
  before=$(entries broken)
  expect_rc 4 timeout 60 "$FERRY" publish src3 broken --tag t2
  grep -q "broken/.ferry/refs/tags/t2: is there but cannot be read" err.txt \
    || fail "a $kind tag: $(cat err.txt)"
  [ "$(entries broken)" = "$before" ] \
    || fail "a publish onto a $kind tag wrote"
  rm -r broken/.ferry/refs/tags/t2
done
expect_rc 0 "$FERRY" publish src3 broken --tag t2
[ "$(cat broken/.ferry/refs/tags/t2)" = "$(cat broken/.ferry/refs/HEAD)" ] \
  || fail "the tag is not the new HEAD"

# Two publishers: A stops before its HEAD write (after its manifest), B
# publishes meanwhile; A then loses with exit 4 naming both versions.
mkdir other && printf 'theirs' > other/t.txt
n=$(ls bucket/.ferry/manifests | wc -l)
FERRY_TEST_PUBLISH_PAUSE=$work/go "$FERRY" publish src bucket -m A > a.out 2> a.err &
apid=$!
for _ in $(seq 300); do
  [ "$(ls bucket/.ferry/manifests | wc -l)" -gt "$n" ] && break; sleep 0.1
done
expect_rc 0 "$FERRY" publish other bucket -m B --json
vb=$(json 'd["id"]')
touch go
set +e; wait $apid; arc=$?; set -e
[ "$arc" = 4 ] || { cat a.out a.err >&2; fail "the losing publisher exits $arc, want 4"; }
grep -q "remote changed since this publish started (parent $v2, now $vb)" a.err \
  || fail "loser's message: $(cat a.err)"
[ "$(cat bucket/.ferry/refs/HEAD)" = "$vb" ] || fail "the winner's HEAD was overwritten"

# gc: keep HEAD (B) and the tag v1; v2 and A's manifest and objects go.
expect_rc 0 "$FERRY" gc bucket --keep 1 --grace 0 --dry-run
before=$(listing bucket)
grep -q "would delete .ferry/manifests/$v2" out.txt || fail "gc dry run lists v2: $(cat out.txt)"
expect_rc 0 "$FERRY" gc bucket --keep 1 --grace 0 --dry-run --json
[ "$(listing bucket)" = "$before" ] || fail "gc --dry-run deleted"
expect_rc 0 "$FERRY" gc bucket --keep 1 --json --grace 1h
[ "$(json 'd["objects_deleted"]')" = 0 ] || fail "young objects deleted"
# A grace too long for gc's cutoff is refused (999999d overflowed it into
# the future: every unreferenced object deleted); 100 years is the most.
for g in 999999d 3153600000d 36501d 876001h; do
  expect_rc 2 "$FERRY" gc bucket --keep 1 --grace $g --json
  grep -q "at most 100 years" err.txt || fail "--grace $g: $(cat err.txt)"
done
expect_rc 0 "$FERRY" gc bucket --keep 1 --json --grace 36500d
[ "$(json 'd["objects_deleted"]')" = 0 ] || fail "--grace 36500d deleted young objects"
[ "$(listing bucket)" = "$before" ] || fail "a refused or long grace deleted"
expect_rc 0 "$FERRY" gc bucket --keep 1 --grace 0 --json
[ "$(json 'd["versions_kept"]')" = 2 ] || fail "gc keeps HEAD and the tag: $(cat out.txt)"
[ "$(json 'd["manifests_deleted"]')" = 2 ] || fail "v2 and A's manifest go: $(cat out.txt)"
[ ! -f "bucket/.ferry/manifests/$v2" ] && [ -f "bucket/.ferry/manifests/$v1" ] || fail "gc kept the wrong manifests"
[ "$(json 'd["packs_deleted"]')" = 2 ] || fail "v2's and A's packs go: $(cat out.txt)"
[ "$(json 'd["packs_kept"]')" = 2 ] || fail "v1's and B's packs stay: $(cat out.txt)"
grep -rq three bucket/.ferry/packs && fail "v2-only pack kept"
grep -rqx oneoddtwo bucket/.ferry/packs || fail "the tagged version's pack deleted"
expect_rc 0 "$FERRY" log bucket --ref v1
grep -q "^$v1" out.txt || fail "the tagged version reads after gc"

# --mirror: files at their own paths too.
expect_rc 0 "$FERRY" publish src mirror --mirror
[ "$(cat mirror/sub/b.bin)" = two ] && [ "$(cat "$(printf 'mirror/line\nbreak')")" = odd ] \
  || fail "--mirror writes each file at its path"
echo "publish tests passed"
