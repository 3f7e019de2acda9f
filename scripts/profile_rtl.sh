#!/usr/bin/env bash
# Where Verilator's time goes on one fabric and graph: `stepgen verify` writes the fabric's
# Verilog, bitstream and run.json; the fabric is verilated again, flat, with --prof-cfuncs
# (flows/verilator_build.sh --profile: one Verilog block per generated function, named after
# its module and line); `perf record` samples one run and the samples are summed by module
# and by block. Writes <out.md>: the run's figures, the share of each module and the
# Verilog blocks with the most time. The profiled build runs slower than verify's (its
# blocks are not inlined); the shares, not its speed, are the result.
# usage: scripts/profile_rtl.sh <stepgen> <arch.yaml> <graph.yaml> <work_dir> <out.md> [blocks]
set -euo pipefail
[ $# -ge 5 ] || { echo "usage: $0 <stepgen> <arch.yaml> <graph.yaml> <work_dir> <out.md> [blocks]" >&2; exit 2; }
sg="$(realpath "$1")"; arch="$2"; graph="$3"; work="$4"; out="$5"; blocks="${6:-20}"
root="$(cd "$(dirname "$0")/.." && pwd)"
command -v perf > /dev/null || { echo "profile_rtl.sh: needs perf (Debian: linux-perf)" >&2; exit 2; }
rm -rf "$work"
mkdir -p "$work"
work="$(realpath "$work")"
"$sg" verify --arch "$arch" --graph "$graph" -o "$work/v" --build-cache "$work/cache" > "$work/verify.log"
top=""
files=()
while read -r f; do
  case "$f" in *axi*) ;; *sg_top.sv) top="$work/v/$f" ;; *) files+=("$work/v/$f") ;; esac
done < "$work/v/rtl/filelist.f"
bash "$root/flows/verilator_build.sh" "$work/prof" "$top" --profile "${files[@]}" > /dev/null
(cd "$work/v" && perf record -q -F 4999 -o "$work/perf.data" "$work/prof/obj_dir/Vfabric" run.json > "$work/run.log")
perf report -i "$work/perf.data" --no-children --sort symbol --stdio 2> /dev/null > "$work/perf.txt"
# perf's lines: "  12.34%  [.] Vfabric___024root___nba_sequent__TOP__2502__PROF__sg_cu_mac__l48".
# A function without __PROF__ is the model's common code (evaluation loop, change detection).
awk '$1 ~ /%$/ && $2 == "[.]" {
       pct = $1; sub(/%/, "", pct); mod = "(common code)"; blk = ""
       if (match($3, /__PROF__[A-Za-z0-9_]+__l[0-9]+/)) {
         s = substr($3, RSTART + 8, RLENGTH - 8); k = match(s, /__l[0-9]+$/)
         mod = substr(s, 1, k - 1); blk = mod ":" substr(s, k + 3)
       } else if ($3 !~ /^Vfabric/) mod = "(harness and libraries)"
       bymod[mod] += pct; if (blk != "") byblk[blk] += pct
     }
     END { for (m in bymod) printf "M %.2f %s\n", bymod[m], m; for (b in byblk) printf "B %.2f %s\n", byblk[b], b }' \
  "$work/perf.txt" | sort -k2,2 -rn > "$work/shares.txt"
tmp="$out.tmp"
{
  echo "# Verilator profile: $(basename "$graph") on $arch"
  echo
  echo "Written by \`scripts/profile_rtl.sh\` at $(git -C "$root" rev-parse --short=12 HEAD) on $(date -u +%Y-%m-%d):"
  echo "the fabric verilated flat with \`--prof-cfuncs\`, one run sampled by \`perf record -F 4999\`"
  echo "($(grep -c . "$work/perf.txt") lines of report). The profiled build runs slower than verify's"
  echo "(its blocks are separate functions); the shares, not its speed, are the result."
  echo
  echo "- verify's build: $(grep '^rtl   :' "$work/v/report.txt" | sed 's/^rtl   : //')"
  echo "- the profiled run: $(tail -n 1 "$work/run.log")"
  echo
  echo "| module | % of samples |"
  echo "|---|---:|"
  awk '$1 == "M" {m = $3; for (i = 4; i <= NF; ++i) m = m " " $i; printf "| %s | %.2f |\n", m, $2}' "$work/shares.txt"
  echo
  echo "The $blocks Verilog blocks with the most samples (the line where the block starts in the"
  echo "fabric's RTL, the units' as in rtl_templates/):"
  echo
  echo "| % of samples | block | line |"
  echo "|---:|---|---|"
  awk '$1 == "B"' "$work/shares.txt" | awk -v n="$blocks" 'NR <= n' | while read -r _ pct at; do
    mod="${at%%:*}"; line="${at##*:}"
    text="$(sed -n "${line}p" "$work/v/rtl/$mod.sv" 2> /dev/null | sed 's/^ *//; s/|/\\|/g' | cut -c1-72)"
    echo "| $pct | $at | \`$text\` |"
  done
} > "$tmp"
mv "$tmp" "$out"
echo "profile_rtl.sh: wrote $out"
