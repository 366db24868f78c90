#!/usr/bin/env bash
# put -R / ls -R / get -R of file:// trees holding a dangling link, an
# unreadable folder and a FIFO: each named on stderr (the FIFO as skipped,
# as ferry hash says it, and a link to a folder too: both counted as
# files_skipped), the dangling link and the folder counted as failed (exit 4),
# every other file transferred. A device, FIFO or pipe named as a SRC is a
# failed item, named, with nothing at its key (it went up as an empty object),
# and so is a /proc file (size 0, yet it reads bytes). A link in the tree
# that leads outside it is not followed by put -R nor publish (a planted link
# must not upload /etc/shadow), one inside is; files named like ferry's
# working files are skipped, counted, said once.
set -euo pipefail
FERRY=$1
. "$(dirname "$0")/testlib.sh"
chmod 755 "$work"
mkdir -p src/a src/locked
echo one > src/a/one.txt; echo two > src/two.txt; echo hidden > src/locked/x.txt
ln -s nowhere src/a/dangling
mkfifo src/a/pipe
ln -s a src/alink
chmod -R a+rX src; chmod 000 src/locked
mkdir -m 777 bucket got
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
check_err() {
  grep -q "a/dangling" err.txt || fail "$1: dangling link not named: $(cat err.txt)"
  grep -q "locked" err.txt || fail "$1: unreadable folder not named: $(cat err.txt)"
  grep -q "a/pipe: skipped: not a regular file" err.txt || fail "$1: FIFO not named: $(cat err.txt)"
}

expect_rc 4 as_nobody "$FERRY" put -R --json src/ "file://$work/bucket/"
check_err put
[ "$(cat bucket/a/one.txt)" = one ] && [ "$(cat bucket/two.txt)" = two ] || fail "put: $(find bucket)"
grep -q '"files_done":2,"files_failed":2,"files_skipped":2' out.txt ||
  fail "put json: $(cat out.txt)"
[ ! -e bucket/a/pipe ] && [ ! -e bucket/a/dangling ] || fail "put took the FIFO or the link"

# The same tree as a file:// source of ls -R and get -R.
expect_rc 4 as_nobody "$FERRY" ls -R "file://$work/src/"
check_err ls
grep -q "^two.txt" out.txt && grep -q "^a/one.txt" out.txt || fail "ls: $(cat out.txt)"
expect_rc 4 as_nobody "$FERRY" get -R --json "file://$work/src/" got/
check_err get
grep -q '"files_skipped":2' out.txt || fail "get json: $(cat out.txt)"
[ "$(cat got/a/one.txt)" = one ] && [ "$(cat got/two.txt)" = two ] || fail "get: $(find got)"

# Only skipped entries (the FIFO, the link to a folder and, as root, a
# device): each said and counted as files_skipped, exit 0.
chmod 755 src/locked; rm src/a/dangling
skipped=2
if mknod src/null c 1 3 2> /dev/null; then skipped=3; fi
expect_rc 0 "$FERRY" put -R --json src/ "file://$work/bucket2/"
grep -q "a/pipe: skipped" err.txt || fail "FIFO not said: $(cat err.txt)"
grep -q "\"files_skipped\":$skipped," out.txt || fail "put json: $(cat out.txt)"

# Named on the command line: each refused by name (exit 4), the other put.
mkfifo named_fifo
exec 3<> named_fifo  # a writer: a put that opened it would not hang
echo data | expect_rc 4 "$FERRY" put --json /dev/zero named_fifo /dev/stdin \
  /proc/self/status src/two.txt "file://$work/bucket3/"
grep -q "/dev/zero: not a regular file (character device)" err.txt &&
  grep -q "named_fifo: not a regular file (FIFO)" err.txt &&
  grep -q "/dev/stdin: not a regular file (FIFO)" err.txt &&
  grep -q "/proc/self/status: changed while being uploaded" err.txt ||
  fail "named sources not refused: $(cat err.txt)"
grep -q '"files_done":1,"files_failed":4' out.txt || fail "json: $(cat out.txt)"
[ "$(ls bucket3)" = two.txt ] || fail "put wrote: $(ls -l bucket3)"
expect_rc 4 "$FERRY" put /dev/zero "file://$work/bucket3/dz"
[ ! -e bucket3/dz ] || fail "put /dev/zero wrote $(ls -l bucket3/dz)"
expect_rc 4 "$FERRY" put --dry-run named_fifo "file://$work/bucket3/"
grep -q "named_fifo: not a regular file (FIFO)" err.txt || fail "dry run: $(cat err.txt)"

mkdir -p private lk/sub
echo TOPSECRET > private/secret; chmod 600 private/secret
echo in > lk/sub/f
ln -s "$work/private/secret" lk/innocent
ln -s sub/f lk/inlink
echo mine > lk/thesis.ferry-part; echo mine > lk/.ferry-lock
expect_rc 0 "$FERRY" put -R --json lk "file://$work/bucket4/"
grep -q "lk/innocent: skipped: a symbolic link that leads outside" err.txt ||
  fail "link out of the tree: $(cat err.txt)"
grep -q "2 files skipped, named like ferry's working files" err.txt ||
  fail "working files not said: $(cat err.txt)"
grep -q '"files_done":2,"files_failed":0,"files_skipped":3' out.txt || fail "json: $(cat out.txt)"
[ ! -e bucket4/innocent ] && [ "$(cat bucket4/inlink)" = in ] || fail "put: $(ls -la bucket4)"
expect_rc 0 "$FERRY" publish lk "file://$work/pub4"
grep -q "innocent: not published: a symbolic link that leads outside" err.txt ||
  fail "publish: $(cat err.txt)"
grep -rq TOPSECRET pub4 && fail "publish uploaded the secret"
echo ok
