// Dynamic-path operators of the functional model (docs/step_semantics.md#operators), on top of the
// token-stream semantics of generator/model/routing_ops.
#include "model/functional_dynamic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "support/routing_trace.hpp"
#include "ir/attrs.hpp"
#include "model/routing_ops.hpp"

namespace stepgen {

namespace {

using Kind = Token::Kind;

class DynamicOp {
 public:
  DynamicOp(const StepGraph& g, const ShapeResult& s, const Op& op, const std::map<std::string, Matrix>& in,
            std::vector<TokenStream>& streams, std::map<std::string, Matrix>& outputs, bool values,
            const std::vector<int>* mergeOrder, FeedbackRound* rounds)
      : g_(g), s_(s), op_(op), in_(in), streams_(streams), outputs_(outputs), values_(values), mergeOrder_(mergeOrder),
        rounds_(rounds) {}

  bool run() {
    const int n = int(op_.outputs.size());
    switch (op_.kind) {
      case OpKind::SelectGen: selectGen(); return true;
      case OpKind::AddrGen: addrGen(); return true;
      case OpKind::Partition: partitionOp(); return true;
      case OpKind::Map:
        if (attrString(op_, "fn") != "select") return false;
        output(0) = selectOf(g_, op_, input(0));
        return true;
      case OpKind::Reassemble: reassembleOp(); return true;
      case OpKind::EagerMerge: eagerMergeOp(); return true;
      case OpKind::Reshape: reshapeOp(); return true;
      case OpKind::Expand: output(0) = expand(input(0), input(1), b()); return true;
      case OpKind::Scan:
        output(0) = attrString(op_, "fn") == "max"             ? scanMax(input(0), b())
                    : attrString(op_, "fn") == "max_exclusive" ? scanMaxExclusive(input(0), b())
                                                               : scanAdd(input(0), b());
        return true;
      case OpKind::FlatMap:
        output(0) = attrString(op_, "fn") == "filter_rows" ? flatMapRows(input(0), true, input(1))
                                                           : flatMapRows(input(0), false);
        return true;
      case OpKind::Parallelize: setAll(parallelize(input(0), n)); return true;
      case OpKind::RandomOffChipLoad: randomLoad(); return true;
      case OpKind::RandomOffChipStore: randomStore(); return true;
      case OpKind::Promote:
        if (size_t(b()) != inType(0).shape.size()) return false;  // an inner Promote: a stop rewrite
        promoteOutermost();
        return true;
      default: return false;
    }
  }

 private:
  const StepGraph& g_;
  const ShapeResult& s_;
  const Op& op_;
  const std::map<std::string, Matrix>& in_;
  std::vector<TokenStream>& streams_;
  std::map<std::string, Matrix>& outputs_;
  const bool values_;  // false: timing-only, tensors neither read nor written
  const std::vector<int>* mergeOrder_;  // EagerMerge: the chunks' inputs in arrival order, or null
  FeedbackRound* rounds_;               // a round of a graph with feedback streams, or null

  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error(fmt::format("{} '{}': {}", opKindName(op_.kind), op_.name, why));
  }
  int b() const { return int(attrInt(g_, op_, "b")); }
  const TokenStream& input(size_t i) const { return streams_.at(op_.inputs.at(i).v); }
  const StreamType& inType(size_t i) const { return s_.types.at(op_.inputs.at(i).v); }
  TokenStream& output(size_t i) { return streams_.at(op_.outputs.at(i).v); }
  void setAll(std::vector<TokenStream> v) {
    for (size_t i = 0; i < v.size(); ++i) output(i) = std::move(v[i]);
  }

  void selectGen() {
    const int n = int(attrInt(g_, op_, "n"));
    const int64_t k = attrIntOr(g_, op_, "k", 1);
    const int first = int(attrIntOr(g_, op_, "first", 0)), of = int(attrIntOr(g_, op_, "of", n));
    const int64_t skip = attrIntOr(g_, op_, "skip", 0);  // the trace's tokens before this selector's first
    RoutingTrace tr = readRoutingTrace(tracePathFrom(attrString(op_, "trace"), op_.loc.file), of);
    if (of == n && tr.topK != k)
      fail(fmt::format("the trace routes each token to {} experts, the graph says k = {}", tr.topK, k));
    std::vector<int64_t> iter = attrIntList(g_, op_, "iter"), idx(iter.size(), 0);
    int64_t total = 1;
    for (int64_t d : iter) total *= d;
    if (skip < 0 || skip + total > int64_t(tr.experts.size()))
      fail(fmt::format("needs routed tokens {} .. {}, the trace has {}", skip, skip + total - 1, tr.experts.size()));
    TokenStream& out = output(0);
    for (int64_t t = 0; t < total; ++t) {
      // a region (of > n) keeps its experts only, renumbered from 0
      const std::vector<int> sel = localExperts(tr.experts[size_t(skip + t)], first, n);
      if (int64_t(sel.size()) > k)
        fail(fmt::format("token {} has {} experts among {} .. {}, more than k = {}", t, sel.size(), first, first + n - 1, k));
      out.push_back(selectorToken(sel, walkStop(iter, idx)));
      for (int l = int(idx.size()) - 1; l >= 0; --l) {
        if (++idx[l] < iter[size_t(l)]) break;
        idx[l] = 0;
      }
    }
    out.push_back(Token::done());
  }

  void addrGen() {
    const int64_t tiles = attrInt(g_, op_, "tiles");
    TokenStream& out = output(0);
    for (const Token& t : input(0)) {
      if (t.kind == Kind::Data) {
        if (t.sel.size() != 1) fail("needs one-hot selector elements");
        for (int64_t f = 0; f < tiles; ++f)
          out.push_back(selectorToken({int(t.sel[0] * tiles + f)}, f + 1 == tiles ? t.stop + 1 : 0));
      } else {
        out.push_back(t.kind == Kind::Stop ? Token::stopOnly(t.stop + 1) : t);
      }
    }
  }

  void reassembleOp() {
    std::vector<TokenStream> data;
    for (size_t i = 0; i + 1 < op_.inputs.size(); ++i) data.push_back(input(i));
    output(0) = reassemble(data, input(op_.inputs.size() - 1), b());
  }

  void partitionOp() {
    if (!rounds_) return setAll(partition(input(0), input(1), int(op_.outputs.size()), b()));
    size_t starved = 0;
    setAll(partition(input(0), input(1), int(op_.outputs.size()), b(), &starved));
    if (starved) rounds_->starved[int(&op_ - g_.ops.data())] = starved;
  }

  void eagerMergeOp() {
    std::vector<TokenStream> data;
    std::vector<int> order;
    std::vector<size_t> left;
    for (size_t i = 0; i < op_.inputs.size(); ++i) {
      data.push_back(input(i));
      left.push_back(size_t(countChunks(data.back(), b())));
      order.insert(order.end(), left.back(), int(i));
    }
    // The last timing's order, fitted to this round's inputs (a feedback round's counts may
    // differ; a deadlocked timing gives only the decisions it could make): the chunks it
    // names, then the rest of each input in turn.
    if (mergeOrder_) {
      order.clear();
      for (int i : *mergeOrder_)
        if (i >= 0 && size_t(i) < left.size() && left[size_t(i)] > 0) order.push_back(i), --left[size_t(i)];
      for (size_t i = 0; i < left.size(); ++i) order.insert(order.end(), left[i], int(i));
      if (rounds_) rounds_->followed[int(&op_ - g_.ops.data())] = order;
    }
    auto [d, sel] = eagerMerge(data, b(), order);
    output(0) = std::move(d);
    if (op_.outputs.size() == 2) output(1) = std::move(sel);
  }

  void reshapeOp() {
    const ElemType& e = inType(0).elem;
    int64_t rows = evalDim(e.tile.at(0), g_.symbols), cols = evalDim(e.tile.at(1), g_.symbols);
    bool pad = op_.attrs.count("pad") && attrString(op_, "pad") == "true";
    auto [d, p] = reshape(input(0), attrInt(g_, op_, "chunk"), b(), pad, rows, cols);
    output(0) = std::move(d);
    if (op_.outputs.size() == 2) output(1) = std::move(p);
  }

  // Promote over the outermost dim: the whole stream becomes one group (none if empty).
  void promoteOutermost() {
    TokenStream out = input(0);
    if (out.size() >= 2) out[out.size() - 2].stop = b();
    output(0) = std::move(out);
  }

  struct TileAt {
    const Matrix* m;
    int64_t r, c, tr, tc;  // tile shape, tile row / column index
  };
  // Tile `idx` of m in row-major tile order; `tile` = [rows, cols].
  TileAt tileAt(const Matrix& m, int64_t idx, const std::vector<int64_t>& tile) const {
    const int64_t perRow = m.cols / tile[1];
    TileAt t{&m, tile[0], tile[1], idx / perRow, idx % perRow};
    if ((t.tr + 1) * t.r > m.rows) fail(fmt::format("address {} leaves tensor '{}'", idx, attrString(op_, "tensor")));
    return t;
  }
  // The tile an address element names.
  // Word w of a meta row (uint32); a shape-only row (routing-only rounds) gives 0.
  int64_t metaWord(const Token& row, int64_t w) const {
    if (!row.data) return 0;
    if (w < 0 || w >= int64_t(row.data->size())) fail(fmt::format("meta word {} is outside its {}-word row", w, row.data->size()));
    return int64_t(row.data->at(size_t(w)));
  }

  int64_t addressOf(const Token& a) const {
    if (a.sel.size() != 1) fail("an address must name one tile");
    return a.sel[0];
  }

  // The declared shape of a tensor, as a Matrix without values (timing-only addressing).
  Matrix shapeOf(const std::string& name) const {
    for (const Tensor& t : g_.tensors)
      if (t.name == name) return {evalDim(t.shape.at(0), g_.symbols), evalDim(t.shape.at(1), g_.symbols), {}};
    fail(fmt::format("no tensor '{}'", name));
  }

  // What a load reads tiles from: the input tensor, or (timing-only) `shape` set to its shape.
  const Matrix& loadSource(Matrix& shape) const {
    const std::string name = attrString(op_, "tensor");
    if (!values_) return shape = shapeOf(name);
    auto st = outputs_.find(name);  // a state tensor, as its stores left it
    if (st != outputs_.end()) return st->second;
    auto it = in_.find(name);
    if (it == in_.end()) fail(fmt::format("input tensor '{}' was not given", name));
    return it->second;
  }
  // The loaded tile as a token with stop `stop` (shape-only in the timing-only model).
  Token loadTile(const TileAt& t, int stop) const {
    if (!values_) return Token::shapeOnly(t.r, t.c, stop);
    std::vector<uint32_t> d(size_t(t.r * t.c));
    for (int64_t r = 0; r < t.r; ++r)
      std::copy_n(t.m->data.begin() + (t.tr * t.r + r) * t.m->cols + t.tc * t.c, t.c, d.begin() + r * t.c);
    return Token::tile(t.r, t.c, std::move(d), stop);
  }

  // RandomOffChipLoad with `count`: per meta row, `count` tiles from tile `index` on, `step`
  // tiles apart; the run's last tile closes the new inner dim (address stop + 1). A meta row
  // is data even in the timing-only model: the run lengths are the shape.
  void runLoad() {
    const int64_t index = attrIntOr(g_, op_, "index", 0), count = attrInt(g_, op_, "count");
    const int64_t step = attrIntOr(g_, op_, "step", 1);
    const std::vector<int64_t> tile = attrIntList(g_, op_, "tile");
    Matrix shape;
    const Matrix& m = loadSource(shape);
    TokenStream& out = output(0);
    for (const Token& a : input(0)) {
      if (a.kind != Kind::Data) {
        Token t = a;
        if (t.kind == Kind::Stop) ++t.stop;
        out.push_back(t);
        continue;
      }
      if (!a.hasValues()) fail("the meta rows have no values (a run load needs them, also in the timing-only model)");
      const int64_t first = int64_t(a.data->at(size_t(index))), n = int64_t(a.data->at(size_t(count)));
      if (n < 1 || n > 65535) fail(fmt::format("a meta row asks for a run of {} tiles (1 .. 65535: the AG counts 16 bits)", n));
      for (int64_t j = 0; j < n; ++j) out.push_back(loadTile(tileAt(m, first + j * step, tile), j + 1 == n ? a.stop + 1 : 0));
    }
  }

  void randomLoad() {
    if (op_.attrs.count("count")) return runLoad();
    const std::vector<int64_t> tile = attrIntList(g_, op_, "tile");
    Matrix shape;
    const Matrix& m = loadSource(shape);
    TokenStream& out = output(0);
    // With `index` (an index load) the address is word `index` of a meta row (uint32).
    const bool meta = op_.attrs.count("index") > 0;
    for (const Token& a : input(0)) {
      if (a.kind != Kind::Data) {
        out.push_back(a);
        continue;
      }
      if (meta && !a.hasValues()) fail("the meta rows have no values (an index load needs them, also in the timing-only model)");
      out.push_back(loadTile(tileAt(m, meta ? metaWord(a, attrInt(g_, op_, "index")) : addressOf(a), tile), a.stop));
    }
  }

  void randomStore() {
    Matrix shape;
    if (!values_) shape = shapeOf(attrString(op_, "tensor"));
    Matrix& m = values_ ? outputs_.at(attrString(op_, "tensor")) : shape;
    const TokenStream &addr = input(0), &data = input(1);
    if (addr.size() != data.size()) fail("address and data streams differ in length");
    TokenStream acks;
    for (size_t i = 0; i < addr.size(); ++i) {
      if (addr[i].kind != Kind::Data) {
        acks.push_back(addr[i]);
        continue;
      }
      // With `index` the address is a meta row: the tile index in that word (uint32).
      const int64_t a = op_.attrs.count("index") ? metaWord(addr[i], attrInt(g_, op_, "index")) : addressOf(addr[i]);
      TileAt t = tileAt(m, a, {data[i].rows, data[i].cols});  // a store writes tiles of its data
      for (int64_t r = 0; r < t.r; ++r)
        for (int64_t c = 0; c < t.c && values_; ++c)
          m.data.at((t.tr * t.r + r) * m.cols + t.tc * t.c + c) = data[i].data->at(r * t.c + c);
      acks.push_back(flagToken(1, addr[i].stop));
    }
    if (!op_.outputs.empty()) output(0) = std::move(acks);
  }
};

}  // namespace

TokenStream selectOf(const StepGraph& g, const Op& op, const TokenStream& in) {
  return selectSignals(in, int(attrInt(g, op, "value")), int(attrInt(g, op, "n")), attrIntOr(g, op, "initial", 0));
}

bool runDynamicOp(const StepGraph& g, const ShapeResult& s, const Op& op, const std::map<std::string, Matrix>& inputs,
                  std::vector<TokenStream>& streams, std::map<std::string, Matrix>& outputs, bool values,
                  const std::vector<int>* mergeOrder, FeedbackRound* rounds) {
  try {
    return DynamicOp(g, s, op, inputs, streams, outputs, values, mergeOrder, rounds).run();
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(fmt::format("{} '{}': {}", opKindName(op.kind), op.name, e.what()));
  }
}

}  // namespace stepgen
