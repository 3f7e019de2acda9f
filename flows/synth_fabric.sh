#!/usr/bin/env bash
# Yosys on the generated fabric of the small test architectures (tests/data/arch_small.yaml,
# arch_small_route.yaml with route-mode memory units) and on every unit template.
#
# usage: flows/synth_fabric.sh <stepgen> <work_dir> [--check]
#
# full (default; minutes to tens of minutes): coarse synthesis of each whole fabric
#   (flows/yosys_synth.sh coarse: elaboration, proc, opt, memory and arithmetic extraction)
#   and full gate-level `synth` of every unit at small parameters; writes a table of cells
#   and CPU seconds to docs/results/yosys_fabric.md.
# --check (the test rtl_yosys_small, about a minute of CPU): Yosys elaborates the route
#   fabric (a superset of the small one) at its own parameters (`hierarchy -check`, the
#   compute unit's word unit a black box), `synth` of every unit at small parameters except
#   sg_cu, and `proc` of sg_cu at small parameters (its gate-level synthesis alone takes over
#   a minute: the full run has it).
# The unit files come from the generated fabric's filelist (packages read first, modules
# with -defer so that only the requested parameters are elaborated).
set -euo pipefail
sg="$1"; work="$2"; shift 2
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
md="$root/docs/results/yosys_fabric.md"
case "${1:-}" in
  "") mode=full ;;
  --check) mode=check ;;
  *) echo "usage: $0 <stepgen> <work_dir> [--check]" >&2; exit 2 ;;
esac
rm -rf "$work"; mkdir -p "$work"; work="$(realpath "$work")"
rows=()

reads_of() {  # <rtl dir> [module]: read_verilog commands, packages first, modules deferred;
  # `module` read with -lib (its ports only: a black box)
  local dir="$1" lib="${2:-}" r="" f
  for f in $(grep '_pkg.sv$' "$dir/filelist.f"); do r="$r read_verilog -sv $dir/$(basename "$f");"; done
  for f in $(grep -v '_pkg.sv$' "$dir/filelist.f"); do
    if [ "$(basename "$f" .sv)" = "$lib" ]; then r="$r read_verilog -sv -lib $dir/$(basename "$f");"
    else r="$r read_verilog -sv -defer $dir/$(basename "$f");"; fi
  done
  echo "$r"
}
cells_of() {  # <stat json>: the whole design's cell count (the last num_cells; Yosys 0.23's
  # stat -json of a hierarchy is not always valid JSON, so no JSON parser)
  grep '"num_cells"' "$1" | tail -1 | tr -dc '0-9'
}
run_yosys() {  # <name> <script>: runs Yosys, records CPU seconds in $work/<name>.time
  local name="$1" script="$2"
  local TIMEFORMAT="%U %S" rc=0
  { time yosys -q -l "$work/$name.log" -p "$script" > /dev/null 2>&1 || rc=$?; } 2> "$work/$name.time"
  if [ $rc != 0 ]; then
    echo "FAIL: yosys $name; see $work/$name.log" >&2
    grep -iE "error" "$work/$name.log" | head -20 >&2
    exit 1
  fi
}
cpu_of() { awk '{printf "%.0f", $1 + $2}' "$work/$1.time"; }

# --check elaborates the route fabric only: its files are a superset of the small one's.
archs="small small_route"; [ $mode = check ] && archs=small_route
for a in $archs; do
  "$sg" compile --arch "$root/tests/data/arch_$a.yaml" --graph "$root/tests/data/graphs/repeat.yaml" \
    -o "$work/$a" > /dev/null
  dir="$work/$a/rtl"
  if [ $mode = check ]; then
    # The compute unit's word unit is a black box here: at the fabric's 16-word beat its
    # elaboration is 22 of the 30 CPU-s; the unit checks below elaborate it at W = 2, and the
    # full run and fpga_synth_default_xc7 (heavy) at the fabrics' own W.
    run_yosys "fabric_$a" "$(reads_of "$dir" sg_cu_word) hierarchy -check -top sg_top"
    echo "yosys hierarchy -check ok: arch_$a.yaml ($(cpu_of "fabric_$a") s)"
  else
    run_yosys "fabric_$a" "$(reads_of "$dir") synth -top sg_top -run begin:fine; tee -q -o $work/fabric_$a.json stat -json"
    rows+=("| fabric arch_$a.yaml | coarse (\`synth -run begin:fine\`) | $(cells_of "$work/fabric_$a.json") | $(cpu_of "fabric_$a") |")
    echo "yosys coarse ok: arch_$a.yaml"
  fi
done

# Units at small parameters, from the route fabric's files (a superset of the small one's).
dir="$work/small_route/rtl"
unit() {  # <name> <top> <flow: synth|proc> <-chparam settings>
  local name="$1" top="$2" flow="$3" params="$4" cmd
  if [ "$flow" = synth ]; then cmd="synth -flatten -top $top"; else cmd="proc; opt -fast"; fi
  run_yosys "unit_$name" "$(reads_of "$dir") hierarchy -check -top $top $params; $cmd; tee -q -o $work/unit_$name.json stat -json"
  local cells; cells=$(cells_of "$work/unit_$name.json")
  rows+=("| $top (${params//-chparam /}) | \`$cmd\` | $cells | $(cpu_of "unit_$name") |")
  echo "yosys $flow ok: $top ($params): $cells cells, $(cpu_of "unit_$name") s"
}
cu_flow=synth; [ $mode = check ] && cu_flow=proc
unit fifo sg_fifo synth "-chparam WIDTH 8 -chparam DEPTH 2"
unit ag sg_ag synth "-chparam W 16 -chparam P 1 -chparam AB 32 -chparam OUTSTANDING 4"
unit mu sg_mu synth "-chparam W 2 -chparam WORDS 64 -chparam CPB 1"
unit route sg_route synth "-chparam W 4 -chparam MAXT 8 -chparam MAXE 4 -chparam MAXK 2 -chparam ROWW 8"
unit combine sg_combine synth "-chparam W 4 -chparam MAXT 8 -chparam MAXK 2 -chparam ROWW 8 -chparam MAXENT 16"
# The flat memory (step_validation's 2,048 lanes; never synthesized: stepgen synth skips it) in the full run only.
[ $mode = full ] && unit cu sg_cu "$cu_flow" "-chparam W 1 -chparam LANES 2 -chparam BUF_WORDS 64 -chparam BF16 0"
# --check elaborates the banked memory and the attention datapath in one sg_cu (below): one
# `proc` of the unit costs about 15 CPU-s.
[ $mode = full ] && unit cu_banked sg_cu synth "-chparam W 2 -chparam LANES 2 -chparam BUF_WORDS 64 -chparam BF16 0 -chparam BANKED 1"
# The attention datapath (ATTN = 1: exp and recip tables, row trees, fp32 max) needs the
# generated sg_attn_lut.sv, which only a fabric listing those functions has; the router's
# topk (TOPK = 1) is elaborated with it.
"$sg" compile --arch "$root/arch/attention.yaml" --graph "$root/examples/attention/graph.yaml" -o "$work/attention" > /dev/null
dir="$work/attention/rtl"
attn="-chparam W 2 -chparam LANES 2 -chparam BUF_WORDS 64 -chparam BF16 0 -chparam ATTN 1 -chparam TOPK 1"
[ $mode = check ] && attn="$attn -chparam BANKED 1"
unit cu_attn sg_cu "$cu_flow" "$attn"

if [ $mode = full ]; then
  mkdir -p "$(dirname "$md")"
  {
    echo "# Yosys on the small test fabrics"
    echo
    echo "Written by \`flows/synth_fabric.sh build/stepgen /tmp/synth\` (the test suite runs only its"
    echo "\`--check\` mode, test rtl_yosys_small). $(yosys -V | head -1);"
    echo "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet HEAD -- rtl_templates generator 2>/dev/null || echo ' (with local changes)'), $(date -u +%Y-%m-%d)."
    echo "CPU seconds are user + system of one Yosys process (on a loaded machine; compare ratios)."
    echo
    echo "| design | flow | cells | CPU s |"
    echo "|---|---|---:|---:|"
    printf '%s\n' "${rows[@]}"
  } > "$md"
  echo "wrote $md"
fi
