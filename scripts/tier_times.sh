#!/usr/bin/env bash
# Times the test tiers as a new user meets them: a fresh clone of HEAD, an empty compiler
# cache, then the README's test command (configure, build, `ctest -LE heavy`), and with
# --heavy also `ctest -L heavy` in the same build. Writes docs/results/test_tiers.md (with
# --heavy) or test_tiers_default.md (without), or --out FILE: the commit, the commands, the
# wall seconds of each step and the slowest tests of each tier.
# Run it on an otherwise idle machine (it measures wall time on all cores).
# usage: scripts/tier_times.sh [--heavy] [--work DIR] [--out FILE]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
heavy=0; work="$(mktemp -d /tmp/stepgen_tiers.XXXXXX)"; out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --heavy) heavy=1; shift ;;
    --work) work="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "tier_times.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -z "$out" ] || out="$(realpath -m "$out")"
work="$(realpath -m "$work")"
commit="$(git -C "$root" rev-parse --short=12 HEAD)"
rm -rf "$work/clone" "$work/ccache"; mkdir -p "$work"
git clone -q "$root" "$work/clone"
# ../shared beside the clone when the project has it (as in CI)
[ -d "$root/../shared" ] && [ ! -e "$work/shared" ] && ln -s "$(cd "$root/../shared" && pwd)" "$work/shared"
export CCACHE_DIR="$work/ccache"
cd "$work/clone"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }
t0=$(now)
cmake -S . -B build -G Ninja > "$work/configure.log" 2>&1
t1=$(now)
cmake --build build -j2 > "$work/build.log" 2>&1
t2=$(now)
rc=0; ctest --test-dir build -j2 -LE heavy --output-on-failure > "$work/default.log" 2>&1 || rc=$?
t3=$(now)
hrc=""; t4=$t3
if [ $heavy = 1 ]; then
  hrc=0; ctest --test-dir build -j2 -L heavy --output-on-failure > "$work/heavy.log" 2>&1 || hrc=$?
  t4=$(now)
fi
slowest() {  # <ctest log>: the 12 slowest tests as table rows
  perl -ne 'print "$3 $1 $2\n" if /Test +#\d+: (\S+) \.+\s*(?:\*\*\*)?(\w+(?: \w+)?)\s+([\d.]+) sec/' "$1" |
    sort -rn | head -12 | awk '{ printf "| %s | %s | %.0f |\n", $2, $3, $1 }'
}
summary() { grep -E '^[0-9]+% tests passed' "$1" || echo "(no summary: see the log)"; }
[ -n "$out" ] || { out="$root/docs/results/test_tiers_default.md"; [ $heavy = 1 ] && out="$root/docs/results/test_tiers.md"; }
{
  echo "# Test tiers: how long they take"
  echo
  echo "Written by \`scripts/tier_times.sh$([ $heavy = 1 ] && echo ' --heavy')\` at commit $commit on $(date -u +%Y-%m-%d): a fresh"
  echo "clone, an empty ccache, $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; wall seconds."
  echo
  echo "| step | command | seconds | result |"
  echo "|---|---|---:|---|"
  echo "| configure | \`cmake -S . -B build -G Ninja\` | $(secs "$t0" "$t1") | |"
  echo "| build | \`cmake --build build -j2\` | $(secs "$t1" "$t2") | |"
  echo "| default tier | \`ctest --test-dir build -j2 -LE heavy\` | $(secs "$t2" "$t3") | $(summary "$work/default.log") |"
  echo "| **README test command** | configure + build + default tier | **$(secs "$t0" "$t3")** | exit $rc |"
  [ $heavy = 1 ] && echo "| heavy tier | \`ctest --test-dir build -j2 -L heavy\` | $(secs "$t3" "$t4") | $(summary "$work/heavy.log"), exit $hrc |"
  echo
  echo "Slowest tests of the default tier (seconds, while another test ran beside each):"
  echo
  echo "| test | result | seconds |"
  echo "|---|---|---:|"
  slowest "$work/default.log"
  if [ $heavy = 1 ]; then
    echo
    echo "Slowest tests of the heavy tier:"
    echo
    echo "| test | result | seconds |"
    echo "|---|---|---:|"
    slowest "$work/heavy.log"
  fi
} > "$out"
cat "$out"
echo "logs in $work"
[ $rc -eq 0 ] && { [ -z "$hrc" ] || [ "$hrc" -eq 0 ]; }
