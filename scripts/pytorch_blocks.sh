#!/usr/bin/env bash
# docs/results/pytorch_blocks.csv: each PyTorch example (examples/pytorch) imported with
# `stepgen import onnx`, verified in the model and Verilator (the dense, Llama and embedding blocks on
# arch/onnx_small.yaml, the Qwen3-MoE block, whose MoE needs route-mode memory units and the
# router's functions, on arch/onnx_moe.yaml; the MLP block with its schedule.yaml on
# onnx_small, and with the schedule `import --arch arch/onnx_moe.yaml` chooses there, its
# SwiGLU a stage; the dense and Qwen3-MoE blocks with that schedule too, their attention a
# stage), and compared with PyTorch's own outputs (verify --reference). The dims
# column says how a block was scheduled: "-tile<rows>", and what the import made a stage or a
# function: "-swiglu", "-attn", "-silu", "-linear" (docs/onnx.md#tiling). The wide MLP block's
# weights exceed a compute unit: `--arch` makes its products linear stages (docs/onnx.md#linear).
# usage: scripts/pytorch_blocks.sh <stepgen> <work dir> <csv>
set -euo pipefail
sg="$1"; work="$2"; csv="$3"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$work"
rows=()
# <block>:<arch>:<how the import schedules it: plain | schedule (its schedule.yaml) | arch (--arch)>
for spec in dense_block:onnx_small:plain llama_block:onnx_small:plain embed_block:onnx_small:plain qwen3_moe_block:onnx_moe:plain \
            mlp_block:onnx_small:schedule mlp_block:onnx_moe:arch dense_block:onnx_moe:arch qwen3_moe_block:onnx_moe:arch \
            wide_mlp_block:onnx_moe:arch; do
  IFS=: read -r block arch how <<< "$spec"
  d="$root/examples/pytorch/$block"
  w="$work/$block-$arch"
  opts=()
  [ "$how" != schedule ] || opts=(--schedule "$d/schedule.yaml")
  [ "$how" != arch ] || opts=(--arch "$root/arch/$arch.yaml")
  "$sg" import onnx "$d/model.onnx" -o "$w/import" --data "$d/data" "${opts[@]}"
  "$sg" verify --arch "$root/arch/$arch.yaml" --graph "$w/import/graph.yaml" \
    --inputs "$w/import/inputs" -o "$w/verify" --reference "$w/import/expected" \
    --build-cache "$work/cache" --max-cycle-error 5
  rows+=("$(python3 - "$d" "$w" "$block" <<'PY'
import json, re, sys
d, w, block = sys.argv[1:4]
r = json.load(open(w + "/verify/report.json"))
ref = r["reference"]
dims = open(d + "/dims.txt").read().split()
sched = dict(l.split(":", 1) for l in open(w + "/import/schedule.yaml") if ":" in l and not l.startswith("#"))
if int(sched.get("tile_rows", "0")) > 0:
    dims[0] += "-tile" + sched["tile_rows"].strip()
# What the imported graph holds: SwiGLU and attention stages, a SiLU as Map silu outside them.
graph = open(w + "/import/graph.yaml").read()
if "# stage mlp" in graph:
    dims[0] += "-swiglu"
if any("fn: silu" in l and not re.search(r"name: (mlp|moe|attn)[0-9]+_", l) for l in graph.splitlines()):
    dims[0] += "-silu"
if "# stage attn" in graph:
    dims[0] += "-attn"
if "# stage lin" in graph:
    dims[0] += "-linear"
print(",".join([block, dims[0], dims[1], str(r["sections"]["count"]), str(r["model"]["cycles"]), str(r["rtl"]["cycles"]),
                f'{r["cycle_error_percent"]:.2f}', "yes" if r["outputs_equal"] else "no", f'{ref["max_rel_err"]:.3e}',
                f'{ref["tolerance"]:.3e}']))
PY
)")
done
{
  echo "block,dims,batch,sections,model_cycles,rtl_cycles,error_pct,outputs_bit_exact,max_rel_err_vs_pytorch,tolerance"
  printf '%s\n' "${rows[@]}"
} > "$csv"
cat "$csv"
