#!/usr/bin/env bash
# Connections follow the link (docs/remote.md "Connections follow the
# link"): a download starts with 2 parts of big objects in flight and
# doubles them while that raises the rate; when a doubling does not, it
# goes back and stays. --json's "connections" is where the run ended.
# - nginx's /slow/ serves each connection at 4 MB/s (a bucket's
#   per-connection ceiling): every doubling pays, the run ends at
#   --connections (16, or 8 when asked for 8).
# - --bwlimit holds the whole run to one rate: more connections only share
#   it, the run ends at 2.
# Every file arrives whole.
set -euo pipefail
FERRY=$1
source "$(dirname "$0")/s3_cli_env.sh"
slow=$FERRY_TEST_HTTP_ROOT/slow
mkdir -p "$slow" src
head -c $((40 << 20)) /dev/urandom > src/big.bin
cp src/big.bin "$slow/conn-$$.bin"
cp src/big.bin "$FERRY_TEST_HTTP_ROOT/conn-$$.bin"

# connections JSON: the summary's "connections".
connections() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["connections"])' "$1"
}
get() {  # OUT ARGS...: a get that may not take more than 60 s, its summary in OUT.json
  local out=$1; shift
  timeout 60 "$FERRY" get -q --json --part-size 1M "$@" "$out" > "$out.json" \
    || fail "ferry get $*: $(cat "$out.json")"
  cmp src/big.bin "$out" || fail "$out differs"
}

get a.bin "$FERRY_TEST_HTTP_URL/slow/conn-$$.bin"
[ "$(connections a.bin.json)" = 16 ] || fail "per-connection ceiling: $(cat a.bin.json)"
get b.bin --connections 8 "$FERRY_TEST_HTTP_URL/slow/conn-$$.bin"
[ "$(connections b.bin.json)" = 8 ] || fail "--connections 8: $(cat b.bin.json)"
get c.bin --bwlimit 16M "$FERRY_TEST_HTTP_URL/conn-$$.bin"
[ "$(connections c.bin.json)" = 2 ] || fail "--bwlimit: $(cat c.bin.json)"
# Fewer asked for than the ramp starts with: that many, from the start.
get d.bin --connections 1 "$FERRY_TEST_HTTP_URL/conn-$$.bin"
[ "$(connections d.bin.json)" = 1 ] || fail "--connections 1: $(cat d.bin.json)"
rm -f "$slow/conn-$$.bin" "$FERRY_TEST_HTTP_ROOT/conn-$$.bin"
echo ok
