// The timing-only model (runModel with values = false, docs/step_semantics.md#timing-only)
// and unbounded fabrics (fabricForGraph): the timing-only model must give the full model's
// cycles and byte counts on every point of the committed tables (the same graphs and
// fabrics the studies build: sweep.cpp, tiling.cpp, sections_study.cpp, regions_study.cpp),
// without reading a tensor.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>

#include "builders/gqa_decode.hpp"
#include "builders/swiglu.hpp"
#include "compiled.hpp"
#include "driver/examples.hpp"
#include "driver/moe_example.hpp"
#include "driver/pipeline.hpp"
#include "studies/arch_variant.hpp"
#include "studies/regions_study.hpp"
#include "studies/tiling.hpp"
#include "support/files.hpp"
#include "support/kv_lengths.hpp"
#include "test_common.hpp"

using namespace stepgen;
namespace fs = std::filesystem;

namespace {

// Full model (seeded inputs, or `inputsDir`) and timing-only model of one compiled point:
// equal cycles, bytes, FLOPs and deadlock verdict; no DRAM request outside the window.
void checkPoint(const std::string& arch, const std::string& graph, const std::string& inputsDir = "", int minSections = 1,
                bool onChipCarry = true) {
  INFO(arch << " " << graph << " sections >= " << minSections << (onChipCarry ? " carry auto" : " carry dram"));
  const CompileResult c = compileProgram(arch, graph, minSections, onChipCarry);
  const auto inputs = loadInputs(c.graph, inputsDir, 1);
  const ModelResult full = runModel(c.graph, c.shapes, c.mapping, c.arch, c.programLayout, c.image, inputs);
  const ModelResult timing = runModel(c.graph, c.shapes, c.mapping, c.arch, c.programLayout, c.image, {}, false);
  REQUIRE(!full.timing.deadlock);
  CHECK(timing.timing.cycles == full.timing.cycles);
  CHECK(timing.timing.offchipReadBytes == full.timing.offchipReadBytes);
  CHECK(timing.timing.offchipWriteBytes == full.timing.offchipWriteBytes);
  CHECK(timing.timing.reloadExposedCycles == full.timing.reloadExposedCycles);
  CHECK(timing.onchipBytes == full.onchipBytes);
  CHECK(timing.offchipBytes == full.offchipBytes);
  CHECK(timing.flops == full.flops);
  CHECK(!timing.timing.deadlock);
  CHECK(timing.timing.dramLate == 0);
  CHECK(timing.outputs.empty());
  CHECK(!full.outputs.empty());
}

fs::path workDir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("stepgen_timing_only_" + name);
  fs::create_directories(d);
  return d;
}
}  // namespace

TEST_CASE("timing-only: equal to the full model on the validation sweep's 15 SwiGLU points", "[timing_only]") {
  const fs::path d = workDir("sweep");
  for (int tb : {16, 32, 64})
    for (int tf : {16, 32, 64, 128, 256}) {
      const fs::path g = d / fmt::format("swiglu_tb{}_tf{}.yaml", tb, tf);
      writeFile(g, buildSwigluGraph({64, 256, 512, tb, tf}));
      checkPoint(root() + "/arch/step_validation.yaml", g.string());
    }
  checkPoint(root() + "/arch/default.yaml", root() + "/examples/swiglu/graph.yaml", root() + "/examples/swiglu/inputs");
}

TEST_CASE("timing-only: equal to the full model on the dynamic tiling study's 10 MoE points", "[timing_only][long]") {
  for (const MoeCase& c : moeCases())
    for (int64_t tb : {8, 16, 32, 64, 0}) {
      const fs::path d = workDir(fmt::format("tiling_{}_{}", c.name, tb));
      writeMoeExample({64, c.hidden, c.ffn, c.experts, c.topK, tb, c.tileF, "routing.csv"},
                      root() + "/examples/moe/data/" + c.traceFile, (d / "g").string(), 1);
      checkPoint(root() + "/arch/moe.yaml", (d / "g" / "graph.yaml").string(), (d / "g" / "inputs").string());
    }
}

TEST_CASE("timing-only: equal to the full model on the context study's sectioned stacks", "[timing_only]") {
  const fs::path d = workDir("sections");
  for (int n : {2, 4, 8}) {
    const fs::path g = d / fmt::format("mlp{}.yaml", n);
    writeFile(g, buildSwigluStack({16, 64, 128, 8, 32}, n));
    for (int contexts : {1, 2, 4, 8}) {
      const std::string arch = archVariant(root() + "/arch/default.yaml", d.string(), "contexts", contexts);
      for (bool carryAuto : {true, false}) checkPoint(arch, g.string(), "", 1, carryAuto);
    }
  }
}

TEST_CASE("timing-only: equal to the full model on the regions study's points", "[timing_only][long]") {
  const fs::path d = workDir("regions");
  for (int64_t tb : {16, 0})
    for (int R : {128, 64, 32, 16, 8, 4}) {
      MoeParams p;
      p.experts = 128, p.topK = 8, p.hidden = 64, p.ffn = 24, p.tileF = 24, p.tileB = tb, p.regions = R;
      const fs::path g = d / fmt::format("{}_r{}", tb, R);
      writeMoeExample(p, root() + "/examples/moe/data/routing_qwen3_30b_a3b_b64.csv", g.string(), 1);
      checkPoint(regionsArch(root() + "/arch/moe.yaml", d.string(), R), (g / "graph.yaml").string(),
                 (g / "inputs").string());
    }
}

TEST_CASE("unbounded fabric: one unit per operator, on a crossbar, sized by the graph", "[timing_only]") {
  // examples/swiglu: loads of x, wg, wu, wd and the store of out (5 address generators);
  // mm_g, mm_u, silu, mul, mm_p, acc (6 compute units); Broadcast and Zip take no unit.
  const CompileResult c = compileProgram(root() + "/arch/unbounded.yaml", root() + "/examples/swiglu/graph.yaml");
  int ag = 0, cu = 0, mu = 0;
  for (const UnitSite& u : c.arch.units)
    (u.kind == UnitKind::AddressGen ? ag : u.kind == UnitKind::Compute ? cu : u.kind == UnitKind::Memory ? mu : ag) +=
        u.kind != UnitKind::Empty;
  CHECK(ag == 5);
  CHECK(cu == 6);
  CHECK(mu == 0);
  CHECK(c.mapping.unitsUsed == 11);
  CHECK(c.arch.link.topology == "crossbar");
  CHECK(c.sections.sections == 1);

  // The same units on an ordinary crossbar fabric with the same unit and DRAM timing give
  // the same cycles: the unbounded fabric changes sizes, not timing.
  const fs::path d = workDir("unbounded");
  std::string text = readText(root() + "/arch/unbounded.yaml");
  text.replace(text.find("\ngrid: unbounded"), 16, "\ngrid: {cols: 6, rows: 2}");
  text += "units:\n  - [ag, ag, ag, ag, ag, \"-\"]\n  - [cu, cu, cu, cu, cu, cu]\n";
  writeFile(d / "crossbar.yaml", text);
  const CompileResult b = compileGraph((d / "crossbar.yaml").string(), root() + "/examples/swiglu/graph.yaml");
  const auto in = loadInputs(b.graph, root() + "/examples/swiglu/inputs", 1);
  const ModelResult mb = runModel(b.graph, b.shapes, b.mapping, b.arch, b.programLayout, b.image, in);
  const ModelResult mc = runModel(c.graph, c.shapes, c.mapping, c.arch, c.programLayout, c.image, {}, false);
  CHECK(mc.timing.cycles == mb.timing.cycles);
  CHECK(mc.timing.offchipReadBytes == mb.timing.offchipReadBytes);
}

TEST_CASE("unbounded fabric: bad input is a located error", "[timing_only]") {
  const fs::path d = workDir("unbounded_bad");
  std::string text = readText(root() + "/arch/unbounded.yaml");
  writeFile(d / "with_units.yaml", text + "units:\n  - [ag]\n");
  CHECK(testing::diagId([&] { loadArch((d / "with_units.yaml").string()); }) == "A-111");
  CHECK(testing::diagId([&] { compileGraph(root() + "/arch/unbounded.yaml", root() + "/examples/swiglu/graph.yaml"); }) ==
        "A-112");
  std::string bad = text;
  bad.replace(bad.find("\ngrid: unbounded"), 16, "\ngrid: infinite");
  writeFile(d / "bad_grid.yaml", bad);
  CHECK(testing::diagId([&] { loadArch((d / "bad_grid.yaml").string()); }) == "A-105");
}

TEST_CASE("timing-only: streams too large for this machine are a located error before any allocation", "[timing_only]") {
  const fs::path d = workDir("huge");
  std::string text = readText(root() + "/examples/swiglu/graph.yaml");
  text.replace(text.find("B: 16,"), 6, "B: 16000000000,");  // 2e9 batch tiles in every stream
  writeFile(d / "huge.yaml", text);
  CHECK(testing::diagId([&] { runTimingOnly(root() + "/arch/unbounded.yaml", (d / "huge.yaml").string()); }) == "R-406");
}

TEST_CASE("timing-only: the GQA decode graphs read only their meta rows, and equal the full model", "[timing_only]") {
  // Real KV lengths of Azure batch 3 (the first 8 requests, / 8) on 4 regions: coarse on
  // arch/gqa.yaml, the dynamic dispatch (a feedback cycle of arrival-order merges) on
  // arch/gqa_dynamic.yaml.
  for (const GqaStrategy st : {GqaStrategy::Coarse, GqaStrategy::Dynamic}) {
    GqaParams p;
    p.kvLengths = scaledKvLengths(readKvBatch(root() + "/examples/attention/data/azure_kv_batches_b16_b64.csv", 3).lengths, 8);
    p.kvLengths.resize(8);
    p.strategy = st;
    const fs::path dir = workDir(st == GqaStrategy::Coarse ? "gqa_coarse" : "gqa_dynamic");
    writeGqaExample(p, dir.string(), 1);
    const std::string arch = root() + (st == GqaStrategy::Coarse ? "/arch/gqa.yaml" : "/arch/gqa_dynamic.yaml");
    const std::string graph = (dir / "graph.yaml").string(), inputs = (dir / "inputs").string();
    const CompileResult c = compileProgram(arch, graph);
    const ModelResult full = runModel(c.graph, c.shapes, c.mapping, c.arch, c.programLayout, c.image, loadInputs(c.graph, inputs, 1));
    // Only the meta tensors are read: the others may be absent.
    const fs::path metaOnly = dir / "meta_only";
    fs::create_directories(metaOnly);
    for (const auto& e : fs::directory_iterator(inputs))
      if (e.path().filename().string().rfind("meta", 0) == 0) fs::copy_file(e.path(), metaOnly / e.path().filename());
    const ModelResult timing = runTimingOnly(arch, graph, nullptr, metaOnly.string());
    REQUIRE_FALSE(full.timing.deadlock);
    CHECK(timing.timing.cycles == full.timing.cycles);
    CHECK(timing.timing.offchipReadBytes == full.timing.offchipReadBytes);
    CHECK(timing.timing.offchipWriteBytes == full.timing.offchipWriteBytes);
    CHECK(timing.flops == full.flops);
    CHECK(timing.outputs.empty());
    // Without the meta rows: a located error at the first run load, naming what to pass.
    try {
      runTimingOnly(arch, graph);
      FAIL("no error without --inputs");
    } catch (const DiagError& e) {
      CHECK(e.diags.at(0).id == "R-410");
      CHECK(e.diags.at(0).loc.file == graph);
      CHECK(e.diags.at(0).loc.line > 0);
      CHECK_THAT(e.diags.at(0).message, Catch::Contains("--inputs DIR") && Catch::Contains("meta"));
    }
    fs::remove_all(dir);
  }
}
