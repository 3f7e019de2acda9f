#pragma once
// Mapping: where every STeP operator runs on the fabric and how its streams are routed.
// Produced by mapGraph (map/mapper.cpp) from the graph, its inferred types and the arch.
#include <array>
#include <cstdint>
#include <string>
#include <map>
#include <vector>

#include "arch/arch_model.hpp"
#include "ir/graph.hpp"
#include "passes/shape_check.hpp"

namespace stepgen {

/// Identity stop map: stop level s stays s (docs/hardware.md section 4).
using StopMap = std::array<int, 8>;
StopMap identityStopMap();

/// How an operator is realised. Placed ops occupy (unit, context); absorbed ops
/// (Zip, Broadcast, Promote, Flatten, Streamify fused into its Bufferize) have unit = -1.
struct OpPlacement {
  int unit = -1;
  int ctx = 0;
  int hostOp = -1;  ///< absorbed ops: the placed op that realises them, if any
  int auxUnit = -1; ///< a route EagerMerge with a selector output: the MU emitting it (meta mode)
  std::vector<int> extraUnits;  ///< Parallelize: the CUs of outputs 1..n-1 (output 0 is `unit`)

  /// The unit that emits output `k` of the op: a Parallelize output's own CU, a route
  /// EagerMerge's selector (k = 1) its meta MU, otherwise `unit`.
  int unitOfOutput(size_t k) const {
    if (k >= 1 && k - 1 < extraUnits.size()) return extraUnits[k - 1];
    if (k == 1 && auxUnit >= 0) return auxUnit;
    return unit;
  }
};

/// One hardware link: the output of `srcUnit` feeding input port `dstPort` of `dstUnit`.
struct Route {
  int srcOp = -1, dstOp = -1;  ///< placed ops at the two ends
  int srcUnit = -1, dstUnit = -1, dstPort = 0, ctx = 0;
  StreamId stream;             ///< the graph stream entering the consumer (after absorbed ops)
  StopMap stopMap = identityStopMap();  ///< Promote/Flatten folded along the way
  int distance = 0;            ///< Manhattan distance, <= link.reach
  int fifoDepth = 0;           ///< beats (the arch's link.fifo_depth)
};

/// The result of mapping.
/// One configuration field's value: `field` indexes the unit kind's KindLayout::fields
/// (arch/config_layout.hpp), `ctx` the context (the op's section).
struct FieldValue {
  int unit = -1;
  int ctx = 0;
  int field = 0;
  uint64_t value = 0;
};

struct Mapping {
  std::vector<OpPlacement> ops;  ///< indexed by OpId
  /// Every non-default configuration field of the mapped units (map/unit_config.hpp), in
  /// the order they were set (a later value of the same field wins).
  std::vector<FieldValue> fields;
  std::vector<Route> routes;     ///< sorted by (dstUnit, ctx, dstPort)
  int unitsUsed = 0;             ///< units used in any section
  int sections = 1;              ///< section s runs from context s (map/sections.hpp)
  double placeSeconds = 0;       ///< wall seconds of mapGraph (placement, repair, routes); not in any output file
  /// Total wire length: the sum of the routes' distances (hops).
  int64_t wireLength() const {
    int64_t w = 0;
    for (const Route& r : routes) w += r.distance;
    return w;
  }
};

/// Places ops (deterministic greedy: topological order, nearest free unit of the needed
/// kind, ties to the lowest grid index; when a link ends out of reach, a simulated-annealing
/// repair, generator/map/mapper.cpp), routes every stream within link.reach, and checks
/// capacities, then configures every placed unit (configureUnits: the one legality query,
/// map/unit_config.hpp). Errors (DiagError): M-301 no free unit of the kind an op needs,
/// M-303 stream longer than link.reach (unroutable), M-306 an operator no unit runs, and
/// configureUnits' M-302, M-304 .. M-308, M-311. Scan(add), Expand and
/// Parallelize run on compute units; Parallelize with n outputs takes n of them (one per
/// output, the input broadcast to all). The MoE clusters of map/clusters.hpp run on one unit
/// each (the host op is placed, members get hostOp); a route EagerMerge whose selector output
/// is read takes a second memory unit (auxUnit) for it. `sectionOf` (per op, empty = all 0,
/// from planSections) gives each op's section: section s is placed in context s with the
/// whole fabric to itself, and an op reads only streams of its own section.
/// Units of each kind `g` takes in one section on `a` (the mapper's count: one per placed
/// op, plus route meta units and Parallelize / Partition outputs beyond the first).
std::map<UnitKind, int> unitDemand(const StepGraph& g, const ArchModel& a);

Mapping mapGraph(const StepGraph& g, const ShapeResult& shapes, const ArchModel& a,
                 const std::vector<int>& sectionOf = {});

/// The fabric an unbounded arch (`grid: unbounded`) gives graph `g`: three rows (address
/// generators, compute units, memory units) with exactly the units of each kind that `g`
/// takes in one configuration, on a crossbar (every link in reach: congestion-free), unit
/// memories of 2^40 bytes, 48-bit DRAM addresses; every other parameter (timing, widths,
/// contexts, functions) as `a` gives it. The paper simulator's setting: one unit per
/// operator, nothing shared. With `sectionOf` (planSections' cut), the units of the section
/// that takes the most: each section has the fabric to itself. Returns `a` unchanged when it
/// is not unbounded.
ArchModel fabricForGraph(const ArchModel& a, const StepGraph& g, const std::vector<int>& sectionOf = {});

}  // namespace stepgen
