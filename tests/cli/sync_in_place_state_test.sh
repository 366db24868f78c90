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

# 2. Filters that select none of a dataset's files: exit 2 naming them,
# DEST untouched (--in-place and view, --dry-run too).
before=$(cd ds && find . | sort)
expect_rc 2 "$FERRY" sync --in-place bucket ds --cache cache --exclude '*'
grep -q "exclude '\*'.*select none of the" err.txt || { cat err.txt; fail "filter message"; }
expect_rc 2 "$FERRY" sync --in-place bucket ds --cache cache --include 'typo*' --exclude '*'
grep -q "include 'typo\*' --exclude '\*'" err.txt || { cat err.txt; fail "filters named"; }
[ "$(cd ds && find . | sort)" = "$before" ] || fail "DEST changed by an empty selection"
expect_rc 2 "$FERRY" sync bucket vw --cache cache --exclude '*'
[ ! -e vw ] || fail "view made from an empty selection"
expect_rc 2 "$FERRY" sync --dry-run bucket vw --cache cache --exclude '*'
expect_rc 0 "$FERRY" sync --in-place bucket ds --cache cache --exclude '*' --include 'sub/*'

# 3. Temporaries of DEST's state files that a killed run left (kill -9
# while one was written): removed by the next run, a no-op or not; a file
# of the user's with a look-alike name kept.
plant() {
  for f in .ferry-sync.json .ferry-sync-pending .ferry-sync-files; do
    printf 'x' > "ds/.ferry-tmp-$$-0000abcd0001-$f"
  done
  printf 'mine' > ds/.ferry-tmp-$$-0000abcd0001-notes.txt
}
plant
printf '[]\n' > ds/.ferry-sync-pending
expect_rc 0 "$FERRY" sync --json --in-place bucket ds --cache cache \
  --exclude '*' --include 'sub/*'
[ "$(field unchanged)" = True ] || { cat out.txt; fail "not a no-op"; }
[ "$(cd ds && ls -A | grep -c '^.ferry-tmp-.*-.ferry-sync')" = 0 ] \
  || fail "no-op left state temporaries: $(ls -A ds)"
[ ! -e ds/.ferry-sync-pending ] || fail "no-op left a pending list"
[ -e ds/.ferry-tmp-$$-0000abcd0001-notes.txt ] || fail "a user's file removed"
plant
printf 'v3\n' > tree/readme.txt
"$PUBLISH" tree bucket > /dev/null
expect_rc 0 "$FERRY" sync --in-place bucket ds --cache cache
[ "$(cd ds && ls -A | grep -c '^.ferry-tmp-.*-.ferry-sync')" = 0 ] \
  || fail "sync left state temporaries: $(ls -A ds)"
[ -e ds/.ferry-tmp-$$-0000abcd0001-notes.txt ] || fail "a user's file removed"

# 4. One lock for a DEST whatever the mode (beside it, in its parent): with
# it held, neither a view sync nor an --in-place sync starts, and neither
# leaves anything behind.
exec 9> .m1.ferry-sync.lock
flock -n 9
expect_rc 4 "$FERRY" sync bucket m1 --cache cache
grep -q "another ferry sync into it is running" err.txt || { cat err.txt; fail "view: lock message"; }
expect_rc 4 "$FERRY" sync --in-place bucket m1 --cache cache
grep -q "another ferry sync into it is running" err.txt || { cat err.txt; fail "in-place: lock message"; }
[ -z "$(ls -A | grep '^m1$\|^\.m1\.ferry-[tv]')" ] || fail "a locked-out sync left $(ls -A)"
exec 9>&-
expect_rc 0 "$FERRY" sync --in-place bucket m1 --cache cache
expect_rc 2 "$FERRY" sync bucket m1 --cache cache
[ -d m1 ] && [ ! -L m1 ] && [ ! -e .m1.ferry-views ] || fail "in-place DEST turned"

# 7. An --in-place DEST that is a link to a folder: refused, nothing written
# into the link's target; --check takes no sync options.
mkdir target && ln -s target lnk
expect_rc 4 "$FERRY" sync --in-place bucket lnk --cache cache
[ -z "$(ls -A target)" ] || fail "wrote into a link's target: $(ls -A target)"
for opt in --in-place --delete --dry-run; do
  expect_rc 2 "$FERRY" sync --check ds $opt
  grep -q -- "--check.*$opt" err.txt || { cat err.txt; fail "--check $opt message"; }
done
expect_rc 0 "$FERRY" sync --check ds

echo "sync --in-place state CLI: all passed"
