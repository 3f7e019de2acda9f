// The on-fabric router (model/router.hpp; Map fn topk / topk_weights): the choice against a
// plain selection loop written here on random and adversarial logits, the weights against a
// double softmax, and `graph moe --router` in the functional model against a double-precision
// MoE layer whose routing is computed here from x and Wr.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>

#include "arch/arch_model.hpp"
#include "builders/moe.hpp"
#include "common/fp.hpp"
#include "driver/inputs.hpp"
#include "driver/moe_example.hpp"
#include "ir/graph.hpp"
#include "model/functional.hpp"
#include "model/router.hpp"
#include "moe_ref.hpp"
#include "passes/shape_check.hpp"
#include "support/diag.hpp"
#include "support/files.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {

uint32_t bits(float x) { return floatToBits(x); }

// The reference choice: k times the first index of the largest value among those not taken
// yet, a NaN never larger than anything, zeros and subnormals equal (flushed); then sorted.
std::vector<int> plainTopk(const std::vector<uint32_t>& row, int k) {
  auto value = [](uint32_t b) {
    const uint32_t flushed = (b & 0x7F800000u) == 0 ? 0u : b;
    return double(bitsToFloat(flushed));
  };
  std::vector<bool> taken(row.size(), false);
  std::vector<int> out;
  for (int n = 0; n < k; ++n) {
    int best = -1;
    for (size_t i = 0; i < row.size(); ++i) {
      if (taken[i]) continue;
      if (best < 0) {
        best = int(i);
        continue;
      }
      const double v = value(row[i]), b = value(row[size_t(best)]);
      if (!std::isnan(v) && (std::isnan(b) || v > b)) best = int(i);
    }
    taken[size_t(best)] = true;
    out.push_back(best);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("router: topk picks what a plain selection loop picks, ties to the lower index, NaN last", "[router]") {
  std::mt19937 rng(11);
  std::normal_distribution<float> n(0.0f, 2.0f);
  for (int trial = 0; trial < 2000; ++trial) {
    const int e = 1 + int(rng() % 32), k = 1 + int(rng() % uint32_t(std::min(e, 8)));
    std::vector<uint32_t> row;
    for (int i = 0; i < e; ++i) {
      const uint32_t kind = rng() % 16;  // mostly random, some ties and specials
      row.push_back(kind == 0   ? bits(1.0f)
                    : kind == 1 ? bits(-std::numeric_limits<float>::infinity())
                    : kind == 2 ? 0x7FC00000u  // NaN
                    : kind == 3 ? (rng() % 2 ? 0x80000000u : 0x00000001u)  // -0 or a subnormal: zero
                    : kind == 4 ? 0u
                                : bits(n(rng)));
    }
    INFO("trial " << trial << ", e " << e << ", k " << k);
    CHECK(topkSelect(row.data(), e, k) == plainTopk(row, k));
  }
  // By hand: ties to the lower index, NaN below -inf, +0 / -0 / subnormal equal.
  const uint32_t nan = 0x7FC00000u, ninf = bits(-std::numeric_limits<float>::infinity());
  std::vector<uint32_t> r = {bits(2), bits(5), bits(5), bits(-1), bits(5)};
  CHECK(topkSelect(r.data(), 5, 2) == std::vector<int>{1, 2});
  r = {nan, ninf, nan, bits(-3)};
  CHECK(topkSelect(r.data(), 4, 2) == std::vector<int>{1, 3});
  CHECK(topkSelect(r.data(), 4, 3) == std::vector<int>{0, 1, 3});
  r = {0x80000000u, 0x00000001u, 0u, bits(-1e-30f)};
  CHECK(topkSelect(r.data(), 4, 1) == std::vector<int>{0});
  CHECK_THROWS_AS(topkSelect(r.data(), 4, 5), std::invalid_argument);
}

// The weights are a softmax over the chosen logits. Error: each exp within 3.5e-4 relative
// (fp32Exp, test_fp.cpp), so each ratio within 2 x 3.5e-4; recip within 4e-6; the sum and the
// product a few 2^-24: asserted within 7.5e-4 of each weight, and not exact.
TEST_CASE("router: topk_weights are the softmax over the chosen logits", "[router]") {
  std::mt19937 rng(5);
  std::normal_distribution<float> n(0.0f, 3.0f);
  double worst = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const int e = 2 + int(rng() % 16), k = 1 + int(rng() % uint32_t(std::min(e, 8)));
    std::vector<uint32_t> row;
    for (int i = 0; i < e; ++i) row.push_back(bits(n(rng)));
    const std::vector<int> chosen = topkSelect(row.data(), e, k);
    const std::vector<uint32_t> w = topkWeights(row.data(), chosen);
    double m = -1e300, z = 0;
    for (int i : chosen) m = std::max(m, f(row[size_t(i)]));
    for (int i : chosen) z += std::exp(f(row[size_t(i)]) - m);
    for (size_t j = 0; j < chosen.size(); ++j) {
      const double ref = std::exp(f(row[size_t(chosen[j])]) - m) / z;
      worst = std::max(worst, std::fabs(f(w[j]) - ref) / ref);
    }
  }
  INFO("worst relative error " << worst);
  CHECK(worst < 7.5e-4);
  CHECK(worst > 0);
  // A chosen -inf beside a finite logit weighs 0; all chosen -inf gives NaN.
  const uint32_t ninf = bits(-std::numeric_limits<float>::infinity());
  std::vector<uint32_t> r = {bits(1), ninf, ninf};
  std::vector<uint32_t> w = topkWeights(r.data(), {0, 1});
  CHECK(f(w[1]) == 0.0);
  CHECK(std::fabs(f(w[0]) - 1.0) < 4e-6);  // e_0 times its own reciprocal: recip's error
  w = topkWeights(r.data(), {1, 2});
  CHECK(std::isnan(f(w[0])));
}

// The layer with --router on arch/moe.yaml (bf16 operands): the reference computes each
// token's logits from x and Wr as the multiplier reads them (bf16-truncated operands, sums in
// double), its top k by plainTopk, their softmax in double, and the experts as test_moe.cpp.
// Tolerance as test_moe.cpp's for bf16 (2^-6 of the terms' magnitudes, which covers the
// weights' 7.5e-4); the chosen experts must be the same (no near tie in these seeds).
TEST_CASE("router: graph moe --router matches a double-precision layer that routes itself", "[router][moe]") {
  for (int64_t tb : {int64_t(0), int64_t(8)}) {
    MoeParams p{32, 64, 64, 8, 2, tb, 32, "routing.csv"};
    p.router = true;
    const auto dir = std::filesystem::temp_directory_path() / ("sg_router_" + std::to_string(tb));
    std::filesystem::remove_all(dir);
    writeMoeExample(p, "", dir.string(), 4);
    const StepGraph g = loadGraph((dir / "graph.yaml").string());
    const auto in = loadInputs(g, (dir / "inputs").string(), 0);
    const ArchModel a = loadArch(root() + "/arch/moe.yaml");
    REQUIRE(a.cu.format == NumberFormat::Bf16Fp32);
    const FunctionalResult out = runFunctional(g, checkShapes(g), a, in);
    const Matrix &x = in.at("x"), &wr = in.at("wr"), &y = out.outputs.at("y");
    auto op = [](uint32_t v) { return f(v & 0xFFFF0000u); };
    double worst = 0;
    for (int64_t t = 0; t < p.batch; ++t) {
      std::vector<double> logit(size_t(p.experts), 0.0);
      std::vector<uint32_t> lbits;
      for (int64_t e = 0; e < p.experts; ++e) {
        for (int64_t d = 0; d < p.hidden; ++d) logit[size_t(e)] += op(x.data[size_t(t * p.hidden + d)]) * op(wr.data[size_t(e * p.hidden + d)]);
        lbits.push_back(bits(float(logit[size_t(e)])));
      }
      const std::vector<int> chosen = plainTopk(lbits, int(p.topK));
      double m = -1e300, z = 0;
      for (int e : chosen) m = std::max(m, logit[size_t(e)]);
      for (int e : chosen) z += std::exp(logit[size_t(e)] - m);
      std::vector<double> ref(size_t(p.hidden), 0.0), mag(size_t(p.hidden), 0.0);
      for (int e : chosen)
        addExpertRow(x, t, in.at("wg"), in.at("wu"), in.at("wd"), e, p.hidden, p.ffn, std::exp(logit[size_t(e)] - m) / z, op, ref, mag);
      for (int64_t d = 0; d < p.hidden; ++d)
        worst = std::max(worst, std::fabs(f(y.data[size_t(t * p.hidden + d)]) - ref[size_t(d)]) / (mag[size_t(d)] + 1e-30));
    }
    INFO("tile " << tb << ": worst relative error " << worst);
    CHECK(worst < std::ldexp(1.0, -6));
    CHECK(worst > 0);
    // The weights the layer stored: a row of k 16-word pieces per token, the weight in word 0
    // of each; each weight went through a bf16 product (the spread) on this bf16 fabric, so
    // their sum is within k x 2^-8 of 1.
    const Matrix& rw = out.outputs.at("rw");
    REQUIRE(rw.cols == p.topK * 16);
    for (int64_t t = 0; t < p.batch; ++t) {
      double s = 0;
      for (int64_t j = 0; j < p.topK; ++j) s += f(rw.data[size_t(t * rw.cols + j * 16)]);
      CHECK(std::fabs(s - 1.0) < std::ldexp(double(p.topK), -8));
    }
  }
}

TEST_CASE("router: topk takes a row of at most 8 chosen of E logits", "[router][bad]") {
  MoeParams p{16, 64, 64, 8, 2, 0, 32, "routing.csv"};
  p.router = true;
  std::string text = buildMoeGraph(p);
  const auto dir = std::filesystem::temp_directory_path() / "sg_router_bad";
  auto shapeError = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    writeFile(dir / "graph.yaml", t);
    try {
      checkShapes(loadGraph((dir / "graph.yaml").string()));
    } catch (const DiagError& e) {
      return e.diags.at(0).id;
    }
    return std::string("none");
  };
  CHECK(shapeError("fn: topk, k: K", "fn: topk, k: 9") == "S-203");
  CHECK(shapeError("fn: topk_logits, k: K", "fn: topk_logits, k: 0") == "S-203");
  CHECK(shapeError("name: gate, op: Map, fn: matmul_t", "name: gate, op: Map, fn: matmul_t, k: 2") == "S-203");
  p.regions = 2;
  CHECK_THROWS_AS(buildMoeGraph(p), DiagError);
}
