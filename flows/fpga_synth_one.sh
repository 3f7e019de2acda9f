#!/usr/bin/env bash
# One Yosys FPGA synthesis job of `stepgen synth` (docs/fpga.md): synthesizes module <top>
# of a generated fabric out of context and writes its statistics and longest path.
#
# usage: flows/fpga_synth_one.sh <rtl_dir> <top> <target> <params> <blackboxes> <out_prefix> <timeout_s> <mem_kb>
#   <rtl_dir>     a stepgen output's rtl/ folder (filelist.f and the .sv files)
#   <top>         the module to synthesize (sg_top, sg_cu, sg_mu, sg_ag, ...)
#   <target>      xc7 | xcup (synth_xilinx -family) | ice40 (synth_ice40 -dsp)
#   <params>      "NAME=VALUE ..." parameter overrides of <top> ("" = none)
#   <blackboxes>  modules kept as black boxes ("" = none): the whole fabric's top is
#                 synthesized once with its units as black boxes
#   <out_prefix>  writes <out_prefix>.stat.json, .ltp.txt, .log
# Yosys runs under `timeout` and a virtual-memory limit so that a design too big for this
# machine fails instead of hanging it. Exit: Yosys's status (124 = timeout).
# Environment: SG_SHARE=off runs synth_xilinx's `coarse` step without `share` (no SAT-based
# resource sharing: more cells, far less memory); stepgen synth asks for it where the pass
# runs out of memory (generator/fpga/synth.cpp shareMode).
set -uo pipefail
[ $# -eq 8 ] || { echo "usage: $0 <rtl_dir> <top> <target> <params> <blackboxes> <out_prefix> <timeout_s> <mem_kb>" >&2; exit 2; }
dir="$(realpath "$1")"; top="$2"; target="$3"; params="$4"; boxes="$5"; out="$6"; limit="$7"; mem="$8"
source "$(dirname "${BASH_SOURCE[0]}")/yosys_reads.sh"
script="$(yosys_reads "$dir" "$boxes") hierarchy -top $top$(yosys_chparam "$params");"
case "$target" in
  xc7|xcup) x="synth_xilinx -family $target -flatten -noiopad -noclkbuf -top $top"
            if [ "${SG_SHARE:-full}" = off ]; then
              # synth_xilinx's own coarse step (Yosys 0.23, `help synth_xilinx`) without share
              script="$script $x -run :coarse; techmap -map +/cmp2lut.v -map +/cmp2lcu.v -D LUT_WIDTH=6;"
              script="$script alumacc; opt; memory -nomap; opt_clean; $x -run map_memory:;"
            else
              script="$script $x;"
            fi
            # The depth report sees each LUT-RAM through its read side only: every cell type
            # flows/ltp_lutram.v has a view of (SG_LTP_<type>) is retyped to it.
            views="$(dirname "${BASH_SOURCE[0]}")/ltp_lutram.v"
            view=" read_verilog -lib $views;"
            for t in $(sed -n 's/.*module SG_LTP_\([A-Z0-9]*\) .*/\1/p' "$views"); do
              view="$view chtype -set SG_LTP_$t t:$t;"
            done
            kinds=("lut:t:LUT*" "muxf:t:MUXF*" "carry:t:CARRY*" "lutram:t:SG_LTP_*" "dsp:t:DSP*") ;;
  ice40) script="$script synth_ice40 -dsp -top $top;"
         view=""
         kinds=("lut:t:SB_LUT4" "carry:t:SB_CARRY" "dsp:t:SB_MAC16") ;;
  *) echo "unknown target $target" >&2; exit 2 ;;
esac
# The longest path counts the combinational cells only, <kind>:<selection> above (flip-flops,
# block RAMs and the black boxes cut it): LUTs, wide muxes, carry cells, LUT-RAM reads (read
# address -> data; the block RAMs' reads are registered), DSP blocks. Each is renamed
# ltp_<kind>_<n> first, so that the report can tell the LUTs on the path from the other cells
# (generator/fpga/synth.cpp pathLutLevels); `rename -enumerate` renames private names only,
# and synth_ice40 ends with public ones (autoname), hence `-hide` before it.
names=""; path=""
for k in "${kinds[@]}"; do
  names="$names rename -hide ${k#*:}; rename -enumerate -pattern ltp_${k%%:*}_% ${k#*:};"; path="$path ${k#*:}"
done
script="$script tee -q -o $out.stat.json stat -json;$view$names tee -q -o $out.ltp.txt ltp -noff $path w:*"
(ulimit -v "$mem"; exec timeout "$limit" yosys -q -l "$out.log" -p "$script") > /dev/null 2>&1
