#pragma once
// Operator clusters: groups of STeP operators that one fabric unit realises together
// (docs/hardware.md section 7). The mapper places a cluster's host and absorbs its members.
#include <map>
#include <vector>

#include "arch/arch_model.hpp"
#include "ir/graph.hpp"

namespace stepgen {

/// What a cluster host runs as.
enum class ClusterKind {
  Route,       ///< EagerMerge host: Partition -> Reshape|Promote -> retile -> EagerMerge (MU route mode)
  Combine,     ///< Reassemble host: Partition -> FlatMap -> Flatten -> Reassemble (MU combine mode)
  WeightLoad,  ///< RandomOffChipLoad host: AddrGen -> RandomOffChipLoad (AG random, per group)
  RunLoad,     ///< RandomOffChipLoad with `count` or `index` alone: a run of tiles (one tile) per meta row (AG random)
  RandomStore, ///< RandomOffChipStore with `index` alone: one tile per meta row (AG random store; ports data, addresses)
  Dispatch,    ///< Partition(b 0) alone: one CU per output (func partition), each reading data and selector
  Merge,       ///< EagerMerge(b 0) of two inputs alone, data output only: one CU (func merge, arrival order)
};

/// The unit kind a cluster host runs on (a route or combine host on a memory unit, a
/// weight or run load on an address generator, a Partition or EagerMerge alone on compute
/// units).
UnitKind clusterUnit(ClusterKind k);

/// The clusters of a graph.
struct Clusters {
  std::vector<int> host;  ///< per op: the host op that realises it (members and hosts), or -1
  std::map<int, ClusterKind> kind;            ///< per host op
  std::map<int, std::vector<StreamId>> ports;  ///< per host op: the streams its unit reads, port by port

  bool isHost(int op) const { return kind.count(op) > 0; }
  /// A member absorbed into some other op's unit.
  bool isMember(int op) const { return host[size_t(op)] >= 0 && !isHost(op); }
};

/// Finds the clusters (fixed patterns, documented per ClusterKind above and in
/// docs/graph_format.md "On a fabric"). A Route host whose EagerMerge also has a selector
/// output needs a second memory unit in meta mode; the mapper adds it. A Reshape's "is
/// padding" output and the retile of it belong to the Route cluster: on the fabric the
/// padding travels in the route unit's meta beats, which the Combine unit reads. Operators
/// that match no pattern are left alone (the mapper reports M-306 if they have no unit).
Clusters findClusters(const StepGraph& g);

}  // namespace stepgen
