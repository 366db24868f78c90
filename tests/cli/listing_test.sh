#!/usr/bin/env bash
# ferry split --list: listings read exactly as Python's csv / json modules
# read them (Python is the oracle), and the listings ferry must refuse.
set -euo pipefail
FERRY=$1
source "$(dirname "$0")/testlib.sh"

# Item 20: a stray quote in an unquoted field must not swallow the next rows;
# a BOM (Excel) and "path, label" headers work.
printf 'path,label\n12"_monitor.jpg,tv\nb.jpg,x\nc.jpg,y\n' > stray.csv
expect_rc 0 "$FERRY" split --list stray.csv --out s --ratios 1 --names all --no-hash
[ "$(cat s/all.txt)" = "$(printf '12"_monitor.jpg\nb.jpg\nc.jpg')" ] || fail "stray quote: $(cat s/all.txt)"
printf '\xef\xbb\xbfpath, label\r\na.jpg,cat\r\nb.jpg,dog\r\n' > bom.csv
expect_rc 0 "$FERRY" split --list bom.csv --out s --ratios 1 --names all --no-hash
/usr/bin/python3 -c '
import json; d = json.load(open("s/split.json"))
assert d["classes"] == ["cat", "dog"], d["classes"]'
printf '\xef\xbb\xbf{"path": "a.jpg", "label": "cat"}\n' > bom.jsonl
expect_rc 0 "$FERRY" split --list bom.jsonl --out s --ratios 1 --names all --no-hash

# Item 21: numbers are kept as written.
printf '{"path":"a","group":1600000000000000001,"label":0.1}\n{"path":"b","group":1600000000000000002,"label":1e20}\n' > num.jsonl
expect_rc 0 "$FERRY" split --list num.jsonl --out s --ratios 1 --names all --no-hash
/usr/bin/python3 -c '
import json; d = json.load(open("s/split.json"))
assert d["classes"] == ["0.1", "1e20"], d["classes"]
assert d["splits"]["all"]["groups"] == 2, d["splits"]'

# Item 22: duplicates and line breaks refuse the listing (exit 2, file:line),
# and nothing is written.
printf 'path,label\na,x\nb,x\na,y\n' > dup.csv
expect_rc 2 "$FERRY" split --list dup.csv --out d --no-hash
grep -q 'dup.csv:4: path "a" is listed twice (also on line 2)' err.txt || fail "duplicate not named: $(cat err.txt)"
[ ! -e d ] || fail "refused listing wrote outputs"
printf 'path\n"a\nb"\n' > nl.csv
expect_rc 2 "$FERRY" split --list nl.csv --out d --no-hash
grep -q 'nl.csv:2: a path with a line break' err.txt || fail "newline path not named: $(cat err.txt)"

# Item 25: a malformed JSONL line is a usage/input error like bad CSV (2).
printf '{"path":"a"}\n{"path": \n' > bad.jsonl
expect_rc 2 "$FERRY" split --list bad.jsonl --out d --no-hash
grep -q 'bad.jsonl:2' err.txt || fail "bad line not named: $(cat err.txt)"
mkdir src
expect_rc 2 "$FERRY" pack src packed --list bad.jsonl
grep -q 'bad.jsonl:2' err.txt || fail "pack: bad line not named: $(cat err.txt)"
printf 'path\n"a\n' > open.csv
expect_rc 2 "$FERRY" split --list open.csv --out d --no-hash

# C14: a listing that cannot be read is an error naming it; earlier results
# stay as they were.
printf 'path\na\nb\n' > ok.csv
expect_rc 0 "$FERRY" split --list ok.csv --out keep --ratios 1 --names all --no-hash
mkdir adir
expect_rc 4 "$FERRY" split --list adir --out keep --ratios 1 --names all --no-hash
grep -q adir err.txt || fail "unreadable listing not named: $(cat err.txt)"
expect_rc 4 "$FERRY" split --list /proc/self/mem --out keep --ratios 1 --names all --no-hash
[ "$(cat keep/all.txt)" = "$(printf 'a\nb')" ] || fail "earlier results overwritten"
expect_rc 4 "$FERRY" pack src packed --list adir
[ ! -e packed ] || fail "pack wrote outputs for an unreadable listing"

# Python's csv module as the oracle: random CSVs with stray and doubled
# quotes, quoted commas and line breaks, text after closing quotes, CRLF,
# blank lines, BOMs, spaced header names. ferry must read the same rows, or
# refuse exactly when Python's rows hold a path ferry cannot list.
/usr/bin/python3 - "$FERRY" <<'PY'
import collections, csv, io, json, random, subprocess, sys
ferry = sys.argv[1]
rng = random.Random(20)
alphabet = ['a', 'b', 'c', '"', ' ', ',', '\t', 'x.jpg', 'é']

def field():
    kind = rng.random()
    if kind < 0.5:  # unquoted, may hold quotes inside (not first)
        s = ''.join(rng.choice(['a', 'b', '"', ' ', 'é', '1']) for _ in range(rng.randint(0, 5)))
        s = s.lstrip('"')
        return s.replace(',', '')
    inner = ''.join(rng.choice(alphabet + ['\n', '\r\n', '""']) for _ in range(rng.randint(0, 5)))
    inner = inner.replace('"', '""').replace('""""', '""')
    junk = rng.choice(['', '', 'z', ' q', '"'])  # text after the closing quote
    return '"' + inner + '"' + (junk if junk != '"' else '""')

checked = refused = 0
for case in range(150):
    nl = rng.choice(['\n', '\r\n'])
    header = rng.choice(['path,label', 'label,path', 'path, label', ' path ,label,group'])
    rows = [','.join(field() for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 8))]
    lines = [header] + rows
    if rng.random() < 0.3:
        lines.insert(rng.randint(1, len(lines)), '')
    text = nl.join(lines) + nl
    if rng.random() < 0.3:
        text = '\ufeff' + text
    data = text.encode('utf-8')
    open('o.csv', 'wb').write(data)
    # Python's reading (DictReader semantics, header names stripped).
    r = csv.reader(io.StringIO(data.decode('utf-8-sig'), newline=''))
    names = [h.strip(' \t') for h in next(r)]
    items = []
    for row in r:
        if not row:
            continue
        get = lambda n: row[names.index(n)] if n in names and names.index(n) < len(row) else ''
        items.append((get('path'), get('label')))
    paths = [p for p, _ in items]
    bad = any(p == '' or '\n' in p or '\r' in p for p in paths) or len(set(paths)) != len(paths)
    res = subprocess.run([ferry, 'split', '--list', 'o.csv', '--out', 'o', '--ratios', '1',
                          '--names', 'all', '--no-hash', '-q'], capture_output=True)
    if bad:
        assert res.returncode == 2, (case, text, items, res)
        refused += 1
        continue
    assert res.returncode == 0, (case, text, items, res)
    got = open('o/all.txt', 'rb').read().decode('utf-8').split('\n')[:-1]
    assert got == sorted(paths, key=lambda s: s.encode()), (case, text, got, paths)
    per_class = json.load(open('o/split.json'))['splits']['all']['per_class']
    want = collections.Counter(l for _, l in items)
    assert per_class == dict(want), (case, text, per_class, want)
    checked += 1
assert checked > 25 and refused > 10, (checked, refused)
print(f"python oracle: {checked} listings read alike, {refused} refused alike")
PY
# A listing of short records followed by a huge sparse tail: the room made
# for its items is capped (it reserved from the file size and aborted with
# bad_alloc); the zeros are a too-long field, a usage error naming the line.
/usr/bin/python3 -c "
import sys
with open('sparse.csv', 'w') as f:
    f.write('path,label\n')
    for i in range(5000): f.write('p%d,a\n' % i)"
truncate -s +4G sparse.csv
expect_rc 2 "$FERRY" split --list sparse.csv --out sp --no-hash -q
grep -q "longer than" err.txt || fail "sparse listing: $(cat err.txt)"
rm -f sparse.csv

echo "cli listing: all checks passed"
