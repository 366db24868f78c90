#!/usr/bin/env bash
# ferry hash prints exactly what xxhsum -H2 prints, and --check behaves like
# xxhsum -c (exit 3 on a changed or missing file).
set -euo pipefail
FERRY=$1 XXHSUM=$2 SAMPLES=$3
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p tree/sub tree/"with space" tree/empty
cp -r "$SAMPLES" tree/samples
printf 'x' > tree/one; : > tree/zero; head -c 3000000 /dev/urandom > tree/sub/big
printf 'a' > "tree/with space/file name"; printf 'b' > 'tree/back\slash'

# Same lines as xxhsum over the sorted walk; any thread count.
find tree -type f | LC_ALL=C sort > files.txt
xargs -d '\n' "$XXHSUM" -H2 < files.txt > expected.txt
for j in 1 2 4; do
  "$FERRY" hash -j $j tree > got.txt
  diff -u expected.txt got.txt || fail "output differs from xxhsum -H2 with -j $j"
done
# Files given one by one keep their order.
"$FERRY" hash tree/zero tree/one > got2.txt
"$XXHSUM" -H2 tree/zero tree/one > exp2.txt
diff -u exp2.txt got2.txt || fail "per-file output differs"

# Our list verifies with xxhsum -c, and xxhsum's with ours.
"$XXHSUM" -c got.txt > /dev/null || fail "xxhsum -c rejects ferry's list"
"$FERRY" hash --check expected.txt > check.txt || fail "ferry rejects xxhsum's list"
grep -q 'tree/one: OK' check.txt || fail "no OK line"
"$XXHSUM" -H2 --tag tree/one > bsd.txt
"$FERRY" hash -c bsd.txt > /dev/null || fail "BSD-style list not accepted"

# A changed file: exit 3 and FAILED; a missing one: exit 3.
printf 'y' > tree/one
set +e
"$FERRY" hash --check expected.txt > check.txt 2> err.txt; rc=$?
set -e
[ $rc -eq 3 ] || fail "changed file: exit $rc, want 3"
grep -q 'tree/one: FAILED' check.txt || fail "changed file not reported"
printf 'x' > tree/one; rm tree/zero
set +e
"$FERRY" hash --check expected.txt > check.txt 2> err.txt; rc=$?
set -e
[ $rc -eq 3 ] || fail "missing file: exit $rc, want 3"
grep -q 'tree/zero' err.txt || fail "missing file not named"

# A missing input while hashing: reported, the rest printed, exit 1.
set +e
"$FERRY" hash tree/one nosuch tree/sub > got3.txt 2> err3.txt; rc=$?
set -e
[ $rc -eq 1 ] || fail "missing input: exit $rc, want 1"
grep -q nosuch err3.txt || fail "missing input not named"
[ "$(wc -l < got3.txt)" -eq 2 ] || fail "other files not hashed"

# --json summary parses and counts.
"$FERRY" hash --json tree/sub > j.json
/usr/bin/python3 -c 'import json,sys; d=json.load(open("j.json")); assert d["summary"]["files"]==1 and d["files"][0]["path"]=="tree/sub/big", d'

# Usage errors exit 2.
set +e
"$FERRY" hash > /dev/null 2>&1; rc=$?
set -e
[ $rc -eq 2 ] || fail "no paths: exit $rc, want 2"
echo "cli hash: all checks passed"
