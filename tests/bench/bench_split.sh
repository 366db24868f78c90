#!/usr/bin/env bash
# Benchmark: ferry split on 1,000,000 listed items (no file reads), two
# listings:
#   groups7   CSV, 1000 classes, every item in a scene of 7 (group column)
#   imagenet  CSV, 100 classes, random file names, a third of the items in
#             groups of 5, the rest alone
# each split fresh (no earlier assignment in --out: exact counts) and grown
# (-5 % / +10 %) with --previous (the stored assignment.tsv.zst read back;
# its size per item is printed); and a tree with content hashing. Anchors in
# the same rounds: a Python script doing the stable hash split of groups7
# (what users write today, with hashlib), and xxhsum -H2 over the tree.
# FERRY_BASE=other/ferry also runs that build on the fresh listings in the
# same rounds -- for issue 9, the build before its split work (the last
# commit before --split-mode auto and assignment.tsv.zst) -- and prints
# ferry / base for CPU time and peak RSS (issue 9's goal: at most 1.2x).
# Medians of ROUNDS interleaved rounds: CPU time (user+sys; steadier than
# wall time on a shared machine), wall time, peak RSS.
#   bench_split.sh [FERRY] [WORKDIR]   ROUNDS=5 ITEMS=1000000 TREE_FILES=10000
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
FERRY=$(realpath "${1:-$here/../../build/bin/ferry}")
work=${2:-/tmp/ferry-bench-split}
ROUNDS=${ROUNDS:-5} ITEMS=${ITEMS:-1000000} TREE_FILES=${TREE_FILES:-10000}
BASE=${FERRY_BASE:+$(realpath "$FERRY_BASE")}
for t in /usr/bin/python3 /usr/bin/time bc awk xxhsum; do
  command -v "$t" > /dev/null || { echo "needs $t: tools/dev/install-deps.sh --bench"; exit 1; }
done
mkdir -p "$work"
source "$here/benchlib.sh"
# groups7, and grown: -5 % (every 20th item) / +10 %.
list="$work/items-$ITEMS.csv" grown="$work/items-$ITEMS-grown.csv"
[ -f "$grown" ] || /usr/bin/python3 - "$list" "$grown" "$ITEMS" <<'PY'
import sys
fresh, grown, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(fresh, "w") as f, open(grown, "w") as g:
    f.write("path,label,group\n")
    g.write("path,label,group\n")
    for i in range(n + n // 10):
        line = f"class_{i % 1000:04d}/scene_{i // 7:07d}/frame_{i:08d}.jpg,class_{i % 1000:04d},scene_{i // 7:07d}\n"
        if i < n:
            f.write(line)
        if i >= n or i % 20 != 7:
            g.write(line)
PY
inet="$work/imagenet-$ITEMS.csv" inet_grown="$work/imagenet-$ITEMS-grown.csv"
[ -f "$inet_grown" ] || /usr/bin/python3 - "$inet" "$inet_grown" "$ITEMS" <<'PY'
import random, sys
fresh, grown, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(1)
with open(fresh, "w") as f, open(grown, "w") as g:
    f.write("path,label,group\n")
    g.write("path,label,group\n")
    for i in range(n + n // 10):
        grouped = (i // 5) % 3 == 0
        c = (i // 5) * 37 % 100 if grouped else rng.randrange(100)
        group = f"seq_{i // 5:07d}" if grouped else ""
        line = f"n{c:08d}/img_{rng.getrandbits(40):010x}_{i}.JPEG,n{c:08d},{group}\n"
        if i < n:
            f.write(line)
        if i >= n or i % 20 != 7:
            g.write(line)
PY
tree="$work/tree-$TREE_FILES"
[ -d "$tree" ] || /usr/bin/python3 - "$tree" "$TREE_FILES" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(5)
for i in range(n):
    d = os.path.join(root, f"class_{i % 10}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"img_{i:06d}.bin"), "wb") as f:
        f.write(rng.randbytes(rng.randint(1024, 64 * 1024)))
PY
cat > "$work/anchor_split.py" <<'PY'
import csv, hashlib, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cum = [0.7, 0.9, 1.0]
out = {0: [], 1: [], 2: []}
for r in rows:
    u = int.from_bytes(hashlib.blake2b(r["group"].encode(), digest_size=8).digest(), "little") / 2**64
    out[next(i for i, c in enumerate(cum) if u < c)].append(r["path"])
for i, name in enumerate(["train", "val", "test"]):
    with open(f"{sys.argv[2]}/{name}.txt", "w") as f:
        f.write("\n".join(sorted(out[i])) + "\n")
PY
cat "$tree"/*/* "$list" "$grown" "$inet" "$inet_grown" > /dev/null

mkdir -p "$work/py"
for _ in $(seq "$ROUNDS"); do
  for l in groups7 imagenet; do
    if [ $l = groups7 ]; then fresh=$list more=$grown; else fresh=$inet more=$inet_grown; fi
    run "f_$l" bash -c "rm -rf '$work/out-$l'; exec '$FERRY' split --list '$fresh' --out '$work/out-$l'"
    if [ -n "$BASE" ]; then
      run "b_$l" bash -c "rm -rf '$work/base-$l'; exec '$BASE' split --list '$fresh' --out '$work/base-$l'"
    fi
    run "g_$l" bash -c "rm -rf '$work/grown-$l'; exec '$FERRY' split --list '$more' --out '$work/grown-$l' --previous '$work/out-$l'"
  done
  run p_list /usr/bin/python3 "$work/anchor_split.py" "$list" "$work/py"
  rm -rf "$work/out-tree"
  run f_tree "$FERRY" split "$tree" --out "$work/out-tree" -j 2
  run x_tree bash -c "find '$tree' -type f | xargs xxhsum -H2"
done
declare -A cpu wall mem
for k in "${!cpus[@]}"; do
  cpu[$k]=$(median "${cpus[$k]}") wall[$k]=$(median "${walls[$k]}") mem[$k]=$(median "${rsss[$k]}")
done
div() { awk -v a="$1" -v b="$2" -v d="${3:-2}" 'BEGIN { printf "%.*f", d, a / b }'; }
row() {  # KEY ITEMS LABEL
  printf '%-44s %6s %7s %9s %6s MB\n' "$3" "$(div "${cpu[$1]}" 1000)" \
    "$(div "${wall[$1]}" 1000)" "$(div "$(($2 * 1000))" "${wall[$1]}" 0)" "$((mem[$1] / 1024))"
}
echo "median of $ROUNDS interleaved rounds; CPU = user+sys"
printf '%-44s %6s %7s %9s %9s\n' case "CPU s" "wall s" items/s "peak RSS"
for l in groups7 imagenet; do
  row "f_$l" "$ITEMS" "ferry split --list $l, $ITEMS items"
  [ -z "$BASE" ] || row "b_$l" "$ITEMS" "  base (FERRY_BASE), same listing"
  row "g_$l" "$((ITEMS + ITEMS / 10 - ITEMS / 20))" "  grown -5 %/+10 %, --previous"
done
row p_list "$ITEMS" "python hashlib split of groups7 (anchor)"
row f_tree "$TREE_FILES" "ferry split tree, $TREE_FILES files, hashing"
row x_tree "$TREE_FILES" "xxhsum -H2 over the same tree (anchor)"
z="$work/out-groups7/assignment.tsv.zst"
echo "assignment.tsv.zst (groups7): $(stat -c %s "$z") bytes," \
     "$(div "$(stat -c %s "$z")" "$ITEMS" 1) bytes/item"
echo "groups7: ferry / python (wall) = $(div "${wall[p_list]}" "${wall[f_groups7]}" 1)x;" \
     "tree: ferry / xxhsum (wall) = $(div "${wall[x_tree]}" "${wall[f_tree]}")x"
if [ -n "$BASE" ]; then
  for l in groups7 imagenet; do
    echo "$l: ferry / base: CPU time $(div "${cpu[f_$l]}" "${cpu[b_$l]}")x," \
         "peak RSS $(div "${mem[f_$l]}" "${mem[b_$l]}")x (issue 9: <= 1.2x)"
  done
fi
