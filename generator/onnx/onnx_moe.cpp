// findOnnxMoes (onnx_moe.hpp): walks from each TopK through the router, the gate scatter and
// the experts; any difference stops the match with the reason.
#include "onnx/onnx_moe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace stepgen {

namespace {

struct Miss {
  std::string why;
};

class MoeMatcher {
 public:
  MoeMatcher(const OnnxGraph& g, const std::set<int>& live) : g_(g), inputs_(g.inputs.begin(), g.inputs.end()) {
    for (const OnnxNode& n : g.nodes) {
      if (!live.count(n.index)) continue;
      for (const auto& o : n.outputs) producer_[o] = n.index;
      for (const auto& i : n.inputs)
        if (!i.empty()) consumers_[i].push_back(n.index);
    }
  }

  OnnxMoe match(const OnnxNode& topk) {
    m_ = OnnxMoe{};
    m_.nodes.insert(topk.index);
    const auto in = shape(topk.inputs.at(0));
    if (in.size() < 2) miss("TopK's input is not [tokens, experts]");
    const int64_t e = in.back();
    m_.tokens = 1;
    for (size_t d = 0; d + 1 < in.size(); ++d) m_.tokens *= in[d];
    if (lastAxis(topk, "axis", -1, in.size()) != true) miss("TopK is not over the last axis");
    if (intAttr(topk, "largest", 1) != 1) miss("TopK takes the smallest values");
    const std::optional<std::vector<int64_t>> k =
        topk.inputs.size() > 1 ? ints(topk.inputs[1]) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{intAttr(topk, "k", 0)});
    if (!k || k->size() != 1 || k->at(0) < 1 || k->at(0) > e) miss("TopK's k is not one constant between 1 and the experts");
    m_.k = k->at(0);
    // The router: Softmax(h @ Wr) then TopK (Qwen3), or TopK(h @ Wr) and Softmax after (Mixtral).
    std::string logits = topk.inputs[0];
    const OnnxNode* first = producer(logits);
    const bool softmaxFirst = first && first->op == "Softmax";
    if (softmaxFirst) {
      if (!softmaxLast(*first) || consumers(logits).size() != 1) miss("the Softmax before TopK is not over the last axis alone");
      m_.nodes.insert(first->index);
      logits = first->inputs.at(0);
    }
    const OnnxNode* gate = producer(logits);
    if (!gate || gate->op != "MatMul" || consumers(logits).size() != 1) miss("the router logits are not one MatMul's");
    m_.nodes.insert(gate->index);
    m_.input = gate->inputs.at(0);
    m_.router = gate->inputs.at(1);
    std::vector<int64_t> hs(in.begin(), in.end() - 1);
    if (shape(m_.input).size() != in.size()) miss("the router's input is not [tokens, hidden]");
    m_.hidden = shape(m_.input).back();
    hs.push_back(m_.hidden);
    if (shape(m_.input) != hs) miss("the router's input is not [tokens, hidden]");
    if (!weight(m_.router) || shape(m_.router) != std::vector<int64_t>{m_.hidden, e})
      miss("the router's weight is not an initializer or graph input [hidden, experts]");
    // The weights of the chosen: renormalised (Qwen3's norm_topk_prob) or a softmax (Mixtral).
    const std::string vals = topk.outputs.at(0), idx = topk.outputs.at(1);
    std::string weights;
    if (softmaxFirst) {
      const OnnxNode* sum = only(vals, "ReduceSum", 2);
      const OnnxNode* div = only(vals, "Div", 2);
      if (!sum || !div || div->inputs.at(0) != vals || div->inputs.at(1) != sum->outputs.at(0) || consumers(sum->outputs[0]).size() != 1 ||
          !reduceLast(*sum, in.size()))
        miss("the chosen probabilities are not renormalised by their sum (vals / vals.sum(-1, keepdim=True))");
      m_.nodes.insert({sum->index, div->index});
      weights = div->outputs.at(0);
    } else {
      const OnnxNode* sm = only(vals, "Softmax", 1);
      if (!sm || !softmaxLast(*sm)) miss("the chosen logits are not followed by a Softmax over them");
      m_.nodes.insert(sm->index);
      weights = sm->outputs.at(0);
    }
    const OnnxNode* scatter = only(weights, "ScatterElements", 1);
    if (!scatter || scatter->inputs.at(1) != idx || scatter->inputs.at(2) != weights || consumers(idx).size() != 1 ||
        lastAxis(*scatter, "axis", 0, in.size()) != true || !zeros(scatter->inputs.at(0), std::vector<int64_t>(in.begin(), in.end())))
      miss("the weights are not scattered into zeros [tokens, experts] at the chosen indices along the last axis");
    m_.nodes.insert(scatter->index);
    // Per expert: its gate column times its SwiGLU output; the terms summed by Adds.
    std::vector<std::string> terms(static_cast<size_t>(e));
    m_.experts.resize(size_t(e));
    for (int ci : consumers(scatter->outputs.at(0))) {
      const OnnxNode& s = g_.nodes[size_t(ci)];
      const int64_t col = sliceColumn(s, in.size());
      if (col < 0 || col >= e || !terms[size_t(col)].empty()) miss("a use of the gates is not the Slice of one expert's column");
      const OnnxNode* mul = only(s.outputs.at(0), "Mul", 1);
      if (!mul) miss(fmt::format("expert {}'s gate column is not multiplied with its output", col));
      m_.nodes.insert({s.index, mul->index});
      const std::string o = mul->inputs.at(0) == s.outputs[0] ? mul->inputs.at(1) : mul->inputs.at(0);
      m_.experts[size_t(col)] = expert(o, int(col));
      terms[size_t(col)] = mul->outputs.at(0);
    }
    for (int64_t x = 0; x < e; ++x)
      if (terms[size_t(x)].empty()) miss(fmt::format("expert {} has no gate column", x));
    m_.output = sum(terms);
    m_.root = producer(m_.output)->index;
    sealed(m_.nodes, m_.output);
    return m_;
  }

  /// The SwiGLU MLP that MatMul `down` ends (OnnxSwiglu).
  OnnxSwiglu swiglu(const OnnxNode& down) {
    m_ = OnnxMoe{};
    // h: the input of the projections that feed the Mul before `down`.
    const OnnxNode* act = down.op == "MatMul" ? producer(down.inputs.at(0)) : nullptr;
    if (!act || act->op != "Mul") miss("not a SwiGLU");
    for (const auto& v : act->inputs) {
      const OnnxNode* p = producer(v);
      if (p && p->op == "MatMul") m_.input = p->inputs.at(0);
    }
    const auto hs = shape(m_.input);
    if (hs.size() < 2 || shape(down.outputs.at(0)) != hs) miss("not a SwiGLU");
    m_.hidden = hs.back();
    m_.tokens = 1;
    for (size_t d = 0; d + 1 < hs.size(); ++d) m_.tokens *= hs[d];
    OnnxSwiglu s;
    s.weights = expert(down.outputs[0], 0, false);
    s.input = m_.input, s.output = down.outputs[0], s.root = down.index;
    s.tokens = m_.tokens, s.hidden = m_.hidden, s.ffn = m_.ffn, s.nodes = m_.nodes;
    sealed(s.nodes, s.output);
    return s;
  }

  /// The attention that MatMul `pv` ends (OnnxAttention).
  OnnxAttention attention(const OnnxNode& pv) {
    const char* what = "not Softmax(q @ Transpose(K)) @ V with K and V weights";
    const OnnxNode* sm = producer(pv.inputs.at(0));
    if (!sm || sm->op != "Softmax" || !softmaxLast(*sm) || consumers(sm->outputs.at(0)).size() != 1) miss(what);
    const OnnxNode* qk = producer(sm->inputs.at(0));
    if (!qk || qk->op != "MatMul" || consumers(qk->outputs.at(0)).size() != 1) miss(what);
    const OnnxNode* tr = producer(qk->inputs.at(1));
    if (!tr || tr->op != "Transpose" || consumers(tr->outputs.at(0)).size() != 1) miss(what);
    auto perm = tr->attrs.find("perm");
    if (perm != tr->attrs.end() && perm->second.ints != std::vector<int64_t>{1, 0}) miss(what);
    OnnxAttention a;
    a.input = qk->inputs.at(0), a.keys = tr->inputs.at(0), a.values = pv.inputs.at(1), a.output = pv.outputs.at(0);
    const auto q = shape(a.input), k = shape(a.keys);
    if (q.size() != 2 || k.size() != 2 || q[1] != k[1] || shape(a.values) != k || shape(a.output) != q || !weight(a.keys) ||
        !weight(a.values))
      miss(what);
    a.queries = q[0], a.kv = k[0], a.headDim = k[1], a.root = pv.index;
    a.nodes = {tr->index, qk->index, sm->index, pv.index};
    sealed(a.nodes, a.output);
    return a;
  }

 private:
  /// Misses unless nothing inside `nodes` but `output` is read outside them or is a graph output.
  void sealed(const std::set<int>& nodes, const std::string& output) const {
    for (int n : nodes)
      for (const auto& o : g_.nodes[size_t(n)].outputs) {
        if (o == output) continue;
        for (int c : consumers(o))
          if (!nodes.count(c)) miss(fmt::format("value '{}' inside the block is also read by node '{}'", o, g_.nodes[size_t(c)].name));
        if (std::find(g_.outputs.begin(), g_.outputs.end(), o) != g_.outputs.end())
          miss(fmt::format("value '{}' inside the block is a graph output", o));
      }
  }

  const OnnxGraph& g_;
  std::set<std::string> inputs_;
  std::map<std::string, int> producer_;
  std::map<std::string, std::vector<int>> consumers_;
  OnnxMoe m_;

  [[noreturn]] static void miss(const std::string& why) { throw Miss{why}; }

  /// A weight: an initializer, or a graph input (a model written without its weights).
  bool weight(const std::string& v) const { return g_.initializers.count(v) || inputs_.count(v); }

  std::vector<int64_t> shape(const std::string& v) const {
    auto it = g_.shapes.find(v);
    return it == g_.shapes.end() ? std::vector<int64_t>{} : it->second;
  }
  const OnnxNode* producer(const std::string& v) const {
    auto it = producer_.find(v);
    return it == producer_.end() ? nullptr : &g_.nodes[size_t(it->second)];
  }
  std::vector<int> consumers(const std::string& v) const {
    auto it = consumers_.find(v);
    return it == consumers_.end() ? std::vector<int>{} : it->second;
  }
  /// The one consumer of `v` with op type `op` when `v` has exactly `uses` consumers.
  const OnnxNode* only(const std::string& v, const std::string& op, size_t uses) const {
    const auto c = consumers(v);
    if (c.size() != uses) return nullptr;
    for (int i : c)
      if (g_.nodes[size_t(i)].op == op) return &g_.nodes[size_t(i)];
    return nullptr;
  }
  int64_t intAttr(const OnnxNode& n, const std::string& k, int64_t dflt) const {
    auto it = n.attrs.find(k);
    return it != n.attrs.end() && it->second.i ? *it->second.i : dflt;
  }
  bool lastAxis(const OnnxNode& n, const std::string& k, int64_t dflt, size_t rank) const {
    const int64_t a = intAttr(n, k, dflt);
    return a == -1 || a == int64_t(rank) - 1;
  }
  bool softmaxLast(const OnnxNode& n) const {  // before opset 13 the default axis is 1 (of a 2-D value: the last)
    const size_t rank = shape(n.inputs.at(0)).size();
    return lastAxis(n, "axis", g_.opset < 13 ? 1 : -1, rank);
  }
  /// A constant's integers: an initializer or a Constant node's value.
  std::optional<std::vector<int64_t>> ints(const std::string& v) const {
    const OnnxTensor* t = constantOf(v);
    if (!t || t->isFloat) return std::nullopt;
    return t->i;
  }
  const OnnxTensor* constantOf(const std::string& v) const {
    if (auto it = g_.initializers.find(v); it != g_.initializers.end()) return &it->second;
    const OnnxNode* p = producer(v);
    if (!p || p->op != "Constant") return nullptr;
    auto it = p->attrs.find("value");
    return it != p->attrs.end() && it->second.t ? &*it->second.t : nullptr;
  }
  bool zeros(const std::string& v, const std::vector<int64_t>& want) const {
    const OnnxTensor* t = constantOf(v);
    return t && t->isFloat && t->shape == want && std::all_of(t->f.begin(), t->f.end(), [](float x) { return x == 0.0f; });
  }
  bool reduceLast(const OnnxNode& n, size_t rank) const {
    if (intAttr(n, "keepdims", 1) != 1) return false;
    std::optional<std::vector<int64_t>> axes;
    if (n.inputs.size() > 1 && !n.inputs[1].empty()) axes = ints(n.inputs[1]);
    else if (auto it = n.attrs.find("axes"); it != n.attrs.end()) axes = it->second.ints;
    return axes && axes->size() == 1 && (axes->at(0) == -1 || axes->at(0) == int64_t(rank) - 1);
  }
  /// The column a Slice takes of the gates (start e, end e + 1, step 1, the last axis), or -1.
  int64_t sliceColumn(const OnnxNode& s, size_t rank) const {
    if (s.op != "Slice" || s.inputs.size() < 3) return -1;
    const auto starts = ints(s.inputs[1]), ends = ints(s.inputs[2]);
    const auto axes = s.inputs.size() > 3 && !s.inputs[3].empty() ? ints(s.inputs[3]) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{int64_t(rank) - 1});
    const auto steps = s.inputs.size() > 4 && !s.inputs[4].empty() ? ints(s.inputs[4]) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{1});
    if (!starts || !ends || !axes || !steps || starts->size() != 1 || ends->size() != 1 || axes->size() != 1 || steps->size() != 1)
      return -1;
    if ((axes->at(0) != -1 && axes->at(0) != int64_t(rank) - 1) || steps->at(0) != 1 || ends->at(0) != starts->at(0) + 1) return -1;
    return starts->at(0);
  }
  /// The MatMul of h with an initializer weight of `shape2` producing `v` (read once), or nullptr.
  const OnnxNode* projection(const std::string& v, const std::string& from, const std::vector<int64_t>& shape2) const {
    const OnnxNode* p = producer(v);
    if (!p || p->op != "MatMul" || p->inputs.at(0) != from || !weight(p->inputs.at(1))) return nullptr;
    return shape(p->inputs[1]) == shape2 ? p : nullptr;
  }
  /// Expert `e`'s SwiGLU producing `o`: (Mul(g, Sigmoid(g)) * (h @ Wu)) @ Wd with g = h @ Wg
  /// (`o` read once: an expert's output is weighted by its gate alone).
  OnnxMoeExpert expert(const std::string& o, int e, bool readOnce = true) {
    const std::string what = fmt::format("expert {}'s output is not (silu(h @ Wg) * (h @ Wu)) @ Wd with weights (initializers or graph inputs)", e);
    const OnnxNode* down = producer(o);
    if (!down || down->op != "MatMul" || (readOnce && consumers(o).size() != 1) || !weight(down->inputs.at(1))) miss(what);
    const auto wd = shape(down->inputs[1]);
    if (wd.size() != 2 || wd[1] != m_.hidden) miss(what);
    const int64_t f = wd[0];
    if (m_.ffn && f != m_.ffn) miss(fmt::format("expert {} is {} wide, expert 0 {}", e, f, m_.ffn));
    m_.ffn = f;
    const OnnxNode* act = producer(down->inputs[0]);
    if (!act || act->op != "Mul") miss(what);
    for (int side = 0; side < 2; ++side) {
      const OnnxNode* silu = producer(act->inputs.at(size_t(side)));
      const OnnxNode* up = projection(act->inputs.at(size_t(1 - side)), m_.input, {m_.hidden, f});
      if (!silu || silu->op != "Mul" || !up) continue;
      for (int s2 = 0; s2 < 2; ++s2) {
        const OnnxNode* sig = producer(silu->inputs.at(size_t(s2)));
        const std::string gv = silu->inputs.at(size_t(1 - s2));
        const OnnxNode* gate = projection(gv, m_.input, {m_.hidden, f});
        if (!sig || sig->op != "Sigmoid" || sig->inputs.at(0) != gv || !gate) continue;
        m_.nodes.insert({down->index, act->index, silu->index, up->index, sig->index, gate->index});
        return {gate->inputs[1], up->inputs[1], down->inputs[1]};
      }
    }
    miss(what);
  }
  /// The value the Adds over `terms` (each read once) end in: a tree of Adds whose leaves are
  /// exactly the terms.
  std::string sum(const std::vector<std::string>& terms) {
    std::map<std::string, int> leaves;  // value -> terms under it
    for (const auto& t : terms) leaves[t] = 1;
    std::string top = terms.size() == 1 ? terms[0] : "";
    for (bool grew = true; grew;) {
      grew = false;
      for (const auto& [v, n] : std::map<std::string, int>(leaves)) {
        const OnnxNode* add = only(v, "Add", 1);
        if (!add || m_.nodes.count(add->index)) continue;
        const std::string a = add->inputs.at(0), b = add->inputs.at(1);
        if (!leaves.count(a) || !leaves.count(b) || a == b) continue;
        leaves[add->outputs.at(0)] = leaves[a] + leaves[b];
        leaves.erase(a), leaves.erase(b);
        m_.nodes.insert(add->index);
        if (leaves[add->outputs[0]] == int(terms.size())) top = add->outputs[0];
        grew = true;
        break;
      }
    }
    if (top.empty()) miss("the experts' weighted outputs are not summed by Adds of them alone");
    return top;
  }
};

}  // namespace

namespace {

/// The patterns `match` finds ending at a live MatMul, none of whose nodes is in `taken`.
template <class Pattern>
std::vector<Pattern> endingAtMatMuls(const OnnxGraph& g, const std::set<int>& live, const std::set<int>& taken,
                                     Pattern (MoeMatcher::*match)(const OnnxNode&)) {
  MoeMatcher m(g, live);
  std::vector<Pattern> found;
  for (const OnnxNode& n : g.nodes) {
    if (!live.count(n.index) || n.op != "MatMul" || taken.count(n.index)) continue;
    try {
      Pattern p = (m.*match)(n);
      if (std::none_of(p.nodes.begin(), p.nodes.end(), [&](int x) { return taken.count(x) > 0; })) found.push_back(std::move(p));
    } catch (const Miss&) {
    }
  }
  return found;
}

}  // namespace

std::vector<OnnxAttention> findOnnxAttentions(const OnnxGraph& g, const std::set<int>& live, const std::set<int>& taken) {
  return endingAtMatMuls(g, live, taken, &MoeMatcher::attention);
}

std::vector<OnnxSwiglu> findOnnxSwiglus(const OnnxGraph& g, const std::set<int>& live, const std::set<int>& taken) {
  return endingAtMatMuls(g, live, taken, &MoeMatcher::swiglu);
}

std::vector<OnnxMoe> findOnnxMoes(const OnnxGraph& g, const std::set<int>& live, std::map<int, std::string>* misses) {
  MoeMatcher m(g, live);
  std::vector<OnnxMoe> found;
  for (const OnnxNode& n : g.nodes) {
    if (!live.count(n.index) || n.op != "TopK") continue;
    try {
      found.push_back(m.match(n));
    } catch (const Miss& x) {
      if (misses) (*misses)[n.index] = x.why;
    }
  }
  return found;
}

}  // namespace stepgen
