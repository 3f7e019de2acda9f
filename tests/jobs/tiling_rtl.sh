#!/usr/bin/env bash
# The tiling study's RTL points as jobs (`study tiling --rtl --arch arch/moe.yaml`: 10 points
# at 3 link FIFO depths, 30 verifies) serially and through plan + `jobs run -j 2` + merge. The
# merge runs the study again, which rewrites each point's example folder; the CSV and the
# markdown must equal the serial study's, its "outputs = dynamic" column included (it read
# the model's outputs from verify folders inside the examples and said NO everywhere).
# Heavy: 33 jobs. usage: tiling_rtl.sh <stepgen> <work dir>   (from the repository root)
set -euo pipefail
sg="$1"; w="$2"
rm -rf "$w"; mkdir -p "$w"
study=(study tiling --rtl --arch arch/moe.yaml)
"$sg" "${study[@]}" -o "$w/serial" --csv "$w/serial.csv" --md "$w/serial.md" > "$w/serial.out" 2>&1 || { tail -n 20 "$w/serial.out"; exit 1; }
"$sg" "${study[@]}" -o "$w/work" --csv "$w/jobs.csv" --md "$w/jobs.md" --plan "$w/plan" 2> /dev/null
"$sg" jobs run "$w/plan" -j 2 > /dev/null
"$sg" jobs merge "$w/plan" > "$w/merge.out" 2>&1 || { tail -n 20 "$w/merge.out"; exit 1; }
grep -q "| yes |" "$w/serial.md" || { echo "FAIL: the serial study has no outputs = dynamic row"; exit 1; }
cmp "$w/serial.csv" "$w/jobs.csv" || { diff "$w/serial.csv" "$w/jobs.csv" | head; echo "FAIL: merged CSV differs"; exit 1; }
cmp "$w/serial.md" "$w/jobs.md" || { diff "$w/serial.md" "$w/jobs.md" | head; echo "FAIL: merged markdown differs"; exit 1; }
echo "PASS: the tiling study's 30 RTL points merged equal to the serial study"
