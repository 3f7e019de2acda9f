#pragma once
// buildRmsNormGraph: RMSNorm over the rows of x as a STeP graph (docs/graph_format.md#rmsnorm):
// out[b][d] = x[b][d] * rsqrt(mean_d(x[b][d]^2) + eps) * w[d], as Llama, Qwen3 and Mixtral
// normalise the hidden state before attention and before the FFN / MoE.
#include <cstdint>
#include <map>
#include <string>

#include "ir/tokens.hpp"

namespace stepgen {

/// Sizes of one RMSNorm (elements; tensors are fp32, row-major).
struct RmsNormParams {
  int64_t rows = 16;  ///< B: rows (tokens) of x and out
  int64_t dim = 64;   ///< D: columns of x, w and out (the hidden size)
  float eps = 1e-6f;  ///< added to the mean square before rsqrt (Llama-3 and Qwen3: 1e-6; Mixtral: 1e-5)
};

/// Graph YAML text of the RMSNorm: tensors x [B, D], w [1, D] (inputs), inv_d and eps [1, D]
/// (inputs holding 1/D and eps in every word: rmsNormFixedInputs) and out [B, D]. One tile is
/// one row [1, D]: squares (Map mul of x with a Broadcast copy of itself), Map(rowsum), times
/// 1/D, plus eps, Map(rsqrt), times a second read of x, times w. x is read twice from
/// off-chip so that no on-chip buffer has to hold a row while its sum is formed. Needs mul,
/// add, rowsum and rsqrt in the arch's functions; D a multiple of the link's words per beat
/// on a fabric (rowsum's rows of whole beats). Deterministic. Throws DiagError G-120 when a
/// size is < 1 or eps is not a finite number >= 0.
std::string buildRmsNormGraph(const RmsNormParams& p);

/// The constant inputs of buildRmsNormGraph: inv_d (float(1/D) in every word) and eps
/// (float eps in every word), both [1, D].
std::map<std::string, Matrix> rmsNormFixedInputs(const RmsNormParams& p);

}  // namespace stepgen
