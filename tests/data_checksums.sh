#!/usr/bin/env bash
# The real input data copied into examples/ (routing traces, KV lengths) is unchanged: each
# folder's SHA256SUMS was computed from the source files (../shared/data during development,
# the attribution in each folder's README) and every listed file must match it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
n=0
for d in examples/moe/data examples/attention/data; do
  (cd "$root/$d" && sha256sum --strict -c SHA256SUMS)
  n=$((n + $(grep -c . "$root/$d/SHA256SUMS")))
done
[ "$n" -ge 3 ] || { echo "FAIL: expected at least 3 checked files, found $n"; exit 1; }
echo "$n data files match their SHA256SUMS"
