#!/usr/bin/env bash
# ferry sync --in-place from nginx killed with -9 at random moments of cold
# and incremental syncs (and of an unmanaged remote's, --list), each followed
# by a rerun: DEST then holds exactly the published files plus the user's
# own file, no temporary, part file, journal or pending list is left, and the
# next sync is a no-op.
set -euo pipefail
ferry=$1 publish=$2
. "${FERRY_TEST_SERVERS_ENV:?}"
. "$(dirname "$0")/../cli/testlib.sh"
root=$FERRY_TEST_HTTP_ROOT/inplacekill-$$ url=$FERRY_TEST_HTTP_URL/inplacekill-$$
raw=$FERRY_TEST_HTTP_ROOT/inplaceraw-$$ rawurl=$FERRY_TEST_HTTP_URL/inplaceraw-$$
trap 'rm -rf "$work" "$root" "$raw"' EXIT

mkdir -p tree/small
for i in $(seq 0 29); do head -c $((100000 + i)) /dev/urandom > "tree/small/f$i.bin"; done
for i in 0 1; do head -c $((12000000 + i)) /dev/urandom > "tree/shard-$i.tar"; done
"$publish" tree "$root" > /dev/null
opts=(--connections 4 --part-size 4M --cache cache)

# DEST has the tree's files, the user's mine.txt, and ferry's state only.
check_dest() {
  local t=$1 d=$2 want got
  diff -r --exclude='.ferry-sync*' --exclude=mine.txt "$t" "$d" > /dev/null \
    || fail "$d differs from $t ($3)"
  [ "$(cat "$d/mine.txt")" = mine ] || fail "the user's file is gone ($3)"
  want=$( (cd "$t" && find . -type f; echo ./mine.txt) | sort)
  got=$(cd "$d" && find . \( -type f -o -type l \) ! -name '.ferry-sync.json' \
        ! -name '.ferry-sync-files' ! -name '.ferry-sync.lock' \
        ! -name '.ferry-sync-stamps' | sort)
  [ "$want" = "$got" ] || fail "files in $d: $(comm -3 <(echo "$want") <(echo "$got")) ($3)"
  [ -z "$(find cache -name '*.ferry-part' -o -name '*.journal' -o -name '*.lock' ! -name lock)" ] \
    || fail "part files or locks left ($3): $(find cache -name '*.ferry-part' -o -name '*.journal' -o -name '*.lock')"
  [ -z "$(find "$d" -name '*.ferry-tmp' -o -name .ferry-sync-pending)" ] || fail "temporaries left in $d ($3)"
}
# kill_and_rerun TREE DEST ARGS...: a sync killed at a random moment, a rerun.
kills=0
kill_and_rerun() {
  local t=$1 d=$2; shift 2
  "$ferry" sync -q --bwlimit 20M "$@" "$d" "${opts[@]}" & local pid=$!
  sleep "0.$((RANDOM % 9 + 1))"
  kill -9 $pid 2>/dev/null && kills=$((kills + 1))
  wait $pid 2>/dev/null || true
  "$ferry" sync -q "$@" "$d" "${opts[@]}" || fail "rerun after a kill ($d)"
  check_dest "$t" "$d" "after a kill"
  "$ferry" sync --json "$@" "$d" "${opts[@]}" > out.json
  grep -q '"unchanged":true' out.json || fail "no no-op after the rerun: $(cat out.json)"
}

for i in 1 2 3; do
  rm -rf cache ds && mkdir ds && printf mine > ds/mine.txt
  kill_and_rerun tree ds --in-place "$url"
done
cp -r tree v1 && v1=$(/usr/bin/python3 -c "import json; print(json.load(open('out.json'))['manifest_id'])")
for i in 3 11 19; do head -c 90000 /dev/urandom > "tree/small/f$i.bin"; done
head -c 13000000 /dev/urandom > tree/shard-1.tar
rm tree/small/f5.bin && printf new > tree/small/new.txt
"$publish" tree "$root" > /dev/null
for i in 1 2 3; do
  "$ferry" sync -q --in-place "$url@$v1" ds "${opts[@]}"
  check_dest v1 ds "back at v1"
  kill_and_rerun tree ds --in-place "$url"
done

# Unmanaged (nginx, --list): the same.
mkdir -p "$raw" && cp -r tree/. "$raw/"
(cd tree && find . -type f | sed 's|^\./||'; echo files.txt) > "$raw/files.txt"
cp "$raw/files.txt" tree/files.txt  # the list names itself: one of the files
for i in 1 2; do
  rm -rf cache uds && mkdir uds && printf mine > uds/mine.txt
  kill_and_rerun tree uds --in-place --list "$rawurl/files.txt" "$rawurl"
done
echo "kills=$kills"
[ "$kills" -gt 0 ] || fail "no sync was killed"
