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
