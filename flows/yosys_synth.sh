#!/usr/bin/env bash
# Synthesizes a generated fabric with Yosys and prints its resources.
#
# usage: flows/yosys_synth.sh <rtl_dir> [generic|coarse|ice40|xilinx] [report.json]
#   <rtl_dir>  a stepgen output's rtl/ folder (holds filelist.f and the .sv files)
# generic (default) runs `synth -flatten`; coarse runs `synth -run begin:fine` (elaboration,
# proc, opt, memory and arithmetic extraction, no gate mapping: what CI affords for a whole
# fabric); ice40 runs `synth_ice40 -dsp`; xilinx runs `synth_xilinx -flatten`. The statistics go to report.json (default <rtl_dir>/../synth_stat.json).
# Exits non-zero if Yosys rejects the design. Big fabrics take long: keep CI on small archs.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 <rtl_dir> [generic|coarse|ice40|xilinx] [report.json]" >&2; exit 2; }
dir="$(realpath "$1")"; flow="${2:-generic}"; report="${3:-$dir/../synth_stat.json}"
# Packages first (Yosys needs them before their users), then the rest in filelist order.
files=$(grep '_pkg.sv$' "$dir/filelist.f"; grep -v '_pkg.sv$' "$dir/filelist.f")
reads=""
for f in $files; do reads="$reads read_verilog -sv $dir/$(basename "$f");"; done
case "$flow" in
  generic) synth="synth -flatten -top sg_top" ;;
  coarse) synth="synth -top sg_top -run begin:fine" ;;
  ice40) synth="synth_ice40 -dsp -top sg_top" ;;
  xilinx) synth="synth_xilinx -flatten -family xc7 -top sg_top" ;;
  *) echo "unknown flow $flow" >&2; exit 2 ;;
esac
log="$dir/../yosys_$flow.log"
if ! yosys -q -l "$log" -p "$reads $synth; tee -q -o $report stat -json" > /dev/null 2>&1; then
  echo "yosys failed; see $log" >&2
  grep -iE "error" "$log" | head -20 >&2
  exit 1
fi
echo "yosys $flow: ok, statistics in $report"
grep -E '"num_cells"|"num_wires"' "$report" | head -2
