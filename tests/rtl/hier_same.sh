#!/usr/bin/env bash
# verify --hierarchical (sg_cu verilated once, docs/hardware.md section 6) gives the
# flat build's run: SwiGLU on arch/small.yaml in 7 sections on 4 contexts (3 of them
# reloaded while the fabric runs), bit-exact with the model in both builds and the same RTL
# cycle count. The flat run is traced so that it reuses the build of the small_fabric
# fixture (tests/sections.cmake); the hierarchical one builds in a cache of its own, whose
# build log must show each block verilated once (flows/verilator_build.sh: Verilator 5.006's
# hierarchical makefile under make -j 2 ran it twice at once). Each report says how its
# fabric was verilated.
set -euo pipefail
stepgen="$1"; out="$2"; cache="$3"; root="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$out"; mkdir -p "$out"
for m in flat hier; do
  flag=--trace; c="$cache"
  [ "$m" = hier ] && { flag=--hierarchical; c="$out/hier_cache"; }
  rc=0
  "$stepgen" verify --arch "$root/arch/small.yaml" --graph "$root/examples/swiglu/graph.yaml" \
    --inputs "$root/examples/swiglu/inputs" --sections 7 $flag -o "$out/$m" --build-cache "$c" > "$out/$m.log" || rc=$?
  cat "$out/$m.log"
  [ "$rc" = 0 ]
  grep -q "outputs: bit-exact" "$out/$m.log"
done
blocks=$(grep -ho '[^/]*_hierMkArgs\.f$' "$out"/hier_cache/small-*/verilator_build.log | grep -v '^Vfabric_' || true)
echo "hierarchical blocks verilated: ${blocks:-none}"
[ -n "$blocks" ]
[ -z "$(printf '%s\n' "$blocks" | sort | uniq -d)" ]
# arch/small.yaml (2 compute units) builds flat unless told --hierarchical (hierarchicalByDefault).
grep -q "^rtl   : .*(flat)$" "$out/flat.log"
grep -q "^rtl   : .*(hierarchical)$" "$out/hier.log"
flat=$(grep -o "^rtl   : [0-9]* cycles" "$out/flat.log")
hier=$(grep -o "^rtl   : [0-9]* cycles" "$out/hier.log")
echo "flat: $flat; hierarchical: $hier"
[ -n "$flat" ] && [ "$flat" = "$hier" ]
