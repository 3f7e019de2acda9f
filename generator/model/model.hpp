#pragma once
// The approximate model: functional results + cycle estimate + the cost-model figures of
// docs/step_semantics.md#cost-model for one mapped graph.
#include <map>
#include <string>

#include "model/functional.hpp"
#include "model/timing.hpp"

namespace stepgen {

/// Everything the model reports.
struct ModelResult {
  std::map<std::string, Matrix> outputs;
  TimingResult timing;
  int64_t onchipBytes = 0;      ///< symbolic on-chip memory, evaluated (bytes; docs/step_semantics.md#onchip-bytes)
  int64_t flops = 0;            ///< FLOPs of every Map (matmul 2*M*K*N, silu 8, mul/add 1 per element)
  int64_t offchipBytes = 0;     ///< bytes moved by loads and stores, counted per tile (docs/step_semantics.md#offchip-bytes)
  double rooflineCycles = 0;    ///< max(off-chip bytes / off-chip B/cycle, max over CUs FLOPs / CU FLOPs/cycle)
  double wallSeconds = 0;       ///< time the model took
  /// Functional + timing runs runModel took to settle the EagerMerge arrival orders (1
  /// without an EagerMerge on a compute unit; each round times the whole graph again).
  int64_t mergeRounds = 1;
};

/// Adds the cost-model figures (docs/step_semantics.md#cost-model) of a graph to `r` from its functional streams `st`:
/// off-chip bytes (tiles moved by every load and store x tile bytes), on-chip bytes (off-chip
/// ops 2 x tile, Bufferize element + 2 x buffer, Accum/Scan one output element, matmul
/// input + output tiles; a tile of dynamic size counts as the largest that flowed), FLOPs,
/// and the roofline (per mapped CU when `m` is given, else off-chip traffic only).
void addCostFigures(const StepGraph& g, const ShapeResult& s, const ArchModel& a, const std::vector<TokenStream>& st,
                    const Mapping* m, ModelResult& r);

/// Runs the functional model and the timing model of the fabric configured by `img`
/// (layout `layout`, as compileGraph builds them). With `values` false this is the
/// timing-only model (docs/step_semantics.md#timing-only): no tensor is read or computed
/// (`inputs` may be empty, `outputs` stays empty), and cycles, off-chip and on-chip bytes
/// and FLOPs are those of the full model, which reads only shapes, stops and selectors for
/// them. An EagerMerge on a compute unit merges in the order its tiles arrive: the model
/// repeats both runs with the order the timing found until it is stable (at most 20 rounds).
/// Errors: std::runtime_error for a missing input tensor, inconsistent streams, or a merge
/// order that does not settle.
ModelResult runModel(const StepGraph& g, const ShapeResult& s, const Mapping& m, const ArchModel& a,
                     const ConfigLayout& layout, const ConfigImage& img, const std::map<std::string, Matrix>& inputs,
                     bool values = true);

/// runModel with every EagerMerge on a compute unit following `orders` (per op, the input
/// of each data tile; e.g. the fabric's decisions, driver/decisions.hpp) instead of the order
/// the model's own timing would find: one functional run merging in that order, one timing
/// run replaying it. Errors: as runModel, and std::runtime_error naming the op when `orders`
/// does not fit a merge's input streams.
ModelResult replayModel(const StepGraph& g, const ShapeResult& s, const Mapping& m, const ArchModel& a,
                        const ConfigLayout& layout, const ConfigImage& img, const std::map<std::string, Matrix>& inputs,
                        const MergeOrders& orders);

}  // namespace stepgen
