#!/usr/bin/env bash
# RTL study points as jobs: random graphs 1 .. 4 on arch/default.yaml at link FIFO depth 2,
# serial against plan + `jobs run -j 2` + merge. Both jobs of a pair share the fabric build
# cache at once (driver/rtl_run.cpp locks it); the CSV must be byte-identical.
# usage: rtl_points.sh <stepgen> <work dir> [<build cache to link>]   (from the repository root)
set -euo pipefail
sg="$1"; w="$2"; cache="${3:-}"
rm -rf "$w"; mkdir -p "$w/serial" "$w/work"
if [ -n "$cache" ]; then
  mkdir -p "$cache"; cache="$(realpath "$cache")"
  ln -sfn "$cache" "$w/serial/build"; ln -sfn "$cache" "$w/work/build"
fi
study=(study random --first 1 --seeds 4 --random-archs 0 --fifo-depths 2)
"$sg" "${study[@]}" -o "$w/serial" --csv "$w/serial.csv" > "$w/serial.out" 2>&1 || { tail -n 20 "$w/serial.out"; exit 1; }
"$sg" "${study[@]}" -o "$w/work" --csv "$w/jobs.csv" --plan "$w/plan"
"$sg" jobs run "$w/plan" -j 2
"$sg" jobs merge "$w/plan" > "$w/merge.out"
grep -q ",ok," "$w/jobs.csv" || { echo "FAIL: no RTL point finished"; cat "$w/jobs.csv"; exit 1; }
cmp "$w/serial.csv" "$w/jobs.csv" || { diff "$w/serial.csv" "$w/jobs.csv"; echo "FAIL: merged CSV differs"; exit 1; }
echo "PASS: $(($(wc -l < "$w/jobs.csv") - 1)) RTL points merged equal to the serial study"
