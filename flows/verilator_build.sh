#!/usr/bin/env bash
# Builds the Verilator simulation of a fabric top `sg_top` together with the stepgen harness.
#
# usage: flows/verilator_build.sh <out_dir> <top.sv> [--trace] [--axi] [--hier] [--profile] [extra .sv files...]
#
#   <out_dir>   build folder; the binary is <out_dir>/obj_dir/Vfabric, the verilator/make
#               log is <out_dir>/verilator_build.log
#   <top.sv>    file holding module sg_top
#   --trace     compile FST tracing in (--trace-fst, -DSTEPGEN_TRACE); needed for "trace" in
#               run.json. Costs simulation speed, so only when asked.
#   --axi       <top.sv> holds the AXI wrapper sg_axi_top (docs/axi.md): the top module is
#               sg_axi_top and the harness sim/harness/axi_main.cpp, which includes
#               sg_axi_ports.h from the folder of <top.sv>. No tracing.
#   --hier      Verilator --hierarchical: the module marked /*verilator hier_block*/ (sg_cu)
#               is verilated and compiled once per parameter set and the top calls it.
#               Verilator otherwise writes each instance's logic out again (the 121-unit
#               gqa_dynamic fabric: 2.7 M lines of C++, 15 to 50 minutes to compile on 2
#               cores), so this is for big fabrics; it runs several times slower. sg_ag and
#               sg_mu as hier blocks too built no faster and ran slower.
#   --profile   Verilator --prof-cfuncs: each generated function holds one Verilog block
#               and is named after its module and line (..__PROF__<module>__l<line>), so a
#               sampling profiler attributes the time to them (scripts/profile_rtl.sh, perf).
#               Slower; never in a build cache.
#   extra files further .sv/.v files; *_pkg.sv files are put first (Verilator needs packages
#               before their users). The folder of every file and rtl_templates/ are include
#               directories.
#
# On success prints the binary's absolute path on stdout (exit 0). On failure prints the
# verilator/make output on stderr and exits non-zero. Environment: VERILATOR (default
# verilator), STEPGEN_VERILATOR_JOBS (default 2), STEPGEN_SIM_BODY (default 1; 0: the
# synthesis bodies, below).
set -euo pipefail

usage() { echo "usage: $0 <out_dir> <top.sv> [--trace] [--axi] [--hier] [--profile] [extra .sv files...]" >&2; exit 2; }
[ $# -ge 2 ] || usage

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="$1"; shift
top="$1"; shift
trace=0
axi=0
hier=0
profile=0
pkgs=()
others=()
for a in "$@"; do
  case "$a" in
    --trace) trace=1 ;;
    --axi) axi=1 ;;
    --hier) hier=1 ;;
    --profile) profile=1 ;;
    -*) echo "verilator_build.sh: unknown option $a" >&2; usage ;;
    *_pkg.sv) pkgs+=("$(realpath "$a")") ;;
    *) others+=("$(realpath "$a")") ;;
  esac
done
[ -f "$top" ] || { echo "verilator_build.sh: no such file: $top" >&2; exit 2; }
top="$(realpath "$top")"
for f in ${pkgs[@]+"${pkgs[@]}"} ${others[@]+"${others[@]}"}; do
  [ -f "$f" ] || { echo "verilator_build.sh: no such file: $f" >&2; exit 2; }
done

mkdir -p "$out"
out="$(realpath "$out")"
log="$out/verilator_build.log"

# Include directories: every source's folder plus rtl_templates/ (for sg_beat.svh etc.).
incs=()
declare -A seen=()
for f in ${pkgs[@]+"${pkgs[@]}"} "$top" ${others[@]+"${others[@]}"}; do
  d="$(dirname "$f")"
  if [ -z "${seen[$d]+x}" ]; then seen[$d]=1; incs+=("-I$d"); fi
done
[ -d "$root/rtl_templates" ] && incs+=("-I$root/rtl_templates")

# STEPGEN_VERILATOR_OPT: optimisation of the verilated model's per-cycle code (OPT_FAST,
# default -O1); its construction code (OPT_SLOW) runs once and builds at -O0. Measured on
# arch/moe.yaml (2 cores, no ccache, split): -O2 / -Os builds in 67 s and runs 77.6 k
# cycles/s, -O1 / -O0 in 47 s at 81.9 k cycles/s; -O0 for both builds in 39 s but runs 15x
# slower.
makeflags="OPT_FAST=${STEPGEN_VERILATOR_OPT:--O1} OPT_SLOW=-O0"
command -v ccache >/dev/null 2>&1 && makeflags="$makeflags OBJCACHE=ccache"
cflags="-std=c++17 -I$root/sim"
topmod=sg_top
harness=("$root/sim/harness/harness_main.cpp" "$root/sim/harness/decision_log.cpp")
if [ "$axi" = 1 ]; then
  topmod=sg_axi_top
  harness=("$root/sim/harness/axi_main.cpp" "$root/sim/harness/decision_log.cpp" "$root/sim/common/axi_mem.cpp")
  cflags="$cflags -I$(dirname "$top")"
fi
vflags=()
if [ "$hier" = 1 ]; then vflags+=(--hierarchical); fi
# Without gprof's -pg, which --prof-cfuncs turns on (VM_PROFC): its mcount calls would take
# most of a sampled run.
if [ "$profile" = 1 ]; then vflags+=(--prof-cfuncs); makeflags="$makeflags VM_PROFC=0"; fi
if [ "$trace" = 1 ]; then
  vflags+=(--trace-fst)
  cflags="$cflags -DSTEPGEN_TRACE"
fi

VERILATOR="${VERILATOR:-verilator}"
jobs="${STEPGEN_VERILATOR_JOBS:-2}"
# Loops: unrolled up to 64 iterations when the body is at most 2,000 statements. A rolled
# loop over lanes or words indexes wide vectors by a variable (a shift and mask per slice);
# unrolled, the slices are constant. The loops whose bodies inline an fp32 function stay
# rolled: unrolled, every copy zero-initialises its temporaries each cycle (with no body
# limit the default fabric built in 59 s instead of 26 s and ran 3 % slower). SwiGLU B 64,
# D 128, F 512 on arch/default.yaml: --unroll-count 2 (before) 70 k cycles/s, this 105 k.
# SG_SIM_BODY: the simulation bodies of the primitives that have two (docs/hardware.md
# section 6; Yosys proves each equal to its synthesis body, tests/formal/equiv_prims.sh);
# STEPGEN_SIM_BODY=0 builds the synthesis bodies instead (slower; test
# e2e_synthesis_bodies_default runs a fabric so).
body=()
[ "${STEPGEN_SIM_BODY:-1}" = 0 ] || body=(+define+SG_SIM_BODY)
vcmd=("$VERILATOR" --cc --exe
     -O3 --unroll-count 64 --unroll-stmts 2000 --x-assign fast --x-initial fast --output-split 5000 -Wno-fatal
     +define+SG_DECISION_LOG "${body[@]}"
     --prefix Vfabric --top-module $topmod --Mdir "$out/obj_dir" -o Vfabric
     -CFLAGS "$cflags"
     ${vflags[@]+"${vflags[@]}"} "${incs[@]}"
     ${pkgs[@]+"${pkgs[@]}"} "$top" ${others[@]+"${others[@]}"}
     "${harness[@]}" "$root/sim/common/dram.cpp" "$root/sim/common/npy.cpp" "$root/sim/common/run_desc.cpp")

# Two translation units or one per generated file (Verilator's VM_PARALLEL_BUILDS). Every
# split file parses the model's headers again: the default fabric (179 k lines of C++) took
# 107 CPU-s split (57 s on 2 cores) and 47 CPU-s as one unit (38 s), at the same speed; as
# two units (per-cycle code at OPT_FAST, construction code at OPT_SLOW, side by side) 27 s
# instead of 34 s, at the same speed (2026-12-06; the per-cycle code cut in two more ran
# 8 % slower). Past ~400 k lines the split build's parallelism wins on 2 cores. A
# hierarchical build verilates its blocks and its top inside make (Vfabric_hier.mk), so the
# top's C++ cannot be counted before; its size follows the Verilog's:
# tests/data/arch_grid16.yaml's 58 k lines of .sv (a 51 k-line sg_top) gave 1.2 M lines of
# C++, built in 1,068 s as one unit (4 GB, one core) and in 454 s split; gqa_dynamic's 29 k
# lines (671 k of C++) built in 168 s as one unit.
max_two_units=400000
max_one_unit_sv=40000
build() {
  if [ "$hier" = 1 ]; then
    local par=0
    [ "$(cat "$top" ${others[@]+"${others[@]}"} | wc -l)" -le "$max_one_unit_sv" ] || par=1
    echo "verilator_build.sh: hierarchical, VM_PARALLEL_BUILDS=$par"
    # Verilator 5.006's Vfabric_hier.mk makes a block's .sv and .mk by one rule with two
    # targets, so its `--build -j 2` (hier_build, which needs both) ran that block's
    # Verilator twice at once (every hierarchical build; now and then a torn .mk: "No
    # targets"). Without --build, Verilator verilates the blocks and the top itself
    # (hier_verilation needs one target of each pair); make then only compiles, side by side.
    # tests/rtl/hier_same.sh fails when a block is verilated twice.
    "${vcmd[@]}" || return 1
    # shellcheck disable=SC2086  # makeflags holds several VAR=value words
    make -C "$out/obj_dir" -f Vfabric_hier.mk -j "$jobs" VM_PARALLEL_BUILDS=$par $makeflags hier_build
    return
  fi
  "${vcmd[@]}" || return 1
  local lines
  lines=$(cat "$out"/obj_dir/Vfabric*.cpp | wc -l)
  if [ "$lines" -gt "$max_two_units" ]; then
    echo "verilator_build.sh: $lines lines of C++, VM_PARALLEL_BUILDS=1"
    # shellcheck disable=SC2086  # makeflags holds several VAR=value words
    make -C "$out/obj_dir" -f Vfabric.mk -j "$jobs" VM_PARALLEL_BUILDS=1 $makeflags
    return
  fi
  # Two units, compiled side by side: the per-cycle code (Verilator's fast classes) at
  # OPT_FAST, the construction code (slow classes, run once) at OPT_SLOW. Make's command-line
  # variables replace the class lists Vfabric_classes.mk appends to.
  local d="$out/obj_dir" kind list
  for kind in FAST SLOW; do
    list=$(printf 'p:\n\t@echo $(VM_CLASSES_%s) $(VM_SUPPORT_%s)\n' "$kind" "$kind" |
           make -s --no-print-directory -C "$d" -f Vfabric_classes.mk -f - p)
    { echo "// flows/verilator_build.sh: the model's $kind classes as one translation unit"
      echo "#define VL_INCLUDE_OPT include"
      for c in $list; do echo "#include \"$c.cpp\""; done; } > "$d/Vfabric__Unit$kind.cpp"
  done
  echo "verilator_build.sh: $lines lines of C++ in two units (per-cycle code, construction code)"
  # The per-cycle unit, the longest job, is the first goal: the harness and the rest build
  # beside it.
  # shellcheck disable=SC2086  # makeflags holds several VAR=value words
  make -C "$d" -f Vfabric.mk -j "$jobs" VM_PARALLEL_BUILDS=1 $makeflags \
    VM_CLASSES_FAST=Vfabric__UnitFAST VM_SUPPORT_FAST= VM_CLASSES_SLOW=Vfabric__UnitSLOW VM_SUPPORT_SLOW= \
    Vfabric__UnitFAST.o default
}
if ! build >"$log" 2>&1; then
  cat "$log" >&2
  echo "verilator_build.sh: build failed (log: $log)" >&2
  exit 1
fi
bin="$out/obj_dir/Vfabric"
[ -x "$bin" ] || { cat "$log" >&2; echo "verilator_build.sh: $bin was not produced" >&2; exit 1; }
nwarn=$(grep -c '^%Warning' "$log" || true)
[ "$nwarn" = 0 ] || echo "verilator_build.sh: $nwarn verilator warning(s), see $log" >&2
echo "$bin"
