#!/usr/bin/env bash
# docs/results/pytorch_blocks.csv: each PyTorch example (examples/pytorch) imported with
# `stepgen import onnx`, verified in the model and Verilator (the dense and Llama blocks on
# arch/onnx_small.yaml, the Qwen3-MoE block, whose MoE needs route-mode memory units and the
# router's functions, on arch/onnx_moe.yaml; a block with a schedule.yaml, the MLP block, in
# its row tiles, dims "-tile<rows>"), and compared with PyTorch's own outputs (verify --reference).
# usage: scripts/pytorch_blocks.sh <stepgen> <work dir> <csv>
set -euo pipefail
sg="$1"; work="$2"; csv="$3"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$work"
rows=()
for spec in dense_block:onnx_small llama_block:onnx_small qwen3_moe_block:onnx_moe mlp_block:onnx_small; do
  block="${spec%%:*}"; arch="${spec##*:}"
  d="$root/examples/pytorch/$block"
  schedule=()
  [ ! -f "$d/schedule.yaml" ] || schedule=(--schedule "$d/schedule.yaml")
  "$sg" import onnx "$d/model.onnx" -o "$work/$block/import" --data "$d/data" "${schedule[@]}"
  "$sg" verify --arch "$root/arch/$arch.yaml" --graph "$work/$block/import/graph.yaml" \
    --inputs "$work/$block/import/inputs" -o "$work/$block/verify" --reference "$work/$block/import/expected" \
    --build-cache "$work/cache" --max-cycle-error 5
  rows+=("$(python3 - "$d" "$work/$block/verify" "$block" <<'PY'
import json, sys
d, v, block = sys.argv[1:4]
r = json.load(open(v + "/report.json"))
ref = r["reference"]
dims = open(d + "/dims.txt").read().split()
try:
    tile = [l.split(":")[1].strip() for l in open(d + "/schedule.yaml") if l.startswith("tile_rows:")][0]
    dims[0] += "-tile" + tile
except FileNotFoundError:
    pass
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
