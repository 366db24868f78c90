#!/usr/bin/env bash
# Starts and stops the real servers the integration tests use, on free
# loopback ports:
#   nginx   static files with Range and ETag          (apt: nginx-light)
#   s3rver  the S3 API, bucket "ferry-test" created   (npm: s3rver)
# Usage: servers.sh start STATE_DIR | servers.sh stop STATE_DIR
# `start` writes STATE_DIR/servers.env (KEY=VALUE lines) for the tests.
set -euo pipefail
cmd=${1:?start|stop} dir=${2:?state dir}
S3RVER=${FERRY_S3RVER:-$(command -v s3rver || echo /opt/ferry-npm/node_modules/.bin/s3rver)}

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
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
  for f in "$dir"/nginx.pid "$dir"/s3rver.pid; do
    [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
    rm -f "$f"
  done
}

start() {
  stop
  mkdir -p "$dir"/www "$dir"/s3 "$dir"/tmp
  chmod 755 "$dir" "$dir"/www
  local http_port s3_port user_line=""
  http_port=$(free_port); s3_port=$(free_port)
  [ "$(id -u)" = 0 ] && user_line="user root root;"
  cat > "$dir"/nginx.conf <<CONF
$user_line
daemon on;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  default_type application/octet-stream;
  sendfile on;
  server {
    listen 127.0.0.1:$http_port;
    root $dir/www;
    etag on;
  }
}
CONF
  nginx -c "$dir"/nginx.conf -p "$dir" -e "$dir"/nginx-error.log
  wait_port "$http_port" 10 || { echo "nginx did not start" >&2; cat "$dir"/nginx-error.log >&2; exit 1; }

  [ -x "$S3RVER" ] || { echo "s3rver not found (run tools/install-deps.sh)" >&2; exit 1; }
  nohup "$S3RVER" -d "$dir"/s3 -a 127.0.0.1 -p "$s3_port" --silent \
      --configure-bucket ferry-test > "$dir"/s3rver.log 2>&1 &
  echo $! > "$dir"/s3rver.pid
  wait_port "$s3_port" 30 || { echo "s3rver did not start" >&2; cat "$dir"/s3rver.log >&2; exit 1; }

  cat > "$dir"/servers.env <<ENV
FERRY_TEST_HTTP_URL=http://127.0.0.1:$http_port
FERRY_TEST_HTTP_ROOT=$dir/www
FERRY_TEST_S3_URL=http://127.0.0.1:$s3_port
FERRY_TEST_S3_BUCKET=ferry-test
FERRY_TEST_S3_ACCESS_KEY=S3RVER
FERRY_TEST_S3_SECRET_KEY=S3RVER
ENV
  echo "nginx on :$http_port, s3rver on :$s3_port"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
