#pragma once
// buildMoeRegionsGraph: the experts of a MoE layer served by R parallel regions, each region
// one expert pipeline time-multiplexed over its E/R experts (the configuration
// time-multiplexing study of docs/step_semantics.md#time-multiplexing).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "builders/moe.hpp"

namespace stepgen {

/// Region r of R over E experts: its experts first .. first + n - 1.
struct MoeRegion {
  int64_t first = 0, n = 0;
  int64_t k = 0;     ///< most experts of one token in the region: min(k, n)
  int64_t rows = 0;  ///< rows its expert outputs fill (tokens routed to it, padded per expert
                     ///< to whole token tiles for a static tile); 0 = the region gets no token
};

/// The R regions of `p` for the routing `experts` (experts[t] = token t's k experts).
/// Throws DiagError G-120 if R < 1 or R does not divide E.
std::vector<MoeRegion> moeRegions(const MoeParams& p, int64_t regions, const std::vector<std::vector<int>>& experts);

/// Graph YAML text of the expert part of the MoE layer (buildMoeGraph up to acc_o) on R
/// regions. Region r (suffix _r<r>, only regions that get tokens; an idle region has no ops
/// but keeps its units on the fabric): SelectGen over the trace's experts of the region
/// (first, n, of = E; ids renumbered from 0) reading `routing_r<r>` [B, 16] -> Partition of
/// the x rows (x read by the region itself) -> per expert Reshape(tb, pad) or Promote ->
/// retile -> EagerMerge -> RepeatStatic over the F tiles, AddrGen -> RandomOffChipLoad of
/// the expert's weight tiles from `wg_r<r>`, `wu_r<r>`, `wd_r<r>` [n*F, D] -> SwiGLU with
/// Accum over the F tiles -> stored row after row into `ym_r<r>` [rows, D] (the experts'
/// outputs in ascending expert order, tokens ascending). The combine (Reassemble, router
/// weights, sum over k) is the same for every R and not part of this graph. Deterministic
/// text. Throws DiagError G-120 as buildMoeGraph and moeRegions, and if no region gets a token.
std::string buildMoeRegionsGraph(const MoeParams& p, int64_t regions, const std::vector<std::vector<int>>& experts);

/// Inputs of that graph: x and the weight rows of each active region sliced from
/// moeInputs(p, experts, seed) (so every R computes the same expert outputs), and
/// routing_r<r>: per token its experts of the region ascending as local ids in words 0..,
/// 0xFFFFFFFF (no expert: the route unit ignores ids >= n) up to word k_r - 1.
std::map<std::string, Matrix> moeRegionsInputs(const MoeParams& p, int64_t regions,
                                               const std::vector<std::vector<int>>& experts, uint32_t seed);

}  // namespace stepgen
