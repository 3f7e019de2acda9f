#include "model/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "ir/attrs.hpp"

namespace stepgen {

namespace {

// Rounds of the EagerMerge arrival-order fixed point before the model gives up (runModel).
constexpr int kMergeRounds = 20;

int64_t staticBytes(const StepGraph& g, const ElemType& e) {
  if (e.kind == ElemType::Kind::Tuple) {
    int64_t b = 0;
    for (const auto& p : e.parts) {
      int64_t pb = staticBytes(g, p);
      if (pb < 0) return -1;
      b += pb;
    }
    return b;
  }
  if (e.kind != ElemType::Kind::Tile) return 0;
  auto r = e.tile.at(0).evaluate(g.symbols), c = e.tile.at(1).evaluate(g.symbols);
  return r && c ? *r * *c * 4 : -1;
}

int64_t tokenBytes(const Token& t) {
  int64_t b = t.words() * 4;
  for (const Token& p : t.parts) b += tokenBytes(p);
  return b;
}

/// Figures of one stream: its element's bytes (the static tile of docs/step_semantics.md#element-bytes when the shape
/// is static, else the largest element that actually flowed: buffers are sized for it) and
/// the number of elements that flowed.
struct StreamFig {
  int64_t elemBytes = 0, count = 0, totalBytes = 0;  ///< totalBytes: every element that flowed
};
StreamFig figOf(const StepGraph& g, const ShapeResult& s, const std::vector<TokenStream>& st, StreamId id) {
  StreamFig f;
  int64_t maxSeen = 0;
  for (const Token& t : st.at(id.v))
    if (t.kind == Token::Kind::Data) ++f.count, maxSeen = std::max(maxSeen, tokenBytes(t)), f.totalBytes += tokenBytes(t);
  int64_t sb = staticBytes(g, s.types.at(id.v).elem);
  f.elemBytes = sb >= 0 ? sb : maxSeen;
  return f;
}

// FLOPs of one Map element (docs/step_semantics.md#flops): matmul 2*M*K*N, silu 8, mul/add/sub/exp/recip/rsqrt/scale 1 per output word, select 0.
int64_t mapFlops(const std::string& fn, const Token& a, const Token& out) {
  if (fn == "matmul" || fn == "matmul_t") return 2 * out.rows * out.cols * a.cols;
  if (fn == "select") return 0;  // a signal, no arithmetic
  return (fn == "silu" ? 8 : 1) * out.words();
}

}  // namespace

void addCostFigures(const StepGraph& g, const ShapeResult& s, const ArchModel& a, const std::vector<TokenStream>& st,
                    const Mapping* m, ModelResult& r) {
  std::map<int, int64_t> flopsPerUnit;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    auto in = [&] { return figOf(g, s, st, op.inputs.at(0)); };  // walked only where needed
    auto out = [&] { return figOf(g, s, st, op.outputs.at(0)); };
    switch (op.kind) {
      case OpKind::LinearOffChipLoad:
      case OpKind::RandomOffChipLoad: {
        StreamFig f = out();
        r.onchipBytes += 2 * f.elemBytes;
        r.offchipBytes += f.totalBytes;
        break;
      }
      case OpKind::SelectGen:  // the fabric loads one routing row per element
        if (op.attrs.count("tensor"))
          r.onchipBytes += 2 * 4 * kRoutingRowWords, r.offchipBytes += out().count * 4 * kRoutingRowWords;
        break;
      case OpKind::LinearOffChipStore:
      case OpKind::RandomOffChipStore: {
        StreamFig f = figOf(g, s, st, op.inputs.back());  // the data: a random store's second input
        r.onchipBytes += 2 * f.elemBytes;
        r.offchipBytes += f.totalBytes;
        break;
      }
      case OpKind::Bufferize: {
        const StreamType& inT = s.types.at(op.inputs[0].v);
        StreamFig f = in();
        int64_t buf = f.elemBytes;
        int b = int(attrInt(g, op, "b"));
        for (int d = 0; d < b; ++d) buf *= evalDim(inT.shape.at(inT.shape.size() - 1 - d), g.symbols);
        r.onchipBytes += f.elemBytes + 2 * buf;
        break;
      }
      case OpKind::Accum:
      case OpKind::Scan:
      case OpKind::Expand:  // one output element (docs/step_semantics.md#onchip-bytes)
        r.onchipBytes += out().elemBytes;
        break;
      case OpKind::Map: {
        std::string fn = attrString(op, "fn");
        int64_t flops = 0;
        const TokenStream &xs = st.at(op.inputs[0].v), &ys = st.at(op.outputs[0].v);
        for (size_t k = 0; k < xs.size() && k < ys.size(); ++k)
          if (ys[k].kind == Token::Kind::Data) flops += mapFlops(fn, xs[k].parts.empty() ? xs[k] : xs[k].parts[0], ys[k]);
        if (fn == "matmul" || fn == "matmul_t") r.onchipBytes += in().elemBytes + out().elemBytes;
        r.flops += flops;
        if (m) flopsPerUnit[m->ops[i].unit] += flops;
        break;
      }
      default:
        break;
    }
  }
  double bound = double(r.offchipBytes) / a.offchipBytesPerCycle();
  for (const auto& [u, f] : flopsPerUnit) bound = std::max(bound, double(f) / a.cu.flopsPerCycle);
  r.rooflineCycles = bound;
}

namespace {

// What runModel and replayModel do once the streams and the timing are final: the cost
// figures, the outputs, the wall time since `t0`.
void finishModel(const StepGraph& g, const ShapeResult& s, const ArchModel& a, const Mapping& m, FunctionalResult& f,
                 std::chrono::steady_clock::time_point t0, ModelResult& r) {
  addCostFigures(g, s, a, f.streams, &m, r);
  r.outputs = std::move(f.outputs);
  r.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

ModelResult runModel(const StepGraph& g, const ShapeResult& s, const Mapping& m, const ArchModel& a,
                     const ConfigLayout& layout, const ConfigImage& img, const std::map<std::string, Matrix>& inputs,
                     bool values) {
  auto t0 = std::chrono::steady_clock::now();
  ModelResult r;
  // An EagerMerge on a compute unit merges in arrival order, which only the timing knows:
  // time the streams, replay each merge's arbitration on its tiles' arrival cycles, and run
  // again with that order until it no longer changes. A deadlock under a guessed order (the
  // first round's: all of input 0 first) is no verdict while the timing contradicts the
  // guess: the decisions it could make become the next round's order.
  MergeOrders orders;
  FunctionalResult f;
  // Each round fixes at least the next merge decision (the ones before it were made on the
  // same arrivals), so a graph needs at most as many rounds as it has merge decisions.
  int64_t rounds = kMergeRounds;
  // The rounds need the streams' structure only, not the Map results (runFunctional
  // routingOnly; the timing reads no value a routing-only run leaves out): once the order
  // holds, the values are computed once. The dynamic GQA decode of 64 requests took 36
  // rounds, 15 s with values in each, 2.8 s so.
  const bool routing = values && std::any_of(g.ops.begin(), g.ops.end(), [](const Op& o) { return o.kind == OpKind::EagerMerge; });
  for (int round = 0;; ++round) {
    f = runFunctional(g, s, a, inputs, values, orders, round ? &f.streams : nullptr, routing);
    orders = f.followed;  // as fitted to the streams a feedback cycle gave this round
    r.timing = estimateTiming(g, m, a, layout, img, f.streams, orders);
    // A deadlock is the verdict unless the timing contradicts the order it was given.
    const bool revised = r.timing.deadlock && r.timing.mergeOrderRevised;
    r.mergeRounds = round + 1;
    if (r.timing.deadlock ? !revised : r.timing.mergeOrders == orders) break;
    if (round == 0 && !revised)
      for (const auto& [op, order] : r.timing.mergeOrders) rounds = std::max(rounds, int64_t(order.size()) + 1);
    if (round >= rounds) {
      auto it = r.timing.mergeOrders.begin();
      while (orders.count(it->first) && orders.at(it->first) == it->second) ++it;
      throw std::runtime_error(fmt::format("model: the arrival order of the EagerMerge '{}' did not settle in {} rounds",
                                           g.ops.at(size_t(it->first)).name, rounds));
    }
    // A finished timing names every merge; a revised deadlock only those it contradicts.
    for (const auto& [op, decided] : r.timing.mergeOrders) orders[op] = decided;
  }
  if (routing) f = runFunctional(g, s, a, inputs, true, orders, &f.streams);
  finishModel(g, s, a, m, f, t0, r);
  return r;
}

ModelResult replayModel(const StepGraph& g, const ShapeResult& s, const Mapping& m, const ArchModel& a,
                        const ConfigLayout& layout, const ConfigImage& img, const std::map<std::string, Matrix>& inputs,
                        const MergeOrders& orders) {
  auto t0 = std::chrono::steady_clock::now();
  ModelResult r;
  FunctionalResult f = runFunctional(g, s, a, inputs, true, orders);
  // A feedback graph fits a given order to the chunks its inputs have: a replayed order
  // must have been followed as given.
  for (const auto& [op, order] : orders) {
    const auto it = f.followed.find(op);
    if (it == f.followed.end() || it->second != order)
      throw std::runtime_error(fmt::format("model: the given order of the EagerMerge '{}' ({} decisions) does not fit its "
                                           "input streams",
                                           g.ops.at(size_t(op)).name, order.size()));
  }
  r.timing = estimateTiming(g, m, a, layout, img, f.streams, f.followed);
  finishModel(g, s, a, m, f, t0, r);
  return r;
}

}  // namespace stepgen
