#pragma once
// buildGqaDecodeGraph: GQA decode attention of one KV head for a batch of requests with
// their own KV lengths, the batch split over R parallel regions (the dynamic-parallelization
// study of docs/step_semantics.md#dynamic-parallelization). Each region runs the single-pass
// attention graph (builders/attention.hpp singlePassCore) over its requests one after the
// other; the KV tiles of a request are a run load (RandomOffChipLoad with `count`) driven by
// one meta row per request.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/tokens.hpp"

namespace stepgen {

/// How requests are assigned to regions.
enum class GqaStrategy {
  Coarse,      ///< region r takes the r-th contiguous block of ceil(B/R) requests
  Interleave,  ///< request b goes to region b mod R
  Dynamic,     ///< each request to the region that reported itself free first (a feedback cycle)
};

/// Sizes of one GQA decode batch (elements; fp32 tensors).
struct GqaParams {
  std::vector<int64_t> kvLengths;  ///< per request: its KV-cache length (tokens, >= 1)
  int64_t headDim = 64;            ///< D
  int64_t kvTile = 32;             ///< T: KV rows per tile
  int64_t queries = 8;             ///< G: query heads per KV head
  int64_t regions = 4;             ///< R
  GqaStrategy strategy = GqaStrategy::Coarse;
  int64_t credits = 1;             ///< Dynamic: requests a region may hold at once (its initial tokens)
  /// The step's own key and value rows are appended to the caches first (KV-cache append,
  /// docs/graph_format.md#state-tensors): request b then attends over kvLengths[b] + 1 tokens.
  bool append = false;
};

/// Parses "coarse" / "interleave" / "dynamic". Throws DiagError G-120 for any other name.
GqaStrategy parseGqaStrategy(const std::string& s);
/// "coarse" / "interleave" / "dynamic".
std::string gqaStrategyName(GqaStrategy s);

/// The requests of each region, in the order it serves them (a region may get none); for
/// Dynamic the fabric decides at run time: every region gets every request (its capacity).
/// Throws DiagError G-120 for a size < 1, an empty batch, a KV length < 1 or credits < 1.
std::vector<std::vector<int64_t>> gqaAssignment(const GqaParams& p);

/// Tokens request b attends over: L_b, or L_b + 1 with append.
int64_t gqaAttended(const GqaParams& p, size_t b);
/// KV tiles of request b: ceil(gqaAttended / T).
int64_t gqaTiles(const GqaParams& p, size_t b);
/// KV tiles of the whole batch: NT, the sum of gqaTiles.
int64_t gqaTotalTiles(const GqaParams& p);

/// Graph YAML text. Tensors: q [B*G, D] (request b's G query rows at b*G, already scaled by
/// 1/sqrt(D)); k, v [NT*T, D] (request b's ceil(L_b/T) tiles from tile t_b = sum of the
/// earlier requests' tiles, rows past L_b padding); mask [G, NT*T] (0 on real tokens, -inf
/// on padding); ones [G, D] when T != D; per region r with requests: meta_r<r> [B_r, 16]
/// (one row per request: word 0 = t_b, 1 = its tile count, 2 = b, 3 = 0) and the output
/// out_r<r> [B_r*G, D] (its requests' rows in serving order). Region r's ops end in _r<r>.
/// Dynamic (docs/graph_format.md#feedback-streams): one meta [B, 16] of every request in
/// order, dealt by a Partition whose selector is the arrival-order merge (a tree of
/// two-input EagerMerges) of every region's Map(fn: select) signals, `credits` initial
/// tokens each plus one per request the region finished; out_r<r> is [B*G, D], the rows of
/// the requests it served from row 0 (the rest 0). With append: k and v are state tensors,
/// k_new and v_new [B, D] the new rows and kv_pos [B, 16] one meta row per request (word 0 =
/// its row t_b*T + L_b); two RandomOffChipStores write the new rows there before the
/// attention reads the caches (in a later section on a fabric), and the mask covers the new
/// token. Deterministic. Throws DiagError G-120 as gqaAssignment, and for append with the
/// dynamic strategy (a graph with feedback is not cut into sections).
std::string buildGqaDecodeGraph(const GqaParams& p);

/// The tensors of that graph that are not seeded random: mask, ones, meta_r<r> and with
/// append kv_pos (words as uint32 bit patterns).
std::map<std::string, Matrix> gqaFixedInputs(const GqaParams& p);

}  // namespace stepgen
