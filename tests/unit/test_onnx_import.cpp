// The ONNX importer (generator/onnx) against ONNX's own node tests (Debian's libonnx-testdata:
// models with input and expected output tensors written by ONNX's reference, numpy) and
// against plain loops for the layout folding. Every expected value comes from those files
// or from a loop here, never from stepgen.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "builders/rmsnorm.hpp"
#include "common/fp.hpp"
#include "driver/inputs.hpp"
#include "driver/pipeline.hpp"
#include "driver/reference.hpp"
#include "onnx/onnx_error_bound.hpp"
#include "onnx/onnx_import.hpp"
#include "onnx/onnx_lower.hpp"
#include "onnx/onnx_moe.hpp"
#include "studies/onnx_conformance.hpp"
#include "support/diag.hpp"
#include "support/files.hpp"
#include "compiled.hpp"
#include "test_common.hpp"

using namespace stepgen;
namespace fs = std::filesystem;

namespace {

const std::string kNode = "/usr/share/libonnx-testdata/data/node/";

std::string onnxDiag(const std::string& test) {
  try {
    lowerOnnx(readOnnx(kNode + test + "/model.onnx"));
  } catch (const DiagError& e) {
    return e.diags.at(0).id;
  }
  return "none";
}

/// sqrt(sum (got - want)^2 / sum want^2) over the words of two fp32 matrices of one size.
double rmsRelative(const Matrix& got, const Matrix& want) {
  REQUIRE(got.data.size() == want.data.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < want.data.size(); ++i) {
    const double d = f(got.data[i]) - f(want.data[i]);
    num += d * d;
    den += f(want.data[i]) * f(want.data[i]);
  }
  return std::sqrt(num / den);
}

/// Imports node test `test`, runs it in the model on arch/onnx.yaml and returns the largest
/// |out - expected| / max(|expected|, 1e-3 max|expected|) of its first data set.
double nodeTestError(const std::string& test, double* tolerance = nullptr) {
  const OnnxGraph g = readOnnx(kNode + test + "/model.onnx");
  const OnnxImport imp = lowerOnnx(g);
  if (tolerance) *tolerance = onnxTolerance(imp, false);
  const fs::path dir = fs::temp_directory_path() / ("sg_onnx_" + test);
  fs::remove_all(dir);
  fs::create_directories(dir / "inputs");
  writeFile(dir / "graph.yaml", imp.yaml);
  std::map<std::string, OnnxTensor> given;
  for (size_t k = 0; k < g.inputs.size(); ++k)
    given[g.inputs[k]] = readTensorFile(kNode + test + "/test_data_set_0/input_" + std::to_string(k) + ".pb");
  for (const auto& [name, m] : onnxInputMatrices(imp, g, given)) toNpy(dir / "inputs" / (name + ".npy"), m);
  const ModelResult r = runModelOnly(kRoot + "/arch/onnx.yaml", (dir / "graph.yaml").string(), (dir / "inputs").string(), 1);
  const OnnxTensor want = readTensorFile(kNode + test + "/test_data_set_0/output_0.pb");
  const Matrix& got = r.outputs.at(imp.outputs.at(0).tensor);
  REQUIRE(int64_t(got.data.size()) == want.count());
  double scale = 0, worst = 0;
  for (float e : want.f) scale = std::max(scale, std::fabs(double(e)));
  for (size_t i = 0; i < want.f.size(); ++i)
    worst = std::max(worst, std::fabs(f(got.data[i]) - want.f[i]) / std::max(std::fabs(double(want.f[i])), 1e-3 * scale));
  return worst;
}

/// verify --reference's check of the model's outputs of an imported folder `out`; these
/// blocks pass by the relative tolerance alone (no element needs the running bound).
ReferenceCheck referenceCheck(const ModelResult& r, const fs::path& out) {
  const StepGraph g = loadGraph((out / "graph.yaml").string());
  const ReferenceCheck ref = compareWithReference(r.outputs, out / "expected", "fp32", onFirstCall([&] {
    return referenceErrorBounds(g, loadInputs(g, (out / "inputs").string(), 1), false);
  }));
  CHECK(ref.elements.byRunning == 0);
  return ref;
}

}  // namespace

TEST_CASE("ONNX node tests: the imported graph matches ONNX's expected outputs", "[onnx]") {
  // Elementwise, products, softmax (both opset conventions), reductions, folded layouts.
  for (const char* t : {"test_add_bcast", "test_sub", "test_mul_example", "test_div", "test_neg", "test_exp",
                        "test_sigmoid", "test_sqrt", "test_reciprocal", "test_matmul_2d",
                        "test_gemm_all_attributes", "test_gemm_transposeB", "test_softmax_example", "test_softmax_default_axis",
                        "test_softmax_large_number", "test_reduce_sum_square_keepdims_random", "test_reduce_mean_do_not_keepdims_random",
                        "test_reduce_max_keepdims_random", "test_reduce_sum_square_default_axes_keepdims_random",
                        "test_transpose_all_permutations_3", "test_reshape_reordered_all_dims",
                        // Gather along axes 0 and 1, 2-D and negative indices (index loads)
                        "test_gather_0", "test_gather_1", "test_gather_2d_indices", "test_gather_negative_indices"}) {
    INFO(t);
    double tol = 0;
    const double err = nodeTestError(t, &tol);
    CHECK(err <= tol);
    CHECK(tol < 2e-3);  // the bound is tight enough to catch a wrong function (exp's 3.5e-4 a few times at most)
  }
}

TEST_CASE("ONNX import: unsupported models are refused with the documented ids", "[onnx]") {
  CHECK(onnxDiag("test_relu") == "O-201");                // operator not lowered
  CHECK(onnxDiag("test_slice") == "O-202");               // starts and ends given as inputs
  CHECK(onnxDiag("test_add_uint8") == "O-103");           // element type
  CHECK(onnxDiag("test_softmax_axis_0") == "O-202");      // opset 13 softmax over a middle axis
  CHECK(onnxDiag("test_pow") == "O-202");                 // an exponent given as an input
  CHECK(onnxDiag("test_reduce_sum_keepdims_example") == "O-202");  // opset 13: axes given as an input
  CHECK(onnxDiag("test_reduce_mean_keepdims_example") == "none");
  const fs::path bad = fs::temp_directory_path() / "sg_onnx_bad.onnx";
  writeFile(bad, "not a protobuf at all \x01\x02");
  CHECK_THROWS_AS(readOnnx(bad.string()), DiagError);
  try {
    readOnnx(bad.string());
  } catch (const DiagError& e) {
    CHECK(e.diags.at(0).id == "O-101");
  }
}

TEST_CASE("ONNX import: a refused model leaves no output folder", "[onnx]") {
  const fs::path out = fs::temp_directory_path() / "sg_onnx_refused";
  fs::remove_all(out);
  CHECK_THROWS_AS(importOnnx(kNode + "test_relu/model.onnx", out.string(), ""), DiagError);
  CHECK(!fs::exists(out));
  importOnnx(kNode + "test_gemm_all_attributes/model.onnx", out.string(), kNode + "test_gemm_all_attributes/test_data_set_0");
  CHECK(fs::exists(out / "graph.yaml"));
  CHECK(fs::exists(out / "expected"));
}

TEST_CASE("ONNX import: layout steps fold transpose and broadcast into the input data", "[onnx]") {
  // A [2, 3, 4] input transposed by (2, 0, 1) then broadcast against [5, 4, 2, 3]: a plain loop.
  OnnxGraph g;
  g.shapes["x"] = {2, 3, 4};
  OnnxImport imp;
  OnnxLeafTensor t;
  t.tensor = "x_t";
  t.source = "x";
  t.steps = {{OnnxLayoutStep::Kind::Transpose, {2, 0, 1}}, {OnnxLayoutStep::Kind::Broadcast, {5, 4, 2, 3}}};
  t.rows = 5 * 4 * 2;
  t.cols = 3;
  imp.leaves.push_back(t);
  OnnxTensor x;
  x.shape = {2, 3, 4};
  for (int k = 0; k < 24; ++k) x.f.push_back(float(k));
  const Matrix m = onnxInputMatrices(imp, g, {{"x", x}}).at("x_t");
  REQUIRE(m.data.size() == 120);
  for (int b = 0; b < 5; ++b)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 2; ++j)
        for (int k = 0; k < 3; ++k)  // y[b][i][j][k] = x[j][k][i]
          CHECK(f(m.data[size_t(((b * 4 + i) * 2 + j) * 3 + k)]) == double(x.f[size_t((j * 3 + k) * 4 + i)]));
}

namespace {

OnnxTensor ints(std::vector<int64_t> v) {
  OnnxTensor t;
  t.isFloat = false;
  t.shape = {int64_t(v.size())};
  t.i = std::move(v);
  return t;
}

OnnxNode node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out, int index) {
  OnnxNode n;
  n.name = op + std::to_string(index);
  n.op = op;
  n.index = index;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

}  // namespace

TEST_CASE("ONNX import: Slice and Concat (RoPE's rotate-half) against a plain loop", "[onnx]") {
  // y = concat(-(e[:, 16:32]), e[:, 0:16]) with e = exp(x) computed, and z = x[1:3, 8:24]
  // sliced from the input: rotate-half on a computed value, a folded slice on a leaf.
  OnnxGraph g;
  g.path = "in-memory";
  g.opset = 14;
  g.inputs = {"x"};
  g.outputs = {"y", "z"};
  g.initializers = {{"s0", ints({0})}, {"s16", ints({16})}, {"s32", ints({32})}, {"ax1", ints({1})}, {"ax01", ints({0, 1})}};
  for (const auto& [name, t] : g.initializers) g.shapes[name] = t.shape;
  g.nodes = {node("Exp", {"x"}, {"e"}, 0),
             node("Slice", {"e", "s16", "s32", "ax1"}, {"e2"}, 1),
             node("Slice", {"e", "s0", "s16", "ax1"}, {"e1"}, 2),
             node("Neg", {"e2"}, {"ne2"}, 3),
             node("Concat", {"ne2", "e1"}, {"y"}, 4),
             node("Slice", {"x", "lo", "hi", "ax01"}, {"z"}, 5)};
  g.initializers["lo"] = ints({1, 8});
  g.initializers["hi"] = ints({3, 24});
  g.shapes["lo"] = g.shapes["hi"] = {2};
  g.nodes[4].attrs["axis"].i = 1;
  g.shapes["x"] = g.shapes["e"] = g.shapes["y"] = {4, 32};
  g.shapes["e1"] = g.shapes["e2"] = g.shapes["ne2"] = {4, 16};
  g.shapes["z"] = {2, 16};
  for (const char* v : {"x", "e", "e1", "e2", "ne2", "y", "z"}) g.elemTypes[v] = "FLOAT";
  const OnnxImport imp = lowerOnnx(g);
  OnnxTensor x;
  x.shape = {4, 32};
  for (int k = 0; k < 128; ++k) x.f.push_back(float(k % 13) / 8.0f - 0.7f);
  const fs::path dir = fs::temp_directory_path() / "sg_onnx_slice_concat";
  fs::remove_all(dir);
  writeFile(dir / "graph.yaml", imp.yaml);
  for (const auto& [name, m] : onnxInputMatrices(imp, g, {{"x", x}})) toNpy(dir / "inputs" / (name + ".npy"), m);
  const ModelResult r = runModelOnly(kRoot + "/arch/onnx.yaml", (dir / "graph.yaml").string(), (dir / "inputs").string(), 1);
  const Matrix& y = r.outputs.at(imp.outputs.at(0).tensor);
  const Matrix& z = r.outputs.at(imp.outputs.at(1).tensor);
  REQUIRE(y.data.size() == 128);
  REQUIRE(z.data.size() == 32);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 32; ++j) {
      // The model's exp (fp32Exp) is the fabric's: the selection and placement must move it exactly.
      const float e = bitsToFloat(fp32Exp(floatToBits(x.f[size_t(i * 32 + (j < 16 ? j + 16 : j - 16))])));
      CHECK(f(y.data[size_t(i * 32 + j)]) == double(j < 16 ? -e : e));
    }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 16; ++j) CHECK(f(z.data[size_t(i * 16 + j)]) == double(x.f[size_t((i + 1) * 32 + 8 + j)]));
}

TEST_CASE("ONNX import: Gather's meta rows, its bad indices and its refusals", "[onnx]") {
  // test_gather_1: data [5, 4, 3, 2], axis 1, indices [3]: P = 5, N = 4, R = 6; meta row
  // p * 3 + k holds p * 4 + i_k in word 0 (a negative index counts from N).
  const OnnxGraph g = readOnnx(kNode + "test_gather_1/model.onnx");
  const OnnxImport imp = lowerOnnx(g);
  OnnxTensor data;
  data.shape = {5, 4, 3, 2};
  data.f.assign(120, 0.0f);
  const std::string meta = imp.leaves.at(0).source == "indices" ? imp.leaves.at(0).tensor : imp.leaves.at(1).tensor;
  const Matrix m = onnxInputMatrices(imp, g, {{"data", data}, {"indices", ints({2, -1, 0})}}).at(meta);
  REQUIRE(m.rows == 15);
  REQUIRE(m.cols == 16);
  const int64_t want[3] = {2, 3, 0};
  for (int64_t p = 0; p < 5; ++p)
    for (int64_t k = 0; k < 3; ++k) {
      CHECK(m.data[size_t((p * 3 + k) * 16)] == uint32_t(p * 4 + want[k]));
      for (int w = 1; w < 16; ++w) CHECK(m.data[size_t((p * 3 + k) * 16 + w)] == 0);
    }
  // Indices outside [-4, 4): R-411 when the rows are written.
  for (int64_t bad : {int64_t(4), int64_t(-5)})
    CHECK(testing::diagId([&] { onnxInputMatrices(imp, g, {{"data", data}, {"indices", ints({0, bad, 1})}}); }) == "R-411");
  // A Gather of a computed value (O-204), by float indices (O-103).
  OnnxGraph c;
  c.path = "in-memory";
  c.opset = 14;
  c.inputs = {"x", "i"};
  c.outputs = {"y"};
  c.nodes = {node("Exp", {"x"}, {"e"}, 0), node("Gather", {"e", "i"}, {"y"}, 1)};
  c.shapes["x"] = c.shapes["e"] = {8, 16};
  c.shapes["i"] = {2};
  c.shapes["y"] = {2, 16};
  for (const char* v : {"x", "e", "y"}) c.elemTypes[v] = "FLOAT";
  c.elemTypes["i"] = "INT64";
  CHECK(testing::diagId([&] { lowerOnnx(c); }) == "O-204");
  c.nodes = {node("Gather", {"x", "i"}, {"y"}, 0)};
  CHECK(testing::diagId([&] { lowerOnnx(c); }) == "none");
  c.elemTypes["i"] = "FLOAT";
  CHECK(testing::diagId([&] { lowerOnnx(c); }) == "O-103");
}

namespace {

/// The Map functions of a graph's text, in order.
std::vector<std::string> mapFunctions(const std::string& yaml) {
  std::vector<std::string> fns;
  for (size_t at = yaml.find("fn: "); at != std::string::npos; at = yaml.find("fn: ", at + 1))
    fns.push_back(yaml.substr(at + 4, yaml.find_first_of(",}", at) - at - 4));
  return fns;
}

}  // namespace

TEST_CASE("ONNX import: an RMSNorm is builders/rmsnorm's construct, function for function", "[onnx]") {
  // x / sqrt(mean(x^2) + eps) * w as PyTorch's RMSNorm exports it (examples/pytorch/export.py).
  OnnxGraph g;
  g.path = "in-memory";
  g.opset = 14;
  g.inputs = {"x"};
  g.outputs = {"y"};
  OnnxTensor two, eps, w;
  two.f = {2.0f};
  eps.f = {1e-6f};
  w.shape = {64};
  w.f.assign(64, 1.5f);
  g.initializers = {{"two", two}, {"eps", eps}, {"w", w}};
  g.nodes = {node("Pow", {"x", "two"}, {"sq"}, 0), node("ReduceMean", {"sq"}, {"ms"}, 1), node("Add", {"ms", "eps"}, {"me"}, 2),
             node("Sqrt", {"me"}, {"rms"}, 3), node("Div", {"x", "rms"}, {"n"}, 4), node("Mul", {"n", "w"}, {"y"}, 5)};
  g.nodes[1].attrs["axes"].ints = {-1};
  g.nodes[1].attrs["keepdims"].i = 1;
  g.shapes["x"] = g.shapes["sq"] = g.shapes["n"] = g.shapes["y"] = {16, 64};
  g.shapes["ms"] = g.shapes["me"] = g.shapes["rms"] = {16, 1};
  g.shapes["two"] = g.shapes["eps"] = {};
  g.shapes["w"] = {64};
  for (const char* v : {"x", "sq", "ms", "me", "rms", "n", "y", "two", "eps", "w"}) g.elemTypes[v] = "FLOAT";
  CHECK(mapFunctions(lowerOnnx(g).yaml) == mapFunctions(buildRmsNormGraph(RmsNormParams{16, 64, 1e-6f})));
  CHECK(mapFunctions(lowerOnnx(g).yaml) == std::vector<std::string>{"mul", "rowsum", "mul", "add", "rsqrt", "mul", "mul"});
}

TEST_CASE("ONNX import: softmax attention over a KV cache as the single pass (attention_stages)", "[onnx]") {
  // y = Softmax(q @ Transpose(K)) @ V, q [2, 16], K and V [256, 16] initializers.
  const int64_t G = 2, L = 256, D = 16;
  OnnxGraph g;
  g.path = "in-memory";
  g.opset = 14;
  g.inputs = {"q"};
  g.outputs = {"y"};
  OnnxTensor k, v, q;
  k.shape = v.shape = {L, D};
  q.shape = {G, D};
  for (int64_t i = 0; i < L * D; ++i) {
    k.f.push_back(float((i * 7) % 19) / 19.0f - 0.5f);
    v.f.push_back(float((i * 5) % 23) / 11.0f - 1.0f);
  }
  for (int64_t i = 0; i < G * D; ++i) q.f.push_back(float((i * 3) % 13) / 6.0f - 1.0f);
  g.initializers = {{"k", k}, {"v", v}};
  g.nodes = {node("Transpose", {"k"}, {"kt"}, 0), node("MatMul", {"q", "kt"}, {"s"}, 1), node("Softmax", {"s"}, {"p"}, 2),
             node("MatMul", {"p", "v"}, {"y"}, 3)};
  g.nodes[0].attrs["perm"].ints = {1, 0};
  g.shapes = {{"q", {G, D}}, {"k", {L, D}}, {"v", {L, D}}, {"kt", {D, L}}, {"s", {G, L}}, {"p", {G, L}}, {"y", {G, D}}};
  for (const auto& [name, s] : g.shapes) g.elemTypes[name] = "FLOAT";
  OnnxSchedule stages;
  stages.attentionStages = true;
  const OnnxImport whole = lowerOnnx(g), staged = lowerOnnx(g, "", stages);
  CHECK(whole.yaml.find("stage attn0") == std::string::npos);
  CHECK(staged.yaml.find("stage attn0") != std::string::npos);
  // The scores in KV tiles of 32: the products take [2, 16] x [16, 32] and [2, 32] x [32, 16],
  // not [2, 16] x [16, 256] and [2, 256] x [256, 16].
  CHECK(staged.matmulBufferWords == ComputeUnitParams::matmulBufferWords(G, 32, D));
  CHECK(whole.matmulBufferWords == ComputeUnitParams::matmulBufferWords(G, L, D));
  const fs::path dir = fs::temp_directory_path() / "sg_onnx_attention";
  fs::remove_all(dir);
  writeFile(dir / "graph.yaml", staged.yaml);
  for (const auto& [name, m] : onnxInputMatrices(staged, g, {{"q", q}})) toNpy(dir / "inputs" / (name + ".npy"), m);
  const ModelResult r = runModelOnly(kRoot + "/arch/onnx_moe.yaml", (dir / "graph.yaml").string(), (dir / "inputs").string(), 1);
  const Matrix& y = r.outputs.at(staged.outputs.at(0).tensor);
  REQUIRE(y.data.size() == size_t(G * D));
  const double tol = onnxTolerance(staged, false);
  CHECK(tol < 0.1);
  for (int64_t i = 0; i < G; ++i) {  // softmax attention in double
    std::vector<double> s(static_cast<size_t>(L), 0.0);
    double m = -1e300, sum = 0;
    for (int64_t j = 0; j < L; ++j) {
      for (int64_t d = 0; d < D; ++d) s[size_t(j)] += double(q.f[size_t(i * D + d)]) * k.f[size_t(j * D + d)];
      m = std::max(m, s[size_t(j)]);
    }
    for (double& x : s) sum += (x = std::exp(x - m));
    for (int64_t d = 0; d < D; ++d) {
      double want = 0, mag = 0;
      for (int64_t j = 0; j < L; ++j) want += s[size_t(j)] / sum * v.f[size_t(j * D + d)], mag += s[size_t(j)] / sum * std::fabs(v.f[size_t(j * D + d)]);
      CHECK(std::fabs(f(y.data[size_t(i * D + d)]) - want) <= tol * mag);
    }
  }
  // The scores also a graph output: the pattern's inside is read outside, no stage.
  g.outputs = {"y", "s"};
  CHECK(lowerOnnx(g, "", stages).yaml.find("stage attn0") == std::string::npos);
}

TEST_CASE("ONNX import: x * Sigmoid(x) as one Map silu (silu_function)", "[onnx]") {
  OnnxGraph g;
  g.path = "in-memory";
  g.opset = 14;
  g.inputs = {"x"};
  g.outputs = {"y"};
  g.nodes = {node("Sigmoid", {"x"}, {"s"}, 0), node("Mul", {"s", "x"}, {"y"}, 1)};
  g.shapes["x"] = g.shapes["s"] = g.shapes["y"] = {4, 16};
  for (const char* v : {"x", "s", "y"}) g.elemTypes[v] = "FLOAT";
  auto maps = [](const OnnxImport& imp) { return mapFunctions(imp.yaml); };
  OnnxSchedule silu;
  silu.siluFunction = true;
  const OnnxImport fused = lowerOnnx(g, "", silu);
  CHECK(maps(fused) == std::vector<std::string>{"silu"});
  CHECK(maps(lowerOnnx(g)) == std::vector<std::string>{"mul", "exp", "add", "recip", "mul"});
  // The fabric's silu (sigmoid from a table within 2e-3) against x / (1 + e^-x) in double.
  OnnxTensor x;
  x.shape = {4, 16};
  for (int k = 0; k < 64; ++k) x.f.push_back(float(k - 32) / 5.0f);
  const fs::path dir = fs::temp_directory_path() / "sg_onnx_silu";
  fs::remove_all(dir);
  writeFile(dir / "graph.yaml", fused.yaml);
  for (const auto& [name, m] : onnxInputMatrices(fused, g, {{"x", x}})) toNpy(dir / "inputs" / (name + ".npy"), m);
  const ModelResult r = runModelOnly(kRoot + "/arch/onnx.yaml", (dir / "graph.yaml").string(), (dir / "inputs").string(), 1);
  const Matrix& y = r.outputs.at(fused.outputs.at(0).tensor);
  REQUIRE(y.data.size() == 64);
  for (int k = 0; k < 64; ++k) {
    const double v = x.f[size_t(k)], want = v / (1 + std::exp(-v));
    CHECK(std::fabs(f(y.data[size_t(k)]) - want) <= 2e-3 * std::fabs(v) + 1e-6);
  }
  // A Sigmoid that is also an output stays a sigmoid: its value is needed on its own.
  g.outputs = {"y", "s"};
  CHECK(maps(lowerOnnx(g, "", silu)) == std::vector<std::string>{"mul", "exp", "add", "recip", "mul"});
}

TEST_CASE("ONNX import: the PyTorch dense block in the model against PyTorch's own output", "[onnx]") {
  // examples/pytorch/dense_block: data/y.npy is PyTorch's float32 output (export.py).
  const std::string ex = kRoot + "/examples/pytorch/dense_block";
  const fs::path out = fs::temp_directory_path() / "sg_onnx_dense_block";
  importOnnx(ex + "/model.onnx", out.string(), ex + "/data");
  const std::string yaml = readText(out / "graph.yaml");
  size_t recips = 0;
  for (size_t at = yaml.find("fn: recip"); at != std::string::npos; at = yaml.find("fn: recip", at + 1)) ++recips;
  CHECK(recips == 2);  // the softmax's sum and the sigmoid's; both RMSNorms divide by sqrt as one rsqrt each
  const ModelResult r = runModelOnly(kRoot + "/arch/onnx.yaml", (out / "graph.yaml").string(), (out / "inputs").string(), 1);
  const ReferenceCheck ref = referenceCheck(r, out);
  CHECK(ref.outputs == 1);
  CHECK(ref.ok());
  CHECK(ref.elements.maxRelErr > 1e-6);  // the fabric's exp and recip are not exact: a zero error would mean a vacuous compare
}

TEST_CASE("ONNX import: the PyTorch Llama block (heads, RoPE, causal mask) against PyTorch's own output", "[onnx]") {
  // examples/pytorch/llama_block: the heads are regrouped, permuted and batched by 0/1
  // products, k^T formed by matmul_t; data/y.npy is PyTorch's float32 output.
  const std::string ex = kRoot + "/examples/pytorch/llama_block";
  const fs::path out = fs::temp_directory_path() / "sg_onnx_llama_block";
  importOnnx(ex + "/model.onnx", out.string(), ex + "/data");
  CHECK(readText(out / "graph.yaml").find("fn: matmul_t") != std::string::npos);
  const ModelResult r = runModelOnly(kRoot + "/arch/onnx.yaml", (out / "graph.yaml").string(), (out / "inputs").string(), 1);
  const ReferenceCheck ref = referenceCheck(r, out);
  CHECK(ref.outputs == 1);
  CHECK(ref.ok());
  CHECK(ref.elements.maxRelErr > 1e-6);
  // Against PyTorch's output by the root-mean-square too: the fabric's approximations (exp,
  // recip, rsqrt within 3.5e-4, 5e-6, 7e-6) leave the block within 1e-3 overall.
  CHECK(rmsRelative(r.outputs.begin()->second, fromNpy(out / "expected" / (r.outputs.begin()->first + ".npy"))) < 1e-3);
}

TEST_CASE("ONNX import: the PyTorch Qwen3-MoE block routes each token to its top-k experts only", "[onnx]") {
  // examples/pytorch/qwen3_moe_block: PyTorch computes every expert for every token and zeroes
  // the unchosen by their gate; the import must route instead (one Partition of the tokens,
  // one gate-and-up product per F tile whatever E is) and still match PyTorch's output.
  const std::string ex = kRoot + "/examples/pytorch/qwen3_moe_block";
  const fs::path out = fs::temp_directory_path() / "sg_onnx_qwen3_moe_block";
  importOnnx(ex + "/model.onnx", out.string(), ex + "/data");
  const std::string yaml = readText(out / "graph.yaml");
  auto count = [&](const std::string& s) {
    size_t n = 0;
    for (size_t at = yaml.find(s); at != std::string::npos; at = yaml.find(s, at + 1)) ++n;
    return n;
  };
  CHECK(count("op: Partition") == 2);       // tokens to experts, outputs back to their tokens
  CHECK(count("fn: topk,") == 1);
  CHECK(count("fn: topk_logits") == 1);     // the weights: a softmax over the chosen logits
  CHECK(count("fn: silu") == 1);            // one SwiGLU for all experts, not one per expert
  CHECK(count("op: Promote") == 4);         // dynamic tiling: one tile of each expert's tokens
  CHECK(yaml.find("moe0_wg: {shape: [moe0_E*moe0_F, moe0_D], role: input}") != std::string::npos);
  // The stacked weights: expert e's gate rows are its Wg^T (a plain loop over the initializer).
  const OnnxGraph g = readOnnx(ex + "/model.onnx");
  const Matrix wg = fromNpy(out / "inputs" / "moe0_wg.npy");
  REQUIRE(wg.rows == 4 * 32);
  REQUIRE(wg.cols == 16);
  const auto moes = findOnnxMoes(g, [&] {
    std::set<int> all;
    for (const auto& n : g.nodes) all.insert(n.index);
    return all;
  }(), nullptr);
  REQUIRE(moes.size() == 1);
  CHECK(moes[0].k == 2);
  for (int e = 0; e < 4; ++e) {
    const OnnxTensor& w = g.initializers.at(moes[0].experts[size_t(e)].gate);  // [D, F]
    for (int fi = 0; fi < 32; ++fi)
      for (int d = 0; d < 16; ++d) CHECK(f(wg.data[size_t((e * 32 + fi) * 16 + d)]) == double(w.f[size_t(d * 32 + fi)]));
  }
  const ModelResult r = runModelOnly(kRoot + "/arch/onnx.yaml", (out / "graph.yaml").string(), (out / "inputs").string(), 1);
  const ReferenceCheck ref = referenceCheck(r, out);
  CHECK(ref.outputs == 1);
  CHECK(ref.ok());
  CHECK(ref.elements.maxRelErr > 1e-6);
  // A token routed to another expert than PyTorch's would leave an error of the order of an
  // expert's output (tens of percent); the fabric's exp and sigmoid table leave under 1e-3.
  CHECK(rmsRelative(r.outputs.at("out_y"), fromNpy(out / "expected" / "out_y.npy")) < 1e-3);
}

TEST_CASE("ONNX import: --routing-trace makes each MoE block replay the trace", "[onnx]") {
  // For the timing-only model (no logits): the Qwen3 block's MoE routed by SelectGen over the
  // trace copied beside the graph, the routing rows its first 8 tokens' experts (ascending),
  // no router left.
  const std::string ex = kRoot + "/examples/pytorch/qwen3_moe_block";
  const fs::path out = fs::temp_directory_path() / "sg_onnx_qwen3_trace", trace = out.string() + ".csv";
  writeFile(trace, "token,expert_0,expert_1\n0,3,1\n1,0,2\n2,2,1\n3,1,0\n4,3,2\n5,0,3\n6,1,2\n7,2,0\n8,3,0\n");
  importOnnx(ex + "/model.onnx", out.string(), ex + "/data", trace.string());
  const std::string yaml = readText(out / "graph.yaml");
  CHECK(yaml.find("op: SelectGen, trace: routing.csv") != std::string::npos);
  CHECK(yaml.find("fn: topk") == std::string::npos);
  CHECK(readText(out / "routing.csv") == readText(trace));
  const Matrix routing = fromNpy(out / "inputs" / "moe0_routing.npy");
  REQUIRE(routing.rows == 8);
  const int want[8][2] = {{1, 3}, {0, 2}, {1, 2}, {0, 1}, {2, 3}, {0, 3}, {1, 2}, {0, 2}};
  for (int t = 0; t < 8; ++t)
    for (int j = 0; j < 2; ++j) CHECK(routing.data[size_t(t * routing.cols + j)] == uint32_t(want[t][j]));
  // Too short a trace for the block's 8 tokens: O-202, nothing written.
  const fs::path bad = fs::temp_directory_path() / "sg_onnx_qwen3_trace_bad";
  writeFile(trace, "token,expert_0,expert_1\n0,3,1\n");
  fs::remove_all(bad);
  try {
    importOnnx(ex + "/model.onnx", bad.string(), "", trace.string());
    FAIL("a trace of 1 token was accepted");
  } catch (const DiagError& e) {
    CHECK(e.diags.at(0).id == "O-202");
  }
  CHECK(!fs::exists(bad));
}

TEST_CASE("ONNX import: row tiles give the whole-tile outputs bit for bit", "[onnx]") {
  // examples/pytorch/mlp_block works row by row (RMSNorm, SwiGLU, residual): in tiles of 16 of
  // its 128 rows every row meets the same functions in the same order as in one tile.
  const std::string ex = kRoot + "/examples/pytorch/mlp_block";
  std::map<std::string, ModelResult> runs;
  for (const std::string& schedule : std::vector<std::string>{"", ex + "/schedule.yaml"}) {
    const fs::path out = fs::temp_directory_path() / ("sg_onnx_mlp_tiles" + std::to_string(schedule.size()));
    importOnnx(ex + "/model.onnx", out.string(), ex + "/data", "", "", schedule);
    const std::string yaml = readText(out / "graph.yaml");
    if (!schedule.empty()) {
      CHECK(yaml.find("tensor: x, tile: [16, 32], iter: [8], strides: [[1, 0]]") != std::string::npos);
      CHECK(yaml.find("tensor: w_gate, tile: [32, 64], iter: [8], strides: [[0, 0]]") != std::string::npos);  // whole, per tile
      CHECK(yaml.find("iter: [8], strides: [[1, 0]]}") != std::string::npos);  // the store
    }
    runs[schedule] = runModelOnly(kRoot + "/arch/onnx.yaml", (out / "graph.yaml").string(), (out / "inputs").string(), 1);
  }
  CHECK(runs.at("").outputs.at("out_y").data == runs.at(ex + "/schedule.yaml").outputs.at("out_y").data);
}

TEST_CASE("ONNX import: tile rows chosen for the compute unit's memory", "[onnx]") {
  // mlp_block's products, [T, 32] x [32, 64] and [T, 64] x [64, 32], take 2 (32T + 2048 + 64T)
  // words of local memory (a, b and out double-buffered): 28,672 at T = 128, 16,384 at 64.
  const OnnxGraph g = readOnnx(kRoot + "/examples/pytorch/mlp_block/model.onnx");
  auto withBuffer = [](int64_t words) {  // arch/onnx_small.yaml (no silu: no SwiGLU stages) with that memory
    ArchModel a = loadArch(kRoot + "/arch/onnx_small.yaml");
    a.cu.bufferBytes = words * 4;
    return a;
  };
  CHECK(chooseOnnxSchedule(g, withBuffer(16384)).tileRows == 64);  // arch/onnx_small.yaml's 64 KB
  CHECK(chooseOnnxSchedule(g, withBuffer(16383)).tileRows == 32);
  CHECK(chooseOnnxSchedule(g, withBuffer(28672)).tileRows == 0);   // whole tiles fit
  CHECK(chooseOnnxSchedule(g, withBuffer(4096)).tileRows == 0);    // the weights alone take 4,096: nothing fits
  CHECK_FALSE(chooseOnnxSchedule(g, withBuffer(16384)).swigluStages);
  CHECK(lowerOnnx(g, "", {64}).matmulBufferWords == 16384);
  // In those tiles each product computes 64 x 64 / 4 lanes passes of K = 32 cycles: the RTL
  // watchdog must outwait 32,768 cycles in which no link moves (verify doubles it).
  const fs::path out = fs::temp_directory_path() / "sg_onnx_mlp_arch";
  const std::string ex = kRoot + "/examples/pytorch/mlp_block";
  importOnnx(ex + "/model.onnx", out.string(), ex + "/data", "", kRoot + "/arch/onnx_small.yaml");
  CHECK(readOnnxSchedule((out / "schedule.yaml").string()).tileRows == 64);  // written for --schedule to read back
  VerifyOptions vo;
  vo.archPath = kRoot + "/arch/onnx_small.yaml";
  vo.graphPath = (out / "graph.yaml").string();
  vo.inputsDir = (out / "inputs").string();
  vo.outDir = (out / "verify").string();
  vo.skipRtl = true;
  CHECK(verify(vo).model.timing.longestCompute == 64 * 64 / 4 * 32);
  // Attention forms its scores from a computed k: no row tiles reach it.
  const OnnxGraph llama = readOnnx(kRoot + "/examples/pytorch/llama_block/model.onnx");
  std::string id;
  try {
    lowerOnnx(llama, "", {4});
  } catch (const DiagError& e) {
    id = e.diags.at(0).id;
  }
  CHECK(id == "O-205");
  CHECK(chooseOnnxSchedule(llama, withBuffer(1024)).tileRows == 0);
}

TEST_CASE("ONNX import: a SwiGLU MLP as builders/swiglu's layer (swiglu_stages)", "[onnx]") {
  // mlp_block's (silu(h Wg) * (h Wu)) Wd becomes one stage: h stored to mlp0_x, the layer
  // (matmuls tiled over F, Map silu, Accum over the F tiles) and its out loaded from mlp0_y.
  const std::string ex = kRoot + "/examples/pytorch/mlp_block";
  const OnnxGraph g = readOnnx(ex + "/model.onnx");
  const OnnxImport imp = lowerOnnx(g, "", {0, true});
  CHECK(imp.yaml.find("fn: silu") != std::string::npos);
  CHECK(imp.yaml.find("op: Accum") != std::string::npos);
  CHECK(imp.yaml.find("fn: sigmoid") == std::string::npos);
  CHECK(lowerOnnx(g).yaml.find("fn: silu") == std::string::npos);  // off unless scheduled
  // arch/onnx_moe.yaml's unit has silu and accum; its 64 KB fit the stage's products at 64 rows.
  const OnnxSchedule s = chooseOnnxSchedule(g, loadArch(kRoot + "/arch/onnx_moe.yaml"));
  CHECK(s.swigluStages);
  CHECK(s.tileRows == 64);
  // In the model against PyTorch: the fabric's sigmoid table (2e-3) leaves about 5e-4 of the
  // output's norm; the elements the relative tolerance misses are within the running bound.
  const fs::path out = fs::temp_directory_path() / "sg_onnx_mlp_swiglu";
  const fs::path sched = fs::temp_directory_path() / "sg_onnx_mlp_swiglu.yaml";
  writeFile(sched, "swiglu_stages: true\n");
  importOnnx(ex + "/model.onnx", out.string(), ex + "/data", "", "", sched.string());
  const ModelResult r = runModelOnly(kRoot + "/arch/onnx.yaml", (out / "graph.yaml").string(), (out / "inputs").string(), 1);
  const StepGraph sg = loadGraph((out / "graph.yaml").string());
  const ReferenceCheck ref = compareWithReference(r.outputs, out / "expected", "fp32", onFirstCall([&] {
    return referenceErrorBounds(sg, loadInputs(sg, (out / "inputs").string(), 1), false);
  }));
  CHECK(ref.ok());
  CHECK(ref.elements.byRunning > 0);
  CHECK(rmsRelative(r.outputs.at("out_y"), fromNpy(out / "expected" / "out_y.npy")) < 1e-3);
}

TEST_CASE("ONNX import: a node's own tile rows in the schedule", "[onnx]") {
  // mlp_block's first node, /norm/Pow, reads only x: its tiles of 32 rows (4 of its 128) reach
  // every node after it, and the outputs stay the whole-tile import's bit for bit.
  const std::string ex = kRoot + "/examples/pytorch/mlp_block";
  const fs::path dir = fs::temp_directory_path() / "sg_onnx_node_tiles";
  fs::create_directories(dir);
  writeFile(dir / "pow.yaml", "nodes:\n  /norm/Pow: {tile_rows: 32}\n");
  importOnnx(ex + "/model.onnx", (dir / "tiled").string(), ex + "/data", "", "", (dir / "pow.yaml").string());
  importOnnx(ex + "/model.onnx", (dir / "whole").string(), ex + "/data");
  const std::string yaml = readText(dir / "tiled" / "graph.yaml");
  CHECK(yaml.find("tensor: x, tile: [32, 32], iter: [4], strides: [[1, 0]]") != std::string::npos);
  CHECK(readOnnxSchedule((dir / "tiled" / "schedule.yaml").string()).nodeTileRows.at("/norm/Pow").tileRows == 32);
  auto run = [&](const std::string& d) {
    return runModelOnly(kRoot + "/arch/onnx.yaml", (dir / d / "graph.yaml").string(), (dir / d / "inputs").string(), 1);
  };
  CHECK(run("tiled").outputs.at("out_y").data == run("whole").outputs.at("out_y").data);
  // /MatMul reads the normalised rows, a computed value in whole tiles: it cannot start others.
  writeFile(dir / "matmul.yaml", "nodes:\n  /MatMul: {tile_rows: 16}\n");
  std::string id;
  try {
    lowerOnnx(readOnnx(ex + "/model.onnx"), "", readOnnxSchedule((dir / "matmul.yaml").string()));
  } catch (const DiagError& e) {
    id = e.diags.at(0).id;
  }
  CHECK(id == "O-205");
  // A region: the same tile rows for the nodes it lists.
  writeFile(dir / "region.yaml", "regions:\n  - {nodes: [/norm/Pow, /MatMul], tile_rows: 8}\n");
  const OnnxSchedule r = readOnnxSchedule((dir / "region.yaml").string());
  REQUIRE(r.nodeTileRows.size() == 2);
  CHECK(r.nodeTileRows.at("/norm/Pow").tileRows == 8);
  CHECK(r.nodeTileRows.at("/MatMul").tileRows == 8);
}

TEST_CASE("ONNX import: products by weights too big for a compute unit as builders/linear's layer", "[onnx]") {
  // wide_mlp_block: x [16, 128], W1 [256, 128] (Gemm, transB) and W2 [256, 128] (MatMul), each
  // 128 KB; arch/onnx_moe.yaml's unit holds 16,384 words. Each product becomes a stage of K
  // tiles accumulated and output column tiles: the largest TK x C (multiples of 16) with
  // 2 (16 TK + TK C + 16 C) <= 16,384 words is 4,096, first reached at TK 32, C 128.
  const std::string ex = kRoot + "/examples/pytorch/wide_mlp_block";
  const OnnxGraph g = readOnnx(ex + "/model.onnx");
  const OnnxSchedule s = chooseOnnxSchedule(g, loadArch(kRoot + "/arch/onnx_moe.yaml"));
  CHECK(s.linearStageWords == 16384);
  CHECK(chooseOnnxSchedule(g, loadArch(kRoot + "/arch/onnx_small.yaml")).linearStageWords == 0);  // no accum
  const OnnxImport imp = lowerOnnx(g, "", s);
  CHECK(imp.yaml.find("symbols: {lin0_B: 16, lin0_J: 2, lin0_C: 128, lin0_KT: 4, lin0_TK: 32, lin0_N: 1, lin1_B: 16, "
                      "lin1_J: 1, lin1_C: 128, lin1_KT: 8, lin1_TK: 32") != std::string::npos);
  CHECK(imp.matmulBufferWords == 2 * (16 * 32 + 32 * 128 + 16 * 128));
  CHECK(lowerOnnx(g).yaml.find("# stage lin") == std::string::npos);  // off unless scheduled
  // mlp_block's weights fit: no stage for them.
  CHECK(lowerOnnx(readOnnx(kRoot + "/examples/pytorch/mlp_block/model.onnx"), "", s).yaml.find("# stage lin") ==
        std::string::npos);
  // No tiles of multiples of 16 fit 1,000 words: O-202.
  OnnxSchedule tiny = s;
  tiny.linearStageWords = 1000;
  std::string id;
  try {
    lowerOnnx(g, "", tiny);
  } catch (const DiagError& e) {
    id = e.diags.at(0).id;
  }
  CHECK(id == "O-202");
  // In the model against PyTorch's output (the fabric's silu table, as the SwiGLU stage).
  const fs::path dir = fs::temp_directory_path() / "sg_onnx_wide_mlp";
  fs::create_directories(dir);
  writeFile(dir / "schedule.yaml", "linear_stage_words: 16384\nsilu_function: true\n");
  CHECK(readOnnxSchedule((dir / "schedule.yaml").string()).linearStageWords == 16384);
  importOnnx(ex + "/model.onnx", (dir / "import").string(), ex + "/data", "", "", (dir / "schedule.yaml").string());
  const ModelResult r =
      runModelOnly(kRoot + "/arch/onnx_moe.yaml", (dir / "import" / "graph.yaml").string(), (dir / "import" / "inputs").string(), 1);
  const StepGraph sg = loadGraph((dir / "import" / "graph.yaml").string());
  const ReferenceCheck ref = compareWithReference(r.outputs, dir / "import" / "expected", "fp32", onFirstCall([&] {
    return referenceErrorBounds(sg, loadInputs(sg, (dir / "import" / "inputs").string(), 1), false);
  }));
  CHECK(ref.ok());
  CHECK(rmsRelative(r.outputs.at("out_y"), fromNpy(dir / "import" / "expected" / "out_y.npy")) < 1e-3);
}
