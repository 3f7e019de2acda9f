#pragma once
// buildDecodeAttentionGraph: one query row attending over a KV cache (decode attention of
// one head) as a STeP graph (docs/graph_format.md), with the attention functions of the
// compute units (rowmax, rowsum, Accum(max), sub, exp, recip; docs/hardware.md section 3).
#include <cstdint>
#include <string>

namespace stepgen {

/// Sizes of one decode-attention head (elements; fp32 tensors, row-major).
struct AttentionParams {
  int64_t kv = 128;       ///< L: KV-cache rows (tokens)
  int64_t headDim = 64;   ///< D: head dimension
  int64_t kvTile = 32;    ///< T: KV rows per tile (must divide kv)
};

/// Graph YAML text of out = softmax(q K^T) V for q [1, D] (already scaled by 1/sqrt(D)),
/// K and V [L, D], out [1, D], in two passes over the L / T score tiles:
///   s_j = q K_j^T ([1, T], Map(matmul_t)); m = max over j of rowmax(s_j) (Accum(max));
///   p_j = exp(s_j - m) (s buffered in a memory unit, m Expanded over the tiles, Map(sub),
///   Map(exp)); l = sum over j of rowsum(p_j); w_j = p_j * recip(l) (p buffered, recip(l)
///   Expanded); out = sum over j of w_j V_j (Map(matmul), Accum(add)).
/// Every stream has an outer dim of 1 (one query). Deterministic. Throws DiagError G-120
/// for a size < 1 or a KV tile that does not divide L.
std::string buildDecodeAttentionGraph(const AttentionParams& p);

}  // namespace stepgen
