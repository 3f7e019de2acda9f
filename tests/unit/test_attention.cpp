// Decode attention (examples/attention, builders/attention.hpp) in the functional model
// against softmax(q K^T) V computed in double from the same inputs; and the functions it
// uses (fp32Max, rowReduce) on hand-checked values.
#include <catch2/catch.hpp>

#include <cmath>

#include "builders/attention.hpp"
#include "common/fp.hpp"
#include "driver/inputs.hpp"
#include "ir/graph.hpp"
#include "model/functional.hpp"
#include "support/files.hpp"
#include "support/kv_lengths.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {
}  // namespace

TEST_CASE("attention: fp32Max and rowReduce on hand-checked values", "[attention][fp]") {
  enableFtzDaz();
  const uint32_t pz = 0x00000000u, nz = 0x80000000u, one = floatToBits(1.0f), m2 = floatToBits(-2.0f),
                 m1 = floatToBits(-1.0f), inf = 0x7F800000u, ninf = 0xFF800000u, nan = 0x7FC00001u;
  CHECK(fp32Max(pz, nz) == pz);
  CHECK(fp32Max(nz, pz) == pz);
  CHECK(fp32Max(m1, m2) == m1);
  CHECK(fp32Max(m2, one) == one);
  CHECK(fp32Max(ninf, m2) == m2);
  CHECK(fp32Max(inf, one) == inf);
  CHECK(fp32Max(one, nan) == kFp32QNaN);
  CHECK(fp32Max(0x00000001u, pz) == 0x00000001u);  // subnormals compared by value
  // The tree order matters for sums: {1e8, 1, -1e8, 1} is (1e8 + 1) + (-1e8 + 1) = 1e8 - 1e8
  // = 0 as one 4-word group (fp32: 1e8 + 1 rounds to 1e8), 1 when folded word by word.
  const uint32_t big = floatToBits(1e8f), nbig = floatToBits(-1e8f);
  const uint32_t v[4] = {big, one, nbig, one};
  CHECK(rowReduce(v, 4, 4, true) == pz);
  CHECK(rowReduce(v, 4, 2, true) == pz);              // groups {1e8, 1} -> 1e8, {-1e8, 1} -> -1e8
  CHECK(f(rowReduce(v, 4, 1, true)) == 1.0);           // one word per group: in order
  const uint32_t w[5] = {m2, floatToBits(3.5f), m1, floatToBits(-7.0f), pz};
  CHECK(f(rowReduce(w, 5, 4, false)) == 3.5);
  CHECK(f(rowReduce(w, 5, 4, true)) == -6.5);
}

// With fp32 multiplies the model's error comes from exp (relative error at most 3.5e-4 per
// p_j, docs/hardware.md section 3), recip (below 5e-6) and fp32 rounding (about 1e-7 per
// operation): each output is within 1e-3 of the reference relative to sum_j w_j |v_jc|.
// With bf16 multiplies (the shipped fabrics) the two matmuls read q, k, w and v as bf16
// (truncated to 8 significant bits: relative error below 2^-7 per product), so the bound is
// 1e-2 of the same sum (measured: 1.9e-3 at L = 128, 7.5e-4 at L = 1024; fp32: 5e-5, 1.7e-5).
TEST_CASE("attention: the model's decode attention matches softmax(q K^T) V in double", "[attention]") {
  for (int64_t kv : {128, 1024}) {
    const StepGraph g = loadGraph(kv == 128 ? root() + "/examples/attention/graph.yaml"
                                            : root() + "/tests/data/graphs/attention_decode_1k.yaml");
    const ShapeResult s = checkShapes(g);
    const auto in = loadInputs(g, "", 5);
    const Matrix &q = in.at("q"), &k = in.at("k"), &v = in.at("v");
    const int64_t L = k.rows, D = k.cols;
    REQUIRE(L == kv);
    std::vector<double> sc(static_cast<size_t>(L), 0.0), w(static_cast<size_t>(L), 0.0);
    double mx = -1e300, sum = 0;
    for (int64_t j = 0; j < L; ++j) {
      for (int64_t d = 0; d < D; ++d) sc[size_t(j)] += f(q.data[size_t(d)]) * f(k.data[size_t(j * D + d)]);
      mx = std::max(mx, sc[size_t(j)]);
    }
    for (int64_t j = 0; j < L; ++j) sum += (w[size_t(j)] = std::exp(sc[size_t(j)] - mx));
    for (double& x : w) x /= sum;
    for (NumberFormat fmtNum : {NumberFormat::Fp32, NumberFormat::Bf16Fp32}) {
      ArchModel a = loadArch(root() + "/arch/attention.yaml");
      a.cu.format = fmtNum;
      const Matrix out = runFunctional(g, s, a, in).outputs.at("out");
      REQUIRE(out.cols == D);
      const double tol = fmtNum == NumberFormat::Fp32 ? 1e-3 : 1e-2;
      double worst = 0;
      for (int64_t c = 0; c < D; ++c) {
        double ref = 0, scale = 1e-30;
        for (int64_t j = 0; j < L; ++j) ref += w[size_t(j)] * f(v.data[size_t(j * D + c)]), scale += w[size_t(j)] * std::fabs(f(v.data[size_t(j * D + c)]));
        worst = std::max(worst, std::fabs(f(out.data[size_t(c)]) - ref) / scale);
      }
      INFO("L " << L << (fmtNum == NumberFormat::Fp32 ? " fp32" : " bf16") << ": worst relative error " << worst);
      CHECK(worst < tol);
      CHECK(worst > 0);  // the table exp is not exact: a zero would mean the check saw nothing
    }
  }
}

TEST_CASE("attention: the shipped graphs are the builder's output; bad sizes are G-120", "[attention]") {
  CHECK(readText(root() + "/examples/attention/graph.yaml") == buildDecodeAttentionGraph({128, 64, 32}));
  CHECK(readText(root() + "/tests/data/graphs/attention_decode_1k.yaml") == buildDecodeAttentionGraph({1024, 64, 32}));
  for (const AttentionParams& p : {AttentionParams{100, 64, 32}, AttentionParams{0, 64, 32}, AttentionParams{128, 64, 0}}) {
    try {
      buildDecodeAttentionGraph(p);
      FAIL("expected G-120");
    } catch (const DiagError& e) {
      CHECK(e.diags.at(0).id == "G-120");
    }
  }
}

TEST_CASE("attention: the KV-length batches; bad files are R-407 at the field", "[attention][bad]") {
  const std::vector<KvBatch> b = readKvBatches(root() + "/examples/attention/data/azure_kv_batches_b16_b64.csv");
  REQUIRE(b.size() == 36);
  for (size_t i = 0; i < b.size(); ++i) CHECK(b[i].lengths.size() == (i < 21 ? 16u : 64u));
  CHECK(b[0].lengths[0] == 1097);
  CHECK(b[0].lengths[3] == 376);
  CHECK(b[0].id == "b16/conv_stdev0174_1845_1860.npy");
  const std::string head = "source_file,batch,stdev_label,start_row_1based,end_row_1based,slot,context_tokens\n";
  const std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
  struct Bad {
    std::string body;
    int line, col;
  };
  for (const Bad& x : {Bad{"a,2,1,1,2,0,10\na,2,1,1,2,1,-5\n", 3, 13}, Bad{"a,2,1,1,2,0,ten\n", 2, 13},
                       Bad{"a,2,1,1,2,1,10\n", 2, 11}, Bad{"a,2,1,1,2,0,10\na,3,1,1,2,1,10\n", 3, 3},
                       Bad{"a,2,1,1,2,0\n", 2, 1}}) {
    const std::string path = dir + "/stepgen_bad_kv.csv";
    writeFile(path, head + x.body);
    try {
      readKvBatches(path);
      FAIL("expected R-407 for " << x.body);
    } catch (const DiagError& e) {
      CHECK(e.diags.at(0).id == "R-407");
      CHECK(e.diags.at(0).loc.line == x.line);
      CHECK(e.diags.at(0).loc.col == x.col);
    }
  }
}
