#!/usr/bin/env bash
# Distributed ferry pack (--plan, --worker I/N, --merge): N workers, one after
# another or at once, write the very bytes of a one-machine run; the merge
# names a missing or damaged shard (exit 3); a worker rerun keeps its shards;
# distributed runs need --shard-records and the plan's options; OUT may be
# a bucket (file:// here).
set -euo pipefail
FERRY=$1 SAMPLES=$2
source "$(dirname "$0")/testlib.sh"
cp -r "$SAMPLES/dataset" data
# Files that are not inputs: dataset.json gives each one's reason, the
# merged one as the one-machine one.
echo notes > data/README.txt
cp data/cat/cat_000.png data/cat/.hidden.png
same() { diff -r "$1" "$2" > /dev/null || { diff -r "$1" "$2" | head >&2; fail "$2 differs from $1"; }; }

# plan DIR N [parallel] OPTIONS...: plan, N workers, merge.
distributed() {
  local dir=$1 n=$2 mode=$3; shift 3
  expect_rc 0 "$FERRY" pack data "$dir" "$@" --plan -q
  if [ "$mode" = parallel ]; then
    local pids=() i
    for ((i = 0; i < n; i++)); do "$FERRY" pack data "$dir" "$@" --worker "$i/$n" -q & pids+=($!); done
    for i in "${pids[@]}"; do wait "$i" || fail "a parallel worker failed"; done
  else
    for ((i = 0; i < n; i++)); do expect_rc 0 "$FERRY" pack data "$dir" "$@" --worker "$i/$n" -q; done
  fi
  expect_rc 0 "$FERRY" pack data "$dir" "$@" --merge
}

TF=(--size 64 --shard-records 7)
expect_rc 0 "$FERRY" pack data one "${TF[@]}" -q
distributed n1 1 serial "${TF[@]}"
same one n1
distributed n3 3 serial "${TF[@]}"
same one n3
distributed p3 3 parallel "${TF[@]}"
same one p3
# More workers than shards: the spare ones write nothing.
distributed n12 12 parallel "${TF[@]}"
same one n12
# WebDataset (wids index with MD5s) and gzip TFRecord.
WDS=(--format wds --size 48 --shard-records 5)
expect_rc 0 "$FERRY" pack data wone "${WDS[@]}" -q
distributed w4 4 parallel "${WDS[@]}"
same wone w4
GZ=(--compress gzip --size 48 --shard-records 9 --ratios 8:2 --names a,b)
expect_rc 0 "$FERRY" pack data gone "${GZ[@]}" -q
distributed g2 2 serial "${GZ[@]}"
same gone g2
# A one-machine rerun over a merged output keeps every shard.
expect_rc 0 "$FERRY" pack data n3 "${TF[@]}" --json
/usr/bin/python3 -c 'import json; d = json.load(open("out.txt")); assert d["reused_shards"] == 9, d'
same one n3

# A worker rerun keeps its finished shards and changes nothing.
expect_rc 0 "$FERRY" pack data r "${TF[@]}" --plan -q
for i in 0 1 2; do expect_rc 0 "$FERRY" pack data r "${TF[@]}" --worker $i/3 -q; done
cp -a r r.before
expect_rc 0 "$FERRY" pack data r "${TF[@]}" --worker 1/3 --json
/usr/bin/python3 -c 'import json; d = json.load(open("out.txt")); assert d["reused_shards"] == 3 and d["records"] == 21, d'
same r.before r

# A missing shard: the merge names it, exit 3, and writes no dataset.json.
rm r/train-00004-of-00006.tfrecord
expect_rc 3 "$FERRY" pack data r "${TF[@]}" --merge
grep -q 'train-00004-of-00006.tfrecord (missing' err.txt || fail "missing shard not named: $(cat err.txt)"
[ ! -e r/dataset.json ] || fail "dataset.json written with a shard missing"
# A damaged one (same size): named too.
printf 'X' | dd of=r/val-00001-of-00002.tfrecord bs=1 seek=40 conv=notrunc 2> /dev/null
expect_rc 3 "$FERRY" pack data r "${TF[@]}" --merge
grep -q 'val-00001-of-00002.tfrecord (damaged' err.txt || fail "damaged shard not named: $(cat err.txt)"
# Rerunning the workers redoes exactly those two; then the merge succeeds.
expect_rc 0 "$FERRY" pack data r "${TF[@]}" --worker 1/3 --json
/usr/bin/python3 -c 'import json; d = json.load(open("out.txt")); assert d["reused_shards"] == 2, d'
expect_rc 0 "$FERRY" pack data r "${TF[@]}" --worker 2/3 --json
/usr/bin/python3 -c 'import json; d = json.load(open("out.txt")); assert d["reused_shards"] == 2, d'
expect_rc 0 "$FERRY" pack data r "${TF[@]}" --merge
same one r
# A worker that never ran: its shards are all named.
expect_rc 0 "$FERRY" pack data s "${TF[@]}" --plan -q
expect_rc 0 "$FERRY" pack data s "${TF[@]}" --worker 0/2 -q
expect_rc 3 "$FERRY" pack data s "${TF[@]}" --merge
grep -q '5 of 9 planned shards' err.txt || fail "wrong count: $(cat err.txt)"

# Usage errors (exit 2).
expect_rc 2 "$FERRY" pack data u --size 64 --plan
grep -q 'needs --shard-records' err.txt || fail "no --shard-records hint"
expect_rc 2 "$FERRY" pack data nothing "${TF[@]}" --worker 0/2
grep -q 'ferry pack --plan first' err.txt || fail "no plan hint"
expect_rc 2 "$FERRY" pack data s --size 65 --shard-records 7 --worker 1/2
grep -q 'differ from the plan' err.txt || fail "option mismatch not found"
expect_rc 2 "$FERRY" pack data s --size 64 --shard-records 7 --seed 3 --merge
for w in 2/2 1 x/3 -1/3 1/0 4294967297/2 ' 1/2' '1/ 2' +1/2 1/2x /2 1/; do expect_rc 2 "$FERRY" pack data s "${TF[@]}" --worker "$w"; done
expect_rc 2 "$FERRY" pack data s "${TF[@]}" --plan --merge
expect_rc 2 "$FERRY" pack data s "${TF[@]}" --dry-run --worker 0/1
# A shard that reaches --shard-size before its records: a one-machine run
# would cut it there, so the worker stops.
expect_rc 0 "$FERRY" pack data b --size 64 --shard-records 7 --shard-size 2KiB --plan -q
expect_rc 2 "$FERRY" pack data b --size 64 --shard-records 7 --shard-size 2KiB --worker 0/1
grep -q 'reached --shard-size' err.txt || fail "shard size overrun not explained"

# A bad image: listed by its worker and the merge (exit 1), its shard one
# record short.
head -c 2000 "$SAMPLES/images/png/rgb8.png" > data/cat/zz_broken.png
expect_rc 0 "$FERRY" pack data f "${TF[@]}" --plan -q
rc=0
for i in 0 1; do
  set +e; "$FERRY" pack data f "${TF[@]}" --worker $i/2 -q 2>> werr.txt; r=$?; set -e
  [ $r -le 1 ] || fail "worker exit $r"; rc=$((rc + r))
done
[ $rc -eq 1 ] || fail "the bad image failed $rc workers, want 1"
grep -q 'cat/zz_broken.png' werr.txt || fail "worker did not name the bad image"
expect_rc 1 "$FERRY" pack data f "${TF[@]}" --merge
/usr/bin/python3 -c '
import json; d = json.load(open("f/dataset.json"))
assert [f["input"] for f in d["failed"]] == ["cat/zz_broken.png"], d["failed"]
assert d["records"] == 60, d["records"]'

# A file rewritten after the plan: its worker fails it (the plan's key and
# split are for the old bytes), exit 1; the merge packs it nowhere.
rm data/cat/zz_broken.png
expect_rc 0 "$FERRY" pack data c "${TF[@]}" --plan -q
cp data/cat/cat_001.png data/cat/cat_002.png
rc=0
for i in 0 1; do
  set +e; "$FERRY" pack data c "${TF[@]}" --worker $i/2 -q 2>> cerr.txt; r=$?; set -e
  [ $r -le 1 ] || fail "worker exit $r"; rc=$((rc + r))
done
[ $rc -eq 1 ] || fail "the rewritten file failed $rc workers, want 1: $(cat cerr.txt)"
grep -q 'cat/cat_002.png.*changed since the plan' cerr.txt || fail "rewritten file not named: $(cat cerr.txt)"
expect_rc 1 "$FERRY" pack data c "${TF[@]}" --merge
if grep -l 'cat/cat_002.png' c/*.tfrecord; then fail "the rewritten file was packed"; fi
/usr/bin/python3 -c '
import json; d = json.load(open("c/dataset.json"))
assert [f["input"] for f in d["failed"]] == ["cat/cat_002.png"], d["failed"]'
cp "$SAMPLES/dataset/cat/cat_002.png" data/cat/cat_002.png

# An input replaced by a FIFO after the plan: its worker fails it (not a
# regular file), exit 1, and does not wait on the open for a writer.
expect_rc 0 "$FERRY" pack data ff "${TF[@]}" --plan -q
rm data/cat/cat_002.png
mkfifo data/cat/cat_002.png
rc=0
for i in 0 1; do
  set +e; timeout 120 "$FERRY" pack data ff "${TF[@]}" --worker $i/2 -q 2>> fferr.txt; r=$?; set -e
  [ $r -le 1 ] || fail "worker exit $r: $(cat fferr.txt)"; rc=$((rc + r))
done
[ $rc -eq 1 ] || fail "the FIFO failed $rc workers, want 1: $(cat fferr.txt)"
grep -q 'cat/cat_002.png.*not a regular file (FIFO)' fferr.txt || fail "FIFO not named: $(cat fferr.txt)"
rm data/cat/cat_002.png
cp "$SAMPLES/dataset/cat/cat_002.png" data/cat/cat_002.png

# A merge before every worker is done leaves the temporaries alone: their
# writer may run on another node (its pid means nothing here).
expect_rc 0 "$FERRY" pack data t "${TF[@]}" --plan -q
expect_rc 0 "$FERRY" pack data t "${TF[@]}" --worker 0/2 -q
true & dead=$!; wait $dead
tmp=".ferry-tmp-$dead-000000000000-train-00005-of-00006.tfrecord"
echo partial > "t/$tmp"
expect_rc 3 "$FERRY" pack data t "${TF[@]}" --merge
[ -e "t/$tmp" ] || fail "an early merge removed a worker's temporary file"
expect_rc 0 "$FERRY" pack data t "${TF[@]}" --worker 1/2 -q
expect_rc 0 "$FERRY" pack data t "${TF[@]}" --merge
[ ! -e "t/$tmp" ] || fail "a finished merge left a stale temporary file"
same one t

# Merging a merged OUT does nothing (exit 0); a plan of the same inputs and
# options over it keeps dataset.json until the merge rewrites it; another
# plan removes it.
distributed m 2 serial "${TF[@]}"
cp -a m m.before
expect_rc 0 "$FERRY" pack data m "${TF[@]}" --merge
grep -q 'merged already' err.txt || fail "second merge: $(cat err.txt)"
same m.before m
expect_rc 0 "$FERRY" pack data m "${TF[@]}" --plan -q
[ -e m/dataset.json ] || fail "--plan removed a finished dataset.json"
for i in 0 1; do expect_rc 0 "$FERRY" pack data m "${TF[@]}" --worker $i/2 -q; done
expect_rc 0 "$FERRY" pack data m "${TF[@]}" --merge
same one m
# ... but not with other options: those are not what was merged.
expect_rc 2 "$FERRY" pack data m "${TF[@]}" --seed 3 --merge
grep -q 'merged already with other options' err.txt || fail "merged OUT, other options: $(cat err.txt)"
expect_rc 0 "$FERRY" pack data m "${TF[@]}" --seed 3 --plan -q
[ ! -e m/dataset.json ] || fail "a plan of other options kept the old dataset.json"

# A damaged plan (a hash edited, a line lost) is named as such (exit 3),
# not as options that differ.
expect_rc 0 "$FERRY" pack data dp "${TF[@]}" --plan -q
cp dp/.ferry-pack-plan plan.good
/usr/bin/python3 -c '
import sys; p = sys.argv[1]; lines = open(p).read().split("\n")
i = next(k for k, l in enumerate(lines) if l.startswith("item "))
w = lines[i].split(" "); w[4] = ("0" if w[4][0] != "0" else "1") + w[4][1:]
lines[i] = " ".join(w); open(p, "w").write("\n".join(lines))' dp/.ferry-pack-plan
expect_rc 3 "$FERRY" pack data dp "${TF[@]}" --worker 0/2
grep -q 'damaged' err.txt || fail "edited plan: $(cat err.txt)"
awk '/^item / && !done { done = 1; next } 1' plan.good > dp/.ferry-pack-plan
expect_rc 3 "$FERRY" pack data dp "${TF[@]}" --merge
grep -q 'damaged' err.txt || fail "plan without a line: $(cat err.txt)"

# The same worker started twice at once: the second is refused (exit 4,
# naming it) while the first holds its lock (held here as a running worker
# holds it), and writes nothing.
expect_rc 0 "$FERRY" pack data lk "${TF[@]}" --plan -q
exec 9> lk/.ferry-pack-worker-1-of-2.lock
flock -n 9 || fail "could not take worker 1/2's lock"
expect_rc 4 "$FERRY" pack data lk "${TF[@]}" --worker 1/2
grep -q 'ferry-pack-worker-1-of-2: worker 1/2 runs already' err.txt || fail "second worker: $(cat err.txt)"
[ -z "$(ls lk)" ] || fail "a refused worker wrote: $(ls lk)"
expect_rc 0 "$FERRY" pack data lk "${TF[@]}" --worker 0/2 -q
exec 9>&-
expect_rc 0 "$FERRY" pack data lk "${TF[@]}" --worker 1/2 -q
expect_rc 0 "$FERRY" pack data lk "${TF[@]}" --merge -q
same one lk

# A worker of an old plan, stopped after its first shard while another
# plan's workers run and merge, writes nothing more into the merged OUT when
# it resumes (neither its list nor its next shard) and fails.
expect_rc 0 "$FERRY" pack data st "${TF[@]}" --plan -q
FERRY_TEST_PACK_PAUSE_AFTER=1 FERRY_TEST_PACK_PAUSE_FILE=$work/st.paused \
  "$FERRY" pack data st "${TF[@]}" --worker 0/2 -q 2> st.err &
spid=$!
trap 'kill -9 $spid 2> /dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 600); do [ -e st.paused ] && break; kill -0 $spid 2> /dev/null || break; sleep 0.1; done
[ -e st.paused ] || fail "the old plan's worker did not pause"
cp data/cat/cat_000.png data/cat/zz_new.png
expect_rc 0 "$FERRY" pack data stone "${TF[@]}" -q
distributed st 3 serial "${TF[@]}"
cp -a st st.merged
kill -CONT $spid
src=0; wait $spid || src=$?
[ $src -eq 2 ] || fail "the old plan's worker: exit $src, want 2: $(cat st.err)"
grep -q 'ferry-pack-plan: gone' st.err || fail "old worker: $(cat st.err)"
same st.merged st
rm -r stone data/cat/zz_new.png

# OUT in a bucket (file:// here, s3:// in integration.pack_s3): the plan,
# the workers' files and shards are objects written through the backend,
# each shard first in the worker's folder in --tmp, which goes when it is
# done; the result is a one-machine pack's (its lock file aside).
mkdir tmpb
bucket_same() { diff -r -x .ferry-pack.lock "$1" "$2" > /dev/null || { diff -r -x .ferry-pack.lock "$1" "$2" | head >&2; fail "$2 differs from $1"; }; }
distributed "file://$work/b3" 3 parallel "${TF[@]}" --tmp "$work/tmpb"
bucket_same one b3
[ -z "$(ls -A tmpb)" ] || fail "local folders left: $(ls -A tmpb)"
distributed "file://$work/bw" 2 serial "${WDS[@]}" --tmp "$work/tmpb"
bucket_same wone bw
distributed "file://$work/bg" 2 serial "${GZ[@]}" --tmp "$work/tmpb"
bucket_same gone bg
expect_rc 0 "$FERRY" pack data "file://$work/b3" "${TF[@]}" --merge
grep -q 'merged already' err.txt || fail "second merge into a bucket: $(cat err.txt)"
# A damaged assignment in the bucket (zstd, but not an assignment): named by
# its URL, not by its local copy; no local folder left.
printf 'garbage\tline\n' | zstd -q > b3/assignment.tsv.zst
expect_rc 3 "$FERRY" pack data "file://$work/b3" "${TF[@]}" --plan --tmp "$work/tmpb"
grep -q "file://$work/b3/assignment.tsv.zst: line 1" err.txt || fail "damaged assignment: $(cat err.txt)"
if grep -q 'ferry-pack-' err.txt; then fail "named by its local copy: $(cat err.txt)"; fi
[ -z "$(ls -A tmpb)" ] || fail "local folder left: $(ls -A tmpb)"

# A worker killed after its 4th write (shard 0, its index, its list, shard 1
# but not its index): a second process of the same worker on this machine
# meanwhile is refused (exit 4); the rerun keeps shard 0, writes the rest.
b="file://$work/bk"
expect_rc 0 "$FERRY" pack data "$b" "${TF[@]}" --plan -q
FERRY_TEST_PACK_PAUSE_AFTER=4 FERRY_TEST_PACK_PAUSE_FILE=$work/paused \
  "$FERRY" pack data "$b" "${TF[@]}" --worker 0/2 --tmp "$work/tmpk" -q &
pid=$!
trap 'kill -9 $pid 2> /dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 600); do [ -e paused ] && break; kill -0 $pid 2> /dev/null || break; sleep 0.1; done
[ -e paused ] || fail "the worker did not pause"
[ -e bk/train-00001-of-00006.tfrecord ] && [ ! -e bk/train-00001-of-00006.tfrecord.idx ] \
  || fail "paused elsewhere: $(ls bk)"
expect_rc 4 "$FERRY" pack data "$b" "${TF[@]}" --worker 0/2 --tmp "$work/tmpk"
grep -q 'worker 0/2 runs already on this machine' err.txt || fail "second worker: $(cat err.txt)"
kill -9 $pid; wait $pid 2> /dev/null || true
expect_rc 0 "$FERRY" pack data "$b" "${TF[@]}" --worker 0/2 --tmp "$work/tmpk" --json
/usr/bin/python3 -c 'import json; d = json.load(open("out.txt")); assert d["reused_shards"] == 1 and d["records"] == 28, d'
[ -z "$(ls -A tmpk)" ] || fail "local folder left: $(ls -A tmpk)"
expect_rc 0 "$FERRY" pack data "$b" "${TF[@]}" --worker 1/2 --tmp "$work/tmpk" -q
# A shard gone, one replaced by the same bytes (a new ETag): the merge names
# both (exit 3); --verify-remote reads the replaced one back and takes it.
rm bk/train-00002-of-00006.tfrecord
cp bk/val-00000-of-00002.tfrecord x && mv x bk/val-00000-of-00002.tfrecord
expect_rc 3 "$FERRY" pack data "$b" "${TF[@]}" --merge
grep -q 'train-00002-of-00006.tfrecord (missing' err.txt || fail "missing shard not named: $(cat err.txt)"
grep -q 'val-00000-of-00002.tfrecord (damaged: its size or ETag' err.txt || fail "replaced shard not named: $(cat err.txt)"
[ ! -e bk/dataset.json ] || fail "dataset.json written with a shard missing"
expect_rc 3 "$FERRY" pack data "$b" "${TF[@]}" --merge --verify-remote
grep -q '1 of 9 planned shards' err.txt || fail "--verify-remote: $(cat err.txt)"
expect_rc 0 "$FERRY" pack data "$b" "${TF[@]}" --worker 0/2 --tmp "$work/tmpk" --json
/usr/bin/python3 -c 'import json; d = json.load(open("out.txt")); assert d["reused_shards"] == 3, d'
expect_rc 0 "$FERRY" pack data "$b" "${TF[@]}" --merge --verify-remote
bucket_same one bk
[ -z "$(ls -A bk | grep -E 'ferry-pack-(plan|worker)')" ] || fail "plan or worker files left: $(ls -A bk)"

# A URL OUT: only for a distributed pack, and a writable one.
for url in s3://bucket/x file:///tmp/x; do
  expect_rc 2 "$FERRY" pack data "$url" "${TF[@]}"
  grep -q 'is a URL' err.txt || fail "URL OUT not refused: $(cat err.txt)"
done
expect_rc 2 "$FERRY" pack data http://127.0.0.1:9/x "${TF[@]}" --plan
grep -q 'cannot be written' err.txt || fail "http OUT not refused: $(cat err.txt)"
[ ! -e s3: ] && [ ! -e file: ] && [ ! -e http: ] || fail "a URL OUT made a local folder"
echo ok
