#!/bin/bash
# A MoE layer on arch/moe.yaml: `stepgen verify` must pass (RTL outputs bit-exact with the
# model, off-chip bytes equal, cycles within 10 %) for a routing trace, static token tile 16
# and dynamic tiling. <what> = layer: the whole layer (dispatch, experts' SwiGLU on weights
# loaded per expert, combine with the router weights); dispatch: only SelectGen -> Partition
# -> Reshape/Promote -> EagerMerge, stored.
# <what> = depths <ref work dir>: the dynamic graph of <ref work dir>/g0 on copies of the fabric
# with link FIFO depths 1 and 8; the outputs must equal the depth-2 run's in <ref>/v0 (a
# `layer` run with the same arguments: tests/moe.cmake orders them with a fixture).
# Usage: moe_fabric.sh <stepgen> <work dir> <fabric cache> <trace csv> <experts> <k> <ffn> <tile_f> <what> [ref]
set -euo pipefail
sg=$1 work=$2 cache=$3 trace=$4 experts=$5 k=$6 ffn=$7 tf=$8 what=$9 ref=${10:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=y
extra=(--ffn "$ffn" --tile-f "$tf")
if [ "$what" = dispatch ]; then out=xm extra=(--dispatch-only); fi
rm -rf "$work" && mkdir -p "$work"
tiles="16 0"; [ "$what" = depths ] && tiles=""
for tb in $tiles; do
  "$sg" graph moe --trace "$trace" --experts "$experts" --k "$k" --hidden 64 --tile-b "$tb" "${extra[@]}" \
    -o "$work/g$tb" > /dev/null
  "$sg" verify --arch "$root/arch/moe.yaml" --graph "$work/g$tb/graph.yaml" --inputs "$work/g$tb/inputs" \
    -o "$work/v$tb" --build-cache "$cache" --max-cycle-error 10   # the validation sweep's tolerance
done
if [ "$what" = depths ]; then
  for d in 1 8; do
    sed "s/fifo_depth: 2/fifo_depth: $d/; s/^name: moe/name: moe_fifo$d/" "$root/arch/moe.yaml" > "$work/moe_fifo$d.yaml"
    "$sg" verify --arch "$work/moe_fifo$d.yaml" --graph "$ref/g0/graph.yaml" --inputs "$ref/g0/inputs" \
      -o "$work/vd$d" --build-cache "$cache" | tee "$work/vd$d.txt"
    grep -q 'outputs: bit-exact' "$work/vd$d.txt"
    cmp "$ref/v0/rtl_out/$out.npy" "$work/vd$d/rtl_out/$out.npy"
  done
fi
