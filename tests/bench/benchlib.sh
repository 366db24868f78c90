# Shared by the benchmarks; source it after setting `here` and `work`.
# run NAME CMD...   runs CMD once (output discarded) and keeps, per NAME, the
#                   best wall time in best[NAME] (ms) and the largest peak RSS
#                   in rss[NAME] (KiB). Benchmarks call it in rounds.
# ensure_corpus N   the convert corpus of N PNGs (make_corpus.py) in
#                   $work/corpus-N, read once into the page cache; sets corpus.
declare -A best rss
run() {
  local name=$1 t0 t1 ms peak; shift
  t0=$(date +%s%N)
  /usr/bin/time -f %M -o "$work/$name.rss" "$@" > /dev/null 2> "$work/$name.err" || true
  t1=$(date +%s%N)
  ms=$(( (t1 - t0) / 1000000 ))
  peak=$(tail -1 "$work/$name.rss")
  if [ -z "${best[$name]:-}" ] || [ "$ms" -lt "${best[$name]}" ]; then best[$name]=$ms; fi
  if [ "$peak" -gt "${rss[$name]:-0}" ] 2>/dev/null; then rss[$name]=$peak; fi
}
ensure_corpus() {
  corpus="$work/corpus-$1"
  [ -d "$corpus" ] || /usr/bin/python3 "$here/make_corpus.py" "$corpus" "$1"
  cat "$corpus"/* > /dev/null
}
