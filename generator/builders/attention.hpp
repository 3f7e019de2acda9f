#pragma once
// buildDecodeAttentionGraph: one query row attending over a KV cache (decode attention of
// one head) as a STeP graph (docs/graph_format.md), with the attention functions of the
// compute units (rowmax, rowsum, Accum(max), sub, exp, recip; docs/hardware.md section 3).
#include <cstdint>
#include <map>
#include <string>

#include "ir/tokens.hpp"

namespace stepgen {

/// Sizes of one decode-attention head (elements; fp32 tensors, row-major).
struct AttentionParams {
  int64_t kv = 128;       ///< L: KV-cache rows (tokens) as stored, a multiple of kvTile
  int64_t headDim = 64;   ///< D: head dimension
  int64_t kvTile = 32;    ///< T: KV rows per tile (must divide kv)
  int64_t queries = 1;    ///< G: query rows sharing the KV head (GQA: query heads per KV head)
  int64_t valid = 0;      ///< tokens of the cache that are real (1 .. kv); 0 = all kv. Fewer: masked
  bool singlePass = false;  ///< one pass with the online-softmax rescale (buildSinglePassAttention)
};

/// Graph YAML text of out = softmax(q K^T) V for q [G, D] (already scaled by 1/sqrt(D)),
/// K and V [L, D], out [G, D], in two passes over the L / T score tiles:
///   s_j = q K_j^T ([G, T], Map(matmul_t)); with valid < L, s_j + mask_j (Map(add); the
///   input tensor mask [G, L] is 0 for the valid tokens and -inf for the others, so exp gives
///   them weight 0: attentionMask writes it); m = max over j of rowmax(s_j) (Accum(max));
///   p_j = exp(s_j - m) (s buffered in a memory unit, m Expanded over the tiles, Map(sub),
///   Map(exp)); l = sum over j of rowsum(p_j); w_j = p_j * recip(l) (p buffered, recip(l)
///   Expanded); out = sum over j of w_j V_j (Map(matmul), Accum(add)).
/// Every stream has an outer dim of 1 (one query group). Deterministic. Throws DiagError
/// G-120 for a size < 1, a KV tile that does not divide L, or valid outside 0 .. L.
/// With p.singlePass the graph of buildSinglePassAttention instead.
std::string buildDecodeAttentionGraph(const AttentionParams& p);

/// Graph YAML text of the same attention in one pass over the score tiles, FlashAttention
/// style (the online-softmax rescale): per tile j, r_j = rowmax(s_j), the running max
/// m_j = Scan(max) of r and the previous one m_{j-1} = Scan(max_exclusive) of r (-inf for
/// j = 0), p_j = exp(s_j - m_j), the rescale alpha_j = exp(m_{j-1} - m_j) (0 for j = 0);
/// l = Accum(rescale_add) of (rowsum(p_j), alpha_j) (l_j = l_{j-1} alpha_j + rowsum(p_j)),
/// o = Accum(rescale_add) of (p_j V_j, alpha_j) and out = scale_rows(o, recip(l)). The
/// alpha tiles for o ([G, T], row-filled) wait in a memory unit (Bufferize b = 0, one tile
/// per buffer) while p_j V_j is computed, else the Broadcast of alpha would deadlock. With
/// T != D they are widened to [G, D] by scale_rows of an input tensor `ones` [G, D] (all
/// 1.0: exact). Throws DiagError G-120 as buildDecodeAttentionGraph.
std::string buildSinglePassAttention(const AttentionParams& p);

/// The ops of the single-pass graph from the scores `s<sfx>` ([.., n] tiles [G, T], n KV
/// tiles per group) to the result `res<sfx>` ([..] tiles [G, D]): every op and stream name
/// ends in `sfx`. `loadV` is the op line that makes `vs<sfx>` (V tiles [T, D], one per score
/// tile); `loadOnes` the one that makes `os<sfx>` (ones [G, D] per score tile) when T != D,
/// empty when T = D. YAML lines, one per op, in a fixed order.
std::string singlePassCore(const std::string& sfx, const std::string& loadOnes, const std::string& loadV);

/// The `ones` tensor of a single-pass graph with T != D: [queries, headDim] of 1.0f.
Matrix attentionOnes(const AttentionParams& p);

/// The mask tensor of a graph with valid < kv: [queries, kv] fp32 bit patterns, +0 in the
/// first `valid` columns of every row and -inf in the rest.
Matrix attentionMask(const AttentionParams& p);

/// The constant inputs buildDecodeAttentionGraph(p) declares: `mask` (attentionMask) for a
/// cache of valid < kv rows, `ones` (attentionOnes) for a single pass with T != D.
std::map<std::string, Matrix> attentionFixedInputs(const AttentionParams& p);

}  // namespace stepgen
