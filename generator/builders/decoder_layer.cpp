// buildDecoderLayerGraph: the stages are the existing builders' graphs joined by
// composeGraph; this file only chooses their sizes and wires their tensors.
#include "builders/decoder_layer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "builders/compose.hpp"
#include "builders/gqa_decode.hpp"
#include "builders/linear.hpp"
#include "builders/moe.hpp"
#include "builders/rmsnorm.hpp"
#include "builders/rope.hpp"
#include "builders/swiglu.hpp"
#include "common/fp.hpp"
#include "support/diag.hpp"
#include "support/files.hpp"

namespace stepgen {

namespace {

[[noreturn]] void badLayer(const std::string& msg) { throw DiagError("G-120", SourceLoc{}, "decoder-layer: " + msg); }

// The layer's stages, its tensors and the stages' constant inputs (under the layer's names).
struct Layer {
  std::vector<LayerTensor> tensors;
  std::vector<GraphStage> stages;
  std::map<std::string, Matrix> fixed;
};

// out = a + b, row by row: the layer's last residual.
std::string addGraph(int64_t rows, int64_t cols) {
  std::string y;
  y += "stepgraph: add\n";
  y += fmt::format("symbols: {{B: {}, D: {}}}\n", rows, cols);
  y += "tensors:\n  a: {shape: [B, D], role: input}\n  b: {shape: [B, D], role: input}\n  out: {shape: [B, D], role: output}\n";
  y += "ops:\n";
  y += "  - {name: load_a, op: LinearOffChipLoad, tensor: a, tile: [1, D], iter: [B], strides: [[1, 0]], out: as}\n";
  y += "  - {name: load_b, op: LinearOffChipLoad, tensor: b, tile: [1, D], iter: [B], strides: [[1, 0]], out: bs}\n";
  y += "  - {name: zip, op: Zip, in: [as, bs], out: ab}\n";
  y += "  - {name: add, op: Map, fn: add, in: ab, out: o}\n";
  y += "  - {name: store, op: LinearOffChipStore, in: o, tensor: out, iter: [B], strides: [[1, 0]]}\n";
  return y;
}

// out = x with its rows reordered between request-major ([B*G, D], row b*G + g) and
// head-major ([G*B, D], row g*B + b): the projections write heads head-major, the attention
// reads and writes them request-major.
std::string reorderGraph(int64_t rows, int64_t heads, int64_t cols, bool toHeadMajor) {
  const char* rm = "[[1, 0], [G, 0]]";  // iter [G, B] over request-major rows
  const char* hm = "[[B, 0], [1, 0]]";  // ... over head-major rows
  std::string y;
  y += "stepgraph: reorder\n";
  y += fmt::format("symbols: {{B: {}, G: {}, D: {}}}\n", rows, heads, cols);
  y += "tensors:\n  x: {shape: [B*G, D], role: input}\n  out: {shape: [B*G, D], role: output}\n";
  y += "ops:\n";
  y += fmt::format("  - {{name: load, op: LinearOffChipLoad, tensor: x, tile: [1, D], iter: [G, B], strides: {}, out: xs}}\n",
                   toHeadMajor ? rm : hm);
  y += fmt::format("  - {{name: store, op: LinearOffChipStore, in: xs, tensor: out, tile: [1, D], iter: [G, B], strides: {}}}\n",
                   toHeadMajor ? hm : rm);
  return y;
}

// The MoE stage's sizes (dynamic token tiles; the router on the fabric unless the routing is
// replayed from a trace, routing.csv beside the graph).
MoeParams moeParams(const DecoderLayerParams& p, const DecoderDims& d, int64_t tf) {
  MoeParams m;
  m.batch = int64_t(p.kvLengths.size()), m.hidden = d.hidden, m.ffn = d.ffn, m.experts = d.experts, m.topK = d.topK;
  m.tileB = 0, m.tileF = tf, m.trace = "routing.csv";
  m.router = !p.traceRouting;
  return m;
}

// At scaled dims an F tile of 64 makes an expert's double-buffered tiles larger than a compute
// unit of arch/decoder.yaml (M-302): 32 there, 64 (the paper's) at true dims.
int64_t ffnTile(const DecoderLayerParams& p, const DecoderDims& d) {
  return p.tileF ? p.tileF : std::min<int64_t>(d.ffn, p.trueDims ? 64 : 32);
}

GqaParams gqaParams(const DecoderLayerParams& p, const DecoderDims& d) {
  GqaParams g;
  g.kvLengths = p.kvLengths;
  g.headDim = d.headDim;
  g.kvTile = p.kvTile ? p.kvTile : std::min<int64_t>(d.headDim, 32);  // larger tiles at Dh 128 do not map (M-309)
  g.queries = d.heads / d.kvHeads;
  g.regions = 1;
  g.append = true;
  return g;
}

Layer buildLayer(const DecoderLayerParams& p) {
  const DecoderDims d = layerDims(p);
  const int64_t B = int64_t(p.kvLengths.size()), D = d.hidden, Dh = d.headDim, G = d.heads / d.kvHeads;
  if (B < 1) badLayer("the batch has no request");
  for (int64_t l : p.kvLengths)
    if (l < 0) badLayer(fmt::format("a KV length is negative ({})", l));
  const int64_t tk = p.kTile ? p.kTile : std::min<int64_t>(D, 256);
  const int64_t tf = ffnTile(p, d);
  if (tk < 1 || D % tk) badLayer(fmt::format("k_tile {} does not divide the hidden size {}", tk, D));
  if (tf < 1 || d.ffn % tf) badLayer(fmt::format("tile_f {} does not divide the FFN width {}", tf, d.ffn));
  const GqaParams gq = gqaParams(p, d);
  const int64_t cacheRows = gqaTotalTiles(gq) * gq.kvTile;

  Layer L;
  const bool attn = p.part != LayerPart::Ffn, ffn = p.part != LayerPart::Attention;
  auto tensor = [&](const std::string& n, int64_t r, int64_t c, const char* role) { L.tensors.push_back({n, {r, c}, role}); };
  const std::map<std::string, Matrix> gqaFixed = gqaFixedInputs(gq);
  if (attn) {
    tensor("x", B, D, "input");
    tensor("w_n1", 1, D, "input");
    tensor("wq", d.heads * Dh, D, "input");
    tensor("wk", d.kvHeads * Dh, D, "input");
    tensor("wv", d.kvHeads * Dh, D, "input");
    if (d.qkNorm) tensor("w_qn", 1, Dh, "input"), tensor("w_kn", 1, Dh, "input");
    tensor("wo", D, d.heads * Dh, "input");
  }
  if (ffn) {
    tensor("w_n2", 1, D, "input");
    if (d.experts) {
      if (!p.traceRouting) tensor("wr", d.experts, D, "input");
      for (const char* w : {"wg", "wu", "wd"}) tensor(w, d.experts * d.ffn, D, "input");
    } else {
      tensor("wg", D, d.ffn, "input"), tensor("wu", D, d.ffn, "input"), tensor("wd", d.ffn, D, "input");
    }
  }
  if (attn) {
    for (const auto& [n, m] : gqaFixed) tensor(n == "meta_r0" ? "meta" : n, m.rows, m.cols, "input");
    tensor("cos_q", B * G, Dh / 2, "input"), tensor("sin_q", B * G, Dh / 2, "input");
    tensor("cos_k", B, Dh / 2, "input"), tensor("sin_k", B, Dh / 2, "input");
    tensor("h1", B, D, "state");
    for (int64_t h = 0; h < d.kvHeads; ++h) {
      tensor(fmt::format("kc{}", h), cacheRows, Dh, "state"), tensor(fmt::format("vc{}", h), cacheRows, Dh, "state");
      tensor(fmt::format("q{}h", h), G * B, Dh, "state");
      tensor(fmt::format("q{}p", h), B * G, Dh, "state"), tensor(fmt::format("k{}p", h), B, Dh, "state");
      tensor(fmt::format("v{}p", h), B, Dh, "state");
      if (d.qkNorm) tensor(fmt::format("q{}n", h), B * G, Dh, "state"), tensor(fmt::format("k{}n", h), B, Dh, "state");
      tensor(fmt::format("q{}r", h), B * G, Dh, "state"), tensor(fmt::format("k{}r", h), B, Dh, "state");
      tensor(fmt::format("o{}", h), B * G, Dh, "state"), tensor(fmt::format("ot{}", h), G * B, Dh, "state");
    }
  }
  tensor("r1", B, D, p.part == LayerPart::Layer ? "state" : attn ? "output" : "input");
  if (ffn) {
    for (const char* n : {"h2", "m"}) tensor(n, B, D, "state");
    tensor("out", B, D, "output");
  }

  auto stage = [&](const std::string& prefix, const std::string& text, std::map<std::string, std::string> shared,
                   const std::map<std::string, Matrix>& fixed = {}) {
    L.stages.push_back({prefix, text, std::move(shared)});
    for (auto& [n, m] : stageInputs(L.stages.back(), fixed, true)) L.fixed[n] = m;
  };
  auto rmsnorm = [&](const std::string& prefix, int64_t rows, int64_t dim, const std::string& x, const std::string& w,
                     const std::string& out) {
    RmsNormParams n{rows, dim, d.eps};
    stage(prefix, buildRmsNormGraph(n), {{"x", x}, {"w", w}, {"out", out}}, rmsNormFixedInputs(n));
  };
  auto linear = [&](const std::string& prefix, int64_t outTiles, int64_t rowTile, const std::string& w, const std::string& out) {
    LinearParams l;
    l.rows = B, l.kTiles = D / tk, l.kTile = tk, l.outTiles = outTiles, l.outTile = Dh, l.wRowTile = rowTile;
    stage(prefix, buildLinearGraph(l), {{"x0", "h1"}, {"w", w}, {"out", out}});
  };

  if (attn) {
    rmsnorm("n1", B, D, "x", "w_n1", "h1");
    const std::vector<int64_t> pos = p.kvLengths;  // the step's token sits at position L_b
    for (int64_t h = 0; h < d.kvHeads; ++h) {
      const std::string q = fmt::format("q{}", h), k = fmt::format("k{}", h), v = fmt::format("v{}", h);
      linear(q, G, h * G, "wq", q + "h");
      stage(q + "m", reorderGraph(B, G, Dh, false), {{"x", q + "h"}, {"out", q + "p"}});
      linear(k, 1, h, "wk", k + "p");
      linear(v, 1, h, "wv", v + "p");
      if (d.qkNorm) {
        rmsnorm(fmt::format("qn{}", h), B * G, Dh, q + "p", "w_qn", q + "n");
        rmsnorm(fmt::format("kn{}", h), B, Dh, k + "p", "w_kn", k + "n");
      }
      const std::string qIn = q + (d.qkNorm ? "n" : "p"), kIn = k + (d.qkNorm ? "n" : "p");
      RopeParams rq{pos, G, Dh, d.theta, 1.0 / std::sqrt(double(Dh))}, rk{pos, 1, Dh, d.theta, 1.0};
      stage(fmt::format("qr{}", h), buildRopeGraph(rq), {{"x", qIn}, {"out", q + "r"}, {"cos", "cos_q"}, {"sin", "sin_q"}},
            ropeTables(rq));
      stage(fmt::format("kr{}", h), buildRopeGraph(rk), {{"x", kIn}, {"out", k + "r"}, {"cos", "cos_k"}, {"sin", "sin_k"}},
            ropeTables(rk));
      std::map<std::string, std::string> shared = {{"q", q + "r"},          {"k", fmt::format("kc{}", h)},
                                                   {"v", fmt::format("vc{}", h)}, {"k_new", k + "r"},
                                                   {"v_new", v + "p"},        {"out_r0", fmt::format("o{}", h)}};
      for (const auto& [n, m] : gqaFixed) shared[n] = n == "meta_r0" ? "meta" : n;
      std::map<std::string, Matrix> fixed = gqaFixed;
      stage(fmt::format("a{}", h), buildGqaDecodeGraph(gq), shared, fixed);
      stage(fmt::format("t{}", h), reorderGraph(B, G, Dh, true), {{"x", fmt::format("o{}", h)}, {"out", fmt::format("ot{}", h)}});
    }
    LinearParams o;
    o.rows = B, o.inputs = d.kvHeads, o.kTiles = G, o.kTile = Dh, o.kAlongRows = true, o.outTiles = 1, o.outTile = D;
    o.residual = true;
    std::map<std::string, std::string> oShared = {{"w", "wo"}, {"res", "x"}, {"out", "r1"}};
    for (int64_t h = 0; h < d.kvHeads; ++h) oShared[fmt::format("x{}", h)] = fmt::format("ot{}", h);
    stage("o", buildLinearGraph(o), oShared);
  }
  if (ffn) {
    rmsnorm("n2", B, D, "r1", "w_n2", "h2");
    if (d.experts) {
      const MoeParams m = moeParams(p, d, tf);
      std::map<std::string, std::string> shared = {{"x", "h2"}, {"wg", "wg"}, {"wu", "wu"}, {"wd", "wd"}, {"y", "m"}};
      if (m.router) shared["wr"] = "wr";
      stage("moe", buildMoeGraph(m), shared);
    } else {
      SwigluParams s;
      s.batch = B, s.hidden = D, s.ffn = d.ffn, s.tileB = B, s.tileF = tf;  // every weight tile read once per step
      stage("ffn", buildSwigluGraph(s), {{"x", "h2"}, {"wg", "wg"}, {"wu", "wu"}, {"wd", "wd"}, {"out", "m"}});
    }
    stage("res", addGraph(B, D), {{"a", "r1"}, {"b", "m"}, {"out", "out"}});
  }
  return L;
}

}  // namespace

DecoderModel parseDecoderModel(const std::string& s) {
  if (s == "qwen3-moe") return DecoderModel::Qwen3Moe;
  if (s == "mixtral") return DecoderModel::Mixtral;
  if (s == "llama-dense") return DecoderModel::LlamaDense;
  badLayer(fmt::format("unknown model '{}' (qwen3-moe, mixtral, llama-dense)", s));
}

std::string decoderModelName(DecoderModel m) {
  return m == DecoderModel::Qwen3Moe ? "qwen3-moe" : m == DecoderModel::Mixtral ? "mixtral" : "llama-dense";
}

DecoderDims decoderDims(DecoderModel m, bool trueDims) {
  // config.json of Qwen/Qwen3-30B-A3B, mistralai/Mixtral-8x7B-v0.1, meta-llama/Meta-Llama-3-8B.
  switch (m) {
    case DecoderModel::Qwen3Moe:
      return trueDims ? DecoderDims{2048, 32, 4, 128, 128, 8, 768, 48, 1e-6f, 1e6, true}
                      : DecoderDims{64, 4, 2, 32, 16, 4, 32, 48, 1e-6f, 1e6, true};
    case DecoderModel::Mixtral:
      return trueDims ? DecoderDims{4096, 32, 8, 128, 8, 2, 14336, 32, 1e-5f, 1e6, false}
                      : DecoderDims{64, 4, 2, 32, 8, 2, 64, 32, 1e-5f, 1e6, false};
    case DecoderModel::LlamaDense:
      return trueDims ? DecoderDims{4096, 32, 8, 128, 0, 0, 14336, 32, 1e-5f, 5e5, false}
                      : DecoderDims{64, 4, 2, 32, 0, 0, 128, 32, 1e-5f, 5e5, false};
  }
  badLayer("unknown model");
}

std::string defaultRoutingTrace(DecoderModel m) {
  if (m == DecoderModel::LlamaDense) badLayer("llama-dense has no router");
  return stepgenRoot() + (m == DecoderModel::Qwen3Moe ? "/examples/moe/data/routing_qwen3_30b_a3b_b64.csv"
                                                      : "/examples/moe/data/routing_mixtral8x7b_b64.csv");
}

DecoderDims layerDims(const DecoderLayerParams& p) { return decoderDims(p.model, p.trueDims); }

std::string buildDecoderLayerGraph(const DecoderLayerParams& p) {
  const Layer L = buildLayer(p);
  const DecoderDims d = layerDims(p);
  std::string lens = fmt::format("{}", fmt::join(p.kvLengths, ", "));
  return composeGraph(
      "decoder_layer",
      {fmt::format("{} of one decode step of a {} decoder layer ({} dims: D {}, {} q heads, {} KV heads, Dh {}, {}) for {} requests.",
                   p.part == LayerPart::Layer ? "The whole" : p.part == LayerPart::Attention ? "The attention half" : "The FFN half",
                   decoderModelName(p.model), p.trueDims ? "true" : "scaled", d.hidden, d.heads, d.kvHeads, d.headDim,
                   d.experts ? fmt::format("{} experts top-{}, F {}", d.experts, d.topK, d.ffn) : fmt::format("dense FFN F {}", d.ffn),
                   p.kvLengths.size()),
       "Written by stepgen (buildDecoderLayerGraph, docs/graph_format.md#decoder-layer): RMSNorm, q/k/v projections,",
       std::string(d.qkNorm ? "QK-norm, " : "") + "RoPE, KV append, GQA attention, output projection + residual, RMSNorm,",
       std::string(d.experts ? "router + top-k MoE" : "SwiGLU FFN") + ", residual. KV lengths before the step: " + lens},
      L.tensors, L.stages);
}

std::map<std::string, Matrix> decoderLayerInputs(const DecoderLayerParams& p, uint32_t seed, bool fixedOnly,
                                                const std::vector<std::vector<int>>& experts) {
  Layer L = buildLayer(p);
  if (fixedOnly) return L.fixed;
  const DecoderDims d = layerDims(p);
  if (p.traceRouting && experts.size() != p.kvLengths.size())
    badLayer(fmt::format("trace routing needs one row of experts per request: {} for {} requests", experts.size(), p.kvLengths.size()));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::map<std::string, Matrix> in;
  const GqaParams gq = gqaParams(p, d);
  std::vector<int64_t> start;  // first cache row of each request
  for (size_t b = 0, t = 0; b < p.kvLengths.size(); t += size_t(gqaTiles(gq, b)), ++b) start.push_back(int64_t(t) * gq.kvTile);
  // Tensors in declaration order, so the values depend only on the seed and the sizes.
  for (const LayerTensor& t : L.tensors) {
    const int64_t r = t.shape[0], c = t.shape[1];
    Matrix m{r, c, std::vector<uint32_t>(size_t(r * c), 0)};
    const std::string& n = t.name;
    if (L.fixed.count(n) || n == "out") continue;
    if (n == "x" || (n == "r1" && t.role == "input")) {
      for (auto& w : m.data) w = floatToBits(u(rng));
    } else if (n.rfind("w_", 0) == 0) {
      for (auto& w : m.data) w = floatToBits(1.0f + 0.5f * u(rng));
    } else if (n[0] == 'w') {  // [out, in]; W_down ([F, D]) and the dense gate and up ([D, F]) are [in, out]
      const int64_t fanIn = n == "wd" ? d.ffn : !d.experts && (n == "wg" || n == "wu") ? r : c;
      const float s = float(1.0 / std::sqrt(double(fanIn)));
      for (auto& w : m.data) w = floatToBits(s * u(rng));
    } else if (n.rfind("kc", 0) == 0 || n.rfind("vc", 0) == 0) {
      for (size_t b = 0; b < p.kvLengths.size(); ++b)
        for (int64_t row = start[b]; row < start[b] + p.kvLengths[b]; ++row)
          for (int64_t col = 0; col < c; ++col) m.data[size_t(row * c + col)] = floatToBits(u(rng));
    }
    in[n] = std::move(m);
  }
  // The MoE stage's own tensors: the router's weights rw (state, zeros: the router writes
  // them) and its spread table, or with a replayed trace rw and the routing rows as
  // builders/moe.hpp seeds them.
  if (d.experts) {
    const auto m = moeInputs(moeParams(p, d, ffnTile(p, d)), experts, seed);
    in["moe_rw"] = m.at("rw");
    if (p.traceRouting) in["moe_routing"] = m.at("routing");
    else in["moe_spread"] = m.at("spread");
  }
  for (auto& [n, m] : L.fixed) in[n] = m;
  return in;
}

}  // namespace stepgen
