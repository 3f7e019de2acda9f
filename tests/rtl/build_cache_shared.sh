#!/usr/bin/env bash
# Two `stepgen verify` processes that share one build cache (--build-cache), the second
# started while the first is inside its Verilator build, both need the same fabric: both
# must pass, and the cache must end with exactly one complete build of it (beside its lock
# file) and no private build folder left (generator/driver/rtl_run.cpp buildFabric: the
# second waits on the fabric's lock and finds it built; a build goes to a folder of its own
# and is published by one rename; before, the second removed the first's half-built folder
# and the first failed). A third run reuses the build (under 1 s of build).
set -euo pipefail
stepgen="$1"; out="$2"; root="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$out"
mkdir -p "$out"
args=(--arch "$root/tests/data/arch_tiny.yaml" --graph "$root/tests/data/graph_tiny.yaml" --build-cache "$out/cache")
"$stepgen" verify "${args[@]}" -o "$out/a" > "$out/a.log" 2>&1 &
pa=$!
sleep 3  # the second starts while the first is inside its Verilator build
"$stepgen" verify "${args[@]}" -o "$out/b" > "$out/b.log" 2>&1 &
pb=$!
wait "$pa"
wait "$pb"
grep -q '^verdict: PASS' "$out/a.log"
grep -q '^verdict: PASS' "$out/b.log"
entries=$(find "$out/cache" -mindepth 1 -maxdepth 1 ! -name '*.lock' | wc -l)
[ "$entries" = 1 ] || { ls -la "$out/cache" >&2; echo "cache holds $entries entries, expected 1" >&2; exit 1; }
test -x "$out"/cache/tiny-*/obj_dir/Vfabric
"$stepgen" verify "${args[@]}" -o "$out/c" > "$out/c.log" 2>&1
grep -q '^verdict: PASS' "$out/c.log"
python3 - "$out/c/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
b = r["rtl"]["build_seconds"]
assert b < 1.0, f"third run built again ({b} s)"
PY
echo "shared build cache: two concurrent builds, one entry, reused"
