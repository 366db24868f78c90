#!/usr/bin/env bash
# ferry sync on file:// remotes (published by tests/testutil/publish_tree,
# a stand-in for ferry publish): cold, no-op in one request, incremental,
# refs, --dry-run, ranks, filters, cache limit, --check, hostile manifests,
# and `ferry verify` on a synced pack output.
set -euo pipefail
FERRY=$1 PUBLISH=$2 SAMPLES=$3
source "$(dirname "$0")/testlib.sh"

# jq-less JSON field of out.txt
field() { /usr/bin/python3 -c "import json,sys; print(json.load(open('out.txt'))['$1'])"; }
# same_tree A B: equal files, ferry's own view files left out.
same_tree() {
  diff -r --exclude='.ferry-sync*' --exclude=.ferry-view.lock "$1" "$2" \
    || fail "$1 and $2 differ"
}

mkdir -p tree/sub
for i in 0 1 2 3 4 5 6 7; do head -c $((5000 + i)) /dev/urandom > "tree/sub/f$i.bin"; done
printf 'hello\n' > tree/readme.txt
v1=$("$PUBLISH" tree bucket)
mkdir nodes

# Cold.
expect_rc 0 "$FERRY" sync --json bucket nodes/ds --cache cache
[ "$(field objects_fetched)" = 9 ] || { cat out.txt; fail "cold fetch count"; }
[ "$(field manifest_id)" = "$v1" ] || fail "manifest id"
[ -L nodes/ds ] || fail "DEST is not a link"
[ "$(readlink nodes/ds)" = ".ds.ferry-views/$v1" ] || fail "link target $(readlink nodes/ds)"
same_tree tree nodes/ds

# No-op: one request, nothing moved.
expect_rc 0 "$FERRY" sync --json "file://$work/bucket" nodes/ds --cache cache
[ "$(field unchanged)" = True ] || fail "not a no-op"
[ "$(field requests)" = 1 ] || { cat out.txt; fail "no-op made more than one request"; }
expect_rc 0 "$FERRY" sync bucket nodes/ds --cache cache
grep -q "unchanged" out.txt || fail "human no-op line"

# Incremental: one file changed, one added, one deleted.
head -c 7000 /dev/urandom > tree/sub/f3.bin
printf 'new\n' > tree/new.txt
rm tree/sub/f5.bin
v2=$("$PUBLISH" tree bucket)
expect_rc 0 "$FERRY" sync --json bucket nodes/ds --cache cache
[ "$(field objects_fetched)" = 2 ] || { cat out.txt; fail "incremental fetch count"; }
[ "$(field files_cached)" = 7 ] || { cat out.txt; fail "incremental cached count"; }
[ "$(field old_views_removed)" = 1 ] || fail "old view kept"
same_tree tree nodes/ds
[ ! -e "nodes/.ds.ferry-views/$v1" ] || fail "v1 view left"

# A tag and an id as REF; --dry-run writes nothing.
cp -r tree tree_v2
printf 'v3\n' > tree/readme.txt
"$PUBLISH" tree bucket > /dev/null
"$PUBLISH" tree_v2 bucket stable > /dev/null
before=$(cd nodes && find . -printf '%p %s\n' | sort; cd ../cache && find objects manifests -printf '%p\n' | sort)
expect_rc 0 "$FERRY" sync --dry-run --json bucket nodes/ds --cache cache
[ "$(field objects_fetched)" = 1 ] || { cat out.txt; fail "dry run plan"; }
after=$(cd nodes && find . -printf '%p %s\n' | sort; cd ../cache && find objects manifests -printf '%p\n' | sort)
[ "$before" = "$after" ] || fail "--dry-run wrote something"
# A person's line says it was a dry run, unchanged or not.
expect_rc 0 "$FERRY" sync --dry-run bucket nodes/ds --cache cache
grep -q '^(dry run) nodes/ds: manifest ' out.txt || { cat out.txt; fail "dry run line"; }
expect_rc 0 "$FERRY" sync --dry-run "file://$work/tree" nodes/plain --cache cache
grep -q '^(dry run) nodes/plain: listed files, ' out.txt || { cat out.txt; fail "unmanaged dry run line"; }
expect_rc 0 "$FERRY" sync --json bucket@stable nodes/stable --cache cache
[ "$(field objects_fetched)" = 0 ] || fail "tag sync fetched what the cache had"
same_tree tree_v2 nodes/stable
expect_rc 0 "$FERRY" sync --json "bucket@$v1" nodes/old --cache cache
same_tree nodes/old nodes/old  # exists
[ "$(cat nodes/old/sub/f5.bin | wc -c)" = 5005 ] || fail "sync by id"
expect_rc 4 "$FERRY" sync bucket@nosuchtag nodes/x --cache cache
grep -q "has no ref nosuchtag" err.txt || fail "missing tag message"
expect_rc 2 "$FERRY" sync "bucket@..bad" nodes/x --cache cache

# Filters in order: the last match decides.
expect_rc 0 "$FERRY" sync bucket nodes/flt --cache cache --exclude 'sub/*' --include 'sub/f1*'
[ "$(cd nodes/flt && find . -type f ! -name '.ferry-*' | sort | tr '\n' ' ')" = "./new.txt ./readme.txt ./sub/f1.bin " ] \
  || fail "filters: $(cd nodes/flt && find . -type f | sort)"

# Ranks: shards split by bytes, everything else everywhere.
mkdir -p ranked
for i in 0 1 2 3; do head -c $((10000 * (i + 1))) /dev/urandom > "ranked/train-0000$i-of-00004.tar"; done
printf '{}' > ranked/dataset.json
"$PUBLISH" ranked rbucket > /dev/null
expect_rc 0 "$FERRY" sync rbucket nodes/r0 --cache cache --rank 0 --world-size 2
expect_rc 0 env RANK=1 WORLD_SIZE=2 "$FERRY" sync rbucket nodes/r1 --cache cache --rank auto
[ -f nodes/r0/dataset.json ] && [ -f nodes/r1/dataset.json ] || fail "metadata on every rank"
n0=$(ls nodes/r0 | grep -c tar) n1=$(ls nodes/r1 | grep -c tar)
[ "$n0" = 2 ] && [ "$n1" = 2 ] || fail "shards per rank $n0 $n1"
[ "$(ls nodes/r0 nodes/r1 | grep tar | sort -u | wc -l)" = 4 ] || fail "a shard on two ranks or none"
expect_rc 2 "$FERRY" sync rbucket nodes/rx --cache cache --rank 2 --world-size 2
expect_rc 2 "$FERRY" sync rbucket nodes/rx --cache cache --world-size 2
expect_rc 2 env -u RANK -u SLURM_PROCID -u JOB_COMPLETION_INDEX "$FERRY" sync rbucket nodes/rx --cache cache --rank auto
# --rank auto: a half-set source is an error naming what is missing, never
# skipped for the next one (RANK without WORLD_SIZE under Slurm synced
# SLURM_PROCID's share); --world-size stands in for the world size; a bad
# value names its variable, not the flag.
no_ranks=(env -u RANK -u WORLD_SIZE -u SLURM_PROCID -u SLURM_NTASKS -u JOB_COMPLETION_INDEX)
expect_rc 2 "${no_ranks[@]}" RANK=1 SLURM_PROCID=0 SLURM_NTASKS=2 \
  "$FERRY" sync --dry-run rbucket nodes/rx --cache cache --rank auto
grep -q "RANK is set but WORLD_SIZE is not" err.txt || { cat err.txt; fail "half-set RANK message"; }
expect_rc 2 "${no_ranks[@]}" WORLD_SIZE=2 SLURM_PROCID=0 SLURM_NTASKS=2 \
  "$FERRY" sync --dry-run rbucket nodes/rx --cache cache --rank auto
grep -q "WORLD_SIZE is set but RANK is not" err.txt || { cat err.txt; fail "half-set WORLD_SIZE message"; }
expect_rc 2 "${no_ranks[@]}" SLURM_PROCID=1 "$FERRY" sync --dry-run rbucket nodes/rx --cache cache --rank auto
grep -q "SLURM_PROCID is set but SLURM_NTASKS is not" err.txt || { cat err.txt; fail "half-set Slurm message"; }
expect_rc 2 "${no_ranks[@]}" JOB_COMPLETION_INDEX=1 "$FERRY" sync --dry-run rbucket nodes/rx --cache cache --rank auto
grep -q "JOB_COMPLETION_INDEX gives the rank only: pass --world-size" err.txt || { cat err.txt; fail "index message"; }
expect_rc 0 "${no_ranks[@]}" RANK=1 "$FERRY" sync rbucket nodes/ra --cache cache --rank auto --world-size 2
[ "$(ls nodes/ra)" = "$(ls nodes/r1)" ] || fail "RANK=1 --world-size 2 is not rank 1's share: $(ls nodes/ra)"
expect_rc 2 "${no_ranks[@]}" SLURM_PROCID=0 SLURM_NTASKS=0x2 "$FERRY" sync --dry-run rbucket nodes/rx --cache cache --rank auto
grep -q "SLURM_NTASKS: '0x2' is not a whole number" err.txt || { cat err.txt; fail "bad SLURM_NTASKS message"; }
expect_rc 2 "${no_ranks[@]}" RANK=2 WORLD_SIZE=2 "$FERRY" sync --dry-run rbucket nodes/rx --cache cache --rank auto
grep -q "RANK: 2 is out of range (0 to 1)" err.txt || { cat err.txt; fail "RANK out of range message"; }
# The environment's world size and --world-size must agree (a rank of a
# 2-world synced a 4-world's share: two shards went to no node).
expect_rc 2 "${no_ranks[@]}" RANK=1 WORLD_SIZE=2 "$FERRY" sync --dry-run rbucket nodes/rx --cache cache --rank auto --world-size 4
grep -q "WORLD_SIZE is 2 but --world-size is 4" err.txt || { cat err.txt; fail "contradicting world sizes"; }
expect_rc 0 "${no_ranks[@]}" RANK=1 WORLD_SIZE=2 "$FERRY" sync --dry-run rbucket nodes/rx --cache cache --rank auto --world-size 2
[ ! -e nodes/rx ] || fail "a refused --rank auto synced"

# Cache limit smaller than the view: a clear error, nothing fetched.
expect_rc 4 "$FERRY" sync rbucket nodes/small --cache small_cache --cache-limit 50K
grep -q "the view alone needs" err.txt || fail "cache limit message"
[ -z "$(find small_cache/objects -type f 2>/dev/null)" ] || fail "fetched despite the limit"
[ ! -e nodes/small ] || fail "DEST made despite the limit"

# --check: good, then a changed file named with exit 3.
expect_rc 0 "$FERRY" sync --check nodes/ds
grep -q "all good" out.txt || fail "check line"
chmod u+w nodes/ds/readme.txt && printf 'tampered\n' > nodes/ds/readme.txt
expect_rc 3 "$FERRY" sync --check nodes/ds
grep -q "readme.txt: size 9, the manifest says 6" err.txt || { cat err.txt; fail "check names the file"; }

# Hostile manifests: truncated, or not the bytes its id names -> exit 3,
# nothing written.
cp -r bucket evil
id=$(cat evil/.ferry/refs/HEAD)
head -c -8 "evil/.ferry/manifests/$id" > m && mv m "evil/.ferry/manifests/$id"
expect_rc 3 "$FERRY" sync evil nodes/evil --cache cache2
[ ! -e nodes/evil ] && [ ! -e nodes/.evil.ferry-views ] || fail "wrote for a truncated manifest"
cp "bucket/.ferry/manifests/$v1" "evil/.ferry/manifests/$id"
expect_rc 3 "$FERRY" sync evil nodes/evil --cache cache2
grep -q "manifest $id" err.txt || { cat err.txt; fail "id mismatch message"; }
[ ! -e nodes/evil ] || fail "wrote for a wrong id"

# A synced pack output verifies as the original does.
cp -r "$SAMPLES/dataset" data
"$FERRY" pack data packed --size 64 --shard-records 8 -q
"$PUBLISH" packed pbucket > /dev/null
expect_rc 0 "$FERRY" sync pbucket nodes/packed --cache cache
expect_rc 0 "$FERRY" verify nodes/packed
expect_rc 0 "$FERRY" verify nodes/packed --deep
# And against a hash list of the original: sync's own files (.ferry-sync*,
# .ferry-view.lock) are no "extra" (they were: exit 3 for an intact DEST).
(cd packed && "$FERRY" hash .) > packed.xxh128
expect_rc 0 "$FERRY" verify nodes/packed --hashes packed.xxh128

# A low descriptor limit: a soft one is raised (up to the hard one); a hard
# one below what a sync holds at once (the cache's 64 lock files, the index,
# transfers) is refused up front by name, exit 2, nothing written — not
# "Too many open files" midway (exit 4).
(ulimit -Sn 64; exec "$FERRY" sync bucket nodes/lowsoft --cache cache-low) \
  > out.txt 2> err.txt || fail "soft limit 64: $(cat err.txt)"
same_tree tree nodes/lowsoft
(ulimit -n 64; exec "$FERRY" sync bucket nodes/lowhard --cache cache-low2) \
  > out.txt 2> err.txt && fail "hard limit 64: not refused"
rc=$?
[ "$rc" = 2 ] || fail "hard limit 64: exit $rc, want 2"
grep -q "needs at least 160 open files; the limit is 64" err.txt \
  || fail "hard limit 64: $(cat err.txt)"
[ ! -e nodes/lowhard ] && [ ! -e cache-low2 ] || fail "hard limit 64: wrote"

echo "sync CLI: all passed"
