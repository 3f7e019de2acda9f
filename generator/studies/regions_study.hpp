#pragma once
// The configuration time-multiplexing study (`stepgen study regions`): the experts of the
// Qwen3-30B-A3B MoE layer (batch 64, 128 experts, top-8) on R parallel regions, each region
// one expert pipeline serving 128/R experts one after another (docs/results/timemux_regions.md).
#include <string>
#include <vector>

namespace stepgen {

/// Options of `stepgen study regions`.
struct RegionsStudyOptions {
  std::string archPath = "arch/moe.yaml";  ///< unit, link and DRAM parameters; the grid is replaced
  std::string dataDir = "examples/moe/data";
  std::string workDir = "out/regions_study";
  std::string csvPath, mdPath, svgPath;  ///< files to write ("" = print only)
  std::vector<int> regions{128, 64, 32, 16, 8, 4};
  std::vector<int> rtlRegions;  ///< the R also run in Verilator
  /// An earlier study CSV: its RTL columns are reused for its (tiling, regions) rows instead
  /// of running Verilator again (the model is re-run; the error is recomputed).
  std::string rtlFrom;
  /// The STeP paper's setting instead of this fabric's: Qwen3's true dims (D 2048, F 768,
  /// tile_f 64) through the timing-only model on archPath as given (an unbounded arch such as
  /// arch/unbounded.yaml: one unit per operator, a crossbar, 1024 B/cycle off-chip), no RTL.
  bool paper = false;
  /// With `paper`: this fabric's study CSV, shown beside the paper setting in the markdown.
  std::string compareWith;
};

/// Writes `<dir>/arch_regions<R>.yaml`: the arch at `basePath` renamed `<name>_regions<R>`,
/// its grid replaced by R blocks of 5 x 4 units stacked vertically. A region's graph uses 6
/// address generators, 3 memory units and 6 compute units; a block has 8, 4 and 8, because
/// the greedy placer (nearest free unit to an op's placed neighbours) does not pack a region
/// exactly into a block of its own size: without the spare units regions drift into the
/// next block and the graph falls into sections. Returns its path. Throws
/// std::runtime_error when a file cannot be read or written.
std::string regionsArch(const std::string& basePath, const std::string& dir, int regions);

/// Compute units a region's pipeline occupies (mm_g, mm_u, silu, mul, mm_p, acc_o): the
/// FLOPs per cycle allocated to a region are these units' flops_per_cycle.
constexpr int kRegionComputeUnits = 6;

/// For static token tile 16 and dynamic tiling, for every R: the experts-on-regions graph
/// (buildMoeRegionsGraph, dims as the MoE tests: D 64, F 24, tile_f 24) through `verify` on
/// regionsArch(R), model only unless R is in rtlRegions. Per point: cycles (model, RTL),
/// compute utilization = algorithmic FLOPs (B*k*6*D*F: the three matmuls of each routed
/// token, no padding) / model cycles / (R * kRegionComputeUnits * flops_per_cycle), off-chip
/// bytes, idle regions. Prints the table; writes CSV, markdown and an SVG plot when asked;
/// the markdown ends with, per tiling, the R whose utilization is highest at under 1 %
/// (static) or 5 % (dynamic) more cycles than R = the largest, as the paper reports it
/// (2.64x and 2.51x). With `paper` (and `compareWith`) the markdown is the two settings side
/// by side. Returns 0, or 2 if a point does not verify. Throws std::runtime_error for an
/// unreadable `compareWith` file.
int runRegionsStudy(const RegionsStudyOptions& o);

}  // namespace stepgen
