#!/usr/bin/env bash
# Yosys accepts the RTL (fast check, test rtl_yosys_small): the whole generated fabric of the
# small test architectures (plain and route-mode memory units) elaborated at its own
# parameters (`hierarchy -check`), `synth` of every unit at small parameters but sg_cu, and
# `proc` of sg_cu. Coarse synthesis of the whole fabrics and gate-level synthesis of sg_cu
# take minutes: `flows/synth_fabric.sh` runs them, results in docs/results/yosys_fabric.md.
set -euo pipefail
stepgen="$1"; out="$2"; root="$(cd "$(dirname "$0")/../.." && pwd)"
exec bash "$root/flows/synth_fabric.sh" "$stepgen" "$out" --check
