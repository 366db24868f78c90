#!/usr/bin/env bash
# ferry gc against S3 when it does not go alone: a server that becomes
# unavailable in the middle (the fault proxy answers 503 from the 4th DELETE
# on: gc exits 4, says what it deleted before and names the key that
# failed; a rerun finishes), two gc runs at once (each deletion counted by
# one of them: the signature proxy enforces If-Match on DELETE as S3 does),
# a "folder" at refs/HEAD/ without a HEAD object (no HEAD: gc deletes
# nothing), and a publish that uploads an old object again while gc holds
# a listing made before (gc keeps it: HEAD references it).
set -euo pipefail
FERRY=$1
source "$(dirname "$0")/s3_cli_env.sh"
export FERRY_CACHE=$work/cache
json() { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[2])); print(eval(sys.argv[1]))" "$1" "${2:-out.txt}"; }
control=$FERRY_TEST_FAULT_S3_CONTROL
rule() { curl -sf -X POST -d "$1" "$control/rule" > /dev/null; }
reset() { curl -sf -X POST "$control/__reset" > /dev/null; }
trap 'reset || true; rm -rf "$work"' EXIT
reset
# publish N PREFIX: two versions of N files each, all files changed: the
# first version's manifest and N objects are gc's with --keep 1.
publish() {
  local i v
  mkdir -p "src-$2"
  for v in 1 2; do
    for i in $(seq "$1"); do echo "v$v $i" > "src-$2/f$i"; done
    sleep 0.3
    expect_rc 0 "$FERRY" publish "src-$2" "s3://$FERRY_TEST_S3_BUCKET/$2" -q --no-packs
  done
}

# 1. 503 from the 4th DELETE on (every one after, retries too): v1's
# manifest and two objects went; gc says so, names the key, exits 4.
r="s3://$FERRY_TEST_S3_BUCKET/gc-fault-$$"
publish 6 "gc-fault-$$"
rule '{"action":"status","status":503,"method":"DELETE","path":"/gc-fault-'$$'/","nth":4,"times":0}'
fault=(--endpoint-url "$FERRY_TEST_FAULT_S3_URL" --retries 1)
expect_rc 4 "$FERRY" gc "$r" "${fault[@]}" --keep 1 --grace 0 --json
[ "$(json 'd["manifests_deleted"]')" = 1 ] && [ "$(json 'd["objects_deleted"]')" = 2 ] \
  && [ "$(json 'd["bytes_deleted"]')" = 10 ] || fail "counts so far: $(cat out.txt)"
json 'd["error"]' | grep -q "^Unavailable: $r/.ferry/objects/../[0-9a-f]*: HTTP 503" \
  || fail "the error in --json: $(cat out.txt)"
grep -q "^ferry: Unavailable: $r/.ferry/objects/../[0-9a-f]*: HTTP 503" err.txt \
  || fail "the error on stderr: $(cat err.txt)"
key=$(json 'd["error"]' | sed 's/^Unavailable: [^ ]*\(\.ferry\/objects\/[^:]*\):.*/\1/')
expect_rc 0 "$FERRY" ls "$r/$key"   # not deleted, and not counted
expect_rc 4 "$FERRY" gc "$r" "${fault[@]}" --keep 1 --grace 0
grep -q "^$r: stopped by an error: kept 1 versions .*; deleted 0 objects (0 bytes) and 0 manifests" out.txt \
  || fail "the text summary: $(cat out.txt)"
reset
expect_rc 0 "$FERRY" gc "$r" "${fault[@]}" --keep 1 --grace 0 --json
[ "$(json 'd["objects_deleted"]')" = 4 ] && [ "$(json 'd["already_gone"]')" = 0 ] \
  || fail "the rerun: $(cat out.txt)"

# 2. Two gc runs at once: together they deleted v1's 300 objects once.
r="s3://$FERRY_TEST_S3_BUCKET/gc-twice-$$"
publish 300 "gc-twice-$$"
"$FERRY" gc "$r" --keep 1 --grace 0 --json > a.json 2> a.err &
apid=$!
"$FERRY" gc "$r" --keep 1 --grace 0 --json > b.json 2> b.err || fail "b: $(cat b.err)"
wait $apid || fail "a: $(cat a.err)"
sum() { echo $(( $(json "d[\"$1\"]" a.json) + $(json "d[\"$1\"]" b.json) )); }
[ "$(sum objects_deleted)" = 300 ] && [ "$(sum manifests_deleted)" = 1 ] \
  && [ "$(sum bytes_deleted)" = $(( 9 * 5 + 90 * 6 + 201 * 7 )) ] \
  || fail "two runs: $(cat a.json b.json)"
for f in a.json b.json; do
  [ $(( $(json 'd["objects_deleted"]+d["already_gone"]' $f) )) -le 301 ] \
    || fail "$f: $(cat $f)"
done
expect_rc 0 "$FERRY" ls -R "$r/.ferry/objects/"
[ "$(wc -l < out.txt)" = 300 ] || fail "objects left: $(wc -l < out.txt)"

# 3. refs/HEAD/x (another tool's) and no HEAD object: read as no HEAD.
r="s3://$FERRY_TEST_S3_BUCKET/gc-headdir-$$"
publish 2 "gc-headdir-$$"
expect_rc 0 "$FERRY" publish "src-gc-headdir-$$" "$r" -q --tag t   # tags v2
curl -sf -X DELETE "$FERRY_TEST_S3RVER_URL/$FERRY_TEST_S3_BUCKET/gc-headdir-$$/.ferry/refs/HEAD" > /dev/null
echo x > x
expect_rc 0 "$FERRY" put x "$r/.ferry/refs/HEAD/x" -q
expect_rc 0 "$FERRY" ls -R "$r/"
before=$(cat out.txt)
expect_rc 4 "$FERRY" gc "$r" --keep 1 --grace 0
grep -q "has tags but no readable .ferry/refs/HEAD (.*no such key.*): nothing deleted" err.txt \
  || fail "gc with a HEAD/ folder: $(cat err.txt)"
expect_rc 0 "$FERRY" ls -R "$r/"
[ "$(cat out.txt)" = "$before" ] || fail "gc deleted with a HEAD/ folder"
expect_rc 4 "$FERRY" log "$r"
grep -q "$r/.ferry/refs/HEAD: no such key" err.txt || fail "log: $(cat err.txt)"
expect_rc 4 "$FERRY" sync "$r" dst
grep -q "no .ferry/refs/HEAD" err.txt || fail "sync: $(cat err.txt)"

# 4. A publish during gc's listing of the objects: it reuses an object no
# version references and that is 3 days old, so it uploads it again (new
# mtime); gc, holding the listing made before, must not delete it (the
# fault proxy runs the publish before the listing's last byte).
# Loose objects (--no-packs): publish never reuses an unreferenced pack, it
# packs such a file anew (a young pack gc cannot take).
p=gc-race-$$
r="s3://$FERRY_TEST_S3_BUCKET/$p"
mkdir -p "src-$p"
printf old > "src-$p/a"; printf same > "src-$p/b"; sleep 0.3
expect_rc 0 "$FERRY" publish "src-$p" "$r" -q --no-packs
printf new > "src-$p/a"; sleep 0.3
expect_rc 0 "$FERRY" publish "src-$p" "$r" -q --no-packs
find "$FERRY_TEST_S3_ROOT/$FERRY_TEST_S3_BUCKET/$p/.ferry/objects" \
  "$FERRY_TEST_S3_ROOT/$FERRY_TEST_S3_BUCKET/$p/.ferry/manifests" \
  -name '*._S3rver_object' -exec touch -d '3 days ago' {} +
{
  export -p | grep -E ' (AWS_[A-Z_]*|FERRY_CACHE)='
  echo "cd '$work' && printf old > 'src-$p/a' && sleep 0.3 &&"
  echo "'$FERRY' publish 'src-$p' '$r' --no-packs --json > republish.json 2> republish.err"
} > republish.sh
rule '{"action":"mutate","method":"GET","path":"prefix='$p'%2F.ferry%2Fobjects%2F","command":"bash '$work'/republish.sh"}'
expect_rc 0 "$FERRY" gc "$r" --endpoint-url "$FERRY_TEST_FAULT_S3_URL" --keep 1 --json
reset
[ "$(json 'd["objects_uploaded"]' republish.json)" = 1 ] \
  || fail "the publish during gc: $(cat republish.json republish.err)"
[ "$(json 'd["objects_deleted"]')" = 0 ] && [ "$(json 'd["young_kept"]')" = 1 ] \
  || fail "gc during the publish: $(cat out.txt)"
expect_rc 0 "$FERRY" sync "$r" dst-race
[ "$(cat dst-race/a)" = old ] || fail "synced a: $(cat dst-race/a)"
echo ok
