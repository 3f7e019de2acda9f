#!/usr/bin/env bash
# scripts/fpga_results.sh puts the runs' rows in the order given under their one header, and
# fails (leaving no table) on a missing run or one with another header.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
w="$1"; rm -rf "$w"; mkdir -p "$w"
printf 'arch,unit,luts\nb,cu,2\nb,fabric,9\n' > "$w/b.csv"
printf 'arch,unit,luts\na,cu,1\n' > "$w/a.csv"
printf 'arch,unit,ffs\nc,cu,3\n' > "$w/c.csv"
bash "$root/scripts/fpga_results.sh" "$w/out.csv" "$w/b.csv" "$w/a.csv"
printf 'arch,unit,luts\nb,cu,2\nb,fabric,9\na,cu,1\n' > "$w/want.csv"
cmp "$w/out.csv" "$w/want.csv"
for bad in "$w/c.csv" "$w/missing.csv"; do
  rm -f "$w/out2.csv"
  if bash "$root/scripts/fpga_results.sh" "$w/out2.csv" "$w/a.csv" "$bad" 2> "$w/err"; then
    echo "FAIL: merged with $bad"; exit 1
  fi
  left=("$w"/out2.csv*)
  [ ! -e "${left[0]}" ] || { echo "FAIL: a table was left behind for $bad: ${left[*]}"; exit 1; }
  cat "$w/err"
done
echo PASS
