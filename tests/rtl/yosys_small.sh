#!/usr/bin/env bash
# Yosys accepts the RTL: (1) the whole generated fabric of the small test architecture
# through coarse synthesis (elaboration, proc, opt, memory/arithmetic extraction), and
# (2) full `synth` (to gates) of every unit template at small parameters. Full gate-level
# synthesis of a whole fabric takes longer than CI allows (the compute unit's W word-wide
# fp32 datapaths; see flows/README.md).
set -euo pipefail
stepgen="$1"; out="$2"; root="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$out"; mkdir -p "$out"
"$stepgen" compile --arch "$root/tests/data/arch_small.yaml" --graph "$root/tests/data/graphs/repeat.yaml" -o "$out/fabric" > /dev/null
timeout 900 bash "$root/flows/yosys_synth.sh" "$out/fabric/rtl" coarse "$out/fabric_stat.json"
# The same fabric with route-mode memory units (sg_route and sg_combine inside sg_mu).
"$stepgen" compile --arch "$root/tests/data/arch_small_route.yaml" --graph "$root/tests/data/graphs/repeat.yaml" -o "$out/fabric_route" > /dev/null
timeout 900 bash "$root/flows/yosys_synth.sh" "$out/fabric_route/rtl" coarse "$out/fabric_route_stat.json"
t="$root/rtl_templates"; pkg="$root/tests/rtl/sg_cfg_pkg.sv $root/rtl_templates/sg_beat_pkg.sv"
seq="$t/sg_ctx_seq.sv"
synth_unit() {  # module, chparam settings, files...
  local top="$1" params="$2"; shift 2
  local reads=""
  for f in "$@"; do reads="$reads read_verilog -sv $f;"; done
  timeout 600 yosys -q -l "$out/$top.log" -p "$reads chparam $params $top; synth -flatten -top $top; tee -q -o $out/$top.json stat -json" > /dev/null
  grep -q '"num_cells"' "$out/$top.json"
  echo "yosys synth ok: $top ($params)"
}
synth_unit sg_fifo "-set WIDTH 8 -set DEPTH 2" "$t/sg_fifo.sv"
synth_unit sg_ag "-set W 16 -set P 1 -set AB 32 -set OUTSTANDING 4" $pkg "$seq" "$t/sg_ag.sv"
synth_unit sg_mu "-set W 2 -set WORDS 64 -set CPB 1" $pkg "$seq" "$t/sg_mu.sv"
synth_unit sg_route "-set W 4 -set MAXT 8 -set MAXE 4 -set MAXK 2 -set ROWW 8" "$t/sg_beat_pkg.sv" "$t/sg_route.sv"
synth_unit sg_combine "-set W 4 -set MAXT 8 -set MAXK 2 -set ROWW 8 -set MAXENT 16" "$t/sg_beat_pkg.sv" "$t/sg_combine.sv"
synth_unit sg_cu "-set W 1 -set LANES 2 -set BUF_WORDS 64 -set BF16 0" $pkg "$t/sg_fp_pkg.sv" "$root/tests/rtl/sg_sigmoid_lut.sv" "$seq" "$t/sg_cu.sv"
