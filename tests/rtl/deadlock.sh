#!/usr/bin/env bash
# A graph that deadlocks: verify must stop (watchdog), exit 2, and both the model and the
# RTL must report the deadlock naming the stuck stream.
#   deadlock.sh <stepgen> <out> <cache> [<arch> <graph> <stream> <producer> [verify options...]]
# default: arch/default.yaml, tests/data/graphs/deadlock.yaml, stream x of op ld.
set -uo pipefail
stepgen="$1"; out="$2"; cache="$3"; root="$(cd "$(dirname "$0")/../.." && pwd)"
arch="${4:-arch/default.yaml}"; graph="${5:-tests/data/graphs/deadlock.yaml}"; stream="${6:-x}"; producer="${7:-ld}"
extra=("${@:8}")
timeout 600 "$stepgen" verify --arch "$root/$arch" --graph "$root/$graph" \
  -o "$out" --build-cache "$cache" --watchdog 2000 ${extra[@]+"${extra[@]}"} > "$out.log" 2>&1
rc=$?
cat "$out.log"
[ $rc -eq 2 ] || { echo "expected exit 2, got $rc"; exit 1; }
grep -q "model : DEADLOCK" "$out.log" || { echo "model did not report the deadlock"; exit 1; }
grep -qE "^  $stream \($producer -> " "$out.log" || { echo "model did not name stream $stream"; exit 1; }
grep -q "rtl   : deadlock" "$out.log" || { echo "RTL watchdog did not report the deadlock"; exit 1; }
grep -q "stuck: .*(stream $stream)" "$out.log" || { echo "RTL did not name stream $stream"; exit 1; }
echo "deadlock reported by model and RTL"
