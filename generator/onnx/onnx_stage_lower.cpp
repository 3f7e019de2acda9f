// Lowering::lowerMoe, lowerSwiglu, lowerAttention and linearStage (lowering.hpp): a matched
// MoE block, SwiGLU MLP, attention (onnx_moe.hpp) or an oversized product by a weight becomes
// a stage with a builder's layer (builders/moe, swiglu, attention, linear);
// the imported graph stores h for it and loads its output.
#include <cmath>
#include <tuple>

#include "builders/attention.hpp"
#include "builders/linear.hpp"
#include "builders/moe.hpp"
#include "builders/swiglu.hpp"
#include "common/fp.hpp"
#include "ir/graph.hpp"
#include "onnx/lowering.hpp"
#include "support/routing_trace.hpp"

namespace stepgen::onnx_lowering {

void Lowering::lowerMoe(const OnnxMoe& m) {
  const std::string pre = fmt::format("moe{}", stages_.size());
  const int64_t t = m.tokens, d = m.hidden, f = m.ffn, e = int64_t(m.experts.size());
  MoeParams p;
  p.batch = t, p.hidden = d, p.ffn = f, p.experts = e, p.topK = m.k, p.tileB = 0, p.tileF = ffnTile(f);
  p.router = routingTrace_.empty(), p.trace = "routing.csv";
  std::vector<std::vector<int>> experts;  // the replayed routing's first t tokens
  if (!p.router) {
    const RoutingTrace tr = readRoutingTrace(routingTrace_, int(e));
    if (int64_t(tr.experts.size()) < t || tr.topK != m.k)
      fail("O-202", fmt::format("the routing trace {} has {} tokens of top {}; the Mixture-of-Experts block routes {} tokens "
                                "to its top {}", routingTrace_, tr.experts.size(), tr.topK, t, m.k));
    experts.assign(tr.experts.begin(), tr.experts.begin() + t);
  }
  std::string text;
  try {
    text = buildMoeGraph(p);
  } catch (const DiagError& x) {
    fail("O-202", fmt::format("the Mixture-of-Experts block ({} tokens, {} experts, top {}) has no STeP layer: {}", t, e, m.k, x.what()));
  }
  const Opnd x = matrixOperand(m.input, {t, d});
  // The stage's own tensors, named as composeGraph names them (<stage>_<tensor>).
  auto leaf = [&](const std::string& tensor, int64_t rows, int64_t cols) {
    OnnxLeafTensor l;
    l.tensor = pre + "_" + tensor, l.rows = rows, l.cols = cols;
    return l;
  };
  const OnnxLayoutStep transpose{OnnxLayoutStep::Kind::Transpose, {1, 0}};
  for (const char* w : {"wg", "wu", "wd"}) {  // [E*F, D]: expert e's rows from e*F
    OnnxLeafTensor s = leaf(w, e * f, d);
    for (const OnnxMoeExpert& ex : m.experts) {
      OnnxLeafTensor part = leaf(w, f, d);
      part.source = w == std::string("wg") ? ex.gate : w == std::string("wu") ? ex.up : ex.down;
      if (w != std::string("wd")) part.steps = {transpose};  // gate and up are matmul_t operands: W^T
      s.stack.push_back(part);
    }
    imp_.leaves.push_back(s);
  }
  // The stage's routing tensors as builders/moe writes them: rw (zeros the router fills, or
  // the replayed routing's weights) and spread or the routing rows.
  std::mt19937 rng(1);
  const std::map<std::string, Matrix> in = moeRoutingInputs(p, experts, rng);
  constantLeaf(pre + "_rw", in.at("rw"));
  const std::string routing = p.router ? "spread" : "routing";
  constantLeaf(pre + "_" + routing, in.at(routing));
  if (p.router) {
    OnnxLeafTensor wr = leaf("wr", e, d);  // gate logits x Wr^T (matmul_t): Wr^T's rows
    wr.source = m.router, wr.steps = {transpose};
    imp_.leaves.push_back(wr);
  }
  const Opnd y = stageAround(pre, text, "x", x, t, d, "y");
  // The bound of y from h's (errorFor, step by step along the stage's Map operators).
  for (int bf = 0; bf < 2; ++bf) {
    const double ex = errorIn(x.id, bf), u = std::ldexp(1.0, -24);
    const double logit = errorFor("matmul_t", ex, 0, d, bf);
    const double sum = errorFor("exp", logit + u, 0, 0, bf) + double(kRoutingRowWords) * u;
    const double weight = errorFor("matmul_t", errorFor("exp", logit + u, 0, 0, bf) + errorFor("recip", sum, 0, 0, bf) + u, 0,
                                   1, bf);  // spread by a 0/1 product: exact in fp32, a bf16 operand otherwise
    const double g = errorFor("matmul_t", ex, 0, d, bf);
    const double h = errorFor("mul", errorFor("silu", g, 0, 0, bf), g, 0, bf);
    const double o = errorFor("matmul", h, 0, f, bf);
    err_[bf][y.id] = errorFor("mul", o, weight, 0, bf) + double(m.k) * u;
  }
  define(m.output, y, shapeOf(m.output));
}

void Lowering::constantLeaf(const std::string& tensor, const Matrix& data) {
  OnnxLeafTensor l;
  l.tensor = l.source = tensor, l.rows = data.rows, l.cols = data.cols;
  OnnxTensor& c = imp_.constants[tensor];
  c.shape = {data.rows, data.cols};
  for (uint32_t w : data.data) c.f.push_back(bitsToFloat(w));
  imp_.leaves.push_back(l);
}

Opnd Lowering::stageAround(const std::string& prefix, const std::string& text, const std::string& inTensor, const Opnd& x,
                           int64_t rows, int64_t cols, const std::string& outTensor, int64_t outCols) {
  if (outCols == 0) outCols = cols;
  auto state = [&](const std::string& base, int64_t c) {  // zeros before the graph runs
    OnnxLeafTensor z;
    z.fill = 0.0f, z.rows = rows, z.cols = c;
    z.tensor = addTensor(base, rows, c, "state");
    imp_.leaves.push_back(z);
    return z.tensor;
  };
  const std::string xs = state(prefix + "_x", cols), ys = state(prefix + "_y", outCols);
  tileLoad(x, 1, false);
  ops_.push_back(storeLine(x, xs));
  stages_.push_back(GraphStage{prefix, text, {{inTensor, xs}, {outTensor, ys}}});
  return loadLeaf(ys, rows, outCols);
}

std::optional<Opnd> Lowering::linearStage(const Opnd& x, const Val& w, bool stored, int64_t n) {
  const int64_t m = x.rows, k = x.cols, limit = sched_.linearStageWords;
  if (limit <= 0 || ComputeUnitParams::matmulBufferWords(1, k, n) <= limit) return std::nullopt;
  // Multiples of 16 columns: x's and W's tile rows are then whole 64-byte DRAM pieces.
  int64_t tk = 0, c = 0;
  for (int64_t a = 16; a <= k; a += 16)
    for (int64_t b = 16; b <= n; b += 16)
      if (k % a == 0 && n % b == 0 && a * b > tk * c && ComputeUnitParams::matmulBufferWords(m, a, b) <= limit) tk = a, c = b;
  if (tk == 0)
    fail("O-202", fmt::format("the product [{}, {}] x [{}, {}] does not fit a compute unit ({} words) whole, and no tiles "
                              "of K and N in multiples of 16 columns fit it either",
                              m, k, k, n, limit));
  const std::string pre = fmt::format("lin{}", stages_.size());
  LinearParams p;
  p.rows = m, p.kTiles = k / tk, p.kTile = tk, p.outTiles = n / c, p.outTile = c, p.outColumns = true;
  const std::string text = buildLinearGraph(p);
  matmulWords_ = std::max(matmulWords_, ComputeUnitParams::matmulBufferWords(m, tk, c));
  OnnxLeafTensor l;  // the layer's w: [n, k], as PyTorch stores a Linear's weight
  l.tensor = pre + "_w", l.source = w.source, l.steps = w.steps, l.rows = n, l.cols = k;
  if (!stored) l.steps.push_back({OnnxLayoutStep::Kind::Transpose, {1, 0}});
  imp_.leaves.push_back(l);
  const Opnd y = stageAround(pre, text, "x0", x, m, k, "out", n);
  // k terms, in K tiles of TK summed by the Accum: k roundings as in one product.
  for (int bf = 0; bf < 2; ++bf) err_[bf][y.id] = errorFor("matmul_t", errorIn(x.id, bf), 0, k, bf == 1);
  return y;
}

void Lowering::lowerSwiglu(const OnnxSwiglu& sw) {
  const std::string pre = fmt::format("mlp{}", stages_.size());
  const int64_t t = sw.tokens, d = sw.hidden, f = sw.ffn;
  SwigluParams p;
  p.batch = t, p.hidden = d, p.ffn = f, p.tileB = t / tilesFor(t), p.tileF = ffnTile(f);
  std::string text;
  try {
    text = buildSwigluGraph(p);
  } catch (const DiagError& x) {
    fail("O-202", fmt::format("the SwiGLU MLP ({} tokens, {} hidden, {} wide) has no STeP layer: {}", t, d, f, x.what()));
  }
  // Its products, [tb, D] x [D, tf] and [tb, tf] x [tf, D], count toward the schedule's fit.
  matmulWords_ = std::max({matmulWords_, ComputeUnitParams::matmulBufferWords(p.tileB, d, p.tileF),
                           ComputeUnitParams::matmulBufferWords(p.tileB, p.tileF, d)});
  const Opnd x = matrixOperand(sw.input, {t, d});
  for (const auto& [w, source, rows, cols] : {std::tuple{"wg", sw.weights.gate, d, f}, std::tuple{"wu", sw.weights.up, d, f},
                                             std::tuple{"wd", sw.weights.down, f, d}}) {
    OnnxLeafTensor l;
    l.tensor = pre + "_" + w, l.source = source, l.rows = rows, l.cols = cols;
    imp_.leaves.push_back(l);
  }
  const Opnd y = stageAround(pre, text, "x", x, t, d, "out");
  // The static bound of y from h's, along the layer's Map operators (the down projection's
  // F terms split over F / tf tiles and their Accum: F roundings in all).
  for (int bf = 0; bf < 2; ++bf) {
    const double ex = errorIn(x.id, bf);
    const double g = errorFor("matmul", ex, 0, d, bf);
    err_[bf][y.id] = errorFor("matmul", errorFor("mul", errorFor("silu", g, 0, 0, bf), g, 0, bf), 0, f, bf);
  }
  define(sw.output, y, shapeOf(sw.output));
}

void Lowering::lowerAttention(const OnnxAttention& a) {
  const std::string pre = fmt::format("attn{}", stages_.size());
  AttentionParams p;
  p.kv = a.kv, p.headDim = a.headDim, p.queries = a.queries, p.kvTile = ffnTile(a.kv), p.singlePass = true;
  std::string text;
  try {
    text = buildSinglePassAttention(p);
  } catch (const DiagError& x) {
    fail("O-202", fmt::format("the attention ({} queries over {} KV rows of {}) has no STeP layer: {}", a.queries, a.kv,
                              a.headDim, x.what()));
  }
  // Its products, q K_j^T ([G, D] x [D, T]) and p_j V_j ([G, T] x [T, D]), count toward the fit.
  matmulWords_ = std::max({matmulWords_, ComputeUnitParams::matmulBufferWords(p.queries, p.headDim, p.kvTile),
                           ComputeUnitParams::matmulBufferWords(p.queries, p.kvTile, p.headDim)});
  const Opnd q = matrixOperand(a.input, {a.queries, a.headDim});
  for (const auto& [t, source] : {std::pair{"k", a.keys}, std::pair{"v", a.values}}) {
    OnnxLeafTensor l;
    l.tensor = pre + "_" + t, l.source = source, l.rows = a.kv, l.cols = a.headDim;
    imp_.leaves.push_back(l);
  }
  if (p.kvTile != p.headDim) constantLeaf(pre + "_ones", attentionOnes(p));  // the rescale's widening table
  const Opnd y = stageAround(pre, text, "q", q, a.queries, a.headDim, "out");
  // The static bound of y from q's, along the single pass's Map operators: scores (D terms),
  // s - m and its exp, the rescale alpha = exp(m' - m) likewise, the L terms of l and of o
  // each carrying p's and alpha's errors, then o / l.
  for (int bf = 0; bf < 2; ++bf) {
    const double s = errorFor("matmul_t", errorIn(q.id, bf), 0, a.headDim, bf);
    const double e = errorFor("exp", errorFor("sub", s, s, 0, bf), 0, 0, bf);
    const double l = errorFor("rowsum", 2 * e, 0, a.kv, bf), o = errorFor("matmul", 2 * e, 0, a.kv, bf);
    err_[bf][y.id] = errorFor("mul", o, errorFor("recip", l, 0, 0, bf), 0, bf);
  }
  define(a.output, y, shapeOf(a.output));
}

}  // namespace stepgen::onnx_lowering
