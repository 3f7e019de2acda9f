#pragma once
// A MoE example folder from a routing trace (`stepgen graph moe`): graph, trace, inputs.
#include <cstdint>
#include <string>

#include "builders/moe.hpp"

namespace stepgen {

/// Writes `dir`/graph.yaml (buildMoeGraph, or buildMoeRegionsGraph when p.regions > 0), `dir`/routing.csv (the trace's first p.batch
/// tokens) and, with `inputs`, `dir`/inputs/<tensor>.npy (moeInputs / moeRegionsInputs with `seed`; without them the
/// folder serves the timing-only model, which reads no tensor). The folder appears only when
/// complete. Errors: std::runtime_error naming the trace (readRoutingTrace), DiagError G-120.
/// With `synthetic`, a trace shorter than p.batch is extended by syntheticRoutingTrace (seed
/// `seed`; its first tokens are not kept: the whole batch is drawn).
void writeMoeExample(const MoeParams& p, const std::string& tracePath, const std::string& dir, uint32_t seed,
                     bool inputs = true, bool synthetic = false);

}  // namespace stepgen
