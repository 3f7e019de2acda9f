#pragma once
// The on-fabric MoE router's arithmetic (Map fn topk / topk_weights,
// docs/step_semantics.md#topk): which k of a token's E gate logits it picks, and their
// weights, bit for bit as the fabric computes them.
#include <cstdint>
#include <vector>

namespace stepgen {

/// The k largest of the fp32 logits row[0 .. e), as indices in ascending order. Order: by
/// value, ties (equal values; +0, -0 and subnormals all count as zero) to the lower index;
/// NaN ranks below every number, -inf included. Requires 1 <= k <= e
/// (std::invalid_argument otherwise).
std::vector<int> topkSelect(const uint32_t* row, int64_t e, int k);

/// The chosen experts' weights, in the order of `chosen` (ascending): the softmax over their
/// logits, which is Mixtral's and Qwen3's (norm_topk_prob) renormalised top-k softmax:
/// m = the largest chosen logit (topkSelect's order), e_j = fp32Exp(fp32Sub(l_j, m)),
/// s = e_0 + e_1 + ... (fp32Add, in `chosen` order from +0), w_j = fp32Mul(e_j, fp32Recip(s))
/// (sim/common/fp.hpp). A chosen -inf gets weight 0 while a finite logit is chosen; if m is
/// -inf or NaN every weight is NaN. fp32 bit patterns.
std::vector<uint32_t> topkWeights(const uint32_t* row, const std::vector<int>& chosen);

}  // namespace stepgen
