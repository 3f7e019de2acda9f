#pragma once
// The dynamic tiling study (`stepgen study tiling`): static token tiles against dynamic
// tiling on two real routing traces, model and RTL (docs/step_semantics.md#dynamic-tiling).
#include <cstdint>
#include <string>
#include <vector>

namespace stepgen {

/// One of the two published MoE routing cases, scaled down (issue 3): trace file name in
/// examples/moe/data, experts, k, hidden, FFN and the FFN tile.
struct MoeCase {
  std::string name, traceFile;
  int64_t experts, topK, hidden, ffn, tileF;
};

/// Mixtral-8x7B (8 experts, top-2, hidden 64, FFN 224, tile_F 32) and Qwen3-30B-A3B
/// (128 experts, top-8, hidden 64, FFN 24, tile_F 8), batch 64 each.
std::vector<MoeCase> moeCases();

/// Options of `stepgen study tiling`.
struct TilingStudyOptions {
  std::string archPath = "arch/moe.yaml";
  std::string dataDir = "examples/moe/data";  ///< where the routing CSVs are
  std::string workDir = "out/tiling_study";
  std::string csvPath, mdPath;                 ///< files to write ("" = print only)
  bool rtl = false;                            ///< also run every point through `verify` on archPath
  uint32_t seed = 1;
};

/// Static token tiles {8, 16, 32, 64} and dynamic tiling on both cases: model outputs (must
/// be bit-identical across the tilings of a case), off-chip bytes, on-chip bytes (docs/step_semantics.md#onchip-bytes,
/// formula evaluated), FLOPs including padding rows. With `rtl`, every point (the whole
/// layer) also runs through `verify` on archPath: model and RTL cycles, bit-exactness,
/// off-chip bytes, the peak bytes the RTL memory units held. Returns 0, or 2 if outputs differ
/// between tilings or an RTL run fails.
int runTilingStudy(const TilingStudyOptions& o);

}  // namespace stepgen
