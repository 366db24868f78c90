#!/usr/bin/env bash
# deploy/slurm's scripts outside Slurm (srun a stub that runs its command):
# a worker whose inputs partly fail (ferry's exit 1) ends with 0 so that the
# merge (afterok) runs, and the merge names the failed input; sync.sbatch
# passes FERRY_SYNC_ARGS word by word, never globbed, and refuses quotes.
#   slurm_scripts_test.sh FERRY SAMPLES DEPLOY
set -euo pipefail
FERRY=$(realpath "$1") SAMPLES=$(realpath "$2") DEPLOY=$(realpath "$3")
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
mkdir bin
cat > bin/srun <<'STUB'
#!/bin/bash
while [ "${1:-}" != "${1#--}" ]; do shift; done
SLURM_PROCID=0 SLURM_NTASKS=1 exec "$@"
STUB
cat > bin/ferry-args <<'STUB'
#!/bin/bash
printf '%s\n' "$@" > "$ARGS_OUT"
STUB
chmod +x bin/*
export PATH="$tmp/bin:$PATH"

# A bad image and a dangling link (unreadable: the plan's exit 1): the plan
# and both array tasks end with 0, the merge runs (exit 1) and dataset.json
# lists both. A -j of the user's wins over the job's CPUs (not both).
cp -r "$SAMPLES/dataset" data
head -c 2000 "$SAMPLES/images/png/rgb8.png" > data/cat/zz_broken.png
ln -s "$tmp/nowhere.png" data/cat/zz_dangling.png
OPTS=(--size 32 --shard-records 7 -j 1)
export SLURM_CPUS_PER_TASK=2
FERRY=$FERRY bash "$DEPLOY/slurm/plan.sbatch" data out "${OPTS[@]}" -q 2> perr.txt ||
  fail "plan: exit $? ($(cat perr.txt))"
grep -q 'cat/zz_dangling.png' perr.txt || fail "the dangling link is not named: $(cat perr.txt)"
grep -q 'some inputs could not be read' perr.txt || fail "the plan does not say why it ends with 0"
for i in 0 1; do
  SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=2 FERRY=$FERRY \
    bash "$DEPLOY/slurm/pack.sbatch" data out "${OPTS[@]}" 2>> werr.txt ||
    fail "array task $i: exit $? ($(cat werr.txt))"
done
grep -q 'cat/zz_broken.png' werr.txt || fail "the bad image is not named: $(cat werr.txt)"
grep -q 'some inputs failed' werr.txt || fail "the worker does not say why it ends with 0"
rc=0
FERRY=$FERRY bash "$DEPLOY/slurm/merge.sbatch" data out "${OPTS[@]}" -q 2> merr.txt || rc=$?
[ $rc -eq 1 ] || fail "merge exit $rc, want 1: $(cat merr.txt)"
/usr/bin/python3 -c '
import json; d = json.load(open("out/dataset.json"))
assert sorted(f["input"] for f in d["failed"]) == ["cat/zz_broken.png", "cat/zz_dangling.png"], d["failed"]'

# Another failure of a worker still fails its task.
rc=0
SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=2 FERRY=$FERRY \
  bash "$DEPLOY/slurm/pack.sbatch" data nowhere "${OPTS[@]}" 2> /dev/null || rc=$?
[ $rc -eq 2 ] || fail "a worker without a plan: exit $rc, want 2"

# FERRY_SYNC_ARGS: words as they are, in a cwd where the globs match files.
touch a train-1
ARGS_OUT=$tmp/args.txt FERRY=ferry-args FERRY_SYNC_ARGS="--exclude * --include train-*" \
  bash "$DEPLOY/slurm/sync.sbatch" s3://bucket/ds "$tmp/dest-%t" "$tmp/cache"
printf '%s\n' sync --rank auto s3://bucket/ds "$tmp/dest-0" --cache "$tmp/cache" \
  --exclude '*' --include 'train-*' -q > want.txt
diff want.txt args.txt > /dev/null || fail "ferry sync got: $(cat args.txt)"
rc=0
FERRY=ferry-args FERRY_SYNC_ARGS="--include 'train-*'" \
  bash "$DEPLOY/slurm/sync.sbatch" s3://bucket/ds dest 2> serr.txt || rc=$?
[ $rc -eq 2 ] && grep -q 'no quotes' serr.txt || fail "quoted FERRY_SYNC_ARGS: exit $rc $(cat serr.txt)"
echo ok
