#pragma once
// buildKvAppendGraph: one decode step's KV-cache append (docs/graph_format.md#state-tensors).
// Request b's new key row goes to row len_b of its cache, a data-dependent position: a
// RandomOffChipStore whose addresses are meta rows. The cache is a state tensor, so the
// graph reads it back after the append (in a later section on a fabric), as the attention of
// the same step does.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/tokens.hpp"

namespace stepgen {

/// One append: the requests' cache lengths before the step, the row width and the cache
/// rows reserved per request.
struct KvAppendParams {
  std::vector<int64_t> lengths = {0};  ///< per request: tokens already cached, 0 .. capacity - 1
  int64_t headDim = 16;                ///< D: words per cached row (a multiple of 16: whole 64-byte rows)
  int64_t capacity = 8;                ///< L: cache rows per request
};

/// Graph YAML text. Tensors: k [B*L, D] (role state: request b's rows from b*L), k_new [B, D]
/// (input: the new rows), pos [B, 16] (input, one meta row per request: word 0 = b*L +
/// len_b as a uint32 bit pattern) and kout [B*L, D] (output). Ops: the pos and k_new rows
/// loaded one per request, RandomOffChipStore(index 0) of each new row into k at its row,
/// then k read back one request ([L, D] tile) at a time and stored to kout. So kout = k with
/// row b*L + len_b replaced by k_new row b. Deterministic. Throws DiagError G-120 when there
/// is no request, a length is outside 0 .. L-1, D < 16 or not a multiple of 16, or L < 1.
std::string buildKvAppendGraph(const KvAppendParams& p);

/// The meta rows `pos` of that graph (uint32 words as bit patterns). Throws as buildKvAppendGraph.
std::map<std::string, Matrix> kvAppendFixedInputs(const KvAppendParams& p);

}  // namespace stepgen
