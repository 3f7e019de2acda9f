#!/usr/bin/env bash
# docs/results/fpga.csv from `stepgen synth` runs only: the rows of each run's own CSV
# (docs/results/fpga_runs/, written by scripts/results.sh's fpga_* tables: every shipped arch
# on xc7, the small test arches on iCE40 with place and route of the units that fit an
# HX8K), in the order given, under their one header. No row is copied between runs or edited;
# a run whose header differs, or that is missing, fails the table.
# usage: scripts/fpga_results.sh <out.csv> <run.csv>...
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: scripts/fpga_results.sh <out.csv> <run.csv>..." >&2; exit 2; }
out="$1"; shift
for f in "$@"; do
  [ -s "$f" ] || { echo "fpga_results.sh: $f is missing (run scripts/results.sh fpga_$(basename "$f" .csv) first)" >&2; exit 1; }
done
tmp="$(mktemp "$out.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
head -n 1 "$1" > "$tmp"
for f in "$@"; do
  [ "$(head -n 1 "$f")" = "$(head -n 1 "$tmp")" ] || { echo "fpga_results.sh: $f has another header" >&2; exit 1; }
  tail -n +2 "$f" >> "$tmp"
done
mv "$tmp" "$out"
echo "fpga_results.sh: $(($(wc -l < "$out") - 1)) rows from $# runs -> $out"
