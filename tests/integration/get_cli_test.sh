#!/usr/bin/env bash
# ferry get against nginx: file and folder destinations, --json, --dry-run,
# --expect (match, and mismatch: exit 3, no file), a missing key (exit 4,
# named), a bad --header (exit 2), -R of an object, a folder, a missing one.
set -euo pipefail
ferry=$1
. "${FERRY_TEST_SERVERS_ENV:?}"
. "$(dirname "$0")/../cli/testlib.sh"
root=$FERRY_TEST_HTTP_ROOT/cli-get url=$FERRY_TEST_HTTP_URL/cli-get
mkdir -p "$root"
head -c 3000000 /dev/urandom > "$root/a.bin"
printf 'hello' > "$root/b.txt"
sum=$("$ferry" hash "$root/a.bin" | cut -c1-32)

expect_rc 0 "$ferry" get --part-size 256K "$url/a.bin" out/a.bin
cmp out/a.bin "$root/a.bin" || fail "a.bin differs"
expect_rc 0 "$ferry" get --json "$url/a.bin" "$url/b.txt" dir/
cmp dir/a.bin "$root/a.bin" && cmp dir/b.txt "$root/b.txt" || fail "dir/ differs"
grep -q '"files_done":2' out.txt || fail "json: $(cat out.txt)"
[ -z "$(ls dir | grep ferry-part || true)" ] || fail "part files left: $(ls dir)"

expect_rc 0 "$ferry" get --dry-run "$url/b.txt" dry/
[ ! -e dry ] || fail "--dry-run wrote"
grep -q "dry/b.txt" out.txt || fail "dry-run: $(cat out.txt)"

expect_rc 0 "$ferry" get --expect "$sum" "$url/a.bin" good.bin
cmp good.bin "$root/a.bin" || fail "good.bin differs"
expect_rc 3 "$ferry" get --expect 0123456789abcdef0123456789abcdef "$url/a.bin" bad.bin
[ ! -e bad.bin ] && [ ! -e bad.bin.ferry-part ] || fail "mismatch left a file: $(ls)"
grep -q "expected 0123456789abcdef0123456789abcdef" err.txt || fail "$(cat err.txt)"

expect_rc 4 "$ferry" get "$url/nope.bin" nope.bin
grep -q "nope.bin" err.txt || fail "missing key not named: $(cat err.txt)"
[ ! -e nope.bin ] && [ ! -e nope.bin.ferry-part ] || fail "404 left a file"

expect_rc 2 "$ferry" get --header "no-colon" "$url/b.txt" x
# -R over plain HTTP, which cannot be listed: a URL naming an object is that
# object, fetched into DST/<its name> (as from s3:// and file://); a folder
# is a usage error naming it; a missing object fails naming it (exit 4), the
# other SRCs fetched.
expect_rc 2 "$ferry" get -R "$url/" listing/
grep -qF "NotSupported: $url/: a folder cannot be listed over plain HTTP" err.txt ||
  fail "-R folder: $(cat err.txt)"
[ ! -e listing ] || fail "-R folder wrote: $(find listing)"
expect_rc 0 "$ferry" get -R "$url/b.txt" rdir/
cmp rdir/b.txt "$root/b.txt" || fail "-R object: $(find rdir) $(cat err.txt)"
printf 'cd' > "$root/c d.txt"  # asked for as written, as without -R
expect_rc 0 "$ferry" get -R "$url/c%20d.txt" rdir/
[ "$(cat "rdir/c d.txt")" = cd ] || fail "-R escaped: $(find rdir) $(cat err.txt)"
expect_rc 0 "$ferry" get -R --dry-run "$url/b.txt" rdry/
grep -qxF "get $url/b.txt -> rdry/b.txt" out.txt || fail "-R dry-run: $(cat out.txt)"
expect_rc 4 "$ferry" get -R "$url/nope.bin" "$url/b.txt" rmiss/
grep -qF "$url/nope.bin: NotFound: no such object" err.txt ||
  fail "-R missing: $(cat err.txt)"
cmp rmiss/b.txt "$root/b.txt" || fail "-R missing: the other SRC: $(find rmiss)"
[ ! -e rmiss/nope.bin ] || fail "-R missing wrote nope.bin"
echo ok
