# Shared by the benchmarks; source it after setting `here` and `work`.
# run NAME CMD...   runs CMD once (output discarded) and keeps, per NAME, the
#                   best wall time in best[NAME] (ms), every wall time in
#                   walls[NAME] and CPU time (user+sys, ms) in cpus[NAME]
#                   (space separated), and the largest peak RSS in rss[NAME]
#                   (KiB; every run's in rsss[NAME]). Benchmarks call it in
#                   rounds.
# median LIST       the median of space-separated numbers.
# random_files MIB  in the current directory: `old` (MIB MiB of random
#                   bytes), `same` (a copy), `changed` (other random bytes),
#                   made once; read into the page cache.
# ensure_corpus N [MIX]   the convert corpus of N PNGs (make_corpus.py, mix
#                   `photos` unless given) in $work/corpus-N[-MIX], read once
#                   into the page cache; sets corpus.
declare -A best rss rsss walls cpus
run() {
  local name=$1 t0 t1 ms peak user sys; shift
  t0=$(date +%s%N)
  /usr/bin/time -f '%M %U %S' -o "$work/$name.rss" "$@" > /dev/null 2> "$work/$name.err" || true
  t1=$(date +%s%N)
  ms=$(( (t1 - t0) / 1000000 ))
  read -r peak user sys < <(tail -1 "$work/$name.rss")
  if [ -z "${best[$name]:-}" ] || [ "$ms" -lt "${best[$name]}" ]; then best[$name]=$ms; fi
  if [ "$peak" -gt "${rss[$name]:-0}" ] 2>/dev/null; then rss[$name]=$peak; fi
  rsss[$name]="${rsss[$name]:-} $peak"
  walls[$name]="${walls[$name]:-} $ms"
  cpus[$name]="${cpus[$name]:-} $(echo "($user + $sys) * 1000 / 1" | bc)"
}
median() {
  # shellcheck disable=SC2086
  printf '%s\n' $1 | sort -n | awk '{v[NR] = $1} END {
    print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
ensure_corpus() {
  local mix=${2:-photos}
  corpus="$work/corpus-$1"
  [ "$mix" = photos ] || corpus+="-$mix"
  [ -d "$corpus" ] || /usr/bin/python3 "$here/make_corpus.py" "$corpus" "$1" "$mix"
  cat "$corpus"/* > /dev/null
}
random_files() {
  if [ ! -f old ] || [ "$(stat -c %s old)" -ne $(($1 << 20)) ]; then
    echo "making $1 MiB files in $PWD ..."
    head -c $(($1 << 20)) /dev/urandom > old
    cp old same
    head -c $(($1 << 20)) /dev/urandom > changed
  fi
  cat old same changed > /dev/null
}
