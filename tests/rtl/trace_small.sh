#!/usr/bin/env bash
# verify --trace on the small fabric: PASS, and an FST file that starts with its header block.
set -euo pipefail
stepgen="$1"; out="$2"; cache="$3"; root="$(cd "$(dirname "$0")/../.." && pwd)"
"$stepgen" verify --arch "$root/tests/data/arch_small.yaml" --graph "$root/tests/data/graphs/repeat.yaml" \
  -o "$out" --build-cache "$cache" --trace | tee "$out.log"
grep -q "verdict: PASS" "$out.log"
test -s "$out/wave.fst"
# FST files begin with a header block: type byte 0 (FST_BL_HDR).
test "$(head -c1 "$out/wave.fst" | od -An -tu1 | tr -d ' ')" = "0"
echo "trace ok: $(stat -c %s "$out/wave.fst") bytes"
