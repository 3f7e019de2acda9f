#!/usr/bin/env bash
# `study regions --paper --compare`: R = 128 and 64 in the paper's setting (timing-only, true
# dims, arch/unbounded.yaml) beside the committed fabric CSV. The figure of merit the
# markdown states is recomputed here from the CSVs with awk (utilization ratio and cycle
# change of R = 64 against R = 128 per tiling, R = 64 counted only within 1 % / 5 %), and
# the side-by-side rows must carry the fabric CSV's cycles.
# usage: regions_paper.sh <stepgen> <work dir>   (from the repository root)
set -euo pipefail
sg="$1"; w="$2"
rm -rf "$w"; mkdir -p "$w"
"$sg" study regions --paper --arch arch/unbounded.yaml --regions 128 64 --compare docs/results/timemux_regions.csv \
  -o "$w/work" --csv "$w/paper.csv" --md "$w/paper.md" > "$w/out.txt"
for t in static dynamic; do
  limit=1; [ $t = dynamic ] && limit=5
  want=$(awk -F, -v t=$t -v lim=$limit 'NR > 1 && $1 == t { c[$2] = $5; u[$2] = $9 }
    END { slow = 100 * (c[64] / c[128] - 1); if (slow < lim && u[64] > u[128]) printf "R = 64: %.2fx the utilization of R = 128 at %+.2f %% cycles (limit %d %%)", u[64] / u[128], slow, lim;
          else printf "R = 128: 1.00x the utilization of R = 128 at +0.00 %% cycles (limit %d %%)", lim }' "$w/paper.csv")
  grep -qF -- "the paper's setting, $( [ $t = static ] && echo "static token tile 16" || echo "dynamic tiling" ): $want" "$w/paper.md" ||
    { echo "FAIL: want '$want' for $t in:"; cat "$w/paper.md"; exit 1; }
  fabric=$(awk -F, -v t=$t 'NR > 1 && $1 == t && $2 == 64 { print $5 }' docs/results/timemux_regions.csv)
  grep -qE "^\| $t \| 64 \| $fabric \| " "$w/paper.md" || { echo "FAIL: no side-by-side row with the fabric's $fabric cycles"; exit 1; }
done
echo "PASS: the paper-setting summary equals its recomputation from the CSV"
