#!/bin/bash
# Submits a distributed ferry pack: plan, an array of WORKERS pack tasks
# (afterok), merge (afterok). Prints the merge job's id.
#   submit.sh WORKERS SRC OUT [pack options, with --shard-records]
# Extra sbatch options (partition, account, time): SBATCH_* variables.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
workers=$1
shift
plan=$(sbatch --parsable "$here/plan.sbatch" "$@")
pack=$(sbatch --parsable --dependency="afterok:$plan" \
  --array="0-$((workers - 1))" "$here/pack.sbatch" "$@")
sbatch --parsable --dependency="afterok:$pack" "$here/merge.sbatch" "$@"
