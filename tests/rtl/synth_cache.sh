#!/usr/bin/env bash
# Test fpga_synth_cache: `stepgen synth --cache` (docs/fpga.md).
# 1. Two runs of the small arch's memory unit on iCE40 with one cache: the first runs Yosys
#    and adds its job, the second takes it (table "ok (cached)", synth.json cached) and
#    writes the same CSV byte for byte, Yosys's seconds included; a broken entry runs again.
# 2. The key (flows/fpga_synth_key.sh): the same files in another folder give the same key,
#    a line added inside `ifdef SG_SIM_BODY (the simulation body Yosys never reads) keeps
#    it, the same line in the synthesis body changes it, and so do other parameters.
# usage: tests/rtl/synth_cache.sh <stepgen> <stepgen_root> <work_dir>
set -euo pipefail
sg="$1"; root="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
run() {  # run <tag>: the memory unit of arch_small on iCE40 (does not fit an UP5K: exit 3)
  local rc=0
  "$sg" synth --arch "$root/tests/data/arch_small.yaml" --target ice40 --part hx8k --only mu \
    --cache "$work/cache" -o "$work/$1" --csv "$work/$1.csv" > "$work/$1.txt" || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || { echo "synth run $1 failed (exit $rc)"; exit 1; }
}
run a
run b
cat "$work/a.txt" "$work/b.txt"
grep -qE '^mu .* ok W=' "$work/a.txt" || { echo "first run: the memory unit did not synthesize"; exit 1; }
grep -qE '^mu .* ok \(cached\) W=' "$work/b.txt" || { echo "second run: the memory unit was not taken from the cache"; exit 1; }
python3 -c "import json,sys; r=[x for x in json.load(open(sys.argv[1]))['rows'] if x['unit']=='mu'][0]; sys.exit(0 if r['cached'] else 1)" "$work/b/synth.json"
cmp "$work/a.csv" "$work/b.csv"
[ "$(ls "$work/cache" | wc -l)" -eq 1 ] || { echo "expected one cache entry"; ls "$work/cache"; exit 1; }
# an entry that cannot be read is run again (and written anew)
echo garbage > "$work/cache/$(ls "$work/cache")/seconds"
run c
grep -qE '^mu .* ok W=' "$work/c.txt" || { echo "a broken cache entry was taken"; cat "$work/c.txt"; exit 1; }
run d
grep -qE '^mu .* ok \(cached\) W=' "$work/d.txt" || { echo "the broken cache entry was not written anew"; exit 1; }

key() { bash "$root/flows/fpga_synth_key.sh" "$1" sg_mu ice40 "${2:-W=16 WORDS=512}" ""; }
cp -r "$work/a/rtl" "$work/rtl2"
k0="$(key "$work/a/rtl")"
[ "$(key "$work/rtl2")" = "$k0" ] || { echo "the same files in another folder changed the key"; exit 1; }
f="$work/rtl2/sg_prim_bank_arb.sv"
grep -q '^`ifdef SG_SIM_BODY' "$f" && grep -q '^`else' "$f"
sed -i 's/^`ifdef SG_SIM_BODY$/&\n  logic sim_only_extra;/' "$f"
[ "$(key "$work/rtl2")" = "$k0" ] || { echo "a simulation-body line changed the key"; exit 1; }
sed -i 's/^`else$/&\n  logic synth_extra;/' "$f"
[ "$(key "$work/rtl2")" != "$k0" ] || { echo "a synthesis-body line kept the key"; exit 1; }
[ "$(key "$work/a/rtl" "W=16 WORDS=256")" != "$k0" ] || { echo "other parameters kept the key"; exit 1; }
echo "synth cache: ok"
