#!/usr/bin/env bash
# Golden text dumps: `stepgen compile` of one graph per shipped architecture must give the
# committed fabric top (sg_top.sv.golden) and bitstream listing (fabric.cfg.golden) in
# tests/golden/<arch>/.
# On a difference prints `diff -u golden new` and exits 1. With STEPGEN_REGEN_GOLDEN=1 it
# rewrites the goldens instead, names each file it rewrote and exits 77, which ctest counts
# as skipped (SKIP_RETURN_CODE): a regenerate run checks nothing, so it is never a pass.
# See tests/golden/README.md.
# usage: check.sh <stepgen> <work dir> [arch ...]   (default: default step_validation moe)
set -euo pipefail
sg="$1"; work="$2"; shift 2
root="$(cd "$(dirname "$0")/../.." && pwd)"
archs=("$@"); [ ${#archs[@]} -gt 0 ] || archs=(default step_validation moe)
regen=0; [ "${STEPGEN_REGEN_GOLDEN:-}" = 1 ] && regen=1
fail=0
for a in "${archs[@]}"; do
  w="$work/$a"; rm -rf "$w"; mkdir -p "$w"
  case "$a" in
    default) graph="$root/examples/swiglu/graph.yaml" ;;
    step_validation)  # the first point of `stepgen sweep` (generator/studies/sweep.cpp)
      "$sg" graph swiglu --batch 64 --hidden 256 --ffn 512 --tile-b 16 --tile-f 16 -o "$w/graph.yaml" > /dev/null
      graph="$w/graph.yaml" ;;
    moe)  # the dynamic-tiling Mixtral layer of tests/moe.cmake (moe_layer_mixtral)
      "$sg" graph moe --trace "$root/examples/moe/data/routing_mixtral8x7b_b64.csv" --experts 8 --k 2 \
        --hidden 64 --ffn 224 --tile-b 0 --tile-f 32 -o "$w/g" > /dev/null
      graph="$w/g/graph.yaml" ;;
    *) echo "check.sh: no golden graph for arch '$a'" >&2; exit 2 ;;
  esac
  "$sg" compile --arch "$root/arch/$a.yaml" --graph "$graph" -o "$w/out" > "$w/compile.log"
  for f in rtl/sg_top.sv fabric.cfg; do
    golden="$root/tests/golden/$a/$(basename "$f").golden"  # .golden: a text dump, not a source
    if [ $regen = 1 ]; then
      mkdir -p "$(dirname "$golden")"
      if ! cmp -s "$w/out/$f" "$golden"; then cp "$w/out/$f" "$golden"; echo "rewrote $golden"; else echo "unchanged $golden"; fi
    elif ! diff -u "$golden" "$w/out/$f"; then
      echo "FAIL: $a: $f differs from $golden (if intended: STEPGEN_REGEN_GOLDEN=1 $0 $sg $work)"
      fail=1
    else
      echo "ok $a/$(basename "$f")"
    fi
  done
done
if [ $regen = 1 ]; then
  echo "STEPGEN_REGEN_GOLDEN=1: goldens regenerated, nothing checked (exit 77: skipped); run again without it to check"
  exit 77
fi
exit $fail
