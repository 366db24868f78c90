#!/usr/bin/env bash
# ferry ls against S3 (s3rver behind the signature-checking proxy): listing,
# -v without secrets, and the failures a user meets: wrong secret (exit 4,
# "credentials", the secret never printed), an unknown bucket (exit 4 naming
# it), unsigned requests to a private bucket (exit 4), a prefix with nothing
# below it (exit 4 naming it).
set -euo pipefail
FERRY=$1
source "$(dirname "$0")/s3_cli_env.sh"
p="ls-cli-$$"
# Objects go straight to s3rver (no signature needed there).
for k in a.txt "dir/b c.bin" dir/sub/d; do
  printf '%s' "$k" | curl -sf -X PUT --data-binary @- \
    "$FERRY_TEST_S3RVER_URL/$FERRY_TEST_S3_BUCKET/$p/${k// /%20}" > /dev/null
done
b="s3://$FERRY_TEST_S3_BUCKET/$p"

expect_rc 0 "$FERRY" ls "$b/"
printf 'a.txt\ndir/\n' | diff - out.txt || fail "one level"
expect_rc 0 "$FERRY" ls -R "$b"
printf 'a.txt\ndir/b c.bin\ndir/sub/d\n' | diff - out.txt || fail "recursive"
expect_rc 0 "$FERRY" ls -l "$b/dir/b c.bin"
grep -Eq '^ +11  .*Z  "[0-9a-f]{32}" +b c\.bin$' out.txt || { cat out.txt; fail "one object, -l"; }

# A key prefix with nothing below it is no folder: an error naming the URL
# (exit 4; `aws s3 ls` exits 1), one level and -R, as a key and as a folder.
expect_ls_missing "$FERRY" "$b/nothing" "$b/nothing/" "$b/dir/sub/nothing"

# A folder the console made (an empty "marker/" object) is there with
# nothing in it: an empty listing, exit 0, with or without the slash, one
# level and -R; so is one below a listed folder.
for k in marker/ m2/sub/; do
  curl -sf -X PUT --data-binary '' "$FERRY_TEST_S3RVER_URL/$FERRY_TEST_S3_BUCKET/$p/$k" > /dev/null
done
for url in "$b/marker" "$b/marker/" "$b/m2/sub/"; do
  for r in "" -R; do
    expect_rc 0 "$FERRY" ls $r "$url"
  done
done
expect_rc 0 "$FERRY" ls "$b/m2/"
printf 'sub/\n' | diff - out.txt || fail "the marker's folder is listed"

# -v: one line per request, no credentials in it.
expect_rc 0 "$FERRY" ls -R -v "$b"
grep -q "GET $FERRY_TEST_S3_URL/$FERRY_TEST_S3_BUCKET?.*list-type=2" err.txt || { cat err.txt; fail "-v request line"; }
grep -q -e "$AWS_SECRET_ACCESS_KEY\b" -e Authorization -e Signature= err.txt && fail "-v shows a secret"

# Wrong secret: exit 4, says credentials, never shows the secret.
AWS_SECRET_ACCESS_KEY=wrong-secret-Qx7Yz9 expect_rc 4 "$FERRY" ls "$b/"
grep -q "credentials" err.txt || { cat err.txt; fail "no credentials hint"; }
grep -q "wrong-secret-Qx7Yz9" err.txt out.txt && fail "the secret was printed"

# Unknown bucket: exit 4 naming it.
expect_rc 4 "$FERRY" ls "s3://no-such-bucket-ferry-cli/x/"
grep -q "no-such-bucket-ferry-cli" err.txt || { cat err.txt; fail "bucket not named"; }

# Unsigned to a private bucket: exit 4 with the hint.
expect_rc 4 "$FERRY" ls --no-sign-request "$b/"
grep -q -- "--no-sign-request" err.txt || { cat err.txt; fail "unsigned hint"; }
echo "ls s3 OK"
