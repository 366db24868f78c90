#!/usr/bin/env bash
# One big object: a SIZE (default 1G) object (sparse on the server) served by
# the test nginx, downloaded by
#   ferry get (parallel ranged GETs, each part synced and journalled, the
#             file synced before its rename),
#   aria2c -x16 -s16 -k1M (16 connections; no fsync),
#   curl (one connection; no fsync),
# on each link of LINKS (default "loopback 200mbit": the machine's own
# loopback, and a slowlink namespace at 200 Mbit/s). ROUNDS (default 3)
# interleaved rounds; prints each tool's median wall time, the ratios
# (anchor / ferry: above 1 ferry is faster), ferry's rate and every tool's
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
  tools="ferry${base:+ base} aria2 curl"
  rm -rf "$out"; mkdir -p "$out"
  for r in $(seq "$rounds"); do
    for t in $tools; do
      case $t in
        ferry) run "$link-ferry" "${in[@]}" "$ferry" get -q "$url" "$out/big.bin" ;;
        base) run "$link-base" "${in[@]}" "$base" get -q "$url" "$out/big.bin" ;;
        aria2) run "$link-aria2" "${in[@]}" aria2c -q -x16 -s16 -k1M \
                 --file-allocation=none -d "$out" -o big.bin "$url" ;;
        curl) run "$link-curl" "${in[@]}" curl -sf -o "$out/big.bin" "$url" ;;
      esac
      check "$link-$t" "$r"
    done
  done
  f=$(median "${walls[$link-ferry]}")
  line="  median of $rounds (ms):"
  for t in $tools; do line+=" $t $(median "${walls[$link-$t]}")${failed[$link-$t]:+ (FAILED)}"; done
  echo "$line"
  line="  ratio (anchor / ferry):"
  for t in $tools; do
    [ "$t" = ferry ] && continue
    line+=" $t $(echo "scale=2; $(median "${walls[$link-$t]}") / $f" | bc)x"
  done
  echo "$line; ferry $(echo "scale=0; $bytes / 1000 / $f" | bc) MB/s"
  line="  peak RSS (KiB):"
  for t in $tools; do line+=" $t ${rss[$link-$t]}"; done
  echo "$line; load after $(cut -d' ' -f1-3 /proc/loadavg)"
  net_stop
done
