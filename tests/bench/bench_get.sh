#!/usr/bin/env bash
# ferry get against its anchors, side by side in one run, from the test
# nginx (tests/integration/servers.sh):
#   1. one 1 GiB object (sparse on the server): ferry get vs aria2c -x16 -s16
#      and curl;
#   2. N small objects (20-200 KB, default 10000) behind latency-proxy
#      (20 ms each way... a cloud bucket's round trip): ferry get vs
#      aria2c -j16 and rclone copy --transfers 16 (http remote).
# Prints best wall times (of ROUNDS, default 2), ratios and ferry's peak RSS.
# Usage: bench_get.sh FERRY [N]
set -euo pipefail
ferry=$(readlink -f "$1") n=${2:-10000} rounds=${ROUNDS:-2}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/bench-get.XXXXXX)
srv=$work/srv
trap 'bash "$here/../integration/servers.sh" stop "$srv" >/dev/null 2>&1; kill $lp 2>/dev/null; rm -rf "$work"' EXIT
source "$here/benchlib.sh"
PATH=/usr/sbin:$PATH bash "$here/../integration/servers.sh" start "$srv" > /dev/null
source "$srv/servers.env"
www=$FERRY_TEST_HTTP_ROOT url=$FERRY_TEST_HTTP_URL
truncate -s 1G "$www/big.bin"

out=$work/out
for r in $(seq "$rounds"); do
  rm -rf "$out"; mkdir -p "$out"
  run ferry_1g "$ferry" get -q "$url/big.bin" "$out/big.bin"; rm -f "$out"/*
  run aria2_1g aria2c -q -x16 -s16 -k1M --file-allocation=none -d "$out" -o big.bin "$url/big.bin"; rm -f "$out"/*
  run curl_1g curl -sf -o "$out/big.bin" "$url/big.bin"; rm -f "$out"/*
done
echo "1 GiB object (best of $rounds): ferry ${best[ferry_1g]} ms, aria2c -x16 ${best[aria2_1g]} ms, curl ${best[curl_1g]} ms"
echo "  ratio (anchor / ferry): aria2c $(echo "scale=2; ${best[aria2_1g]} / ${best[ferry_1g]}" | bc)x, curl $(echo "scale=2; ${best[curl_1g]} / ${best[ferry_1g]}" | bc)x; ferry peak RSS ${rss[ferry_1g]} KiB"
rm -f "$www/big.bin"

# N small objects behind 20 ms of latency each way.
mkdir -p "$www/small"
/usr/bin/python3 - "$www/small" "$n" <<'PY'
import os, random, sys
d, n = sys.argv[1], int(sys.argv[2]); r = random.Random(1)
for i in range(n):
    with open(os.path.join(d, f"{i:05d}.bin"), "wb") as f:
        f.write(os.urandom(r.randint(20000, 200000)))
PY
port=${url##*:}
lport=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
/work/shared/tools/latency-proxy "$lport" "$port" 20 --seconds 3600 & lp=$!
sleep 1
lurl=http://127.0.0.1:$lport
( cd "$www/small" && ls ) > "$work/keys"
sed "s|^|$lurl/small/|" "$work/keys" > "$work/urls"
for r in $(seq "$rounds"); do
  rm -rf "$out"; mkdir -p "$out"
  # shellcheck disable=SC2046
  run ferry_small xargs -a "$work/urls" sh -c '"$0" get -q --connections 16 "$@" '"$out/"'' "$ferry"
  rm -rf "$out"; mkdir -p "$out"
  run aria2_small aria2c -q -j16 --file-allocation=none -d "$out" -i "$work/urls"
  rm -rf "$out"; mkdir -p "$out"
  run rclone_small rclone copy --transfers 16 --http-url "$lurl/small/" --files-from "$work/keys" --no-traverse :http: "$out"
done
echo "$n objects of 20-200 KB at 20 ms latency (best of $rounds): ferry ${best[ferry_small]} ms, aria2c -j16 ${best[aria2_small]} ms, rclone --transfers 16 ${best[rclone_small]} ms"
echo "  ratio (anchor / ferry): aria2c $(echo "scale=2; ${best[aria2_small]} / ${best[ferry_small]}" | bc)x, rclone $(echo "scale=2; ${best[rclone_small]} / ${best[ferry_small]}" | bc)x; ferry peak RSS ${rss[ferry_small]} KiB"
