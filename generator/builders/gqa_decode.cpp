// buildGqaDecodeGraph: the text is assembled line by line in a fixed order so the output is
// byte-for-byte reproducible.
#include "builders/gqa_decode.hpp"

#include <fmt/format.h>

#include "builders/attention.hpp"
#include "support/diag.hpp"

namespace stepgen {

namespace {

[[noreturn]] void badGqa(const std::string& msg) { throw DiagError("G-120", SourceLoc{}, "gqa-decode: " + msg); }

void checkParams(const GqaParams& p) {
  const std::pair<const char*, int64_t> sizes[] = {
      {"head_dim", p.headDim}, {"kv_tile", p.kvTile}, {"queries", p.queries}, {"regions", p.regions}};
  for (const auto& [name, v] : sizes)
    if (v < 1) badGqa(fmt::format("{} must be >= 1, got {}", name, v));
  if (p.kvLengths.empty()) badGqa("the batch has no request");
  for (size_t b = 0; b < p.kvLengths.size(); ++b)
    if (p.kvLengths[b] < (p.append ? 0 : 1))
      badGqa(fmt::format("request {} has KV length {} (at least {} token{})", b, p.kvLengths[b], p.append ? 0 : 1, p.append ? "s" : ""));
  if (p.credits < 1) badGqa(fmt::format("credits must be >= 1, got {}", p.credits));
  if (p.append && p.strategy == GqaStrategy::Dynamic)
    badGqa("append runs before the attention in its own section; the dynamic strategy's feedback cycle is not cut into sections");
}

// First KV tile of every request.
std::vector<int64_t> tileStarts(const GqaParams& p) {
  std::vector<int64_t> t;
  int64_t n = 0;
  for (size_t b = 0; b < p.kvLengths.size(); ++b) t.push_back(n), n += gqaTiles(p, b);
  return t;
}

// Dynamic: every request's meta row, dealt to the regions by the fed-back free signals.
template <class Line>
void dispatch(const GqaParams& p, Line& line) {
  line("  # dispatch: request b goes to the region whose free signal is merged b-th (initial tokens first)");
  line("  - {name: load_meta, op: LinearOffChipLoad, tensor: meta, tile: [1, 16], iter: [B], strides: [[1, 0]], "
       "out: meta_all}");
  std::string outs;
  for (int64_t r = 0; r < p.regions; ++r) outs += fmt::format("{}meta_r{}", r ? ", " : "", r);
  line(fmt::format("  - {{name: dispatch, op: Partition, in: [meta_all, {}], n: {}, b: 0, out: [{}]}}",
                   p.regions > 1 ? "free" : "free_r0", p.regions, outs));
}

// Dynamic: the regions' free signals merged pairwise in arrival order, down to `free` (a
// compute unit merges two inputs).
template <class Line>
void mergeTree(const GqaParams& p, Line& line) {
  std::vector<std::string> level;
  for (int64_t r = 0; r < p.regions; ++r) level.push_back(fmt::format("free_r{}", r));
  line("  # the regions' free signals in arrival order: the dispatch's selector (the feedback cycle)");
  for (int depth = 0; level.size() > 1; ++depth) {
    std::vector<std::string> next;
    for (size_t i = 0; i < level.size(); i += 2) {
      if (i + 1 == level.size()) {
        next.push_back(level[i]);
        continue;
      }
      const std::string out = level.size() == 2 ? "free" : fmt::format("free_m{}_{}", depth, i / 2);
      line(fmt::format("  - {{name: merge_{0}, op: EagerMerge, b: 0, in: [{1}, {2}], out: {0}}}", out, level[i],
                       level[i + 1]));
      next.push_back(out);
    }
    level = std::move(next);
  }
}

}  // namespace

GqaStrategy parseGqaStrategy(const std::string& s) {
  if (s == "coarse") return GqaStrategy::Coarse;
  if (s == "interleave") return GqaStrategy::Interleave;
  if (s == "dynamic") return GqaStrategy::Dynamic;
  badGqa(fmt::format("unknown strategy '{}' (coarse, interleave, dynamic)", s));
}

std::string gqaStrategyName(GqaStrategy s) {
  return s == GqaStrategy::Coarse ? "coarse" : s == GqaStrategy::Interleave ? "interleave" : "dynamic";
}

int64_t gqaAttended(const GqaParams& p, size_t b) { return p.kvLengths.at(b) + (p.append ? 1 : 0); }

int64_t gqaTiles(const GqaParams& p, size_t b) { return (gqaAttended(p, b) + p.kvTile - 1) / p.kvTile; }

int64_t gqaTotalTiles(const GqaParams& p) {
  int64_t n = 0;
  for (size_t b = 0; b < p.kvLengths.size(); ++b) n += gqaTiles(p, b);
  return n;
}

std::vector<std::vector<int64_t>> gqaAssignment(const GqaParams& p) {
  checkParams(p);
  const int64_t B = int64_t(p.kvLengths.size()), block = (B + p.regions - 1) / p.regions;
  std::vector<std::vector<int64_t>> r(size_t(p.regions));
  for (int64_t b = 0; b < B; ++b) {
    if (p.strategy == GqaStrategy::Dynamic)
      for (auto& x : r) x.push_back(b);
    else
      r[size_t(p.strategy == GqaStrategy::Coarse ? b / block : b % p.regions)].push_back(b);
  }
  return r;
}

std::string buildGqaDecodeGraph(const GqaParams& p) {
  const auto regions = gqaAssignment(p);
  const int64_t nt = gqaTotalTiles(p);
  const bool ones = p.kvTile != p.headDim;
  std::string y;
  auto line = [&](const std::string& s) { y += s + "\n"; };
  line("# GQA decode attention of one KV head: per request b, out_b = softmax(q_b K_b^T) V_b over its");
  line(fmt::format("# own KV cache. Written by stepgen (buildGqaDecodeGraph): {} requests on {} regions, strategy {}.",
                   p.kvLengths.size(), p.regions, gqaStrategyName(p.strategy)));
  line("# A region loads one meta row per request (first KV tile, tile count, request id); run loads");
  line("# (RandomOffChipLoad with count) read that request's q, K, mask and V tiles, and the");
  line("# single-pass (online-softmax) attention runs over them. Requests' KV lengths, in tokens:");
  std::string ls;
  for (size_t b = 0; b < p.kvLengths.size(); ++b) ls += (b ? ", " : "") + std::to_string(p.kvLengths[b]);
  line("#   " + ls + (p.append ? " (before the step: each attends over one more, its own appended row)" : ""));
  line("stepgraph: gqa_decode");
  line(fmt::format("symbols: {{B: {}, NT: {}, D: {}, G: {}}}", p.kvLengths.size(), nt, p.headDim, p.queries));
  line(fmt::format("schedule: {{T: {}}}", p.kvTile));
  line("tensors:");
  line("  q:    {shape: [B*G, D], role: input}");
  line(fmt::format("  k:    {{shape: [NT*T, D], role: {}}}", p.append ? "state" : "input"));
  line(fmt::format("  v:    {{shape: [NT*T, D], role: {}}}", p.append ? "state" : "input"));
  if (p.append) {
    line("  k_new: {shape: [B, D], role: input}");
    line("  v_new: {shape: [B, D], role: input}");
    line("  kv_pos: {shape: [B, 16], role: input}");
  }
  line("  mask: {shape: [G, NT*T], role: input}");
  if (ones) line("  ones: {shape: [G, D], role: input}");
  const bool dyn = p.strategy == GqaStrategy::Dynamic;
  if (dyn) line("  meta: {shape: [B, 16], role: input}");
  for (size_t r = 0; r < regions.size(); ++r) {
    if (regions[r].empty()) continue;
    if (!dyn) line(fmt::format("  meta_r{}: {{shape: [{}, 16], role: input}}", r, regions[r].size()));
    line(fmt::format("  out_r{}: {{shape: [{}, D], role: output}}", r, int64_t(regions[r].size()) * p.queries));
  }
  line("ops:");
  if (p.append) {
    line("  # KV-cache append: request b's new k and v rows at row kv_pos[b][0] = t_b*T + L_b");
    line("  - {name: load_kv_pos, op: LinearOffChipLoad, tensor: kv_pos, tile: [1, 16], iter: [B], strides: [[1, 0]], out: kv_pos}");
    line("  - {name: bcast_kv_pos, op: Broadcast, in: kv_pos, out: [pos_k, pos_v]}");
    for (const char* t : {"k", "v"}) {
      line(fmt::format("  - {{name: load_{0}_new, op: LinearOffChipLoad, tensor: {0}_new, tile: [1, D], iter: [B], strides: [[1, 0]], "
                       "out: {0}_new}}", t));
      line(fmt::format("  - {{name: append_{0}, op: RandomOffChipStore, tensor: {0}, index: 0, in: [pos_{0}, {0}_new]}}", t));
    }
  }
  if (dyn) dispatch(p, line);
  for (size_t r = 0; r < regions.size(); ++r) {
    if (regions[r].empty()) continue;
    const std::string x = fmt::format("_r{}", r);
    const size_t n = regions[r].size();
    if (dyn) {
      line(fmt::format("  # region {}: the requests dispatched to it", r));
    } else {
      line(fmt::format("  # region {}: requests {}", r, fmt::join(regions[r], ", ")));
      line(fmt::format("  - {{name: load_meta{0}, op: LinearOffChipLoad, tensor: meta{0}, tile: [1, 16], iter: [{1}], "
                       "strides: [[1, 0]], out: meta{0}}}", x, n));
    }
    line(fmt::format("  - {{name: bcast_meta{0}, op: Broadcast, in: meta{0}, out: [meta_q{0}, meta_k{0}, meta_mask{0}, meta_v{0}{1}]}}", x,
                     ones ? fmt::format(", meta_ones{}", x) : ""));
    line(fmt::format("  - {{name: load_q{0}, op: RandomOffChipLoad, in: meta_q{0}, tensor: q, tile: [G, D], index: 2, count: 1, "
                     "step: 0, out: qs{0}}}", x));
    line(fmt::format("  - {{name: load_k{0}, op: RandomOffChipLoad, in: meta_k{0}, tensor: k, tile: [T, D], index: 0, count: 1, "
                     "out: ks{0}}}", x));
    line(fmt::format("  - {{name: zip_qk{0}, op: Zip, in: [qs{0}, ks{0}], out: qk{0}}}", x));
    line(fmt::format("  - {{name: scores{0}, op: Map, fn: matmul_t, in: qk{0}, out: s_raw{0}}}", x));
    line(fmt::format("  - {{name: load_mask{0}, op: RandomOffChipLoad, in: meta_mask{0}, tensor: mask, tile: [G, T], index: 0, "
                     "count: 1, out: masks{0}}}", x));
    line(fmt::format("  - {{name: zip_mask{0}, op: Zip, in: [s_raw{0}, masks{0}], out: smask{0}}}", x));
    line(fmt::format("  - {{name: apply_mask{0}, op: Map, fn: add, in: smask{0}, out: s{0}}}", x));
    const std::string loadOnes = ones ? fmt::format("  - {{name: load_ones{0}, op: RandomOffChipLoad, in: meta_ones{0}, tensor: "
                                                    "ones, tile: [G, D], index: 3, count: 1, step: 0, out: os{0}}}", x)
                                      : "";
    y += singlePassCore(x, loadOnes,
                        fmt::format("  - {{name: load_v{0}, op: RandomOffChipLoad, in: meta_v{0}, tensor: v, tile: [T, D], "
                                    "index: 0, count: 1, out: vs{0}}}", x));
    if (dyn) {  // a finished request frees the region: its signal goes back to the dispatch
      line(fmt::format("  - {{name: bcast_res{0}, op: Broadcast, in: res{0}, out: [res_s{0}, res_f{0}]}}", x));
      line(fmt::format("  - {{name: store_out{0}, op: LinearOffChipStore, in: res_s{0}, tensor: out{0}, tile: [G, D], "
                       "iter: [{1}], strides: [[1, 0]]}}", x, n));
      line(fmt::format("  - {{name: free{0}, op: Map, fn: select, value: {1}, n: {2}, initial: {3}, in: res_f{0}, "
                       "out: free{0}}}", x, r, p.regions, p.credits));
    } else {
      line(fmt::format("  - {{name: store_out{0}, op: LinearOffChipStore, in: res{0}, tensor: out{0}, iter: [{1}], "
                       "strides: [[1, 0]]}}", x, n));
    }
  }
  if (dyn) mergeTree(p, line);
  return y;
}

std::map<std::string, Matrix> gqaFixedInputs(const GqaParams& p) {
  const auto regions = gqaAssignment(p);
  const int64_t nt = gqaTotalTiles(p);
  const std::vector<int64_t> start = tileStarts(p);
  std::map<std::string, Matrix> m;
  Matrix mask{p.queries, nt * p.kvTile, {}};
  for (int64_t g = 0; g < p.queries; ++g)
    for (size_t b = 0; b < p.kvLengths.size(); ++b)
      for (int64_t c = 0; c < gqaTiles(p, b) * p.kvTile; ++c) mask.data.push_back(c < gqaAttended(p, b) ? 0u : 0xFF800000u);
  m["mask"] = std::move(mask);
  if (p.kvTile != p.headDim) {
    AttentionParams a;
    a.queries = p.queries, a.headDim = p.headDim;
    m["ones"] = attentionOnes(a);
  }
  for (size_t r = 0; r < regions.size(); ++r) {
    if (regions[r].empty() || (p.strategy == GqaStrategy::Dynamic && r > 0)) continue;  // dynamic: one meta
    Matrix meta{int64_t(regions[r].size()), 16, {}};
    for (int64_t b : regions[r]) {
      std::vector<uint32_t> row(16, 0);
      row[0] = uint32_t(start[size_t(b)]), row[1] = uint32_t(gqaTiles(p, size_t(b))), row[2] = uint32_t(b);
      meta.data.insert(meta.data.end(), row.begin(), row.end());
    }
    m[p.strategy == GqaStrategy::Dynamic ? std::string("meta") : fmt::format("meta_r{}", r)] = std::move(meta);
  }
  if (p.append) {
    Matrix pos{int64_t(p.kvLengths.size()), 16, std::vector<uint32_t>(p.kvLengths.size() * 16, 0)};
    for (size_t b = 0; b < p.kvLengths.size(); ++b) pos.data[b * 16] = uint32_t(start[b] * p.kvTile + p.kvLengths[b]);
    m["kv_pos"] = std::move(pos);
  }
  return m;
}

}  // namespace stepgen
