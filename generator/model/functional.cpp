// Functional model: STeP operator semantics on token streams (docs/step_semantics.md).
#include "model/functional.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "common/fp.hpp"
#include "ir/stops.hpp"
#include "ir/attrs.hpp"
#include "ir/tile_walk.hpp"
#include "model/functional_dynamic.hpp"
#include "model/router.hpp"
#include "model/routing_ops.hpp"
#include "support/diag.hpp"
#include "passes/graph_order.hpp"

namespace stepgen {

namespace {

using Kind = Token::Kind;

Token withStop(Token t, int s) {
  t.stop = s;
  return t;
}

// M x K times K x N, each output summed strictly in k order from +0 (docs/hardware.md s.2),
// with the host's SSE arithmetic under FTZ/DAZ, which equals fp32Add/fp32Mul/bf16Mul bit
// for bit except for NaN payloads; NaNs are made canonical at the end (a NaN stays NaN
// through every later add, so the canonical NaN of the hardware is what remains).
// The j loop is innermost so the compiler can vectorise it without reordering any sum; an
// AVX2 clone is picked at run time where the CPU has it (no FMA: -ffp-contract=off).
__attribute__((target_clones("avx2", "default"))) std::vector<uint32_t> matmul(const std::vector<uint32_t>& A, const std::vector<uint32_t>& B, int64_t M, int64_t K,
                             int64_t N, bool bf16) {
  const uint32_t mask = bf16 ? 0xFFFF0000u : 0xFFFFFFFFu;  // bf16: the multiplier reads the upper half
  std::vector<float> b(B.size()), acc(static_cast<size_t>(N));
  for (size_t i = 0; i < B.size(); ++i) {
    const uint32_t v = B[i] & mask;
    std::memcpy(&b[i], &v, 4);
  }
  std::vector<uint32_t> d(size_t(M * N));
  for (int64_t i = 0; i < M; ++i) {
    float* __restrict ac = acc.data();
    for (int64_t j = 0; j < N; ++j) ac[j] = 0.0f;
    for (int64_t k = 0; k < K; ++k) {
      const uint32_t av = A[i * K + k] & mask;
      float a;
      std::memcpy(&a, &av, 4);
      const float* __restrict br = b.data() + k * N;
      for (int64_t j = 0; j < N; ++j) ac[j] = ac[j] + a * br[j];
    }
    for (int64_t j = 0; j < N; ++j) {
      uint32_t v;
      std::memcpy(&v, &ac[j], 4);
      d[i * N + j] = ((v & 0x7F800000u) == 0x7F800000u && (v & 0x007FFFFFu)) ? kFp32QNaN : v;
    }
  }
  return d;
}

// A tuple or tile without values (Token::shapeOnly): its result has none either.
bool lacksValues(const Token& t) {
  if (t.parts.empty()) return !t.hasValues();
  return std::any_of(t.parts.begin(), t.parts.end(), [](const Token& p) { return !p.hasValues(); });
}

// Rounds a graph with feedback streams may take to settle (Runner::runRounds): each round
// returns at least one more token round a cycle, so this bounds the tokens a cycle carries.
constexpr int64_t kFeedbackRounds = 4096;

class Runner {
 public:
  Runner(const StepGraph& g, const ShapeResult& s, const ArchModel& a, const std::map<std::string, Matrix>& in,
         bool values, const MergeOrders& orders, const std::vector<TokenStream>* warm, bool routingOnly)
      : g_(g), s_(s), a_(a), in_(in), values_(values), orders_(orders), warm_(warm), routingOnly_(routingOnly && values) {}

  FunctionalResult run() {
    enableFtzDaz();
    const OpOrder order = orderOps(g_);
    try {
      runGraph(order);
    } catch (const std::exception&) {
      if (!values_ || (!routingOnly_ && order.feedback.empty())) throw;  // no round ran routing only
      // A graph whose routing needs computed values (a run load of rows a Map wrote):
      // again, every op with values.
      noRouting_ = true;
      runGraph(order);
    }
    for (const Tensor& t : g_.tensors)  // scratch lives in DRAM only; it is not a result
      if (t.isScratch) r_.outputs.erase(t.name);
    return std::move(r_);
  }

 private:
  const StepGraph& g_;
  const ShapeResult& s_;
  const ArchModel& a_;
  const std::map<std::string, Matrix>& in_;
  const bool values_;  // false: the timing-only model, every tile shape-only
  const MergeOrders& orders_;
  const std::vector<TokenStream>* warm_;  // where the feedback streams start, or null: their initial tokens
  const bool routingOnly_;  // runFunctional's routingOnly (with values)
  // Routing only, now: Map and the run loads write shape-only tiles (and so whatever
  // follows them), stores write nothing; loads keep their values (selectors, run-load rows).
  bool routing_ = false;
  bool noRouting_ = false;  // a routing-only round failed: every round with values
  FunctionalResult r_;

  void runGraph(const OpOrder& order) {
    r_ = FunctionalResult{};
    r_.streams.resize(g_.streams.size());
    r_.followed = orders_;
    if (order.feedback.empty()) {
      routing_ = routingOnly_ && !noRouting_;
      runRound(order, nullptr);
    } else {
      runRounds(order);
    }
  }

  // One pass over the ops in dependency order, the output tensors zeroed first (a state
  // tensor starts as given: its loads run after its stores, orderOps).
  void runRound(const OpOrder& order, FeedbackRound* round) {
    for (const Tensor& t : g_.tensors) {
      if (!values_ || (!t.isOutput && !t.isScratch)) continue;
      if (t.isState) {
        auto it = in_.find(t.name);
        if (it == in_.end()) throw std::runtime_error(fmt::format("state tensor '{}' was not given", t.name));
        r_.outputs[t.name] = it->second;
        continue;
      }
      Matrix m;
      m.rows = evalDim(t.shape.at(0), g_.symbols);
      m.cols = evalDim(t.shape.at(1), g_.symbols);
      m.data.assign(size_t(m.rows * m.cols), 0);
      r_.outputs[t.name] = std::move(m);
    }
    // Ops append to their outputs; a feedback stream carries over to the next round.
    std::vector<TokenStream> carried;
    for (StreamId fb : order.feedback) carried.push_back(std::move(r_.streams.at(fb.v)));
    r_.streams.assign(r_.streams.size(), {});
    for (size_t k = 0; k < carried.size(); ++k) r_.streams.at(order.feedback[k].v) = std::move(carried[k]);
    for (int op : order.order) runOp(g_.ops[size_t(op)], round);
  }

  // A graph with feedback streams (docs/graph_format.md#feedback-streams): its consumers run
  // before its producer, so each feedback stream starts as its initial tokens (or as in
  // warm_) and every round reads the last round's; rounds repeat until no feedback stream
  // changes length (a select stream's tokens are all alike: then every op saw the streams it
  // produced). A Partition still short of selector elements then never gets them: the
  // cycle has stopped.
  void runRounds(const OpOrder& order) {
    const bool warm = warm_ && warm_->size() == r_.streams.size();
    for (StreamId fb : order.feedback)
      r_.streams.at(fb.v) = warm && !warm_->at(size_t(fb.v)).empty() ? warm_->at(size_t(fb.v))
                                                                     : selectOf(g_, g_.op(g_.stream(fb).producer), {Token::done()});
    auto sizes = [&] {
      std::vector<size_t> n;
      for (StreamId fb : order.feedback) n.push_back(r_.streams.at(fb.v).size());
      return n;
    };
    // Feedback streams carry selector elements only, which no Map or Accum result decides:
    // the first rounds settle them routing only (the dynamic GQA decode of 64 requests took
    // 3 to 4 rounds per call, each with every matmul), then the rounds go on from there in
    // the mode asked for (one round, when nothing changes) until the streams are still.
    const bool last = routingOnly_ && !noRouting_;
    routing_ = values_ && !noRouting_;
    for (int64_t round = 0;; ++round) {
      const std::vector<size_t> before = sizes();
      FeedbackRound fr;
      runRound(order, &fr);
      r_.followed = fr.followed;
      const bool settled = sizes() == before;
      if (settled && routing_ != last) {
        routing_ = last;
        continue;
      }
      if (!settled) {
        if (round + 1 < kFeedbackRounds) continue;
        const Op& p = g_.op(g_.stream(order.feedback[0]).producer);
        throw DiagError("R-408", p.loc,
                        fmt::format("the feedback streams still grow after {} rounds (a cycle that returns more tokens "
                                    "than it takes runs for ever); feedback stream '{}'",
                                    kFeedbackRounds, g_.stream(order.feedback[0]).name));
      }
      if (fr.starved.empty()) return;
      const auto& [op, left] = *fr.starved.begin();
      const Op& p = g_.ops[size_t(op)];
      throw DiagError("R-408", p.loc,
                      fmt::format("the feedback cycle stops: Partition '{}' gets no selector element for its last {} "
                                  "data chunk(s) after {} round(s); its selector '{}' is fed back by a cycle whose "
                                  "initial tokens are used up and not returned (deadlock)",
                                  p.name, left, round + 1, g_.stream(p.inputs.at(1)).name));
    }
  }

  const TokenStream& input(const Op& op, size_t i) const { return r_.streams.at(op.inputs.at(i).v); }
  TokenStream& output(const Op& op, size_t i = 0) { return r_.streams.at(op.outputs.at(i).v); }

  void runOp(const Op& op, FeedbackRound* round) {
    const auto order = orders_.find(int(&op - g_.ops.data()));
    if (runDynamicOp(g_, s_, op, in_, r_.streams, r_.outputs, values_ && !routing_, order == orders_.end() ? nullptr : &order->second,
                     round))
      return;
    switch (op.kind) {
      case OpKind::LinearOffChipLoad: return load(op);
      case OpKind::LinearOffChipStore: return store(op);
      case OpKind::Broadcast:
        for (size_t i = 0; i < op.outputs.size(); ++i) output(op, i) = input(op, 0);
        return;
      case OpKind::Zip: return zip(op);
      case OpKind::Map: return map(op);
      case OpKind::Accum: return accum(op);
      case OpKind::Promote: return restop(op, [&](int s) { return promoteStop(s, int(attrInt(g_, op, "b"))); });
      case OpKind::Flatten:
        return restop(op, [&](int s) { return flattenStop(s, int(attrInt(g_, op, "lo")), int(attrInt(g_, op, "hi"))); });
      case OpKind::Bufferize: return bufferize(op);
      case OpKind::Streamify: return streamify(op);
      case OpKind::RepeatStatic: return repeat(op);
      default:
        throw std::runtime_error(fmt::format("operator '{}' ({}) has no model in this version", op.name, opKindName(op.kind)));
    }
  }

  struct Walk : TileWalk {
    std::vector<int64_t> tile;
  };

  Walk walkOf(const Op& op) const {
    Walk w{tileWalkOf(g_, op), {}};
    if (op.attrs.count("tile")) {
      w.tile = attrIntList(g_, op, "tile");
    } else {  // a store without `tile` writes tiles of its input's shape
      const ElemType& e = s_.types.at(op.inputs.at(0).v).elem;
      w.tile = {evalDim(e.tile.at(0), g_.symbols), evalDim(e.tile.at(1), g_.symbols)};
    }
    return w;
  }

  // Calls f(tileRow, tileCol, stop) for every element of the walk, in order.
  template <typename F>
  void forEachTile(const Walk& w, F f) const {
    stepgen::forEachTile(w, [&](int64_t tr, int64_t tc, const std::vector<int64_t>& idx) { f(tr, tc, walkStop(w.iter, idx)); });
  }

  void load(const Op& op) {
    // The timing-only model reads values only for the tensors it is given (run-load meta rows).
    if (!values_ && !in_.count(attrString(op, "tensor"))) {
      Walk w = walkOf(op);
      forEachTile(w, [&](int64_t, int64_t, int stop) { output(op).push_back(Token::shapeOnly(w.tile[0], w.tile[1], stop)); });
      output(op).push_back(Token::done());
      return;
    }
    std::string name = attrString(op, "tensor");
    auto it = in_.find(name);
    auto written = r_.outputs.find(name);  // a stream an earlier section stored, or a state tensor
    if (it == in_.end() && written == r_.outputs.end())
      throw std::runtime_error(fmt::format("input tensor '{}' was not given", name));
    const Matrix& m = written != r_.outputs.end() ? written->second : it->second;
    Walk w = walkOf(op);
    TokenStream& out = output(op);
    forEachTile(w, [&](int64_t tr, int64_t tc, int stop) {
      std::vector<uint32_t> d(size_t(w.tile[0] * w.tile[1]));
      if ((tr + 1) * w.tile[0] > m.rows || (tc + 1) * w.tile[1] > m.cols)
        throw std::runtime_error(fmt::format("load '{}': tile ({}, {}) leaves tensor '{}'", op.name, tr, tc, name));
      for (int64_t r = 0; r < w.tile[0]; ++r)  // one row of the tile at a time
        std::copy_n(m.data.begin() + (tr * w.tile[0] + r) * m.cols + tc * w.tile[1], w.tile[1], d.begin() + r * w.tile[1]);
      out.push_back(Token::tile(w.tile[0], w.tile[1], std::move(d), stop));
    });
    out.push_back(Token::done());
  }

  // The input's words, in stream order, fill the walk's tiles one after the other (as the
  // AG writes beats): a token may span several walk tiles or a fraction of one (a dynamic
  // stream stored into a static walk).
  void store(const Op& op) {
    if (!values_ || routing_) return;
    Matrix& m = r_.outputs.at(attrString(op, "tensor"));
    Walk w = walkOf(op);
    std::vector<uint32_t> words;
    for (const Token& t : input(op, 0))
      if (t.kind == Kind::Data) words.insert(words.end(), t.data->begin(), t.data->end());
    size_t k = 0;
    forEachTile(w, [&](int64_t tr, int64_t tc, int) {
      for (int64_t r = 0; r < w.tile[0]; ++r)
        for (int64_t c = 0; c < w.tile[1] && k < words.size(); ++c)
          m.data.at((tr * w.tile[0] + r) * m.cols + tc * w.tile[1] + c) = words[k++];
    });
    if (k < words.size())
      throw std::runtime_error(fmt::format("store '{}': {} words do not fit the walk", op.name, words.size() - k));
  }

  void zip(const Op& op) {
    const TokenStream& a = input(op, 0);
    const TokenStream& b = input(op, 1);
    TokenStream& out = output(op);
    if (a.size() != b.size())
      throw std::runtime_error(fmt::format("Zip '{}': inputs carry {} and {} tokens", op.name, a.size(), b.size()));
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].kind != b[i].kind || a[i].stop != b[i].stop)
        throw std::runtime_error(fmt::format("Zip '{}': stop levels disagree at token {}", op.name, i));
      Token t;
      t.kind = a[i].kind;
      t.stop = a[i].stop;
      if (t.kind == Kind::Data) t.parts = {a[i], b[i]};
      out.push_back(t);
    }
  }

  // Map(fn: topk | topk_weights | topk_logits, k): per row of gate logits the chosen experts
  // (a selector), their weights as k rows with the weight in word 0 (model/router.hpp), or
  // a row of kRoutingRowWords words: the chosen logits in words 0 .. k-1 (ascending expert)
  // and -inf in the rest. The choice is
  // routing: it needs the logits' values (a shape-only row fails, and the model runs again
  // with values); the weights are shape-only where values are not computed.
  void topk(const Op& op, const std::string& fn) {
    const int k = int(attrInt(g_, op, "k"));
    TokenStream& out = output(op);
    for (const Token& t : input(op, 0)) {
      if (t.kind != Kind::Data) {
        out.push_back(t);
        continue;
      }
      const bool choose = fn == "topk" || fn == "topk_logits";
      if (!t.hasValues() && choose)
        throw std::runtime_error(fmt::format("Map(topk) '{}': the gate logits have no values (the choice needs them)", op.name));
      if (!choose && (routing_ || !t.hasValues())) {
        out.push_back(Token::shapeOnly(k, kRoutingRowWords, t.stop));
        continue;
      }
      const std::vector<int> chosen = topkSelect(t.data->data(), t.cols, k);
      if (fn == "topk_logits") {  // the chosen logits in slot order, -inf after them
        std::vector<uint32_t> d(size_t(kRoutingRowWords), 0xFF800000u);  // -inf
        for (int j = 0; j < k; ++j) d[size_t(j)] = (*t.data)[size_t(chosen[size_t(j)])];
        out.push_back(Token::tile(1, kRoutingRowWords, std::move(d), t.stop));
        continue;
      }
      if (choose) {
        out.push_back(selectorToken(chosen, t.stop));
        continue;
      }
      const std::vector<uint32_t> w = topkWeights(t.data->data(), chosen);
      std::vector<uint32_t> d(size_t(k * kRoutingRowWords), 0);
      for (int j = 0; j < k; ++j) d[size_t(j * kRoutingRowWords)] = w[size_t(j)];
      out.push_back(Token::tile(k, kRoutingRowWords, std::move(d), t.stop));
    }
  }

  void map(const Op& op) {
    std::string fn = attrString(op, "fn");
    if (fn == "topk" || fn == "topk_weights" || fn == "topk_logits") return topk(op, fn);
    bool bf16 = a_.cu.format == NumberFormat::Bf16Fp32;
    // The word function, picked once: comparing fn per word was a sixth of the model's time
    // on the dynamic GQA graph.
    uint32_t (*unary)(uint32_t) = fn == "silu" ? silu : fn == "exp" ? fp32Exp : fn == "recip" ? fp32Recip
                                : fn == "rsqrt" ? fp32Rsqrt : nullptr;
    uint32_t (*binary)(uint32_t, uint32_t) = fn == "mul" ? fp32Mul : fn == "sub" ? fp32Sub : fp32Add;
    TokenStream& out = output(op);
    for (const Token& t : input(op, 0)) {
      if (t.kind != Kind::Data) {
        out.push_back(t);
        continue;
      }
      if (routing_ || lacksValues(t)) {
        const Token& x = t.parts.empty() ? t : t.parts.at(0);
        const int64_t cols = fn == "matmul" ? t.parts.at(1).cols : fn == "matmul_t" ? t.parts.at(1).rows : x.cols;
        out.push_back(Token::shapeOnly(x.rows, cols, t.stop));
      } else if (fn == "matmul") {
        const Token &x = t.parts.at(0), &y = t.parts.at(1);
        out.push_back(Token::tile(x.rows, y.cols, matmul(*x.data, *y.data, x.rows, x.cols, y.cols, bf16), t.stop));
      } else if (fn == "matmul_t") {  // b arrives N x K (weights stored [out, in])
        const Token &x = t.parts.at(0), &y = t.parts.at(1);
        std::vector<uint32_t> bt(y.data->size());
        for (int64_t n = 0; n < y.rows; ++n)
          for (int64_t k = 0; k < y.cols; ++k) bt[size_t(k * y.rows + n)] = (*y.data)[size_t(n * y.cols + k)];
        out.push_back(Token::tile(x.rows, y.rows, matmul(*x.data, bt, x.rows, x.cols, y.rows, bf16), t.stop));
      } else if (fn == "scale_rows") {  // row r of a times the scalar b[r][0], fp32 multiply
        const Token &x = t.parts.at(0), &y = t.parts.at(1);
        std::vector<uint32_t> d(x.data->size());
        for (int64_t r = 0; r < x.rows; ++r)
          for (int64_t c = 0; c < x.cols; ++c) d[size_t(r * x.cols + c)] = fp32Mul((*x.data)[size_t(r * x.cols + c)], (*y.data)[size_t(r * y.cols)]);
        out.push_back(Token::tile(x.rows, x.cols, std::move(d), t.stop));
      } else if (fn == "rowmax" || fn == "rowsum") {  // each row's max / sum in every word of the row
        std::vector<uint32_t> d(*t.data);
        for (int64_t r = 0; r < t.rows; ++r) {
          const uint32_t v = rowReduce(t.data->data() + r * t.cols, t.cols, a_.wordsPerBeat(), fn == "rowsum");
          std::fill_n(d.begin() + r * t.cols, t.cols, v);
        }
        out.push_back(Token::tile(t.rows, t.cols, std::move(d), t.stop));
      } else if (unary) {
        std::vector<uint32_t> d(*t.data);
        for (auto& v : d) v = unary(v);
        out.push_back(Token::tile(t.rows, t.cols, std::move(d), t.stop));
      } else {
        const Token &x = t.parts.at(0), &y = t.parts.at(1);
        std::vector<uint32_t> d(x.data->size());
        for (size_t i = 0; i < d.size(); ++i) d[i] = binary((*x.data)[i], (*y.data)[i]);
        out.push_back(Token::tile(x.rows, x.cols, std::move(d), t.stop));
      }
    }
  }

  void accum(const Op& op) {
    int b = int(attrInt(g_, op, "b"));
    const bool retile = attrString(op, "fn") == "retile", max = attrString(op, "fn") == "max";
    const bool rescale = attrString(op, "fn") == "rescale_add";
    const ElemType& in = s_.types.at(op.inputs.at(0).v).elem;
    const ElemType& e = rescale ? in.parts.at(0) : in;  // rescale_add: the tuple (x, a)
    TokenStream& out = output(op);
    std::vector<uint32_t> acc;
    int64_t accRows = 0, rows = 0, cols = 0;
    bool any = false, shapeOnly = false;
    auto result = [&](int64_t r, int s) {
      return shapeOnly ? Token::shapeOnly(r, cols, s) : Token::tile(r, cols, acc, s);
    };
    auto close = [&](int s) {
      StopSplit sp = accumStop(s, b);
      if (!sp.emit) return;
      if (retile) {
        if (any) out.push_back(result(accRows, sp.outStop));
        else if (sp.outStop > 0) out.push_back(Token::stopOnly(sp.outStop));
      } else {
        if (!any) {  // empty group: the init tile, of the (then necessarily static) element shape
          rows = evalDim(e.tile.at(0), g_.symbols), cols = evalDim(e.tile.at(1), g_.symbols);
          acc.assign(size_t(rows * cols), 0);
          shapeOnly = !values_ || routing_;
        }
        out.push_back(result(rows, sp.outStop));
      }
      acc.clear(), accRows = 0, any = false, shapeOnly = false;
    };
    untilDone(op, out, [&](const Token& tok) {
      const Token& t = rescale && tok.kind == Kind::Data ? tok.parts.at(0) : tok;
      if (t.kind == Kind::Data) {
        rows = t.rows, cols = t.cols;
        shapeOnly = shapeOnly || !t.hasValues();
        if (shapeOnly) {
          accRows += t.rows;
        } else if (retile) {
          acc.insert(acc.end(), t.data->begin(), t.data->end());
          accRows += t.rows;
        } else {
          if (!any) acc.assign(t.data->size(), 0);
          // max: the group's first tile as it is (not max(+0, x)); add: +0 + x; rescale_add
          // (the online-softmax rescale): acc * a + x, two fp32 roundings, from +0.
          const std::vector<uint32_t>* a = rescale ? tok.parts.at(1).data.get() : nullptr;
          for (size_t i = 0; i < acc.size(); ++i)
            acc[i] = a     ? fp32Add(fp32Mul(acc[i], (*a)[i]), (*t.data)[i])
                     : !max ? fp32Add(acc[i], (*t.data)[i])
                     : any  ? fp32Max(acc[i], (*t.data)[i])
                            : (*t.data)[i];
        }
        any = true;
      }
      close(tok.stop);
    });
  }

  // Calls f on every token of input 0 before the first Done, then passes that Done to out.
  template <typename F>
  void untilDone(const Op& op, TokenStream& out, F f) {
    for (const Token& t : input(op, 0)) {
      if (t.kind == Kind::Done) {
        out.push_back(t);
        return;
      }
      f(t);
    }
  }

  template <typename F>
  void restop(const Op& op, F f) {
    TokenStream& out = output(op);
    for (Token t : input(op, 0)) {
      if (t.kind != Kind::Done) t.stop = f(t.stop);
      out.push_back(t);
    }
  }

  // A reference token: Data whose parts are the buffered tokens, stop = s_ref.
  void bufferize(const Op& op) {
    int b = int(attrInt(g_, op, "b"));
    TokenStream& out = output(op);
    Token buf;
    untilDone(op, out, [&](const Token& t) {
      StopSplit sp = bufferizeStop(t.stop, b);
      if (t.kind == Kind::Data || !sp.emit) buf.parts.push_back(t);
      if (sp.emit) {
        buf.stop = sp.outStop;
        out.push_back(buf);
        buf = Token();
      }
    });
  }

  void streamify(const Op& op) {
    const Op& bop = g_.op(g_.stream(op.inputs.at(0)).producer);
    int b = int(attrInt(g_, bop, "b"));
    int64_t n = attrInt(g_, op, "repeat");
    TokenStream& out = output(op);
    untilDone(op, out, [&](const Token& ref) { readOut(ref.parts, b, n, ref.stop, out); });
  }

  // Reads a buffer n times: inner stops as stored; the last element of each copy gets
  // stop b, of the last copy b + 1 + sRef (docs/hardware.md section 2, MU).
  static void readOut(const std::vector<Token>& parts, int b, int64_t n, int sRef, TokenStream& out) {
    if (parts.empty()) {
      out.push_back(Token::stopOnly(b + 1 + sRef));
      return;
    }
    for (int64_t r = 0; r < n; ++r)
      for (size_t j = 0; j < parts.size(); ++j) {
        int s = parts[j].stop;
        if (j + 1 == parts.size()) s = r + 1 < n ? b : b + 1 + sRef;
        out.push_back(withStop(parts[j], s));
      }
  }

  void repeat(const Op& op) {
    int64_t n = attrInt(g_, op, "n");
    TokenStream& out = output(op);
    untilDone(op, out, [&](const Token& t) {
      if (t.kind == Kind::Stop) out.push_back(Token::stopOnly(repeatLastStop(t.stop)));
      else readOut({t}, 0, n, t.stop, out);
    });
  }
};

}  // namespace

int walkStop(const std::vector<int64_t>& dims, const std::vector<int64_t>& idx) {
  int s = 0;
  for (int l = int(dims.size()) - 1; l >= 1; --l) {
    if (idx[l] != dims[l] - 1) break;
    ++s;
  }
  return s;
}

FunctionalResult runFunctional(const StepGraph& g, const ShapeResult& s, const ArchModel& a,
                               const std::map<std::string, Matrix>& inputs, bool values, const MergeOrders& orders,
                               const std::vector<TokenStream>* warm, bool routingOnly) {
  return Runner(g, s, a, inputs, values, orders, warm, routingOnly).run();
}

}  // namespace stepgen
