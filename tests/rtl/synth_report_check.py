#!/usr/bin/env python3
"""Checks that one `stepgen synth` output folder says the same thing in its three reports.

usage: synth_report_check.py <out_dir>   (with <out_dir>/fpga.csv from --csv)

- every CSV row (unit, LUT, FF, carry, DSP, block RAM, LUT-RAM, levels, LUT levels, status)
  is the same in synth.json and in the readable table synth.txt;
- rows with figures (status ok or partial) agree on them, the others on their status;
- every synthesized row has between 1 and `logic_levels` LUTs on its longest path;
- the fabric row of synth.json (when summed: ok or partial) is the sum over the unit rows it
  counts (count x per-instance figures, the top once, the AXI wrapper not: synth.txt's
  footnote), and a fabric that overflows its part says so in `overflows_part`.
Exit 0 when all hold, 1 with the first difference printed otherwise.
"""
import csv
import json
import sys

FIELDS = ["luts", "ffs", "carries", "dsps", "brams", "lutrams", "logic_levels", "lut_levels"]


def fail(msg):
    print("synth_report_check: " + msg)
    sys.exit(1)


def main():
    if len(sys.argv) != 2:
        fail("usage: synth_report_check.py <out_dir>")
    d = sys.argv[1]
    with open(d + "/fpga.csv") as f:
        rows = list(csv.DictReader(f))
    with open(d + "/synth.json") as f:
        js = json.load(f)
    table = {}
    with open(d + "/synth.txt") as f:
        for line in f:
            cols = line.split()
            if len(cols) >= 11 and cols[0] in ("ag", "cu", "mu", "top", "axi", "fabric"):
                table[cols[0]] = cols
    if not rows:
        fail("fpga.csv has no rows")
    by_unit = {r["unit"]: r for r in js["rows"]}
    for r in rows:
        u = r["unit"]
        if u not in by_unit:
            fail(f"CSV row {u} is not in synth.json")
        j = by_unit[u]
        if r["status"] != j["status"]:
            fail(f"{u}.status: CSV {r['status']}, JSON {j['status']}")
        if r["status"] not in ("ok", "partial"):
            continue  # skipped, timeout, flat-memory, overridden: no figures to compare
        for k in FIELDS:
            if float(r[k]) != float(j[k]):
                fail(f"{u}.{k}: CSV {r[k]}, JSON {j[k]}")
        t = table.get(u)
        if t is None:
            fail(f"CSV row {u} is not in synth.txt")
        if u == "fabric":
            continue  # its figures: the sum below
        # synth.txt: unit count LUT FF carry DSP BRAM LUT-RAM levels LUTs seconds status ...
        if t[2] == "-":
            fail(f"{u}: synth.txt shows no figures for a row the CSV has")
        got = [float(t[i]) for i in range(2, 10)]
        want = [float(r[k]) for k in FIELDS]
        if got != want:
            fail(f"{u}: synth.txt {got}, CSV {want}")
    fab = by_unit.get("fabric")
    if fab is None:
        fail("synth.json has no fabric row")
    for j in js["rows"]:
        if j["status"] == "ok" and not 0 < j["lut_levels"] <= j["logic_levels"]:
            fail(f"{j['unit']}: {j['lut_levels']} LUT levels on a path of {j['logic_levels']} cells")
    if fab["status"] not in ("ok", "partial"):
        print(f"synth_report_check: {len(rows)} rows agree (fabric {fab['status']}, not summed)")
        return
    luts = sum(j["count"] * j["luts"] for j in js["rows"]
               if j["unit"] not in ("fabric", "axi") and j["status"] == "ok")
    if luts != fab["luts"]:
        fail(f"fabric LUT {fab['luts']}, but the unit rows sum to {luts}")
    if fab["luts"] > js["part"]["luts"] and not js["overflows_part"]:
        fail(f"fabric LUT {fab['luts']} > part's {js['part']['luts']} but overflows_part is false")
    print(f"synth_report_check: {len(rows)} rows agree (fabric {fab['luts']} LUT, {fab['status']})")


main()
