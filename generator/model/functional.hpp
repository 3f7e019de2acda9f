#pragma once
// Functional STeP semantics (docs/step_semantics.md) on real tensors: every operator of the
// static path, token by token, with the hardware's arithmetic (sim/common/fp.hpp).
#include <map>
#include <string>
#include <vector>

#include "arch/arch_model.hpp"
#include "ir/graph.hpp"
#include "ir/tokens.hpp"
#include "passes/shape_check.hpp"

namespace stepgen {

/// Result of running a graph functionally.
struct FunctionalResult {
  std::vector<TokenStream> streams;        ///< indexed by StreamId
  std::map<std::string, Matrix> outputs;   ///< output tensors by name
  /// The orders the EagerMerges were given, as followed: a graph with feedback streams fits
  /// a given order to the chunks its inputs have (functional_dynamic.hpp FeedbackRound).
  MergeOrders followed;
};

/// Runs every operator in dependency order. `inputs` must hold every input tensor with its
/// declared shape (std::runtime_error naming the tensor otherwise). Multiply format from
/// `a.cu.format`. Stops follow docs/step_semantics.md#stops (ir/stops.hpp).
/// With `values` false (the timing-only model) `inputs` is not read: loads emit shape-only
/// tiles (Token::shapeOnly), every operator passes shapes, stops and selectors on as it
/// would with values, stores write nothing and `outputs` stays empty. An EagerMerge listed in
/// `orders` merges in that order (std::runtime_error if it does not fit its inputs).
/// A graph with feedback streams (docs/graph_format.md#feedback-streams) runs in rounds until
/// no feedback stream grows; they start as their initial tokens, or as in `warm` (a previous
/// run's streams, indexed by StreamId: the model's next merge-order round starts from the
/// last one's). DiagError R-408 when the cycle stops short of the data or never settles.
/// `routingOnly` (with `values`): what decides the streams' structure only. Loads keep their
/// values (selectors, run-load rows), Map and Accum write shape-only tiles, the run loads
/// load none, stores write nothing: the streams have the tokens, stops and selectors of a run with
/// values, `outputs` hold zeros. A graph whose routing needs a computed value runs with
/// values instead. runModel's merge-order rounds use it.
FunctionalResult runFunctional(const StepGraph& g, const ShapeResult& s, const ArchModel& a,
                               const std::map<std::string, Matrix>& inputs, bool values = true,
                               const MergeOrders& orders = {}, const std::vector<TokenStream>* warm = nullptr,
                               bool routingOnly = false);

/// Stop level of the element at loop index `idx` of a walk over `dims` (outermost first):
/// the number of inner dimensions (all but the outermost) that end at it, counted from the
/// innermost outward (docs/step_semantics.md#stops: only the highest stop is sent).
int walkStop(const std::vector<int64_t>& dims, const std::vector<int64_t>& idx);

}  // namespace stepgen
