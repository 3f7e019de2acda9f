#!/usr/bin/env bash
# Runs a command, prints its output, and passes only when the command exits 0 and its output
# has a line matching every given pattern (grep -E). The exit status is the verdict; the
# patterns only add conditions (a test's verdict is never a regex match in its place).
# usage: expect_log.sh LOG [-e PATTERN]... -- COMMAND [ARG]...
set -euo pipefail
log="$1"; shift
pats=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  [ "$1" = -e ] && [ $# -ge 2 ] || { echo "expect_log.sh: expected -e PATTERN or --, got '$1'" >&2; exit 2; }
  pats+=("$2"); shift 2
done
[ $# -ge 2 ] || { echo "expect_log.sh: no command after --" >&2; exit 2; }
shift
mkdir -p "$(dirname "$log")"
rc=0
"$@" > "$log" 2>&1 || rc=$?
cat "$log"
[ $rc -eq 0 ] || { echo "FAIL: exit status $rc from: $*"; exit 1; }
for p in "${pats[@]}"; do
  grep -Eq -- "$p" "$log" || { echo "FAIL: no output line matches '$p'"; exit 1; }
done
