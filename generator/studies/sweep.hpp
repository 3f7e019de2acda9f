#pragma once
// The paper's HDL-validation sweep (docs/step_semantics.md#validation-point): SwiGLU B=64, D=256, F=512, hidden
// tile 256, tile_b in {16,32,64} x tile_F in {16,32,64,128,256}, model and RTL.
#include <string>

namespace stepgen {

struct SweepOptions {
  std::string archPath = "arch/step_validation.yaml";
  std::string outDir = "out/sweep";
  std::string csvPath = "docs/results/validation_sweep.csv";
  bool modelOnly = false;
  int maxPoints = 15;
};

/// Off-chip bytes of the SwiGLU schedule in closed form (docs/step_semantics.md#swiglu-closed-form):
/// 4*B*D*(F/tf) + 3*4*D*F*(B/tb) + 4*B*D.
long long swigluClosedFormBytes(long long B, long long D, long long F, long long tb, long long tf);

/// Runs the sweep, prints the table, writes the CSV (and a markdown table beside it).
/// Returns 0 when every point ran with bit-exact outputs and equal byte counts, else 2.
int runSweep(const SweepOptions& o);

}  // namespace stepgen
