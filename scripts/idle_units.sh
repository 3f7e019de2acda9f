#!/usr/bin/env bash
# What an idle compute unit costs the Verilator simulation: the SwiGLU layer (B 64, D 128,
# F 512, tiles 16 x 32, the graph of docs/results/verilator_profile_default.md) on
# arch/default.yaml and on the same fabric with one and two more rows of compute units,
# which the mapping leaves idle (the placement is the same). Each fabric is verilated flat
# (`stepgen verify --flat`, a build cache per run folder) and run five times; the table
# gives the median cycles/s and the microseconds per simulated cycle, and the note under it
# the microseconds an idle unit adds per cycle (the slope over the rows) against what a
# unit of the default fabric costs on average (docs/hardware.md section 6, "Idle units").
# usage: scripts/idle_units.sh <stepgen> <work_dir> <out.md>
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 <stepgen> <work_dir> <out.md>" >&2; exit 2; }
sg="$(realpath "$1")"; work="$2"; out="$3"
root="$(cd "$(dirname "$0")/.." && pwd)"
rm -rf "$work"
mkdir -p "$work"
work="$(realpath "$work")"
"$sg" graph swiglu --batch 64 --hidden 128 --ffn 512 --tile-b 16 --tile-f 32 -o "$work/swiglu.yaml" > /dev/null

# default.yaml with `extra` more rows of compute units (5 per row).
arch_with_rows() {
  local extra="$1" f="$work/default_idle$1.yaml" rows
  rows=$(awk '/^grid:/ { match($0, /rows: *[0-9]+/); print substr($0, RSTART + 5, RLENGTH - 5) + 0 }' "$root/arch/default.yaml")
  sed -e "s/^name: default/name: default_idle$extra/" -e "s/rows: *$rows}/rows: $((rows + extra))}/" "$root/arch/default.yaml" > "$f"
  for _ in $(seq "$extra"); do echo "  - [cu, cu, cu, cu, cu]" >> "$f"; done
  echo "$f"
}

# rtl_field <report.json> <key>: one figure of the report's RTL run.
rtl_field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["rtl"][sys.argv[2]])' "$1" "$2"; }

# Builds from an empty cache, ccache bypassed (as `stepgen bench`); then five rounds of one
# run per fabric, interleaved, so that a slow phase of the machine touches every fabric alike.
export CCACHE_DISABLE=1
archs=()
declare -a build rates
for extra in 0 1 2; do
  arch="$root/arch/default.yaml"
  [ "$extra" = 0 ] || arch=$(arch_with_rows "$extra")
  archs+=("$arch")
  echo "idle_units.sh: $(basename "$arch"): build" >&2
  "$sg" verify --arch "$arch" --graph "$work/swiglu.yaml" -o "$work/v$extra" --flat --build-cache "$work/cache$extra" > "$work/verify$extra.log"
  grep -q '^verdict: PASS' "$work/v$extra/report.txt" || { echo "idle_units.sh: verify of $arch did not pass ($work/v$extra/report.txt)" >&2; exit 1; }
  build[extra]=$(printf '%.1f' "$(rtl_field "$work/v$extra/report.json" build_seconds)")
done
for extra in 1 2; do
  diff <(grep '^op ' "$work/v0/mapping.txt") <(grep '^op ' "$work/v$extra/mapping.txt") > /dev/null ||
    { echo "idle_units.sh: the placement on ${archs[extra]} is not default.yaml's" >&2; exit 1; }
done
for k in 1 2 3 4 5; do
  echo "idle_units.sh: runs, round $k of 5" >&2
  for extra in 0 1 2; do
    "$sg" verify --arch "${archs[extra]}" --graph "$work/swiglu.yaml" -o "$work/v$extra" --flat --build-cache "$work/cache$extra" > "$work/verify$extra.log"
    rates[extra]+="$(rtl_field "$work/v$extra/report.json" cycles_per_second) "
  done
done
rows_md=""
declare -a us_per_cycle cus idle units
for extra in 0 1 2; do
  arch="${archs[extra]}"; v="$work/v$extra"
  # shellcheck disable=SC2086  # five numbers
  rate=$(printf '%s\n' ${rates[extra]} | sort -g | sed -n 3p)
  cycles=$(rtl_field "$v/report.json" cycles)
  ncu=$(grep '^  - \[' "$arch" | grep -oE '\bcu\b' | wc -l)
  nunits=$(grep '^  - \[' "$arch" | grep -oE '\b(ag|cu|mu)\b' | wc -l)
  used=$(grep -oE -- '-> u_cu_x[0-9]+_y[0-9]+' "$v/mapping.txt" | sort -u | wc -l)
  us=$(awk -v r="$rate" 'BEGIN { printf "%.2f", 1e6 / r }')
  us_per_cycle[extra]=$us; cus[extra]=$ncu; idle[extra]=$((ncu - used)); units[extra]=$nunits
  rows_md+=$(printf '| %-22s | %5d | %3d | %4d | %4d | %7s | %9d | %9.0f | %6s |' \
    "$(basename "$arch")" "$nunits" "$ncu" "$used" "$((ncu - used))" "${build[extra]}" "$cycles" "$rate" "$us")$'\n'
done
slope=$(awk -v a="${us_per_cycle[0]}" -v b="${us_per_cycle[2]}" -v n="$((cus[2] - cus[0]))" 'BEGIN { printf "%.2f", (b - a) / n }')
per_unit=$(awk -v a="${us_per_cycle[0]}" -v n="${units[0]}" 'BEGIN { printf "%.2f", a / n }')
commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
tmp="$out.tmp"
{
  echo "# Verilator: what an idle compute unit costs"
  echo
  echo "Written by \`scripts/idle_units.sh\` at $commit on $(date -u +%Y-%m-%d): the SwiGLU layer"
  echo "(B 64, D 128, F 512, tiles 16 x 32) on arch/default.yaml and on the same fabric with one and"
  echo "two more rows of compute units, which the mapping leaves idle; each verilated flat (\`stepgen"
  echo "verify --flat\`; build from an empty cache, ccache bypassed), RTL cycles/s the median of 5 runs"
  echo "(one run of each fabric in turn), outputs bit-exact with the model in each."
  echo
  echo "| arch                   | units | CUs | used | idle | build s |    cycles |  RTL cyc/s | us/cyc |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s' "$rows_md"
  echo
  echo "- each idle compute unit adds $slope us per simulated cycle (the slope from 0 to ${idle[2]} idle"
  echo "  units); the default fabric costs ${us_per_cycle[0]} us per cycle, $per_unit us per unit of its ${units[0]}."
  echo "  Verilator evaluates every unit in every cycle, so a 64-unit fabric (arch_grid8) or a 256-unit one"
  echo "  (arch_grid16) running the same 6-operator graph pays for all of its units."
} > "$tmp"
mv "$tmp" "$out"
echo "$out"
