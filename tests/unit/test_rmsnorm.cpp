// RMSNorm (buildRmsNormGraph) in the functional model against a double-precision reference
// written as plain loops: y[b][d] = x[b][d] / sqrt(sum_d x^2 / D + eps) * w[d].
//
// Tolerance, per element and relative to the reference: every step is fp32 and none
// cancels (squares and their sum are >= 0; the rest are products), so the errors add:
// rsqrt's 7e-6 bound (measured 5.75e-6, tests/unit/test_fp.cpp), the row sum's at most
// log2(D) + 1 roundings of 2^-24 each on non-negative terms, and five more roundings (the
// square, 1/D, + eps, two products): below 7e-6 + (log2 D + 6) 2^-24, under 8e-6 for
// D <= 4,096. The test asserts 1e-5 and that the worst error is above fp32 rounding (so
// the comparison is not vacuous).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "builders/rmsnorm.hpp"
#include "common/fp.hpp"
#include "driver/inputs.hpp"
#include "ir/graph.hpp"
#include "model/functional.hpp"
#include "passes/shape_check.hpp"
#include "support/diag.hpp"
#include "support/files.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {


StepGraph rmsGraph(const RmsNormParams& p, const std::string& tag) {
  const auto dir = std::filesystem::temp_directory_path() / ("sg_rmsnorm_" + tag);
  writeFile(dir / "graph.yaml", buildRmsNormGraph(p));
  return loadGraph((dir / "graph.yaml").string());
}

// The model's out for inputs x and w (the constants added here).
Matrix modelOut(const RmsNormParams& p, std::map<std::string, Matrix> in) {
  const StepGraph g = rmsGraph(p, std::to_string(p.rows) + "x" + std::to_string(p.dim));
  for (auto& [name, m] : rmsNormFixedInputs(p)) in[name] = m;
  const ArchModel a = loadArch(std::string(STEPGEN_ROOT) + "/tests/data/arch_dyn_ops.yaml");
  return runFunctional(g, checkShapes(g), a, in).outputs.at("out");
}

// The worst relative error of the model's out against the double reference.
double worstError(const RmsNormParams& p, const std::map<std::string, Matrix>& in) {
  const Matrix out = modelOut(p, in);
  const Matrix &x = in.at("x"), &w = in.at("w");
  REQUIRE(out.rows == p.rows);
  REQUIRE(out.cols == p.dim);
  double worst = 0;
  for (int64_t b = 0; b < p.rows; ++b) {
    double ss = 0;
    for (int64_t d = 0; d < p.dim; ++d) ss += f(x.data[size_t(b * p.dim + d)]) * f(x.data[size_t(b * p.dim + d)]);
    const double r = 1.0 / std::sqrt(ss / double(p.dim) + double(p.eps));
    for (int64_t d = 0; d < p.dim; ++d) {
      const double want = f(x.data[size_t(b * p.dim + d)]) * r * f(w.data[size_t(d)]);
      const double got = f(out.data[size_t(b * p.dim + d)]);
      if (want == 0) {
        CHECK(got == 0);
        continue;
      }
      worst = std::max(worst, std::fabs(got / want - 1));
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("rmsnorm: the model within 1e-5 of the double reference", "[rmsnorm]") {
  enableFtzDaz();
  for (auto [rows, dim] : {std::pair<int64_t, int64_t>{8, 64}, {5, 128}, {3, 4096}}) {
    RmsNormParams p;
    p.rows = rows, p.dim = dim;
    const double worst = worstError(p, loadInputs(rmsGraph(p, "in"), "", 7));
    INFO("B " << rows << " D " << dim << ": worst relative error " << worst);
    CHECK(worst < 1e-5);
    CHECK(worst > 1e-7);
  }
}

// Rows that test the arithmetic's edges: all zeros (the output is 0: rsqrt(eps) is finite),
// tiny values whose squares flush to zero (FTZ: the mean is then eps's alone, as it nearly
// is in double), large values (squares up to 4.9e35, their sum below FLT_MAX), and one large
// word among small ones; Mixtral's eps 1e-5. A row whose sum of squares overflows fp32 gives
// zeros (x * rsqrt(inf) = x * 0), as an fp32 x.pow(2).mean() does in PyTorch.
TEST_CASE("rmsnorm: zeros, flushed squares, large rows", "[rmsnorm]") {
  enableFtzDaz();
  RmsNormParams p;
  p.rows = 4, p.dim = 64, p.eps = 1e-5f;
  std::map<std::string, Matrix> in;
  Matrix x{p.rows, p.dim, {}}, w{1, p.dim, {}};
  for (int64_t d = 0; d < p.dim; ++d) {
    x.data.push_back(0u);
    w.data.push_back(floatToBits(0.5f + float(d) / 64.0f));
  }
  for (int64_t d = 0; d < p.dim; ++d) x.data.push_back(floatToBits((d % 2 ? -3e-21f : 2e-21f)));
  for (int64_t d = 0; d < p.dim; ++d) x.data.push_back(floatToBits(1e17f * float(1 + d % 7)));
  for (int64_t d = 0; d < p.dim; ++d) x.data.push_back(floatToBits(d == 9 ? 1000.0f : 1e-3f));
  in["x"] = x, in["w"] = w;
  CHECK(worstError(p, in) < 1e-5);

  p.rows = 1;
  in["x"] = Matrix{1, p.dim, std::vector<uint32_t>(size_t(p.dim), floatToBits(1e19f))};  // 64e38 > FLT_MAX
  const Matrix out = modelOut(p, in);
  REQUIRE(out.data.size() == size_t(p.dim));
  for (uint32_t v : out.data) CHECK(v == 0u);
}

TEST_CASE("rmsnorm: bad sizes are G-120", "[rmsnorm]") {
  RmsNormParams p;
  p.dim = 0;
  CHECK_THROWS_AS(buildRmsNormGraph(p), DiagError);
  p.dim = 64, p.eps = -1;
  CHECK_THROWS_AS(buildRmsNormGraph(p), DiagError);
  p.eps = NAN;
  CHECK_THROWS_AS(buildRmsNormGraph(p), DiagError);
}
