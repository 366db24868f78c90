#!/usr/bin/env bash
# One exit-code table for every command (README): numeric options refused
# with exit 2, lost stdout is exit 4, hash --check of a list without hash
# lines exits 1 as xxhsum -c does, ratios must sum to a finite number.
set -euo pipefail
FERRY=$1 SAMPLES=$2
source "$(dirname "$0")/testlib.sh"

mkdir -p data/a data/b
for f in $(ls "$SAMPLES"/dataset/cat/* | head -3); do cp "$f" data/a/; done
for f in $(ls "$SAMPLES"/dataset/coffee/* | head -3); do cp "$f" data/b/; done
expect_rc 0 "$FERRY" pack data packed --size 16 --ratios 1 --names all -j 1
shard=$(ls packed/*.tfrecord | head -1)

# B7: every numeric option takes digits only, within its range.
for bad in -512 512x-1 3000000000 0 512x x512 1e3 ' 5' 5abc; do
  expect_rc 2 "$FERRY" convert data out --size="$bad"
  grep -q -- "--size" err.txt || fail "--size $bad: message does not name the option"
  [ ! -e out ] || fail "--size $bad: wrote outputs"
done
for bad in -1 18446744073709551616 340282366920938463463374607431768211456 abc 1.5 ''; do
  expect_rc 2 "$FERRY" split data --out s --seed="$bad"
  grep -q -- "--seed" err.txt || fail "--seed '$bad' not named: $(cat err.txt)"
done
expect_rc 0 "$FERRY" split data --out s --seed 18446744073709551615 -q
for cmd in "hash data" "convert data out" "split data --out s" "pack data p" \
           "inspect $shard" "verify packed"; do
  for bad in abc 0 -1 1025 99999999999999999999; do
    # shellcheck disable=SC2086
    expect_rc 2 "$FERRY" $cmd -j "$bad"
    grep -q -- "--jobs: .*\(not a whole number\|out of range (1 to 1024)\)" err.txt \
      || fail "$cmd -j $bad: $(cat err.txt)"
  done
done
for opt in "convert data out --quality" "convert data out --max-pixels" \
           "pack data p --shard-records" "inspect $shard --records"; do
  # shellcheck disable=SC2086
  expect_rc 2 "$FERRY" $opt -5
  # shellcheck disable=SC2086
  expect_rc 2 "$FERRY" $opt 99999999999999999999
done
expect_rc 2 "$FERRY" convert data out --quality 101
expect_rc 2 "$FERRY" pack data p --shard-size 1e30GiB
expect_rc 2 "$FERRY" pack data p --shard-size nan
[ ! -e out ] && [ ! -e p ] || fail "a refused command wrote outputs"

# Item 26: ratios must sum to a finite number.
expect_rc 2 "$FERRY" split data --out s2 --ratios 1e308:1e308:1e308
grep -q infinity err.txt || fail "infinite sum: $(cat err.txt)"
expect_rc 2 "$FERRY" split data --out s2 --ratios inf:1:1

# C15: a write error on stdout is exit 4, for every command that prints.
expect_full() {
  set +e; "$@" > /dev/full 2> err.txt; local rc=$?; set -e
  [ "$rc" -eq 4 ] || fail "$* > /dev/full -> exit $rc, want 4"
  grep -q "error writing to stdout" err.txt || fail "$* > /dev/full: $(cat err.txt)"
}
"$FERRY" hash data > list.xxh
expect_full "$FERRY" hash data
expect_full "$FERRY" hash --json data
expect_full "$FERRY" hash --check list.xxh
expect_full "$FERRY" split data --out s3 --json
expect_full "$FERRY" convert data c --json --size 8
expect_full "$FERRY" pack data p2 --size 8 --json
expect_full "$FERRY" inspect "$shard"
expect_full "$FERRY" inspect packed --json
expect_full "$FERRY" verify packed --json
expect_full "$FERRY" --help
expect_full "$FERRY" --version

# Item 25: hash --check of an empty or garbage list exits 1, as xxhsum -c.
: > empty.xxh
echo garbage > garbage.xxh
expect_rc 1 "$FERRY" hash --check empty.xxh
grep -q 'no properly formatted hash lines' err.txt || fail "empty list: $(cat err.txt)"
expect_rc 1 "$FERRY" hash --check garbage.xxh
expect_rc 4 "$FERRY" hash --check nosuch.xxh
expect_rc 0 "$FERRY" hash --check list.xxh
echo "cli exit codes: all checks passed"
