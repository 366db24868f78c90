#!/usr/bin/env bash
# ferry get resuming a journalled download (tests/integration/fake_s3.py):
# --no-fsync (no sync at all, a resume still works); an object whose size
# changed under the same ETag restarts cleanly; a server that ignores Range
# on the rerun is streamed from 0, never mixed with the part file; and the
# --json byte counts add up when bytes are discarded.
set -euo pipefail
# strace runs ferry below; LeakSanitizer cannot run under ptrace (CI's ASan build).
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
ferry=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/testlib.sh"
. "$here/fake_s3lib.sh"
size=$(stat -c %s big.txt)
# json FIELD: its number in out.txt (--json).
json() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" out.txt; }
# partial NAME [MODES]: a download of big that stops after parts 0 and 1,
# journalled.
partial() {
  fake "$1" "fail_from=2097152${2:+,$2}"
  expect_rc 4 "$ferry" get --retries 0 --part-size 1M "$url/big" "$1"
  [ -e "$1.ferry-part.journal" ] || fail "$1: no journal: $(ls)"
}
# done_ok FILE: no part file or journal left.
done_ok() {
  [ ! -e "$1.ferry-part" ] && [ ! -e "$1.ferry-part.journal" ] ||
    fail "$1: left: $(ls)"
}

# 1b. --no-fsync: not one sync call (http and file://, one part and many),
# and a journalled download still resumes.
syncs() {  # the sync calls of a command
  strace -f -qq -e trace=fsync,fdatasync,syncfs,sync,sync_file_range \
    -o trace.txt "$@" > out.txt 2> err.txt || { cat err.txt; fail "$*"; }
  grep -c -E '^[0-9]+ +(fsync|fdatasync|syncfs|sync|sync_file_range)\(' \
    trace.txt || true
}
fake plain ""
n=$(syncs "$ferry" get --part-size 1M "$url/big" "$url/small" synced/)
[ "$n" -gt 0 ] || fail "strace saw no sync call without --no-fsync"
for src in "$url" "file://$PWD/plain-src"; do
  mkdir -p plain-src && cp big.txt plain-src/big && echo hello > plain-src/small
  n=$(syncs "$ferry" get --no-fsync --part-size 1M "$src/big" "$src/small" nosync/)
  [ "$n" = 0 ] || fail "$src: --no-fsync made $n sync calls: $(cat trace.txt)"
  cmp nosync/big big.txt || fail "$src: --no-fsync download differs"
  rm -rf nosync
done
# The body is written in batches of small pieces or piece by piece when
# libcurl hands over 64 KiB or more, never a pwrite per 16 KiB piece:
# 3 MiB take at most 48 pwrites (were about 200 before batching).
strace -f -qq -e trace=pwrite64 -o writes.txt "$ferry" get --no-fsync \
  --part-size 1M "$url/big" w > out.txt 2> err.txt || fail "$(cat err.txt)"
cmp w big.txt || fail "batched writes: differs"
n=$(grep -c pwrite64 writes.txt) || true
[ "$n" -le 52 ] || fail "$n pwrites for 3 MiB"
partial nf
fake nf2 ""
expect_rc 0 "$ferry" get --no-fsync --json --part-size 1M "$url/big" nf
cmp nf big.txt || fail "--no-fsync resume differs"
# (Part 1 is journalled unless the failure came before its sync.)
[ "$(json bytes_resumed)" -ge 1048576 ] &&
  [ $(( $(json bytes) + $(json bytes_resumed) )) = "$size" ] ||
  fail "not resumed: $(cat out.txt)"
done_ok nf

# 3. The same ETag, another size: Content-Range's total says the object
# changed; it is fetched again from 0, never mixed with the part file.
partial grow 'etag="same"'
head -c 3145728 /dev/urandom | base64 -w0 > grown.txt && printf xyz >> grown.txt
fake grow2 'etag="same"' grown.txt
expect_rc 0 "$ferry" get --json --part-size 1M "$url/big" grow
cmp grow grown.txt || fail "grown object mixed with the old one"
[ "$(json changed)" -ge 1 ] || fail "no restart: $(cat out.txt)"
[ "$(json bytes_resumed)" = 0 ] && [ "$(json bytes)" = 4194307 ] ||
  fail "grown: counts $(cat out.txt)"
done_ok grow

# 4. A journalled download of an object that changed since (another ETag):
# the journal's bytes are discarded, not reported as resumed.
partial chg
/usr/bin/python3 -c 'import sys; d = open("big.txt", "rb").read()
open("changed.txt", "wb").write(d[::-1])'
fake chg2 "" changed.txt
expect_rc 0 "$ferry" get --json --part-size 1M "$url/big" chg
cmp chg changed.txt || fail "changed object differs"
[ "$(json bytes_resumed)" = 0 ] && [ "$(json bytes)" = "$size" ] ||
  fail "changed: counts $(cat out.txt)"
done_ok chg
# ... and one that changes during the run (its 3rd GET on): what was
# fetched before is counted as discarded; the counts add up.
fake mid change_after=3
expect_rc 0 "$ferry" get --json --connections 1 --part-size 1M "$url/big" mid
cmp mid changed.txt || fail "object changed mid-run: result differs"
[ "$(json bytes_discarded)" -gt 0 ] ||
  fail "nothing discarded: $(cat out.txt)"
[ $(( $(json bytes) - $(json bytes_discarded) + $(json bytes_resumed) )) = "$size" ] ||
  fail "counts do not add up: $(cat out.txt)"

# 5. The rerun's server ignores Range (200 + the whole object to a part):
# the journal is discarded and the object taken as one stream from 0.
partial ir
fake ir2 ignore_range
expect_rc 0 "$ferry" get --json --retries 2 --part-size 1M "$url/big" ir
cmp ir big.txt || fail "Range ignored on resume: result differs"
[ "$(json range_ignored)" = 1 ] && [ "$(json bytes_resumed)" = 0 ] &&
  [ "$(json bytes)" = "$size" ] || fail "range ignored: $(cat out.txt)"
done_ok ir
echo ok
