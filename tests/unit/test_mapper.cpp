// Mapping: placement errors, routing errors, determinism of every output file.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiled.hpp"
#include "driver/pipeline.hpp"

using namespace stepgen;
namespace fs = std::filesystem;

namespace {
std::string root() { return STEPGEN_ROOT; }
std::string example() { return root() + "/examples/swiglu/graph.yaml"; }

using testing::diagId;

// The first diagnostic of compiling the SwiGLU example for arch (a path under the root).
Diagnostic compileDiag(const std::string& arch) {
  try {
    compileGraph(root() + arch, example());
  } catch (const DiagError& e) {
    REQUIRE(!e.diags.empty());
    return e.diags[0];
  }
  FAIL("expected an error");
  return {};
}

std::map<std::string, std::string> readTree(const fs::path& d) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(d)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    files[fs::relative(e.path(), d).string()] = ss.str();
  }
  return files;
}
}  // namespace

TEST_CASE("mapper: SwiGLU on the default fabric uses one unit per placed op", "[map]") {
  CompileResult c = compileGraph(root() + "/arch/default.yaml", example());
  int placed = 0;
  for (const auto& p : c.mapping.ops) placed += p.unit >= 0;
  CHECK(placed == 11);  // 4 loads, 3 matmuls, silu, mul, accum, store
  CHECK(c.mapping.unitsUsed == 11);
  for (const auto& r : c.mapping.routes) CHECK(r.distance <= c.arch.link.reach);
  CHECK(c.mapping.routes.size() == 11);  // 2+2+1+2+2+1+1 ports
}

// On an 8x8 grid the greedy placer puts the weight loads of mm_g at opposite edges (distance
// 6 > reach 3); the placement repair moves ops until every link is in reach. The result is
// deterministic, and the default fabric keeps its greedy placement (tests/golden).
TEST_CASE("mapper: placement repair finds a legal placement on an 8x8 grid", "[map]") {
  CompileResult c = compileGraph(root() + "/tests/data/arch_grid8.yaml", example());
  CHECK(c.sections.sections == 1);
  REQUIRE(c.mapping.routes.size() == 11);
  int wire = 0;
  for (const auto& r : c.mapping.routes) {
    CHECK(r.distance <= c.arch.link.reach);
    wire += r.distance;
  }
  CHECK(wire <= 11 * 3);
  CHECK(compileGraph(root() + "/tests/data/arch_grid8.yaml", example()).bitstream == c.bitstream);
}

TEST_CASE("mapper: an op that fits no section names the op and the resource", "[map][bad]") {
  // A graph larger than the fabric is cut into sections (test_sections.cpp); a Map on a
  // fabric without compute units fits none.
  const Diagnostic d = compileDiag("/tests/data/arch_no_cu.yaml");
  CHECK(d.id == "M-301");
  CHECK_THAT(d.message, Catch::Contains("mm_g") && Catch::Contains("cu"));
  CHECK(d.loc.line > 0);
  REQUIRE(!d.notes.empty());
  CHECK_THAT(d.notes.back().message, Catch::Contains("even alone in a section"));
}

TEST_CASE("mapper: a stream longer than the links reach is unroutable", "[map][bad]") {
  const Diagnostic d = compileDiag("/tests/data/arch_reach1.yaml");
  CHECK(d.id == "M-303");
  CHECK_THAT(d.message, Catch::Contains("unroutable") && Catch::Contains("reach only 1"));
}

TEST_CASE("determinism: compiling twice gives byte-identical outputs", "[map][determinism]") {
  fs::path base = fs::temp_directory_path() / "stepgen_det_test";
  fs::remove_all(base);
  for (const char* arch : {"/arch/default.yaml", "/arch/step_validation.yaml"}) {
    writeCompileOutputs(compileGraph(root() + arch, example()), (base / "a").string());
    writeCompileOutputs(compileGraph(root() + arch, example()), (base / "b").string());
    auto a = readTree(base / "a"), b = readTree(base / "b");
    REQUIRE(a.size() >= 10);  // rtl files, filelist, .bin, .cfg, mapping
    CHECK(a == b);
  }
  fs::remove_all(base);
}

TEST_CASE("bad input: nothing is left in the output folder", "[bad]") {
  fs::path out = fs::temp_directory_path() / "stepgen_bad_out";
  fs::remove_all(out);
  CHECK(diagId([&] { writeCompileOutputs(compileGraph(root() + "/tests/data/arch_no_cu.yaml", example()), out.string()); }) ==
        "M-301");
  CHECK_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(out.parent_path()))
    CHECK(e.path().filename().string().find("stepgen_bad_out.partial") == std::string::npos);
}

TEST_CASE("bad input: a missing input file is R-401", "[bad]") {
  CompileResult c = compileGraph(root() + "/arch/default.yaml", example());
  CHECK(diagId([&] { loadInputs(c.graph, "/nonexistent/folder", 1); }) == "R-401");
}

TEST_CASE("verdict: outputs, bytes, deadlock and the cycle tolerance decide PASS", "[verify]") {
  VerifyReport r;
  r.model.timing.cycles = 950, r.model.timing.offchipReadBytes = 640, r.model.timing.offchipWriteBytes = 64;
  CHECK(passed(r));  // the RTL was not run: the model alone decides
  r.rtl.status = "ok", r.outputsEqual = true;
  r.rtl.cycles = 1000, r.cycleErrorPercent = 5.0, r.rtl.readBytes = 640, r.rtl.writeBytes = 64;
  CHECK(passed(r));  // no tolerance set
  r.maxCycleErrorPercent = 5.0;
  CHECK(passed(r));
  r.maxCycleErrorPercent = 4.9;
  CHECK_FALSE(passed(r));
  CHECK_THAT(verdictText(r), Catch::Contains("above the tolerance of 4.9 %") && Catch::Contains("verdict: FAIL"));
  r.maxCycleErrorPercent = 0;
  r.rtl.writeBytes = 128;
  CHECK_FALSE(passed(r));
  r.rtl.writeBytes = 64, r.outputsEqual = false;
  CHECK_FALSE(passed(r));
  r.outputsEqual = true, r.model.timing.deadlock = true;
  CHECK_FALSE(passed(r));
}
