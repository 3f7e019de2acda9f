#pragma once
// buildDecoderLayerGraph: one decode step of a whole transformer decoder layer for a batch of
// requests as one STeP graph (docs/graph_format.md#decoder-layer):
//   h1 = RMSNorm(x);  q, k, v = h1 Wq^T, h1 Wk^T, h1 Wv^T  (per head; QK-norm for Qwen3)
//   q, k = RoPE at each request's position;  k, v appended to the KV caches
//   o = GQA attention over each request's cache;  r1 = x + o Wo^T
//   h2 = RMSNorm(r1);  m = MoE(h2) with the on-fabric top-k router (or a dense SwiGLU)
//   out = r1 + m
// Written by composeGraph from the stages' own builders; the activations between stages are
// state tensors, so each stage's loads follow the previous stage's stores (on a fabric, in a
// later section).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/tokens.hpp"

namespace stepgen {

/// The models with a layer preset.
enum class DecoderModel { Qwen3Moe, Mixtral, LlamaDense };

/// Parses "qwen3-moe" / "mixtral" / "llama-dense". Throws DiagError G-120 otherwise.
DecoderModel parseDecoderModel(const std::string& s);
/// "qwen3-moe" / "mixtral" / "llama-dense".
std::string decoderModelName(DecoderModel m);

/// One layer's dimensions (elements).
struct DecoderDims {
  int64_t hidden, heads, kvHeads, headDim;  ///< D, Hq, Hkv, Dh
  int64_t experts, topK, ffn;               ///< E, k, F (E = 0: a dense SwiGLU FFN of width F)
  int64_t layers;                           ///< decoder layers of the whole model
  float eps;                                ///< RMSNorm epsilon
  double theta;                             ///< RoPE base
  bool qkNorm;                              ///< RMSNorm per head on q and k (Qwen3)
};

/// The published dimensions (trueDims: Qwen3-30B-A3B, Mixtral-8x7B, Llama-3-8B config.json)
/// or the scaled ones (RTL-sized: D 64, 4 q heads, 2 KV heads, Dh 32, the least whose RoPE half
/// rows are whole 64-byte DRAM pieces; the MoE / FFN scaled
/// down keeping each model's shape: QK-norm, router, dense or sparse).
DecoderDims decoderDims(DecoderModel m, bool trueDims);

/// Which stages a graph holds: the whole layer, or its attention half (x -> r1: RMSNorm
/// through the output projection and residual) or its FFN half (r1 -> out: RMSNorm, the MoE
/// or dense FFN and the residual), for a per-stage cost.
enum class LayerPart { Layer, Attention, Ffn };

/// One layer: model, dimensions and the batch.
struct DecoderLayerParams {
  LayerPart part = LayerPart::Layer;
  DecoderModel model = DecoderModel::Qwen3Moe;
  bool trueDims = false;
  std::vector<int64_t> kvLengths = {8};  ///< per request: cached tokens before the step (>= 0)
  int64_t kvTile = 0;  ///< T, KV rows per attention tile (0: min(Dh, 32))
  int64_t kTile = 0;   ///< tk, columns of a projection's K tile (0: min(D, 256))
  int64_t tileF = 0;   ///< the FFN / expert F tile (0: min(F, 32) scaled, min(F, 64) true dims)
  /// MoE: route by SelectGen replaying `routing.csv` beside the graph (a routing trace) instead
  /// of the on-fabric router (the gate's matmul and top-k are then not run): at true dims,
  /// because the timing-only model computes no logits; at scaled dims, to run the MoE layers
  /// in RTL while the router's weights have no hardware.
  bool traceRouting = false;
};

/// The model's real routing trace shipped in examples/moe/data (under stepgenRoot()): Qwen3 and
/// Mixtral, batch 64. Throws DiagError G-120 for the dense model.
std::string defaultRoutingTrace(DecoderModel m);

/// The layer's dimensions (decoderDims of its model and dims).
DecoderDims layerDims(const DecoderLayerParams& p);

/// Graph YAML text. Layer tensors: x [B, D] (input), out [B, D] (output); weights (inputs,
/// stored [out, in]): w_n1, w_n2 [1, D], wq [Hq*Dh, D], wk, wv [Hkv*Dh, D], wo [D, Hq*Dh], with
/// QK-norm w_qn, w_kn [1, Dh]; MoE: wr [E, D], wg, wu, wd [E*F, D] (builders/moe.hpp);
/// dense: wg, wu [D, F], wd [F, D] (builders/swiglu.hpp); the caches kc<h>, vc<h> [NT*T, Dh]
/// (state, per KV head h: the GQA layout of builders/gqa_decode.hpp, appended to); the
/// activations between stages (state); the constant tables (inputs: decoderLayerInputs). The
/// attention half ends with r1 [B, D] as its output, the FFN half starts from it as an input.
/// Throws DiagError G-120 on an empty batch, a negative KV length, tiles that do not divide
/// their dimensions, and as the stage builders.
std::string buildDecoderLayerGraph(const DecoderLayerParams& p);

/// Every input and state tensor of that graph, seeded (std::mt19937(seed)): x uniform in
/// [-1, 1); weights uniform in [-1, 1) / sqrt(fan-in); RMSNorm weights uniform in [0.5, 1.5);
/// the caches' first L_b rows of each request uniform in [-1, 1) (the rest 0); activations
/// and the router's weights 0; plus the constant tables (RMSNorm 1/D and eps, RoPE cos / sin
/// with 1/sqrt(Dh) folded into q's, the attention's meta rows, mask and append positions).
/// With traceRouting, the MoE's rw and routing rows from `experts` (token b's experts, trace
/// order) with weights seeded as moeInputs does. With fixedOnly, the constant tables only
/// (the timing-only model at true dims). Throws as buildDecoderLayerGraph, and G-120 for
/// traceRouting without one row of experts per request.
std::map<std::string, Matrix> decoderLayerInputs(const DecoderLayerParams& p, uint32_t seed, bool fixedOnly = false,
                                                const std::vector<std::vector<int>>& experts = {});

}  // namespace stepgen
