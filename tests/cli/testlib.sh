# Shared by the CLI tests: a scratch directory (removed on exit, and the
# current directory), fail, expect_rc WANT CMD... (stdout in out.txt,
# stderr in err.txt) and expect_ls_missing.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_rc() {
  local want=$1; shift
  set +e; "$@" > out.txt 2> err.txt; local rc=$?; set -e
  [ "$rc" -eq "$want" ] || { cat out.txt err.txt >&2; fail "$* -> exit $rc, want $want"; }
}
# expect_ls_missing FERRY URL...: ls of each URL, one level and -R, names
# nothing: exit 4, nothing listed, the URL named on stderr as missing.
expect_ls_missing() {
  local ferry=$1 url r; shift
  for url in "$@"; do
    for r in "" -R; do
      expect_rc 4 "$ferry" ls $r "$url"
      [ ! -s out.txt ] || fail "$url $r: listed $(cat out.txt)"
      grep -q "^ferry: NotFound: $url: no such object or prefix$" err.txt \
        || { cat err.txt; fail "$url $r: not named as missing"; }
    done
  done
}
