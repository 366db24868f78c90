# Links and servers for the remote benchmarks; source it after benchlib.sh
# (needs `here` and `work`). Everything started here is stopped by net_stop
# (call it from the script's EXIT trap).
#   net_start LINK       LINK is `loopback` (the machine's own, unlimited) or a
#                        tbf rate such as `200mbit` (a private slowlink
#                        namespace). Starts the test servers
#                        (tests/integration/servers.sh) inside it, sources
#                        their servers.env and sets `in` to the command
#                        prefix that runs a client on the same link.
#   net_latency PORT MS  starts latency-proxy (MS one way) in front of
#                        127.0.0.1:PORT on the link; sets `lurl` to its URL.
#   net_stop             stops the servers and proxies, removes the namespace.
#   make_objects DIR N   N files of 20-200 KB (sizes from a fixed seed,
#                        incompressible bytes) named 00000.bin ...; sets
#                        objects_bytes to their total size.
slowlink=/work/shared/tools/slowlink
latency_proxy=/work/shared/tools/latency-proxy
net_ns="" net_srv="" net_pids=()
in=()
free_port() {
  "${in[@]}" /usr/bin/python3 -c \
    'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
wait_port() {  # PORT: up to 10 s, on the link
  "${in[@]}" bash -c 'for _ in $(seq 100); do
    (exec 3<>/dev/tcp/127.0.0.1/'"$1"') 2>/dev/null && exit 0; sleep 0.1; done; exit 1'
}
net_start() {
  net_stop
  in=()
  if [ "$1" != loopback ]; then
    net_ns=ferry-bench-$$
    "$slowlink" up "$net_ns" "$1"
    in=("$slowlink" run "$net_ns")
  fi
  net_srv=$work/srv-$1
  PATH=/usr/sbin:$PATH "${in[@]}" bash "$here/../integration/servers.sh" start "$net_srv" > /dev/null
  # shellcheck disable=SC1091
  source "$net_srv/servers.env"
}
net_latency() {
  local port
  port=$(free_port)
  "${in[@]}" "$latency_proxy" "$port" "$1" "$2" --seconds 7200 \
    > "$work/latency-proxy-$port.log" 2>&1 < /dev/null &
  net_pids+=($!)
  wait_port "$port" || { echo "latency-proxy did not start" >&2; return 1; }
  lurl=http://127.0.0.1:$port
}
net_stop() {
  local p
  for p in "${net_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${net_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  net_pids=()
  if [ -n "$net_srv" ]; then
    bash "$here/../integration/servers.sh" stop "$net_srv" > /dev/null 2>&1 || true
    net_srv=""
  fi
  if [ -n "$net_ns" ]; then
    "$slowlink" down "$net_ns" 2>/dev/null || true
    net_ns=""
  fi
}
make_objects() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import os, random, sys
d, n = sys.argv[1], int(sys.argv[2]); r = random.Random(11)
os.makedirs(d)
for i in range(n):
    with open(os.path.join(d, f"{i:05d}.bin"), "wb") as f:
        f.write(os.urandom(r.randint(20000, 200000)))
PY
  objects_bytes=$(find "$1" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
}
