#!/usr/bin/env bash
# docs/results/fpga.csv from `stepgen synth` runs only: every shipped arch on xc7 (its units,
# top, AXI wrapper and the fabric row they sum to), the small test arches on iCE40 with place
# and route of the units that fit an HX8K. Each run writes its own CSV; the table is their
# rows in this order under one header (no row is copied between arches or edited). Many
# hours on a 2-core machine (a 16-lane compute unit is 20 to 55 minutes of Yosys and up to
# 9 GB): scripts/results.sh runs it in the heavy tier.
# usage: scripts/fpga_results.sh <stepgen> <work_dir> <out.csv>
set -euo pipefail
sg="$1"; work="$2"; out="$3"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$work"
runs=()
run() {  # run <tag> <synth args...>: one stepgen synth run; exit 3 (does not fit its part) is a result
  local tag="$1"; shift
  local rc=0
  "$sg" synth "$@" -o "$work/$tag" --csv "$work/$tag.csv" || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || { echo "fpga_results.sh: run $tag failed (exit $rc)" >&2; exit 1; }
  runs+=("$work/$tag.csv")
}
for a in default small moe_small moe attention gqa gqa_dynamic step_validation; do
  run "xc7_$a" --arch "$root/arch/$a.yaml" --target xc7 --timeout 7200 --mem-limit-gb 20
done
run ice40_small --arch "$root/tests/data/arch_small.yaml" --target ice40 --part hx8k --timeout 3600
run ice40_small_pnr_mu --arch "$root/tests/data/arch_small.yaml" --target ice40 --part hx8k --only mu \
  --set mu.W=4,mu.WORDS=256 --pnr
run ice40_small_pnr_ag --arch "$root/tests/data/arch_small.yaml" --target ice40 --part hx8k --only ag --pnr
run ice40_nomul --arch "$root/tests/data/arch_small_nomul.yaml" --target ice40 --part hx8k --timeout 3600
run ice40_nomul_pnr --arch "$root/tests/data/arch_small_nomul.yaml" --target ice40 --part hx8k --only ag,mu,cu \
  --set ag.W=4,mu.W=4,mu.WORDS=256,cu.W=2,cu.LANES=1,cu.BUF_WORDS=128 --pnr
tmp="$out.tmp"
head -n 1 "${runs[0]}" > "$tmp"
for f in "${runs[@]}"; do
  [ "$(head -n 1 "$f")" = "$(head -n 1 "$tmp")" ] || { echo "fpga_results.sh: $f has another header" >&2; exit 1; }
  tail -n +2 "$f" >> "$tmp"
done
mv "$tmp" "$out"
echo "fpga_results.sh: $(($(wc -l < "$out") - 1)) rows from ${#runs[@]} runs -> $out"
