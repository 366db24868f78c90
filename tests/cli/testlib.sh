# Shared by the CLI tests: a scratch directory (removed on exit, and the
# current directory), fail, and expect_rc WANT CMD... (stdout in out.txt,
# stderr in err.txt).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_rc() {
  local want=$1; shift
  set +e; "$@" > out.txt 2> err.txt; local rc=$?; set -e
  [ "$rc" -eq "$want" ] || { cat out.txt err.txt >&2; fail "$* -> exit $rc, want $want"; }
}
