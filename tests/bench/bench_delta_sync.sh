#!/usr/bin/env bash
# ferry sync's delta path (issue 13 "Speed", docs/delta.md "Sync side")
# against an rsync daemon and against ferry sync of whole objects, side by
# side in one run.
# The tree: SHARDS (default 12) shards of 16 MB of length-prefixed
# incompressible records and SMALL (default 200) files of 20-200 KB. v2 edits
# CHANGED (default 6) shards as a new dataset version does: one record
# relabelled (64 bytes rewritten in place), one removed and one of 50-150 KB
# added (everything after them shifts); 2% of the small files rewritten;
# dataset.json changed. The novel bytes (bytes of v2 that v1 does not hold:
# new records, relabels, rewritten files) are printed.
# On each link of LINKS (default "200mbit"; "200mbit+20ms" puts
# latency-proxy, 10 ms each way, in front of nginx and the rsync daemon):
#   ferry deltas  http://nginx/bucket@v1 then @v2 (ferry publish --tag v1/v2:
#                 signatures and deltas),
#   ferry blocks  the same bucket copied without .ferry/deltas/: block reuse
#                 (each listed delta is one 404, then the object's signature
#                 and the ranges DEST's v1 file lacks),
#   ferry whole   the bucket without deltas and signatures (two 404s, then
#                 the whole object),
#   rsync daemon  rsync -a --delete, modules v1 and v2.
# Timed: the incremental v1 -> v2 (DEST synced to v1 untimed before, rsync's
# DEST a cp -a of v1). Bytes: payload (nginx's body bytes sent; rsync --stats'
# "Total bytes received") and on the wire (the link namespace's lo rx bytes:
# every packet both ways, headers included; not on `loopback`, which other
# processes share; with +20ms every byte also passes latency-proxy, so lo
# counts it twice: compare within one link). ROUNDS (default 3) interleaved rounds: medians, ratios
# (rsync / ferry wall: above 1 ferry is faster; bytes / novel bytes), the
# load average. Every DEST is compared with v2 after its run.
# Usage: bench_delta_sync.sh FERRY       (root: slowlink needs it)
set -euo pipefail
ferry=$(readlink -f "$1")
shards=${SHARDS:-12} changed=${CHANGED:-6} small=${SMALL:-200}
rounds=${ROUNDS:-3} links=${LINKS:-200mbit}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/bench-delta-sync.XXXXXX)
chmod 755 "$work"
source "$here/benchlib.sh"
source "$here/netlib.sh"
own_pids=()
own_stop() {
  local p
  for p in "${own_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${own_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  own_pids=()
  if [ -f "$work/nginx.pid" ]; then
    kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    for _ in $(seq 50); do [ -f "$work/nginx.pid" ] || break; sleep 0.1; done
  fi
}
trap 'own_stop; net_stop; rm -rf "$work"' EXIT
export FERRY_CACHE=$work/unused-cache
ratio() { echo "scale=3; $1 / $2" | bc; }

# The trees; prints the novel bytes. v1's files are dated two hours back
# (rsync's size+time check sees v2's rewritten files).
novel=$(/usr/bin/python3 - "$work/v1" "$work/v2" "$shards" "$changed" "$small" <<'PY'
import os, random, shutil, sys, time
v1, v2 = sys.argv[1], sys.argv[2]
n_shards, n_changed, n_small = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
r = random.Random(13)
def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
def record():
    n = r.randint(50000, 150000)
    return n.to_bytes(8, "little") + os.urandom(n)
shard_recs = []
for i in range(n_shards):
    recs, size = [], 0
    while size < 16 << 20:
        recs.append(record())
        size += len(recs[-1])
    shard_recs.append(recs)
    write(f"{v1}/shards/train-{i:05d}-of-{n_shards:05d}.tar", b"".join(recs))
for i in range(n_small):
    write(f"{v1}/small/{i:05d}.bin", os.urandom(r.randint(20000, 200000)))
write(f"{v1}/dataset.json", b'{"name": "bench", "version": 1}\n')
old = time.time() - 7200
for root, dirs, files in os.walk(v1):
    for f in files:
        os.utime(os.path.join(root, f), (old, old))
shutil.copytree(v1, v2)
novel = 0
for i in range(0, n_shards, max(1, n_shards // max(1, n_changed)))[:n_changed]:
    recs = list(shard_recs[i])
    a = r.randrange(len(recs))                # relabelled: 64 bytes in place
    rec = bytearray(recs[a]); at = r.randrange(8, len(rec) - 64)
    rec[at:at + 64] = os.urandom(64); recs[a] = bytes(rec); novel += 64
    del recs[r.randrange(len(recs))]          # removed
    new = record(); recs.insert(r.randrange(len(recs)), new); novel += len(new)
    write(f"{v2}/shards/train-{i:05d}-of-{n_shards:05d}.tar", b"".join(recs))
for i in r.sample(range(n_small), max(1, n_small // 50)):
    data = os.urandom(r.randint(20000, 200000)); novel += len(data)
    write(f"{v2}/small/{i:05d}.bin", data)
j = b'{"name": "bench", "version": 2}\n'; novel += len(j)
write(f"{v2}/dataset.json", j)
print(novel)
PY
)
tree_bytes() { find "$1" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}'; }
echo "v1: $(find "$work/v1" -type f | wc -l) files, $(tree_bytes "$work/v1") bytes;" \
  "v2: $(tree_bytes "$work/v2") bytes, $changed of $shards shards edited; novel bytes: $novel"
www=$work/www
mkdir -p "$www"
fast=()
command -v eatmydata > /dev/null && fast=(eatmydata)
for v in v1 v2; do
  t0=$(date +%s%N)
  "${fast[@]}" "$ferry" publish "$work/$v" "file://$www/bucket" --tag "$v" \
    --cache "$work/publish-cache" --json > "$work/publish-$v.json"
  echo "ferry publish $v: $(( ($(date +%s%N) - t0) / 1000000 )) ms${fast:+ (eatmydata)}:" \
    "$(/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["deltas_uploaded"], "deltas,", d["delta_bytes"], "bytes")' "$work/publish-$v.json")"
done
cp -al "$www/bucket" "$www/blocks"
rm -rf "$www/blocks/.ferry/deltas"
cp -al "$www/blocks" "$www/whole"
rm -rf "$www/whole/.ferry/sigs"

start_own() {
  local nport rport
  nport=$(free_port) rport=$(free_port)
  while [ "$rport" = "$nport" ]; do rport=$(free_port); done
  cat > "$work/nginx.conf" <<CONF
user root root;
daemon on;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 1024; }
http {
  log_format bytes '\$request\t\$status\t\$body_bytes_sent';
  access_log $work/access.log bytes;
  client_body_temp_path $work/nginx-tmp;
  default_type application/octet-stream;
  sendfile on;
  server {
    listen 127.0.0.1:$nport;
    root $www;
    etag on;
  }
}
CONF
  mkdir -p "$work/nginx-tmp"
  : > "$work/access.log"
  "${in[@]}" nginx -c "$work/nginx.conf" -p "$work" -e "$work/nginx-error.log"
  wait_port "$nport" || { echo "nginx did not start" >&2; exit 1; }
  http_url=http://127.0.0.1:$nport
  cat > "$work/rsyncd.conf" <<CONF
use chroot = no
uid = root
gid = root
pid file = $work/rsyncd.pid
[v1]
  path = $work/v1
  read only = yes
[v2]
  path = $work/v2
  read only = yes
CONF
  "${in[@]}" rsync --daemon --no-detach --config="$work/rsyncd.conf" --port="$rport" \
    --address=127.0.0.1 --log-file="$work/rsyncd.log" &
  own_pids+=($!)
  wait_port "$rport" || { echo "rsync daemon did not start" >&2; exit 1; }
  rsync_url=rsync://127.0.0.1:$rport
}

log_mark() { log_at=$(stat -c %s "$work/access.log"); }
log_bytes() { tail -c +"$((log_at + 1))" "$work/access.log" | awk -F'\t' '{s += $3} END {print s + 0}'; }
log_requests() { tail -c +"$((log_at + 1))" "$work/access.log" | wc -l; }
lo_rx() {  # the namespace's lo: received bytes so far
  if [ ${#in[@]} -eq 0 ]; then echo 0; return; fi
  "${in[@]}" awk '$1 == "lo:" {print $2}' /proc/net/dev
}

declare -A failed bytes_of wire_of reqs
add() { eval "$1[\$2]=\"\${$1[\$2]:-} \$3\""; }
check() {  # NAME DEST
  if ! diff -r -x '.ferry-sync*' -x .ferry-view.lock "$work/v2" "$2" > "$work/diff.out" 2>&1; then
    echo "  $1: $2 differs from v2: $(head -c 300 "$work/diff.out")" >&2
    failed[$1]=1
  fi
}

ferry_inc() {  # NAME BUCKET
  local d=$work/dest-$1 c=$work/cache-$1 w0
  rm -rf "$d" "$work/.dest-$1.ferry-views" "$c"
  "${in[@]}" "$ferry" sync -q "$http_url/$2@v1" "$d" --cache "$c"
  log_mark
  w0=$(lo_rx)
  run "$1" "${in[@]}" bash -c '"$1" sync --json "$2" "$3" --cache "$4" > "$5"' _ \
    "$ferry" "$http_url/$2@v2" "$d" "$c" "$work/$1.json"
  add wire_of "$1" "$(( $(lo_rx) - w0 ))"
  add bytes_of "$1" "$(log_bytes)"
  reqs[$1]=$(log_requests)
  check "$1" "$d"
}
rsync_inc() {  # NAME
  local d=$work/dest-$1 w0
  rm -rf "$d"
  cp -a "$work/v1" "$d"
  w0=$(lo_rx)
  run "$1" "${in[@]}" bash -c 'rsync -a --delete --stats "$1/" "$2/" > "$3"' _ \
    "$rsync_url/v2" "$d" "$work/rsync.out"
  add wire_of "$1" "$(( $(lo_rx) - w0 ))"
  add bytes_of "$1" "$(sed -n 's/^Total bytes received: //p' "$work/rsync.out" | tr -d ,)"
  check "$1" "$d"
}

bench_link() {  # LINK
  local link=$1 rate=${1%%+*} r l
  net_start "$rate"
  start_own
  if [ "$link" != "$rate" ]; then
    net_latency "${http_url##*:}" 10; http_url=$lurl
    net_latency "${rsync_url##*:}" 10; rsync_url=rsync://127.0.0.1:${lurl##*:}
  fi
  for r in $(seq "$rounds"); do
    ferry_inc "deltas_$link" bucket
    rsync_inc "rsync_$link"
    ferry_inc "blocks_$link" blocks
    ferry_inc "whole_$link" whole
  done
  own_stop
  net_stop
  l=$link
  local t name fm rm
  echo "== $l, incremental v1 -> v2 (median of $rounds; load $(cut -d' ' -f1-3 /proc/loadavg)); novel $novel bytes"
  for t in deltas rsync blocks whole; do
    case $t in deltas) name="ferry deltas" ;; rsync) name="rsync daemon" ;;
      blocks) name="ferry blocks" ;; whole) name="ferry whole" ;; esac
    printf '  %-13s %7s ms  payload %11s bytes (%7sx novel)  wire %11s bytes  peak RSS %7s KiB%s\n' \
      "$name" "$(median "${walls[${t}_$l]}")" "$(median "${bytes_of[${t}_$l]}")" \
      "$(ratio "$(median "${bytes_of[${t}_$l]}")" "$novel")" "$(median "${wire_of[${t}_$l]}")" \
      "${rss[${t}_$l]}" "${failed[${t}_$l]:+  FAILED}"
  done
  fm=$(median "${walls[deltas_$l]}") rm=$(median "${walls[rsync_$l]}")
  echo "  wall ferry deltas / rsync: $(ratio "$fm" "$rm") (target <= 1.2); blocks / rsync:" \
    "$(ratio "$(median "${walls[blocks_$l]}")" "$rm"); whole / rsync: $(ratio "$(median "${walls[whole_$l]}")" "$rm")"
  echo "  payload ferry deltas / rsync: $(ratio "$(median "${bytes_of[deltas_$l]}")" "$(median "${bytes_of[rsync_$l]}")");" \
    "wire: $(ratio "$(median "${wire_of[deltas_$l]}")" "$(median "${wire_of[rsync_$l]}")")"
  echo "  ferry's requests: deltas ${reqs[deltas_$l]}, blocks ${reqs[blocks_$l]}, whole ${reqs[whole_$l]}"
  for t in deltas blocks; do
    echo "  ferry $t' paths: $(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paths"])' "$work/${t}_$l.json")"
  done
  for t in deltas rsync blocks whole; do echo "  walls $t:${walls[${t}_$l]}"; done
}

for link in $links; do bench_link "$link"; done
