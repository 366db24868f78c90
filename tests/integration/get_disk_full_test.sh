#!/usr/bin/env bash
# A full disk (a small tmpfs) during `ferry get`: a clean IO error (exit 4)
# naming the object, no file under the final name, the part file and its
# journal kept; a rerun with room completes and resumes the synced parts.
set -euo pipefail
ferry=$1
. "${FERRY_TEST_SERVERS_ENV:?}"
. "$(dirname "$0")/../cli/testlib.sh"
root=$FERRY_TEST_HTTP_ROOT/full url=$FERRY_TEST_HTTP_URL/full
mkdir -p "$root" small
head -c $((6 << 20)) /dev/urandom > "$root/f.bin"
if ! mount -t tmpfs -o size=3m tmpfs small 2>/dev/null; then
  echo "skipped: cannot mount a tmpfs (needs root)"; exit 77
fi
trap 'umount "$work/small" 2>/dev/null; rm -rf "$work" "$root"' EXIT
expect_rc 4 "$ferry" get --connections 1 --part-size 512K "$url/f.bin" small/f.bin
grep -q "f.bin" err.txt && grep -qi "no space" err.txt || fail "message: $(cat err.txt)"
[ ! -e small/f.bin ] || fail "f.bin exists"
[ -e small/f.bin.ferry-part ] && [ -e small/f.bin.ferry-part.journal ] || fail "part not kept: $(ls small)"
mount -o remount,size=16m small
expect_rc 0 "$ferry" get --json --connections 1 --part-size 512K "$url/f.bin" small/f.bin
cmp small/f.bin "$root/f.bin" || fail "result differs"
grep -q '"bytes_resumed":[1-9]' out.txt || fail "nothing resumed: $(cat out.txt)"
echo ok
