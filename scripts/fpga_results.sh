#!/usr/bin/env bash
# docs/results/fpga.csv from `stepgen synth` runs only: every shipped arch on xc7 (its units,
# top, AXI wrapper and the fabric row they sum to), the small test arches on iCE40 with place
# and route of the units that fit an HX8K. Each run writes its own CSV; the table is their
# rows in this order under one header (no row is copied between arches or edited). Many
# hours of Yosys on a 2-core machine (a 16-lane compute unit is 20 to 55 minutes and up to
# 9 GB): scripts/results.sh runs it in the heavy tier. Two runs go at once (STEPGEN_FPGA_JOBS),
# and every Yosys job is kept in <work_dir>/cache (stepgen synth --cache): a run again on the
# same RTL takes the jobs it finds there, so the table can be made over several sittings.
# usage: scripts/fpga_results.sh <stepgen> <work_dir> <out.csv>
set -euo pipefail
sg="$1"; work="$2"; out="$3"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$work"
max="${STEPGEN_FPGA_JOBS:-2}"
runs=()
run() {  # run <tag> <synth args...>: one stepgen synth run in the background; exit 3 (does not fit its part) is a result
  local tag="$1"; shift
  runs+=("$tag")
  rm -f "$work/$tag.rc"
  (
    t0=$(date +%s); rc=0
    "$sg" synth "$@" --cache "$work/cache" -o "$work/$tag" --csv "$work/$tag.csv" > "$work/$tag.txt" 2>&1 || rc=$?
    echo "fpga_results.sh: $tag exit $rc, $(( $(date +%s) - t0 )) s (table: $work/$tag.txt)"
    echo $rc > "$work/$tag.rc"
  ) &
  while [ "$(jobs -rp | wc -l)" -ge "$max" ]; do wait -n || true; done
}
for a in default small moe_small moe attention gqa gqa_dynamic step_validation; do
  # The tops of the GQA fabrics (112 and 121 units, 4.7 and 5 times arch/attention.yaml's
  # 24-unit top, 356 to 834 s of Yosys in docs/results/fpga.md) have never been synthesized:
  # their fabric rows stay partial.
  only=(); case $a in gqa*) only=(--only ag,cu,mu,axi) ;; esac
  run "xc7_$a" --arch "$root/arch/$a.yaml" --target xc7 --timeout 7200 --mem-limit-gb 20 "${only[@]}"
done
run ice40_small --arch "$root/tests/data/arch_small.yaml" --target ice40 --part hx8k --timeout 3600
run ice40_small_pnr_mu --arch "$root/tests/data/arch_small.yaml" --target ice40 --part hx8k --only mu \
  --set mu.W=4,mu.WORDS=256 --pnr
run ice40_small_pnr_ag --arch "$root/tests/data/arch_small.yaml" --target ice40 --part hx8k --only ag --pnr
run ice40_nomul --arch "$root/tests/data/arch_small_nomul.yaml" --target ice40 --part hx8k --timeout 3600
run ice40_nomul_pnr --arch "$root/tests/data/arch_small_nomul.yaml" --target ice40 --part hx8k --only ag,mu,cu \
  --set ag.W=4,mu.W=4,mu.WORDS=256,cu.W=2,cu.LANES=1,cu.BUF_WORDS=128 --pnr
wait
for tag in "${runs[@]}"; do
  rc="$(cat "$work/$tag.rc" 2>/dev/null || echo none)"
  [ "$rc" = 0 ] || [ "$rc" = 3 ] || { echo "fpga_results.sh: run $tag failed (exit $rc; $work/$tag.txt)" >&2; exit 1; }
done
tmp="$out.tmp"
head -n 1 "$work/${runs[0]}.csv" > "$tmp"
for tag in "${runs[@]}"; do
  f="$work/$tag.csv"
  [ "$(head -n 1 "$f")" = "$(head -n 1 "$tmp")" ] || { echo "fpga_results.sh: $f has another header" >&2; exit 1; }
  tail -n +2 "$f" >> "$tmp"
done
mv "$tmp" "$out"
echo "fpga_results.sh: $(($(wc -l < "$out") - 1)) rows from ${#runs[@]} runs -> $out"
