#!/usr/bin/env bash
# Timing-only study points as jobs: `study tiling-full` (dynamic tiling of Mixtral and Qwen3 at
# batch 64, true dimensions) serially and through plan + `jobs run -j 2` + merge. The tables
# must be equal but for the model's wall seconds, which the merge keeps per job (last column
# of the CSV and of the markdown rows).
# usage: timing_points.sh <stepgen> <work dir>   (from the repository root)
set -euo pipefail
sg="$1"; w="$2"
rm -rf "$w"; mkdir -p "$w"
study=(study tiling-full --batches 64 --tiles 0)
"$sg" "${study[@]}" -o "$w/serial" --csv "$w/serial.csv" --md "$w/serial.md" > /dev/null 2>&1
"$sg" "${study[@]}" -o "$w/work" --csv "$w/jobs.csv" --md "$w/jobs.md" --plan "$w/plan" 2> /dev/null
[ "$(wc -l < "$w/plan/commands.txt")" = 2 ] || { echo "FAIL: expected 2 jobs"; exit 1; }
"$sg" jobs run "$w/plan" -j 2
"$sg" jobs merge "$w/plan" > /dev/null 2>&1
[ "$(wc -l < "$w/jobs.csv")" = 3 ] || { echo "FAIL: merged CSV has not 2 rows"; cat "$w/jobs.csv"; exit 1; }
cmp <(cut -d, -f1-16 "$w/serial.csv") <(cut -d, -f1-16 "$w/jobs.csv") || { echo "FAIL: CSV differs"; diff "$w/serial.csv" "$w/jobs.csv"; exit 1; }
cmp <(sed 's/| [0-9.]* |$//' "$w/serial.md") <(sed 's/| [0-9.]* |$//' "$w/jobs.md") || { echo "FAIL: markdown differs"; diff "$w/serial.md" "$w/jobs.md"; exit 1; }
echo "PASS: timing-only points merged equal to the serial study (wall seconds aside)"
