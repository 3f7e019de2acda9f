// buildMoeGraph / moeInputs: the MoE layer of docs/step_semantics.md#dynamic-tiling as a STeP graph. The text is
// assembled line by line in a fixed order so that it is byte-for-byte reproducible.
#include "builders/moe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "builders/swiglu.hpp"
#include "common/fp.hpp"
#include "ir/graph.hpp"
#include "support/diag.hpp"

namespace stepgen {

namespace {

std::string list(const std::string& stem, int64_t n) {
  std::string s;
  for (int64_t e = 0; e < n; ++e) s += (e ? ", " : "") + fmt::format("{}_{}", stem, e);
  return s;
}

}  // namespace

void checkMoeParams(const MoeParams& p) {
  auto bad = [](const std::string& msg) { throw DiagError("G-120", SourceLoc{}, "moe: " + msg); };
  const std::pair<const char*, int64_t> sizes[] = {{"batch", p.batch},     {"hidden", p.hidden}, {"ffn", p.ffn},
                                                   {"experts", p.experts}, {"k", p.topK},        {"tile_f", p.tileF}};
  for (const auto& [name, v] : sizes)
    if (v < 1) bad(fmt::format("{} must be >= 1, got {}", name, v));
  if (p.tileB < 0) bad(fmt::format("tile_b must be >= 0 (0 = dynamic tiling), got {}", p.tileB));
  if (p.topK > p.experts) bad(fmt::format("k = {} exceeds the {} experts", p.topK, p.experts));
  if (p.topK > kRoutingWeightWord)
    bad(fmt::format("k = {} exceeds {}, the experts one routing row holds", p.topK, kRoutingWeightWord));
  if (p.ffn % p.tileF != 0) bad(fmt::format("tile_f {} does not divide ffn {}", p.tileF, p.ffn));
  if (p.residual && p.dispatchOnly) bad("the residual add needs the whole layer, not --dispatch-only");
  if (p.router && (p.regions || (p.block > 0 && p.block < p.batch)))
    bad("the on-fabric router routes the whole batch at once, without --regions or --block");
  if (p.block < 0 || (p.block > 0 && p.batch % p.block != 0))
    bad(fmt::format("block {} does not divide batch {}", p.block, p.batch));
  if (p.block > 0 && p.block < p.batch && (p.dispatchOnly || p.residual || p.regions))
    bad("blocks are for the whole layer without --dispatch-only, --residual or --regions");
}

namespace {

std::string buildMoeLayer(const MoeParams& p);

// Appends `sfx` to every op and stream name of the op lines in `ops` (keys name, in, out;
// identifiers only: tensor, fn and symbol names are left alone).
std::string suffixNames(const std::string& ops, const std::string& sfx) {
  static const std::regex name(R"(\{name: (\w+))"), port(R"(, (in|out): (\[[^\]]*\]|\w+))"), ident(R"(\w+)");
  std::string out;
  std::istringstream in(ops);
  for (std::string line; std::getline(in, line);) {
    line = std::regex_replace(line, name, "{name: $1" + sfx);
    std::string done;
    auto it = std::sregex_iterator(line.begin(), line.end(), port);
    size_t last = 0;
    for (; it != std::sregex_iterator(); ++it) {
      done += line.substr(last, size_t(it->position(0)) - last);
      done += ", " + (*it)[1].str() + ": " + std::regex_replace((*it)[2].str(), ident, "$&" + sfx);
      last = size_t(it->position(0) + it->length(0));
    }
    out += done + line.substr(last) + "\n";
  }
  return out;
}

// One op line of `ops` that names `op`, with `extra` added before its closing brace.
std::string addAttrs(std::string ops, const std::string& op, const std::string& extra) {
  const size_t at = ops.find("{name: " + op + ",");
  if (at == std::string::npos) throw std::logic_error("internal error: no op " + op);
  ops.insert(ops.find('}', at), extra);
  return ops;
}

}  // namespace

std::string buildMoeGraph(const MoeParams& p) {
  checkMoeParams(p);
  if (p.block == 0 || p.block >= p.batch) return buildMoeLayer(p);
  // One block's layer (its iterations bb), its ops renamed and placed on the block's rows.
  MoeParams one = p;
  one.block = 0;
  const std::string whole = buildMoeLayer(one), blockText = buildMoeLayer([&] { MoeParams q = one; q.batch = p.block; return q; }());
  std::string head = whole.substr(0, whole.find("ops:\n"));
  head.replace(head.find("schedule: {"), 11, fmt::format("schedule: {{bb: {}, ", p.block));
  std::string blockOps = blockText.substr(blockText.find("ops:\n") + 5);
  for (const char* it : {"iter: [B]", "iter: [B, K]"})
    for (size_t at; (at = blockOps.find(it)) != std::string::npos;) blockOps.replace(at, 8, "iter: [bb");
  std::string y = head + fmt::format("# The batch in {} blocks of {} tokens, one after the other; each reads every expert's weights.\nops:\n",
                                     p.batch / p.block, p.block);
  for (int64_t b = 0; b < p.batch / p.block; ++b) {
    std::string ops = blockOps;
    ops = addAttrs(ops, "route", fmt::format(", skip: {}", b * p.block));
    ops = addAttrs(ops, "load_x", fmt::format(", origin: [{}, 0]", b * p.block));
    ops = addAttrs(ops, "load_rw", fmt::format(", origin: [{}, 0]", b * p.block * p.topK));
    ops = addAttrs(ops, "store_y", fmt::format(", origin: [{}, 0]", b * p.block));
    y += suffixNames(ops, fmt::format("_b{}", b));
  }
  return y;
}

Matrix moeSpreadTable(int64_t k) {
  Matrix m{k * kRoutingRowWords, kRoutingRowWords, std::vector<uint32_t>(size_t(k * kRoutingRowWords * kRoutingRowWords), 0)};
  for (int64_t j = 0; j < k; ++j) m.data[size_t(j * kRoutingRowWords * kRoutingRowWords + j)] = floatToBits(1.0f);
  return m;
}

int64_t moeDispatchRows(const MoeParams& p) { return p.batch * p.topK + (p.tileB ? p.experts * (p.tileB - 1) : 0); }

namespace {

// The layer's text routing the whole batch at once (buildMoeGraph without blocks).
std::string buildMoeLayer(const MoeParams& p) {
  const bool dyn = p.tileB == 0;
  const int64_t E = p.experts;
  std::string y;
  auto line = [&](const std::string& s) { y += s + "\n"; };
  line("# Top-k Mixture-of-Experts layer of SwiGLU experts (docs/step_semantics.md#dynamic-tiling).");
  line("# Written by stepgen (buildMoeGraph). y[t] = sum over token t's experts e (ascending) of");
  line(p.router ? "# rw[t, e] * ((silu(x Wg_e^T) * (x Wu_e^T)) Wd_e); the router picks e and rw from x Wr^T (Map topk)."
                 : "# rw[t, e] * ((silu(x Wg_e^T) * (x Wu_e^T)) Wd_e); the routing replays a trace.");
  line(dyn ? "# Dynamic tiling: each expert's tokens form one tile of T_e rows (Promote)."
           : fmt::format("# Static token tile {}: each expert's tokens are padded to whole tiles (Reshape).", p.tileB));
  if (p.dispatchOnly) line("# Dispatch only: ends at EagerMerge and stores the expert-grouped token tiles in xm.");
  if (p.residual) line("# Residual: y = x + MoE(x); the x rows go to the router and, through a Broadcast, to the final add.");
  line(fmt::format("stepgraph: moe_{}{}{}{}", p.dispatchOnly ? "dispatch_" : "", p.residual ? "residual_" : "",
                   p.router ? "router_" : "",
                   dyn ? std::string("dynamic") : fmt::format("tb{}", p.tileB)));
  line(fmt::format("symbols: {{B: {}, D: {}, F: {}, E: {}, K: {}}}", p.batch, p.hidden, p.ffn, E, p.topK));
  line(dyn ? fmt::format("schedule: {{tf: {}}}", p.tileF) : fmt::format("schedule: {{tb: {}, tf: {}}}", p.tileB, p.tileF));
  const bool disp = p.dispatchOnly;
  line("tensors:");
  line("  x:  {shape: [B, D], role: input}");
  if (p.router) line("  wr: {shape: [E, D], role: input}");
  else line(fmt::format("  routing: {{shape: [B, {}], role: input}}", kRoutingRowWords));
  if (disp) {
    line(fmt::format("  xm: {{shape: [{}, D], role: output}}", moeDispatchRows(p)));
  } else {
    line("  wg: {shape: [E*F, D], role: input}");
    line("  wu: {shape: [E*F, D], role: input}");
    line("  wd: {shape: [E*F, D], role: input}");
    // Router weights, one 64-byte row per (token, slot): the weight in word 0, the rest 0
    // (an address generator moves whole 64-byte pieces; scale_rows reads column 0). The
    // router writes a token's k pieces as one row (the same bytes).
    if (p.router) {
      line(fmt::format("  rw: {{shape: [B, K*{}], role: state}}", kRoutingRowWords));
      line(fmt::format("  spread: {{shape: [K*{0}, {0}], role: input}}", kRoutingRowWords));
    } else {
      line(fmt::format("  rw: {{shape: [B*K, {}], role: input}}", kRoutingRowWords));
    }
    line("  y:  {shape: [B, D], role: output}");
  }
  line("ops:");
  if (!p.router)
    line(fmt::format("  - {{name: route, op: SelectGen, trace: {}, tensor: routing, n: E, k: K, iter: [B], out: sel}}", p.trace));
  if (!disp) line("  - {name: bsel, op: Broadcast, in: sel, out: [sel_p, sel_r]}");
  line(fmt::format("  - {{name: load_x, op: LinearOffChipLoad, tensor: x, tile: [1, D], iter: [B], strides: [[1, 0]], out: {}}}",
                   p.router ? "xr_all" : "xr"));
  if (p.router) {  // the gate: x Wr^T per token (Wr re-read per token), its top k and their weights
    line("  - {name: bgate, op: Broadcast, in: xr_all, out: [xr, xr_gate]}");
    line("  - {name: load_wr, op: LinearOffChipLoad, tensor: wr, tile: [E, D], iter: [B], strides: [[0, 0]], out: wr_t}");
    line("  - {name: zip_gate, op: Zip, in: [xr_gate, wr_t], out: xwr}");
    line("  - {name: gate, op: Map, fn: matmul_t, in: xwr, out: logits}");
    if (disp) {  // the choice only: the dispatch needs no weights
      line("  - {name: topk, op: Map, fn: topk, k: K, in: logits, out: sel}");
    } else {
      // The weights: the softmax over the chosen logits (topk_logits puts them first and -inf
      // in the other words, whose exp is 0), then weight j moved to word 16 j by a product
      // with `spread` (0/1), so that the row is the token's k routing-weight pieces.
      line("  - {name: blogits, op: Broadcast, in: logits, out: [logits_s, logits_w]}");
      line("  - {name: topk, op: Map, fn: topk, k: K, in: logits_s, out: sel}");
      line("  - {name: topk_l, op: Map, fn: topk_logits, k: K, in: logits_w, out: lk}");
      line("  - {name: blk, op: Broadcast, in: lk, out: [lk_m, lk_x]}");
      line("  - {name: lmax, op: Map, fn: rowmax, in: lk_m, out: lm}");
      line("  - {name: zip_lm, op: Zip, in: [lk_x, lm], out: lkm}");
      line("  - {name: lsub, op: Map, fn: sub, in: lkm, out: ld}");
      line("  - {name: lexp, op: Map, fn: exp, in: ld, out: le}");
      line("  - {name: ble, op: Broadcast, in: le, out: [le_s, le_x]}");
      line("  - {name: lsum, op: Map, fn: rowsum, in: le_s, out: ls}");
      line("  - {name: lrcp, op: Map, fn: recip, in: ls, out: lr}");
      line("  - {name: zip_lr, op: Zip, in: [le_x, lr], out: ler}");
      line("  - {name: lnorm, op: Map, fn: mul, in: ler, out: wrow}");
      line(fmt::format("  - {{name: load_spread, op: LinearOffChipLoad, tensor: spread, tile: [K*{0}, {0}], iter: [B], strides: [[0, 0]], "
                       "out: spread_t}}",
                       kRoutingRowWords));
      line("  - {name: zip_sp, op: Zip, in: [wrow, spread_t], out: wsp}");
      line("  - {name: spread_w, op: Map, fn: matmul_t, in: wsp, out: wts}");
      line(fmt::format("  - {{name: store_rw, op: LinearOffChipStore, in: wts, tensor: rw, tile: [1, K*{}], iter: [B], strides: [[1, 0]]}}",
                       kRoutingRowWords));
    }
  }
  if (p.residual) line("  - {name: bres, op: Broadcast, in: xr, out: [xr_p, xr_res]}");
  line(fmt::format("  - {{name: part_x, op: Partition, in: [{}, {}], n: E, b: 0, out: [{}]}}", p.residual ? "xr_p" : "xr",
                   disp ? "sel" : "sel_p", list("xe", E)));
  for (int64_t e = 0; e < E; ++e) {
    if (dyn) {
      line(fmt::format("  - {{name: promote_{0}, op: Promote, b: 1, in: xe_{0}, out: xg_{0}}}", e));
    } else if (disp) {
      line(fmt::format("  - {{name: reshape_{0}, op: Reshape, chunk: tb, b: 0, pad: true, in: xe_{0}, out: xg_{0}}}", e));
    } else {
      line(fmt::format("  - {{name: reshape_{0}, op: Reshape, chunk: tb, b: 0, pad: true, in: xe_{0}, out: [xg_{0}, pg_{0}]}}", e));
      line(fmt::format("  - {{name: retile_p_{0}, op: Accum, fn: retile, b: 1, in: pg_{0}, out: pt_{0}}}", e));
    }
    line(fmt::format("  - {{name: retile_x_{0}, op: Accum, fn: retile, b: 1, in: xg_{0}, out: xt_{0}}}", e));
  }
  if (disp) {
    line(fmt::format("  - {{name: merge, op: EagerMerge, b: 0, in: [{}], out: xm}}", list("xt", E)));
    line(fmt::format("  - {{name: store_xm, op: LinearOffChipStore, in: xm, tensor: xm, tile: [1, D], iter: [{}], strides: [[1, 0]]}}",
                     moeDispatchRows(p)));
    return y;
  }
  line(fmt::format("  - {{name: merge, op: EagerMerge, b: 0, in: [{}], out: [xm, selm]}}", list("xt", E)));
  line("  - {name: bselm, op: Broadcast, in: selm, out: [selm_g, selm_u, selm_d, selm_o]}");
  line("  - {name: repeat_x, op: RepeatStatic, n: F/tf, in: xm, out: xrep}");
  line("  - {name: bx, op: Broadcast, in: xrep, out: [x_g, x_u]}");
  for (const char* w : {"g", "u", "d"}) {
    line(fmt::format("  - {{name: addr_{0}, op: AddrGen, tiles: F/tf, in: selm_{0}, out: a_{0}}}", w));
    line(fmt::format("  - {{name: load_w{0}, op: RandomOffChipLoad, tensor: w{0}, tile: [tf, D], in: a_{0}, out: w{0}_t}}", w));
  }
  y += swigluCoreOps("matmul_t", "");
  line(fmt::format("  - {{name: part_o, op: Partition, in: [o, selm_o], n: E, b: 0, out: [{}]}}", list("oe", E)));
  for (int64_t e = 0; e < E; ++e) {
    if (dyn)
      line(fmt::format("  - {{name: rows_{0}, op: FlatMap, fn: rows, b: 1, in: oe_{0}, out: or_{0}}}", e));
    else
      line(fmt::format("  - {{name: rows_{0}, op: FlatMap, fn: filter_rows, b: 1, in: [oe_{0}, pt_{0}], out: or_{0}}}", e));
    line(fmt::format("  - {{name: flat_{0}, op: Flatten, lo: 0, hi: 1, in: or_{0}, out: of_{0}}}", e));
  }
  line(fmt::format("  - {{name: reassemble, op: Reassemble, in: [{}, sel_r], n: E, b: 0, out: yk}}", list("of", E)));
  line(fmt::format("  - {{name: load_rw, op: LinearOffChipLoad, tensor: rw, tile: [1, {}], iter: [B, K], strides: {}, out: rwt}}",
                   kRoutingRowWords, p.router ? "[[1, 0], [0, 1]]" : "[[K, 0], [1, 0]]"));
  line("  - {name: zip_w, op: Zip, in: [yk, rwt], out: yw}");
  line("  - {name: scale, op: Map, fn: scale_rows, in: yw, out: ys}");
  line("  - {name: acc_y, op: Accum, fn: add, b: 1, in: ys, out: yo}");
  if (p.residual) {
    line("  - {name: zip_res, op: Zip, in: [yo, xr_res], out: yx}");
    line("  - {name: add_res, op: Map, fn: add, in: yx, out: yr}");
  }
  line(fmt::format("  - {{name: store_y, op: LinearOffChipStore, in: {}, tensor: y, iter: [B], strides: [[1, 0]]}}",
                   p.residual ? "yr" : "yo"));
  return y;
}

}  // namespace

std::map<std::string, Matrix> moeRoutingInputs(const MoeParams& p, const std::vector<std::vector<int>>& experts,
                                               std::mt19937& rng) {
  std::map<std::string, Matrix> in;
  if (p.router) {
    in["rw"] = Matrix{p.batch, p.topK * kRoutingRowWords, std::vector<uint32_t>(size_t(p.batch * p.topK * kRoutingRowWords), 0)};
    in["spread"] = moeSpreadTable(p.topK);
    return in;
  }
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Matrix rw{p.batch * p.topK, kRoutingRowWords, std::vector<uint32_t>(size_t(p.batch * p.topK * kRoutingRowWords), 0)};
  for (int64_t t = 0; t < p.batch; ++t) {
    std::vector<double> logit(size_t(p.topK));
    for (double& l : logit) l = 2.0 * u(rng);
    double z = 0;
    for (double l : logit) z += std::exp(l);
    // Slot j's weight goes to the position of its expert in ascending order.
    const std::vector<int>& ex = experts.at(size_t(t));
    std::vector<size_t> order(ex.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ex[a] < ex[b]; });
    for (size_t pos = 0; pos < order.size(); ++pos)
      rw.data[size_t((t * p.topK + int64_t(pos)) * kRoutingRowWords)] = floatToBits(float(std::exp(logit[order[pos]]) / z));
  }
  // The routing rows of the fabric: experts ascending, weights in the same order.
  const int64_t R = kRoutingRowWords;
  Matrix routing{p.batch, R, std::vector<uint32_t>(size_t(p.batch * R), 0)};
  for (int64_t t = 0; t < p.batch; ++t) {
    std::vector<int> ex = experts.at(size_t(t));
    std::sort(ex.begin(), ex.end());
    for (size_t j = 0; j < ex.size(); ++j) {
      routing.data[size_t(t * R) + j] = uint32_t(ex[j]);
      routing.data[size_t(t * R + kRoutingWeightWord) + j] = rw.data[size_t((t * p.topK + int64_t(j)) * R)];
    }
  }
  in["routing"] = std::move(routing);
  in["rw"] = std::move(rw);
  return in;
}

std::map<std::string, Matrix> moeInputs(const MoeParams& p, const std::vector<std::vector<int>>& experts, uint32_t seed) {
  checkMoeParams(p);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto random = [&](int64_t rows, int64_t cols, float scale) {
    Matrix m{rows, cols, {}};
    for (int64_t i = 0; i < rows * cols; ++i) m.data.push_back(floatToBits(u(rng) * scale));
    return m;
  };
  std::map<std::string, Matrix> in;
  in["x"] = random(p.batch, p.hidden, 1.0f);
  in["wg"] = random(p.experts * p.ffn, p.hidden, 1.0f / std::sqrt(float(p.hidden)));
  in["wu"] = random(p.experts * p.ffn, p.hidden, 1.0f / std::sqrt(float(p.hidden)));
  in["wd"] = random(p.experts * p.ffn, p.hidden, 1.0f / std::sqrt(float(p.ffn)));
  if (p.router) in["wr"] = random(p.experts, p.hidden, 1.0f / std::sqrt(float(p.hidden)));
  if (p.dispatchOnly) {  // the dispatch graph reads x and (without router) routing only
    for (const char* n : {"wg", "wu", "wd"}) in.erase(n);
    if (!p.router) in["routing"] = moeRoutingInputs(p, experts, rng).at("routing");
    return in;
  }
  in.merge(moeRoutingInputs(p, experts, rng));
  return in;
}

}  // namespace stepgen
