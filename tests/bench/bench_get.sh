#!/usr/bin/env bash
# One big object: a SIZE (default 1G) object (sparse on the server) served by
# the test nginx, downloaded by
#   ferry get (parallel ranged GETs, each part synced and journalled, the
#             file synced before its rename),
#   ferry get --no-fsync (the same, nothing synced: the journal is still
#             written),
#   aria2c -x16 -s16 -k1M (16 connections; no fsync),
#   curl (one connection; no fsync),
#   aria2c + sync, curl + sync (the tool, then `sync -f FILE`, a syncfs of
#             the file system, timed together: durable as ferry's file),
# on each link of LINKS (default "loopback 200mbit": the machine's own
# loopback, and a slowlink namespace at 200 Mbit/s). ROUNDS (default 3)
# interleaved rounds; prints each tool's median wall time, the ratios of
# like with like (anchor / ferry: above 1 ferry is faster): durable
# (curl + sync and aria2c + sync vs ferry) and not (curl and aria2c vs ferry
# --no-fsync), ferry's rate and every tool's
# peak RSS (/usr/bin/time %M), with the machine's load. Every output is
# checked (size; round 1: every byte). Many small objects:
# bench_get_many.sh.
# FERRY_BASE=other/ferry also runs that build in the same rounds.
# Usage: bench_get.sh FERRY       (root: slowlink needs it)
set -euo pipefail
ferry=$(readlink -f "$1")
size=${SIZE:-1G} rounds=${ROUNDS:-3} links=${LINKS:-loopback 200mbit}
base=${FERRY_BASE:+$(readlink -f "$FERRY_BASE")}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/bench-get.XXXXXX)
source "$here/benchlib.sh"
source "$here/netlib.sh"
trap 'net_stop; rm -rf "$work"' EXIT

out=$work/out
declare -A failed
# check NAME ROUND: the file is whole (round 1: all zeros, as served).
check() {
  local got
  got=$(stat -c %s "$out/big.bin" 2>/dev/null || echo 0)
  if [ "$got" != "$bytes" ]; then
    echo "  $1: got $got bytes (want $bytes): $(tail -c 300 "$work/$1.err")" >&2
    failed[$1]=1
  elif [ "$2" = 1 ] && ! cmp -s -n "$bytes" "$out/big.bin" /dev/zero; then
    echo "  $1: output differs from the object" >&2
    failed[$1]=1
  fi
  rm -rf "$out"
  mkdir -p "$out"
}

for link in $links; do
  net_start "$link"
  truncate -s "$size" "$FERRY_TEST_HTTP_ROOT/big.bin"
  bytes=$(stat -c %s "$FERRY_TEST_HTTP_ROOT/big.bin")
  url=$FERRY_TEST_HTTP_URL/big.bin
  echo "== $link: one object of $bytes bytes; load $(cut -d' ' -f1-3 /proc/loadavg)"
  tools="ferry nofsync${base:+ base} aria2 curl aria2sync curlsync"
  rm -rf "$out"; mkdir -p "$out"
  for r in $(seq "$rounds"); do
    for t in $tools; do
      case $t in
        ferry) run "$link-ferry" "${in[@]}" "$ferry" get -q "$url" "$out/big.bin" ;;
        nofsync) run "$link-nofsync" "${in[@]}" "$ferry" get -q --no-fsync "$url" "$out/big.bin" ;;
        base) run "$link-base" "${in[@]}" "$base" get -q "$url" "$out/big.bin" ;;
        aria2) run "$link-aria2" "${in[@]}" aria2c -q -x16 -s16 -k1M \
                 --file-allocation=none -d "$out" -o big.bin "$url" ;;
        curl) run "$link-curl" "${in[@]}" curl -sf -o "$out/big.bin" "$url" ;;
        aria2sync) run "$link-aria2sync" "${in[@]}" bash -c 'aria2c -q -x16 -s16 -k1M \
                 --file-allocation=none -d "$1" -o big.bin "$2" && sync -f "$1/big.bin"' - "$out" "$url" ;;
        curlsync) run "$link-curlsync" "${in[@]}" bash -c \
                 'curl -sf -o "$1" "$2" && sync -f "$1"' - "$out/big.bin" "$url" ;;
      esac
      check "$link-$t" "$r"
    done
  done
  f=$(median "${walls[$link-ferry]}")
  line="  median of $rounds (ms):"
  for t in $tools; do line+=" $t $(median "${walls[$link-$t]}")${failed[$link-$t]:+ (FAILED)}"; done
  echo "$line"
  ratio() { printf "%.3f" "$(echo "scale=6; $(median "${walls[$link-$1]}") / $(median "${walls[$link-$2]}")" | bc)"; }
  echo "  durable:     curl+sync / ferry $(ratio curlsync ferry)x, aria2c+sync / ferry" \
    "$(ratio aria2sync ferry)x${base:+, base / ferry $(ratio base ferry)x};" \
    "ferry $(echo "scale=0; $bytes / 1000 / $f" | bc) MB/s"
  echo "  not durable: curl / ferry --no-fsync $(ratio curl nofsync)x, aria2c / ferry" \
    "--no-fsync $(ratio aria2 nofsync)x; ferry --no-fsync" \
    "$(echo "scale=0; $bytes / 1000 / $(median "${walls[$link-nofsync]}")" | bc) MB/s"
  line="  peak RSS (KiB):"
  for t in $tools; do line+=" $t ${rss[$link-$t]}"; done
  echo "$line; load after $(cut -d' ' -f1-3 /proc/loadavg)"
  net_stop
done
