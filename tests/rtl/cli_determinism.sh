#!/usr/bin/env bash
# Compiling twice gives byte-identical Verilog, bitstream, .cfg and mapping.
set -euo pipefail
stepgen="$1"; out="$2"; root="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$out"
for arch in arch/default.yaml arch/step_validation.yaml; do
  for run in a b; do
    "$stepgen" compile --arch "$root/$arch" --graph "$root/examples/swiglu/graph.yaml" -o "$out/$run" > /dev/null
  done
  diff -r "$out/a" "$out/b"
  echo "identical: $arch ($(find "$out/a" -type f | wc -l) files)"
done
# The decoder reads the bitstream back into exactly the configuration the mapping wrote
# ($out/a holds the last architecture's compile).
"$stepgen" decode --arch "$root/arch/step_validation.yaml" "$out/a/fabric.bin" > "$out/decoded.cfg"
diff "$out/decoded.cfg" "$out/a/fabric.cfg"
echo "decode(fabric.bin) == fabric.cfg"
