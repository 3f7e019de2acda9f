#pragma once
// planBuffers: deadlock-free buffering of reconvergent paths (docs/architecture.md#buffering).
// A Broadcast whose outputs meet again at one operator (a residual add, a diamond,
// Parallelize into Zip) deadlocks when the path that holds data longer (an Accum over a
// group, a route unit that takes every token before it emits) makes the Broadcast push more
// into the other path than that path's link FIFOs hold: the join waits for the long path,
// the short path's FIFOs fill, the Broadcast stops, and the long path never gets the rest.
// planBuffers finds every such pair, works out the bytes the short path must hold from the
// stream shapes and each operator's hold (below), and asks Z3 (Optimize) for the least
// buffer bytes that cover every pair: a memory-unit buffer on the short path (Bufferize +
// Streamify, when a memory unit is free and the stream fits it) or a section cut that puts
// the join after the long path's holding operator (the short stream then waits in DRAM).
#include <cstdint>
#include <string>
#include <vector>

#include "arch/arch_model.hpp"
#include "ir/graph.hpp"
#include "passes/shape_check.hpp"

namespace stepgen {

/// How a reconvergent pair is kept from deadlocking.
enum class BufferChoice {
  Fifo,        ///< the short path's link FIFOs hold what the long path takes: nothing to add
  MemoryUnit,  ///< a memory-unit buffer on the short stream right after the Broadcast (bufferDims inner dims)
  SectionCut,  ///< the join runs in a later section than the long path's holding operator
};

/// One reconvergent pair and what was decided for it.
struct Reconvergence {
  OpId fork;                ///< the Broadcast or Parallelize
  OpId join;                ///< the first operator reading both paths (a Zip, or a two-input op)
  OpId joinUnit;            ///< the operator on a unit that the join feeds (the join itself if it has one)
  OpId holder;              ///< the long path's operator that holds the most (a section cut puts the join after it)
  StreamId shortStream;     ///< the fork's output that starts the short path
  std::vector<OpId> shortPath, longPath;  ///< the operators from the fork to the join, exclusive
  int64_t needBytes = 0;    ///< bytes the long path takes in before its first element reaches the join (see planBuffers)
  int64_t fifoBytes = 0;    ///< bytes the short path's link FIFOs hold (links x fifo_depth x link bytes)
  int64_t streamBytes = 0;  ///< bytes of the whole short stream (what a section cut carries through DRAM)
  /// Bytes the long path takes in while the join waits: its hold (needBytes' long side) plus
  /// its link FIFOs. A memory-unit buffer replays a group only once it has all of it, so its
  /// group must not exceed this, or the long path fills before the join can start.
  int64_t longAbsorbBytes = 0;
  int bufferDims = 0;       ///< a memory-unit buffer collects this many inner dims of the short stream (Bufferize b) ...
  int64_t bufferBytes = 0;  ///< ... this many bytes: the fewest inner dims that cover the largest needBytes on that stream
  BufferChoice choice = BufferChoice::Fifo;
  /// Needs more than its FIFOs, and neither choice is open (no memory unit free or the buffer
  /// too big for one, and a graph with feedback streams is never cut): it may deadlock.
  bool uncovered = false;
};

/// The decisions for a graph, and the optimum's cost.
struct BufferPlan {
  std::vector<Reconvergence> pairs;  ///< every reconvergent pair, in graph order of its fork
  int64_t freeMemoryUnits = 0;       ///< memory units the graph leaves free (a buffer takes one)
  int64_t bufferBytes = 0;           ///< the choices' bytes: each memory-unit buffer once + 2 x each cut's DRAM bytes
  bool any() const {
    for (const Reconvergence& r : pairs)
      if (r.choice != BufferChoice::Fifo) return true;
    return false;
  }
};

/// Finds the reconvergent pairs of `g` and decides each (Z3 Optimize: least memory-unit bytes
/// plus twice the DRAM bytes a cut carries, subject to every pair covered that can be, and
/// at most the free memory units used; no cuts in a graph with feedback streams, which runs
/// whole; a buffer fits a unit when twice its bytes do). An operator's
/// hold, in elements (tiles) of its input, is the group of an Accum or Bufferize (the
/// product of its inner b dims), the whole stream for the operators of a route or combine
/// unit (a MoE dispatch takes every token first), one tile for a matmul (its whole a tile
/// first), one row for rowmax / rowsum, one beat for the rest and nothing for absorbed ops; a path's hold in fork elements is the largest hold on it scaled back to
/// the fork's stream by the element counts between. needBytes = (long hold - short hold) x
/// the fork's element bytes. Dimensions that are not static count as their bound, or make a
/// hold the whole stream. Deterministic. Errors: none (a graph without a Broadcast has no pairs).
BufferPlan planBuffers(const StepGraph& g, const ShapeResult& s, const ArchModel& a);

/// `g` with a memory-unit buffer on the short stream of every pair planBuffers gave one:
/// Bufferize(b = bufferDims) -> Streamify(repeat 1) -> Flatten of the repeat dimension into
/// the next outer one (the stream's own shape and stops; a group of the inner dims held in
/// one memory unit, double-buffered; the form the section planner uses to keep a carried
/// stream on chip), the ops named
/// buffer_keep_<s>, buffer_replay_<s>, buffer_flatten_<s>. `g` itself when there is none.
StepGraph insertBuffers(const StepGraph& g, const BufferPlan& p);

/// The plan as report lines (`buffers:` header, one line per pair with its choice, bytes and
/// the constraint that forced it), for mapping.txt and verify's report.
std::string bufferPlanText(const StepGraph& g, const BufferPlan& p);

}  // namespace stepgen
