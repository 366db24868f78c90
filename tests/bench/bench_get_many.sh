#!/usr/bin/env bash
# Many small objects: COUNT (default 10000) objects of 20-200 KB (sizes from
# a fixed seed, incompressible bytes) served by the test nginx behind
# latency-proxy (DELAY_MS one way, default 10: a 20 ms round trip, as a cloud
# bucket's), downloaded by
#   ferry get (every object's URL in one command: an http(s) remote has no
#             listing, so there is no -R here; files synced by one syncfs
#             per batch before their renames), and with --no-fsync,
#   aria2c -j16 -i LIST,
#   rclone copy --transfers 16 (http remote, --files-from, --no-traverse),
#   aria2c + sync, rclone + sync (the tool, then `sync -f OUT`, a syncfs,
#             timed together: durable as ferry's files),
# on each link of LINKS (default "loopback 200mbit": the machine's own
# loopback, and a slowlink namespace at 200 Mbit/s). latency-proxy runs in
# the namespace, so every byte crosses its limited loopback twice (nginx ->
# proxy -> client): `400mbit` carries a 200 Mbit/s link's worth of payload. ROUNDS (default 3)
# interleaved rounds; prints the median wall time of each, the ratios
# (anchor / ferry: above 1 ferry is faster; the anchors that sync nothing
# against ferry --no-fsync, the "+ sync" ones against ferry) and every
# tool's peak RSS. Each
# run's output is checked (file count and bytes; round 1: every byte).
# FERRY_BASE=other/ferry also runs that build in the same rounds
# (before/after); ANCHORS="aria2 rclone aria2sync rclonesync" (default)
# picks the anchors.
# Usage: bench_get_many.sh FERRY       (root: slowlink needs it)
set -euo pipefail
ferry=$(readlink -f "$1")
count=${COUNT:-10000} rounds=${ROUNDS:-3} delay=${DELAY_MS:-10}
links=${LINKS:-loopback 200mbit} anchors=${ANCHORS-aria2 rclone aria2sync rclonesync}
base=${FERRY_BASE:+$(readlink -f "$FERRY_BASE")}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/bench-get-many.XXXXXX)
source "$here/benchlib.sh"
source "$here/netlib.sh"
trap 'net_stop; rm -rf "$work"' EXIT

objects=$work/objects
make_objects "$objects" "$count"
total_bytes=$objects_bytes
( cd "$objects" && ls ) > "$work/keys"
echo "$count objects, $total_bytes bytes; round trip $((2 * delay)) ms; load $(cut -d' ' -f1-3 /proc/loadavg)"

out=$work/out
# check NAME ROUND: the output is all there (round 1: byte for byte).
check() {
  local n b
  n=$(find "$out" -type f | wc -l)
  b=$(find "$out" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
  if [ "$n" != "$count" ] || [ "$b" != "$total_bytes" ]; then
    echo "  $1: got $n files, $b bytes (want $count, $total_bytes): $(tail -c 300 "$work/$1.err")" >&2
    failed[$1]=1
  elif [ "$2" = 1 ] && ! diff -rq "$objects" "$out" > /dev/null; then
    echo "  $1: output differs from the objects" >&2
    failed[$1]=1
  fi
  rm -rf "$out"
  mkdir -p "$out"
}
declare -A failed
declare -A title=([base]="ferry get (FERRY_BASE)" [aria2]="aria2c -j16"
  [rclone]="rclone copy --transfers 16" [aria2sync]="aria2c -j16 + sync"
  [rclonesync]="rclone copy + sync" [nofsync]="ferry get --no-fsync")
# Each anchor is compared with the ferry run that is as durable.
declare -A against=([base]=ferry [aria2]=nofsync [rclone]=nofsync
  [aria2sync]=ferry [rclonesync]=ferry)
report() {  # LINK
  local f fm t m vs
  f=ferry_$1 fm=$(median "${walls[ferry_$1]}")
  echo "$count objects, $1, $((2 * delay)) ms RTT (median of $rounds; load $(cut -d' ' -f1-3 /proc/loadavg)):"
  printf '  %-28s %8s ms  peak RSS %6s KiB%s\n' "ferry get" "$fm" "${rss[$f]}" "${failed[$f]:+  FAILED}"
  for t in nofsync ${base:+base} $anchors; do
    m=$(median "${walls[${t}_$1]}")
    vs=${against[$t]:-ferry}
    printf '  %-28s %8s ms  peak RSS %6s KiB  ratio %sx%s%s\n' "${title[$t]}" "$m" "${rss[${t}_$1]}" \
      "$(echo "scale=2; $m / $(median "${walls[${vs}_$1]}")" | bc)" \
      "$([ "$t" = nofsync ] || echo " (vs ${title[$vs]:-ferry get})")" "${failed[${t}_$1]:+  FAILED}"
  done
  for t in ferry nofsync ${base:+base} $anchors; do echo "  walls $t:${walls[${t}_$1]}"; done
}

for link in $links; do
  net_start "$link"
  mkdir -p "$FERRY_TEST_HTTP_ROOT/small"
  cp -al "$objects/." "$FERRY_TEST_HTTP_ROOT/small/"
  net_latency "${FERRY_TEST_HTTP_URL##*:}" "$delay"
  urls=()
  while read -r k; do urls+=("$lurl/small/$k"); done < "$work/keys"
  sed "s|^|$lurl/small/|" "$work/keys" > "$work/urls"
  rm -rf "$out"; mkdir -p "$out"
  for round in $(seq "$rounds"); do
    run "ferry_$link" "${in[@]}" "$ferry" get -q --connections 16 "${urls[@]}" "$out/"
    check "ferry_$link" "$round"
    run "nofsync_$link" "${in[@]}" "$ferry" get -q --no-fsync --connections 16 "${urls[@]}" "$out/"
    check "nofsync_$link" "$round"
    if [ -n "$base" ]; then
      run "base_$link" "${in[@]}" "$base" get -q --connections 16 "${urls[@]}" "$out/"
      check "base_$link" "$round"
    fi
    case " $anchors " in *" aria2 "*)
      run "aria2_$link" "${in[@]}" aria2c -q -j16 --file-allocation=none -d "$out" -i "$work/urls"
      check "aria2_$link" "$round" ;;
    esac
    case " $anchors " in *" rclone "*)
      run "rclone_$link" "${in[@]}" rclone copy --transfers 16 --http-url "$lurl/small/" \
        --files-from "$work/keys" --no-traverse :http: "$out"
      check "rclone_$link" "$round" ;;
    esac
    case " $anchors " in *" aria2sync "*)
      run "aria2sync_$link" "${in[@]}" bash -c 'aria2c -q -j16 --file-allocation=none -d "$1" \
        -i "$2" && sync -f "$1"' - "$out" "$work/urls"
      check "aria2sync_$link" "$round" ;;
    esac
    case " $anchors " in *" rclonesync "*)
      run "rclonesync_$link" "${in[@]}" bash -c 'rclone copy --transfers 16 --http-url "$1" \
        --files-from "$2" --no-traverse :http: "$3" && sync -f "$3"' - "$lurl/small/" \
        "$work/keys" "$out"
      check "rclonesync_$link" "$round" ;;
    esac
  done
  net_stop
  report "$link"
done
