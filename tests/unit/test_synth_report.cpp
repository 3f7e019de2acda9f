// stepgen synth's reading of a depth report (generator/fpga/synth.cpp): the LUTs on the longest
// path, told apart from its carry cells, wide-mux halves and DSP blocks by the names
// flows/fpga_synth_one.sh gives them.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>

#include "fpga/synth.hpp"

using stepgen::pathLutLevels;

TEST_CASE("synth: LUT levels of a renamed ltp path", "[fpga]") {
  // An 8-level path as Yosys 0.23 prints it for tests/data/fpga/ltp_lutram.sv: 3 LUTs and
  // 5 carry cells.
  const std::string ltp =
      "Longest topological path in ltp_lutram (length=8):\n"
      "    0: \\b [3]\n"
      "    1: $auto$alumacc.cc:485:replace_alu$1875.X [3] (via ltp_lut_39)\n"
      "    2: $auto$alumacc.cc:485:replace_alu$1875.CO [3] (via ltp_carry_2)\n"
      "    3: $auto$alumacc.cc:485:replace_alu$1875.CO [7] (via ltp_carry_3)\n"
      "    4: $auto$alumacc.cc:485:replace_alu$1875.CO [11] (via ltp_carry_4)\n"
      "    5: $auto$alumacc.cc:485:replace_alu$1875.Y [12] (via ltp_carry_5)\n"
      "    6: $gt$ltp_lutram.sv:11$3.G [2] (via ltp_lut_35)\n"
      "    7: $gt$ltp_lutram.sv:11$3.CO [2] (via ltp_carry_10)\n"
      "    8: \\we (via ltp_lut_0)\n";
  CHECK(pathLutLevels(ltp) == 3);
}

TEST_CASE("synth: a LUT-RAM read counts, muxes and DSPs do not", "[fpga]") {
  const std::string ltp =
      "    1: a (via ltp_lut_1)\n"
      "    2: b (via ltp_muxf_7)\n"
      "    3: c (via ltp_lutram_2)\n"
      "    4: d (via ltp_dsp_0)\n"
      "    5: e (via ltp_lutx_3)\n"      // not a kind the flow writes
      "    6: f (via $abc$1$lut_4)\n";   // a name the flow did not rename
  CHECK(pathLutLevels(ltp) == 2);
  CHECK(pathLutLevels("") == 0);
}

namespace {
stepgen::SynthRow row(const std::string& unit, int count, int64_t luts, int64_t levels, const std::string& status) {
  stepgen::SynthRow r;
  r.unit = unit, r.module = "sg_" + unit, r.count = count, r.status = status, r.seconds = 10.5;
  r.c.luts = luts, r.c.ffs = 2 * luts, r.c.brams = 0.5, r.c.logicLevels = levels, r.c.lutLevels = levels / 2;
  return r;
}
}  // namespace

TEST_CASE("synth: the fabric row sums count x unit and the top, not the wrapper", "[fpga]") {
  // 6 x 100 + 2 x 50 + 7 x 1000 + 500 LUTs; the wrapper's 9,999 are not part of the fabric,
  // nor are the compute unit's parts (cu.mac: in cu's 1000 already).
  std::vector<stepgen::SynthRow> rows = {row("ag", 6, 100, 20, "ok"), row("mu", 2, 50, 9, "ok"),
                                         row("cu", 7, 1000, 46, "ok"), row("top", 1, 500, 12, "ok"),
                                         row("axi", 1, 9999, 99, "ok"), row("cu.mac", 7, 777, 88, "ok")};
  stepgen::SynthRow f = stepgen::fabricRow(rows, false);
  CHECK(f.status == "ok");
  CHECK(f.c.luts == 8200);
  CHECK(f.c.ffs == 16400);
  CHECK(f.c.brams == 8.0);  // 16 units and the top at half a block each
  CHECK(f.c.logicLevels == 46);
  CHECK(f.c.lutLevels == 23);
  CHECK(f.seconds == 42.0);
  rows[1].status = "skipped";
  CHECK(stepgen::fabricRow(rows, false).status == "partial");
  rows[0].status = "timeout";
  CHECK(stepgen::fabricRow(rows, false).status == "incomplete");
  f = stepgen::fabricRow(rows, true);
  CHECK(f.status == "overridden");
  CHECK(f.c.luts == 0);
}

namespace {
// The parameters module `name` declares (its `parameter int X`, not its localparams), read
// from the template itself.
std::set<std::string> declaredParams(const std::string& module) {
  std::ifstream f(std::string(STEPGEN_ROOT) + "/rtl_templates/" + module + ".sv");
  REQUIRE(f.good());
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::set<std::string> names;
  static const std::regex re(R"(\n\s*parameter int (\w+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    names.insert((*it)[1]);
  return names;
}
std::set<std::string> namesOf(const std::string& params) {
  std::set<std::string> names;
  std::istringstream in(params);
  for (std::string kv; in >> kv;) names.insert(kv.substr(0, kv.find('=')));
  return names;
}
}  // namespace

TEST_CASE("synth: the compute unit's parts get the parameters sg_cu gives them", "[fpga]") {
  stepgen::SynthRow cu = row("cu", 7, 1000, 46, "");
  cu.params = "W=16 LANES=8 BUF_WORDS=16384 BF16=1 DYN=0 ATTN=1 SILU=1 MUL=1 BANKED=1 A_COPIES=2 NEAR_FAR=0 TOPK=0";
  const std::vector<stepgen::SynthRow> parts = stepgen::cuPartRows(cu);
  REQUIRE(parts.size() == 5);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"sg_cu_mem", "W=16 LANES=8 BUF_WORDS=16384 BANKED=1 B_COPIES=1 A_COPIES=2"},
      {"sg_cu_addr", "W=16 LANES=8 BUF_WORDS=16384 DYN=0 A_COPIES=2 HOLD=0"},
      {"sg_cu_mac", "LANES=8 BF16=1 NEAR_FAR=0"},
      {"sg_cu_word", "W=16 DYN=0 ATTN=1 SILU=1 MUL=1 NEAR_FAR=0 TOPK=0"},
      {"sg_cu_rowred", "W=16 ATTN=1 NEAR_FAR=0"}};
  for (size_t i = 0; i < parts.size(); ++i) {
    INFO(parts[i].module);
    CHECK(parts[i].module == want[i].first);
    CHECK(parts[i].unit == "cu." + want[i].first.substr(6));
    CHECK(parts[i].params == want[i].second);
    CHECK(parts[i].count == 7);
    // every parameter the module declares, and no other
    CHECK(namesOf(parts[i].params) == declaredParams(parts[i].module));
  }
  cu.params = "W=16 LANES=8 BUF_WORDS=16384 BF16=1 DYN=1 ATTN=1 SILU=1 MUL=1 BANKED=1 A_COPIES=2 NEAR_FAR=0 TOPK=0";
  CHECK(stepgen::cuPartRows(cu)[0].params == "W=16 LANES=8 BUF_WORDS=16384 BANKED=1 B_COPIES=2 A_COPIES=2");
  // a flat-memory unit holds its addresses (sg_cu.sv: HOLD = !MEM_BANKED)
  cu.params = "W=16 LANES=8 BUF_WORDS=16384 BF16=1 DYN=1 ATTN=1 SILU=1 MUL=1 BANKED=0 A_COPIES=2 NEAR_FAR=0 TOPK=0";
  CHECK(stepgen::cuPartRows(cu)[1].params == "W=16 LANES=8 BUF_WORDS=16384 DYN=1 A_COPIES=2 HOLD=1");
  cu.params = "W=16 LANES=8";
  CHECK_THROWS_AS(stepgen::cuPartRows(cu), std::invalid_argument);
}
