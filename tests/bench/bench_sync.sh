#!/usr/bin/env bash
# ferry sync against its anchors, side by side in one run (issue 12 "Speed").
# A v1 -> v2 tree: SMALL (default 2000) files of 20-200 KB and SHARDS
# (default 12) files of 16 MB of unique incompressible records; v2 rewrites
# 2%, adds 1% and deletes 1% of the small files and changes 3 shards (one
# record each). Served on each link of LINKS (default "loopback 200mbit":
# the machine's own loopback, and a slowlink namespace at 200 Mbit/s; add
# "200mbit+20ms" for latency-proxy's 20 ms round trip in front of nginx,
# s3rver and the rsync daemon) to
#   ferry sync   http://nginx/bucket@v1 then @v2 (ferry publish --tag v1/v2
#                into a file:// bucket nginx serves), --cache beside DEST,
#   rsync        an rsync daemon (modules v1, v2; rsync -a --delete),
#   rclone sync --transfers 16   an http remote (the plain trees, nginx
#                autoindex),
#   aws s3 sync --exact-timestamps  s3rver (the plain tree put there, then
#                changed to v2; without the flag it keeps a local file of the
#                same size unless it is newer: it missed the changed shards).
# Cases: cold (empty DEST and cache), incremental (DEST at v1 -> v2: wall and
# bytes over the wire: nginx's access log for ferry and rclone, rsync
# --stats' bytes received, the sizes of the files aws reports downloading),
# no-op (DEST at v2 again). ROUNDS (default 3) interleaved rounds; medians,
# ratios (anchor / ferry: above 1 ferry is faster), peak RSS, the load
# average. Every DEST is compared with its tree after the round's runs.
# ANCHORS (default "rsync rclone aws") picks the anchors; "rsyncsync" adds
# rsync followed by `sync -f DEST` (a syncfs), timed together: durable, as
# ferry sync is by default (FERRY_FLAGS=--no-fsync is like plain rsync).
# Usage: bench_sync.sh FERRY       (root: slowlink needs it)
# FERRY_FLAGS (e.g. --no-fsync: like the anchors, nothing synced to disk)
# are added to every ferry sync. FERRY_BASE=other/ferry also runs that build
# (its own cache and DEST, same bucket) in the same rounds: ratio base /
# ferry. WHOLE=1: ferry syncs whole files (issue 12's case), from a copy of
# the bucket without its deltas and signatures (.ferry/deltas, .ferry/sigs:
# each changed shard's delta and signature are a 404, then it is fetched
# whole), for FERRY_BASE too.
# NOOP_FILES=N (e.g. 100000): instead, the no-op on an N-file tree (files of
# 100-1000 bytes): ferry's request count (nginx's log) and wall vs rsync.
set -euo pipefail
ferry=$(readlink -f "$1")
base=${FERRY_BASE:+$(readlink -f "$FERRY_BASE")}
small=${SMALL:-2000} shards=${SHARDS:-12} rounds=${ROUNDS:-3}
links=${LINKS:-loopback 200mbit} anchors=${ANCHORS-rsync rclone aws}
noop_files=${NOOP_FILES:-}
read -r -a ferry_flags <<< "${FERRY_FLAGS:-}"
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/bench-sync.XXXXXX)
chmod 755 "$work"
source "$here/benchlib.sh"
source "$here/netlib.sh"
own_pids=()
own_stop() {
  local p
  for p in "${own_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${own_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  own_pids=()
  nginx_stop
}
trap 'own_stop; net_stop; rm -rf "$work"' EXIT
export FERRY_CACHE=$work/unused-cache
ratio() { printf "%.3f" "$(echo "scale=6; $1 / $2" | bc)"; }
m() { median "${walls[$1]}"; }

# The trees. v1's files are dated two hours back, so v2's rewritten files
# differ in mtime for rsync's and rclone's size+time checks.
make_trees() {
  /usr/bin/python3 - "$work/v1" "$work/v2" "$small" "$shards" "$noop_files" <<'PY'
import os, random, shutil, sys, time
v1, v2, n_small, n_shards = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
noop = int(sys.argv[5] or 0)
r = random.Random(12)
def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
def shard(path):  # 16 MB of length-prefixed unique records
    recs = []
    size = 0
    while size < 16 << 20:
        n = r.randint(50000, 150000)
        recs.append(n.to_bytes(8, "little") + os.urandom(n))
        size += n + 8
    write(path, b"".join(recs))
old = time.time() - 7200
if noop:
    for i in range(noop):
        write(f"{v1}/{i // 1000:03d}/{i:06d}.bin", os.urandom(r.randint(100, 1000)))
else:
    for i in range(n_small):
        write(f"{v1}/small/{i // 100:02d}/{i:05d}.bin", os.urandom(r.randint(20000, 200000)))
    for i in range(n_shards):
        shard(f"{v1}/shards/train-{i:05d}-of-{n_shards:05d}.tar")
    write(f"{v1}/dataset.json", b'{"name": "bench", "version": 1}\n')
for root, dirs, files in os.walk(v1):
    for f in files:
        os.utime(os.path.join(root, f), (old, old))
if noop:
    sys.exit(0)
shutil.copytree(v1, v2)  # copy2: same bytes and mtimes
names = [f"small/{i // 100:02d}/{i:05d}.bin" for i in range(n_small)]
r.shuffle(names)
k = max(1, n_small // 100)
for p in names[:2 * k]:                      # rewritten (2%)
    write(f"{v2}/{p}", os.urandom(r.randint(20000, 200000)))
for p in names[2 * k:3 * k]:                 # deleted (1%)
    os.remove(f"{v2}/{p}")
for i in range(k):                           # added (1%)
    write(f"{v2}/small/new/{i:05d}.bin", os.urandom(r.randint(20000, 200000)))
for i in range(min(3, n_shards)):            # 3 shards: one record each
    p = f"{v2}/shards/train-{i * 4 % n_shards:05d}-of-{n_shards:05d}.tar"
    with open(p, "r+b") as f:
        f.seek(r.randint(1 << 20, 15 << 20))
        f.write(os.urandom(100000))
write(f"{v2}/dataset.json", b'{"name": "bench", "version": 2}\n')
PY
}
make_trees
tree_bytes() { find "$1" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}'; }
v1_files=$(find "$work/v1" -type f | wc -l) v1_bytes=$(tree_bytes "$work/v1")
if [ -z "$noop_files" ]; then
  v2_files=$(find "$work/v2" -type f | wc -l) v2_bytes=$(tree_bytes "$work/v2")
  echo "v1: $v1_files files, $v1_bytes bytes; v2: $v2_files files, $v2_bytes bytes"
else
  echo "no-op tree: $v1_files files, $v1_bytes bytes"
fi
www=$work/www
mkdir -p "$www"
cp -al "$work/v1" "$www/plain-v1"
[ -n "$noop_files" ] || cp -al "$work/v2" "$www/plain-v2"
# Setup only (never a timed run): without fsync where eatmydata is installed
# (the file:// bucket syncs every object: 100,000 of them take minutes here).
fast=()
command -v eatmydata > /dev/null && fast=(eatmydata)
t0=$(date +%s%N)
"${fast[@]}" "$ferry" publish -q "$work/v1" "file://$www/bucket" --tag v1 --cache "$work/publish-cache"
echo "ferry publish v1: $(( ($(date +%s%N) - t0) / 1000000 )) ms${fast:+ (eatmydata)}"
[ -n "$noop_files" ] ||
  "${fast[@]}" "$ferry" publish -q "$work/v2" "file://$www/bucket" --tag v2 --cache "$work/publish-cache"
bucket_dir=bucket
if [ -n "${WHOLE:-}" ]; then
  cp -al "$www/bucket" "$www/whole"
  rm -rf "$www/whole/.ferry/deltas" "$www/whole/.ferry/sigs"
  bucket_dir=whole
fi

# Our own nginx (autoindex for rclone's http remote; one access log line per
# request with its body bytes) and rsync daemon, on the link.
start_own() {
  local nport rport
  nport=$(free_port) rport=$(free_port)
  while [ "$rport" = "$nport" ]; do rport=$(free_port); done
  nginx_start "$nport" "$www" "autoindex on;"
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

# check NAME DEST TREE: DEST equals TREE byte for byte.
declare -A failed
check() {
  if ! diff -r -x '.ferry-sync*' -x .ferry-view.lock "$3" "$2" > "$work/diff.out" 2>&1; then
    echo "  $1: $2 differs from $(basename "$3"): $(head -c 300 "$work/diff.out") $(tail -c 300 "$work/$1.err")" >&2
    failed[$1]=1
  fi
}

# Timed runs, each with its bytes: add NAME BYTES; on a slowlink also its
# wire bytes (lo rx: payload, headers, TCP/IP, retransmits) and retransmitted
# segments.
declare -A bytes_of wire_of retr_of
bench_run=$(declare -f run | tail -n +2)
eval "run_timed() $bench_run"
run() {  # NAME CMD...
  local w0 r0
  w0=$(lo_rx) r0=$(tcp_retrans)
  run_timed "$@"
  wire_of[$1]="${wire_of[$1]:-} $(( $(lo_rx) - w0 ))"
  retr_of[$1]="${retr_of[$1]:-} $(( $(tcp_retrans) - r0 ))"
}
add_bytes() { bytes_of[$1]="${bytes_of[$1]:-} $2"; }

ferry_sync() {  # NAME REF DEST [BINARY CACHE]
  access_mark
  run "$1" "${in[@]}" "${4:-$ferry}" sync -q "${ferry_flags[@]}" "$http_url/$bucket_dir@$2" "$3" \
    --cache "${5:-$work/ferry-cache}"
  add_bytes "$1" "$(access_bytes)"
  reqs[$1]=$(access_requests)
}
rsync_sync() {  # NAME MODULE DEST [sync]: with `sync`, then `sync -f DEST`, timed together
  run "$1" "${in[@]}" bash -c 'rsync -a --delete --stats "$1/" "$2/" > "$3" &&
    if [ -n "$4" ]; then sync -f "$2"; fi' _ "$rsync_url/$2" "$3" "$work/rsync.out" "${4:-}"
  add_bytes "$1" "$(sed -n 's/^Total bytes received: //p' "$work/rsync.out" | tr -d ,)"
}
rclone_sync() {  # NAME TREE DEST
  access_mark
  run "$1" "${in[@]}" rclone sync --transfers 16 --http-url "$http_url/$2/" :http: "$3"
  add_bytes "$1" "$(access_bytes)"
}
aws_sync() {  # NAME DEST
  run "$1" "${in[@]}" bash -c 'aws s3 sync --no-progress --exact-timestamps --delete "$1" "$2" > "$3"' _ \
    "s3://$bucket/plain/" "$2" "$work/aws.out"
  add_bytes "$1" "$(sed -n 's|^download: s3://[^ ]* to ||p' "$work/aws.out" |
    while read -r f; do stat -c %s "$f"; done | awk '{s += $1} END {print s + 0}')"
}
declare -A reqs

# s3rver's plain tree: v1 at the start of each round, v2 for the incremental
# (changed and added files put, deleted ones removed: only they get a new
# LastModified, as a real update would).
aws_env() {
  export AWS_ACCESS_KEY_ID=$FERRY_TEST_S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$FERRY_TEST_S3_SECRET_KEY
  export AWS_DEFAULT_REGION=us-east-1 AWS_CONFIG_FILE=$work/aws-config AWS_PAGER=""
  export AWS_SHARED_CREDENTIALS_FILE=$work/aws-credentials AWS_ENDPOINT_URL=$s3_url
  : > "$AWS_CONFIG_FILE"
  bucket=$FERRY_TEST_S3_BUCKET
}
# delta FROM TO DIR LIST: files of TO that are new or differ from FROM into
# DIR (hard links), paths of FROM missing in TO into LIST.
make_delta() {
  rm -rf "$3"; mkdir -p "$3"; : > "$4"
  (cd "$2" && find . -type f) | while read -r p; do
    cmp -s "$1/$p" "$2/$p" 2>/dev/null || { mkdir -p "$3/$(dirname "$p")"; ln "$2/$p" "$3/$p"; }
  done
  (cd "$1" && find . -type f) | while read -r p; do
    [ -e "$2/$p" ] || echo "${p#./}" >> "$4"
  done
}
s3_apply() {  # DIR LIST: put DIR's files, remove LIST's keys
  "${in[@]}" aws s3 cp --quiet --recursive "$1" "s3://$bucket/plain/"
  if [ -s "$2" ]; then
    /usr/bin/python3 -c 'import json,sys; print(json.dumps({"Objects":[{"Key":"plain/"+l.strip()} for l in open(sys.argv[1]) if l.strip()]}))' "$2" > "$work/delete.json"
    "${in[@]}" aws s3api delete-objects --bucket "$bucket" --delete "file://$work/delete.json" > /dev/null
  fi
}

has() { case " $anchors " in *" $1 "*) return 0 ;; esac; return 1; }

report() {  # LINK
  local l=$1 c t fm title
  echo "== $l (median of $rounds; load $(cut -d' ' -f1-3 /proc/loadavg))${WHOLE:+; ferry: whole files}"
  for c in cold inc noop; do
    fm=$(m "ferry_${c}_$l")
    printf '  %-5s %-28s %8s ms  %11s bytes  peak RSS %6s KiB%s\n' "$c" "ferry sync ${FERRY_FLAGS:-}" "$fm" \
      "$(median "${bytes_of[ferry_${c}_$l]:-0}")" "${rss[ferry_${c}_$l]}" "${failed[ferry_${c}_$l]:+  FAILED}"
    [ -z "$base" ] || printf '  %-5s %-28s %8s ms  %11s bytes  peak RSS %6s KiB  ratio %sx%s\n' "$c" \
      "FERRY_BASE" "$(m "base_${c}_$l")" "$(median "${bytes_of[base_${c}_$l]:-0}")" "${rss[base_${c}_$l]}" \
      "$(ratio "$(m "base_${c}_$l")" "$fm")" "${failed[base_${c}_$l]:+  FAILED}"
    for t in $anchors; do
      case $t in rsync) title="rsync daemon" ;; rsyncsync) title="rsync daemon + sync" ;;
        rclone) title="rclone sync --transfers 16" ;;
        aws) title="aws s3 sync" ;; esac
      printf '  %-5s %-28s %8s ms  %11s bytes  peak RSS %6s KiB  ratio %sx%s\n' "$c" "$title" \
        "$(m "${t}_${c}_$l")" "$(median "${bytes_of[${t}_${c}_$l]:-0}")" "${rss[${t}_${c}_$l]}" \
        "$(ratio "$(m "${t}_${c}_$l")" "$fm")" "${failed[${t}_${c}_$l]:+  FAILED}"
    done
  done
  echo "  ferry's requests: cold ${reqs[ferry_cold_$l]}, incremental ${reqs[ferry_inc_$l]}, no-op ${reqs[ferry_noop_$l]}"
  if [ "$l" != loopback ]; then
    echo "  on the wire (lo rx, median; lo MTU ${MTU:-65536}) and TCP segments retransmitted (median):"
    for c in cold inc; do
      for t in ferry ${base:+base} $anchors; do
        printf '    %-5s %-7s %11s bytes  %6s retransmitted\n' "$c" "$t" \
          "$(median "${wire_of[${t}_${c}_$l]:-0}")" "$(median "${retr_of[${t}_${c}_$l]:-0}")"
      done
    done
  fi
  for c in cold inc noop; do
    for t in ferry ${base:+base} $anchors; do echo "  walls $t $c:${walls[${t}_${c}_$l]}"; done
  done
}

bench_link() {  # LINK
  local link=$1 rate=${1%%+*} r d
  net_start "$rate"
  start_own
  s3_url=$FERRY_TEST_S3RVER_URL
  if [ "$link" != "$rate" ]; then  # +20ms: latency-proxy in front of every server
    net_latency "${http_url##*:}" 10; http_url=$lurl
    net_latency "${s3_url##*:}" 10; s3_url=$lurl
    net_latency "${rsync_url##*:}" 10; rsync_url=rsync://127.0.0.1:${lurl##*:}
  fi
  if has aws; then
    aws_env
    make_delta "$work/v1" "$work/v2" "$work/delta-v2" "$work/delete-v2"
    make_delta "$work/v2" "$work/v1" "$work/delta-v1" "$work/delete-v1"
    "${in[@]}" aws s3 sync --quiet "$work/v1" "s3://$bucket/plain/"
  fi
  for r in $(seq "$rounds"); do
    d=$work/dest
    rm -rf "$d" "$work/.dest.ferry-views" "$work/ferry-cache"
    ferry_sync "ferry_cold_$link" v1 "$d"
    ferry_sync "ferry_inc_$link" v2 "$d"
    ferry_sync "ferry_noop_$link" v2 "$d"
    check "ferry_noop_$link" "$d" "$work/v2"
    if [ -n "$base" ]; then
      rm -rf "$d" "$work/.dest.ferry-views" "$work/base-cache"
      ferry_sync "base_cold_$link" v1 "$d" "$base" "$work/base-cache"
      ferry_sync "base_inc_$link" v2 "$d" "$base" "$work/base-cache"
      ferry_sync "base_noop_$link" v2 "$d" "$base" "$work/base-cache"
      check "base_noop_$link" "$d" "$work/v2"
      rm -rf "$d" "$work/.dest.ferry-views" "$work/base-cache"
    fi
    if has rsync; then
      rm -rf "$d"
      rsync_sync "rsync_cold_$link" v1 "$d"
      rsync_sync "rsync_inc_$link" v2 "$d"
      rsync_sync "rsync_noop_$link" v2 "$d"
      check "rsync_noop_$link" "$d" "$work/v2"
    fi
    if has rsyncsync; then
      rm -rf "$d"
      rsync_sync "rsyncsync_cold_$link" v1 "$d" sync
      rsync_sync "rsyncsync_inc_$link" v2 "$d" sync
      rsync_sync "rsyncsync_noop_$link" v2 "$d" sync
      check "rsyncsync_noop_$link" "$d" "$work/v2"
    fi
    if has rclone; then
      rm -rf "$d"
      rclone_sync "rclone_cold_$link" plain-v1 "$d"
      rclone_sync "rclone_inc_$link" plain-v2 "$d"
      rclone_sync "rclone_noop_$link" plain-v2 "$d"
      check "rclone_noop_$link" "$d" "$work/v2"
    fi
    if has aws; then
      rm -rf "$d"
      aws_sync "aws_cold_$link" "$d"
      s3_apply "$work/delta-v2" "$work/delete-v2"
      aws_sync "aws_inc_$link" "$d"
      aws_sync "aws_noop_$link" "$d"
      check "aws_noop_$link" "$d" "$work/v2"
      s3_apply "$work/delta-v1" "$work/delete-v1"
    fi
    rm -rf "$d"
  done
  own_stop
  net_stop
  report "$link"
}

# The no-op on a big tree: ferry (one request) vs rsync's walk of both sides.
bench_noop() {  # LINK
  local link=$1 d=$work/dest
  net_start "$link"
  start_own
  rm -rf "$d"
  "${in[@]}" "${fast[@]}" "$ferry" sync -q "${ferry_flags[@]}" "$http_url/bucket@v1" "$d" --cache "$work/ferry-cache"
  check ferry_noop "$d" "$work/v1"
  "${in[@]}" rsync -a "$rsync_url/v1/" "$d-rsync/"
  check rsync_noop "$d-rsync" "$work/v1"
  for r in $(seq "$rounds"); do
    ferry_sync "ferry_noop_$link" v1 "$d"
    run "rsync_noop_$link" "${in[@]}" rsync -a --delete "$rsync_url/v1/" "$d-rsync/"
  done
  own_stop
  net_stop
  echo "no-op sync of $v1_files files, $link (median of $rounds; load $(cut -d' ' -f1-3 /proc/loadavg)):"
  echo "  ferry sync   $(m "ferry_noop_$link") ms, ${reqs[ferry_noop_$link]} request(s), peak RSS ${rss[ferry_noop_$link]} KiB"
  echo "  rsync daemon $(m "rsync_noop_$link") ms, peak RSS ${rss[rsync_noop_$link]} KiB"
  echo "  ferry / rsync: $(ratio "$(m "ferry_noop_$link")" "$(m "rsync_noop_$link")") (target <= 0.3)"
  echo "  walls ferry:${walls[ferry_noop_$link]}; rsync:${walls[rsync_noop_$link]}"
}

for link in $links; do
  if [ -n "$noop_files" ]; then bench_noop "$link"; else bench_link "$link"; fi
done
