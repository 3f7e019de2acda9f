#!/usr/bin/env bash
# Fuzzes every target with libFuzzer (clang, address and undefined-behaviour checks) and
# prints a table: target, executions, corpus size, findings. Findings (crash-*, timeout-*,
# oom-* inputs) are left in <work>/<target>/findings; once fixed, copy each into
# tests/fuzz/corpus/<target>/ so the replay test keeps it (docs/fuzzing.md).
# usage: tests/fuzz/run.sh [executions per target (default 1000000)] [work dir (default out/fuzz)] [target ...]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
runs="${1:-1000000}"; work="$(mkdir -p "${2:-out/fuzz}" && cd "${2:-out/fuzz}" && pwd)"; shift $(( $# > 2 ? 2 : $# ))
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(arch graph trace kv npy bitstream)
command -v clang++ > /dev/null || { echo "run.sh: clang++ not found (apt-get install clang libclang-rt-dev)" >&2; exit 2; }
build="$work/build"
CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DSTEPGEN_FUZZ=ON > "$work/configure.log"
cmake --build "$build" -j2 --target $(printf 'fuzz_%s ' "${targets[@]}") > "$work/build.log"
printf '| target | executions | seconds | corpus inputs | findings |\n|---|---|---|---|---|\n'
status=0
for t in "${targets[@]}"; do
  d="$work/$t"; rm -rf "$d/findings"; mkdir -p "$d/corpus" "$d/findings"
  # Seeds: the shipped files of the format (as the replay test lists them) and the kept corpus.
  while read -r s; do
    [ -n "$s" ] || continue
    if [ -d "$s" ]; then find "$s" -maxdepth 1 -type f -exec cp {} "$d/corpus/" \; ; else cp "$s" "$d/corpus/"; fi
  done < "$build/fuzz_seeds_$t.txt"
  cp "$root/tests/fuzz/corpus/$t/"* "$d/corpus/"
  start=$(date +%s)
  set +e
  (cd "$d" && "$build/fuzz_$t" -runs="$runs" -seed=1 -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$d/findings/" -print_final_stats=1 corpus > "$d/fuzz.log" 2>&1)
  rc=$?
  set -e
  secs=$(( $(date +%s) - start ))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$d/fuzz.log" | grep -o '[0-9]*$' | tail -1)
  found=$(ls "$d/findings" | wc -l)
  [ "$rc" -eq 0 ] && [ "$found" -eq 0 ] || status=1
  printf '| %s | %s | %s | %s | %s |\n' "$t" "${execs:-?}" "$secs" "$(ls "$d/corpus" | wc -l)" "$found"
done
exit $status
