// Lowering::lowerMoe (lowering.hpp): a matched MoE block (onnx_moe.hpp) becomes a stage with
// builders/moe's router layer; the imported graph stores h for it and loads its y.
#include <cmath>

#include "builders/moe.hpp"
#include "common/fp.hpp"
#include "ir/graph.hpp"
#include "onnx/lowering.hpp"
#include "support/routing_trace.hpp"

namespace stepgen::onnx_lowering {

namespace {

// The largest divisor of f up to 32 (an expert's double-buffered [tf, D] weight tiles and
// [T, tf] activations fit a compute unit of the shipped fabrics at the small dims).
int64_t ffnTile(int64_t f) {
  for (int64_t t = std::min<int64_t>(32, f); t > 1; --t)
    if (f % t == 0) return t;
  return 1;
}

}  // namespace

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
  auto state = [&](const std::string& base, int64_t rows, int64_t cols) {  // zeros before the graph runs
    OnnxLeafTensor z;
    z.fill = 0.0f, z.rows = rows, z.cols = cols;
    z.tensor = addTensor(base, rows, cols, "state");
    imp_.leaves.push_back(z);
    return z.tensor;
  };
  const std::string xs = state(pre + "_x", t, d), ys = state(pre + "_y", t, d);
  tileLoad(x, 1, false);
  ops_.push_back(storeLine(x, xs));
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
  auto table = [&](const std::string& tensor, const Matrix& data) {  // a leaf of the import's own data
    OnnxLeafTensor l = leaf(tensor, data.rows, data.cols);
    OnnxTensor& c = imp_.constants[l.tensor];
    c.shape = {data.rows, data.cols};
    for (uint32_t w : data.data) c.f.push_back(bitsToFloat(w));
    l.source = l.tensor;
    imp_.leaves.push_back(l);
  };
  // The stage's routing tensors as builders/moe writes them: rw (zeros the router fills, or
  // the replayed routing's weights) and spread or the routing rows.
  std::mt19937 rng(1);
  const std::map<std::string, Matrix> in = moeRoutingInputs(p, experts, rng);
  table("rw", in.at("rw"));
  table(p.router ? "spread" : "routing", in.at(p.router ? "spread" : "routing"));
  if (p.router) {
    OnnxLeafTensor wr = leaf("wr", e, d);  // gate logits x Wr^T (matmul_t): Wr^T's rows
    wr.source = m.router, wr.steps = {transpose};
    imp_.leaves.push_back(wr);
  }
  stages_.push_back(GraphStage{pre, text, {{"x", xs}, {"y", ys}}});
  const Opnd y = loadLeaf(ys, t, d);
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

}  // namespace stepgen::onnx_lowering
