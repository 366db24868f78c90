#!/usr/bin/env bash
# ferry split from the command line: outputs, determinism, usage errors,
# duplicates (together by default, --drop-duplicates, --allow-leakage),
# the default mode (exact counts, earlier items kept), --previous.
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
assert d["leakage"]["checked"] and d["leakage"]["cross_split_sets"] == 0
# The default mode: exact counts, 14/4/2 per class of 20.
assert d["mode"] == "auto", d["mode"]
assert [d["splits"][s]["items"] for s in ("train", "val", "test")] == [42, 12, 6], d'
# The summary prints the realised shares beside the asked ones.
expect_rc 0 "$FERRY" split data --out s3
grep -q 'train 42 (70.0% of 70%) val 12 (20.0% of 20%) test 6 (10.0% of 10%)' err.txt \
  || fail "no realised shares in: $(cat err.txt)"

# A run owns its output set: 7:2:1 then 8:2 leaves no test.txt behind.
expect_rc 0 "$FERRY" split data --out s3 --ratios 8:2 --names train,val
[ ! -e s3/test.txt ] || fail "stale test.txt kept"
[ "$(cat s3/*.txt | wc -l)" -eq 60 ] || fail "lists of two runs side by side"

# Exact mode: 20 per class -> 14/4/2 per class.
expect_rc 0 "$FERRY" split data --out ex --split-mode exact --json
/usr/bin/python3 -c '
import json; d = json.load(open("ex/split.json"))
for c in ["cat", "coffee", "space"]:
    assert [d["splits"][s]["per_class"][c] for s in ("train", "val", "test")] == [14, 4, 2], d'

# Planted duplicates: kept together by default (and with --dedup, now the
# default); --allow-leakage places them apart, says so and records it;
# --drop-duplicates keeps the first of each set and lists the others.
i=0
for f in data/cat/*; do
  cp "$f" "data/coffee/copy_of_cat_$i.${f##*.}"; i=$((i + 1)); [ $i -lt 10 ] || break
done
for flags in "" "--dedup"; do
  expect_rc 0 "$FERRY" split data --out dd --seed 3 $flags
  /usr/bin/python3 -c '
import json; d = json.load(open("dd/split.json"))
assert d["leakage"]["duplicate_sets"] == 10 and d["leakage"]["cross_split_sets"] == 0, d["leakage"]
assert d["duplicates"] == "together" and not d["leakage"]["allowed"]'
  rm -r dd
done
expect_rc 0 "$FERRY" split data --out leak --seed 3 --allow-leakage --split-mode stable
grep -q 'identical files are in more than one split' err.txt || fail "no leakage note"
/usr/bin/python3 -c '
import json; d = json.load(open("leak/split.json"))
assert d["leakage"]["allowed"] and d["leakage"]["cross_split_sets"] > 0, d["leakage"]'
expect_rc 0 "$FERRY" split data --out drop --drop-duplicates --json
/usr/bin/python3 -c '
import json; d = json.load(open("drop/split.json"))
assert d["dropped_duplicates"] == 10 and len(d["dropped"]) == 10, d["dropped"]
assert all(x["path"].startswith("coffee/copy_of_cat_") and x["duplicate_of"].startswith("cat/")
           for x in d["dropped"]), d["dropped"]
assert d["items"] == 60 and d["leakage"]["cross_split_sets"] == 0'
[ "$(cat drop/*.txt | wc -l)" -eq 60 ] || fail "dropped duplicates listed"
expect_rc 2 "$FERRY" split data --out x --drop-duplicates --no-hash
expect_rc 2 "$FERRY" split data --out x --drop-duplicates --allow-leakage
# Without reading the files, duplicates are unknown: split.json says so.
expect_rc 0 "$FERRY" split data --out nohash --no-hash
grep -q 'duplicates not checked' err.txt || fail "no 'not checked' in summary"
/usr/bin/python3 -c '
import json; d = json.load(open("nohash/split.json"))
assert not d["leakage"]["checked"] and "note" in d["leakage"], d["leakage"]'

# Growth: items of an earlier assignment keep their split (--previous, or
# the one already in --out); the new ones bring the counts to 7:2:1.
mkdir -p grown && cp -r data/. grown/
first=$(ls data/space | head -1)
for k in $(seq 1 30); do  # 30 new images, each different (bytes after the end)
  cp "data/space/$first" "grown/space/new_$k.${first##*.}"
  printf 'extra %d' "$k" >> "grown/space/new_$k.${first##*.}"
done
expect_rc 0 "$FERRY" split data --out g1
expect_rc 0 "$FERRY" split grown --out g2 --previous g1/split.json
/usr/bin/python3 -c '
import json
def where(d):
    return {p: s for s in ("train", "val", "test") for p in open(f"{d}/{s}.txt").read().split()}
a, b = where("g1"), where("g2")
assert all(b[p] == s for p, s in a.items()), "an earlier item moved"
d = json.load(open("g2/split.json"))
assert d["kept_from_earlier_assignment"] == 70, d["kept_from_earlier_assignment"]'
cp -r g2 g3
expect_rc 0 "$FERRY" split grown --out g3
grep -q '100 kept their earlier split' err.txt || fail "the assignment in --out was not kept: $(cat err.txt)"
expect_rc 2 "$FERRY" split data --out x --previous g1 --split-mode exact
expect_rc 4 "$FERRY" split data --out x --previous nosuchdir

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
expect_rc 0 "$FERRY" split data --out x --split-mode stable
expect_rc 0 "$FERRY" split data --out x --split-mode exact
expect_rc 2 "$FERRY" split data --out x --group-by '('
expect_rc 4 "$FERRY" split nosuchdir --out x
expect_rc 0 "$FERRY" split data --out dry --dry-run
[ ! -e dry ] || fail "dry run wrote"
echo "cli split: all checks passed"
