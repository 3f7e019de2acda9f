// loadArch: the shipped arch files load with the expected values; every bad input under
// tests/data/bad/arch_*.yaml gives the expected diagnostic id, line, column and field.
#include <catch2/catch.hpp>

#include <string>

#include "arch/arch_model.hpp"
#include "support/yaml_doc.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {


/// Loads a bad arch file and returns its first diagnostic (fails the test if none).
Diagnostic archError(const std::string& name) {
  try {
    loadArch(kRoot + "/tests/data/bad/" + name);
  } catch (const DiagError& e) {
    REQUIRE(!e.diags.empty());
    return e.diags.front();
  }
  FAIL("no error for " << name);
  return {};
}

void expectDiag(const std::string& file, const char* id, int line, int col, const char* mentions) {
  INFO(file);
  Diagnostic d = archError(file);
  INFO(formatDiagnostic(d));
  CHECK(d.id == id);
  CHECK(d.loc.line == line);
  CHECK(d.loc.col == col);
  CHECK(d.loc.file.find(file) != std::string::npos);
  CHECK(d.message.find(mentions) != std::string::npos);
}

int count(const ArchModel& a, UnitKind k) {
  int n = 0;
  for (const auto& u : a.units) n += u.kind == k;
  return n;
}

}  // namespace

TEST_CASE("default arch loads", "[arch]") {
  ArchModel a = loadArch(kRoot + "/arch/default.yaml");
  CHECK(a.name == "default");
  CHECK(a.cols == 5);
  CHECK(a.rows == 3);
  CHECK(a.contexts == 2);
  CHECK(a.link.topology == "neighborhood");
  CHECK(a.link.widthBits == 512);
  CHECK(a.link.fifoDepth == 2);
  CHECK(a.wordsPerBeat() == 16);
  CHECK(a.cu.lanes == 16);
  CHECK(a.cu.flopsPerCycle == 32);
  CHECK(a.cu.format == NumberFormat::Bf16Fp32);
  CHECK(a.cu.bufferBytes == 65536);
  CHECK(a.cu.functions == std::vector<std::string>{"matmul", "silu", "mul", "add", "accum", "retile"});
  CHECK(a.offchip.channels == 2);
  CHECK(a.offchip.latency == 40);
  CHECK(a.offchip.initiationInterval == 2);
  CHECK(a.offchip.startup == 100);
  CHECK(a.offchip.outstanding == 16);
  REQUIRE(a.units.size() == 15);
  CHECK(count(a, UnitKind::Compute) >= 6);
  CHECK(count(a, UnitKind::AddressGen) >= 5);
  CHECK(count(a, UnitKind::Memory) >= 2);
  // Row-major, with the entry's location.
  for (size_t i = 0; i < a.units.size(); ++i) {
    CHECK(a.units[i].x == int(i) % a.cols);
    CHECK(a.units[i].y == int(i) / a.cols);
  }
  CHECK(a.units[6].kind == UnitKind::Memory);  // row 1, col 1
  CHECK(a.units[6].loc.line > 0);
  CHECK(a.units[7].loc.line == a.units[6].loc.line);
  CHECK(a.units[7].loc.col > a.units[6].loc.col);
}

TEST_CASE("step_validation arch is the paper's HDL point", "[arch]") {
  ArchModel a = loadArch(kRoot + "/arch/step_validation.yaml");
  CHECK(a.offchipBytesPerCycle() == 256.0);
  CHECK(a.cu.flopsPerCycle == 4096);
  CHECK(a.cu.lanes == 2048);
  CHECK(a.cu.format == NumberFormat::Fp32);
  CHECK(a.mu.bytesPerCycle == 256);
  CHECK(a.mu.capacityBytes == 524288);
  CHECK(a.linkBytes() == 256);
  CHECK(a.cu.bufferBytes == 1048576);
  // Double-buffered operands of the largest validation point (64x256 and 256x256 fp32).
  CHECK(a.cu.bufferBytes >= 2 * (64 * 256 + 256 * 256) * 4 + 2 * 64 * 256 * 4);
  CHECK(a.offchip.latency == 100);
  CHECK(a.offchip.startup == 200);
  CHECK(a.offchip.outstanding == 256);
  CHECK(count(a, UnitKind::Compute) >= 6);
  CHECK(count(a, UnitKind::AddressGen) >= 5);
  CHECK(count(a, UnitKind::Memory) >= 2);
}

TEST_CASE("ceilLog2 is $clog2 and sets the row tree's stages", "[arch]") {
  CHECK(ceilLog2(0) == 0);
  CHECK(ceilLog2(1) == 0);
  CHECK(ceilLog2(2) == 1);
  CHECK(ceilLog2(3) == 2);
  CHECK(ceilLog2(16) == 4);
  CHECK(ceilLog2(17) == 5);
  CHECK(loadArch(kRoot + "/arch/attention.yaml").rowTreeStages() == 4);  // 512-bit links: 16 words
}

TEST_CASE("unitKindName", "[arch]") {
  CHECK(std::string(unitKindName(UnitKind::Compute)) == "cu");
  CHECK(std::string(unitKindName(UnitKind::Memory)) == "mu");
  CHECK(std::string(unitKindName(UnitKind::AddressGen)) == "ag");
  CHECK(std::string(unitKindName(UnitKind::Empty)) == "empty");
}

TEST_CASE("bad arch files give located diagnostics", "[arch][diag]") {
  SECTION("unknown key") { expectDiag("arch_unknown_key.yaml", "A-101", 6, 47, "memory_unit.ports"); }
  SECTION("missing key") { expectDiag("arch_missing_key.yaml", "A-102", 7, 10, "offchip.latency"); }
  SECTION("wrong type") { expectDiag("arch_wrong_type.yaml", "A-103", 4, 30, "link.width_bits"); }
  SECTION("out of range") { expectDiag("arch_out_of_range.yaml", "A-104", 4, 47, "link.fifo_depth"); }
  SECTION("not a power of two") { expectDiag("arch_lanes_pow2.yaml", "A-104", 5, 23, "compute_unit.lanes"); }
  SECTION("unknown unit kind") { expectDiag("arch_unit_kind.yaml", "A-105", 9, 10, "units[0][1]"); }
  SECTION("flops != 2*lanes") {
    expectDiag("arch_flops.yaml", "A-107", 5, 44, "compute_unit.flops_per_cycle");
    Diagnostic d = archError("arch_flops.yaml");
    CHECK(d.message.find("lanes") != std::string::npos);
    REQUIRE(d.notes.size() == 1);
    CHECK(d.notes[0].loc.line == 5);
    CHECK(d.notes[0].loc.col == 16);
  }
  SECTION("duplicate function") { expectDiag("arch_dup_function.yaml", "A-108", 5, 74, "compute_unit.functions[2]"); }
  SECTION("row length") { expectDiag("arch_row_length.yaml", "A-110", 10, 14, "units[1][2]"); }
  SECTION("route not a bool word") { expectDiag("arch_route_word.yaml", "A-105", 6, 75, "memory_unit.route"); }
  SECTION("route not a scalar") { expectDiag("arch_route_type.yaml", "A-103", 6, 75, "memory_unit.route"); }
  SECTION("banked memory with more lanes than words per beat") {
    expectDiag("arch_banked_lanes.yaml", "A-113", 5, 118, "compute_unit.memory");
  }
  SECTION("memory not banked or flat") { expectDiag("arch_memory_word.yaml", "A-105", 5, 118, "compute_unit.memory"); }
}

TEST_CASE("compute_unit.memory: banked where lanes <= words per beat, flat otherwise", "[arch]") {
  CHECK(loadArch(kRoot + "/arch/default.yaml").cu.banked);          // 16 lanes, 16 words per beat
  CHECK(loadArch(kRoot + "/tests/data/arch_small.yaml").cu.banked);  // 2 lanes
  CHECK_FALSE(loadArch(kRoot + "/arch/step_validation.yaml").cu.banked);  // 2048 lanes, 64 words
  CHECK(loadArch(kRoot + "/arch/moe.yaml").cu.banked);              // memory: banked_ragged
  CHECK(loadArch(kRoot + "/arch/moe.yaml").cu.aCopies == 2);
  CHECK(loadArch(kRoot + "/arch/default.yaml").cu.aCopies == 1);
  CHECK_FALSE(loadArch(kRoot + "/arch/unbounded.yaml").cu.banked);  // no RTL
}

TEST_CASE("a banked memory takes whole-beat rows, banked_ragged also even K above a beat", "[arch]") {
  ComputeUnitParams cu;  // banked, one a copy
  CHECK(cu.matmulRowsFit(32, 16, false));
  CHECK(cu.matmulRowsFit(32, 16, true));
  CHECK_FALSE(cu.matmulRowsFit(24, 16, false));
  cu.aCopies = 2;        // banked_ragged: rows i (K + 1) + k apart in the banks, K + 1 odd
  CHECK(cu.matmulRowsFit(24, 16, false));
  CHECK(cu.matmulRowsFit(18, 16, false));
  CHECK_FALSE(cu.matmulRowsFit(24, 16, true));   // a transposed b has no ragged copy
  CHECK_FALSE(cu.matmulRowsFit(25, 16, false));  // K + 1 even: rows of one k share banks
  CHECK_FALSE(cu.matmulRowsFit(8, 16, false));   // a beat would hold more than two rows
  cu.banked = false;     // flat: any K
  CHECK(cu.matmulRowsFit(25, 16, true));
}

TEST_CASE("compute_unit.fp_adder is optional, default near_far (sg_cu NEAR_FAR)", "[arch]") {
  CHECK(loadArch(kRoot + "/arch/default.yaml").cu.nearFar);
  CHECK_FALSE(loadArch(kRoot + "/tests/data/arch_small_nomul.yaml").cu.nearFar);  // single_path
}

TEST_CASE("memory_unit.route is optional, default false", "[arch]") {
  CHECK_FALSE(loadArch(kRoot + "/arch/default.yaml").mu.route);
  CHECK_FALSE(loadArch(kRoot + "/tests/data/arch_small.yaml").mu.route);
  ArchModel a = loadArch(kRoot + "/tests/data/arch_small_route.yaml");
  CHECK(a.mu.route);
  CHECK(a.mu.capacityBytes == 2048);
}

TEST_CASE("malformed arch YAML is Y-001 with the parser's position", "[arch][diag]") {
  Diagnostic d = archError("arch_malformed.yaml");
  INFO(formatDiagnostic(d));
  CHECK(d.id == "Y-001");
  CHECK(d.loc.line >= 4);
  CHECK(d.loc.col >= 1);
  CHECK(d.message.find("YAML syntax error") != std::string::npos);
}

TEST_CASE("missing arch file is Y-002", "[arch][diag]") {
  try {
    loadArch(kRoot + "/tests/data/bad/no_such_file.yaml");
    FAIL("no error");
  } catch (const DiagError& e) {
    CHECK(e.diags.at(0).id == "Y-002");
  }
}

TEST_CASE("yaml wrapper: typed getters, paths and unknown keys", "[yaml]") {
  YamlValue root = parseYamlString("a: {b: 3, c: [x, y]}\nq: \"7\"\nr:\n", "mem.yaml");
  YamlMap top = root.asMap();
  YamlMap a = top.getMap("a");
  CHECK(a.getInt("b", 1, 5) == 3);
  std::vector<YamlValue> c = a.getList("c");
  REQUIRE(c.size() == 2);
  CHECK(c[1].path() == "a.c[1]");
  CHECK(c[1].loc().line == 1);
  CHECK(c[1].loc().col == 18);
  CHECK(c[0].asEnum({"x", "z"}) == "x");
  a.finish();
  // Quoted numbers are strings.
  try {
    top.getInt("q", 0, 10);
    FAIL("no error");
  } catch (const DiagError& e) {
    CHECK(e.diags[0].id == "Y-005");
    CHECK(e.diags[0].message.find("q:") == 0);
  }
  // An empty value is reported at its key.
  try {
    top.getInt("r", 0, 10);
    FAIL("no error");
  } catch (const DiagError& e) {
    CHECK(e.diags[0].loc.line == 3);
    CHECK(e.diags[0].loc.col == 1);
    CHECK(e.diags[0].message.find("got nothing") != std::string::npos);
  }
  try {
    a.getEnum("b", {"x"});
    FAIL("no error");
  } catch (const DiagError& e) {
    CHECK(e.diags[0].id == "Y-007");
  }
  YamlMap fresh = root.asMap();
  fresh.get("a");
  try {
    fresh.finish();
    FAIL("no error");
  } catch (const DiagError& e) {
    REQUIRE(e.diags.size() == 2);
    CHECK(e.diags[0].id == "Y-003");
    CHECK(e.diags[0].message.find("'q'") != std::string::npos);
    CHECK(e.diags[1].loc.line == 3);
  }
  try {
    parseYamlString("a: 1\na: 2\n", "dup.yaml").asMap();
    FAIL("no error");
  } catch (const DiagError& e) {
    CHECK(e.diags[0].id == "Y-008");
    CHECK(e.diags[0].loc.line == 2);
  }
  try {
    parseYamlString("a: [1, 2\n", "syn.yaml");
    FAIL("no error");
  } catch (const DiagError& e) {
    CHECK(e.diags[0].id == "Y-001");
    CHECK(e.diags[0].loc.file == "syn.yaml");
    CHECK(e.diags[0].loc.line >= 1);
  }
  CHECK(parseYamlString("a: -5", "n.yaml").asMap().getInt("a", -10, 0) == -5);
  CHECK_THROWS_AS(parseYamlString("a: 5x", "n.yaml").asMap().getInt("a", 0, 10), DiagError);
  CHECK_THROWS_AS(parseYamlString("a: 99999999999999999999", "n.yaml").asMap().getInt("a", 0, 10), DiagError);
}
