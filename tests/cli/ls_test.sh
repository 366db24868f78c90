#!/usr/bin/env bash
# ferry ls on the file backend: one level and recursive, -l, --json, keys
# with odd bytes, a URL naming one file, ETags with odd bytes (-l, a fake
# S3), 10,000+ keys streamed, exit codes (2 for a bad URL, 4 naming the path
# when the remote fails or the URL names a FIFO, a dangling link or nothing;
# an empty folder lists empty). S3 and HTTP: tests/integration/ls_s3_test.sh.
set -euo pipefail
FERRY=$1
source "$(dirname "$0")/testlib.sh"

mkdir -p b/dir/sub b/dir2
printf 'abc' > b/a.txt
printf '12345' > b/dir/x.bin
printf '' > b/dir/sub/empty
printf 'z' > b/dir2/y
printf 'q' > "b/sp ace+plus"
printf 'n' > "$(printf 'b/line\nbreak')"
touch b/.ferry-tmp-999999-0123456789ab-junk   # a dead writer's temp: hidden

expect_rc 0 "$FERRY" ls b
printf 'a.txt\ndir/\ndir2/\nline\\x0abreak\nsp ace+plus\n' > want.txt
diff want.txt out.txt || fail "one-level listing"

expect_rc 0 "$FERRY" ls -R "file://$work/b/"
printf 'a.txt\ndir/sub/empty\ndir/x.bin\ndir2/y\nline\\x0abreak\nsp ace+plus\n' > want.txt
diff want.txt out.txt || fail "recursive listing"

expect_rc 0 "$FERRY" ls -R b/dir/
printf 'sub/empty\nx.bin\n' > want.txt
diff want.txt out.txt || fail "listing below a folder"

expect_rc 0 "$FERRY" ls -l -R b
grep -Eq '^ +5  [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z  "[0-9a-f-]+" +dir/x\.bin$' out.txt \
  || { cat out.txt; fail "-l line"; }

expect_rc 0 "$FERRY" ls --json -R b
/usr/bin/python3 - out.txt <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keys = [e["key"] for e in d["entries"]]
assert keys == ["a.txt", "dir/sub/empty", "dir/x.bin", "dir2/y", "line\nbreak",
                "sp ace+plus"], keys
assert d["objects"] == 6 and d["bytes"] == 3 + 0 + 5 + 1 + 1 + 1, d
assert all(e["etag"] for e in d["entries"]), d
PY

# A URL naming one file lists that file.
expect_rc 0 "$FERRY" ls -l b/dir/x.bin
grep -q '  x\.bin$' out.txt || { cat out.txt; fail "one file"; }

# Bad URLs: usage errors naming the URL.
expect_rc 2 "$FERRY" ls "ftp://host/x"
grep -q "ftp://host/x" err.txt || fail "bad scheme not named"
expect_rc 2 "$FERRY" ls "file://otherhost/x"
expect_rc 2 "$FERRY" ls "s3://"
expect_rc 2 "$FERRY" ls b --part-size 12Q
# 2^64 bytes or more: a usage error, not a silent "unlimited".
expect_rc 2 "$FERRY" ls b --bwlimit 99999999T
expect_rc 2 "$FERRY" ls b --bwlimit 18014398509481985K

# A remote that fails: IO error (4) naming the path.
expect_rc 4 "$FERRY" ls "b/a.txt/below/"
grep -q "a.txt/below" err.txt || { cat err.txt; fail "failure does not name the path"; }

# A URL naming a FIFO or a dangling link: an error naming it (exit 4, as a
# dangling link inside a listed folder), never a silent empty listing; the
# FIFO is never opened (timeout: a read would block).
mkfifo pipe
ln -s nowhere dangling
for url in pipe "file://$work/pipe" dangling "file://$work/dangling"; do
  expect_rc 4 timeout 20 "$FERRY" ls "$url"
  [ ! -s out.txt ] || fail "$url: listed $(cat out.txt)"
  grep -q "^ferry: $url: .*\(FIFO\|dangling link\)" err.txt \
    || { cat err.txt; fail "$url not named as a FIFO or dangling link"; }
done
expect_rc 4 timeout 20 "$FERRY" ls --json pipe
/usr/bin/python3 - out.txt <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["entries"] == [] and d["failures"][0]["key"] == "pipe", d
assert "FIFO" in d["failures"][0]["error"], d
PY
# Nothing at the URL: an error naming it (exit 4, as `ferry get` of a missing
# key; `aws s3 ls` exits 1, rclone 3), with and without -R, --json too. An
# empty folder is there: an empty listing.
expect_ls_missing "$FERRY" missing missing/ "file://$work/missing" b/dir/nothing
expect_rc 4 "$FERRY" ls --json missing
/usr/bin/python3 - out.txt <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["entries"] == [] and "no such object or prefix" in d["error"], d
PY
mkdir -p b/void
for url in b/void b/void/ "file://$work/b/void"; do
  for r in "" -R; do
    expect_rc 0 "$FERRY" ls $r "$url"
    [ ! -s out.txt ] && [ ! -s err.txt ] || fail "$url $r: empty folder"
  done
done
rmdir b/void

# A server's ETag with a line break, an escape sequence or a right-to-left
# override in it: -l shows it escaped as names are, on one line; --json keeps
# its bytes. tests/integration/fake_s3.py sends it as every object's ETag, in
# a listing (XML: no ESC there) or a HEAD (one object; no line break there).
fakes=()
trap 'kill "${fakes[@]}" 2>/dev/null; rm -rf "$work"' EXIT
printf '{"k.bin": "abc"}' > fake.json
rlo=$(printf '\u202e')
fake_ls() {  # ETAG ARGS...: ferry ls ARGS against a fake S3 sending ETAG
  rm -f fake.port
  /usr/bin/python3 "$(dirname "$0")/../integration/fake_s3.py" fake.json \
    fake.port "etag=$1" &
  fakes+=($!)
  for _ in $(seq 300); do [ -s fake.port ] && break; sleep 0.1; done
  [ -s fake.port ] || fail "fake S3 did not start"
  local etag=$1; shift
  AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=y AWS_REGION=us-east-1 \
    AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent \
    "$FERRY" ls --endpoint-url "http://127.0.0.1:$(cat fake.port)" "$@"
}
expect_rc 0 fake_ls "$(printf '"e1\nfake%s"' "$rlo")" -l s3://b/
printf '%14s  %-20s  %-34s  k.bin\n' 3 2026-01-01T00:00:00Z \
  '"e1\x0afake\xe2\x80\xae"' | diff - out.txt || fail "-l: listed ETag not escaped"
expect_rc 0 fake_ls "$(printf '"e1\nfake%s"' "$rlo")" -l --json s3://b/
/usr/bin/python3 - out.txt <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["entries"][0]["etag"] == '"e1\nfake\u202e"', d
PY
# (The HEAD's header is Latin-1: U+0085 goes as the byte 0x85, no UTF-8; it
# has no Last-Modified.)
expect_rc 0 fake_ls "$(printf '"e2\033[2J\u0085"')" -l s3://b/k.bin
printf '%14s  %-20s  %-34s  k.bin\n' 3 - \
  '"e2\x1b[2J\x85"' | diff - out.txt || fail "-l: HEAD's ETag not escaped"
kill "${fakes[@]}"
trap 'rm -rf "$work"' EXIT

# 10,000+ keys stream out in key order (in memory when /dev/shm is there:
# creating 10,500 files on a busy disk takes long).
many=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
trap 'rm -rf "$work" "$many"' EXIT
/usr/bin/python3 -c '
import sys
for i in range(10500): open(sys.argv[1] + "/k%05d" % i, "w").close()' "$many"
expect_rc 0 "$FERRY" ls -R "$many"
[ "$(wc -l < out.txt)" -eq 10500 ] || fail "10500 keys"
seq -f 'k%05g' 0 10499 | diff - out.txt > /dev/null || fail "order of 10500 keys"
echo "ls OK"
