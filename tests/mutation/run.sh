#!/usr/bin/env bash
# Mutation check: applies each one-line bug of tests/mutation/mutations.txt
# alone to a scratch copy of the tree, builds it (ccache) and runs the tests
# named for it; a mutant whose tests all pass SURVIVED: a test is missing.
#   tests/mutation/run.sh [--full] [NAME...]
# --full runs the whole suite for every mutant instead of the named tests;
# NAMEs limit the run to those mutations. The copy is the working tree as it
# is (tracked and new files, uncommitted edits included), in
# $MUTATION_DIR (default build-mutation/ in the tree); JOBS (default 2).
# Exit 0 when every mutant was killed; 1 when one survived, is STALE (its
# original line moved: update mutations.txt) or did not build; 2 when the
# unmutated tree fails its own tests.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
scratch=${MUTATION_DIR:-$root/build-mutation}
jobs=${JOBS:-2}
full=0
only=()
for a in "$@"; do
  case $a in
    --full) full=1 ;;
    -h | --help) sed -n 2,13p "$0"; exit 0 ;;
    *) only+=("$a") ;;
  esac
done
# ccache hits across trees need paths relative to a common base.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=true

mapfile -t muts < <("$here/mutate.py" list)
if [ ${#only[@]} -gt 0 ]; then
  sel=()
  for m in "${muts[@]}"; do
    for n in "${only[@]}"; do [ "${m%%$'\t'*}" = "$n" ] && sel+=("$m"); done
  done
  muts=("${sel[@]}")
fi
[ ${#muts[@]} -gt 0 ] || { echo "no such mutation: ${only[*]}" >&2; exit 2; }

tree=$scratch/tree
log=$scratch/log
mkdir -p "$tree" "$log"
echo "mutation: copying $root to $tree" >&2
(cd "$root" && git ls-files -z -co --exclude-standard) |
  (cd "$root" && rsync -a --delete --from0 --files-from=- ./ "$tree/")
# rsync --files-from never deletes: drop files the source no longer has.
(cd "$tree" && find . -path ./build -prune -o -type f -print) | sed 's|^\./||' |
  while IFS= read -r f; do [ -e "$root/$f" ] || rm -f "$tree/$f"; done

build() { BUILD_DIR=$tree/build "$tree/tools/dev/build.sh" > "$1" 2>&1; }
run_tests() {  # regex, log
  local sel=()
  [ "$full" = 1 ] || sel=(-R "$1")
  (cd "$tree/build" && ctest -j "$jobs" --timeout 600 --no-tests=error \
    "${sel[@]}") > "$2" 2>&1
}

# The tree as it is must build and pass the tests the mutants are held to.
all_tests=$(printf '%s\n' "${muts[@]}" | cut -f3 | paste -sd'|')
echo "mutation: baseline build and tests" >&2
build "$log/baseline.build" || { tail -20 "$log/baseline.build"; exit 2; }
run_tests "$all_tests" "$log/baseline.test" || {
  tail -20 "$log/baseline.test"
  echo "mutation: the unmutated tree fails its tests ($log/baseline.test)" >&2
  exit 2
}

killed=0 bad=()
for m in "${muts[@]}"; do
  IFS=$'\t' read -r name file tests <<< "$m"
  cp -p "$tree/$file" "$log/original"
  if ! "$here/mutate.py" apply "$name" "$tree" 2> "$log/$name.apply"; then
    result=STALE
  elif ! build "$log/$name.build"; then
    result=NO-BUILD
  elif run_tests "$tests" "$log/$name.test"; then
    result=SURVIVED
  else
    result=killed
  fi
  # Back to the original with a new mtime, so the next build recompiles it.
  cat "$log/original" > "$tree/$file"
  printf '%-32s %s\n' "$name" "$result"
  if [ "$result" = killed ]; then
    killed=$((killed + 1))
  else
    bad+=("$name ($result)")
  fi
done
echo "mutation: $killed of ${#muts[@]} mutants killed" >&2
if [ ${#bad[@]} -gt 0 ]; then
  printf 'mutation: not killed: %s\n' "${bad[@]}" >&2
  echo "mutation: logs in $log" >&2
  exit 1
fi
