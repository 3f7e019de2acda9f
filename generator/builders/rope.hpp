#pragma once
// buildRopeGraph: rotary position embedding (RoPE, rotate-half form) of one decode step as a
// STeP graph (docs/graph_format.md#rope). Row r of x is one head of one request at that
// request's position p; with H = Dh/2 and x1, x2 the row's halves,
//   out1 = x1 * cos(p f) - x2 * sin(p f),  out2 = x2 * cos(p f) + x1 * sin(p f),
//   f_i = theta^(-2i / Dh), i = 0 .. H-1,
// which is Llama's, Qwen3's and Mixtral's apply_rotary_pos_emb (q * cos + rotate_half(q) * sin).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/tokens.hpp"

namespace stepgen {

/// One RoPE: the requests' positions (a decode step's token sits at position = the request's
/// KV length before the step), heads per request and the head dimension.
struct RopeParams {
  std::vector<int64_t> positions = {0};  ///< one per request, >= 0
  int64_t heads = 1;                     ///< rows per request (its q or k heads)
  int64_t headDim = 64;                  ///< Dh, even
  double theta = 1e6;                    ///< base (Qwen3, Mixtral: 1e6; Llama-3: 5e5)
  /// Multiplies the tables (so out is scaled): the decoder layer's 1/sqrt(Dh) on q, exact
  /// when Dh is a power of 4, else one more rounding of each table entry.
  double scale = 1.0;
};

/// Graph YAML text: tensors x [N, Dh] (N = requests x heads, request-major), cos and sin
/// [N, Dh/2] (inputs: ropeTables) and out [N, Dh]. One tile is one half row [1, Dh/2]: both
/// halves loaded (the second with origin [0, 1]), four Map(mul), a Map(sub) and a Map(add),
/// each half stored at its origin. Deterministic. Throws DiagError G-120 when there is no
/// position, a position is negative, heads < 1, Dh is not even and >= 2, theta <= 1 or
/// scale <= 0.
std::string buildRopeGraph(const RopeParams& p);

/// The cos and sin tables of buildRopeGraph, [N, Dh/2]: row r (request r / heads at position
/// p) holds float(scale cos(p f_i)) and float(scale sin(p f_i)), computed in double and
/// rounded once.
/// Throws as buildRopeGraph.
std::map<std::string, Matrix> ropeTables(const RopeParams& p);

}  // namespace stepgen
