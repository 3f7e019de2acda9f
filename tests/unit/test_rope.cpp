// RoPE (buildRopeGraph) in the functional model against a double-precision reference written
// as plain loops: for row r at position p and i < H = Dh/2, with a = p theta^(-2i/Dh),
//   out[r][i] = x[r][i] cos a - x[r][H+i] sin a,  out[r][H+i] = x[r][H+i] cos a + x[r][i] sin a.
// Tolerance: the two terms can cancel, so the error is measured against the scale, the sum
// of the two terms' magnitudes (|x1 cos a| + |x2 sin a| for out1, |x2 cos a| + |x1 sin a| for out2). The graph's cos and sin are the double values rounded to fp32
// (2^-24 relative each), each product is rounded once and the sum once: at most 3 * 2^-24 =
// 1.8e-7 of the scale, asserted as 2.5e-7 (and above 1e-9, so the comparison is not vacuous).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "arch/arch_model.hpp"
#include "builders/rope.hpp"
#include "common/fp.hpp"
#include "driver/inputs.hpp"
#include "ir/graph.hpp"
#include "model/functional.hpp"
#include "passes/shape_check.hpp"
#include "support/diag.hpp"
#include "support/files.hpp"
#include "support/kv_lengths.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {


double worstError(const RopeParams& p) {
  const auto dir = std::filesystem::temp_directory_path() / ("sg_rope_" + std::to_string(p.headDim));
  writeFile(dir / "graph.yaml", buildRopeGraph(p));
  const StepGraph g = loadGraph((dir / "graph.yaml").string());
  auto in = loadInputs(g, "", 3);
  for (auto& [name, m] : ropeTables(p)) in[name] = m;
  const ArchModel a = loadArch(std::string(STEPGEN_ROOT) + "/tests/data/arch_dyn_ops.yaml");
  const Matrix out = runFunctional(g, checkShapes(g), a, in).outputs.at("out");
  const Matrix& x = in.at("x");
  const int64_t h = p.headDim / 2, n = int64_t(p.positions.size()) * p.heads;
  REQUIRE(out.rows == n);
  REQUIRE(out.cols == 2 * h);
  double worst = 0;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < h; ++i) {
      const double ang = double(p.positions[size_t(r / p.heads)]) * std::pow(p.theta, -2.0 * double(i) / double(p.headDim));
      const double x1 = f(x.data[size_t(r * 2 * h + i)]), x2 = f(x.data[size_t(r * 2 * h + h + i)]);
      const double scale1 = std::fabs(x1 * std::cos(ang)) + std::fabs(x2 * std::sin(ang)) + 1e-30;
      const double scale2 = std::fabs(x2 * std::cos(ang)) + std::fabs(x1 * std::sin(ang)) + 1e-30;
      const double o1 = x1 * std::cos(ang) - x2 * std::sin(ang), o2 = x2 * std::cos(ang) + x1 * std::sin(ang);
      worst = std::max(worst, std::fabs(f(out.data[size_t(r * 2 * h + i)]) - o1) / scale1);
      worst = std::max(worst, std::fabs(f(out.data[size_t(r * 2 * h + h + i)]) - o2) / scale2);
    }
  return worst;
}

}  // namespace

TEST_CASE("rope: the model within 2.5e-7 of the double reference", "[rope]") {
  enableFtzDaz();
  RopeParams p;
  // Real positions: Azure batch 0's KV lengths (examples/attention/data), and 0 and 100,000.
  p.positions = readKvBatch(std::string(STEPGEN_ROOT) + "/examples/attention/data/azure_kv_batches_b16_b64.csv", 0).lengths;
  p.positions.push_back(0);
  p.positions.push_back(100000);
  for (auto [dim, heads, theta] : {std::tuple<int64_t, int64_t, double>{64, 2, 1e6}, {128, 4, 5e5}}) {
    p.headDim = dim, p.heads = heads, p.theta = theta;
    const double worst = worstError(p);
    INFO("Dh " << dim << " theta " << theta << ": worst error " << worst << " of the scale");
    CHECK(worst < 2.5e-7);
    CHECK(worst > 1e-9);
  }
}

TEST_CASE("rope: position 0 is the identity, and bad parameters are G-120", "[rope]") {
  RopeParams p;
  p.positions = {0, 0};
  const auto t = ropeTables(p);
  for (uint32_t c : t.at("cos").data) CHECK(c == 0x3F800000u);
  for (uint32_t s : t.at("sin").data) CHECK(s == 0u);
  p.headDim = 63;
  CHECK_THROWS_AS(buildRopeGraph(p), DiagError);
  p.headDim = 64, p.positions = {};
  CHECK_THROWS_AS(buildRopeGraph(p), DiagError);
  p.positions = {-1};
  CHECK_THROWS_AS(buildRopeGraph(p), DiagError);
  p.positions = {1}, p.theta = 1;
  CHECK_THROWS_AS(buildRopeGraph(p), DiagError);
}
