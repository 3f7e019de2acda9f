// lowerOnnx: node by node, each ONNX value one tile or, with OnnxSchedule, row tiles where its
// operators allow (docs/onnx.md#tiling). Streams are named s<k>; a stream with
// several consumers gets a Broadcast once all of them are known (at the end). This file: the
// values, streams, operands and the graph text; the operators are in onnx_operators.cpp.
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <regex>

#include "onnx/lowering.hpp"

namespace stepgen {
namespace onnx_lowering {

OnnxImport Lowering::run() {
  const std::set<int> live = liveNodes();
  for (const OnnxNode& n : g_.nodes)
    if (live.count(n.index) && !n.domain.empty() && n.domain != "ai.onnx") {
      node_ = &n;
      fail("O-102", fmt::format("domain '{}' is not read; stepgen reads the default ONNX domain only", n.domain));
    }
  for (const auto& [name, t] : sched_.nodeTileRows)
    if (std::none_of(g_.nodes.begin(), g_.nodes.end(), [&](const OnnxNode& n) { return n.name == name && live.count(n.index); }))
      throw DiagError("O-104", t.at, fmt::format("the model has no node '{}' that computes an output", name));
  moes_ = findOnnxMoes(g_, live, &moeMisses_);
  for (const OnnxMoe& m : moes_)
    for (int n : m.nodes) moeAt_[n] = &m;
  if (sched_.swigluStages) {
    std::set<int> taken;
    for (const auto& [n, m] : moeAt_) taken.insert(n);
    swiglus_ = findOnnxSwiglus(g_, live, taken);
    for (const OnnxSwiglu& sw : swiglus_)
      for (int n : sw.nodes) swigluAt_[n] = &sw;
  }
  if (sched_.attentionStages) {
    std::set<int> taken;
    for (const auto& [n, m] : moeAt_) taken.insert(n);
    for (const auto& [n, s] : swigluAt_) taken.insert(n);
    attentions_ = findOnnxAttentions(g_, live, taken);
    for (const OnnxAttention& a : attentions_)
      for (int n : a.nodes) attentionAt_[n] = &a;
  }
  for (const OnnxNode& n : g_.nodes)  // the operator is the first thing a user needs to know
    if (live.count(n.index) && !moeOf(n.index) &&
        std::find(std::begin(kSupported), std::end(kSupported), n.op) == std::end(kSupported)) {
      node_ = &n;
      auto why = moeMisses_.find(n.index);
      if (why != moeMisses_.end())
        fail("O-201", fmt::format("operator TopK is read only as the router of a Mixture-of-Experts block (docs/onnx.md#moe), "
                                  "and this one starts none: {}", why->second));
      fail("O-201", fmt::format("operator {} is not supported; supported: {} (and TopK, ScatterElements in a "
                                "Mixture-of-Experts block)", n.op, onnxSupportedOps()));
    }
  node_ = nullptr;
  if (g_.opset < kOnnxMinOpset || g_.opset > kOnnxMaxOpset)
    fail("O-102", g_.opset == 0 ? "the model imports no opset of the default ONNX domain"
                                : fmt::format("opset {} of the default domain is outside the supported {}..{} (export "
                                              "with torch.onnx.export(..., opset_version=14))",
                                              g_.opset, kOnnxMinOpset, kOnnxMaxOpset));
  for (const auto& in : g_.inputs) vals_[in] = leafOf(in);
  for (const auto& [name, t] : g_.initializers) vals_[name] = leafOf(name);
  findSqrtDivisors(live);
  if (sched_.siluFunction) findSilus(live);
  for (const OnnxNode& n : g_.nodes) {
    if (!live.count(n.index)) continue;
    node_ = &n;
    imp_.ops.push_back(n.op);
    if (const OnnxMoe* m = moeOf(n.index)) {
      if (m->root == n.index) lowerMoe(*m);  // the block's last node: its inputs are all lowered
      continue;
    }
    if (auto sw = swigluAt_.find(n.index); sw != swigluAt_.end()) {
      if (sw->second->root == n.index) lowerSwiglu(*sw->second);
      continue;
    }
    if (auto at = attentionAt_.find(n.index); at != attentionAt_.end()) {
      if (at->second->root == n.index) lowerAttention(*at->second);
      continue;
    }
    if (siluSigmoids_.count(n.index)) continue;  // lowered with its product, as Map silu
    if (auto x = siluOf_.find(n.index); x != siluOf_.end()) {
      silu(n, x->second);
      continue;
    }
    lowerNode(n);
  }
  node_ = nullptr;
  for (const auto& name : g_.outputs) storeOutput(name);
  imp_.matmulBufferWords = matmulWords_;
  return finish();
}

void Lowering::requireFloat(const std::string& v) const {
  auto it = g_.elemTypes.find(v);
  if (it != g_.elemTypes.end() && it->second != "FLOAT")
    fail("O-103", fmt::format("value '{}' has element type {}; the fabric computes in float32", v, it->second));
}

std::vector<int64_t> Lowering::shapeOf(const std::string& v) const {
  auto it = g_.shapes.find(v);
  if (it == g_.shapes.end())
    fail("O-203", fmt::format("value '{}' has no static shape (give the model fixed input shapes: export without "
                              "dynamic_axes, or run onnx's shape inference with the sizes set)", v));
  if (product(it->second) == 0) fail("O-202", fmt::format("value '{}' has no elements (a dimension of size 0)", v));
  return it->second;
}

Val Lowering::leafOf(const std::string& name) const {
  Val v;
  v.leaf = true;
  v.source = name;
  v.shape = shapeOf(name);
  return v;
}

Lowering::Uses Lowering::usesOf(const std::set<int>& live) const {
  Uses u;
  for (const auto& o : g_.outputs) ++u.count[o];
  for (const OnnxNode& n : g_.nodes) {
    if (!live.count(n.index)) continue;
    for (const auto& i : n.inputs) ++u.count[i];
    for (const auto& o : n.outputs) u.producer[o] = &n;
  }
  return u;
}

void Lowering::findSqrtDivisors(const std::set<int>& live) {
  Uses u = usesOf(live);
  for (const OnnxNode& n : g_.nodes) {
    if (!live.count(n.index) || n.op != "Div") continue;
    auto p = u.producer.find(n.inputs.at(1));
    if (p != u.producer.end() && p->second->op == "Sqrt" && u.count[n.inputs[1]] == 1) sqrtDivisors_.insert(n.inputs[1]);
  }
}

void Lowering::findSilus(const std::set<int>& live) {
  Uses u = usesOf(live);
  for (const OnnxNode& n : g_.nodes) {
    if (!live.count(n.index) || n.op != "Mul" || moeOf(n.index) || swigluAt_.count(n.index)) continue;
    for (size_t k = 0; k < 2; ++k) {
      auto p = u.producer.find(n.inputs.at(k));
      const OnnxNode* s = p == u.producer.end() ? nullptr : p->second;
      if (s && s->op == "Sigmoid" && s->inputs.at(0) == n.inputs.at(1 - k) && u.count[n.inputs[k]] == 1 && !moeOf(s->index) &&
          !swigluAt_.count(s->index)) {
        siluOf_[n.index] = n.inputs[1 - k];
        siluSigmoids_.insert(s->index);
        break;
      }
    }
  }
}

std::set<int> Lowering::liveNodes() const {
  std::set<std::string> need(g_.outputs.begin(), g_.outputs.end());
  std::set<int> live;
  for (auto it = g_.nodes.rbegin(); it != g_.nodes.rend(); ++it) {
    bool used = false;
    for (const auto& o : it->outputs) used = used || need.count(o);
    if (!used) continue;
    live.insert(it->index);
    for (const auto& i : it->inputs)
      if (!i.empty()) need.insert(i);
  }
  return live;
}

int Lowering::newStream() {
  uses_.emplace_back();
  streamTiles_.push_back(1);
  return int(uses_.size()) - 1;
}

double Lowering::errorFor(const std::string& fn, double ea, double eb, int64_t terms, bool bf16) {
  const double u = std::ldexp(1.0, -24);
  if (fn == "matmul" || fn == "matmul_t") return ea + eb + double(terms) * u + (bf16 ? 2 * std::ldexp(1.0, -8) : 0.0);
  if (fn == "mul") return ea + eb + u;
  if (fn == "add" || fn == "sub") return std::max(ea, eb) + u;
  if (fn == "exp") return 16 * ea + 3.5e-4;
  if (fn == "recip") return ea + 5e-6;
  if (fn == "rsqrt") return ea / 2 + 7e-6;
  if (fn == "rowsum") return ea + double(terms) * u;
  // silu = x * sigmoid_table(x), the table within 2e-3 absolute (sim/common/fp.hpp): 4e-3 of
  // the output for x >= 0 (sigmoid >= 1/2), 2e-3 of |x| below (what the floor absorbs).
  if (fn == "silu") return ea + 4e-3 + u;
  return ea;  // rowmax
}

double Lowering::errorIn(int id, bool bf16) const {
  auto it = err_[bf16].find(id);
  return it == err_[bf16].end() ? 0.0 : it->second;  // a load: exact
}

double Lowering::errorOf(const std::string& fn, const Opnd& a, const Opnd* b, bool bf16) const {
  return errorFor(fn, errorIn(a.id, bf16), b ? errorIn(b->id, bf16) : 0.0, a.cols, bf16);
}

std::string Lowering::opName(const std::string& what) { return fmt::format("n{}_{}", nextOp_++, what); }

std::string Lowering::take(int s) {
  uses_[size_t(s)].push_back(fmt::format("s{}_u{}", s, uses_[size_t(s)].size()));
  return uses_[size_t(s)].back();
}

std::string Lowering::addTensor(const std::string& base, int64_t rows, int64_t cols, const std::string& role) {
  const std::string stem = sanitize(base);
  std::string name = stem;
  int& taken = nameCount_[stem];  // stem_2, stem_3, ... already handed out: no scan from 2
  while (tensorLines_.count(name)) name = fmt::format("{}_{}", stem, ++taken + 1);
  tensorLines_[name] = fmt::format("  {}: {{shape: [{}, {}], role: {}}}", name, rows, cols, role);
  tensorOrder_.push_back(name);
  return name;
}

Opnd Lowering::loadLeaf(const std::string& tensor, int64_t rows, int64_t cols) {
  const int s = newStream();
  const LeafLoad l{opName("load"), tensor, ops_.size(), rows, cols};
  ops_.push_back(fmt::format("  - {{name: {}, op: LinearOffChipLoad, tensor: {}, tile: [{}, {}], iter: [1], "
                             "strides: [[0, 0]], out: s{}}}", l.name, tensor, rows, cols, s));
  leafLoads_[s] = l;
  return use(s, rows, cols);
}

void Lowering::tileLoad(const Opnd& o, int64_t tiles, bool repeat) {
  auto it = leafLoads_.find(o.id);
  if (it == leafLoads_.end()) return;  // tiled already (map() asked for the same tiling)
  const LeafLoad l = it->second;
  leafLoads_.erase(it);
  streamTiles_[size_t(o.id)] = tiles;
  if (tiles == 1) return;
  ops_[l.line] = fmt::format("  - {{name: {}, op: LinearOffChipLoad, tensor: {}, tile: [{}, {}], iter: [{}], "
                             "strides: [[{}, 0]], out: s{}}}",
                             l.name, l.tensor, repeat ? l.rows : l.rows / tiles, l.cols, tiles, repeat ? 0 : 1, o.id);
}

int64_t Lowering::tilesFor(int64_t rows) const {
  auto it = node_ ? sched_.nodeTileRows.find(node_->name) : sched_.nodeTileRows.end();
  const int64_t r = it != sched_.nodeTileRows.end() ? it->second.tileRows : sched_.tileRows;
  return r > 0 && r < rows && rows % r == 0 ? rows / r : 1;
}

std::string Lowering::storeLine(const Opnd& o, const std::string& tensor) {
  return fmt::format("  - {{name: {}, op: LinearOffChipStore, in: {}, tensor: {}, iter: [{}], strides: [[1, 0]]}}",
                     opName("store"), o.stream, tensor, o.tiles);
}

Opnd Lowering::fillTable(float fill, int64_t rows, int64_t cols) {
  std::string& tensor = leafTensors_[fmt::format("fill {:a} {}x{}", fill, rows, cols)];
  if (tensor.empty()) {
    OnnxLeafTensor t;
    t.fill = fill;
    t.rows = rows;
    t.cols = cols;
    t.tensor = tensor = addTensor(fmt::format("c{}x{}_{}", rows, cols, imp_.leaves.size()), rows, cols, "input");
    imp_.leaves.push_back(t);
  }
  return loadLeaf(tensor, rows, cols);
}

std::string Lowering::leafTensor(OnnxLeafTensor t) {
  std::string key = fmt::format("{} {}x{}", t.source, t.rows, t.cols);
  for (const OnnxLayoutStep& s : t.steps) key += fmt::format(" {}:{}:{:a}", int(s.kind), fmt::join(s.ints, ","), s.scale);
  std::string& tensor = leafTensors_[key];
  if (tensor.empty()) {
    t.tensor = tensor = addTensor(t.source, t.rows, t.cols, "input");
    imp_.leaves.push_back(t);
  }
  return tensor;
}

Opnd Lowering::leafOperand(const Val& v, const std::vector<int64_t>& target, int64_t rows, int64_t cols) {
  OnnxLeafTensor t;
  t.source = v.source;
  t.steps = v.steps;
  if (v.shape != target) t.steps.push_back({OnnxLayoutStep::Kind::Broadcast, target});
  t.rows = rows;
  t.cols = cols;
  return loadLeaf(leafTensor(t), rows, cols);
}

Opnd Lowering::map(const std::string& fn, const Opnd& a, const Opnd* b, int64_t rows, int64_t cols) {
  const bool product = fn == "matmul" || fn == "matmul_t";
  const bool aLeaf = pendingLoad(a), bLeaf = b && pendingLoad(*b), bComputed = b && !bLeaf;
  // Both reads of one leaf (x * x) take the same tiles; as both operands of a product, none.
  const bool sameLeaf = aLeaf && bLeaf && b->id == a.id;
  int64_t tiles = !aLeaf ? a.tiles : bComputed ? (product ? 1 : b->tiles) : sameLeaf && product ? 1 : tilesFor(a.rows);
  if (bComputed && product && (b->tiles > 1 || tiles > 1))
    fail("O-205", fmt::format("the second operand of a product is a computed value ({}x{}), which must be whole and read "
                              "once: {} (import with whole tiles: no --schedule tile_rows, or an --arch whose compute unit "
                              "holds the whole tile)",
                              b->rows, b->cols,
                              b->tiles > 1 ? fmt::format("it is in {} row tiles", b->tiles)
                                           : fmt::format("the first operand's rows are in {} tiles", tiles)));
  if (bComputed && !product && b->tiles != tiles)
    fail("O-205", fmt::format("the two operands of {} are in {} and {} row tiles", fn, tiles, b->tiles));
  if (node_ && sched_.nodeTileRows.count(node_->name) && tiles != tilesFor(rows))
    fail("O-205", fmt::format("the schedule gives this node tiles of {} rows, but its operands come in {} tiles of its {} "
                              "rows: a node chooses its tiles only where its operands are all inputs or constants, the "
                              "others take their operands'",
                              sched_.nodeTileRows.at(node_->name).tileRows, tiles, rows));
  if (aLeaf) tileLoad(a, tiles, false);
  if (bLeaf) tileLoad(*b, tiles, product);
  if (product) matmulWords_ = std::max(matmulWords_, ComputeUnitParams::matmulBufferWords(rows / tiles, a.cols, cols));
  std::string in = a.stream;
  if (b) {
    const int z = newStream();
    ops_.push_back(fmt::format("  - {{name: {}, op: Zip, in: [{}, {}], out: s{}}}", opName("zip"), a.stream, b->stream, z));
    in = take(z);
  }
  const int s = newStream();
  ops_.push_back(fmt::format("  - {{name: {}, op: Map, fn: {}, in: {}, out: s{}}}", opName(fn), fn, in, s));
  for (int bf = 0; bf < 2; ++bf) err_[bf][s] = errorOf(fn, a, b, bf == 1);
  streamTiles_[size_t(s)] = tiles;
  return use(s, rows, cols);
}

Opnd Lowering::map1(const std::string& fn, const Opnd& a) { return map(fn, a, nullptr, a.rows, a.cols); }

Opnd Lowering::map2(const std::string& fn, const Opnd& a, const Opnd& b) { return map(fn, a, &b, a.rows, a.cols); }

Opnd Lowering::widen(Opnd x, int64_t rows, int64_t cols) {
  if (x.cols != cols) {
    const Opnd ones = fillTable(1.0f, 1, cols);
    x = map("matmul", x, &ones, x.rows, cols);
  }
  if (x.rows != rows) {
    const Opnd ones = fillTable(1.0f, rows, 1);
    x = map("matmul", ones, &x, rows, cols);
  }
  return x;
}

void Lowering::define(const std::string& name, const Opnd& o, const std::vector<int64_t>& shape, bool repl) {
  // The operand's consumer name is unused: the value's own consumers take new names.
  Val v;
  v.repl = repl;
  v.shape = shape;
  v.rows = o.rows;
  v.cols = o.cols;
  v.stream = o.id;
  uses_[size_t(v.stream)].pop_back();  // return the taken name; consumers take their own
  vals_[name] = v;
}

Opnd Lowering::again(const Opnd& o) { return use(o.id, o.rows, o.cols); }

Opnd Lowering::use(int s, int64_t rows, int64_t cols) { return {take(s), s, rows, cols, streamTiles_[size_t(s)]}; }

const Val& Lowering::val(const std::string& name) {
  auto it = vals_.find(name);
  if (it == vals_.end()) fail("O-101", fmt::format("input '{}' is produced by no node before this one", name));
  return it->second;
}

const Val& Lowering::formed(const std::string& name) {
  const Val& v = val(name);
  if (v.tlast)
    fail("O-204", fmt::format("'{}' transposes the last two axes of a computed value; the fabric forms that only as the "
                              "second operand of a MatMul (matmul_t)", name));
  return v;
}

Opnd Lowering::operand(const std::string& name, const std::vector<int64_t>& target, int64_t rows, int64_t cols, bool widenIt) {
  const Val& v = formed(name);
  requireFloat(name);
  if (v.leaf) return leafOperand(v, target, rows, cols);
  Opnd o = use(v.stream, v.rows, v.cols);
  std::vector<int64_t> s(target.size() - std::min(target.size(), v.shape.size()), 1);  // right-aligned
  s.insert(s.end(), v.shape.begin(), v.shape.end());
  if (v.repl) {
    if (v.rows == rows && v.cols == cols && s.size() == target.size() && std::equal(s.begin(), s.end() - 1, target.begin()))
      return o;
    o = extractColumn(o);
  }
  if (o.rows == rows && o.cols == cols && product(v.shape) == product(target)) {
    if (v.shape != target && canonicalView(v.shape) != canonicalView(target))
      fail("O-204", fmt::format("computed value '{}' of shape {} would need a relayout to {}", name, fmt::join(v.shape, "x"),
                                fmt::join(target, "x")));
    return o;
  }
  // A row vector has 1s but in the last dim, a column vector matches all but the last dim
  // and has 1 there.
  const bool ones = std::all_of(s.begin(), s.end() - (s.empty() ? 0 : 1), [](int64_t d) { return d == 1; });
  const bool rowVec = !s.empty() && ones && s.back() == target.back() && o.rows == 1 && o.cols == cols;
  const bool scalar = product(s) == 1 && o.rows == 1 && o.cols == 1;
  const bool colVec = !s.empty() && s.back() == 1 && std::equal(s.begin(), s.end() - 1, target.begin()) &&
                      o.rows == rows && o.cols == 1;
  if (s.size() != target.size() || !(rowVec || scalar || colVec))
    fail("O-204", fmt::format("computed value '{}' of shape [{}] (view {}x{}) cannot be broadcast to [{}] on the fabric: "
                              "only rows, columns or a scalar widen (by a matmul with ones)",
                              name, fmt::join(v.shape, ", "), o.rows, o.cols, fmt::join(target, ", ")));
  return widenIt ? widen(o, rows, cols) : o;
}

Opnd Lowering::extractColumn(const Opnd& o) {
  const Opnd e0 = zeroOne(o.cols, 1, {{0, 0}});
  return map("matmul", o, &e0, o.rows, 1);
}

std::optional<int64_t> Lowering::intAttr(const OnnxNode& n, const std::string& k) const {
  auto it = n.attrs.find(k);
  return it == n.attrs.end() ? std::nullopt : it->second.i;
}

std::optional<float> Lowering::floatAttr(const OnnxNode& n, const std::string& k) const {
  auto it = n.attrs.find(k);
  return it == n.attrs.end() ? std::nullopt : it->second.f;
}

const OnnxTensor* Lowering::constant(const std::string& name) const {
  if (auto it = g_.initializers.find(name); it != g_.initializers.end()) return &it->second;
  auto it = imp_.constants.find(name);
  return it == imp_.constants.end() ? nullptr : &it->second;
}

void Lowering::storeOutput(const std::string& name) {
  const std::vector<int64_t> shape = shapeOf(name);
  requireFloat(name);
  const Val& v = val(name);
  const auto [rows, cols] = v.leaf ? canonicalView(shape) : std::make_pair(v.rows, v.repl ? int64_t(1) : v.cols);
  const Opnd o = operand(name, shape, rows, cols);
  for (int bf = 0; bf < 2; ++bf) {
    auto it = err_[bf].find(o.id);
    imp_.relErrorBound[bf] = std::max(imp_.relErrorBound[bf], it == err_[bf].end() ? 0.0 : it->second);
  }
  const std::string t = addTensor("out_" + name, rows, cols, "output");
  tileLoad(o, 1, false);
  ops_.push_back(storeLine(o, t));
  imp_.outputs.push_back({name, t, shape});
}

OnnxImport Lowering::finish() {
  std::map<std::string, std::string> rename;
  std::vector<std::string> forks;
  for (size_t s = 0; s < uses_.size(); ++s) {
    const auto& u = uses_[s];
    if (u.empty()) throw std::logic_error(fmt::format("onnx lowering: stream s{} has no consumer", s));
    if (u.size() == 1) {
      rename[u[0]] = fmt::format("s{}", s);
    } else {
      forks.push_back(fmt::format("  - {{name: fork_s{}, op: Broadcast, in: s{}, out: [{}]}}", s, s, fmt::join(u, ", ")));
    }
  }
  static const std::regex use(R"(\bs\d+_u\d+\b)");
  // The MoE blocks' layers beside the graph (their ops and own tensors renamed per stage),
  // joined by their state tensors.
  std::set<std::string> own(tensorOrder_.begin(), tensorOrder_.end());
  const ComposedStages moe = composeStages(own, stages_);
  std::string y;
  y += "# Imported from an ONNX model by stepgen (`stepgen import onnx`, docs/onnx.md).\n";
  const bool tiled = sched_.tileRows > 0 || !sched_.nodeTileRows.empty();
  y += fmt::format("# Source: {} (opset {}). {}{}.\n", g_.path, g_.opset,
                   tiled ? "Rows in tiles where the graph allows (schedule.yaml, docs/onnx.md#tiling)" : "One tile per ONNX value",
                   stages_.empty() ? "" : "; each MoE block, SwiGLU MLP, attention and product by a large weight is a stage (docs/onnx.md#moe)");
  y += "stepgraph: onnx_import\n";
  if (!moe.symbols.empty()) y += "symbols: {" + moe.symbols + "}\n";
  if (!moe.schedule.empty()) y += "schedule: {" + moe.schedule + "}\n";
  y += "tensors:\n";
  for (const auto& t : tensorOrder_) y += tensorLines_.at(t) + "\n";
  y += moe.decls;
  if (!moe.streams.empty()) y += "streams:\n" + moe.streams;
  y += "ops:\n";
  auto emit = [&](const std::string& line) {
    std::string out;
    auto begin = std::sregex_iterator(line.begin(), line.end(), use);
    size_t at = 0;
    for (auto i = begin; i != std::sregex_iterator(); ++i) {
      out += line.substr(at, size_t(i->position()) - at);
      auto r = rename.find(i->str());
      out += r == rename.end() ? i->str() : r->second;
      at = size_t(i->position() + i->length());
    }
    y += out + line.substr(at) + "\n";
  };
  for (const auto& l : ops_) emit(l);
  for (const auto& l : forks) emit(l);
  imp_.yaml = y + moe.ops;
  return imp_;
}

}  // namespace onnx_lowering

double onnxTolerance(const OnnxImport& imp, bool bf16Operands) {
  return imp.relErrorBound[bf16Operands ? 1 : 0] + std::ldexp(1.0, -23);
}

std::string onnxSupportedOps() {
  std::string s;
  for (const char* o : onnx_lowering::kSupported) s += std::string(s.empty() ? "" : ", ") + o;
  return s;
}

OnnxImport lowerOnnx(const OnnxGraph& g, const std::string& routingTrace, const OnnxSchedule& schedule) {
  return onnx_lowering::Lowering(g, routingTrace, schedule).run();
}

OnnxSchedule chooseOnnxSchedule(const OnnxGraph& g, const ArchModel& a, const std::string& routingTrace) {
  OnnxSchedule s;
  s.swigluStages = a.cu.has("matmul") && a.cu.has("silu") && a.cu.has("mul") && a.cu.has("accum");
  s.siluFunction = a.cu.has("silu");
  if (a.cu.has("matmul_t") && a.cu.has("accum")) s.linearStageWords = a.cu.bufferBytes / 4;
  s.attentionStages = true;
  for (const char* f : {"matmul", "matmul_t", "rowmax", "rowsum", "scan_max", "scan_max_exclusive", "accum_rescale", "rowscale",
                        "sub", "exp", "recip"})
    s.attentionStages = s.attentionStages && a.cu.has(f);
  const int64_t bufferWords = a.cu.bufferBytes / 4;
  if (lowerOnnx(g, routingTrace, s).matmulBufferWords <= bufferWords) return s;
  int64_t rows = 1;  // the most rows of any value: tile rows below it
  for (const auto& [name, shape] : g.shapes) rows = std::max(rows, onnx_lowering::canonicalView(shape).first);
  for (int64_t r = int64_t(1) << 15; r >= 1; r /= 2) {
    if (r >= rows) continue;
    try {
      OnnxSchedule t = s;
      t.tileRows = r;
      if (lowerOnnx(g, routingTrace, t).matmulBufferWords <= bufferWords) return t;
    } catch (const DiagError& e) {
      if (e.diags.at(0).id != "O-205") throw;
    }
  }
  return s;
}

namespace {

SourceLoc locOf(const std::string& path, const YAML::Node& n) { return {path, n.Mark().line + 1, n.Mark().column + 1}; }

/// A tile_rows value: a non-negative integer (O-104 otherwise).
int64_t tileRowsOf(const std::string& path, const YAML::Node& n) {
  int64_t v = -1;
  try {
    v = n.as<int64_t>();
  } catch (const YAML::Exception&) {
  }
  if (v < 0) throw DiagError("O-104", locOf(path, n), "tile_rows must be a non-negative integer (0: whole tiles)");
  return v;
}

/// Node `name`'s tile rows in `t`; O-104 when the schedule names it twice.
void scheduleNode(OnnxSchedule& t, const std::string& path, const YAML::Node& name, int64_t rows) {
  const std::string n = name.as<std::string>();
  if (t.nodeTileRows.count(n)) throw DiagError("O-104", locOf(path, name), fmt::format("node '{}' is scheduled twice", n));
  t.nodeTileRows[n] = {rows, locOf(path, name)};
}

}  // namespace

OnnxSchedule readOnnxSchedule(const std::string& path) {
  YAML::Node y;
  try {
    y = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw DiagError("O-104", SourceLoc{path, e.mark.line + 1, e.mark.column + 1}, "not a readable schedule: " + e.msg);
  }
  OnnxSchedule t;
  if (!y || y.IsNull()) return t;
  if (!y.IsMap()) throw DiagError("O-104", locOf(path, y), "a schedule is a map (tile_rows: N)");
  for (const auto& kv : y) {
    const std::string key = kv.first.as<std::string>();
    if (key == "swiglu_stages" || key == "silu_function" || key == "attention_stages") {
      try {
        (key == "swiglu_stages" ? t.swigluStages : key == "silu_function" ? t.siluFunction : t.attentionStages) = kv.second.as<bool>();
      } catch (const YAML::Exception&) {
        throw DiagError("O-104", locOf(path, kv.second), key + " must be true or false");
      }
    } else if (key == "tile_rows") {
      t.tileRows = tileRowsOf(path, kv.second);
    } else if (key == "linear_stage_words") {
      t.linearStageWords = -1;
      try {
        t.linearStageWords = kv.second.as<int64_t>();
      } catch (const YAML::Exception&) {
      }
      if (t.linearStageWords < 0)
        throw DiagError("O-104", locOf(path, kv.second), "linear_stage_words must be a non-negative integer (0: no linear stages)");
    } else if (key == "nodes") {
      if (!kv.second.IsMap()) throw DiagError("O-104", locOf(path, kv.second), "nodes is a map: <ONNX node name>: {tile_rows: N}");
      for (const auto& node : kv.second) {
        const YAML::Node rows = node.second.IsMap() ? node.second["tile_rows"] : YAML::Node();
        if (!rows || node.second.size() != 1)
          throw DiagError("O-104", locOf(path, node.second), "a node's schedule is {tile_rows: N}");
        scheduleNode(t, path, node.first, tileRowsOf(path, rows));
      }
    } else if (key == "regions") {  // nodes that share their tile rows, listed together
      const char* form = "regions is a list of {nodes: [<ONNX node name>, ...], tile_rows: N}";
      if (!kv.second.IsSequence()) throw DiagError("O-104", locOf(path, kv.second), form);
      for (const auto& region : kv.second) {
        const YAML::Node nodes = region.IsMap() ? region["nodes"] : YAML::Node(), rows = region.IsMap() ? region["tile_rows"] : YAML::Node();
        if (!nodes || !rows || !nodes.IsSequence() || region.size() != 2) throw DiagError("O-104", locOf(path, region), form);
        const int64_t r = tileRowsOf(path, rows);
        for (const auto& node : nodes) scheduleNode(t, path, node, r);
      }
    } else {
      throw DiagError("O-104", locOf(path, kv.first),
                      fmt::format("unknown schedule key '{}' (known: tile_rows, swiglu_stages, silu_function, attention_stages, linear_stage_words, nodes, regions)", key));
    }
  }
  return t;
}

}  // namespace stepgen
