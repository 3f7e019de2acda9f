// buildMoeRegionsGraph / moeRegionsInputs (builders/moe_regions.hpp). The text is assembled
// line by line in a fixed order so that it is byte-for-byte reproducible.
#include "builders/moe_regions.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "builders/swiglu.hpp"
#include "ir/graph.hpp"
#include "support/diag.hpp"
#include "support/routing_trace.hpp"

namespace stepgen {

std::vector<MoeRegion> moeRegions(const MoeParams& p, int64_t regions, const std::vector<std::vector<int>>& experts) {
  if (regions < 1 || p.experts % regions != 0)
    throw DiagError("G-120", SourceLoc{},
                    fmt::format("moe: regions must be >= 1 and divide the {} experts, got {}", p.experts, regions));
  std::vector<int64_t> tokens(size_t(p.experts), 0);
  for (int64_t t = 0; t < p.batch && t < int64_t(experts.size()); ++t)
    for (int e : experts[size_t(t)]) ++tokens.at(size_t(e));
  std::vector<MoeRegion> out;
  const int64_t n = p.experts / regions;
  for (int64_t r = 0; r < regions; ++r) {
    MoeRegion g{r * n, n, std::min(p.topK, n), 0};
    for (int64_t e = g.first; e < g.first + n; ++e) {
      const int64_t T = tokens[size_t(e)];
      g.rows += p.tileB ? (T + p.tileB - 1) / p.tileB * p.tileB : T;
    }
    out.push_back(g);
  }
  return out;
}

std::string buildMoeRegionsGraph(const MoeParams& p, int64_t regions, const std::vector<std::vector<int>>& experts) {
  const std::vector<MoeRegion> rs = moeRegions(p, regions, experts);
  checkMoeParams(p);
  if (p.dispatchOnly || p.residual)
    throw DiagError("G-120", SourceLoc{}, "moe: regions take neither --dispatch-only nor --residual");
  if (std::none_of(rs.begin(), rs.end(), [](const MoeRegion& g) { return g.rows > 0; }))
    throw DiagError("G-120", SourceLoc{}, "moe: no region gets a token");
  const bool dyn = p.tileB == 0;
  std::string y;
  auto line = [&](const std::string& s) { y += s + "\n"; };
  line(fmt::format("# The experts of a top-k MoE layer on {} regions of {} experts each", regions, p.experts / regions));
  line("# (docs/step_semantics.md#time-multiplexing). Written by stepgen (buildMoeRegionsGraph).");
  line("# Region r serves its experts one after another: ym_r<r> = its experts' SwiGLU outputs,");
  line("# experts ascending, tokens ascending. Regions without tokens have no ops.");
  line(fmt::format("stepgraph: moe_regions{}_{}", regions, dyn ? std::string("dynamic") : fmt::format("tb{}", p.tileB)));
  line(fmt::format("symbols: {{B: {}, D: {}, F: {}, E: {}, K: {}}}", p.batch, p.hidden, p.ffn, p.experts, p.topK));
  line(dyn ? fmt::format("schedule: {{tf: {}}}", p.tileF) : fmt::format("schedule: {{tb: {}, tf: {}}}", p.tileB, p.tileF));
  line("tensors:");
  line("  x:  {shape: [B, D], role: input}");
  for (size_t r = 0; r < rs.size(); ++r) {
    if (!rs[r].rows) continue;
    line(fmt::format("  routing_r{}: {{shape: [B, {}], role: input}}", r, kRoutingRowWords));
    for (const char* w : {"g", "u", "d"}) line(fmt::format("  w{}_r{}: {{shape: [{}*F, D], role: input}}", w, r, rs[r].n));
    line(fmt::format("  ym_r{}: {{shape: [{}, D], role: output}}", r, rs[r].rows));
  }
  line("ops:");
  for (size_t r = 0; r < rs.size(); ++r) {
    const MoeRegion& g = rs[r];
    if (!g.rows) continue;
    const std::string s = fmt::format("_r{}", r);
    auto list = [&](const std::string& stem) {
      std::string l;
      for (int64_t e = 0; e < g.n; ++e) l += fmt::format("{}{}{}_{}", e ? ", " : "", stem, s, e);
      return l;
    };
    line(fmt::format("  - {{name: route{0}, op: SelectGen, trace: {1}, tensor: routing{0}, n: {2}, k: {3}, first: {4}, "
                     "of: E, iter: [B], out: sel{0}}}",
                     s, p.trace, g.n, g.k, g.first));
    line(fmt::format("  - {{name: load_x{0}, op: LinearOffChipLoad, tensor: x, tile: [1, D], iter: [B], strides: [[1, 0]], "
                     "out: xr{0}}}",
                     s));
    line(fmt::format("  - {{name: part_x{0}, op: Partition, in: [xr{0}, sel{0}], n: {1}, b: 0, out: [{2}]}}", s, g.n,
                     list("xe")));
    for (int64_t e = 0; e < g.n; ++e) {
      if (dyn)
        line(fmt::format("  - {{name: promote{0}_{1}, op: Promote, b: 1, in: xe{0}_{1}, out: xg{0}_{1}}}", s, e));
      else
        line(fmt::format("  - {{name: reshape{0}_{1}, op: Reshape, chunk: tb, b: 0, pad: true, in: xe{0}_{1}, out: xg{0}_{1}}}",
                         s, e));
      line(fmt::format("  - {{name: retile_x{0}_{1}, op: Accum, fn: retile, b: 1, in: xg{0}_{1}, out: xt{0}_{1}}}", s, e));
    }
    line(fmt::format("  - {{name: merge{0}, op: EagerMerge, b: 0, in: [{1}], out: [xm{0}, selm{0}]}}", s, list("xt")));
    line(fmt::format("  - {{name: bselm{0}, op: Broadcast, in: selm{0}, out: [selm_g{0}, selm_u{0}, selm_d{0}]}}", s));
    line(fmt::format("  - {{name: repeat_x{0}, op: RepeatStatic, n: F/tf, in: xm{0}, out: xrep{0}}}", s));
    line(fmt::format("  - {{name: bx{0}, op: Broadcast, in: xrep{0}, out: [x_g{0}, x_u{0}]}}", s));
    for (const char* w : {"g", "u", "d"}) {
      line(fmt::format("  - {{name: addr_{1}{0}, op: AddrGen, tiles: F/tf, in: selm_{1}{0}, out: a_{1}{0}}}", s, w));
      line(fmt::format("  - {{name: load_w{1}{0}, op: RandomOffChipLoad, tensor: w{1}{0}, tile: [tf, D], in: a_{1}{0}, "
                       "out: w{1}_t{0}}}",
                       s, w));
    }
    y += swigluCoreOps("matmul_t", s);
    line(fmt::format("  - {{name: store{0}, op: LinearOffChipStore, in: o{0}, tensor: ym{0}, tile: [1, D], iter: [{1}], "
                     "strides: [[1, 0]]}}",
                     s, g.rows));
  }
  return y;
}

std::map<std::string, Matrix> moeRegionsInputs(const MoeParams& p, int64_t regions,
                                               const std::vector<std::vector<int>>& experts, uint32_t seed) {
  const std::vector<MoeRegion> rs = moeRegions(p, regions, experts);
  std::map<std::string, Matrix> all = moeInputs(p, experts, seed), in;
  in["x"] = all.at("x");
  for (size_t r = 0; r < rs.size(); ++r) {
    const MoeRegion& g = rs[r];
    if (!g.rows) continue;
    for (const char* w : {"wg", "wu", "wd"}) {
      const Matrix& m = all.at(w);
      const size_t from = size_t(g.first * p.ffn * m.cols), len = size_t(g.n * p.ffn * m.cols);
      in[fmt::format("{}_r{}", w, r)] = Matrix{g.n * p.ffn, m.cols, {m.data.begin() + long(from), m.data.begin() + long(from + len)}};
    }
    Matrix routing{p.batch, kRoutingRowWords, std::vector<uint32_t>(size_t(p.batch * kRoutingRowWords), 0)};
    for (int64_t t = 0; t < p.batch; ++t) {
      const std::vector<uint32_t> w = routingIdWords(localExperts(experts.at(size_t(t)), int(g.first), int(g.n)), g.k);
      std::copy(w.begin(), w.end(), routing.data.begin() + t * kRoutingRowWords);
    }
    in[fmt::format("routing_r{}", r)] = std::move(routing);
  }
  return in;
}

}  // namespace stepgen
