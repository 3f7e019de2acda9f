#!/usr/bin/env bash
# Test fpga_ltp_lutram: flows/fpga_synth_one.sh's depth report sees a LUT-RAM through its read
# side only (flows/ltp_lutram.v). tests/data/fpga/ltp_lutram.sv puts a deep write enable in
# front of a 16-entry LUT-RAM whose read data feeds an adder; with the write side counted the
# longest path ran from the enable through the RAM32M into the adder and out at q, without it
# the deepest logic is the enable's own (two 16-bit carry chains and a compare), so the path
# must end at `we`.
# usage: tests/rtl/ltp_lutram.sh <stepgen_root> <work_dir>
set -euo pipefail
root="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work/rtl"
cp "$root/tests/data/fpga/ltp_lutram.sv" "$work/rtl/"
echo ltp_lutram.sv > "$work/rtl/filelist.f"
bash "$root/flows/fpga_synth_one.sh" "$work/rtl" ltp_lutram xc7 "" "" "$work/t" 600 4000000
grep -q '"RAM32M"' "$work/t.stat.json" || { echo "no LUT-RAM inferred"; exit 1; }
cat "$work/t.ltp.txt"
# m.* (the RAM32M cell) with the old flow, ltp_lutram_* (its renamed view) with this one
if grep -qE 'via (m\.|ltp_lutram_)' "$work/t.ltp.txt"; then echo "the longest path goes through the LUT-RAM's write side"; exit 1; fi
tail -n 1 "$work/t.ltp.txt" | grep -q '\\we ' || { echo "the longest path does not end at the write enable"; exit 1; }
