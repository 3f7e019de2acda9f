#!/usr/bin/env bash
# README command 1: installs what stepgen needs, builds it, and runs the main job on the
# shipped example (SwiGLU on arch/default.yaml): Verilog + bitstream + report in
# out/swiglu, the fabric built and run in Verilator, and a verdict.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
cmake -S . -B build -G Ninja > /dev/null
cmake --build build -j2 --target stepgen
./build/stepgen verify --arch arch/default.yaml --graph examples/swiglu/graph.yaml \
  --inputs examples/swiglu/inputs -o out/swiglu
