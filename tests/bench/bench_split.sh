#!/usr/bin/env bash
# Benchmark: ferry split on 1,000,000 listed items (no file reads) and on a
# tree with content hashing; the listing fresh (no earlier assignment in
# --out: exact counts) and grown (-5 % / +10 %) with --previous, the stored
# assignment.tsv.zst kept (its size per item is printed). Anchors in the same run: a Python script doing
# the same stable hash split of the listing (what users write today, with
# hashlib), and xxhsum -H2 over the tree (the hashing floor). Prints items/s,
# ratios and peak RSS.
#   bench_split.sh [FERRY] [WORKDIR]      ITEMS=1000000 TREE_FILES=10000
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
FERRY=$(realpath "${1:-$here/../../build/bin/ferry}")
work=${2:-/tmp/ferry-bench-split}
ITEMS=${ITEMS:-1000000} TREE_FILES=${TREE_FILES:-10000}
mkdir -p "$work"
source "$here/benchlib.sh"
list="$work/items-$ITEMS.csv"
[ -f "$list" ] || /usr/bin/python3 - "$list" "$ITEMS" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    f.write("path,label,group\n")
    for i in range(n):
        f.write(f"class_{i % 1000:04d}/scene_{i // 7:07d}/frame_{i:08d}.jpg,class_{i % 1000:04d},scene_{i // 7:07d}\n")
PY
grown="$work/items-$ITEMS-grown.csv"
[ -f "$grown" ] || /usr/bin/python3 - "$grown" "$ITEMS" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    f.write("path,label,group\n")
    for i in range(n + n // 10):
        if i < n and i % 20 == 7:
            continue  # -5 %
        f.write(f"class_{i % 1000:04d}/scene_{i // 7:07d}/frame_{i:08d}.jpg,class_{i % 1000:04d},scene_{i // 7:07d}\n")
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
cat "$tree"/*/* > /dev/null

mkdir -p "$work/py"
run f_list bash -c "rm -rf '$work/out-list'; exec '$FERRY' split --list '$list' --out '$work/out-list'"
run f_grow bash -c "rm -rf '$work/out-grown'; exec '$FERRY' split --list '$grown' --out '$work/out-grown' --previous '$work/out-list'"
run p_list /usr/bin/python3 "$work/anchor_split.py" "$list" "$work/py"
run f_tree "$FERRY" split "$tree" --out "$work/out-tree" -j 2
run x_tree bash -c "find '$tree' -type f | xargs xxhsum -H2"
secs() { echo "scale=3; ${best[$1]} / 1000" | bc; }
f_list=$(secs f_list) p_list=$(secs p_list) f_tree=$(secs f_tree) x_tree=$(secs x_tree)
f_grow=$(secs f_grow) f_grow_rss=${rss[f_grow]}
f_list_rss=${rss[f_list]} p_list_rss=${rss[p_list]} f_tree_rss=${rss[f_tree]} x_tree_rss=${rss[x_tree]}
printf '%-44s %8s %12s %10s\n' case seconds items/s "peak RSS"
printf '%-44s %8s %12s %7s MB\n' "ferry split --list, $ITEMS items" "$f_list" \
  "$(echo "$ITEMS / $f_list" | bc)" "$((f_list_rss / 1024))"
printf '%-44s %8s %12s %7s MB\n' "ferry split --list grown, --previous" "$f_grow" \
  "$(echo "$ITEMS / $f_grow" | bc)" "$((f_grow_rss / 1024))"
printf '%-44s %8s %12s %7s MB\n' "python hashlib split (anchor), same list" "$p_list" \
  "$(echo "$ITEMS / $p_list" | bc)" "$((p_list_rss / 1024))"
printf '%-44s %8s %12s %7s MB\n' "ferry split tree, $TREE_FILES files, hashing" "$f_tree" \
  "$(echo "$TREE_FILES / $f_tree" | bc)" "$((f_tree_rss / 1024))"
printf '%-44s %8s %12s %7s MB\n' "xxhsum -H2 over the same tree (anchor)" "$x_tree" \
  "$(echo "$TREE_FILES / $x_tree" | bc)" "$((x_tree_rss / 1024))"
if [ -f "$work/out-list/assignment.tsv.zst" ]; then
  echo "assignment.tsv.zst: $(stat -c %s "$work/out-list/assignment.tsv.zst") bytes," \
       "$(echo "scale=1; $(stat -c %s "$work/out-list/assignment.tsv.zst") / $ITEMS" | bc) bytes/item"
fi
echo "list: ferry / python = $(echo "scale=1; $p_list / $f_list" | bc)x;" \
     "tree: ferry / xxhsum = $(echo "scale=2; $x_tree / $f_tree" | bc)x"
