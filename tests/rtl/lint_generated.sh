#!/usr/bin/env bash
# The generated fabrics of the shipped architectures (and the small test ones) pass
# verilator --lint-only -Wall with no extra waivers: the fabric sg_top and its AXI wrapper
# sg_axi_top.
# usage: lint_generated.sh <stepgen> <out_dir> [default|heavy]
#   default: arch/default.yaml, arch_small_nomul and arch_small_route (arch_small with
#   route-mode memory units); heavy: the 2,048-bit step_validation fabric, the 17-unit
#   attention fabric, arch/moe.yaml (10 to 60 s each) and arch_small.
set -euo pipefail
stepgen="$1"; out="$2"; tier="${3:-default}"; root="$(cd "$(dirname "$0")/../.." && pwd)"
# The Verilog depends on the architecture only; any graph that maps will do.
case "$tier" in
  default) pairs="arch/default.yaml:examples/swiglu/graph.yaml
                  tests/data/arch_small_nomul.yaml:tests/data/graphs/matmul_accum.yaml
                  tests/data/arch_small_route.yaml:tests/data/graphs/repeat.yaml" ;;
  heavy) pairs="arch/step_validation.yaml:examples/swiglu/graph.yaml arch/attention.yaml:examples/attention/graph.yaml
                arch/moe.yaml:examples/swiglu/graph.yaml tests/data/arch_small.yaml:tests/data/graphs/repeat.yaml" ;;
  *) echo "usage: $0 <stepgen> <out_dir> [default|heavy]" >&2; exit 2 ;;
esac
for pair in $pairs; do
  arch="${pair%%:*}"; graph="${pair#*:}"; name=$(basename "$arch" .yaml)
  "$stepgen" compile --arch "$root/$arch" --graph "$root/$graph" -o "$out/$name" > /dev/null
  cd "$out/$name/rtl"
  files=$(grep '_pkg.sv$' filelist.f | sed 's#^rtl/##'; grep -v '_pkg.sv$' filelist.f | sed 's#^rtl/##')
  verilator --lint-only -Wall --top-module sg_top $files
  verilator --lint-only -Wall --top-module sg_axi_top $files
  echo "lint clean: $arch (sg_top, sg_axi_top)"
  cd - > /dev/null
done
