// Scan(add), Expand, Parallelize and Partition on a fabric (tests/data/arch_dyn_ops.yaml and the
// graphs tests/data/graphs/scan.yaml, expand.yaml, parallelize.yaml, parallelize_scan.yaml, partition.yaml, which
// tests/e2e.cmake also runs through `stepgen verify`): the units and configuration fields the
// mapper and bitstream give them, the model's outputs against plain loops over the inputs
// `verify` uses, and the timing model on streams with empty groups.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/fp.hpp"
#include "driver/pipeline.hpp"
#include "model/routing_ops.hpp"
#include "model/timing.hpp"

#include "compiled.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {

std::string arch() { return root() + "/tests/data/arch_dyn_ops.yaml"; }
std::string graph(const std::string& name) { return root() + "/tests/data/graphs/" + name + ".yaml"; }

uint64_t field(const CompileResult& c, int unit, const std::string& name) { return testing::cfgField(c, unit, name); }

const OpPlacement& placed(const CompileResult& c, const std::string& op) {
  return c.mapping.ops.at(size_t(testing::opIndex(c, op)));
}

// The unit feeding input `port` of `unit`, or -1.
int sourceOf(const CompileResult& c, int unit, int port) {
  for (const Route& r : c.mapping.routes)
    if (r.dstUnit == unit && r.dstPort == port) return r.srcUnit;
  return -1;
}

bool isCu(const CompileResult& c, int unit) { return unit >= 0 && c.arch.units.at(size_t(unit)).kind == UnitKind::Compute; }

// The unit `op` is placed on, required to be a compute unit and checked to run `func`.
int placedCu(const CompileResult& c, const std::string& op, CuFunc func) {
  const int u = placed(c, op).unit;
  REQUIRE(isCu(c, u));
  CHECK(field(c, u, "func") == uint64_t(func));
  return u;
}

// The inputs `stepgen verify` draws without --inputs (seed 1), and the model's outputs on them.
struct MapRun {
  CompileResult c;
  std::map<std::string, Matrix> in;
  ModelResult model;
};
MapRun runModelOn(const std::string& name) {
  MapRun r;
  r.c = compileGraph(arch(), graph(name));
  r.in = loadInputs(r.c.graph, "", VerifyOptions{}.seed);
  r.model = runModel(r.c.graph, r.c.shapes, r.c.mapping, r.c.arch, r.c.layout, r.c.image, r.in);
  return r;
}

// Row `row` (16 words) of a matrix.
std::vector<uint32_t> rowOf(const Matrix& m, int64_t row) {
  return {m.data.begin() + row * m.cols, m.data.begin() + (row + 1) * m.cols};
}

// Word-wise a + b as plain host floats (FTZ/DAZ set by the test; the inputs are in [-1, 1)).
std::vector<uint32_t> addRows(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  std::vector<uint32_t> s(a.size());
  for (size_t i = 0; i < a.size(); ++i) s[i] = floatToBits(bitsToFloat(a[i]) + bitsToFloat(b[i]));
  return s;
}

void checkRows(const Matrix& got, const std::vector<std::vector<uint32_t>>& want) {
  REQUIRE(got.rows == int64_t(want.size()));
  for (size_t r = 0; r < want.size(); ++r) {
    INFO("row " << r);
    CHECK(rowOf(got, int64_t(r)) == want[r]);
  }
}

}  // namespace

TEST_CASE("dyn ops: the arch functions scan / expand / parallelize build the dynamic-tile datapath", "[mapper][dynops]") {
  CHECK(loadArch(arch()).cu.dynamicTiles());
  CHECK_FALSE(loadArch(root() + "/arch/default.yaml").cu.dynamicTiles());
  try {  // default.yaml lists no scan
    compileGraph(root() + "/arch/default.yaml", graph("scan"));
    FAIL("expected M-304");
  } catch (const DiagError& e) {
    CHECK(e.diags.at(0).id == "M-304");
    CHECK_THAT(e.diags[0].message, Catch::Contains("'scan'"));
  }
}

TEST_CASE("dyn ops: Scan(add) maps onto a compute unit, func 8", "[mapper][dynops]") {
  CompileResult c = compileGraph(arch(), graph("scan"));
  const int u = placedCu(c, "sc", CuFunc::Scan);
  CHECK(field(c, u, "accum_b") == 1);
  CHECK(field(c, u, "o_beats") == 2);  // 2x16 tiles, 16 words per beat
  CHECK(field(c, u, "dyn_m") == 0);
  CHECK(sourceOf(c, u, 0) == placed(c, "ld").unit);
  CHECK(c.mapping.unitsUsed == 3);
}

TEST_CASE("dyn ops: Expand maps onto a compute unit, data on in0 and ref on in1, func 9", "[mapper][dynops]") {
  CompileResult c = compileGraph(arch(), graph("expand"));
  const int u = placedCu(c, "ex", CuFunc::Expand);
  CHECK(field(c, u, "accum_b") == 1);
  CHECK(field(c, u, "a_base0") == 0);
  CHECK(sourceOf(c, u, 0) == placed(c, "ld_d").unit);
  CHECK(sourceOf(c, u, 1) == placed(c, "ld_r").unit);
  CHECK(sourceOf(c, placed(c, "st").unit, 0) == u);
}

TEST_CASE("dyn ops: Parallelize takes one compute unit per output, each with its index", "[mapper][dynops]") {
  SECTION("rank 0, two outputs") {
    CompileResult c = compileGraph(arch(), graph("parallelize"));
    const OpPlacement& p = placed(c, "par");
    REQUIRE(p.extraUnits.size() == 1);
    const std::vector<int> units = {p.unit, p.extraUnits[0]};
    CHECK(units[0] != units[1]);
    for (int k = 0; k < 2; ++k) {
      INFO("output " << k);
      REQUIRE(isCu(c, units[size_t(k)]));
      CHECK(p.unitOfOutput(size_t(k)) == units[size_t(k)]);
      CHECK(field(c, units[size_t(k)], "enable") == 1);
      CHECK(field(c, units[size_t(k)], "func") == uint64_t(CuFunc::Parallelize));
      CHECK(field(c, units[size_t(k)], "n") == 2);
      CHECK(field(c, units[size_t(k)], "idx_word") == uint64_t(k));
      CHECK(field(c, units[size_t(k)], "accum_b") == 0);  // rank 0: every tile an element
      CHECK(sourceOf(c, units[size_t(k)], 0) == placed(c, "ld").unit);  // the input broadcast to both
    }
    CHECK(sourceOf(c, placed(c, "st0").unit, 0) == units[0]);
    CHECK(sourceOf(c, placed(c, "st1").unit, 0) == units[1]);
    CHECK(c.mapping.unitsUsed == 5);
  }
  SECTION("rank 1, three outputs, output 0 into a Scan") {
    CompileResult c = compileGraph(arch(), graph("parallelize_scan"));
    const OpPlacement& p = placed(c, "par");
    REQUIRE(p.extraUnits.size() == 2);
    for (int k = 0; k < 3; ++k) {
      const int u = p.unitOfOutput(size_t(k));
      INFO("output " << k);
      REQUIRE(isCu(c, u));
      CHECK(field(c, u, "n") == 3);
      CHECK(field(c, u, "idx_word") == uint64_t(k));
      CHECK(field(c, u, "accum_b") == 1);
      CHECK(sourceOf(c, u, 0) == placed(c, "ld").unit);
    }
    CHECK(sourceOf(c, placed(c, "sc").unit, 0) == p.unit);
    CHECK(sourceOf(c, placed(c, "st1").unit, 0) == p.extraUnits[0]);
    CHECK(sourceOf(c, placed(c, "st2").unit, 0) == p.extraUnits[1]);
    CHECK(c.mapping.unitsUsed == 8);  // 4 AG, 4 CU: the whole fabric
  }
}

TEST_CASE("dyn ops: a Partition of its own takes one compute unit per output, data and selector on each", "[mapper][dynops]") {
  CompileResult c = compileGraph(arch(), graph("partition"));
  const OpPlacement& p = placed(c, "part");
  REQUIRE(p.extraUnits.size() == 1);
  for (int k = 0; k < 2; ++k) {
    const int u = p.unitOfOutput(size_t(k));
    INFO("output " << k);
    REQUIRE(isCu(c, u));
    CHECK(field(c, u, "func") == uint64_t(CuFunc::Partition));
    CHECK(field(c, u, "n") == 2);
    CHECK(field(c, u, "idx_word") == uint64_t(k));
    CHECK(sourceOf(c, u, 0) == placed(c, "load_x").unit);  // data and selector broadcast to both
    CHECK(sourceOf(c, u, 1) == placed(c, "route").unit);
  }
  CHECK(sourceOf(c, placed(c, "store1").unit, 0) == p.extraUnits[0]);
  CHECK(c.mapping.unitsUsed == 6);
}

TEST_CASE("dyn ops: model outputs equal plain loops over verify's inputs", "[model][dynops]") {
  enableFtzDaz();
  SECTION("Scan(add, 1): running sums of groups of 3 tiles of 2 rows") {
    MapRun r = runModelOn("scan");
    const Matrix& a = r.in.at("a");
    std::vector<std::vector<uint32_t>> want;
    for (int g = 0; g < 2; ++g) {
      std::vector<uint32_t> acc[2] = {std::vector<uint32_t>(16, 0), std::vector<uint32_t>(16, 0)};  // +0
      for (int i = 0; i < 3; ++i)
        for (int row = 0; row < 2; ++row) {
          acc[row] = addRows(acc[row], rowOf(a, 6 * g + 2 * i + row));
          want.push_back(acc[row]);
        }
    }
    checkRows(r.model.outputs.at("out"), want);
    CHECK_FALSE(r.model.timing.deadlock);
  }
  SECTION("Expand(1): each 2-row data tile three times") {
    MapRun r = runModelOn("expand");
    std::vector<std::vector<uint32_t>> want;
    for (int g = 0; g < 2; ++g)
      for (int i = 0; i < 3; ++i)
        for (int row = 0; row < 2; ++row) want.push_back(rowOf(r.in.at("d"), 2 * g + row));
    checkRows(r.model.outputs.at("out"), want);
    CHECK_FALSE(r.model.timing.deadlock);
  }
  SECTION("Parallelize(2) of 5 tiles: 3 and 2") {
    MapRun r = runModelOn("parallelize");
    const Matrix& a = r.in.at("a");
    checkRows(r.model.outputs.at("p0"), {rowOf(a, 0), rowOf(a, 2), rowOf(a, 4)});
    checkRows(r.model.outputs.at("p1"), {rowOf(a, 1), rowOf(a, 3)});
    CHECK_FALSE(r.model.timing.deadlock);
  }
  SECTION("Partition(2, b 0) of 12 rows by the trace partition_route.csv") {
    MapRun r = runModelOn("partition");
    const Matrix& x = r.in.at("x");
    const int route[12] = {1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1};  // the trace, by hand
    std::vector<std::vector<uint32_t>> y[2];
    for (int t = 0; t < 12; ++t) y[route[t]].push_back(rowOf(x, t));
    for (auto& rows : y) rows.resize(12, std::vector<uint32_t>(16, 0u));  // rows past the stream stay 0
    for (int t = 0; t < 12; ++t) CHECK(r.in.at("routing").data.at(size_t(t * 16)) == uint32_t(route[t]));  // what the fabric reads
    checkRows(r.model.outputs.at("y0"), y[0]);
    checkRows(r.model.outputs.at("y1"), y[1]);
    CHECK_FALSE(r.model.timing.deadlock);
  }
  SECTION("Parallelize(3) of 7 elements of 2 tiles, Scan(add, 1) on output 0") {
    MapRun r = runModelOn("parallelize_scan");
    const Matrix& a = r.in.at("a");
    std::vector<std::vector<uint32_t>> p0, p1, p2;
    for (int e = 0; e < 7; ++e) {
      const auto x = rowOf(a, 2 * e), y = rowOf(a, 2 * e + 1);
      const std::vector<uint32_t> zero(16, 0);  // +0: a scan group starts from it
      if (e % 3 == 0) p0.push_back(addRows(zero, x)), p0.push_back(addRows(addRows(zero, x), y));
      if (e % 3 == 1) p1.push_back(x), p1.push_back(y);
      if (e % 3 == 2) p2.push_back(x), p2.push_back(y);
    }
    checkRows(r.model.outputs.at("p0"), p0);
    checkRows(r.model.outputs.at("p1"), p1);
    checkRows(r.model.outputs.at("p2"), p2);
    CHECK_FALSE(r.model.timing.deadlock);
  }
}

namespace {
Token tile(int64_t rows, uint32_t v, int stop) { return Token::tile(rows, 16, std::vector<uint32_t>(size_t(rows) * 16, v), stop); }
}  // namespace

TEST_CASE("dyn ops: timing model runs Expand and Parallelize streams with empty groups to the end", "[model][dynops][timing]") {
  // Streams no fabric load makes (STOP-only beats), fed to the timing model directly (the
  // stores' walks bound the tiles a stream may hold).
  SECTION("Expand(1): an empty ref group uses up a data STOP") {
    CompileResult c = compileGraph(arch(), graph("expand"));
    std::vector<TokenStream> s(c.graph.streams.size());
    TokenStream& d = s.at(c.graph.findStream("ds")->v);
    TokenStream& ref = s.at(c.graph.findStream("rs")->v);
    d = {tile(2, 1, 1), Token::stopOnly(1), tile(2, 2, 1), Token::done()};
    ref = {tile(1, 0, 0), tile(1, 0, 1), Token::stopOnly(1), tile(1, 0, 0), tile(1, 0, 0), tile(1, 0, 1), Token::done()};
    s.at(c.graph.findStream("e")->v) = expand(d, ref, 1);
    const TimingResult t = estimateTiming(c.graph, c.mapping, c.arch, c.layout, c.image, s);
    CHECK_FALSE(t.deadlock);
    CHECK(t.cycles > 0);
  }
  SECTION("Parallelize(2): empty outermost elements are elements too") {
    CompileResult c = compileGraph(arch(), graph("parallelize"));
    std::vector<TokenStream> s(c.graph.streams.size());
    // Elements {1 2}, {}, {3}, {}: output 0 gets three tiles (as many as its store walks),
    // output 1 only the two empty elements.
    const TokenStream in = {tile(1, 1, 0), tile(1, 2, 1), Token::stopOnly(1), tile(1, 3, 1), Token::stopOnly(1),
                            Token::done()};
    s.at(c.graph.findStream("t")->v) = in;
    const std::vector<TokenStream> outs = parallelize(in, 2);
    REQUIRE(outs.at(1).size() == 3);  // {STOP1}, {STOP1}, DONE
    s.at(c.graph.findStream("o0")->v) = outs[0];
    s.at(c.graph.findStream("o1")->v) = outs[1];
    const TimingResult t = estimateTiming(c.graph, c.mapping, c.arch, c.layout, c.image, s);
    CHECK_FALSE(t.deadlock);
    CHECK(t.cycles > 0);
  }
}

// Map(sub) then Map(exp) (tests/data/graphs/exp_sub.yaml): funcs 11 and 12 on two compute
// units, the arch's exp turning on the tables (ATTN = 1), and the model's output against
// exp(x - m) in long double: within the table's 3.5e-4 (tests/unit/test_fp.cpp) plus the
// fp32 rounding of x - m (2^-24 relative of |x - m| < 2, so < 1.2e-7 in the exponent).
TEST_CASE("softmax numerator: Map(sub) and Map(exp) map, model against exp(x - m)", "[mapper][dynops]") {
  enableFtzDaz();
  CHECK(loadArch(arch()).cu.hasAttn());
  CHECK_FALSE(loadArch(root() + "/arch/default.yaml").cu.hasAttn());
  MapRun r = runModelOn("exp_sub");
  const int su = placedCu(r.c, "sub", CuFunc::Sub);
  const int ex = placedCu(r.c, "exp", CuFunc::Exp);
  CHECK(sourceOf(r.c, ex, 0) == su);
  const Matrix& x = r.in.at("x");
  const Matrix& m = r.in.at("m");
  const Matrix& y = r.model.outputs.at("out");
  REQUIRE(y.data.size() == x.data.size());
  double worst = 0;
  for (size_t i = 0; i < y.data.size(); ++i) {
    const long double want = std::exp((long double)bitsToFloat(x.data[i]) - (long double)bitsToFloat(m.data[i]));
    worst = std::max(worst, double(std::fabs((long double)bitsToFloat(y.data[i]) / want - 1.0L)));
  }
  CHECK(worst <= 3.6e-4);
  try {  // default.yaml lists no exp
    compileGraph(root() + "/arch/default.yaml", graph("exp_sub"));
    FAIL("expected M-304");
  } catch (const DiagError& e) {
    CHECK(e.diags.at(0).id == "M-304");
  }
}

// The softmax pieces out = exp(x - m) * recip(s) (tests/data/graphs/softmax_parts.yaml) on
// four compute units (funcs 11, 12, 13 and 3), the model against long double: exp's 3.5e-4
// (tests/unit/test_fp.cpp), recip's 5e-6 and two fp32 roundings (1.2e-7): within 3.6e-4.
TEST_CASE("softmax pieces: Map(sub, exp, recip, mul) map, model against exp(x - m) / s", "[mapper][dynops]") {
  enableFtzDaz();
  MapRun r = runModelOn("softmax_parts");
  placedCu(r.c, "sub", CuFunc::Sub);
  const int ex = placedCu(r.c, "exp", CuFunc::Exp);
  const int rc = placedCu(r.c, "recip", CuFunc::Recip);
  const int mu = placedCu(r.c, "mul", CuFunc::Mul);
  CHECK(sourceOf(r.c, mu, 0) == ex);
  CHECK(sourceOf(r.c, mu, 1) == rc);
  const Matrix &x = r.in.at("x"), &m = r.in.at("m"), &s = r.in.at("s"), &y = r.model.outputs.at("out");
  REQUIRE(y.data.size() == x.data.size());
  double worst = 0;
  for (size_t i = 0; i < y.data.size(); ++i) {
    const long double want = std::exp((long double)bitsToFloat(x.data[i]) - (long double)bitsToFloat(m.data[i])) /
                             (long double)bitsToFloat(s.data[i]);
    worst = std::max(worst, double(std::fabs((long double)bitsToFloat(y.data[i]) / want - 1.0L)));
  }
  CHECK(worst <= 3.6e-4);
}
