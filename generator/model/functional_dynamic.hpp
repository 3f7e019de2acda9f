#pragma once
// The dynamic-path operators inside the functional model (docs/step_semantics.md#operators): the
// routing and merging operators, the dynamic shape operators, random off-chip access and
// the extra Map functions of a Mixture-of-Experts layer. Called by runFunctional.
#include <map>
#include <string>
#include <vector>

#include "model/functional.hpp"

namespace stepgen {

/// One round of a graph with feedback streams (docs/graph_format.md#feedback-streams).
struct FeedbackRound {
  /// Per Partition op index: data chunks its selector did not cover in this round.
  std::map<int, size_t> starved;
  /// Per EagerMerge op index that was given an order: the order it followed (fitted to this
  /// round's inputs), which the timing must replay.
  MergeOrders followed;
};

/// Map(fn: select) `op` on `in` (routing_ops.hpp selectSignals with the op's value, n and
/// initial): with `in` just DONE, the op's initial tokens, where a feedback stream starts.
TokenStream selectOf(const StepGraph& g, const Op& op, const TokenStream& in);

/// Runs `op` if it is a dynamic-path operator (SelectGen, AddrGen, Partition, Reassemble,
/// EagerMerge, Reshape, Promote over the outermost dim, Expand, Scan, FlatMap, Parallelize,
/// RandomOffChipLoad/Store) and returns true; false for any other operator.
/// Reads its inputs from `streams` (indexed by StreamId) and writes its outputs there.
/// EagerMerge forwards in ascending input order (every chunk of input 0, then of input 1,
/// ...): the order of the fabric's route unit, which merges once all tokens are in; or, when
/// `mergeOrder` is given, in that order (the input of each chunk, in arrival order: the
/// timing model's for an EagerMerge on a compute unit).
/// Errors: std::runtime_error naming the op (bad trace file, address outside the tensor,
/// inconsistent streams). With `values` false (timing-only) tensors are neither read nor
/// written: random loads emit shape-only tiles of the addressed tile's shape.
/// A graph with feedback streams runs in rounds (runFunctional); `rounds` is then given and
/// streams may be shorter than they will be: a Partition routes the chunks its selector
/// covers (recording the rest in `starved`) and drops spare selector elements, an
/// EagerMerge follows `mergeOrder` as far as its inputs have chunks and appends the rest.
bool runDynamicOp(const StepGraph& g, const ShapeResult& s, const Op& op, const std::map<std::string, Matrix>& inputs,
                  std::vector<TokenStream>& streams, std::map<std::string, Matrix>& outputs, bool values,
                  const std::vector<int>* mergeOrder = nullptr, FeedbackRound* rounds = nullptr);

}  // namespace stepgen
