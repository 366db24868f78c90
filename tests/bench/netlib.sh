# Links and servers for the remote benchmarks; source it after benchlib.sh
# (needs `here` and `work`). Everything started here is stopped by net_stop
# (call it from the script's EXIT trap).
#   net_start LINK       LINK is `loopback` (the machine's own, unlimited) or a
#                        tbf rate such as `200mbit` (a private slowlink
#                        namespace). Starts the test servers
#                        (tests/integration/servers.sh) inside it, sources
#                        their servers.env and sets `in` to the command
#                        prefix that runs a client on the same link. MTU=N
#                        sets the namespace's lo MTU (slowlink leaves
#                        65536; 1500 or 9000 cut segments as a NIC would,
#                        so that one retransmission costs a frame, not
#                        64 KiB).
#   net_latency PORT MS  starts latency-proxy (MS one way) in front of
#                        127.0.0.1:PORT on the link; sets `lurl` to its URL.
#   net_stop             stops the servers and proxies, removes the namespace.
#   nginx_start PORT ROOT [DIRECTIVES]  a static nginx for ROOT on
#                        127.0.0.1:PORT on the link (ETags, sendfile; the
#                        server block's extra DIRECTIVES), one access log
#                        line per request; nginx_stop stops it (call it before
#                        net_stop). access_mark, then access_bytes (body
#                        bytes sent since the mark), access_requests,
#                        access_parts (by kind of key: count, body bytes,
#                        header bytes both ways; one kind a line).
#   lo_rx, tcp_retrans   the link namespace's lo received bytes (every
#                        packet both ways, headers included) and TCP segments
#                        retransmitted so far (0 on `loopback`, shared with
#                        other processes).
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
    if [ -n "${MTU:-}" ]; then "${in[@]}" ip link set lo mtu "$MTU"; fi
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
tcp_retrans() {  # the namespace's TCP segments retransmitted so far
  if [ ${#in[@]} -eq 0 ]; then echo 0; return; fi
  "${in[@]}" awk '$1 == "Tcp:" && $13 ~ /^[0-9]+$/ {print $13}' /proc/net/snmp
}
lo_rx() {  # the namespace's lo: received bytes so far
  if [ ${#in[@]} -eq 0 ]; then echo 0; return; fi
  "${in[@]}" awk '$1 == "lo:" {print $2}' /proc/net/dev
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
nginx_start() {
  cat > "$work/nginx.conf" <<CONF
user root root;
daemon on;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 1024; }
http {
  log_format bytes '\$request\t\$status\t\$body_bytes_sent\t\$request_length\t\$bytes_sent';
  access_log $work/access.log bytes;
  client_body_temp_path $work/nginx-tmp;
  default_type application/octet-stream;
  sendfile on;
  server {
    listen 127.0.0.1:$1;
    root $2;
    etag on;
    ${3:-}
  }
}
CONF
  mkdir -p "$work/nginx-tmp"
  : > "$work/access.log"
  "${in[@]}" nginx -c "$work/nginx.conf" -p "$work" -e "$work/nginx-error.log"
  wait_port "$1" || { echo "nginx did not start" >&2; return 1; }
}
nginx_stop() {
  if [ -f "$work/nginx.pid" ]; then
    kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    for _ in $(seq 50); do [ -f "$work/nginx.pid" ] || break; sleep 0.1; done
  fi
}
access_mark() { access_at=$(stat -c %s "$work/access.log"); }
access_since() { tail -c +"$((access_at + 1))" "$work/access.log"; }
access_bytes() { access_since | awk -F'\t' '{s += $3} END {print s + 0}'; }
access_requests() { access_since | wc -l; }
access_parts() {
  access_since | awk -F'\t' '
    { split($1, q, " "); u = q[2]
      if (u ~ /\/\.ferry\/refs\//) k = "ref"
      else if (u ~ /\/\.ferry\/manifests\//) k = "manifest"
      else if (u ~ /\/\.ferry\/deltas\//) k = ($2 == 404 ? "delta-404" : "delta")
      else if (u ~ /\/\.ferry\/sigs\//) k = "signature"
      else if (u ~ /\/\.ferry\/objects\//) k = "object"
      else if (u ~ /\.zsync$/) k = "zsync-control"
      else if ($2 == 206) k = "range"
      else k = "whole"
      n[k]++; body[k] += $3; head[k] += $4 + $5 - $3 }
    END { for (k in n) printf "%s %d %d %d\n", k, n[k], body[k], head[k] }' | sort
}
