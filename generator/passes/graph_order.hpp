#pragma once
// Dependency order of a StepGraph's operators (Kahn's algorithm) and the cycles that block it.
#include <utility>
#include <vector>

#include "ir/graph.hpp"

namespace stepgen {

/// A stream read by an operator although no operator produces it (its first such read).
struct UnproducedRead {
  int op;           ///< index into StepGraph::ops of the reader
  StreamId stream;  ///< the stream without producer
};

/// A dependency cycle: ops[k] produces streams[k], which ops[k+1] reads; the last op's
/// stream goes back into ops[0].
struct OpCycle {
  std::vector<int> ops;
  std::vector<StreamId> streams;
};

/// The result of orderOps.
struct OpOrder {
  std::vector<int> producerOf;             ///< per stream: the first op listing it as an output, -1 if none
  std::vector<int> order;                  ///< ops whose producers all come first, in dependency order
  std::vector<UnproducedRead> unproduced;  ///< reads of streams without producer, in op then input order
  std::vector<OpCycle> cycles;             ///< one per cycle among the ops left out of `order`
  std::vector<StreamId> feedback;          ///< feedback streams (isFeedbackStream), in stream order
  /// {store, load} of a state tensor where the store depends on the load through streams
  /// (no order can run the load after the store; the shape check reports S-252).
  std::vector<std::pair<int, int>> stateConflicts;
};

/// {store, load} for every store and every load of each state tensor (Tensor::isState), in
/// op order: the load reads what the store wrote, so it runs after it (orderOps orders it so;
/// on a fabric it runs in a later section, planSections).
std::vector<std::pair<int, int>> stateOrder(const StepGraph& g);

/// True if `s` is a feedback stream: the output of an operator that starts it with initial
/// tokens (a Map with fn select and `initial` >= 1, docs/graph_format.md#feedback-streams).
/// Such a stream may close a cycle; it does not order its consumers after its producer.
bool isFeedbackStream(const StepGraph& g, StreamId s);

/// Orders the ops of `g` by their stream dependencies (Kahn's algorithm; among the ready
/// ops the lowest index first, so the order is deterministic). Reads of unproduced streams
/// and of feedback streams add no dependency (a cycle through a feedback stream is a
/// legal one; the functional model runs it in rounds). Ops on a cycle, or downstream of one, are left out of `order`; each
/// cycle is reported once, starting from the op it reaches first when walking back from
/// the lowest-index unordered op. Invalid stream ids are ignored. Each stateOrder pair also
/// orders its load after its store, unless the store depends on the load (stateConflicts).
/// Raises no errors: the shape check turns `unproduced` into S-206, `cycles` into S-205 and
/// `stateConflicts` into S-252.
OpOrder orderOps(const StepGraph& g);

}  // namespace stepgen
