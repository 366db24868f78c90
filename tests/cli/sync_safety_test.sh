#!/usr/bin/env bash
# ferry sync's safety rules (docs/sync.md): the cache and DEST never hold each
# other; an unmanaged file:// remote never serves a file through a link that
# leads out of its folder; no password on disk, remote keys that tell S3
# endpoints apart.
set -euo pipefail
FERRY=$1 PUBLISH=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/testlib.sh"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; umount "$work/small" 2>/dev/null || true; rm -rf "$work"' EXIT
field() { /usr/bin/python3 -c "import json,sys; print(json.load(open('out.txt'))['$1'])"; }

mkdir -p tree/sub
for i in 0 1 2 3; do head -c $((3000 + i)) /dev/urandom > "tree/sub/f$i.bin"; done
"$PUBLISH" tree bucket > /dev/null

# 1. The cache inside DEST, DEST inside the cache (or its objects), the cache
# inside DEST's views folder: refused (exit 2) before anything moves.
mkdir -p cc1 && echo mine > cc1/user.txt
expect_rc 2 "$FERRY" sync bucket cc1 --cache cc1/cache
grep -q "holds the cache" err.txt || fail "message: $(cat err.txt)"
[ "$(ls -A cc1)" = user.txt ] && ! ls -a | grep -q "ferry-old" || fail "cc1 touched: $(ls -a . cc1)"
mkdir -p cc5 && echo mine > cc5/user.txt
expect_rc 2 "$FERRY" sync bucket cc5 --cache cc5/cache --in-place --delete
[ "$(ls -A cc5)" = user.txt ] || fail "cc5 touched: $(ls -A cc5)"
expect_rc 0 "$FERRY" sync bucket ok --cache cacheE
n=$(find cacheE/objects -type f | wc -l)
expect_rc 2 "$FERRY" sync bucket cacheE/objects --cache cacheE --in-place --delete
grep -q "inside the cache" err.txt || fail "message: $(cat err.txt)"
expect_rc 2 "$FERRY" sync bucket cacheE --cache cacheE/sub
[ "$(find cacheE/objects -type f | wc -l)" = "$n" ] || fail "cached objects removed"
expect_rc 2 "$FERRY" sync bucket ok --cache .ok.ferry-views/c
ln -s cacheE cachelink   # through a link: where it is on disk counts
expect_rc 2 "$FERRY" sync bucket cachelink/x --cache cacheE
expect_rc 0 "$FERRY" sync --check ok

# 2. Links in an unmanaged file:// remote: one that leads outside the folder
# is never followed (sync, get, ls, put); one inside serves its target's bytes.
mkdir -p um2/d outdir
echo a > um2/a
echo TOPSECRET > outside.txt
echo TOPSECRET2 > outdir/x
ln -s "$work/outside.txt" um2/secret      # a file outside, absolute
ln -s ../../outside.txt um2/d/rel         # a file outside, relative
ln -s "$work/outdir" um2/dirout           # a folder outside
ln -s ../a um2/d/in                       # a file inside
expect_rc 0 "$FERRY" sync --json "file://$work/um2" ud2 --cache c2
[ "$(cd ud2 && find . -type f ! -name '.ferry-*' | LC_ALL=C sort | tr '\n' ' ')" = "./a ./d/in " ] \
  || fail "files synced: $(cd ud2 && find . -type f)"
[ "$(cat ud2/d/in)" = a ] || fail "a link inside serves its target"
! grep -rq TOPSECRET ud2/ .ud2.ferry-views c2 || fail "a file outside the remote was copied"
expect_rc 4 "$FERRY" get "file://$work/um2/secret" got.txt
[ ! -e got.txt ] || fail "get followed a link out"
grep -q "outside" err.txt || fail "get message: $(cat err.txt)"
set +e; "$FERRY" get -R "file://$work/um2/" gotdir > out.txt 2> err.txt; set -e
! grep -rq TOPSECRET gotdir || fail "get -R followed a link out"
"$FERRY" ls -R "file://$work/um2/" > out.txt 2> err.txt || true
! grep -q "^.*secret *$" out.txt || fail "ls -R lists a link out: $(cat out.txt)"
mkdir -p putsrc/dirout/sub && echo new > putsrc/dirout/new.txt && echo new > putsrc/dirout/sub/new.txt
set +e; "$FERRY" put -R putsrc/ "file://$work/um2/" > out.txt 2> err.txt; rc=$?; set -e
[ "$rc" != 0 ] || fail "put -R through a link out of the folder: exit 0"
[ ! -e outdir/new.txt ] || fail "put wrote through a link out of the folder"
[ ! -e outdir/sub ] || fail "put made folders through a link out of the folder"

# 3. No password on disk; the remote key ignores userinfo and names the S3
# endpoint (two servers with one bucket name are two remotes).
export AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=y AWS_REGION=us-east-1
export AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent
unset AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_SESSION_TOKEN || true
printf '{"ds/a.txt": "alpha", "ds/b.txt": "beta"}' > s3.json
for s in A B; do
  /usr/bin/python3 "$here/../integration/fake_s3.py" s3.json "s3$s.port" &
  pids+=($!)
done
for s in A B; do
  for _ in $(seq 100); do [ -s "s3$s.port" ] && break; sleep 0.1; done
done
epA=http://127.0.0.1:$(head -1 s3A.port) epB=http://127.0.0.1:$(head -1 s3B.port)
printf 'a.txt\nb.txt\n' > names.txt
rk() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]+'/.ferry-sync.json'))['remote_key'])" "$1"; }
expect_rc 0 "$FERRY" sync --json --list names.txt "${epA/http:\/\//http://alice:s3cretPW@}/bkt/ds" h1 --cache c3
[ "$(field objects_fetched)" = 2 ] || fail "cold http: $(cat out.txt)"
! grep -rq s3cretPW h1/ .h1.ferry-views c3 || fail "the password is stored on disk"
grep -q "\"remote\":\"$epA/bkt/ds\"" h1/.ferry-sync.json || fail "remote: $(cat h1/.ferry-sync.json)"
expect_rc 0 "$FERRY" sync --json --list names.txt "${epA/http:\/\//http://alice:newPW@}/bkt/ds" h2 --cache c3
[ "$(field objects_fetched)" = 0 ] || fail "a new password fetched again: $(cat out.txt)"
[ "$(rk h1)" = "$(rk h2)" ] || fail "userinfo changes the remote key"
expect_rc 0 "$FERRY" sync --json --endpoint-url "$epA" s3://bkt/ds s1 --cache c3
[ "$(field objects_fetched)" = 2 ] || fail "cold s3 A: $(cat out.txt)"
expect_rc 0 "$FERRY" sync --json --endpoint-url "$epB" s3://bkt/ds s2 --cache c3
[ "$(field objects_fetched)" = 2 ] || fail "endpoint B reused endpoint A's objects: $(cat out.txt)"
[ "$(rk s1)" != "$(rk s2)" ] || fail "one remote key for two endpoints"
expect_rc 0 "$FERRY" sync --json --endpoint-url "$epA/" s3://bkt/ds/ s3 --cache c3
[ "$(field objects_fetched)" = 0 ] && [ "$(rk s1)" = "$(rk s3)" ] || fail "same endpoint, other spelling"

echo "sync safety: all passed"
