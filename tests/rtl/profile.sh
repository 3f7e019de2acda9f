#!/usr/bin/env bash
# scripts/profile_rtl.sh on the shipped SwiGLU example (heavy test e2e_rtl_profile_default): the
# fabric verilated with --prof-cfuncs (flows/verilator_build.sh --profile) and sampled by
# perf. The compute unit's MAC array must take a share (its blocks are named after
# sg_cu_mac), and the profiled build must run the graph in as many cycles as verify's own.
# usage: tests/rtl/profile.sh <stepgen> <work_dir>
set -euo pipefail
sg="$1"; d="$2"
cd "$(dirname "$0")/../.."
rm -rf "$d"
bash scripts/profile_rtl.sh "$sg" arch/default.yaml examples/swiglu/graph.yaml "$d/w" "$d/profile.md"
grep -q '^| sg_cu_mac | [0-9]' "$d/profile.md"
plain="$(sed -n "s/^- verify's build: \([0-9]*\) cycles.*/\1/p" "$d/profile.md")"
profiled="$(sed -n 's/^- the profiled run: ok: \([0-9]*\) cycles.*/\1/p' "$d/profile.md")"
[ -n "$plain" ] && [ "$plain" = "$profiled" ] || { echo "profile.sh: verify ran $plain cycles, the profiled build '$profiled'" >&2; exit 1; }
