#!/usr/bin/env bash
# verify --trace of SwiGLU on arch/small.yaml (2 compute units: 3 sections): PASS with the
# model within 5 % of the RTL, and an FST file that starts with its header block. The
# traced build is shared with e2e_sections_reload_small (tests/sections.cmake), so the
# suite builds this fabric once.
set -euo pipefail
stepgen="$1"; out="$2"; cache="$3"; root="$(cd "$(dirname "$0")/../.." && pwd)"
mkdir -p "$(dirname "$out")"  # for $out.log: this may be the first test writing there
"$stepgen" verify --arch "$root/arch/small.yaml" --graph "$root/examples/swiglu/graph.yaml" \
  --inputs "$root/examples/swiglu/inputs" -o "$out" --build-cache "$cache" --trace --max-cycle-error 5 | tee "$out.log"
grep -q "^sections: 3" "$out.log"
grep -q "verdict: PASS" "$out.log"
test -s "$out/wave.fst"
# FST files begin with a header block: type byte 0 (FST_BL_HDR).
test "$(head -c1 "$out/wave.fst" | od -An -tu1 | tr -d ' ')" = "0"
echo "trace ok: $(stat -c %s "$out/wave.fst") bytes"
