#!/usr/bin/env bash
# deploy/slurm on a real one-node Slurm cluster (slurm.sh): plan, a 4-task
# pack array and the merge (submit.sh, afterok dependencies) write the very
# bytes of a one-machine ferry pack, also when a lost shard's task is rerun
# alone; then sync.sbatch with 2 tasks gives each
# rank its share of the shards (what ferry sync --rank R --world-size 2
# gives). The cluster is stopped and removed at the end. Skips (77) when not
# root or Slurm/munge are not installed (tools/dev/install-deps.sh).
set -euo pipefail
FERRY=$(realpath "$1") SAMPLES=$(realpath "$2") DEPLOY=$(realpath "$3")
HERE=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIP: slurmd needs root"; exit 77; }
for t in slurmctld slurmd munged sbatch; do
  command -v "$t" > /dev/null || [ -x "/usr/sbin/$t" ] || { echo "SKIP: no $t"; exit 77; }
done
unset SLURM_CONF  # never a cluster of the caller's
work=$(realpath "$(mktemp -d)")
chmod 0755 "$work"
# Jobs still there are cancelled and waited for (their steps outlive slurmd).
cleanup() {
  if [ "${SLURM_CONF:-}" = "$work/slurm/slurm.conf" ]; then
    squeue -h -o %A 2> /dev/null | xargs -r scancel --full 2> /dev/null || true
    for _ in $(seq 50); do [ -z "$(squeue -h -o %A 2> /dev/null)" ] && break; sleep 0.2; done
  fi
  bash "$HERE/slurm.sh" stop "$work/slurm"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' TERM INT
cd "$work"
fail() {
  echo "FAIL: $*" >&2
  for f in logs/* slurm/*.log; do [ -f "$f" ] && { echo "== $f" >&2; tail -n 20 "$f" >&2; }; done
  exit 1
}

bash "$HERE/slurm.sh" start slurm
source slurm/slurm.env
export FERRY SBATCH_OUTPUT="$work/logs/%x-%j.out"
mkdir logs

# wait_job ID: until it has ended; fails unless COMPLETED. All waits
# together end 600 s after the start (well inside ctest's timeout).
deadline=$((SECONDS + 600))
wait_job() {
  local info state
  while [ $SECONDS -lt $deadline ]; do
    info=$(scontrol -o show job "$1" 2> /dev/null || true)
    state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<< "$info" | sort -u | tr '\n' ' ')
    case $info in *DependencyNeverSatisfied*) fail "job $1: a dependency failed" ;; esac
    case $state in
      "COMPLETED ") return 0 ;;
      *PENDING* | *RUNNING* | *CONFIGURING* | *COMPLETING* | "") sleep 0.5 ;;
      *) fail "job $1 ended $state" ;;
    esac
  done
  fail "job $1 had not ended 600 s after the start: $info"
}

cp -r "$SAMPLES/dataset" data
OPTS=(--size 64 --shard-records 5)
"$FERRY" pack data one "${OPTS[@]}" -q
merge=$(bash "$DEPLOY/slurm/submit.sh" 4 data dist "${OPTS[@]}")
wait_job "$merge"
# Four array tasks ran, each a worker of 4.
[ "$(ls logs/ferry-pack-* | wc -l)" = 4 ] || fail "not 4 array tasks: $(ls logs)"
diff -r one dist > /dev/null || fail "the Slurm pack differs from a one-machine pack"

# A lost shard: its array task alone again (FERRY_WORKERS=N, --array=I),
# then the merge. Worker 2 of 4 has shards 7-9 of 14 (train 9, val 3, test 2).
plan=$(sbatch --parsable "$DEPLOY/slurm/plan.sbatch" data dist2 "${OPTS[@]}")
array=$(sbatch --parsable --dependency="afterok:$plan" --array=0-3 "$DEPLOY/slurm/pack.sbatch" data dist2 "${OPTS[@]}")
wait_job "$array"
rm dist2/train-00008-of-00009.tfrecord
again=$(FERRY_WORKERS=4 sbatch --parsable --array=2 "$DEPLOY/slurm/pack.sbatch" data dist2 "${OPTS[@]}")
merge=$(sbatch --parsable --dependency="afterok:$again" "$DEPLOY/slurm/merge.sbatch" data dist2 "${OPTS[@]}")
wait_job "$merge"
diff -r one dist2 > /dev/null || fail "the pack with a task rerun differs from a one-machine pack"

# Fleet sync: 2 tasks (on this one node, so DEST and cache per rank: %t).
"$FERRY" publish dist "file://$work/bucket" -q
job=$(sbatch --parsable --ntasks=2 --ntasks-per-node=2 "$DEPLOY/slurm/sync.sbatch" \
  "file://$work/bucket" "$work/node/ds%t" "$work/node/cache%t")
wait_job "$job"
shards() { (cd "$1" && printf '%s\n' *.tfrecord | sort); }
all=$(shards dist)
r0=$(shards node/ds0) r1=$(shards node/ds1)
[ -n "$r0" ] && [ -n "$r1" ] || fail "a rank got no shards: '$r0' '$r1'"
[ "$(printf '%s\n%s\n' "$r0" "$r1" | sort)" = "$all" ] || fail "ranks' shards are not a partition of all shards"
for r in 0 1; do
  "$FERRY" sync --rank $r --world-size 2 "file://$work/bucket" "want$r" --cache wantcache -q
  diff -r --exclude='.ferry-sync*' --exclude=.ferry-view.lock "want$r" "node/ds$r" \
    || fail "rank $r's view differs from ferry sync --rank $r --world-size 2"
  for f in $(shards "node/ds$r"); do cmp -s "dist/$f" "node/ds$r/$f" || fail "rank $r: $f differs"; done
done
echo ok
