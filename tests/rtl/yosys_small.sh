#!/usr/bin/env bash
# Yosys accepts the generated fabric: generic synthesis of the small test fabric (the
# shipped fabrics hold megabits of operand memory as registers; see flows/README.md).
set -euo pipefail
stepgen="$1"; out="$2"; root="$(cd "$(dirname "$0")/../.." && pwd)"
"$stepgen" compile --arch "$root/tests/data/arch_small.yaml" --graph "$root/tests/data/graphs/repeat.yaml" -o "$out" > /dev/null
timeout 1400 bash "$root/flows/yosys_synth.sh" "$out/rtl" generic "$out/stat.json"
grep -q '"num_cells"' "$out/stat.json"
