#!/usr/bin/env bash
# Compiling twice gives byte-identical Verilog, bitstream, .cfg and mapping; and the decoder
# reads each bitstream back into the configuration the mapping built (fabric.cfg is written
# from the mapping's image, not decoded, so the comparison checks encode and decode).
set -euo pipefail
stepgen="$1"; out="$2"; root="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$out"
for arch in default step_validation small; do
  for run in a b; do
    "$stepgen" compile --arch "$root/arch/$arch.yaml" --graph "$root/examples/swiglu/graph.yaml" -o "$out/$arch/$run" > /dev/null
  done
  diff -r "$out/$arch/a" "$out/$arch/b"
  echo "identical: $arch ($(find "$out/$arch/a" -type f | wc -l) files)"
  "$stepgen" decode --arch "$root/arch/$arch.yaml" "$out/$arch/a/fabric.bin" > "$out/$arch/decoded.cfg"
  diff "$out/$arch/a/fabric.cfg" "$out/$arch/decoded.cfg"
  test -s "$out/$arch/decoded.cfg"
  echo "decode(fabric.bin) == fabric.cfg: $arch"
done
