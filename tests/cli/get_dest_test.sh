#!/usr/bin/env bash
# ferry get -R never writes outside DST nor two objects onto one file
# (docs/remote.md "Keys and local paths"): keys with '..', '.', '//', a
# leading '/' are refused by key (exit 4, the others fetched); S3 folder
# markers are skipped (counted in --json); keys that clash (same file, a file
# that is another key's folder) are refused before any download; a symbolic
# link inside DST is never followed (DST itself may be one); a part file that
# is a link is refused; a DEST (or a file's place in DST) that is a FIFO, a
# device or a socket is refused, never replaced. And what a SRC of get -R
# names: a missing prefix fails naming it (the others fetched); one object is
# fetched into DST. A fake S3 (tests/integration/fake_s3.py) lists the keys
# no real server would.
set -euo pipefail
ferry=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/testlib.sh"
export AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=y AWS_REGION=us-east-1
export AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent
unset AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_SESSION_TOKEN || true
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

# fake NAME JSON: starts a fake S3 serving JSON's keys; sets $endpoint.
fake() {
  printf '%s' "$2" > "$1.json"
  /usr/bin/python3 "$here/../integration/fake_s3.py" "$1.json" "$1.port" &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$1.port" ] && break; sleep 0.1; done
  endpoint=http://127.0.0.1:$(cat "$1.port")
}
get() { "$ferry" get -R --endpoint-url "$endpoint" "$@"; }

# 1. Keys that would leave DST or land elsewhere than their name says.
mkdir -p w/d1
fake evil '{"p/ok.txt": "ok", "p/sub/ok2.txt": "ok2",
  "p/../escape1.txt": "E1", "p/a/../../escape2.txt": "E2",
  "p/../../../escape3.txt": "E3", "p//abs.txt": "A", "p/a//b.txt": "B",
  "p/./dot.txt": "D", "p/tail/": "T"}'
(cd w/d1 && expect_rc 4 get --json s3://b/p/ out/)
cp w/d1/out.txt out.txt; cp w/d1/err.txt err.txt
[ "$(cat w/d1/out/ok.txt)" = ok ] && [ "$(cat w/d1/out/sub/ok2.txt)" = ok2 ] ||
  fail "good keys not fetched"
found=$(find "$work" \( -name 'escape*' -o -name abs.txt -o -name b.txt -o \
  -name dot.txt -o -name tail \) -print)
[ -z "$found" ] || fail "refused keys wrote: $found"
for k in ../escape1.txt a/../../escape2.txt ../../../escape3.txt /abs.txt \
         a//b.txt ./dot.txt tail/; do
  grep -qF "ferry: $k: " err.txt || fail "key $k not named: $(cat err.txt)"
done
grep -q '"files_done":2' out.txt && grep -q '"files_failed":7' out.txt ||
  fail "json: $(cat out.txt)"

# 7. S3 folder markers (empty "x/" objects, as the S3 console makes).
fake markers '{"dm/": "", "dm/sub/": "", "dm/sub/f.txt": "F", "dm/e/": ""}'
expect_rc 0 get --json s3://b/dm/ dmo/
[ "$(cat dmo/sub/f.txt)" = F ] || fail "f.txt"
[ -z "$(find dmo -name '*ferry-part*')" ] || fail "part files left"
# ("dm/" itself is the listed folder's own marker: not listed at all)
grep -q '"files_skipped":2' out.txt || fail "markers not counted: $(cat out.txt)"

# 10. Keys that clash: refused by key before any download, the rest fetched.
fake clash '{"c/x": "file x", "c/x/y": "y", "c/q": "q",
  "c/r.ferry-part": "not r", "c/r": "r", "c/ok": "fine"}'
expect_rc 4 get s3://b/c/ co/
[ "$(cat co/ok)" = fine ] && [ "$(cat co/q)" = q ] || fail "good keys not fetched"
[ ! -e co/x ] && [ ! -e co/r ] && [ ! -e co/r.ferry-part ] ||
  fail "a clashing key was written: $(find co)"
grep -qF "ferry: x: InvalidArgument: is also the folder of 'x/y'" err.txt &&
  grep -qF "ferry: x/y: " err.txt && grep -qF "ferry: r: " err.txt &&
  grep -qF "ferry: r.ferry-part: " err.txt || fail "clash: $(cat err.txt)"
# Two sources into one folder, one key each way.
expect_rc 4 get s3://b/c/ s3://b/c/ co2/
grep -qF "ferry: ok: InvalidArgument: goes to the same file as 'ok'" err.txt ||
  fail "same file: $(cat err.txt)"

# 11. A symbolic link inside DST is not followed; DST itself may be one.
mkdir -p src/sub sl/outside sl/real
echo f > src/sub/f; echo top > src/top
ln -s ../outside sl/real/sub
ln -s real sl/dst
expect_rc 4 "$ferry" get -R "file://$work/src/" sl/dst/
[ ! -e sl/outside/f ] || fail "wrote through the link"
[ "$(cat sl/real/top)" = top ] || fail "top not fetched through DST's own link"
grep -q "sl/dst/sub: is a symbolic link (not followed)" err.txt ||
  fail "link not named: $(cat err.txt)"

# 2. A part file that is a symbolic link (or a journal) is refused, by name.
mkdir sy && echo keep > sy/victim
ln -s victim sy/top.ferry-part
expect_rc 4 "$ferry" get "file://$work/src/top" sy/top
[ "$(cat sy/victim)" = keep ] && [ ! -e sy/top ] || fail "followed the part link"
grep -q "sy/top.ferry-part: is a symbolic link (not followed)" err.txt ||
  fail "part link: $(cat err.txt)"
rm sy/top.ferry-part && ln -s victim sy/top.ferry-part.journal
expect_rc 4 "$ferry" get "file://$work/src/top" sy/top
grep -q "sy/top.ferry-part.journal: is a symbolic link" err.txt ||
  fail "journal link: $(cat err.txt)"
# The final rename replaces a link at DEST itself, never writes through it.
rm sy/top.ferry-part.journal && ln -s victim sy/top
expect_rc 0 "$ferry" get "file://$work/src/top" sy/top
[ "$(cat sy/victim)" = keep ] && [ ! -L sy/top ] && [ "$(cat sy/top)" = top ] ||
  fail "DEST link followed"

# 12. A DEST that is a FIFO, a device or a socket (or a link to one:
# /dev/stdout) is refused by name before anything is written, never
# replaced by the download's rename (as root, `get URL /dev/null` made
# /dev/null a plain file): exit 4. So is one at a file's place inside DEST
# with -R, the other files fetched. (A device node of our own stands in for
# /dev/null: without the fix only it is lost.)
mkdir sp && mkfifo sp/fifo && ln -s /dev/null sp/null
python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sp/sock")'
specials=(sp/fifo sp/null sp/sock)
if mknod sp/dev c 1 3 2> /dev/null; then specials+=(sp/dev); fi
still_special() {
  [ -p sp/fifo ] && [ -L sp/null ] && [ -c /dev/null ] && [ -S sp/sock ] &&
    { [ ! -e sp/dev ] || [ -c sp/dev ]; } || fail "$1: replaced: $(ls -l sp)"
  [ -z "$(find sp -name '*.ferry-part*' -o -name '.ferry-tmp*')" ] ||
    fail "$1: wrote $(ls -a sp)"
}
fake sp '{"s/a": "A", "s/b": "B"}'
for d in "${specials[@]}"; do
  expect_rc 4 "$ferry" get "file://$work/src/top" "$d"
  still_special "file:// into $d"
  grep -Eq "$d: (not a regular file|a link to /dev/null)" err.txt || fail "$d not named: $(cat err.txt)"
  expect_rc 4 "$ferry" get --endpoint-url "$endpoint" s3://b/s/a "$d"
  still_special "s3:// into $d"
  grep -Eq "$d: (not a regular file|a link to /dev/null)" err.txt || fail "$d not named: $(cat err.txt)"
done
mkdir spd && mkfifo spd/a
expect_rc 4 get s3://b/s/ spd/
[ -p spd/a ] && [ "$(cat spd/b)" = B ] || fail "-R: $(ls -l spd)"
grep -q "spd/a: not a regular file (FIFO)" err.txt || fail "-R: $(cat err.txt)"

# 13. A SRC that lists nothing and is no object (a missing prefix, a missing
# folder) fails naming it, exit 4, as ls of it does; the other SRCs are
# fetched. An empty folder is no failure.
fake srcs '{"p/x": "X", "p/sub/y": "Y", "other/s1": "S1"}'
expect_rc 4 get --json s3://b/nonexistent/ s3://b/p/ ms/
[ "$(cat ms/x)" = X ] && [ "$(cat ms/sub/y)" = Y ] || fail "other SRC: $(find ms)"
grep -qF "ferry: s3://b/nonexistent/: NotFound: no such object or prefix" err.txt ||
  fail "missing prefix not named: $(cat err.txt)"
grep -q '"files_done":2' out.txt && grep -q '"files_failed":1' out.txt ||
  fail "missing prefix json: $(cat out.txt)"
expect_rc 4 get s3://b/nonexistent ms2/
grep -qF "ferry: s3://b/nonexistent: NotFound: no such object or prefix" err.txt ||
  fail "missing prefix without '/': $(cat err.txt)"
expect_rc 4 "$ferry" get -R "file://$work/no/such/dir/" "file://$work/src/" ms3/
[ "$(cat ms3/top)" = top ] || fail "file:// other SRC: $(find ms3)"
grep -qF "ferry: file://$work/no/such/dir/: NotFound: no such object or prefix" err.txt ||
  fail "missing folder not named: $(cat err.txt)"
mkdir empty
expect_rc 0 "$ferry" get -R "file://$work/empty/" ms4/

# 14. A SRC naming one object (no prefix below it) is that object, fetched
# into DST/<its name> as ls -R lists it (as cp -r and aws s3 cp --recursive
# do); --dry-run says so.
expect_rc 0 get s3://b/other/s1 one/
[ "$(cat one/s1)" = S1 ] || fail "s3:// object as -R SRC: $(find one)"
expect_rc 0 get --dry-run s3://b/other/s1 one2/
grep -qxF "get s3://b/other/s1 -> one2/s1" out.txt || fail "dry-run: $(cat out.txt)"
expect_rc 0 "$ferry" get -R "file://$work/src/top" "$work/src/sub/f" one3/
[ "$(cat one3/top)" = top ] && [ "$(cat one3/f)" = f ] ||
  fail "file:// object as -R SRC: $(find one3) $(cat err.txt)"
echo ok
