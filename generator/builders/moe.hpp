#pragma once
// buildMoeGraph: a top-k Mixture-of-Experts layer of SwiGLU experts as a STeP graph
// (docs/step_semantics.md#dynamic-tiling), driven by a routing trace (the CSV format of examples/moe/data).
#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "ir/tokens.hpp"

namespace stepgen {

/// Sizes of one MoE layer (elements; fp32 tensors, row-major).
struct MoeParams {
  int64_t batch = 64;    ///< B: tokens
  int64_t hidden = 64;   ///< D
  int64_t ffn = 224;     ///< F: FFN width of one expert
  int64_t experts = 8;   ///< E
  int64_t topK = 2;      ///< k: experts per token
  int64_t tileB = 16;    ///< static token tile (rows per expert tile, padded); 0 = dynamic tiling
  int64_t tileF = 32;    ///< FFN tile (must divide ffn)
  std::string trace = "routing.csv";  ///< routing CSV, relative to the graph file
  bool dispatchOnly = false;  ///< stop after EagerMerge: store the expert-grouped token tiles
  bool residual = false;      ///< y = x + MoE(x): the x rows are Broadcast to the router and to the final add
  /// The routing computed from x on the fabric instead of replayed from a trace: gate logits
  /// x Wr^T, Map(topk) choosing each token's k experts, their weights the softmax over the
  /// chosen logits (Map topk_logits, then rowmax, sub, exp, rowsum, recip, mul), spread to
  /// one 64-byte piece each (matmul_t with `spread`), stored to rw (then a state tensor
  /// [B, k*16]) and read back for the combine.
  bool router = false;
  int64_t regions = 0;  ///< 0: the whole layer (buildMoeGraph); R >= 1: the experts on R regions (moe_regions.hpp)
  /// 0: route the whole batch at once. b >= 1 (dividing batch): the batch in blocks of b tokens,
  /// each block a copy of the layer over its rows (a route unit holds at most 64 tokens).
  int64_t block = 0;
};

/// Checks the sizes: throws DiagError G-120 on a size < 1, tile_b < 0, k > E or > 8, tile_f
/// not dividing F, or residual with dispatchOnly.
void checkMoeParams(const MoeParams& p);

/// The router's `spread` table [k*16, 16] (0/1): row 16 j has its 1 in column j, so that
/// matmul_t of a row of weights with it puts weight j at word 16 j (routing-row piece j).
Matrix moeSpreadTable(int64_t k);

/// Rows of the `xm` tensor of a dispatch-only graph: B*k routed rows plus, for a static tile,
/// up to tile_b - 1 padding rows per expert.
int64_t moeDispatchRows(const MoeParams& p);

/// Graph YAML text (docs/graph_format.md) of
///   y[t] = sum over the k experts e of token t (ascending e) of rw[t, j_e] * SwiGLU_e(x[t])
/// with SwiGLU_e(x) = (silu(x Wg_e^T) * (x Wu_e^T)) Wd_e. Tensors: x [B, D], wg and wu
/// [E*F, D] (expert e's rows e*F .. e*F+F-1, stored [out, in]), wd [E*F, D] (expert e's
/// F x D block), rw [B*k, 16] (router weights, ascending expert order per token, one 64-byte
/// row per (token, slot) with the weight in word 0: what an address generator loads), y [B, D].
/// The schedule: SelectGen -> Partition of the x rows per expert -> per expert Reshape(tb,
/// pad) + retile (static) or Promote + retile (dynamic: one tile of T_e rows) -> EagerMerge
/// -> RepeatStatic over the F tiles, AddrGen -> RandomOffChipLoad of the expert's weight
/// tiles -> SwiGLU with Accum over the F tiles -> Partition back per expert -> FlatMap to
/// rows (dropping padding rows) -> Reassemble in token order -> scale by rw -> Accum over k.
/// SelectGen also names `routing` [B, 16], the decisions as the fabric reads them (one
/// 64-byte row per token: its k experts ascending in words 0..k-1, their router weights in
/// words 8..8+k-1). With dispatchOnly the graph ends at EagerMerge and stores the merged
/// tiles row after row into `xm` [moeDispatchRows, D]. With residual, y = x + MoE(x): the
/// x rows are Broadcast to the Partition and to a final Map(add). The router takes all B rows
/// before it emits anything, so that Broadcast needs FIFO room for B*D words on the add's
/// side: on a fabric with shallow link FIFOs it deadlocks (the deadlock example of issue 3).
/// With block b (0 < b < batch), the batch is routed in B / b blocks of b tokens: block i is a
/// copy of the layer's ops (names suffixed _b<i>) whose SelectGen skips the trace's first
/// i*b tokens and whose x, rw and y walks start at the block's rows (`skip`, `origin`);
/// the tensors are the whole batch's, each expert's weights are read once per block.
/// Deterministic text. Throws DiagError G-120 on a size < 1, k > E or > 8, tile_f not
/// dividing F, residual with dispatchOnly, or a block that does not divide the batch (or is
/// used with dispatchOnly, residual or regions).
std::string buildMoeGraph(const MoeParams& p);

/// With router: no SelectGen, trace or routing tensor; wr [E, D] (input, the gate's weights
/// stored [out, in]), spread [k*16, 16] (moeSpreadTable) and rw a state tensor [B, k*16]
/// that the layer writes before it reads it. E <= 16 (one beat of gate logits).
/// Input tensors for the graph above: x uniform in [-1, 1), weights uniform scaled by
/// 1/sqrt(fan-in), rw a softmax over k random logits per token (positive, summing to 1;
/// word 0 of its rows),
/// all from a std::mt19937 seeded with `seed`. `experts[t]` = token t's k experts (trace
/// order); rw is written in ascending expert order to match Reassemble, and `routing` as
/// described above. With router: wr uniform scaled by 1/sqrt(D), rw zeros (the layer writes
/// it), spread, no routing; `experts` is not read.
std::map<std::string, Matrix> moeInputs(const MoeParams& p, const std::vector<std::vector<int>>& experts, uint32_t seed);

/// The routing tensors of moeInputs alone, drawn from `rng` (moeInputs draws them after x
/// and the weights): with router rw zeros [B, k*16] and spread; without, rw [B*k, 16] and
/// routing [B, 16] from `experts` as above. No check of `p` (moeInputs checks it).
std::map<std::string, Matrix> moeRoutingInputs(const MoeParams& p, const std::vector<std::vector<int>>& experts,
                                               std::mt19937& rng);

}  // namespace stepgen
