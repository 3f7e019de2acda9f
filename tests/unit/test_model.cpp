// The approximate model: numerical results against plain double-precision references,
// off-chip traffic against the closed form of docs/step_semantics.md#swiglu-closed-form, and golden stop-level
// streams for the static operators (hand-worked in the graph files' comments).
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "builders/swiglu.hpp"
#include "common/fp.hpp"
#include "driver/pipeline.hpp"
#include "studies/sweep.hpp"
#include "test_common.hpp"

using namespace stepgen;
namespace fs = std::filesystem;

namespace {

uint32_t bf16(uint32_t b) { return b & 0xFFFF0000u; }

std::string writeGraph(const SwigluParams& p) {
  fs::path path = fs::temp_directory_path() / fmt::format("stepgen_model_{}_{}_{}_{}_{}.yaml", p.batch, p.hidden, p.ffn, p.tileB, p.tileF);
  std::ofstream(path) << buildSwigluGraph(p);
  return path.string();
}

struct Run {
  CompileResult c;
  std::map<std::string, Matrix> in;
  ModelResult m;
};

Run runOn(const std::string& arch, const std::string& graph) {
  Run r{compileGraph(root() + arch, graph), {}, {}};
  r.in = loadInputs(r.c.graph, "", 7);
  r.m = runModel(r.c.graph, r.c.shapes, r.c.mapping, r.c.arch, r.c.programLayout, r.c.image, r.in);
  return r;
}

// Double-precision SwiGLU: out = (silu(x Wg) * (x Wu)) Wd. Matmul operands are rounded
// the way the multiplier format reads them (bf16 truncation or exact fp32), so the
// reference measures the model's rounding, not the number format chosen by the arch.
// Returns max over elements of |model - ref| / (sum_k |h_k wd_kj| + 1e-30).
double swigluRelError(const Run& r, bool bf16In) {
  const Matrix &x = r.in.at("x"), &wg = r.in.at("wg"), &wu = r.in.at("wu"), &wd = r.in.at("wd");
  const Matrix& out = r.m.outputs.at("out");
  int64_t B = x.rows, D = x.cols, F = wg.cols;
  auto op = [&](uint32_t v) { return f(bf16In ? bf16(v) : v); };
  double worst = 0;
  for (int64_t i = 0; i < B; ++i) {
    std::vector<double> h(static_cast<size_t>(F));
    for (int64_t k = 0; k < F; ++k) {
      double g = 0, u = 0;
      for (int64_t d = 0; d < D; ++d) {
        g += op(x.data[i * D + d]) * op(wg.data[d * F + k]);
        u += op(x.data[i * D + d]) * op(wu.data[d * F + k]);
      }
      h[k] = g / (1 + std::exp(-g)) * u;
    }
    for (int64_t j = 0; j < D; ++j) {
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < F; ++k) ref += h[k] * op(wd.data[k * D + j]), mag += std::fabs(h[k] * op(wd.data[k * D + j]));
      worst = std::max(worst, std::fabs(f(out.data[i * D + j]) - ref) / (mag + 1e-30));
    }
  }
  return worst;
}
}  // namespace

// Tolerances, relative to sum_k |h_k * wd_kj| (so cancellation in the last sum cannot
// inflate them): the silu table has 6 mantissa bits per binade (<= 2^-7 relative error of
// sigmoid, measured in test_fp), fp32 accumulation adds <= K * 2^-24; in bf16 mode the
// hardware also truncates h to bf16 before the last matmul (<= 2^-8). Hence 2^-6 for
// bf16_fp32 and 2^-7 for fp32, each with a factor-2 margin over the sum of the bounds.
TEST_CASE("model: SwiGLU matches a double-precision reference (bf16 x bf16 -> fp32)", "[model]") {
  Run r = runOn("/arch/default.yaml", root() + "/examples/swiglu/graph.yaml");
  double e = swigluRelError(r, true);
  INFO("max relative error " << e);
  CHECK(e < std::ldexp(1.0, -6));
  CHECK(e > 0);  // the hardware rounds: an exact match would mean the reference is not independent
}

TEST_CASE("model: SwiGLU matches a double-precision reference (fp32), validation layer", "[model]") {
  Run r = runOn("/arch/step_validation.yaml", writeGraph({64, 256, 512, 32, 64}));
  double e = swigluRelError(r, false);
  INFO("max relative error " << e);
  CHECK(e < std::ldexp(1.0, -7));
}

TEST_CASE("model: off-chip bytes equal the SwiGLU closed form", "[model]") {
  for (auto [tb, tf] : std::vector<std::pair<int, int>>{{16, 16}, {32, 64}, {64, 256}}) {
    Run r = runOn("/arch/step_validation.yaml", writeGraph({64, 256, 512, tb, tf}));
    long long closed = swigluClosedFormBytes(64, 256, 512, tb, tf);
    CHECK(r.m.offchipBytes == closed);
    CHECK(r.m.timing.offchipReadBytes + r.m.timing.offchipWriteBytes == closed);
  }
  // The paper's figure: 8.45 MB at tile 16 x 256 x 16.
  CHECK(swigluClosedFormBytes(64, 256, 512, 16, 16) == 8454144);
}

TEST_CASE("model: cycles never beat the roofline bound", "[model]") {
  Run r = runOn("/arch/step_validation.yaml", writeGraph({64, 256, 512, 16, 16}));
  CHECK_FALSE(r.m.timing.deadlock);
  CHECK(double(r.m.timing.cycles) >= r.m.rooflineCycles);
}

namespace {
std::vector<int> stopsOf(const TokenStream& s) {
  std::vector<int> v;
  for (const Token& t : s)
    if (t.kind != Token::Kind::Done) v.push_back(t.kind == Token::Kind::Stop ? -t.stop : t.stop);
  return v;
}

struct Golden {
  CompileResult c;
  std::map<std::string, Matrix> in;
  FunctionalResult f;
  const TokenStream& stream(const std::string& n) const { return f.streams.at(c.graph.findStream(n)->v); }
};

Golden golden(const std::string& g) {
  Golden r{compileGraph(root() + "/arch/default.yaml", root() + "/tests/data/graphs/" + g), {}, {}};
  r.in = loadInputs(r.c.graph, "", 3);
  r.f = runFunctional(r.c.graph, r.c.shapes, r.c.arch, r.in);
  return r;
}
}  // namespace

TEST_CASE("golden: LinearOffChipLoad walk stops and RepeatStatic(3)", "[model][golden]") {
  Golden g = golden("repeat.yaml");
  CHECK(stopsOf(g.stream("t")) == std::vector<int>{0, 1, 0, 1});
  CHECK(stopsOf(g.stream("r")) == std::vector<int>{0, 0, 1, 0, 0, 2, 0, 0, 1, 0, 0, 2});
  CHECK(g.stream("r").back().kind == Token::Kind::Done);
  const Matrix &a = g.in.at("a"), &o = g.f.outputs.at("out");
  for (int r = 0; r < 12; ++r)
    for (int c = 0; c < 16; ++c) CHECK(o.data[r * 16 + c] == a.data[(r / 3) * 16 + c]);
}

TEST_CASE("golden: Bufferize(1) + Streamify(repeat 2)", "[model][golden]") {
  Golden g = golden("buffer.yaml");
  CHECK(stopsOf(g.stream("s")) == std::vector<int>{0, 1, 0, 2, 0, 1, 0, 2});
  const Matrix &a = g.in.at("a"), &o = g.f.outputs.at("out");
  const int order[8] = {0, 1, 0, 1, 2, 3, 2, 3};  // tile index of each output tile (2 rows each)
  for (int t = 0; t < 8; ++t)
    for (int i = 0; i < 32; ++i) CHECK(o.data[t * 32 + i] == a.data[order[t] * 32 + i]);
}

TEST_CASE("golden: Promote(0), Flatten(0,1), Accum(add, 1), Accum(retile, 1)", "[model][golden]") {
  Golden g = golden("shapes.yaml");
  CHECK(stopsOf(g.stream("t")) == std::vector<int>{0, 0, 1, 0, 0, 1});
  CHECK(stopsOf(g.stream("p")) == std::vector<int>{1, 1, 2, 1, 1, 2});
  CHECK(stopsOf(g.stream("f")) == std::vector<int>{0, 0, 1, 0, 0, 1});
  CHECK(stopsOf(g.stream("o")) == std::vector<int>{0, 0});
  CHECK(stopsOf(g.stream("c")) == std::vector<int>{0, 0});
  enableFtzDaz();
  const Matrix &a = g.in.at("a"), &sum = g.f.outputs.at("sum"), &cat = g.f.outputs.at("cat");
  for (int grp = 0; grp < 2; ++grp)
    for (int i = 0; i < 32; ++i) {
      uint32_t acc = 0;  // +0, then in tile order, as the hardware does
      for (int t = 0; t < 3; ++t) acc = floatToBits(bitsToFloat(acc) + bitsToFloat(a.data[(grp * 3 + t) * 32 + i]));
      CHECK(sum.data[grp * 32 + i] == acc);
    }
  CHECK(cat.data == a.data);
}

// Sizes beyond the machine: the model would fail with a bare allocation error; loadInputs
// stops first with R-406 at the largest tensor, before allocating anything. B = 2^36 makes
// x alone 2^36 x 64 x 4 bytes = 16 TiB.
TEST_CASE("model: tensors too large for this machine are a located error (R-406)", "[model][bad]") {
  StepGraph g = loadGraph(std::string(STEPGEN_ROOT) + "/examples/swiglu/graph.yaml");
  g.symbols["B"] = int64_t(1) << 36;
  try {
    loadInputs(g, "", 1);
    FAIL("expected R-406");
  } catch (const DiagError& e) {
    CHECK(e.diags.at(0).id == "R-406");
    CHECK(e.diags[0].loc.line > 0);
    CHECK_THAT(e.diags[0].message, Catch::Contains("'x'") && Catch::Contains("smaller symbols"));
  }
  g.symbols["B"] = 16;  // the shipped size passes the check
  CHECK_NOTHROW(checkTensorMemory(g));
}
