# Sourced by flows/fpga_synth_one.sh and flows/ice40_pnr_one.sh: what both tell Yosys first.
#
# yosys_reads <rtl_dir> <blackboxes>: read_verilog commands for a stepgen rtl/ folder,
#   packages first (Yosys needs them before their users), then the rest in filelist order.
#   -defer: elaborate only what hierarchy asks for, with its parameters (not every template
#   at its defaults first). A module named in <blackboxes> is read with -lib: its ports only.
# yosys_chparam <params>: " -chparam NAME VALUE ..." for "NAME=VALUE ..." (for hierarchy -top).
yosys_reads() {
  local dir="$1" boxes="$2" f m s=""
  for f in $(grep '_pkg.sv$' "$dir/filelist.f"; grep -v '_pkg.sv$' "$dir/filelist.f"); do
    m=$(basename "$f" .sv)
    if [[ " $boxes " == *" $m "* ]]; then s="$s read_verilog -lib -sv $dir/$m.sv;"
    else s="$s read_verilog -defer -sv $dir/$m.sv;"; fi
  done
  echo "$s"
}
yosys_chparam() {
  local p s=""
  for p in $1; do s="$s -chparam ${p%%=*} ${p#*=}"; done
  echo "$s"
}
