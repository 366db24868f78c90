#!/usr/bin/env bash
# Starts and stops the real servers the integration tests use, on free
# loopback ports:
#   nginx        static files with Range and ETag, over HTTP and over HTTPS
#                (a test CA made at start by openssl); /private/ needs
#                "Authorization: Bearer $TOKEN", else 401     (apt: nginx-light);
#                /rNNN/PATH answers NNN (301 302 303 307 308) to /PATH,
#                /away/PATH 302 to PATH on a third server on another port
#                (FERRY_TEST_HTTP_OTHER_URL, whose access log shows each
#                request's Authorization and X-Ferry-Test headers),
#                /tohttp/PATH 302 to PATH over plain HTTP, /loop/x 302 to itself
#   s3rver       the S3 API, bucket "ferry-test" created    (npm: s3rver)
#   sig_proxy.py in front of s3rver, checks every SigV4 signature with
#                botocore (s3rver accepts any): FERRY_TEST_S3_URL; a second
#                one in public mode also forwards unsigned requests. Both
#                accept the session token FERRY_TEST_S3_SESSION_TOKEN (or
#                none), and pass Host on: virtual-hosted style works with Host
#                "<bucket>.s3.amazonaws.com:PORT" (connect to 127.0.0.1)
#   fault_proxy.py  two instances, in front of nginx (HTTP) and of the
#                signature proxy; misbehave when told to over a control port
# Usage: servers.sh start STATE_DIR | servers.sh stop STATE_DIR
# `start` writes STATE_DIR/servers.env (KEY=VALUE lines) for the tests.
#
# The HTTP access log (FERRY_TEST_HTTP_ACCESS_LOG) has one line per request,
# tab-separated: request line, Range, status, body bytes sent, If-Range,
# If-Match, connection serial number ("-" for an absent header).
set -euo pipefail
cmd=${1:?start|stop} dir=${2:?state dir}
here=$(cd "$(dirname "$0")" && pwd)
S3RVER=${FERRY_S3RVER:-$(command -v s3rver || echo /opt/ferry-npm/node_modules/.bin/s3rver)}
PY=/usr/bin/python3  # Debian's python, for Debian's python3-botocore
TOKEN=ferry-test-token
PIDS=(nginx s3rver sig_proxy sig_proxy_public fault_http fault_s3)

free_ports() {  # N distinct free ports (all held open while choosing)
  $PY -c '
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

wait_port() {  # port seconds
  for _ in $(seq 1 $(( $2 * 10 ))); do
    (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

stop() {
  [ -d "$dir" ] || return 0
  local name pid
  for name in "${PIDS[@]}"; do
    [ -f "$dir/$name.pid" ] || continue
    pid=$(cat "$dir/$name.pid")
    rm -f "$dir/$name.pid"
    kill "$pid" 2>/dev/null || continue
    # Wait for it to go (nginx's workers exit with their master); insist.
    for _ in $(seq 1 50); do alive "$pid" || continue 2; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
}

alive() {  # PID: running (a zombie waiting for its reaper is not)
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# spawn NAME CMD...: runs CMD in the background, logging to STATE_DIR/NAME.log.
spawn() {
  local name=$1; shift
  nohup "$@" > "$dir/$name.log" 2>&1 < /dev/null &
  echo $! > "$dir/$name.pid"
}

started() {  # NAME PORT SECONDS
  wait_port "$2" "$3" || { echo "$1 did not start" >&2; cat "$dir/$1.log" >&2; exit 1; }
}

# A throwaway CA, and a server certificate it signs for 127.0.0.1/localhost.
make_certs() {
  local t="$dir/tls"
  mkdir -p "$t"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$t/ca.key" -out "$t/ca.pem" -days 7 -subj "/CN=ferry test CA" \
    -addext basicConstraints=critical,CA:TRUE \
    -addext keyUsage=critical,keyCertSign,cRLSign 2> "$t/openssl.log"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$t/server.key" -out "$t/server.csr" -subj "/CN=localhost" 2>> "$t/openssl.log"
  printf '%s\n' 'subjectAltName=IP:127.0.0.1,DNS:localhost' \
    'basicConstraints=critical,CA:FALSE' 'keyUsage=critical,digitalSignature' \
    'extendedKeyUsage=serverAuth' 'authorityKeyIdentifier=keyid' > "$t/server.ext"
  openssl x509 -req -in "$t/server.csr" -CA "$t/ca.pem" -CAkey "$t/ca.key" \
    -CAcreateserial -days 7 -extfile "$t/server.ext" -out "$t/server.pem" 2>> "$t/openssl.log"
}

start() {
  stop
  rm -rf "$dir"/s3 "$dir"/www
  mkdir -p "$dir"/www/private "$dir"/s3 "$dir"/tmp
  chmod 755 "$dir" "$dir"/www "$dir"/www/private
  local http_port https_port s3_port sig_port pub_port fh_port fh_ctl fs_port fs_ctl
  local other_port user_line=""
  read -r http_port https_port s3_port sig_port pub_port fh_port fh_ctl fs_port fs_ctl \
    other_port <<< "$(free_ports 10)"
  [ "$(id -u)" = 0 ] && user_line="user root root;"
  make_certs

  # What both nginx servers serve: the root, and /private/ behind a token.
  cat > "$dir"/site.conf <<CONF
    root $dir/www;
    etag on;
    location /private/ {
      if (\$http_authorization != "Bearer $TOKEN") { return 401; }
    }
    absolute_redirect off;
    location ~ ^/r301(/.*)\$ { return 301 \$1; }
    location ~ ^/r302(/.*)\$ { return 302 \$1; }
    location ~ ^/r303(/.*)\$ { return 303 \$1; }
    location ~ ^/r307(/.*)\$ { return 307 \$1; }
    location ~ ^/r308(/.*)\$ { return 308 \$1; }
    location ~ ^/away(/.*)\$ { return 302 http://127.0.0.1:$other_port\$1; }
    location ~ ^/tohttp(/.*)\$ { return 302 http://127.0.0.1:$http_port\$1; }
    location /loop/ { return 302 /loop/x; }
CONF
  cat > "$dir"/nginx.conf <<CONF
$user_line
daemon on;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log warn;
events { worker_connections 1024; }
http {
  log_format ferry '\$request\t\$http_range\t\$status\t\$body_bytes_sent\t\$http_if_range\t\$http_if_match\t\$connection\t\$http_if_none_match';
  log_format ferry_headers '\$request\t\$status\t\$http_authorization\t\$http_x_ferry_test';
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  default_type application/octet-stream;
  sendfile on;
  send_timeout 600s;  # a fault proxy may stall a transfer for minutes
  server {
    listen 127.0.0.1:$http_port;
    access_log $dir/http-access.log ferry;
    include $dir/site.conf;
  }
  server {
    listen 127.0.0.1:$https_port ssl;
    ssl_certificate $dir/tls/server.pem;
    ssl_certificate_key $dir/tls/server.key;
    access_log $dir/https-access.log ferry;
    include $dir/site.conf;
  }
  server {  # another origin, for redirects away
    listen 127.0.0.1:$other_port;
    access_log $dir/other-access.log ferry_headers;
    root $dir/www;
    etag on;
  }
}
CONF
  : > "$dir"/http-access.log
  nginx -c "$dir"/nginx.conf -p "$dir" -e "$dir"/nginx-error.log
  wait_port "$http_port" 10 && wait_port "$https_port" 10 && wait_port "$other_port" 10 \
    || { echo "nginx did not start" >&2; cat "$dir"/nginx-error.log >&2; exit 1; }

  [ -x "$S3RVER" ] || { echo "s3rver not found (run tools/dev/install-deps.sh)" >&2; exit 1; }
  # s3rver encrypts ListObjectsV2 continuation tokens with DES, which
  # Node >= 17 (OpenSSL 3) refuses without the legacy provider: every
  # truncated listing would be a 500.
  spawn s3rver env NODE_OPTIONS=--openssl-legacy-provider "$S3RVER" \
      -d "$dir"/s3 -a 127.0.0.1 -p "$s3_port" --configure-bucket ferry-test
  spawn sig_proxy $PY "$here"/sig_proxy.py --port "$sig_port" \
      --upstream "http://127.0.0.1:$s3_port"
  spawn sig_proxy_public $PY "$here"/sig_proxy.py --port "$pub_port" \
      --upstream "http://127.0.0.1:$s3_port" --public
  spawn fault_http $PY "$here"/fault_proxy.py --port "$fh_port" \
      --control-port "$fh_ctl" --upstream "http://127.0.0.1:$http_port"
  spawn fault_s3 $PY "$here"/fault_proxy.py --port "$fs_port" \
      --control-port "$fs_ctl" --upstream "http://127.0.0.1:$sig_port" \
      --direct "http://127.0.0.1:$s3_port"
  started s3rver "$s3_port" 30
  started sig_proxy "$sig_port" 10
  started sig_proxy_public "$pub_port" 10
  started fault_http "$fh_ctl" 10
  started fault_s3 "$fs_ctl" 10

  cat > "$dir"/servers.env <<ENV
FERRY_TEST_SERVERS_DIR=$dir
FERRY_TEST_HTTP_URL=http://127.0.0.1:$http_port
FERRY_TEST_HTTP_ROOT=$dir/www
FERRY_TEST_HTTP_ACCESS_LOG=$dir/http-access.log
FERRY_TEST_HTTP_OTHER_URL=http://127.0.0.1:$other_port
FERRY_TEST_HTTP_OTHER_ACCESS_LOG=$dir/other-access.log
FERRY_TEST_HTTPS_URL=https://127.0.0.1:$https_port
FERRY_TEST_HTTPS_ACCESS_LOG=$dir/https-access.log
FERRY_TEST_CA_BUNDLE=$dir/tls/ca.pem
FERRY_TEST_HTTP_TOKEN=$TOKEN
FERRY_TEST_HTTP_PRIVATE_PATH=/private/
FERRY_TEST_S3_URL=http://127.0.0.1:$sig_port
FERRY_TEST_S3_PUBLIC_URL=http://127.0.0.1:$pub_port
FERRY_TEST_S3RVER_URL=http://127.0.0.1:$s3_port
FERRY_TEST_S3_ROOT=$dir/s3
FERRY_TEST_S3_BUCKET=ferry-test
FERRY_TEST_S3_ACCESS_KEY=S3RVER
FERRY_TEST_S3_SECRET_KEY=S3RVER
FERRY_TEST_S3_SESSION_TOKEN=FQoGZXIvYXdzE/token+with=chars
FERRY_TEST_FAULT_HTTP_URL=http://127.0.0.1:$fh_port
FERRY_TEST_FAULT_HTTP_CONTROL=http://127.0.0.1:$fh_ctl
FERRY_TEST_FAULT_S3_URL=http://127.0.0.1:$fs_port
FERRY_TEST_FAULT_S3_CONTROL=http://127.0.0.1:$fs_ctl
ENV
  echo "nginx on :$http_port (https :$https_port), s3rver on :$s3_port," \
       "signature proxy :$sig_port (public :$pub_port)," \
       "fault proxies :$fh_port (control :$fh_ctl), :$fs_port (control :$fs_ctl)"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
