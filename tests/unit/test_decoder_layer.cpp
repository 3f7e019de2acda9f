// The decoder layer (builders/decoder_layer.hpp) in the functional model against the
// double-precision layer of decoder_ref.hpp, for the three models at scaled dims.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "arch/arch_model.hpp"
#include "builders/decoder_layer.hpp"
#include "common/fp.hpp"
#include "driver/examples.hpp"
#include "driver/inputs.hpp"
#include "studies/decoder_reference.hpp"
#include "ir/graph.hpp"
#include "model/functional.hpp"
#include "passes/shape_check.hpp"
#include "support/files.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {


}  // namespace

// Tolerances, as a share of the row's largest |value| (decref::rowError):
// - fp32 multiplies (arch/unbounded.yaml with number_format fp32): the appended k rows pass
//   only fp32 roundings (RMSNorm, a 64-term dot product, RoPE; rsqrt within 2 ulp,
//   docs/hardware.md section 3): 1e-5. The output also passes silu's sigmoid table (the
//   bucket midpoint within 2^-7 of x relative, so sigmoid off by at most 2^-7 max|x
//   sigmoid'(x)| = 2^-7 * 0.224 < 2^-9, silu within 2^-9 |x|) and the softmaxes' exp:
//   2^-8 of the row's scale.
// - bf16 operands (bf16_fp32, the shipped fabrics): each product's two operands truncated to
//   bf16 (each within 2^-7), so a dot product within 2^-6 of its terms' magnitudes; the
//   error of one stage is an input error of the next (projection, attention, output
//   projection, router and FFN), so 2^-5 of the row's scale; the residual x is exact. A
//   token whose k-th and (k+1)-th logits nearly tie may take either expert: the error is
//   against the nearer of the two reference outputs (decref::LayerRef::alt).
TEST_CASE("decoder layer: each model's layer matches a double-precision layer written as plain loops", "[decoder]") {
  for (const char* format : {"fp32", "bf16_fp32"}) {
    const auto archPath = std::filesystem::temp_directory_path() / fmt::format("sg_decoder_{}.yaml", format);
    std::string arch = readText(root() + "/arch/unbounded.yaml");
    arch.replace(arch.find("bf16_fp32"), 9, format);
    writeFile(archPath, arch);
    const ArchModel a = loadArch(archPath.string());
    const bool fp32 = std::string(format) == "fp32";
    for (DecoderModel model : {DecoderModel::Qwen3Moe, DecoderModel::Mixtral, DecoderModel::LlamaDense}) {
      DecoderLayerParams p;
      p.model = model;
      p.kvLengths = {5, 0, 17, 31};  // an empty cache, a new row that opens a tile, one that ends one
      const auto dir = std::filesystem::temp_directory_path() / ("sg_decoder_" + decoderModelName(model));
      writeFile(dir / "graph.yaml", buildDecoderLayerGraph(p));
      const StepGraph g = loadGraph((dir / "graph.yaml").string());
      const auto in = decoderLayerInputs(p, 7);
      const FunctionalResult r = runFunctional(g, checkShapes(g), a, in);
      const decref::LayerRef ref = decref::layerReference(p, in);
      const DecoderDims d = layerDims(p);
      const double worst = decref::maxRowError(r.outputs.at("out"), ref);
      double worstK = 0;
      for (int64_t b = 0; b < int64_t(p.kvLengths.size()); ++b) {
        int64_t row = 0;  // the appended row of request b in its head's cache
        const int64_t T = std::min<int64_t>(d.headDim, 32);
        for (int64_t e = 0; e < b; ++e) row += (p.kvLengths[size_t(e)] + 1 + T - 1) / T * T;
        row += p.kvLengths[size_t(b)];
        for (int64_t h = 0; h < d.kvHeads; ++h)
          worstK = std::max(worstK, decref::rowError(r.outputs.at("kc" + std::to_string(h)), row, ref.kNew[size_t(b)][size_t(h)]));
      }
      INFO(format << " " << decoderModelName(model) << ": worst output error " << worst << ", appended k rows " << worstK
                  << ", near router ties " << ref.nearTies);
      CHECK(worst < (fp32 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -5)));
      CHECK(worstK < (fp32 ? 1e-5 : std::ldexp(1.0, -5)));
      CHECK(worst > 0);
    }
  }
}

// The routing replayed from the real Mixtral trace (SelectGen; the scaled Mixtral has its
// 8 experts, top-2): the reference takes the trace's experts and the seeded weights, so the
// error bounds are the test above's.
TEST_CASE("decoder layer: Mixtral with its routing replayed from the real trace matches the reference", "[decoder]") {
  DecoderLayerParams p;
  p.model = DecoderModel::Mixtral;
  p.kvLengths = {5, 0, 17, 31};
  p.traceRouting = true;
  const auto dir = std::filesystem::temp_directory_path() / "sg_decoder_replayed";
  std::filesystem::remove_all(dir);
  writeDecoderLayerExample(p, dir.string(), 7, false, root() + "/examples/moe/data/routing_mixtral8x7b_b64.csv");
  const StepGraph g = loadGraph((dir / "graph.yaml").string());
  const auto in = loadInputs(g, (dir / "inputs").string(), 0);
  const decref::LayerRef ref = decref::layerReference(p, in);
  CHECK(ref.nearTies == 0);
  for (const char* format : {"fp32", "bf16_fp32"}) {
    std::string arch = readText(root() + "/arch/unbounded.yaml");
    arch.replace(arch.find("bf16_fp32"), 9, format);
    const auto archPath = std::filesystem::temp_directory_path() / fmt::format("sg_decoder_replayed_{}.yaml", format);
    writeFile(archPath, arch);
    const FunctionalResult r = runFunctional(g, checkShapes(g), loadArch(archPath.string()), in);
    const double worst = decref::maxRowError(r.outputs.at("out"), ref);
    INFO(format << ": worst output error " << worst);
    CHECK(worst < (std::string(format) == "fp32" ? std::ldexp(1.0, -8) : std::ldexp(1.0, -5)));
    CHECK(worst > 0);
  }
}
