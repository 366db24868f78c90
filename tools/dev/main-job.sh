#!/usr/bin/env bash
# README command 1: install what is missing, build, and run ferry's main job on
# samples/. Today the job is: hash the samples (as xxhsum -H2) and verify them,
# then convert every sample image to a 256-px JPEG, then split the labelled
# dataset 7:2:1 (stratified by class, leakage checked), then pack the labelled
# dataset into TFRecord and WebDataset shards, inspect one, and verify both;
# then put the TFRecord output into a local file:// bucket, list it, get it
# back into a fresh folder and verify the copy; then publish the TFRecord
# output as a versioned dataset into a local file:// bucket (issue 12) and
# show its log, sync it into a cache + view and verify the view; then change
# a few images, pack and publish v2, sync again and print how many bytes moved.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/tools/dev/install-deps.sh"
BUILD_TARGET=ferry_cli "$root/tools/dev/build.sh"
ferry="${BUILD_DIR:-$root/build}/bin/ferry"
out="${BUILD_DIR:-$root/build}/main-job"
mkdir -p "$out"
cd "$root"
echo "== ferry hash samples/ > $out/samples.xxh128"
"$ferry" hash -j 2 samples > "$out/samples.xxh128"
echo "   $(wc -l < "$out/samples.xxh128") files hashed"
echo "== ferry hash --check $out/samples.xxh128"
"$ferry" hash --check --quiet "$out/samples.xxh128"
echo "== ferry convert samples/ $out/jpeg --size 256 (fit, lanczos3, q90)"
"$ferry" convert samples "$out/jpeg" --size 256 -j 2
echo "== ferry split $out/jpeg/dataset --out $out/split (7:2:1, stable)"
"$ferry" split "$out/jpeg/dataset" --out "$out/split"
echo "== ferry pack samples/dataset $out/tfrecord --size 128 --shard-records 16"
"$ferry" pack samples/dataset "$out/tfrecord" --size 128 --shard-records 16 -j 2
echo "== ferry pack samples/dataset $out/wds --format wds --size 128"
"$ferry" pack samples/dataset "$out/wds" --format wds --size 128 -j 2
echo "== ferry inspect $out/tfrecord/train-00000-of-00003.tfrecord --records 1"
"$ferry" inspect "$out/tfrecord/train-00000-of-00003.tfrecord" --records 1
echo "== ferry verify $out/tfrecord --deep; ferry verify $out/wds --deep"
"$ferry" verify "$out/tfrecord" --deep -j 2
"$ferry" verify "$out/wds" --deep -j 2
bucket="$out/bucket"
rm -rf "$bucket" "$out/tfrecord-back"
echo "== ferry put -R $out/tfrecord file://$bucket/v1/"
"$ferry" put -R "$out/tfrecord" "file://$bucket/v1/"
echo "== ferry ls -R -l file://$bucket/v1/"
"$ferry" ls -R -l "file://$bucket/v1/"
echo "== ferry get -R file://$bucket/v1/ $out/tfrecord-back/; ferry verify it"
"$ferry" get -R "file://$bucket/v1/" "$out/tfrecord-back/"
"$ferry" verify "$out/tfrecord-back" --deep -j 2
published="$out/published"
rm -rf "$published"
export FERRY_CACHE="$out/cache"
echo "== ferry publish $out/tfrecord file://$published -m 'main job' --tag v1"
"$ferry" publish "$out/tfrecord" "file://$published" -m "main job" --tag v1
echo "== ferry log file://$published"
"$ferry" log "file://$published"
synced="$out/synced"
rm -rf "$synced" "$out/.synced.ferry-views" "$out/sync-cache"
echo "== ferry sync file://$published $synced --cache $out/sync-cache; ferry verify it"
"$ferry" sync "file://$published" "$synced" --cache "$out/sync-cache"
"$ferry" verify "$synced"
# v2: a few images change (two re-encoded, one deleted, one added), the
# dataset is packed again (splits kept from v1's output), published, and the
# same cache + view synced: only what changed moves.
v2src="$out/dataset-v2"
rm -rf "$v2src" "$out/tfrecord-v2"
cp -a samples/dataset "$v2src"
echo "== v2: re-encode $v2src/cat/cat_001.png and coffee/coffee_001.png (JPEG q80), delete cat/cat_002.png, add cat/cat_new.jpg"
"$ferry" convert -q "$v2src/cat/cat_001.png" "$v2src/cat/cat_001.jpg" --quality 80
"$ferry" convert -q "$v2src/coffee/coffee_001.png" "$v2src/coffee/coffee_001.jpg" --quality 80
rm "$v2src/cat/cat_001.png" "$v2src/coffee/coffee_001.png" "$v2src/cat/cat_002.png"
"$ferry" convert -q "$v2src/cat/cat_003.png" "$v2src/cat/cat_new.jpg" --size 200 --quality 85
echo "== ferry pack $v2src $out/tfrecord-v2 --size 128 --shard-records 16 --previous $out/tfrecord"
"$ferry" pack -q "$v2src" "$out/tfrecord-v2" --size 128 --shard-records 16 -j 2 \
  --previous "$out/tfrecord"
"$ferry" verify "$out/tfrecord-v2" --deep -j 2
echo "== ferry publish $out/tfrecord-v2 file://$published -m 'main job v2' --tag v2"
"$ferry" publish "$out/tfrecord-v2" "file://$published" -m "main job v2" --tag v2
"$ferry" log "file://$published"
echo "== ferry sync file://$published $synced --cache $out/sync-cache (v1 -> v2); ferry verify it"
"$ferry" sync --json "file://$published" "$synced" --cache "$out/sync-cache" > "$out/sync-v2.json"
"$ferry" verify "$synced"
/usr/bin/python3 - "$out/sync-v2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"   v2: {d['files']} files, {d['bytes']} bytes; moved {d['objects_fetched']} objects, "
      f"{d['bytes_fetched']} bytes ({100.0 * d['bytes_fetched'] / max(1, d['bytes']):.1f}% of the "
      f"dataset), {d['files_cached']} files already in the cache, {d['requests']} requests")
PY
echo "main job: OK"
