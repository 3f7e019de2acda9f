// stepgen synth's reading of a depth report (generator/fpga/synth.cpp): the LUTs on the longest
// path, told apart from its carry cells, wide-mux halves and DSP blocks by the names
// flows/fpga_synth_one.sh gives them.
#include <catch2/catch.hpp>

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
