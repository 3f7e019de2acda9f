#!/usr/bin/env bash
# verify --hierarchical (sg_cu verilated once, docs/hardware.md section 6) gives the
# flat build's run: SwiGLU on arch/small.yaml in 7 sections on 4 contexts (3 of them
# reloaded while the fabric runs), bit-exact with the model in both builds and the same RTL
# cycle count. The flat run is traced so that it reuses the build of the small_fabric
# fixture (tests/sections.cmake). Each report says how its fabric was verilated.
set -euo pipefail
stepgen="$1"; out="$2"; cache="$3"; root="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$out"; mkdir -p "$out"
for m in flat hier; do
  flag=--trace; [ "$m" = hier ] && flag=--hierarchical
  "$stepgen" verify --arch "$root/arch/small.yaml" --graph "$root/examples/swiglu/graph.yaml" \
    --inputs "$root/examples/swiglu/inputs" --sections 7 $flag -o "$out/$m" --build-cache "$cache" > "$out/$m.log"
  cat "$out/$m.log"
  grep -q "outputs: bit-exact" "$out/$m.log"
done
# arch/small.yaml (2 compute units) builds flat unless told --hierarchical (hierarchicalByDefault).
grep -q "^rtl   : .*(flat)$" "$out/flat.log"
grep -q "^rtl   : .*(hierarchical)$" "$out/hier.log"
flat=$(grep -o "^rtl   : [0-9]* cycles" "$out/flat.log")
hier=$(grep -o "^rtl   : [0-9]* cycles" "$out/hier.log")
echo "flat: $flat; hierarchical: $hier"
[ -n "$flat" ] && [ "$flat" = "$hier" ]
