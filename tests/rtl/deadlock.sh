#!/usr/bin/env bash
# A graph that deadlocks: verify must stop (watchdog), exit 2, and both the model and the
# RTL must report the deadlock naming the stuck stream x.
set -uo pipefail
stepgen="$1"; out="$2"; cache="$3"; root="$(cd "$(dirname "$0")/../.." && pwd)"
timeout 600 "$stepgen" verify --arch "$root/arch/default.yaml" --graph "$root/tests/data/graphs/deadlock.yaml" \
  -o "$out" --build-cache "$cache" --watchdog 2000 > "$out.log" 2>&1
rc=$?
cat "$out.log"
[ $rc -eq 2 ] || { echo "expected exit 2, got $rc"; exit 1; }
grep -q "model : DEADLOCK" "$out.log" || { echo "model did not report the deadlock"; exit 1; }
grep -qE "^  x \(ld -> add\)" "$out.log" || { echo "model did not name stream x"; exit 1; }
grep -q "rtl   : deadlock" "$out.log" || { echo "RTL watchdog did not report the deadlock"; exit 1; }
grep -q "stuck: .*(stream x)" "$out.log" || { echo "RTL did not name stream x"; exit 1; }
echo "deadlock reported by model and RTL"
