#pragma once
// `stepgen bench`: generator time and peak memory, Verilator build time, simulated
// cycles per second of the RTL and of the model, and SwiGLU cycles vs the roofline bound,
// for the shipped default fabric and arch/step_validation.yaml, measured in one run.
#include <string>

namespace stepgen {

struct BenchOptions {
  std::string outDir = "out/bench";
  std::string reportPath = "docs/results/bench.md";
};

/// Runs the benchmark and prints its table. Returns 0 (the table says which targets miss).
int runBench(const BenchOptions& o);

}  // namespace stepgen
