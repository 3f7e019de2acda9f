// The MoE layer (issue 3) through the functional model, against a plain double-precision
// reference computed here from the inputs and the routing CSV.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "arch/arch_model.hpp"
#include "common/fp.hpp"
#include "support/routing_trace.hpp"
#include "driver/moe_example.hpp"
#include "studies/tiling.hpp"
#include "driver/pipeline.hpp"
#include "ir/graph.hpp"
#include "passes/shape_check.hpp"
#include "compiled.hpp"
#include "moe_ref.hpp"
#include "test_common.hpp"

using namespace stepgen;
namespace fs = std::filesystem;

namespace {



struct MoeRun {
  MoeParams p;
  StepGraph g;
  ShapeResult s;
  std::map<std::string, Matrix> in;
  FunctionalResult out;
  RoutingTrace tr;
};

MoeRun runCase(const MoeCase& c, int64_t tileB, const std::string& arch) {
  MoeRun r;
  r.p = MoeParams{64, c.hidden, c.ffn, c.experts, c.topK, tileB, c.tileF, "routing.csv"};
  fs::path dir = fs::temp_directory_path() / fmt::format("stepgen_moe_{}_{}", c.name, tileB);
  writeMoeExample(r.p, root() + "/examples/moe/data/" + c.traceFile, dir.string(), 3);
  r.tr = readRoutingTrace((dir / "routing.csv").string(), int(c.experts));
  r.g = loadGraph((dir / "graph.yaml").string());
  r.s = checkShapes(r.g);
  r.in = loadInputs(r.g, (dir / "inputs").string(), 0);
  r.out = runFunctional(r.g, r.s, loadArch(root() + arch), r.in);
  return r;
}

// y[t] = sum over t's experts e of rw[t, pos(e)] * (silu(x Wg_e^T) * (x Wu_e^T)) Wd_e in
// double, with matmul operands read as the multiplier reads them (bf16 truncation or fp32).
// Returns max |model - ref| / (sum over e, k of |rw * h_k * wd_kj| + 1e-30).
double moeRelError(const MoeRun& r, bool bf16In) {
  const Matrix &x = r.in.at("x"), &wg = r.in.at("wg"), &wu = r.in.at("wu"), &wd = r.in.at("wd"), &rw = r.in.at("rw");
  const Matrix& y = r.out.outputs.at("y");
  const int64_t D = r.p.hidden, F = r.p.ffn;
  auto op = [&](uint32_t v) { return f(bf16In ? (v & 0xFFFF0000u) : v); };
  double worst = 0;
  for (int64_t t = 0; t < r.p.batch; ++t) {
    std::vector<int> ex = r.tr.experts[size_t(t)];
    std::sort(ex.begin(), ex.end());
    std::vector<double> ref(size_t(D), 0.0), mag(size_t(D), 0.0);
    for (size_t j = 0; j < ex.size(); ++j) {
      const int64_t e = ex[j];
      const double w = f(rw.data[size_t((t * r.p.topK + int64_t(j)) * rw.cols)]);  // word 0 of (t, j)'s row
      addExpertRow(x, t, wg, wu, wd, e, D, F, w, op, ref, mag);
    }
    for (int64_t d = 0; d < D; ++d)
      worst = std::max(worst, std::fabs(f(y.data[size_t(t * D + d)]) - ref[size_t(d)]) / (mag[size_t(d)] + 1e-30));
  }
  return worst;
}

const TokenStream& stream(const MoeRun& r, const std::string& name) { return r.out.streams.at(r.g.findStream(name)->v); }

int64_t dataTokens(const TokenStream& s) {
  return std::count_if(s.begin(), s.end(), [](const Token& t) { return t.kind == Token::Kind::Data; });
}

}  // namespace

// Tolerances as for the SwiGLU layer (test_model.cpp): silu table <= 2^-7 relative, fp32
// sums <= K * 2^-24, bf16 truncation of h <= 2^-8; the router weight multiply and the sum
// over k add a few 2^-24. 2^-6 (bf16_fp32) and 2^-7 (fp32) keep a factor-2 margin.
TEST_CASE("moe: model matches a double-precision MoE reference, both traces, static and dynamic", "[model][moe]") {
  for (const MoeCase& c : moeCases()) {
    for (int64_t tb : {int64_t(16), int64_t(0)}) {
      for (auto [arch, bf] : {std::pair<const char*, bool>{"/arch/default.yaml", true}, {"/arch/step_validation.yaml", false}}) {
        MoeRun r = runCase(c, tb, arch);
        double e = moeRelError(r, bf);
        INFO(c.name << " tile " << tb << " " << arch << ": max relative error " << e);
        CHECK(e < std::ldexp(1.0, bf ? -6 : -7));
        CHECK(e > 0);  // rounding must show: an exact match would mean a dependent reference
      }
    }
  }
}

TEST_CASE("moe: outputs are bit-identical for every token tile and dynamic tiling", "[model][moe]") {
  for (const MoeCase& c : moeCases()) {
    MoeRun dyn = runCase(c, 0, "/arch/default.yaml");
    for (int64_t tb : {8, 16, 32, 64}) {
      MoeRun st = runCase(c, tb, "/arch/default.yaml");
      INFO(c.name << " tile " << tb);
      CHECK(st.out.outputs.at("y").data == dyn.out.outputs.at("y").data);
    }
  }
}

// Counts worked out from the CSV alone: empty experts flow as empty streams, static tiles
// pad every expert to whole tiles, dynamic tiling gives one tile per non-empty expert.
TEST_CASE("moe: routing streams carry the trace's groups, empty experts included", "[model][moe]") {
  const MoeCase qwen = moeCases()[1];
  for (int64_t tb : {int64_t(16), int64_t(0)}) {
    MoeRun r = runCase(qwen, tb, "/arch/default.yaml");
    std::vector<int> per = r.tr.tokensPerExpert();
    int64_t empty = 0, tiles = 0, padded = 0;
    for (int e = 0; e < int(per.size()); ++e) {
      const TokenStream& xe = stream(r, fmt::format("xe_{}", e));
      CHECK(dataTokens(xe) == per[size_t(e)]);
      CHECK(xe.back().kind == Token::Kind::Done);
      if (per[size_t(e)] == 0) {
        ++empty;
        CHECK(xe.size() == 1);
      }
      tiles += tb ? (per[size_t(e)] + tb - 1) / tb : (per[size_t(e)] > 0);
      padded += tb ? (per[size_t(e)] + tb - 1) / tb * tb : per[size_t(e)];
    }
    CHECK(empty == 68);  // published fact of the Qwen3 trace (examples/moe/data/README.md)
    const TokenStream& xm = stream(r, "xm");
    CHECK(dataTokens(xm) == tiles);
    int64_t rows = 0;
    for (const Token& t : xm)
      if (t.kind == Token::Kind::Data) rows += t.rows;
    CHECK(rows == padded);
    CHECK(dataTokens(stream(r, "yk")) == 64 * 8);
    // EagerMerge's selector names each non-empty expert in ascending order.
    std::vector<int> order;
    for (const Token& t : stream(r, "selm"))
      if (t.kind == Token::Kind::Data && (order.empty() || order.back() != t.sel.at(0))) order.push_back(t.sel[0]);
    CHECK(int64_t(order.size()) == 128 - empty);
    CHECK(std::is_sorted(order.begin(), order.end()));
  }
}

// The dispatch half (what the fabric runs): xm must hold, expert by expert (ascending), the
// x rows of the expert's tokens (ascending), padded with zero rows to whole tiles of tb
// (static) or unpadded (dynamic), then zeros; the routing rows hold the sorted experts.
TEST_CASE("moe: dispatch graph output equals a plain grouping loop, routing rows match the trace", "[model][moe]") {
  for (const MoeCase& c : moeCases()) {
    for (int64_t tb : {int64_t(16), int64_t(0)}) {
      MoeParams p{64, c.hidden, c.ffn, c.experts, c.topK, tb, c.tileF, "routing.csv", true};
      fs::path dir = fs::temp_directory_path() / fmt::format("stepgen_moe_disp_{}_{}", c.name, tb);
      writeMoeExample(p, root() + "/examples/moe/data/" + c.traceFile, dir.string(), 5);
      RoutingTrace tr = readRoutingTrace((dir / "routing.csv").string(), int(c.experts));
      StepGraph g = loadGraph((dir / "graph.yaml").string());
      ShapeResult s = checkShapes(g);
      auto in = loadInputs(g, (dir / "inputs").string(), 0);
      FunctionalResult out = runFunctional(g, s, loadArch(root() + "/arch/default.yaml"), in);
      const Matrix &x = in.at("x"), &routing = in.at("routing"), &xm = out.outputs.at("xm");
      std::vector<uint32_t> want(size_t(moeDispatchRows(p) * c.hidden), 0);
      size_t row = 0;
      for (int e = 0; e < int(c.experts); ++e) {
        int64_t n = 0;
        for (int64_t t = 0; t < 64; ++t)
          if (std::count(tr.experts[size_t(t)].begin(), tr.experts[size_t(t)].end(), e)) {
            std::copy_n(x.data.begin() + t * c.hidden, c.hidden, want.begin() + int64_t(row++) * c.hidden);
            ++n;
          }
        if (tb && n % tb) row += size_t(tb - n % tb);
      }
      INFO(c.name << " tile " << tb);
      CHECK(xm.data == want);
      for (int64_t t = 0; t < 64; ++t) {
        std::vector<int> ex = tr.experts[size_t(t)];
        std::sort(ex.begin(), ex.end());
        for (size_t j = 0; j < ex.size(); ++j) CHECK(routing.data[size_t(t * 16) + j] == uint32_t(ex[j]));
      }
    }
  }
}

TEST_CASE("moe: the dispatch cluster maps onto one route-mode memory unit", "[mapper][moe]") {
  const MoeCase c = moeCases()[0];
  MoeParams p{64, c.hidden, c.ffn, c.experts, c.topK, 16, c.tileF, "routing.csv", true};
  fs::path dir = fs::temp_directory_path() / "stepgen_moe_map";
  writeMoeExample(p, root() + "/examples/moe/data/" + c.traceFile, dir.string(), 5);
  const std::string graph = (dir / "graph.yaml").string();
  try {
    compileGraph(root() + "/arch/default.yaml", graph);
    FAIL("default.yaml has no route-mode memory unit");
  } catch (const DiagError& e) {
    CHECK(e.diags.at(0).id == "M-304");
  }
  CompileResult r = compileGraph(root() + "/arch/moe.yaml", graph);
  const int merge = int(r.graph.findStream("xm").has_value() ? r.graph.stream(*r.graph.findStream("xm")).producer.v : -1);
  REQUIRE(merge >= 0);
  CHECK(r.arch.units.at(size_t(r.mapping.ops.at(size_t(merge)).unit)).kind == UnitKind::Memory);
  int absorbed = 0;
  for (size_t i = 0; i < r.graph.ops.size(); ++i)
    if (r.mapping.ops[i].hostOp == merge) ++absorbed;
  CHECK(absorbed == 1 + 2 * 8);  // the Partition, and a Reshape and a retile per expert
  CHECK(r.mapping.unitsUsed == 4);  // routing rows AG, token rows AG, route MU, store AG
}

TEST_CASE("moe: the whole layer maps onto arch/moe.yaml (route, meta twin, weight loads, combine)", "[mapper][moe]") {
  using testing::cfgField;
  using testing::opIndex;
  const MoeCase c = moeCases()[0];  // Mixtral: E 8, k 2, D 64, F 224, tile_F 32
  for (int64_t tb : {int64_t(16), int64_t(0)}) {
    MoeParams p{64, c.hidden, c.ffn, c.experts, c.topK, tb, c.tileF, "routing.csv"};
    fs::path dir = fs::temp_directory_path() / fmt::format("stepgen_moe_map_layer_{}", tb);
    writeMoeExample(p, root() + "/examples/moe/data/" + c.traceFile, dir.string(), 5);
    CompileResult r = compileGraph(root() + "/arch/moe.yaml", (dir / "graph.yaml").string());
    CHECK(r.mapping.unitsUsed == 19);  // 7 AG (routing, x, wg, wu, wd, rw, y), 4 MU, 8 CU
    // The route EagerMerge: data on one MU, its selector (meta beats) on a second one that
    // reads the same routing rows.
    const OpPlacement& merge = r.mapping.ops.at(size_t(opIndex(r, "merge")));
    REQUIRE(merge.auxUnit >= 0);
    CHECK(merge.auxUnit != merge.unit);
    CHECK(cfgField(r, merge.unit, "route") == 1);
    CHECK(cfgField(r, merge.unit, "out_meta") == 0);
    CHECK(cfgField(r, merge.auxUnit, "route") == 1);
    CHECK(cfgField(r, merge.auxUnit, "out_meta") == 1);
    CHECK(cfgField(r, merge.auxUnit, "tile_rows") == uint64_t(tb));
    int routingSrc[2] = {-1, -1};
    for (const Route& rt : r.mapping.routes)
      for (int i = 0; i < 2; ++i)
        if (rt.dstUnit == (i ? merge.auxUnit : merge.unit) && rt.dstPort == 1) routingSrc[i] = rt.srcUnit;
    CHECK(routingSrc[0] >= 0);
    CHECK(routingSrc[0] == routingSrc[1]);
    // Combine: Partition + 8 x (FlatMap, Flatten) absorbed into the Reassemble's MU.
    const int re = opIndex(r, "reassemble");
    int members = 0;
    for (const auto& o : r.mapping.ops) members += o.hostOp == re;
    CHECK(members == 1 + 2 * 8);
    const int cu = r.mapping.ops[size_t(re)].unit;
    CHECK(cfgField(r, cu, "combine") == 1);
    CHECK(cfgField(r, cu, "k") == 2);
    CHECK(cfgField(r, cu, "row_beats") == 4);  // D 64 / 16 words per beat
    // Weight loads: per group of meta beats, expert id in word 3, F/tf tiles of tf x D.
    const int wg = r.mapping.ops.at(size_t(opIndex(r, "load_wg"))).unit;
    CHECK(cfgField(r, wg, "random") == 1);
    CHECK(cfgField(r, wg, "per_group") == 1);
    CHECK(cfgField(r, wg, "idx_word") == 3);
    CHECK(cfgField(r, wg, "n0") == 224 / 32);
    CHECK(cfgField(r, wg, "s0") == 32 * 64 * 4);
    CHECK(cfgField(r, wg, "idx_stride") == 224 * 64 * 4);  // one expert's F rows of D words
    CHECK(r.mapping.ops.at(size_t(opIndex(r, "addr_g"))).hostOp == opIndex(r, "load_wg"));
    // Gate matmul: b arrives tf x D (bt, N = tf); dynamic tiling counts M from the beats.
    const int mm = r.mapping.ops.at(size_t(opIndex(r, "mm_g"))).unit;
    CHECK(cfgField(r, mm, "bt") == 1);
    CHECK(cfgField(r, mm, "n") == 32);
    CHECK(cfgField(r, mm, "k") == 64);
    CHECK(cfgField(r, mm, "dyn_m") == (tb ? 0u : 1u));
    if (tb) CHECK(cfgField(r, mm, "mn") == 16 * 32);
    CHECK(cfgField(r, r.mapping.ops.at(size_t(opIndex(r, "scale"))).unit, "func") == int(CuFunc::RowScale));
    // Deterministic: a second compile gives the same bitstream, mapping and Verilog.
    CompileResult again = compileGraph(root() + "/arch/moe.yaml", (dir / "graph.yaml").string());
    CHECK(again.bitstream == r.bitstream);
    CHECK(mappingText(again) == mappingText(r));
    REQUIRE(again.rtl.size() == r.rtl.size());
    for (size_t i = 0; i < r.rtl.size(); ++i) CHECK(again.rtl[i].text == r.rtl[i].text);
  }
}

TEST_CASE("moe: a batch larger than the route unit holds is a located mapping error", "[mapper][moe][bad]") {
  const MoeCase c = moeCases()[0];
  MoeParams p{64, c.hidden, c.ffn, c.experts, c.topK, 0, c.tileF, "routing.csv"};
  fs::path dir = fs::temp_directory_path() / "stepgen_moe_b128";
  writeMoeExample(p, root() + "/examples/moe/data/" + c.traceFile, dir.string(), 5);
  // The same layer with B = 128 (compile reads no trace): 128 tokens exceed the 64 of sg_route.
  std::ifstream in((dir / "graph.yaml").string());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("symbols: {B: 64,"), 16, "symbols: {B: 128,");
  { std::ofstream((dir / "graph128.yaml").string()) << text; }
  try {
    compileGraph(root() + "/arch/moe.yaml", (dir / "graph128.yaml").string());
    FAIL("expected M-307");
  } catch (const DiagError& e) {
    CHECK(e.diags.at(0).id == "M-307");
    CHECK_THAT(e.diags[0].message, Catch::Contains("merge") && Catch::Contains("tokens = 128"));
    CHECK(e.diags[0].loc.line > 0);
  }
}

// The scaled Qwen3 layer multiplies rows of K = tile_F = 24 words: arch/moe.yaml's
// banked_ragged compute-unit memory takes them, a banked one with one a copy
// (arch/moe_small.yaml) cannot rotate rows that are not whole 16-word beats.
TEST_CASE("moe: K = 24 rows map on banked_ragged and are M-305 on banked", "[mapper][moe][bad]") {
  const MoeCase c = moeCases()[1];
  REQUIRE(c.tileF == 24);
  MoeParams p{64, c.hidden, c.ffn, c.experts, c.topK, 16, c.tileF, "routing.csv"};
  fs::path dir = fs::temp_directory_path() / "stepgen_moe_k24";
  writeMoeExample(p, root() + "/examples/moe/data/" + c.traceFile, dir.string(), 5);
  CHECK_NOTHROW(compileGraph(root() + "/arch/moe.yaml", (dir / "graph.yaml").string()));
  try {
    compileGraph(root() + "/arch/moe_small.yaml", (dir / "graph.yaml").string());
    FAIL("expected M-305");
  } catch (const DiagError& e) {
    CHECK(e.diags.at(0).id == "M-305");
    CHECK_THAT(e.diags[0].message, Catch::Contains("K = 24") && Catch::Contains("16-word beats") &&
                                       Catch::Contains("banked_ragged"));
    CHECK(e.diags[0].loc.line > 0);
  }
}

// Issue 12: a batch routed in blocks (--block) computes exactly the whole-batch layer: each
// token's output is a sum over its own experts' rows, so splitting the batch changes no
// arithmetic; only the weights are read once per block. Batch 256 in 4 blocks of 64, a
// synthetic routing drawn from the Mixtral trace (the same seed for both graphs).
TEST_CASE("moe: a batch in blocks gives the whole batch's outputs bit for bit", "[moe]") {
  const MoeCase c = moeCases()[0];
  const ArchModel a = loadArch(root() + "/arch/moe.yaml");
  for (int64_t tb : {int64_t(16), int64_t(0)}) {
    std::map<std::string, Matrix> y;
    int64_t offchip[2] = {0, 0};
    for (int64_t block : {int64_t(0), int64_t(64)}) {
      MoeParams p{256, c.hidden, c.ffn, c.experts, c.topK, tb, c.tileF, "routing.csv"};
      p.block = block;
      const fs::path dir = fs::temp_directory_path() / fmt::format("stepgen_moe_block_{}_{}", tb, block);
      writeMoeExample(p, root() + "/examples/moe/data/" + c.traceFile, dir.string(), 9, true, true);
      const StepGraph g = loadGraph((dir / "graph.yaml").string());
      const ShapeResult s = checkShapes(g);
      const auto in = loadInputs(g, (dir / "inputs").string(), 0);
      ModelResult r;
      FunctionalResult f = runFunctional(g, s, a, in);
      addCostFigures(g, s, a, f.streams, nullptr, r);
      offchip[block ? 1 : 0] = r.offchipBytes;
      y[block ? "blocked" : "whole"] = f.outputs.at("y");
      if (block) {
        int selectGens = 0;
        for (const Op& o : g.ops) selectGens += o.kind == OpKind::SelectGen;
        CHECK(selectGens == 4);
      }
    }
    REQUIRE(y.at("whole").data.size() == size_t(256 * c.hidden));
    CHECK(y.at("blocked").data == y.at("whole").data);
    CHECK(offchip[1] > offchip[0]);  // the experts' weights once per block
  }
}
