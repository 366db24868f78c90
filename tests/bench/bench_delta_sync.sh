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
#   rsync daemon  rsync -a --delete, modules v1 and v2;
# and signature only, v0 -> v2 (v0: v1 with the same shards edited another
# way, published first, so v2's objects list deltas from v1's only):
#   ferry blocks  http://nginx/bucket@v0 then @v2: block reuse from DEST's
#                 v0 files (the signature and the ranges they lack),
#   zsync         for each file v0 and v2 differ in, zsync -i DEST's v0 file
#                 (a cp -a of v0) from a zsyncmake control file of the v2
#                 file on the same nginx.
# And over S3 (S3=0 leaves it out): the same bucket copied into s3rver
# (aws s3 cp; ferry talks to s3rver directly, not through the signature
# proxy, which would carry every byte over lo twice), ferry deltas v1 -> v2
# and signature only v0 -> v2 from s3://ferry-test/bucket: wall, wire,
# ferry's bytes fetched (--json: s3rver logs no exact sizes) and the requests
# s3rver logged, by kind.
# Timed: the incremental v1 -> v2 and v0 -> v2 (DEST synced to v1 or v0
# untimed before, rsync's and zsync's DEST a cp -a of v1 or v0). The kinds of
# requests (ref, manifest, delta, signature, object, zsync-control, range,
# whole) with their body and header bytes (nginx's $request_length +
# $bytes_sent - $body_bytes_sent), the wire bytes left for TCP/IP, and the
# deltas' literal and command bytes (last round) are printed. Bytes: payload (nginx's body bytes sent; rsync --stats'
# "Total bytes received") and on the wire (the link namespace's lo rx bytes:
# every packet both ways, headers included; not on `loopback`, which other
# processes share; with +20ms every byte also passes latency-proxy, so lo
# counts it twice: compare within one link). ROUNDS (default 3) interleaved rounds: medians, ratios
# (rsync / ferry wall: above 1 ferry is faster; bytes / novel bytes), the
# load average. Every DEST is compared with v2 after its run.
# CASES (default "deltas rsync blocks whole sigonly zsync") picks the timed
# cases; FERRY_FLAGS adds options to every timed ferry sync.
# Usage: bench_delta_sync.sh FERRY       (root: slowlink needs it)
set -euo pipefail
ferry=$(readlink -f "$1")
shards=${SHARDS:-12} changed=${CHANGED:-6} small=${SMALL:-200}
rounds=${ROUNDS:-3} links=${LINKS:-200mbit} s3=${S3:-1}
cases=" ${CASES:-deltas rsync blocks whole sigonly zsync} "
read -r -a ferry_flags <<< "${FERRY_FLAGS:-}"
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
  nginx_stop
}
trap 'own_stop; net_stop; rm -rf "$work"' EXIT
export FERRY_CACHE=$work/unused-cache
ratio() { echo "scale=3; $1 / $2" | bc; }

# The trees; prints the novel bytes of v2 against v1 and against v0, and
# those of v1 -> v2 in the shards. v0 is
# v1 with the same shards edited the other way (its own relabel, removal and
# insert) and 2% of the small files different: v2's objects list deltas from
# v1's only, so v0 -> v2 has no delta to use. Novel bytes against a version:
# v2's records it lacks (by record) + the bytes a relabel changed + the
# small files and dataset.json that differ. Older versions' files are dated
# back (rsync's size+time check sees v2's rewritten files).
read -r novel novel0 novel_shards < <(/usr/bin/python3 - "$work/v0" "$work/v1" "$work/v2" "$shards" "$changed" "$small" <<'PY'
import os, random, sys, time
v0, v1, v2 = sys.argv[1], sys.argv[2], sys.argv[3]
n_shards, n_changed, n_small = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
r = random.Random(13)
ids = iter(range(1 << 40))
def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
def record():
    n = r.randint(50000, 150000)
    return (next(ids), n.to_bytes(8, "little") + os.urandom(n))
def edit(recs):  # one relabelled (64 bytes in place), one removed, one added
    recs = list(recs)
    a = r.randrange(len(recs))
    i, rec = recs[a]; rec = bytearray(rec); at = r.randrange(8, len(rec) - 64)
    rec[at:at + 64] = os.urandom(64); recs[a] = (i, bytes(rec))
    del recs[r.randrange(len(recs))]
    recs.insert(r.randrange(len(recs)), record())
    return recs
def novel_vs(old, new):  # bytes of new's records old lacks
    have = dict(old); n = 0
    for i, rec in new:
        o = have.get(i)
        if o is None:
            n += len(rec)
        elif o != rec:
            n += sum(x != y for x, y in zip(o, rec))
    return n
name = lambda i: f"shards/train-{i:05d}-of-{n_shards:05d}.tar"
edited = list(range(0, n_shards, max(1, n_shards // max(1, n_changed))))[:n_changed]
small = {i: os.urandom(r.randint(20000, 200000)) for i in range(n_small)}
tree = {v: {} for v in (v0, v1, v2)}
novel = novel0 = 0
for i in range(n_shards):
    recs, size = [], 0
    while size < 16 << 20:
        recs.append(record())
        size += len(recs[-1][1])
    t = {v0: recs, v1: recs, v2: recs}
    if i in edited:
        t[v0], t[v2] = edit(recs), edit(recs)
        novel += novel_vs(recs, t[v2])
        novel0 += novel_vs(t[v0], t[v2])
    for v in (v0, v1, v2):
        write(f"{v}/{name(i)}", b"".join(rec for _, rec in t[v]))
novel_shards = novel
differ = {v: set(r.sample(range(n_small), max(1, n_small // 50))) for v in (v0, v2)}
for v in (v0, v1, v2):
    for i in range(n_small):
        data = small[i]
        if i in differ.get(v, ()):
            data = os.urandom(r.randint(20000, 200000))
            if v == v2: novel += len(data)
        if v == v2 and i in differ[v0] | differ[v2]: novel0 += len(data)
        write(f"{v}/small/{i:05d}.bin", data)
for n, v in enumerate((v0, v1, v2)):
    j = b'{"name": "bench", "version": %d}\n' % n
    write(f"{v}/dataset.json", j)
novel += len(j); novel0 += len(j)
for n, v in enumerate((v0, v1)):
    old = time.time() - 7200 * (2 - n)
    for root, dirs, files in os.walk(v):
        for f in files:
            os.utime(os.path.join(root, f), (old, old))
print(novel, novel0, novel_shards)
PY
)
[ -n "${novel0:-}" ] || { echo "making the trees failed" >&2; exit 1; }
tree_bytes() { find "$1" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}'; }
echo "v1: $(find "$work/v1" -type f | wc -l) files, $(tree_bytes "$work/v1") bytes;" \
  "v2: $(tree_bytes "$work/v2") bytes, $changed of $shards shards edited; novel bytes: $novel" \
  "(of them in shards: $novel_shards; against v0: $novel0)"
www=$work/www
mkdir -p "$www"
fast=()
command -v eatmydata > /dev/null && fast=(eatmydata)
for v in v0 v1 v2; do
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
# zsync's control files for the files v0 and v2 differ in (zsyncmake's own
# block size; URLs relative to the control file), beside hard links of them.
(cd "$work/v2" && find . -type f | sort) | while read -r f; do
  cmp -s "$work/v0/$f" "$work/v2/$f" && continue
  mkdir -p "$(dirname "$www/zs/$f")"
  ln "$work/v2/$f" "$www/zs/$f"
  (cd "$(dirname "$www/zs/$f")" && zsyncmake -u "$(basename "$f")" -o "$(basename "$f").zsync" "$(basename "$f")")
  echo "${f#./}"
done > "$work/zsync-files"
echo "zsync: $(wc -l < "$work/zsync-files") files differ v0 -> v2 ($(cat "$work/zsync-files" | (cd "$work/v2" && xargs du -cb | tail -1 | cut -f1)) bytes);" \
  "control files $(find "$www/zs" -name '*.zsync' -printf '%s\n' | awk '{s += $1} END {print s + 0}') bytes"

start_own() {
  local nport rport
  nport=$(free_port) rport=$(free_port)
  while [ "$rport" = "$nport" ]; do rport=$(free_port); done
  nginx_start "$nport" "$www"
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

# The .ferry/deltas/ of an access log: their bytes, and decompressed: the
# rdiff header, literal bytes, command bytes (librsync's prototab: ops
# 0x01-0x40 literal of that length; 0x41-0x44 literal, length of 1/2/4/8
# bytes; 0x45-0x54 copy, offset and length of 1/2/4/8 bytes each; 0 end).
delta_parts() {
  awk -F'\t' '{split($1, q, " "); if (q[2] ~ /\/\.ferry\/deltas\//) print q[2]}' "$1" |
    sed "s|^/[^/]*/|$www/bucket/|" | /usr/bin/python3 -c '
import subprocess, sys
z = lit = cmd = hdr = n = 0
for p in sys.stdin.read().split():
    raw = open(p, "rb").read(); z += len(raw); n += 1
    d = subprocess.run(["zstd", "-dc"], input=raw, capture_output=True, check=True).stdout
    hdr += 4; i = 4
    while i < len(d):
        op = d[i]; i += 1; cmd += 1
        if op == 0: break
        if op <= 0x40: lit += op; i += op; continue
        if op <= 0x44:
            w = 1 << (op - 0x41); k = int.from_bytes(d[i:i + w], "big")
            cmd += w; lit += k; i += w + k; continue
        a, b = 1 << ((op - 0x45) // 4), 1 << ((op - 0x45) % 4)
        cmd += a + b; i += a + b
    assert i == len(d), p
print(f"{n} deltas, {z} bytes compressed; decompressed: {hdr} header, {lit} literal, {cmd} commands")'
}
declare -A failed bytes_of wire_of reqs retrans
add() { eval "$1[\$2]=\"\${$1[\$2]:-} \$3\""; }
check() {  # NAME DEST
  if ! diff -r -x '.ferry-sync*' -x .ferry-view.lock "$work/v2" "$2" > "$work/diff.out" 2>&1; then
    echo "  $1: $2 differs from v2: $(head -c 300 "$work/diff.out")" >&2
    failed[$1]=1
  fi
}

ferry_inc() {  # NAME URL [FROM (default v1)]: URL of a bucket, without @ref
  local d=$work/dest-$1 c=$work/cache-$1 w0 r0
  rm -rf "$d" "$work/.dest-$1.ferry-views" "$c"
  "${in[@]}" "$ferry" sync -q "$2@${3:-v1}" "$d" --cache "$c"
  access_mark
  s3_at=$(stat -c %s "$net_srv/s3rver.log" 2>/dev/null || echo 0)
  w0=$(lo_rx) r0=$(tcp_retrans)
  run "$1" "${in[@]}" bash -c '"$1" sync --json "$2" "$3" --cache "$4" "${@:6}" > "$5"' _ \
    "$ferry" "$2@v2" "$d" "$c" "$work/$1.json" "${ferry_flags[@]}"
  add wire_of "$1" "$(( $(lo_rx) - w0 ))"
  retrans[$1]=$(( $(tcp_retrans) - r0 ))
  if [ "${2#s3://}" != "$2" ]; then  # s3rver: ferry's bytes, its log's requests
    add bytes_of "$1" "$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bytes_fetched"])' "$work/$1.json")"
    s3_parts > "$work/$1.parts"
    reqs[$1]=$(awk '{s += $2} END {print s + 0}' "$work/$1.parts")
  else
    add bytes_of "$1" "$(access_bytes)"
    reqs[$1]=$(access_requests)
    access_parts > "$work/$1.parts"
    access_since > "$work/$1.access"
  fi
  check "$1" "$d"
}
zsync_inc() {  # NAME: the files v0 and v2 differ in, each zsync -i DEST's v0 file
  local d=$work/dest-$1 w0 r0
  rm -rf "$d"
  cp -a "$work/v0" "$d"
  access_mark
  w0=$(lo_rx) r0=$(tcp_retrans)
  run "$1" "${in[@]}" bash -c 'while read -r f; do
      zsync -q -i "$2/$f" -o "$2/$f.zsync-new" "$3/zs/$f.zsync" && mv "$2/$f.zsync-new" "$2/$f" || exit 1
    done < "$1"' _ "$work/zsync-files" "$d" "$http_url"
  add wire_of "$1" "$(( $(lo_rx) - w0 ))"
  retrans[$1]=$(( $(tcp_retrans) - r0 ))
  add bytes_of "$1" "$(access_bytes)"
  reqs[$1]=$(access_requests)
  access_parts > "$work/$1.parts"
  rm -f "$d"/*.zs-old "$d"/*/*.zs-old
  check "$1" "$d"
}
rsync_inc() {  # NAME
  local d=$work/dest-$1 w0 r0
  rm -rf "$d"
  cp -a "$work/v1" "$d"
  w0=$(lo_rx) r0=$(tcp_retrans)
  run "$1" "${in[@]}" bash -c 'rsync -a --delete --stats "$1/" "$2/" > "$3"' _ \
    "$rsync_url/v2" "$d" "$work/rsync.out"
  add wire_of "$1" "$(( $(lo_rx) - w0 ))"
  retrans[$1]=$(( $(tcp_retrans) - r0 ))
  add bytes_of "$1" "$(sed -n 's/^Total bytes received: //p' "$work/rsync.out" | tr -d ,)"
  check "$1" "$d"
}

# s3rver's log since s3_at (a line per response: "info: <key, its first 16
# characters cut> 206 5ms 1.2kb" once colours are removed), by kind of key:
# kind, count.
s3_parts() {
  tail -c +"$((s3_at + 1))" "$net_srv/s3rver.log" | sed 's/\x1b\[[0-9;]*m//g' | awk '
    $1 == "info:" && $3 ~ /^[0-9][0-9][0-9]$/ { u = $2; st = $3
      if (u ~ /\/\.ferry\/refs\//) k = "ref"
      else if (u ~ /\/\.ferry\/manifests\//) k = "manifest"
      else if (u ~ /\/\.ferry\/deltas\//) k = (st == 404 ? "delta-404" : "delta")
      else if (u ~ /\/\.ferry\/sigs\//) k = "signature"
      else if (u ~ /\/\.ferry\/objects\//) k = "object"
      else k = "other"
      n[k]++ }
    END { for (k in n) printf "%s %d\n", k, n[k] }' | sort
}
# s3rver (the servers' own, on the link) holds a copy of the bucket; ferry
# and aws talk to it directly with the tests' credentials.
s3_env() {  # URL
  export AWS_ACCESS_KEY_ID=$FERRY_TEST_S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$FERRY_TEST_S3_SECRET_KEY
  export AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1 AWS_PAGER=""
  export AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent
  unset AWS_SESSION_TOKEN AWS_PROFILE
  export AWS_ENDPOINT_URL=$1
}

want() { [[ $cases == *" $1 "* ]]; }  # CASE: in CASES
bench_link() {  # LINK
  local link=$1 rate=${1%%+*} r l s3_url
  net_start "$rate"
  start_own
  s3_url=$FERRY_TEST_S3RVER_URL
  if [ "$s3" = 1 ]; then
    s3_env "$s3_url"
    t0=$(date +%s%N)
    "${in[@]}" aws s3 cp --quiet --recursive "$www/bucket" "s3://$FERRY_TEST_S3_BUCKET/bucket/"
    echo "s3rver: the bucket copied in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  fi
  if [ "$link" != "$rate" ]; then
    net_latency "${http_url##*:}" 10; http_url=$lurl
    net_latency "${rsync_url##*:}" 10; rsync_url=rsync://127.0.0.1:${lurl##*:}
    if [ "$s3" = 1 ]; then net_latency "${s3_url##*:}" 10; s3_url=$lurl; fi
  fi
  [ "$s3" = 1 ] && s3_env "$s3_url"
  for r in $(seq "$rounds"); do
    want deltas && ferry_inc "deltas_$link" "$http_url/bucket"
    want rsync && rsync_inc "rsync_$link"
    want blocks && ferry_inc "blocks_$link" "$http_url/blocks"
    want whole && ferry_inc "whole_$link" "$http_url/whole"
    want sigonly && ferry_inc "sigonly_$link" "$http_url/bucket" v0
    want zsync && zsync_inc "zsync_$link"
    if [ "$s3" = 1 ]; then
      ferry_inc "s3deltas_$link" "s3://$FERRY_TEST_S3_BUCKET/bucket"
      ferry_inc "s3sigonly_$link" "s3://$FERRY_TEST_S3_BUCKET/bucket" v0
    fi
  done
  own_stop
  net_stop
  l=$link
  local t name fm rm
  if want deltas && want rsync && want blocks && want whole; then
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
  fi
  if want sigonly && want zsync; then
  echo "== $l, signature only v0 -> v2 (DEST at v0; v2 lists deltas from v1 only: block reuse from DEST's files;" \
    "zsync -i the v0 file of each of the $(wc -l < "$work/zsync-files") files that differ); novel $novel0 bytes"
  for t in sigonly zsync; do
    case $t in sigonly) name="ferry blocks" ;; zsync) name="zsync" ;; esac
    printf '  %-13s %7s ms  payload %11s bytes (%7sx novel)  wire %11s bytes  peak RSS %7s KiB  %s requests%s\n' \
      "$name" "$(median "${walls[${t}_$l]}")" "$(median "${bytes_of[${t}_$l]}")" \
      "$(ratio "$(median "${bytes_of[${t}_$l]}")" "$novel0")" "$(median "${wire_of[${t}_$l]}")" \
      "${rss[${t}_$l]}" "${reqs[${t}_$l]}" "${failed[${t}_$l]:+  FAILED}"
  done
  echo "  ferry / zsync: wire $(ratio "$(median "${wire_of[sigonly_$l]}")" "$(median "${wire_of[zsync_$l]}")") (target <= 1)," \
    "payload $(ratio "$(median "${bytes_of[sigonly_$l]}")" "$(median "${bytes_of[zsync_$l]}")")," \
    "wall $(ratio "$(median "${walls[sigonly_$l]}")" "$(median "${walls[zsync_$l]}")")"
  echo "  ferry's paths: $(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paths"])' "$work/sigonly_$l.json")"
  echo "  bytes by request (last round): kind requests body headers; wire - payload - headers = TCP/IP"
  for t in deltas sigonly zsync; do
    [ -f "$work/${t}_$l.parts" ] || continue
    awk -v t="$t" -v r="${retrans[${t}_$l]}" -v w="$(echo "${wire_of[${t}_$l]}" | awk '{print $NF}')" '
      { printf "    %-8s %-14s %4d %11d %8d\n", t, $1, $2, $3, $4; b += $3; h += $4 }
      END { printf "    %-8s %-14s %4s %11d %8d  TCP/IP %d (%d segments retransmitted)\n", t, "total", "", b, h, w - b - h, r }' \
      "$work/${t}_$l.parts"
  done
  fi
  want deltas && echo "  the deltas fetched (zstd -d, rdiff commands): $(delta_parts "$work/deltas_$l.access")"
  if [ "$s3" = 1 ]; then
    echo "== $l, S3 (s3rver, direct): bytes = ferry's --json bytes_fetched (deltas, signatures, ranges, objects)"
    for t in s3deltas s3sigonly; do
      case $t in s3deltas) name="deltas v1->v2" nv=$novel ;; s3sigonly) name="sig only v0->v2" nv=$novel0 ;; esac
      printf '  %-16s %7s ms  fetched %11s bytes (%7sx novel)  wire %11s bytes  peak RSS %7s KiB  %s requests%s\n' \
        "$name" "$(median "${walls[${t}_$l]}")" "$(median "${bytes_of[${t}_$l]}")" \
        "$(ratio "$(median "${bytes_of[${t}_$l]}")" "$nv")" "$(median "${wire_of[${t}_$l]}")" \
        "${rss[${t}_$l]}" "${reqs[${t}_$l]}" "${failed[${t}_$l]:+  FAILED}"
    done
    echo "  S3 / HTTP wall: deltas $(ratio "$(median "${walls[s3deltas_$l]}")" "$(median "${walls[deltas_$l]}")")," \
      "signature only $(ratio "$(median "${walls[s3sigonly_$l]}")" "$(median "${walls[sigonly_$l]}")");" \
      "wire: deltas $(ratio "$(median "${wire_of[s3deltas_$l]}")" "$(median "${wire_of[deltas_$l]}")")," \
      "signature only $(ratio "$(median "${wire_of[s3sigonly_$l]}")" "$(median "${wire_of[sigonly_$l]}")")"
    for t in s3deltas s3sigonly; do
      echo "  ferry $t' paths: $(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paths"])' "$work/${t}_$l.json")"
      echo "  $t requests by kind (s3rver's log, last round): $(tr '\n' ' ' < "$work/${t}_$l.parts")"
    done
  fi
  for t in deltas rsync blocks whole sigonly zsync ${s3:+s3deltas s3sigonly}; do
    [ -n "${walls[${t}_$l]:-}" ] && echo "  walls $t:${walls[${t}_$l]}"
  done
  return 0
}

for link in $links; do bench_link "$link"; done
