#!/usr/bin/env bash
# Odd file names in ferry's outputs: JSON stays valid UTF-8 that Python's
# json.load reads (non-UTF-8 bytes as "\udcXX", back with os.fsencode),
# names with a line break get the escaped hash line, which xxhsum 0.8.1
# cannot read (README says so; ferry warns), and messages naming them stay
# one line each (\xHH for a line break and bytes that are not UTF-8).
set -euo pipefail
FERRY=$1 XXHSUM=$2 SAMPLES=$3
source "$(dirname "$0")/testlib.sh"

mkdir -p tree/$'\xff' tree/ok
img=$(ls "$SAMPLES"/dataset/cat/* | head -1)
cp "$img" tree/$'\xff'/$'\xff\xfe.png'
cp "$img" tree/ok/$'caf\xc3\xa9.png'
printf 'n' > tree/ok/$'new\nline'

# Item 23: --json and split.json are valid UTF-8, and reversible.
expect_rc 0 "$FERRY" hash --json tree
cp out.txt hash.json
/usr/bin/python3 - <<'PY'
import json, os
d = json.load(open("hash.json", encoding="utf-8"))  # strict UTF-8
paths = {os.fsencode(f["path"]) for f in d["files"]}
assert b"tree/\xff/\xff\xfe.png" in paths, paths
assert b"tree/ok/caf\xc3\xa9.png" in paths and b"tree/ok/new\nline" in paths, paths
PY
rm tree/ok/$'new\nline'
expect_rc 0 "$FERRY" split tree --out s --ratios 0.1234567891,0.3,0.5765432109 --names a,b,c
/usr/bin/python3 - <<'PY'
import json, os
d = json.load(open("s/split.json", encoding="utf-8"))
assert [os.fsencode(c) for c in d["classes"]] == [b"ok", b"\xff"], d["classes"]
assert d["ratios"] == [0.1234567891, 0.3, 0.5765432109], d["ratios"]  # exact
# The two copies of one image leak or not; either way their paths read back.
for s in d["leakage"]["cross_split"]:
    for f in s["files"]:
        assert os.path.exists(os.fsencode(os.path.join("tree", f["path"]))), f
PY

# Every command's --json, and dataset.json, with such names.
json_loads() {  # FILE...: each must be strict UTF-8 JSON for Python
  /usr/bin/python3 -c '
import json, sys
for f in sys.argv[1:]:
    json.load(open(f, encoding="utf-8"))' "$@"
}
expect_rc 0 "$FERRY" convert tree conv --size 16 --json
cp out.txt convert.json
expect_rc 0 "$FERRY" pack tree packed --size 16 --ratios 1 --names all --json
cp out.txt pack.json
expect_rc 0 "$FERRY" verify packed --json
cp out.txt verify.json
expect_rc 0 "$FERRY" inspect "$(ls packed/*.tfrecord | head -1)" --json
cp out.txt inspect.json
expect_rc 0 "$FERRY" inspect packed --json
cp out.txt inspect_dir.json
json_loads convert.json pack.json verify.json inspect.json inspect_dir.json packed/dataset.json
/usr/bin/python3 -c '
import json, os
d = json.load(open("packed/dataset.json", encoding="utf-8"))
assert b"\xff" in [os.fsencode(l) for l in d["labels"]], d["labels"]'

# Item 24: a name with a line break. ferry writes the GNU escaped line and
# reads it back; xxhsum 0.8.1 -c rejects that line (and xxhsum -H2 itself
# writes the name raw, which no checker can read back).
printf 'n' > $'new\nline'
expect_rc 0 "$FERRY" hash $'new\nline'
cp out.txt nl.xxh
[ "$(head -c 1 nl.xxh)" = '\' ] || fail "escaped line does not start with a backslash"
grep -q 'new\\nline' nl.xxh || fail "line break not escaped: $(cat nl.xxh)"
grep -q "holds a line break.*xxhsum 0.8.1 -c does not" err.txt || fail "no warning: $(cat err.txt)"
expect_rc 0 "$FERRY" hash --check nl.xxh
grep -q 'new' out.txt || fail "escaped line not checked"
expect_rc 1 "$XXHSUM" -c nl.xxh  # the documented difference
# Messages naming such files stay one line each, every byte visible: a line
# break and bytes that are not UTF-8 as \xHH (README "Options every command
# takes"), on stderr and in verify's problem lines; --json keeps the bytes
# (as "\udcXX", back with os.fsencode).
mkdir odd
printf 'x' > odd/$'nl\nname'
printf 'y' > odd/$'bad\xffname'
ln -s nowhere odd/$'dang\nling\xfe'
mkfifo odd/$'fi\nfo\xfd'
one_line_each() {  # FILE LINES: LINES lines, each strict UTF-8, no control byte
  /usr/bin/python3 - "$1" "$2" <<'PY' || fail "$1 is not one line per message: $(cat -A "$1")"
import sys
raw = open(sys.argv[1], "rb").read()
assert raw.endswith(b"\n"), raw
lines = raw[:-1].split(b"\n")
assert len(lines) == int(sys.argv[2]), lines
for line in lines:
    line.decode("utf-8")  # strict
    assert not any(c < 0x20 or c == 0x7f for c in line), line
PY
}
says() { grep -qF -- "$1" "${2:-err.txt}" || fail "no line '$1' in: $(cat -A "${2:-err.txt}")"; }
expect_rc 4 "$FERRY" ls -R odd
one_line_each err.txt 2
says 'ferry: dang\x0aling\xfe: NotFound: dangling link'
says 'ferry: fi\x0afo\xfd: skipped: not a regular file (FIFO)'
expect_rc 4 "$FERRY" ls --json -R odd
/usr/bin/python3 - <<'PY'
import json, os
d = json.load(open("out.txt", encoding="utf-8"))
keys = sorted(os.fsencode(e["key"]) for e in d["entries"])
assert keys == [b"bad\xffname", b"nl\nname"], keys
assert [os.fsencode(f["key"]) for f in d["failures"]] == [b"dang\nling\xfe"], d
PY
expect_rc 1 "$FERRY" hash odd
one_line_each err.txt 3
says 'ferry: NotFound: odd/dang\x0aling\xfe: dangling link'
says 'ferry: warning: odd/nl\x0aname holds a line break'
expect_rc 4 "$FERRY" put -R --json odd "file://$work/oddput"
one_line_each err.txt 2
json_loads out.txt
expect_rc 4 "$FERRY" publish odd "file://$work/oddpub"
one_line_each err.txt 1
says 'ferry: IOError: odd/dang\x0aling\xfe: dangling link: nothing published'
rm odd/$'dang\nling\xfe' odd/$'fi\nfo\xfd'
expect_rc 0 "$FERRY" publish odd "file://$work/oddpub"
expect_rc 0 "$FERRY" sync "file://$work/oddpub" oddview --cache "$work/oddcache"
obj=$(readlink -f oddview/$'bad\xffname')
chmod u+w "$obj" && printf 'Y' > "$obj"
expect_rc 3 "$FERRY" sync --check oddview
one_line_each err.txt 1
says 'ferry: bad\xffname: XXH3-128 '
expect_rc 3 "$FERRY" sync --check --json oddview
/usr/bin/python3 - <<'PY'
import json, os
d = json.load(open("out.txt", encoding="utf-8"))
assert [os.fsencode(p["path"]) for p in d["problems"]] == [b"bad\xffname"], d
PY
(cd odd && "$FERRY" hash * > ../odd.xxh 2> /dev/null)
printf 'Y' > odd/$'bad\xffname'
expect_rc 3 "$FERRY" verify odd --hashes odd.xxh
one_line_each out.txt 1
says 'bad\xffname: hash: XXH3-128 ' out.txt
# The lines for a person that name a file, a DEST or a remote URL: one line
# each, no raw control byte (ESC as \x1b), the name escaped as Printable.
# hash --check shows an escaped name after a backslash, as GNU sha256sum -c.
printf 'z' > odd/$'esc\e[31mred'
"$FERRY" hash odd > odd2.xxh 2> /dev/null
printf 'Z' > odd/$'esc\e[31mred'
expect_rc 3 "$FERRY" hash --check odd2.xxh
one_line_each out.txt 3
says '\odd/bad\xffname: OK' out.txt
says '\odd/esc\x1b[31mred: FAILED' out.txt
says '\odd/nl\x0aname: OK' out.txt
dst=$'dst\n\e[31m\xff'
expect_rc 0 "$FERRY" sync --dry-run "file://$work/oddpub" "$dst" --cache "$work/oddcache2"
one_line_each out.txt 1
says '(dry run) dst\x0a\x1b[31m\xff: manifest ' out.txt
expect_rc 0 "$FERRY" sync "file://$work/oddpub" "$dst" --cache "$work/oddcache2"
one_line_each out.txt 1
says 'dst\x0a\x1b[31m\xff: manifest ' out.txt
expect_rc 0 "$FERRY" sync "file://$work/oddpub" "$dst" --cache "$work/oddcache2"
one_line_each out.txt 1
says 'dst\x0a\x1b[31m\xff: unchanged (manifest ' out.txt
expect_rc 0 "$FERRY" sync --check "$dst"
one_line_each out.txt 1
says 'dst\x0a\x1b[31m\xff: 2 files, ' out.txt
url="file://$work/pub"$'\n\e[31m\xff'
shown="file://$work/pub"'\x0a\x1b[31m\xff'
expect_rc 0 "$FERRY" publish --dry-run odd "$url"
one_line_each out.txt 2
says "$shown: version " out.txt
expect_rc 0 "$FERRY" publish odd "$url"
one_line_each out.txt 2
says "$shown: version " out.txt
expect_rc 0 "$FERRY" publish odd "$url"
one_line_each out.txt 2
says "$shown: nothing to publish" out.txt
expect_rc 0 "$FERRY" gc --dry-run "$url"
one_line_each out.txt 1
says "$shown: kept 1 versions" out.txt
expect_rc 0 "$FERRY" gc "$url"
one_line_each out.txt 1
says "$shown: kept 1 versions" out.txt
expect_rc 0 "$FERRY" put -R --dry-run odd "$url"
one_line_each out.txt 3
says "put odd/nl\\x0aname -> $shown/nl\\x0aname" out.txt
mkdir -p conv_in/$'\xff'
cp "$img" conv_in/$'\xff'/$'a\nb.png'
expect_rc 0 "$FERRY" convert --dry-run conv_in conv_out --size 16
one_line_each out.txt 1
says '\xff/a\x0ab.png -> \xff/a\x0ab.jpg' out.txt
echo "cli names: all checks passed"
