#!/usr/bin/env bash
# ferry sync --in-place against a hostile or damaged DEST: state files whose
# paths lead outside DEST, placed files changed or reached through a link,
# filters that select nothing, temporaries of a killed run, a view run and
# an --in-place run on one DEST, option misuse with --check.
set -euo pipefail
FERRY=$1 PUBLISH=$2
source "$(dirname "$0")/testlib.sh"

field() { /usr/bin/python3 -c "import json,sys; print(json.load(open('out.txt'))['$1'])"; }
# add_entry LIST PATH: a record for PATH (any hash) appended to LIST.
add_entry() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))
l.append([sys.argv[2], 2, "00" * 16, 420, ""])
open(sys.argv[1], "w").write(json.dumps(l))
PY
}

mkdir -p tree/sub
for i in 0 1 2 3 4; do head -c $((3000 + i)) /dev/urandom > "tree/sub/f$i.bin"; done
printf 'hello\n' > tree/readme.txt
"$PUBLISH" tree bucket > /dev/null
expect_rc 0 "$FERRY" sync --in-place bucket ds --cache cache

# 1. A tampered .ferry-sync-files (or pending list) naming a file outside
# DEST: ignored with a warning, nothing outside DEST removed.
mkdir victim && printf 'precious\n' > victim/precious
for list in .ferry-sync-files .ferry-sync-pending; do
  [ -e ds/$list ] || printf '[]\n' > ds/$list
  add_entry ds/$list ../victim/precious
  add_entry ds/$list "$work/victim/precious"
  printf 'v%s\n' $list > tree/readme.txt
  "$PUBLISH" tree bucket > /dev/null
  expect_rc 0 "$FERRY" sync --in-place bucket ds --cache cache
  [ -e victim/precious ] || fail "$list: a file outside DEST was removed"
  grep -q "warning: .*$list.*path '../victim/precious'" err.txt \
    || { cat err.txt; fail "$list: no warning"; }
done

# A placed file that the user changed, then dropped by the version: kept,
# with a warning; an untouched one goes.
printf 'edited\n' >> ds/sub/f0.bin
rm tree/sub/f0.bin tree/sub/f1.bin
"$PUBLISH" tree bucket > /dev/null
expect_rc 0 "$FERRY" sync --json --in-place bucket ds --cache cache
[ -e ds/sub/f0.bin ] || fail "a changed placed file was removed"
[ ! -e ds/sub/f1.bin ] || fail "an unchanged placed file was kept"
[ "$(field files_removed)" = 1 ] || { cat out.txt; fail "removed count"; }
grep -q "warning: .*ds/sub/f0.bin: changed since ferry placed it: kept" err.txt \
  || { cat err.txt; fail "no warning for the changed file"; }
rm ds/sub/f0.bin

# A folder of placed files (all dropped by the version) turned into a link
# to another folder holding the same bytes: nothing removed through it.
mkdir -p tree/gone && head -c 3000 /dev/urandom > tree/gone/g.bin
"$PUBLISH" tree bucket > /dev/null
expect_rc 0 "$FERRY" sync --in-place bucket ds --cache cache
mkdir elsewhere && cp ds/gone/g.bin elsewhere/g.bin
rm -r ds/gone && ln -s ../elsewhere ds/gone
rm -r tree/gone
"$PUBLISH" tree bucket > /dev/null
expect_rc 0 "$FERRY" sync --in-place bucket ds --cache cache
[ -e elsewhere/g.bin ] || fail "removed through a symbolic link"

echo "sync --in-place state CLI: all passed"
