#pragma once
// Sections: a graph larger than the fabric runs as a sequence of sections, section s from
// configuration context s of every unit (docs/architecture.md#sections). planSections cuts
// the graph; a stream that crosses a cut is carried either in a memory unit, whose buffer
// outlives the context switch (a Bufferize of the whole stream in the producing section, its
// Streamify and a Flatten back to the stream's shape in the consuming one, both on the same
// unit), or through DRAM (a LinearOffChipStore in the producing section writes it to a
// scratch tensor the pass lays out, a LinearOffChipLoad in each consuming section reads it
// back). Loads of input tensors and SelectGens are repeated in every section that needs them
// instead of being carried.
#include <cstdint>
#include <string>
#include <vector>

#include "arch/arch_model.hpp"
#include "ir/graph.hpp"
#include "passes/shape_check.hpp"

namespace stepgen {

/// One stream carried from a section to later ones, in a memory unit or through a DRAM
/// scratch tensor.
struct CarriedStream {
  std::string stream;       ///< its name in the user's graph
  int from = 0;             ///< producing section
  std::vector<int> to;      ///< consuming sections, ascending
  std::string tensor;       ///< the scratch tensor ("" when on chip)
  int64_t base = 0;         ///< its DRAM base address (bytes)
  int64_t bytes = 0;        ///< its size (bytes): tiles * rows * cols * 4
  bool onChip = false;      ///< kept in a memory unit (ops carry_keep_<stream>, carry_replay_<stream>)
};

/// The cut: how many sections, which section runs each op of the sectioned graph, and the
/// carried streams with their scratch layout.
struct SectionPlan {
  int sections = 1;
  std::vector<int> sectionOf;          ///< per op of SectionedGraph::graph
  std::vector<CarriedStream> carried;  ///< in the order of their producing sections
  int64_t carriedDramBytes() const;    ///< bytes written to scratch (each read back once per consumer)
  int64_t carriedOnchipBytes() const;  ///< bytes kept in memory units across a switch
};

/// The graph as the fabric runs it. Without a cut, `graph` is the input graph unchanged and
/// every op is in section 0.
struct SectionedGraph {
  StepGraph graph;
  ShapeResult shapes;
  SectionPlan plan;
};

/// Cuts `g` into sections that each map onto `a` (mapGraph and buildConfig succeed on them).
/// Deterministic greedy: the placed operators in dependency order (orderOps) fill section 0
/// until the next one does not fit, then section 1, and so on; with `minSections` > 1 each
/// section also takes at most ceil(placed ops / minSections) of them. Then, cut by cut, the
/// last op of a section moves to the next while that fits and lowers the bytes carried
/// through DRAM. Then, with `onChipCarry`, carried streams move from DRAM into memory units,
/// largest first, each where the cut still maps: read in one later section, the whole stream
/// within one unit's capacity, a memory unit free in every section from producer to reader
/// and within link reach of both ends. A graph that fits in one configuration and
/// minSections <= 1 is returned unchanged.
/// Errors (DiagError): the mapper's error (M-301 .. M-305) for an operator that does not fit
/// the fabric even alone in a section; M-309 a cut through a stream that cannot be carried
/// (not a static stream of 2-D tiles; a dynamic-operator cluster stays whole in one section); M-310 a
/// tensor or a carried stream's scratch beyond the DRAM address space. Any number of sections runs on any number of
/// contexts (foldSections: more sections than contexts are reloaded while the fabric runs).
/// `after` (op pairs {h, j}, from planBuffers' section cuts): j runs in a later section than
/// h, so the graph is cut even when it fits whole; so does every {store, load} of a state
/// tensor (stateOrder).
SectionedGraph planSections(const StepGraph& g, const ShapeResult& s, const ArchModel& a, int minSections,
                            bool onChipCarry = true, const std::vector<std::pair<int, int>>& after = {});

/// Readable summary for mapping.txt: sections (and the context each runs from on a fabric of
/// `contexts` contexts), their operators, carried streams and bytes, the scratch layout.
/// Deterministic.
std::string sectionsText(const StepGraph& g, const SectionPlan& p, int contexts);

}  // namespace stepgen
