#pragma once
// `stepgen bench`: generator time and peak memory, Verilator build time, simulated
// cycles per second of the RTL and of the model, and SwiGLU cycles vs the roofline bound,
// for the shipped default fabric, arch/step_validation.yaml and the 8x8 and 16x16 test
// fabrics (each beside its figures of 2026-11-26 and issue 45's targets); a dynamic graph
// (GQA decode with the dynamic dispatch: RTL and model, and the model against the static
// split per simulated cycle); then large graphs and real sizes (a 511-operator graph on
// 16x16, a 32x32 fabric, the timing-only model of full-size MoE layers at batch 1024),
// measured in one run.
#include <string>

namespace stepgen {

struct BenchOptions {
  std::string outDir = "out/bench";
  std::string reportPath;  ///< markdown report to write ("" = none: the tables go to stdout; scripts/results.sh names the docs/results file)
  bool quick = false;  ///< only arch/default.yaml's row (no large fabrics, no real-size jobs)
  std::string only;    ///< one table: swiglu, dynamic, large or jobs ("" = all)
};

/// Runs the benchmark and prints its table. Returns 0 (the table says which targets miss).
int runBench(const BenchOptions& o);

}  // namespace stepgen
