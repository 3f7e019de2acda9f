#pragma once
// The dynamic tiling figure at the models' true dimensions (`stepgen study tiling-full`):
// static token tiles against dynamic tiling, timing-only model on an unbounded fabric
// (docs/step_semantics.md#timing-only, docs/results/moe_tiling_full.md).
#include <cstdint>
#include <string>
#include <vector>

namespace stepgen {

/// One MoE model at its published dimensions (shared/docs: model configs) and the routing
/// trace of it the project ships (examples/moe/data).
struct FullMoeModel {
  std::string name, traceFile;
  int64_t experts, topK, hidden, ffn;
};

/// Mixtral-8x7B (8 experts, top-2, hidden 4096, FFN 14336) and Qwen3-30B-A3B (128 experts,
/// top-8, hidden 2048, FFN 768).
std::vector<FullMoeModel> fullMoeModels();

/// Options of `stepgen study tiling-full`.
struct TilingFullOptions {
  std::string archPath = "arch/unbounded.yaml";
  std::string dataDir = "examples/moe/data";
  std::string workDir = "out/tiling_full";
  std::string csvPath, mdPath;              ///< files to write ("" = print only)
  std::vector<int64_t> batches{64, 1024};
  /// Static token tiles at batch 64, scaled by batch / 64 at larger batches (the paper's 8..64
  /// at batch 64); 0 = dynamic tiling.
  std::vector<int64_t> tiles{8, 16, 32, 64, 0};
  int64_t tileF = 64;                       ///< the paper's FFN tile
  uint32_t seed = 1;                        ///< of the synthetic traces (batches above the real trace's 64 tokens)
};

/// For every model, batch and token tile: the whole MoE layer (buildMoeGraph) through the
/// timing-only model on archPath. Batch 64 uses the real trace; larger batches a synthetic
/// trace shaped like it (syntheticRoutingTrace, `seed`). Per point: cycles, off-chip bytes,
/// on-chip bytes (cost-model formula), FLOPs (padding included), the largest expert's
/// tokens, model seconds. Prints and writes the CSV and a markdown table with the
/// static/dynamic ratios and their geometric means (the paper's 2.18x is one). Returns 0,
/// or 2 if a point deadlocks. Errors: DiagError / std::runtime_error from the stages.
int runTilingFullStudy(const TilingFullOptions& o);

}  // namespace stepgen
