#!/usr/bin/env bash
# The cache key of one flows/fpga_synth_one.sh job (stepgen synth --cache, docs/fpga.md):
# a SHA-256 of everything the job's result depends on: Yosys's version, the job's arguments
# (top, target, parameters, black boxes, SG_SHARE), the flow scripts, and every file of the
# rtl/ folder as Yosys's own preprocessor reads it (no defines, as the job reads it: the
# simulation bodies under `ifdef SG_SIM_BODY are not part of it, so a change there keeps the
# key). Conservative: any other byte that changes (a comment, another arch's top) changes it.
#
# usage: flows/fpga_synth_key.sh <rtl_dir> <top> <target> <params> <blackboxes>
# Prints the key (64 hex digits). Exit 1 when the folder has no filelist.f or Yosys cannot preprocess a file.
set -euo pipefail
[ $# -eq 5 ] || { echo "usage: $0 <rtl_dir> <top> <target> <params> <blackboxes>" >&2; exit 2; }
dir="$1"; flows="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# (without the file list the key would not cover the RTL at all)
[ -s "$dir/filelist.f" ] || { echo "fpga_synth_key.sh: no $dir/filelist.f" >&2; exit 1; }
{
  yosys -V
  printf 'top=%s target=%s params=%s boxes=%s share=%s\n' "$2" "$3" "$4" "$5" "${SG_SHARE:-full}"
  cat "$flows/fpga_synth_one.sh" "$flows/yosys_reads.sh" "$flows/ltp_lutram.v"
  cd "$dir"
  # relative names: the dump names the file, and two folders with the same files share a key
  log="$(mktemp)"; trap 'rm -f "$log"' EXIT
  for f in $(cat filelist.f); do
    yosys -q -l "$log" -p "read_verilog -defer -sv -ppdump $f" > /dev/null 2>&1 || { echo "fpga_synth_key.sh: yosys cannot read $dir/$f" >&2; exit 1; }
    # the dump alone (the log's last lines give CPU times), without the blank lines that
    # stand for the lines an `ifdef left out
    sed -n '/^-- Verilog code after preprocessor --$/,/^-- END OF DUMP --$/p' "$log" | { grep -v '^[[:space:]]*$' || true; }
  done
} | sha256sum | cut -d' ' -f1
