#pragma once
// A decode-attention example folder (`stepgen graph attention --example DIR`): graph, inputs.
#include <cstdint>
#include <string>

#include "builders/attention.hpp"
#include "builders/gqa_decode.hpp"

namespace stepgen {

/// Writes `dir`/graph.yaml (buildDecodeAttentionGraph) and `dir`/inputs/<tensor>.npy: q, k, v
/// seeded random as loadInputs makes them (`seed`), and, for a masked cache, the mask
/// (attentionMask). The folder appears only when complete. Errors: DiagError G-120 from the
/// builder, std::runtime_error when a file cannot be written.
void writeAttentionExample(const AttentionParams& p, const std::string& dir, uint32_t seed);

/// Writes `dir`/graph.yaml (buildGqaDecodeGraph) and `dir`/inputs/<tensor>.npy: q, k, v
/// seeded random (`seed`; not with `fixedOnly`, for the timing-only model at true dims),
/// mask, ones and the meta rows from gqaFixedInputs. The folder appears only when complete.
/// Errors as writeAttentionExample (G-120 from the builder).
void writeGqaExample(const GqaParams& p, const std::string& dir, uint32_t seed, bool fixedOnly = false);

}  // namespace stepgen
