#!/usr/bin/env bash
# Per-lane cost of the compute unit's arithmetic (flows/fpga_lane.sv) for xc7 and ice40:
# one row per operation with LUT, carry, DSP, FF counts and the longest combinational path.
# usage: flows/fpga_lane.sh <work_dir>
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$1"; mkdir -p "$work"; work="$(realpath "$work")"
names=(fp32_add fp32_mul bf16_mul bf16_mac fp32_add_sp bf16_mac_sp)
echo "target,op,luts,carries,dsps,ffs,logic_levels,seconds"
for target in xc7 ice40; do
  for op in 0 1 2 3 4 5; do
    out="$work/${target}_${names[$op]}"
    case "$target" in
      xc7) synth="synth_xilinx -family xc7 -flatten -noiopad -noclkbuf -top fpga_lane"
           path="t:LUT* t:MUXF* t:CARRY* t:DSP*" ;;
      ice40) synth="synth_ice40 -dsp -top fpga_lane"; path="t:SB_LUT4 t:SB_CARRY t:SB_MAC16" ;;
    esac
    t0=$(date +%s.%N)
    yosys -q -l "$out.log" -p "read_verilog -sv $root/rtl_templates/sg_fp_pkg.sv; read_verilog -sv $root/flows/fpga_lane.sv;
      chparam -set OP $op fpga_lane; $synth; tee -q -o $out.stat.json stat -json; tee -q -o $out.ltp.txt ltp -noff $path w:*" \
      > /dev/null 2>&1
    t1=$(date +%s.%N)
    python3 - "$out" "$target" "${names[$op]}" "$t0" "$t1" <<'PY'
import json, re, sys
out, target, op, t0, t1 = sys.argv[1:]
cells = json.load(open(out + ".stat.json"))["design"]["num_cells_by_type"]
def count(pred): return sum(n for t, n in cells.items() if pred(t))
luts = count(lambda t: t.startswith("LUT") or t == "SB_LUT4")
carries = count(lambda t: t.startswith("CARRY") or t == "SB_CARRY")
dsps = count(lambda t: t.startswith("DSP48") or t == "SB_MAC16")
ffs = count(lambda t: t.startswith("FD") or t.startswith("SB_DFF"))
m = re.search(r"\(length=(\d+)\)", open(out + ".ltp.txt").read())
print(f"{target},{op},{luts},{carries},{dsps},{ffs},{m.group(1) if m else ''},{float(t1) - float(t0):.1f}")
PY
  done
done
