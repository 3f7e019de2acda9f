// The experts of the Qwen3 MoE layer on R regions (builders/moe_regions.hpp): region
// outputs against a plain double-precision loop over the routing CSV, and the mapping of
// the regions graph onto a fabric of R region blocks (studies/regions_study.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "arch/arch_model.hpp"
#include "builders/moe_regions.hpp"
#include "common/fp.hpp"
#include "driver/moe_example.hpp"
#include "driver/pipeline.hpp"
#include "ir/graph.hpp"
#include "passes/shape_check.hpp"
#include "studies/regions_study.hpp"
#include "support/diag.hpp"
#include "support/routing_trace.hpp"
#include "moe_ref.hpp"
#include "test_common.hpp"

using namespace stepgen;
namespace fs = std::filesystem;

namespace {

const std::string kTrace = "/examples/moe/data/routing_qwen3_30b_a3b_b64.csv";

MoeParams qwen3(int64_t tileB, int64_t regions) {
  MoeParams p{64, 64, 24, 128, 8, tileB, 24, "routing.csv"};
  p.regions = regions;
  return p;
}

// `tag` keeps the folders of test cases apart (ctest runs them in parallel).
fs::path writeCase(const MoeParams& p, const std::string& tag) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("stepgen_regions_{}_{}_{}", tag, p.regions, p.tileB);
  writeMoeExample(p, root() + kTrace, dir.string(), 5);
  return dir;
}


}  // namespace

// Region r's rows: its experts ascending, each expert's tokens ascending (padded with zero
// rows to whole token tiles for a static tile), row = (silu(x Wg_e^T) * (x Wu_e^T)) Wd_e.
// Tolerance as test_moe.cpp for bf16 x bf16 products (arch/moe.yaml): 2^-6 of the row's
// magnitude; padding rows exactly +0.
TEST_CASE("moe regions: every region's expert outputs match a double-precision loop", "[model][moe]") {
  const RoutingTrace tr = readRoutingTrace(root() + kTrace, 128);
  const std::vector<std::vector<int>> experts(tr.experts.begin(), tr.experts.begin() + 64);
  for (int64_t tb : {int64_t(16), int64_t(0)}) {
    for (int64_t R : {int64_t(128), int64_t(4)}) {
      const MoeParams p = qwen3(tb, R);
      const fs::path dir = writeCase(p, "ref");
      const StepGraph g = loadGraph((dir / "graph.yaml").string());
      const ShapeResult s = checkShapes(g);
      const std::map<std::string, Matrix> in = loadInputs(g, (dir / "inputs").string(), 0);
      const FunctionalResult out = runFunctional(g, s, loadArch(root() + "/arch/moe.yaml"), in);
      const Matrix& x = in.at("x");
      const int64_t D = p.hidden, F = p.ffn;
      auto op = [](uint32_t v) { return f(v & 0xFFFF0000u); };  // the multiplier reads bf16
      const std::vector<MoeRegion> regions = moeRegions(p, R, experts);
      int active = 0;
      double worst = 0;
      for (size_t r = 0; r < regions.size(); ++r) {
        const MoeRegion& reg = regions[r];
        const std::string name = fmt::format("ym_r{}", r);
        INFO("R " << R << " tile " << tb << " region " << r);
        if (!reg.rows) {
          CHECK(out.outputs.count(name) == 0);
          continue;
        }
        ++active;
        const Matrix& ym = out.outputs.at(name);
        const Matrix &wg = in.at(fmt::format("wg_r{}", r)), &wu = in.at(fmt::format("wu_r{}", r)),
                     &wd = in.at(fmt::format("wd_r{}", r));
        REQUIRE(ym.rows == reg.rows);
        int64_t row = 0;
        for (int64_t le = 0; le < reg.n; ++le) {
          std::vector<int64_t> toks;
          for (int64_t t = 0; t < p.batch; ++t)
            for (int e : experts[size_t(t)])
              if (e == reg.first + le) toks.push_back(t);
          for (int64_t t : toks) {
            std::vector<double> ref(size_t(D), 0.0), mag(size_t(D), 0.0);
            addExpertRow(x, t, wg, wu, wd, le, D, F, 1.0, op, ref, mag);
            for (int64_t d = 0; d < D; ++d)
              worst = std::max(worst, std::fabs(f(ym.data[size_t(row * D + d)]) - ref[size_t(d)]) / (mag[size_t(d)] + 1e-30));
            ++row;
          }
          const int64_t padded = tb && !toks.empty() ? (int64_t(toks.size()) + tb - 1) / tb * tb : int64_t(toks.size());
          for (int64_t pad = int64_t(toks.size()); pad < padded; ++pad, ++row)
            for (int64_t d = 0; d < D; ++d) CHECK(ym.data[size_t(row * D + d)] == 0u);
        }
        CHECK(row == reg.rows);
      }
      INFO("R " << R << " tile " << tb << ": max relative error " << worst);
      CHECK(worst < std::ldexp(1.0, -6));
      CHECK(worst > 0);
      // Qwen3 at batch 64: 60 of 128 experts get tokens, so 60 one-expert regions are busy.
      if (R == 128) CHECK(active == 60);
      if (R == 4) CHECK(active == 4);
    }
  }
}

TEST_CASE("moe regions: R must divide the experts", "[model][moe][bad]") {
  const RoutingTrace tr = readRoutingTrace(root() + kTrace, 128);
  CHECK_THROWS_WITH(moeRegions(qwen3(0, 3), 3, tr.experts), Catch::Contains("regions must be >= 1 and divide the 128 experts, got 3"));
  CHECK_THROWS_AS(moeRegions(qwen3(0, 0), 0, tr.experts), DiagError);
}

TEST_CASE("moe regions: R regions map onto R region blocks and the model times them", "[mapper][moe]") {
  const MoeParams p = qwen3(0, 4);
  const fs::path dir = writeCase(p, "map");
  const fs::path work = fs::temp_directory_path() / "stepgen_regions_arch";
  fs::create_directories(work);
  const std::string arch = regionsArch(root() + "/arch/moe.yaml", work.string(), 4);
  const ArchModel a = loadArch(arch);
  CHECK(a.units.size() == 80);
  VerifyOptions vo;
  vo.archPath = arch;
  vo.graphPath = (dir / "graph.yaml").string();
  vo.inputsDir = (dir / "inputs").string();
  vo.outDir = (work / "v").string();
  vo.skipRtl = true;
  const VerifyReport v = verify(vo);
  REQUIRE(passed(v));
  CHECK(v.sections == 1);
  // Every region loads x (64 rows of 256 B) and its routing rows (64 of 64 B), the weights
  // of its experts that get tokens (3 x 24 x 64 x 4 B each, 60 experts), and stores its
  // rows (64 x 8 routed rows of 256 B in all, dynamic tiling: no padding).
  CHECK(v.model.offchipBytes == 4 * (64 * 256 + 64 * 64) + 60 * 3 * 24 * 64 * 4 + 64 * 8 * 256);
  // The shared DRAM moves 64 B a cycle, so no run is shorter than its bytes / 64; the RTL
  // (stepgen study regions --rtl 4) runs this point in 25774 cycles.
  CHECK(v.model.timing.cycles >= v.model.offchipBytes / 64);
  CHECK(std::abs(double(v.model.timing.cycles) - 25774.0) <= 0.05 * 25774.0);
}
