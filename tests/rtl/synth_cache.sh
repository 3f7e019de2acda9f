#!/usr/bin/env bash
# Test fpga_synth_cache: `stepgen synth --cache` (docs/fpga.md).
# 1. Two runs of the small arch's address generator and memory unit on iCE40 with one cache:
#    the first runs the two Yosys jobs at once (--jobs 2: the second starts before the first
#    ends) and adds them, the second takes them (table "ok (cached)", synth.json cached) and
#    writes the same CSV byte for byte, Yosys's seconds included. A run without cache, one
#    job at a time, gives the first run's rows but for the seconds. A broken entry runs again
#    and is replaced.
# 2. The key (flows/fpga_synth_key.sh): the same files in another folder give the same key,
#    a line added inside `ifdef SG_SIM_BODY (the simulation body Yosys never reads) keeps
#    it, the same line in the synthesis body changes it, and so do other parameters.
# usage: tests/rtl/synth_cache.sh <stepgen> <stepgen_root> <work_dir>
set -euo pipefail
sg="$1"; root="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
run() {  # run <tag> [synth options]: arch_small's ag and mu on iCE40 (they do not fit an HX8K: exit 3)
  local rc=0 tag="$1"; shift
  "$sg" synth --arch "$root/tests/data/arch_small.yaml" --target ice40 --part hx8k --only ag,mu \
    -o "$work/$tag" --csv "$work/$tag.csv" "$@" > "$work/$tag.txt" 2> "$work/$tag.err" || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || { echo "synth run $tag failed (exit $rc)"; exit 1; }
}
run a --cache "$work/cache" --jobs 2
run b --cache "$work/cache"
cat "$work/a.txt" "$work/b.txt"
for u in ag mu; do
  grep -qE "^$u .* ok W=" "$work/a.txt" || { echo "first run: $u did not synthesize"; exit 1; }
  grep -qE "^$u .* ok \(cached\) W=" "$work/b.txt" || { echo "second run: $u was not taken from the cache"; exit 1; }
done
python3 -c "import json,sys; r=[x for x in json.load(open(sys.argv[1]))['rows'] if x['unit']=='mu'][0]; sys.exit(0 if r['cached'] else 1)" "$work/b/synth.json"
cmp "$work/a.csv" "$work/b.csv"
# --jobs 2: the second job started before the first finished
cat "$work/a.err"
sed -n 2p "$work/a.err" | grep -q 'started, job 2 of 2' || { echo "--jobs 2 ran the jobs one after the other"; exit 1; }
[ "$(ls "$work/cache" | wc -l)" -eq 2 ] || { echo "expected two cache entries"; ls "$work/cache"; exit 1; }
run e --jobs 1
diff <(cut -d, -f12 --complement "$work/a.csv") <(cut -d, -f12 --complement "$work/e.csv")
# an entry that cannot be read is run again (and written anew)
mu_key="$(sed -n 1p "$work/a/mu.key")"
echo garbage > "$work/cache/$mu_key/seconds"
run c --cache "$work/cache"
grep -qE '^mu .* ok W=' "$work/c.txt" || { echo "a broken cache entry was taken"; cat "$work/c.txt"; exit 1; }
run d --cache "$work/cache"
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
