#!/usr/bin/env bash
# Benchmark: distributed ferry pack (--plan, N workers at once, --merge) on
# this machine for N = 1, 2, 4, against a one-machine pack (-j 1), on the
# convert benchmark corpus; rounds interleaved, median of ROUNDS. Each worker
# is one process with -j 1, as one Slurm array task / Indexed Job pod with
# one CPU would be. Prints wall times (plan, workers, merge, total), images/s
# and the CPU time (user + sys of every process: what a loaded machine's wall
# times hide), and checks every output equals the one-machine pack.
#   bench_pack_workers.sh [FERRY] [WORKDIR]     COUNT=300 ROUNDS=3 WORKERS="1 2 4"
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
FERRY=$(realpath "${1:-$here/../../build/bin/ferry}")
work=${2:-/tmp/ferry-bench-convert}
COUNT=${COUNT:-300} ROUNDS=${ROUNDS:-3} WORKERS=${WORKERS:-"1 2 4"}
OPTS=(--size 512 --shard-records 20)
mkdir -p "$work"
source "$here/benchlib.sh"
ensure_corpus "$COUNT"
src=$work/cls-$COUNT
if [ ! -d "$src/all" ]; then
  mkdir -p "$src/all"
  for f in "$corpus"/*; do ln -s "$f" "$src/all/"; done
fi
ms() { echo $(( $(date +%s%N) / 1000000 )); }
# cpu NAME CMD...: runs CMD, adding its user + sys time (ms) to cpu_NAME.
cpu() {
  local name=$1
  shift
  /usr/bin/time -f '%U %S' -o "$work/pw-$name.time" "$@"
  awk '{print int(($1 + $2) * 1000)}' "$work/pw-$name.time" >> "$work/pw-cpu-$name"
}
declare -A times
rm -f "$work"/pw-cpu-*
for _ in $(seq "$ROUNDS"); do
  rm -rf "$work/pw-one"
  t0=$(ms)
  cpu one-0 "$FERRY" pack "$src" "$work/pw-one" "${OPTS[@]}" -j 1 -q
  times[one]+=" $(( $(ms) - t0 ))"
  for n in $WORKERS; do
    out=$work/pw-$n
    rm -rf "$out"
    t0=$(ms)
    cpu "$n-plan" "$FERRY" pack "$src" "$out" "${OPTS[@]}" -j 1 --plan -q
    t1=$(ms)
    pids=()
    for ((i = 0; i < n; i++)); do
      cpu "$n-w$i" "$FERRY" pack "$src" "$out" "${OPTS[@]}" -j 1 --worker "$i/$n" -q &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    t2=$(ms)
    cpu "$n-merge" "$FERRY" pack "$src" "$out" "${OPTS[@]}" --merge -q
    t3=$(ms)
    diff -r "$work/pw-one" "$out" > /dev/null || { echo "N=$n: output differs" >&2; exit 1; }
    times[plan-$n]+=" $((t1 - t0))" times[work-$n]+=" $((t2 - t1))"
    times[merge-$n]+=" $((t3 - t2))" times[total-$n]+=" $((t3 - t0))"
  done
done
median() { tr ' ' '\n' <<< "$1" | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
rate() { echo "scale=1; $COUNT * 1000 / $1" | bc; }
# CPU ms of a configuration (all its processes), mean per round.
cpu_of() { cat "$work"/pw-cpu-"$1"-* | awk -v r="$ROUNDS" '{s += $1} END {print int(s / r)}'; }
m=$(median "${times[one]}")
echo "load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, $COUNT images, ${OPTS[*]}"
echo "one machine -j 1: $m ms, $(rate "$m") images/s, CPU $(cpu_of one) ms per round  (rounds:${times[one]})"
for n in $WORKERS; do
  t=$(median "${times[total-$n]}")
  echo "N=$n: plan $(median "${times[plan-$n]}") + workers $(median "${times[work-$n]}") + merge $(median "${times[merge-$n]}") = $t ms, $(rate "$t") images/s, $(echo "scale=2; $m / $t" | bc)x one machine, CPU $(cpu_of "$n") ms per round  (totals:${times[total-$n]})"
done
