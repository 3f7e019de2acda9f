// GQA decode on regions (buildGqaDecodeGraph): the assignment of requests to regions by
// hand, and the functional model's outputs per request against softmax(q K^T) V in double
// over that request's own KV rows; run loads (RandomOffChipLoad with count) on bad input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "builders/gqa_decode.hpp"
#include "common/fp.hpp"
#include "driver/inputs.hpp"
#include "ir/graph.hpp"
#include "driver/pipeline.hpp"
#include "model/functional.hpp"
#include "model/model.hpp"
#include "support/diag.hpp"
#include "support/files.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {

StepGraph graphOf(const std::string& text, const char* tag) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("sg_gqa_{}", tag);
  std::filesystem::create_directories(dir);
  writeFile(dir / "graph.yaml", text);
  StepGraph g = loadGraph((dir / "graph.yaml").string());
  std::filesystem::remove_all(dir);
  return g;
}

// Worst |out - ref| / sum_j w_j |v_jc| over the G rows of one request: out rows `o` at row
// `orow` of `out`; q rows at b*G; K and V rows from `kv0` on, `valid` of them.
double worstError(const Matrix& out, int64_t orow, const Matrix& q, const Matrix& k, const Matrix& v, int64_t b,
                  int64_t G, int64_t kv0, int64_t valid) {
  const int64_t D = k.cols;
  double worst = 0;
  for (int64_t r = 0; r < G; ++r) {
    std::vector<double> w(size_t(valid), 0.0);
    double mx = -1e300, sum = 0;
    for (int64_t j = 0; j < valid; ++j) {
      for (int64_t d = 0; d < D; ++d) w[size_t(j)] += f(q.data[size_t((b * G + r) * D + d)]) * f(k.data[size_t((kv0 + j) * D + d)]);
      mx = std::max(mx, w[size_t(j)]);
    }
    for (double& x : w) sum += (x = std::exp(x - mx));
    for (int64_t c = 0; c < D; ++c) {
      double ref = 0, scale = 1e-30;
      for (int64_t j = 0; j < valid; ++j) {
        const double vj = f(v.data[size_t((kv0 + j) * D + c)]);
        ref += w[size_t(j)] / sum * vj, scale += w[size_t(j)] / sum * std::fabs(vj);
      }
      worst = std::max(worst, std::fabs(f(out.data[size_t((orow + r) * D + c)]) - ref) / scale);
    }
  }
  return worst;
}
}  // namespace

TEST_CASE("gqa-decode: coarse takes contiguous blocks, interleave deals round robin", "[attention][quick]") {
  GqaParams p;
  p.kvLengths = {5, 6, 7, 8, 9, 10, 11};
  p.regions = 3;
  CHECK(gqaAssignment(p) == std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}, {6}});
  p.strategy = GqaStrategy::Interleave;
  CHECK(gqaAssignment(p) == std::vector<std::vector<int64_t>>{{0, 3, 6}, {1, 4}, {2, 5}});
  p.regions = 9;  // more regions than requests: the last two get none
  CHECK(gqaAssignment(p)[8].empty());
  p.kvTile = 4;
  CHECK(gqaTiles(p, 0) == 2);  // 5 tokens: 2 tiles of 4
  CHECK(gqaTiles(p, 3) == 2);
  CHECK(gqaTiles(p, 4) == 3);
}

// Error sources as the single-pass graph of one request (test_attention_single_pass.cpp):
// 1e-3 of sum_j w_j |v_jc| with fp32 multiplies, 1e-2 with bf16 operands.
TEST_CASE("gqa-decode: every request's output rows match softmax attention in double", "[attention]") {
  for (GqaStrategy st : {GqaStrategy::Coarse, GqaStrategy::Interleave, GqaStrategy::Dynamic}) {
    GqaParams p;
    p.kvLengths = {40, 100, 20, 64, 33};  // partial last tiles, a whole one (64), a single tile (20)
    p.queries = 4;
    p.regions = 2;
    p.strategy = st;
    const StepGraph g = graphOf(buildGqaDecodeGraph(p), "model");
    const ShapeResult s = checkShapes(g);
    auto in = loadInputs(g, "", 5);
    for (auto& [name, m] : gqaFixedInputs(p)) in[name] = std::move(m);
    std::vector<int64_t> start;  // first KV row of each request
    int64_t rows = 0;
    for (size_t b = 0; b < p.kvLengths.size(); ++b) start.push_back(rows), rows += gqaTiles(p, b) * p.kvTile;
    REQUIRE(in.at("k").rows == rows);
    for (NumberFormat nf : {NumberFormat::Fp32, NumberFormat::Bf16Fp32}) {
      ArchModel a = loadArch(root() + "/arch/gqa.yaml");
      a.cu.format = nf;
      const FunctionalResult f = runFunctional(g, s, a, in);
      const auto& outs = f.outputs;
      auto regions = gqaAssignment(p);
      if (st == GqaStrategy::Dynamic) {  // the requests each region got (here in input order of the merges: no
                                         // timing): word 2 of its dispatched meta rows
        std::vector<int> served(p.kvLengths.size(), 0);
        for (size_t r = 0; r < regions.size(); ++r) {
          regions[r].clear();
          for (const Token& t : f.streams.at(size_t(g.findStream(fmt::format("meta_r{}", r))->v)))
            if (t.kind == Token::Kind::Data) regions[r].push_back(int64_t(t.data->at(2))), ++served.at(t.data->at(2));
        }
        CHECK(served == std::vector<int>(p.kvLengths.size(), 1));
      }
      for (size_t r = 0; r < regions.size(); ++r) {
        const Matrix& o = outs.at(fmt::format("out_r{}", r));
        REQUIRE(o.rows == (st == GqaStrategy::Dynamic ? int64_t(p.kvLengths.size()) : int64_t(regions[r].size())) * p.queries);
        for (size_t i = 0; i < regions[r].size(); ++i) {
          const int64_t b = regions[r][i];
          const double worst = worstError(o, int64_t(i) * p.queries, in.at("q"), in.at("k"), in.at("v"), b, p.queries,
                                          start[size_t(b)], p.kvLengths[size_t(b)]);
          INFO(gqaStrategyName(st) << " region " << r << " request " << b << (nf == NumberFormat::Fp32 ? " fp32" : " bf16"));
          CHECK(worst < (nf == NumberFormat::Fp32 ? 1e-3 : 1e-2));
          CHECK(worst > 0);
        }
      }
    }
  }
}

// With append, request b attends over its L_b cached rows and the step's own new row, which
// the graph writes at row t_b*T + L_b first: the reference inserts k_new and v_new there by
// hand and attends over L_b + 1 rows (an empty cache, L_b = 0, too).
TEST_CASE("gqa-decode: with append each request attends over its cache and its own new row", "[attention][kv]") {
  for (GqaStrategy st : {GqaStrategy::Coarse, GqaStrategy::Interleave}) {
    GqaParams p;
    p.kvLengths = {40, 0, 31, 64, 33};  // a new row opening a tile (64), ending one (31), an empty cache
    p.queries = 4;
    p.regions = 2;
    p.strategy = st;
    p.append = true;
    const StepGraph g = graphOf(buildGqaDecodeGraph(p), "append");
    auto in = loadInputs(g, "", 9);
    for (auto& [name, m] : gqaFixedInputs(p)) in[name] = std::move(m);
    Matrix k = in.at("k"), v = in.at("v");  // the caches as they are after the append
    std::vector<int64_t> start;
    int64_t rows = 0;
    for (size_t b = 0; b < p.kvLengths.size(); ++b) start.push_back(rows), rows += gqaTiles(p, b) * p.kvTile;
    REQUIRE(gqaTiles(p, 3) == 3);  // 65 tokens of T = 32
    for (size_t b = 0; b < p.kvLengths.size(); ++b) {
      const int64_t row = start[b] + p.kvLengths[b], D = p.headDim;
      std::copy_n(in.at("k_new").data.begin() + int64_t(b) * D, D, k.data.begin() + row * D);
      std::copy_n(in.at("v_new").data.begin() + int64_t(b) * D, D, v.data.begin() + row * D);
    }
    const FunctionalResult f = runFunctional(g, checkShapes(g), loadArch(root() + "/arch/gqa.yaml"), in);
    CHECK(f.outputs.at("k").data == k.data);
    CHECK(f.outputs.at("v").data == v.data);
    const auto regions = gqaAssignment(p);
    for (size_t r = 0; r < regions.size(); ++r)
      for (size_t i = 0; i < regions[r].size(); ++i) {
        const int64_t b = regions[r][i];
        const double worst = worstError(f.outputs.at(fmt::format("out_r{}", r)), int64_t(i) * p.queries, in.at("q"), k, v, b,
                                        p.queries, start[size_t(b)], p.kvLengths[size_t(b)] + 1);
        INFO(gqaStrategyName(st) << " region " << r << " request " << b);
        CHECK(worst < 1e-2);  // bf16 operands on arch/gqa.yaml, as above
        CHECK(worst > 0);
      }
  }
  // On the fabric the appends take a section of their own: the run loads of the caches sit
  // in one group with the rest of their region (their ragged streams cannot be carried), and
  // the whole group waits for the appends.
  {
    GqaParams p;
    p.kvLengths = {40, 0, 31, 64, 33};
    p.append = true;
    const auto dir = std::filesystem::temp_directory_path() / "sg_gqa_append_map";
    writeFile(dir / "graph.yaml", buildGqaDecodeGraph(p));
    const CompileResult c = compileGraph(root() + "/arch/gqa.yaml", (dir / "graph.yaml").string());
    CHECK(c.sections.sections == 2);
    for (size_t i = 0; i < c.graph.ops.size(); ++i) {
      const std::string& n = c.graph.ops[i].name;
      if (n.rfind("append_", 0) == 0) CHECK(c.sections.sectionOf[i] == 0);
      if (n.rfind("load_k_r", 0) == 0 || n.rfind("load_v_r", 0) == 0) CHECK(c.sections.sectionOf[i] == 1);
    }
  }
  GqaParams d;
  d.kvLengths = {3};
  d.append = true;
  d.strategy = GqaStrategy::Dynamic;
  CHECK_THROWS_WITH(buildGqaDecodeGraph(d), Catch::Contains("dynamic strategy"));
}

TEST_CASE("gqa-decode: bad sizes and run loads give located errors", "[attention][bad][quick]") {
  GqaParams p;
  p.kvLengths = {10, 0};
  CHECK_THROWS_AS(buildGqaDecodeGraph(p), DiagError);
  p.kvLengths.clear();
  CHECK_THROWS_AS(buildGqaDecodeGraph(p), DiagError);
  CHECK_THROWS_AS(parseGqaStrategy("random"), DiagError);
  auto errorsOf = [](const std::string& load, const std::string& addr = "m") {
    const std::string text =
        "stepgraph: bad\ntensors:\n  meta: {shape: [2, 16], role: input}\n  x: {shape: [64, 16], role: input}\n"
        "  out: {shape: [64, 16], role: output}\nops:\n"
        "  - {name: lm, op: LinearOffChipLoad, tensor: meta, tile: [1, 16], iter: [2], strides: [[1, 0]], out: m}\n"
        "  - {name: lx, op: LinearOffChipLoad, tensor: x, tile: [2, 16], iter: [2], strides: [[1, 0]], out: m2}\n"
        "  - {name: bm, op: Broadcast, in: " + addr + ", out: [a, a2]}\n"
        "  - {name: other, op: LinearOffChipStore, in: " + (addr == "m" ? "m2" : "m") + ", tensor: out, tile: " + (addr == "m" ? "[2, 16]" : "[1, 16]") + ", iter: [2], strides: [[1, 0]]}\n" +
        load + "  - {name: st, op: LinearOffChipStore, in: xs, tensor: out, tile: [4, 16], iter: [16], strides: [[1, 0]]}\n"
        "  - {name: st2, op: LinearOffChipStore, in: a2, tensor: out, tile: " + (addr == "m" ? "[1, 16]" : "[2, 16]") +
        ", iter: [2], strides: [[1, 0]]}\n";
    std::vector<std::string> ids;
    try {
      checkShapes(graphOf(text, "bad"));
    } catch (const DiagError& e) {
      for (const auto& d : e.diags) ids.push_back(d.id + "@" + std::to_string(d.loc.line));
    }
    return ids;
  };
  // count word 16 is past the 16-word meta rows; index -1; a negative step; 2-row address tiles.
  CHECK(errorsOf("  - {name: r, op: RandomOffChipLoad, in: a, tensor: x, tile: [4, 16], count: 16, out: xs}\n") ==
        std::vector<std::string>{"S-248@11"});
  CHECK(errorsOf("  - {name: r, op: RandomOffChipLoad, in: a, tensor: x, tile: [4, 16], count: 1, index: -1, out: xs}\n") ==
        std::vector<std::string>{"S-248@11"});
  CHECK(errorsOf("  - {name: r, op: RandomOffChipLoad, in: a, tensor: x, tile: [4, 16], count: 1, step: -1, out: xs}\n") ==
        std::vector<std::string>{"S-248@11"});
  CHECK(errorsOf("  - {name: r, op: RandomOffChipLoad, in: a, tensor: x, tile: [4, 16], count: 1, out: xs}\n", "m2") ==
        std::vector<std::string>{"S-248@11"});
  // An index load (no count): word 16 is past the rows; 2-row address tiles are no meta rows.
  CHECK(errorsOf("  - {name: r, op: RandomOffChipLoad, in: a, tensor: x, tile: [4, 16], index: 16, out: xs}\n") ==
        std::vector<std::string>{"S-248@11"});
  CHECK(errorsOf("  - {name: r, op: RandomOffChipLoad, in: a, tensor: x, tile: [4, 16], index: 0, out: xs}\n", "m2") ==
        std::vector<std::string>{"S-248@11"});
}

// The dynamic strategy as the model times it (arch/gqa_dynamic.yaml, mapped; the merge
// order from the timing): every request's rows appear exactly once among the regions'
// outputs, each block matching softmax attention of exactly one request in double, and every
// region serves.
TEST_CASE("gqa-decode dynamic: the timed dispatch serves every request once", "[attention][feedback]") {
  GqaParams p;
  p.kvLengths = {40, 100, 20, 64, 33, 90};
  p.queries = 4;
  p.regions = 4;
  p.strategy = GqaStrategy::Dynamic;
  const auto dir = std::filesystem::temp_directory_path() / "sg_gqa_dynamic_timed";
  std::filesystem::create_directories(dir);
  writeFile(dir / "graph.yaml", buildGqaDecodeGraph(p));
  const CompileResult c = compileProgram(root() + "/arch/gqa_dynamic.yaml", (dir / "graph.yaml").string());
  std::filesystem::remove_all(dir);
  auto in = loadInputs(c.graph, "", 5);
  for (auto& [name, m] : gqaFixedInputs(p)) in[name] = std::move(m);
  const ModelResult r = runModel(c.graph, c.shapes, c.mapping, c.arch, c.programLayout, c.image, in);
  REQUIRE_FALSE(r.timing.deadlock);
  std::vector<int64_t> start;
  int64_t rows = 0;
  for (size_t b = 0; b < p.kvLengths.size(); ++b) start.push_back(rows), rows += gqaTiles(p, b) * p.kvTile;
  std::vector<int> served(p.kvLengths.size(), 0);
  int regionsUsed = 0;
  for (int64_t reg = 0; reg < p.regions; ++reg) {
    const Matrix& o = r.outputs.at(fmt::format("out_r{}", reg));
    int blocks = 0;
    for (int64_t blk = 0; blk * p.queries < o.rows; ++blk) {
      bool zero = true;
      for (int64_t i = blk * p.queries * o.cols; i < (blk + 1) * p.queries * o.cols; ++i) zero = zero && o.data[size_t(i)] == 0;
      if (zero) break;  // the rows after the region's last request stay 0
      ++blocks;
      int matches = 0;
      for (size_t b = 0; b < p.kvLengths.size(); ++b)
        if (worstError(o, blk * p.queries, in.at("q"), in.at("k"), in.at("v"), int64_t(b), p.queries, start[b], p.kvLengths[b]) < 1e-2)
          ++matches, ++served[b];
      INFO("region " << reg << " block " << blk);
      CHECK(matches == 1);
    }
    regionsUsed += blocks > 0;
  }
  CHECK(served == std::vector<int>(p.kvLengths.size(), 1));
  CHECK(regionsUsed == 4);  // the four initial tokens deal the first four requests to four regions
}
