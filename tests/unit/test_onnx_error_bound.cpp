// The running error bound (onnx/onnx_error_bound.hpp) against bounds worked by hand, and the
// conformance test it exists for (cancellation in exp(x) - t x).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "common/fp.hpp"
#include "driver/reference.hpp"
#include "onnx/onnx_error_bound.hpp"
#include "studies/onnx_conformance.hpp"
#include "support/files.hpp"
#include "test_common.hpp"

using namespace stepgen;
namespace fs = std::filesystem;

namespace {

const char* kPoissonGraph = R"(stepgraph: t
tensors:
  x: {shape: [1, 2], role: input}
  t: {shape: [1, 2], role: input}
  y: {shape: [1, 2], role: output}
ops:
  - {name: lx, op: LinearOffChipLoad, tensor: x, tile: [1, 2], iter: [1], strides: [[0, 0]], out: s0}
  - {name: bx, op: Broadcast, in: s0, out: [s1, s2]}
  - {name: e, op: Map, fn: exp, in: s1, out: s3}
  - {name: lt, op: LinearOffChipLoad, tensor: t, tile: [1, 2], iter: [1], strides: [[0, 0]], out: s4}
  - {name: z1, op: Zip, in: [s4, s2], out: s5}
  - {name: m, op: Map, fn: mul, in: s5, out: s6}
  - {name: z2, op: Zip, in: [s3, s6], out: s7}
  - {name: d, op: Map, fn: sub, in: s7, out: s8}
  - {name: st, op: LinearOffChipStore, in: s8, tensor: y, iter: [1], strides: [[1, 0]]}
)";

Matrix row(std::initializer_list<float> v) {
  Matrix m{1, int64_t(v.size()), {}};
  for (float f : v) m.data.push_back(floatToBits(f));
  return m;
}

StepGraph graphOf(const std::string& yaml, const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("sg_bound_" + name + ".yaml");
  writeFile(p, yaml);
  return loadGraph(p.string());
}

}  // namespace

TEST_CASE("running error bound: exp(x) - t x by hand", "[onnx]") {
  const StepGraph g = graphOf(kPoissonGraph, "poisson");
  const auto b = runningErrorBounds(g, {{"x", row({1.0f, 0.0f})}, {"t", row({2.0f, 3.0f})}}, FunctionErrors::fabric(false));
  REQUIRE(b);
  const std::vector<double>& y = b->at("y");
  REQUIRE(y.size() == 2);
  const double u = std::ldexp(1.0, -24), e1 = std::exp(1.0);
  // x = 1, t = 2: exp 3.5e-4 x e; t x = 2 exact, rounded (2u); the difference e - 2 rounded
  // on top of both: u (|e - 2| + both).
  const double ea = 3.5e-4 * e1, eb = 2 * u;
  CHECK(std::fabs(y[0] - (ea + eb + u * ((e1 - 2) + ea + eb))) < 1e-15);
  // x = 0: exp(0) = 1 within 3.5e-4, t x = 0 exact, 1 - 0 rounded.
  CHECK(std::fabs(y[1] - (3.5e-4 + u * (1 + 3.5e-4))) < 1e-15);
  // The reference's bound: every function within one rounding.
  const auto r = runningErrorBounds(g, {{"x", row({0.0f, 0.0f})}, {"t", row({0.0f, 0.0f})}}, FunctionErrors::fp32Reference());
  CHECK(std::fabs(r->at("y")[0] - (u + u * (1 + u))) < 1e-20);
}

TEST_CASE("running error bound: none through a reciprocal whose input's error reaches zero", "[onnx]") {
  const std::string yaml = R"(stepgraph: t
tensors:
  x: {shape: [1, 2], role: input}
  y: {shape: [1, 2], role: output}
ops:
  - {name: lx, op: LinearOffChipLoad, tensor: x, tile: [1, 2], iter: [1], strides: [[0, 0]], out: s0}
  - {name: e, op: Map, fn: exp, in: s0, out: s1}
  - {name: r, op: Map, fn: rowsum, in: s1, out: s2}
  - {name: q, op: Map, fn: recip, in: s2, out: s3}
  - {name: st, op: LinearOffChipStore, in: s3, tensor: y, iter: [1], strides: [[1, 0]]}
)";
  const StepGraph g = graphOf(yaml, "recip");
  // exp(0) + exp(0) = 2 within 2 x 3.5e-4 + 2 x 2^-24 x (2 + 7e-4); 1/2 then within
  // e2 / (2 (2 - e2)) + 5e-6 / (2 - e2), in both words of the row.
  const double u = std::ldexp(1.0, -24), e2 = 2 * 3.5e-4 + 2 * u * (2 + 2 * 3.5e-4);
  auto b = runningErrorBounds(g, {{"x", row({0.0f, 0.0f})}}, FunctionErrors::fabric(false));
  REQUIRE(b);
  CHECK(std::fabs(b->at("y")[1] - (e2 / (2 * (2 - e2)) + 5e-6 / (2 - e2))) < 1e-15);
  // An input of -inf: exp gives 0, the sum 0, no bound on 1/0.
  b = runningErrorBounds(g, {{"x", row({-INFINITY, -INFINITY})}}, FunctionErrors::fabric(false));
  REQUIRE(b);
  CHECK(std::isinf(b->at("y")[0]));
}

TEST_CASE("running error bound: a function outside its set gives none", "[onnx]") {
  std::string yaml = kPoissonGraph;
  yaml.replace(yaml.find("fn: exp"), 7, "fn: select");
  CHECK_FALSE(runningErrorBounds(graphOf(yaml, "select"), {{"x", row({1.0f, 0.0f})}, {"t", row({2.0f, 3.0f})}},
                                 FunctionErrors::fabric(false)));
}

TEST_CASE("running error bound: silu by the fabric's sigmoid table, tiles summed by Accum", "[onnx]") {
  // y = silu(x0) + silu(x1) over the two 1-row tiles of x, summed by Accum(add, b = 1).
  const std::string yaml = R"(stepgraph: t
tensors:
  x: {shape: [2, 16], role: input}
  y: {shape: [1, 16], role: output}
ops:
  - {name: lx, op: LinearOffChipLoad, tensor: x, tile: [1, 16], iter: [1, 2], strides: [[0, 0], [1, 0]], out: s0}
  - {name: sl, op: Map, fn: silu, in: s0, out: s1}
  - {name: ac, op: Accum, fn: add, b: 1, in: s1, out: s2}
  - {name: st, op: LinearOffChipStore, in: s2, tensor: y, iter: [1], strides: [[1, 0]]}
)";
  Matrix x{2, 16, {}};
  for (int i = 0; i < 32; ++i) x.data.push_back(floatToBits(i < 16 ? 2.0f : -1.0f));
  const auto b = runningErrorBounds(graphOf(yaml, "accum"), {{"x", x}}, FunctionErrors::fabric(false));
  REQUIRE(b);
  const double u = std::ldexp(1.0, -24), s2 = 2 / (1 + std::exp(-2.0)), s1 = -1 / (1 + std::exp(1.0));
  // silu(x): |x| x 2e-3 of the table plus one rounding of the product; the sum of the two
  // tiles inherits both and one rounding of their magnitudes.
  const double e2 = 2 * 2e-3 + u * s2, e1 = 1 * 2e-3 + u * std::fabs(s1);
  CHECK(std::fabs(b->at("y")[0] - (e2 + e1 + u * (s2 + e2 + std::fabs(s1) + e1))) < 1e-15);
}

TEST_CASE("ONNX conformance: exp(x) - t x passes within the running bound, not the static one", "[onnx]") {
  OnnxConformanceOptions o;
  o.archPath = kRoot + "/arch/onnx.yaml";
  o.only = "test_PoissonNLLLLoss_no_reduce";
  o.workDir = (fs::temp_directory_path() / "sg_conf_poisson").string();
  o.csvPath = o.workDir + ".csv";
  REQUIRE(runOnnxConformance(o) == 0);
  const std::string csv = readText(o.csvPath);
  CHECK(csv.find(",yes,yes,,") != std::string::npos);           // supported, model_ok
  CHECK(csv.find("within the running error bound") != std::string::npos);  // not by the static bound
}

TEST_CASE("reference check: NaN in one output only is outside, in both equal", "[onnx]") {
  const Matrix want = row({1.0f, NAN, 2.0f});
  const RunningBounds none = onFirstCall([] { return Bounds{}; });
  ElementCheck c;
  checkElements(row({NAN, NAN, 2.0f}), want, 1e-3, "y", none, c);
  CHECK(c.outside == 1);  // element 0; element 1 is NaN in both
  CHECK(std::isinf(c.maxRelErr));
  ElementCheck d;
  checkElements(row({1.0005f, NAN, 2.0f}), want, 1e-3, "y", none, d);
  CHECK(d.outside == 0);
  CHECK(std::fabs(d.maxAbsErr - (1.0005 - 1.0)) < 1e-6);  // 1.0005f is 1.00049996
  CHECK(std::fabs(d.maxRelErr - d.maxAbsErr / 1.0) < 1e-12);
}

// An index load (ONNX Gather) reads exact values: a gathered row times a weight column has
// the bound of that product (K u |terms|), worked here with the rows the indices name.
TEST_CASE("running error bound: an index load's rows, then a product", "[onnx]") {
  const StepGraph g = graphOf(R"(stepgraph: t
tensors:
  emb: {shape: [8, 2], role: input}
  ids: {shape: [3, 16], role: input}
  w: {shape: [2, 1], role: input}
  y: {shape: [3, 1], role: output}
ops:
  - {name: li, op: LinearOffChipLoad, tensor: ids, tile: [1, 16], iter: [3], strides: [[1, 0]], out: s0}
  - {name: ga, op: RandomOffChipLoad, in: s0, tensor: emb, tile: [1, 2], index: 0, out: s1}
  - {name: lw, op: LinearOffChipLoad, tensor: w, tile: [2, 1], iter: [3], strides: [[0, 0]], out: s2}
  - {name: z, op: Zip, in: [s1, s2], out: s3}
  - {name: m, op: Map, fn: matmul, in: s3, out: s4}
  - {name: st, op: LinearOffChipStore, in: s4, tensor: y, iter: [3], strides: [[1, 0]]}
)", "gather");
  Matrix emb{8, 2, {}}, ids{3, 16, std::vector<uint32_t>(48, 0)};
  for (int r = 0; r < 8; ++r) emb.data.push_back(floatToBits(float(r + 1))), emb.data.push_back(floatToBits(-2.0f * float(r)));
  const uint32_t pick[3] = {6, 0, 3};
  for (int k = 0; k < 3; ++k) ids.data[size_t(k * 16)] = pick[k];
  const auto b = runningErrorBounds(g, {{"emb", emb}, {"ids", ids}, {"w", row({0.5f, 3.0f})}}, FunctionErrors::fabric(false));
  REQUIRE(b);
  const double u = std::ldexp(1.0, -24);
  for (int k = 0; k < 3; ++k) {
    const double r = double(pick[k]);
    // Two terms: (r + 1) 0.5 and -2 r 3, each exact; the sum of 2 terms rounded: 2 u |terms|.
    CHECK(std::fabs(b->at("y")[size_t(k)] - 2 * u * ((r + 1) * 0.5 + 6 * r)) < 1e-18);
  }
}
