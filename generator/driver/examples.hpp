#pragma once
// Example folders written by `stepgen graph ... --example DIR`: graph.yaml and inputs/.
#include <cstdint>
#include <map>
#include <string>

#include "builders/attention.hpp"
#include "builders/decoder_layer.hpp"
#include "builders/gqa_decode.hpp"
#include "builders/rmsnorm.hpp"
#include "builders/rope.hpp"
#include "builders/kv_append.hpp"

namespace stepgen {

/// Writes `dir`/graph.yaml (the text `graph`) and `dir`/inputs/<tensor>.npy: every input
/// tensor seeded random as loadInputs makes them (`seed`; none with `fixedOnly`), then the
/// tensors of `fixed` in their place; and `files` (name -> text) beside the graph (a routing
/// trace). The folder appears only when complete. Errors: DiagError from loading the graph,
/// std::runtime_error when a file cannot be written.
void writeGraphExample(const std::string& graph, const std::map<std::string, Matrix>& fixed, const std::string& dir,
                       uint32_t seed, bool fixedOnly = false, const std::map<std::string, std::string>& files = {});

/// Writes the decode-attention example (buildDecodeAttentionGraph): q, k, v seeded random
/// (`seed`) and, for a masked cache, the mask (attentionMask), the ones of a single-pass
/// graph (attentionOnes). Errors as writeGraphExample, DiagError G-120 from the builder.
void writeAttentionExample(const AttentionParams& p, const std::string& dir, uint32_t seed);

/// Writes the GQA decode example (buildGqaDecodeGraph): q, k, v seeded random (`seed`; not
/// with `fixedOnly`, for the timing-only model at true dims), mask, ones and the meta rows
/// from gqaFixedInputs. Errors as writeAttentionExample.
void writeGqaExample(const GqaParams& p, const std::string& dir, uint32_t seed, bool fixedOnly = false);

/// Writes the RMSNorm example (buildRmsNormGraph): x and w seeded random (`seed`), inv_d and
/// eps from rmsNormFixedInputs. Errors as writeAttentionExample.
void writeRmsNormExample(const RmsNormParams& p, const std::string& dir, uint32_t seed);

/// Writes the RoPE example (buildRopeGraph): x seeded random (`seed`), cos and sin from
/// ropeTables. Errors as writeAttentionExample.
void writeRopeExample(const RopeParams& p, const std::string& dir, uint32_t seed);

/// Writes the KV-append example (buildKvAppendGraph): k and k_new seeded random (`seed`),
/// pos from kvAppendFixedInputs. Errors as writeAttentionExample.
void writeKvAppendExample(const KvAppendParams& p, const std::string& dir, uint32_t seed);

/// Writes the decoder-layer example (buildDecoderLayerGraph): every input and state tensor
/// from decoderLayerInputs (`seed`), or with `fixedOnly` the constant tables only (the
/// timing-only model); with p.traceRouting also routing.csv, the first B tokens of the trace
/// `tracePath`. Errors as writeAttentionExample; std::runtime_error naming the trace when it
/// cannot be read, has fewer than B tokens or another k.
void writeDecoderLayerExample(const DecoderLayerParams& p, const std::string& dir, uint32_t seed, bool fixedOnly,
                              const std::string& tracePath = "");

}  // namespace stepgen
