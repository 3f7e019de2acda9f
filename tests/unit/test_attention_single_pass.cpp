// Single-pass decode attention (the online-softmax rescale, buildSinglePassAttention) in the
// functional model against softmax(q K^T) V computed in double, row by row; the two new
// functions on hand-checked values (Scan(max_exclusive), Accum(rescale_add)).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "builders/attention.hpp"
#include "common/fp.hpp"
#include "driver/inputs.hpp"
#include "ir/graph.hpp"
#include "model/functional.hpp"
#include "model/routing_ops.hpp"
#include "support/diag.hpp"
#include "support/files.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {
uint32_t b(float x) { return floatToBits(x); }
Token tile1(float x, int stop) { return Token::tile(1, 1, {b(x)}, stop); }
}  // namespace

TEST_CASE("single-pass attention: Scan(max_exclusive) gives the running max before each tile", "[attention]") {
  // Two groups (b = 1): {3, 1, 5} and {-2}. Exclusive: -inf, 3, 3 | -inf.
  const TokenStream in = {tile1(3, 0), tile1(1, 0), tile1(5, 1), tile1(-2, 1), Token::done()};
  const TokenStream out = scanMaxExclusive(in, 1);
  REQUIRE(out.size() == 5);
  CHECK((*out[0].data)[0] == 0xFF800000u);
  CHECK(f((*out[1].data)[0]) == 3.0);
  CHECK(f((*out[2].data)[0]) == 3.0);
  CHECK(out[2].stop == 1);
  CHECK((*out[3].data)[0] == 0xFF800000u);
  CHECK(out[4].kind == Token::Kind::Done);
}

// Per query row g: softmax over the valid tokens of q_g K^T, times V, in double. The model's
// error sources are those of the two-pass graph (test_attention.cpp: exp <= 3.5e-4 relative,
// recip < 5e-6, fp32 roundings, bf16 operands of both matmuls) plus the rescale products
// alpha_j * acc (one fp32 rounding each per tile), so the same bounds hold: 1e-3 (fp32
// multiplies) and 1e-2 (bf16) of sum_j w_j |v_jc|.
TEST_CASE("single-pass attention: the model matches softmax(q K^T) V in double", "[attention]") {
  struct Case {
    AttentionParams p;
    const char* shipped;  // tests/data graph that must equal the builder's text, or ""
  };
  const Case cases[] = {{{128, 64, 64, 8, 0, true}, "attention_single_pass.yaml"},
                        {{128, 64, 32, 4, 0, true}, "attention_single_pass_t32.yaml"},
                        {{128, 64, 32, 2, 100, true}, ""}};  // 100 real tokens: mask and ones
  for (const Case& c : cases) {
    const std::string text = buildSinglePassAttention(c.p);
    if (*c.shipped) CHECK(readText(root() + "/tests/data/graphs/" + c.shipped) == text);
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("sg_sp_{}_{}", c.p.kvTile, c.p.valid);
    std::filesystem::create_directories(dir);
    writeFile(dir / "graph.yaml", text);
    const StepGraph g = loadGraph((dir / "graph.yaml").string());
    std::filesystem::remove_all(dir);
    const ShapeResult s = checkShapes(g);
    auto in = loadInputs(g, "", 7);
    CHECK(in.count("ones") == (c.p.kvTile != c.p.headDim ? 1u : 0u));
    CHECK(in.count("mask") == (c.p.valid > 0 ? 1u : 0u));
    if (in.count("ones")) in["ones"] = attentionOnes(c.p);
    if (in.count("mask")) in["mask"] = attentionMask(c.p);
    const Matrix &q = in.at("q"), &k = in.at("k"), &v = in.at("v");
    const int64_t L = k.rows, D = k.cols, G = q.rows, valid = c.p.valid ? c.p.valid : L;
    for (NumberFormat fmtNum : {NumberFormat::Fp32, NumberFormat::Bf16Fp32}) {
      ArchModel a = loadArch(root() + "/arch/attention.yaml");
      a.cu.format = fmtNum;
      const Matrix out = runFunctional(g, s, a, in).outputs.at("out");
      REQUIRE(out.rows == G);
      REQUIRE(out.cols == D);
      double worst = 0;
      for (int64_t r = 0; r < G; ++r) {
        std::vector<double> w(size_t(valid), 0.0);
        double mx = -1e300, sum = 0;
        for (int64_t j = 0; j < valid; ++j) {
          for (int64_t d = 0; d < D; ++d) w[size_t(j)] += f(q.data[size_t(r * D + d)]) * f(k.data[size_t(j * D + d)]);
          mx = std::max(mx, w[size_t(j)]);
        }
        for (double& x : w) sum += (x = std::exp(x - mx));
        for (int64_t col = 0; col < D; ++col) {
          double ref = 0, scale = 1e-30;
          for (int64_t j = 0; j < valid; ++j) {
            const double vj = f(v.data[size_t(j * D + col)]);
            ref += w[size_t(j)] / sum * vj, scale += w[size_t(j)] / sum * std::fabs(vj);
          }
          worst = std::max(worst, std::fabs(f(out.data[size_t(r * D + col)]) - ref) / scale);
        }
      }
      INFO("T " << c.p.kvTile << " G " << G << " valid " << valid << (fmtNum == NumberFormat::Fp32 ? " fp32" : " bf16")
                << ": worst relative error " << worst);
      CHECK(worst < (fmtNum == NumberFormat::Fp32 ? 1e-3 : 1e-2));
      CHECK(worst > 0);  // the table exp is not exact: a zero would mean the check saw nothing
    }
  }
}

TEST_CASE("single-pass attention: rescale_add takes a pair of equal tiles (S-211, S-213)", "[attention][bad]") {
  auto errorsOf = [](const std::string& ops) {
    const auto dir = std::filesystem::temp_directory_path() / "sg_sp_bad";
    std::filesystem::create_directories(dir);
    writeFile(dir / "g.yaml", "stepgraph: bad\nsymbols: {N: 4}\ntensors:\n  x: {shape: [N, 16], role: input}\n"
                              "  y: {shape: [N, 32], role: input}\n  out: {shape: [1, 16], role: output}\nops:\n"
                              "  - {name: lx, op: LinearOffChipLoad, tensor: x, tile: [1, 16], iter: [1, N], strides: [[0, 0], [1, 0]], out: xs}\n" +
                                  ops +
                                  "  - {name: st, op: LinearOffChipStore, in: o, tensor: out, iter: [1], strides: [[1, 0]]}\n");
    std::vector<std::string> ids;
    try {
      checkShapes(loadGraph((dir / "g.yaml").string()));
    } catch (const DiagError& e) {
      for (const auto& d : e.diags) ids.push_back(d.id);
    }
    std::filesystem::remove_all(dir);
    return ids;
  };
  CHECK(errorsOf("  - {name: a, op: Accum, fn: rescale_add, b: 1, in: xs, out: o}\n") == std::vector<std::string>{"S-211"});
  CHECK(errorsOf("  - {name: ly, op: LinearOffChipLoad, tensor: y, tile: [1, 32], iter: [1, N], strides: [[0, 0], [1, 0]], out: ys}\n"
                 "  - {name: z, op: Zip, in: [xs, ys], out: xy}\n"
                 "  - {name: a, op: Accum, fn: rescale_add, b: 1, in: xy, out: o}\n") == std::vector<std::string>{"S-213"});
}
