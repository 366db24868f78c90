#!/usr/bin/env bash
# ferry split from the command line: outputs, determinism, usage errors,
# leakage warning and --dedup.
set -euo pipefail
FERRY=$1 SAMPLES=$2
source "$(dirname "$0")/testlib.sh"

cp -r "$SAMPLES/dataset" data
expect_rc 0 "$FERRY" split data --out s1 -j 1
expect_rc 0 "$FERRY" split data --out s2 -j 2
diff -r s1 s2 > /dev/null || fail "outputs differ between runs / thread counts"
[ "$(cat s1/train.txt s1/val.txt s1/test.txt | wc -l)" -eq 60 ] || fail "not every item placed once"
[ "$(cat s1/*.txt | sort -u | wc -l)" -eq 60 ] || fail "an item is in two splits"
sort -c s1/train.txt || fail "train.txt not sorted"
/usr/bin/python3 -c '
import json; d = json.load(open("s1/split.json"))
assert d["items"] == 60 and d["classes"] == ["cat", "coffee", "space"], d
assert sum(s["items"] for s in d["splits"].values()) == 60
assert d["leakage"]["checked"] and d["leakage"]["cross_split_sets"] == 0'

# Exact mode: 20 per class -> 14/4/2 per class.
expect_rc 0 "$FERRY" split data --out ex --split-mode exact --json
/usr/bin/python3 -c '
import json; d = json.load(open("ex/split.json"))
for c in ["cat", "coffee", "space"]:
    assert [d["splits"][s]["per_class"][c] for s in ("train", "val", "test")] == [14, 4, 2], d'

# Planted duplicates: warned about; --dedup keeps each pair together.
i=0
for f in data/cat/*; do
  cp "$f" "data/coffee/copy_of_cat_$i.${f##*.}"; i=$((i + 1)); [ $i -lt 10 ] || break
done
expect_rc 0 "$FERRY" split data --out leak --seed 3
grep -q 'identical files are in more than one split' err.txt || fail "no leakage warning"
expect_rc 0 "$FERRY" split data --out dd --seed 3 --dedup
/usr/bin/python3 -c '
import json; d = json.load(open("dd/split.json"))
assert d["leakage"]["duplicate_sets"] == 10 and d["leakage"]["cross_split_sets"] == 0, d["leakage"]'

# Listings.
printf 'path,label,group\nx/1.png,a,g1\nx/2.png,a,g1\nx/3.png,b,g2\n' > list.csv
expect_rc 0 "$FERRY" split --list list.csv --out fromlist --ratios 1,1 --names a,b
[ "$(cat fromlist/a.txt fromlist/b.txt | wc -l)" -eq 3 ] || fail "listing not split"

# Usage errors.
expect_rc 2 "$FERRY" split data --out x --ratios 7:-2:1
expect_rc 2 "$FERRY" split data --out x --ratios 0:0:0
expect_rc 2 "$FERRY" split data --out x --ratios abc
expect_rc 2 "$FERRY" split data --out x --ratios 7:3 --names train,val,test
expect_rc 2 "$FERRY" split data --out x --split-mode fuzzy
expect_rc 2 "$FERRY" split data --out x --group-by '('
expect_rc 4 "$FERRY" split nosuchdir --out x
expect_rc 0 "$FERRY" split data --out dry --dry-run
[ ! -e dry ] || fail "dry run wrote"
echo "cli split: all checks passed"
