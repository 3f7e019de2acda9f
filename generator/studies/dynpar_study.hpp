#pragma once
// The dynamic-parallelization study (`stepgen study dynpar`): GQA decode attention of one
// KV head (Qwen3-30B-A3B: 8 query heads per KV head, head_dim 64, KV tile 32) for the real
// Azure batches of 16 and 64 requests, split over R regions by each strategy
// (docs/results/dynpar.md).
#include <string>
#include <vector>

namespace stepgen {

/// Options of `stepgen study dynpar`.
struct DynparStudyOptions {
  std::string archPath = "arch/gqa.yaml";
  /// Where the dynamic strategies run: their dispatch cycle does not place on gqa's layout.
  /// arch/gqa_dynamic.yaml has gqa's units, link FIFOs and DRAM in quadrants around the
  /// dispatch (model and RTL); an unbounded arch runs model only.
  std::string dynamicArchPath = "arch/gqa_dynamic.yaml";
  /// An earlier study CSV: RTL columns of its static (batch, strategy) rows are taken from it
  /// instead of running Verilator again, the error recomputed against this model ("" = run
  /// as rtlMaxBatch says). Dynamic rows always run: their dispatch is the model's own.
  std::string rtlFrom;
  /// The strategies that run in Verilator (for batches up to rtlMaxBatch); empty = all.
  std::vector<std::string> rtlStrategies;
  std::string lengthsPath = "examples/attention/data/azure_kv_batches_b16_b64.csv";
  std::string workDir = "out/dynpar_study";
  std::string csvPath, mdPath;           ///< files to write ("" = print only)
  std::vector<int> batches;              ///< batch indices (file order); empty = all
  /// coarse, interleave, dynamic (1 credit per region) or dynamic:<c> (c credits).
  std::vector<std::string> strategies{"coarse", "interleave", "dynamic", "dynamic:2"};
  int regions = 4;
  int64_t kvScale = 1;                   ///< divide every KV length by this (rounding up)
  int rtlMaxBatch = 0;                   ///< run Verilator for batches of at most this many requests (0: none)
  /// Of those, only these batch indices run in Verilator (empty = every one): a dynamic row
  /// runs on the hierarchical 121-unit fabric at about 450 cycles/s: 5 to 14 minutes per batch of 16.
  std::vector<int> rtlBatches;
  /// The STeP paper's setting instead of this fabric's: Qwen3's head dim 128, every point
  /// through the timing-only model (meta rows only) on archPath and dynamicArchPath as given
  /// (use arch/unbounded.yaml for both: one unit per operator, 1024 B/cycle off-chip), no RTL.
  bool paper = false;
  /// With `paper`: this fabric's study CSV, its speed-ups shown beside the paper setting's.
  std::string compareWith;
};

/// For every batch and strategy: buildGqaDecodeGraph (G 8, D 64, T 32, R regions) through
/// `verify` on the arch (model only unless the batch size is <= rtlMaxBatch; the dynamic
/// strategies on dynamicArchPath, model only if it is unbounded). Per point:
/// model and RTL cycles, bit-exactness, the KV tiles of the busiest region (the static
/// load balance) and off-chip bytes. Prints the table; writes CSV and markdown (with the
/// geometric-mean ratio of the strategies per batch size) when asked; with `paper` and
/// `compareWith`, that ratio for both settings side by side. Returns 0, or 2 if a point does
/// not verify. Throws DiagError R-407 for a bad KV-length file, std::runtime_error for an
/// unreadable `compareWith`.
int runDynparStudy(const DynparStudyOptions& o);

}  // namespace stepgen
