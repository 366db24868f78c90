# For CLI tests that serve objects with tests/integration/fake_s3.py; source
# it after testlib.sh (needs `here`). Kills its servers on exit. Makes
# big.txt: 3 MiB + 5 bytes of text (4 parts of 1 MiB).
# fake NAME MODES [BIG]: stops the previous fake server and serves "small"
# (6 bytes) and "big" (the text file big.txt, or BIG) with MODES (fake_s3.py);
# sets url to http://127.0.0.1:PORT/b. Each GET's Range is in NAME.port.log.
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
fake() {
  [ "${#pids[@]}" = 0 ] || kill "${pids[-1]}" 2>/dev/null || true
  /usr/bin/python3 -c 'import json,sys; json.dump({"small": "hello\n",
    "big": open(sys.argv[2]).read()}, open(sys.argv[1], "w"))' "$1.json" \
    "${3:-big.txt}"
  /usr/bin/python3 "$here/../integration/fake_s3.py" "$1.json" "$1.port" "$2" &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$1.port" ] && break; sleep 0.1; done
  url=http://127.0.0.1:$(cat "$1.port")/b
}
head -c 2359296 /dev/urandom | base64 -w0 > big.txt && printf abcde >> big.txt
