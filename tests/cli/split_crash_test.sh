#!/usr/bin/env bash
# ferry split's outputs switch as one unit: runs with other ratios, names and
# seeds are killed (kill -9) at random moments; after each kill the output
# directory holds exactly one run's set (split.json, its <name>.txt files
# with the counts it states, nothing of another run), and the next
# complete run leaves no run directory behind.
set -euo pipefail
FERRY=$1
source "$(dirname "$0")/testlib.sh"

/usr/bin/python3 - <<'PY'
with open("items.csv", "w") as f:
    f.write("path,label\n")
    for i in range(60000):
        f.write(f"c{i % 7}/img_{i:07d}.jpg,c{i % 7}\n")
PY
check() {
  /usr/bin/python3 - "$1" <<'PY'
import json, os, sys
out = sys.argv[1]
if not os.path.exists(out):
    sys.exit(0)
names = set(os.listdir(out))
d = json.load(open(os.path.join(out, "split.json")))
txt = {n for n in names if n.endswith(".txt")}
want = {n + ".txt" for n in d["names"]}
assert txt == want, f"lists {sorted(txt)} but split.json names {sorted(want)}"
assert names == want | {"split.json", "assignment.tsv.zst"}, sorted(names)
total = 0
for n in d["names"]:
    lines = sum(1 for _ in open(os.path.join(out, n + ".txt")))
    assert lines == d["splits"][n]["items"], (n, lines, d["splits"][n])
    total += lines
assert total == d["items"] == 60000, total
PY
}
run_config() {  # run_config K: one of three differing runs
  case $(( $1 % 3 )) in
    0) echo --ratios 7:2:1 --seed "$1" ;;
    1) echo --ratios 8:2 --names train,val --seed "$1" ;;
    2) echo --ratios 1:1:1:1 --names a,b,c,d --split-mode exact --seed "$1" ;;
  esac
}
start=$(date +%s%N)
"$FERRY" split --list items.csv --out out -q $(run_config 0)
ms=$(( ($(date +%s%N) - start) / 1000000 + 1 ))
check out || fail "complete run inconsistent"
for k in $(seq 1 16); do
  "$FERRY" split --list items.csv --out out -q $(run_config "$k") &
  pid=$!
  sleep "$(/usr/bin/python3 -c "import random; print(random.uniform(0, $ms / 1000 * 1.2))")"
  kill -9 "$pid" 2> /dev/null || true
  wait "$pid" 2> /dev/null || true
  check out || fail "after kill $k ($(run_config "$k")): outputs of two runs mixed"
done
expect_rc 0 "$FERRY" split --list items.csv --out out $(run_config 1)
check out || fail "final run inconsistent"
[ ! -e out/test.txt ] || fail "stale test.txt of an earlier run"
leftover=$(find . -maxdepth 1 -name '.out.ferry-split-*' | wc -l)
[ "$leftover" -eq 0 ] || fail "$leftover run directories left behind"
echo "cli split_crash: all checks passed"
