#pragma once
// findOnnxMoes: the Mixture-of-Experts pattern of an ONNX graph (docs/onnx.md#moe), which the
// lowering turns into stepgen's MoE layer with dynamic routing (builders/moe.hpp, --router)
// instead of computing every expert for every token. The pattern is what a plain PyTorch
// MoE block with static shapes exports:
//   probs = Softmax(h @ Wr); vals, idx = TopK(probs, k); w = vals / ReduceSum(vals)   (Qwen3)
//   or  vals, idx = TopK(h @ Wr, k); w = Softmax(vals)                                  (Mixtral)
//   gates = ScatterElements(zeros [T, E], idx, w, axis -1)
//   y = sum over e of Slice(gates, column e) * ((silu(h @ Wg_e) * (h @ Wu_e)) @ Wd_e)
// with silu written as Mul(x, Sigmoid(x)), the weights initializers or graph inputs, and y
// summed by Adds over all E experts. Both
// weightings equal the softmax over the chosen logits (model/router.hpp topkWeights).
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "onnx/onnx_read.hpp"

namespace stepgen {

/// One expert's SwiGLU weights: ONNX initializer (or graph input) names, [D, F], [D, F], [F, D].
struct OnnxMoeExpert {
  std::string gate, up, down;
};

/// One matched MoE block.
struct OnnxMoe {
  std::string input;   ///< h, [T, D] (leading dims merged into T)
  std::string output;  ///< y, h's shape
  std::string router;  ///< Wr, [D, E]: an initializer, or a graph input (a model without its weights)
  int64_t tokens = 0, hidden = 0, ffn = 0, k = 0;
  std::vector<OnnxMoeExpert> experts;  ///< by expert index
  int root = -1;       ///< index of the node that produces `output`
  std::set<int> nodes; ///< the pattern's nodes (their Constant inputs excepted)
};

/// A SwiGLU MLP outside any MoE block: y = (silu(h @ Wg) * (h @ Wu)) @ Wd, silu written as
/// Mul(x, Sigmoid(x)), the weights initializers or graph inputs, no value inside read outside.
struct OnnxSwiglu {
  std::string input, output;  ///< h [T, D] (leading dims merged into T) and y, h's shape
  OnnxMoeExpert weights;      ///< Wg [D, F], Wu [D, F], Wd [F, D]
  int64_t tokens = 0, hidden = 0, ffn = 0;
  int root = -1;              ///< index of the node that produces `output` (the down MatMul)
  std::set<int> nodes;        ///< the pattern's six nodes
};

/// Softmax attention of one head over a KV cache held in weights (graph inputs or
/// initializers): y = Softmax(q @ Transpose(K)) @ V over the last axis, q [G, D] (already
/// scaled), K and V [L, D], no value inside read outside.
struct OnnxAttention {
  std::string input, output;  ///< q [G, D] and y [G, D]
  std::string keys, values;   ///< K, V [L, D]
  int64_t queries = 0, kv = 0, headDim = 0;
  int root = -1;              ///< index of the node that produces `output` (the MatMul by V)
  std::set<int> nodes;        ///< the pattern's four nodes
};

/// The attentions among the live nodes not in `taken`, one per MatMul that ends the pattern.
/// Raises nothing.
std::vector<OnnxAttention> findOnnxAttentions(const OnnxGraph& g, const std::set<int>& live, const std::set<int>& taken);

/// The SwiGLU MLPs among the live nodes that are not in `taken` (the MoE blocks' nodes), one
/// per MatMul that ends the pattern. Raises nothing.
std::vector<OnnxSwiglu> findOnnxSwiglus(const OnnxGraph& g, const std::set<int>& live, const std::set<int>& taken);

/// The MoE blocks among the live nodes, one per TopK that starts the pattern. A TopK that
/// does not start one gets an entry in `*misses` (node index -> the first part of the pattern
/// that differs, for the O-201 message). Raises nothing.
std::vector<OnnxMoe> findOnnxMoes(const OnnxGraph& g, const std::set<int>& live, std::map<int, std::string>* misses);

}  // namespace stepgen
