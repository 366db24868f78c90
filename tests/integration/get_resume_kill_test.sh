#!/usr/bin/env bash
# kill -9 of `ferry get` at random moments of a 300 MB multi-part download
# from nginx, each followed by a rerun: no file under the final name before
# the end, the result byte-identical, and nginx's access log shows no more
# bytes than the object plus one part per connection per kill (journalled
# parts are never fetched again).
set -euo pipefail
ferry=$1
. "${FERRY_TEST_SERVERS_ENV:?}"
. "$(dirname "$0")/../cli/testlib.sh"
log=${FERRY_TEST_HTTP_ACCESS_LOG:-}
root=$FERRY_TEST_HTTP_ROOT/kill url=$FERRY_TEST_HTTP_URL/kill
mkdir -p "$root"
size=$((300 * 1000 * 1000)) conns=4 part=$((4 << 20))
head -c $size /dev/urandom > "$root/big.bin"
trap 'rm -rf "$work" "$root"' EXIT
before=0; [ -n "$log" ] && before=$(wc -l < "$log")
# Slowed down so that every kill lands inside the download.
args=(get -q --connections $conns --part-size $part --bwlimit 40M "$url/big.bin" big.bin)
kills=0
for i in $(seq 10); do
  "$ferry" "${args[@]}" & pid=$!
  sleep "0.$((RANDOM % 6 + 2))"
  kill -9 $pid 2>/dev/null && kills=$((kills + 1))
  wait $pid 2>/dev/null || true
  [ ! -e big.bin ] || fail "big.bin exists after kill $i"
done
"$ferry" get --json --connections $conns --part-size $part "$url/big.bin" big.bin > final.json
cmp big.bin "$root/big.bin" || fail "result differs"
[ ! -e big.bin.ferry-part ] && [ ! -e big.bin.ferry-part.journal ] || fail "part files left"
grep -q '"bytes_resumed":[1-9]' final.json || fail "nothing resumed: $(cat final.json)"
if [ -n "$log" ]; then
  sleep 0.5  # nginx writes its log line when the response ends
  sent=$(tail -n +$((before + 1)) "$log" | awk -F'\t' '$1 ~ /\/kill\/big.bin/ {s += $4} END {print s + 0}')
  bound=$((size + kills * conns * part))
  echo "kills=$kills sent=$sent bound=$bound"
  [ "$sent" -le "$bound" ] || fail "server sent $sent bytes, bound $bound"
fi
echo ok
