#!/usr/bin/env bash
# Proves each primitive's simulation body (`define SG_SIM_BODY, what flows/verilator_build.sh
# builds) equal to its synthesis body (what Yosys and the FPGA flows read), with Yosys: both
# bodies are elaborated at one parameter set, joined in a miter (`miter -equiv`) and
# `sat -verify -prove trigger 0` shows that no input makes their outputs differ. Both are
# combinational, so this covers every input (docs/hardware.md section 6, "Two bodies").
#
#   sg_prim_bank_arb  at several (LANES, NB, NCOPY, MI), lanes below, at and above the banks
#   sg_fp_pkg         the adders fp32_add (near/far) and fp32_add_sp (single path), the
#                     synthesis bodies of fp32_add_by, each = fp32_add_sim (its simulation
#                     body); fp32_mul = fp32_mul_sim; bf16_mul = bf16_mul_sim
#
# usage: tests/formal/equiv_prims.sh [work_dir]; exit 0 when every proof holds, 1 otherwise.
# Environment: YOSYS (default yosys).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${1:-$(mktemp -d)}"
mkdir -p "$work"
YOSYS="${YOSYS:-yosys}"
rtl="$root/rtl_templates"

# prove <name> <yosys script>: runs it, keeps its log, says which proof failed.
prove() {
  local name="$1" script="$2" t0 t1
  t0=$(date +%s)
  if ! "$YOSYS" -q -l "$work/$name.log" -p "$script" >/dev/null 2>&1; then
    echo "equiv_prims: $name: NOT equal (or Yosys failed): $work/$name.log" >&2
    grep -m3 -i "error\|fail" "$work/$name.log" >&2 || true
    return 1
  fi
  t1=$(date +%s)
  echo "equiv_prims: $name: equal ($((t1 - t0)) s)"
}

fails=0
for p in "4 4 1 5" "4 4 2 5" "3 4 2 4" "8 4 2 4" "2 8 2 6"; do
  read -r lanes nb nc mi <<<"$p"
  set_params="-set LANES $lanes -set NB $nb -set NCOPY $nc -set MI $mi"
  prove "bank_arb_L${lanes}_NB${nb}_C${nc}_MI${mi}" "
    read_verilog -sv -DSG_SIM_BODY $rtl/sg_prim_bank_arb.sv
    chparam $set_params sg_prim_bank_arb
    rename sg_prim_bank_arb arb_sim
    read_verilog -sv $rtl/sg_prim_bank_arb.sv
    chparam $set_params sg_prim_bank_arb
    rename sg_prim_bank_arb arb_syn
    proc; opt_clean
    miter -equiv -flatten -make_outputs arb_syn arb_sim miter
    hierarchy -top miter
    sat -verify -prove trigger 0 miter" || fails=$((fails + 1))
done

# prove_fn <name> <synthesis expression> <simulation expression>: y = f(a, b) for 32-bit a, b.
prove_fn() {
  cat >"$work/$1.sv" <<SV
module f_syn(input logic [31:0] a, input logic [31:0] b, output logic [31:0] y);
  assign y = $2;
endmodule
module f_sim(input logic [31:0] a, input logic [31:0] b, output logic [31:0] y);
  assign y = $3;
endmodule
SV
  prove "$1" "
    read_verilog -sv $rtl/sg_fp_pkg.sv $work/$1.sv
    proc; opt_clean
    miter -equiv -flatten -make_outputs f_syn f_sim miter
    hierarchy -top miter
    opt -fast
    sat -verify -prove trigger 0 miter" || fails=$((fails + 1))
}
prove_fn fp32_add_near_far "sg_fp_pkg::fp32_add(a, b)" "sg_fp_pkg::fp32_add_sim(a, b)"
prove_fn fp32_add_single_path "sg_fp_pkg::fp32_add_sp(a, b)" "sg_fp_pkg::fp32_add_sim(a, b)"
prove_fn bf16_mul "sg_fp_pkg::bf16_mul(a, b)" "sg_fp_pkg::bf16_mul_sim(a, b)"
prove_fn fp32_mul "sg_fp_pkg::fp32_mul(a, b)" "sg_fp_pkg::fp32_mul_sim(a, b)"

if [ "$fails" != 0 ]; then
  echo "equiv_prims: $fails proof(s) failed" >&2
  exit 1
fi
echo "equiv_prims: every simulation body equals its synthesis body"
